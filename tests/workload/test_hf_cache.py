"""Models by Hugging Face id: the catalog, then the local cache, never the network."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from gpuplan.catalog import model_entries
from gpuplan.errors import InputError
from gpuplan.scenario import resolve_model
from gpuplan.workload import hf_cache

CONFIG = {"model_type": "qwen2", "num_hidden_layers": 3, "hidden_size": 256,
          "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 512,
          "vocab_size": 1000, "max_position_embeddings": 4096}  # fmt: skip
REPO = "some-org/Tiny-Model-0.1B"


def cache_with(root: Path, repo: str, config: dict, commit: str = "0123abcd") -> Path:
    """A hub cache laid out as huggingface_hub writes it, holding ``repo``'s config.json."""
    repository = root / f"models--{repo.replace('/', '--')}"
    (repository / "refs").mkdir(parents=True)
    (repository / "refs" / "main").write_text(commit, encoding="utf-8")
    snapshot = repository / "snapshots" / commit
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return root


@pytest.fixture(params=["huggingface_hub", "cache layout"])
def reader(request, monkeypatch):
    """Each test runs through huggingface_hub (when installed) and through the layout alone."""
    for variable in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(variable, raising=False)
    if request.param == "huggingface_hub":
        pytest.importorskip("huggingface_hub")
    else:
        monkeypatch.setitem(sys.modules, "huggingface_hub", None)
    return request.param


def test_an_id_reads_config_json_from_the_cache(reader, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(cache_with(tmp_path, REPO, CONFIG)))
    spec = resolve_model(REPO)
    assert spec.name == REPO and spec.family == "qwen2"
    assert (spec.num_layers, spec.hidden_size, spec.vocab_size) == (3, 256, 1000)


def test_hf_home_places_the_cache_under_hub(reader, tmp_path, monkeypatch):
    cache_with(tmp_path / "hub", REPO, CONFIG)
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    assert hf_cache.hub_cache_directory() == tmp_path / "hub"
    assert resolve_model(REPO).num_layers == CONFIG["num_hidden_layers"]


def test_only_the_main_revision_is_read(reader, tmp_path, monkeypatch):
    cache = cache_with(tmp_path, REPO, CONFIG)
    (cache / f"models--{REPO.replace('/', '--')}" / "refs" / "main").write_text("fedcba98")
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    assert hf_cache.cached_config(REPO) is None


def test_an_id_that_is_not_cached_is_a_one_line_error(reader, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    with pytest.raises(InputError) as raised:
        resolve_model(REPO)
    message = str(raised.value)
    assert "\n" not in message and REPO in message and str(tmp_path) in message
    assert f"hf download {REPO} config.json" in message


def test_the_id_of_a_catalog_model_is_that_model_offline(reader, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    name, entry = next((n, e) for n, e in model_entries().items() if e.get("hf_repo"))
    assert resolve_model(entry["hf_repo"]).name == name
    assert resolve_model(entry["hf_repo"].upper()).name == name


def test_a_file_of_that_name_wins_over_the_id(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "some-org").mkdir()
    (tmp_path / "some-org" / "Tiny-Model-0.1B").write_text(json.dumps(CONFIG), encoding="utf-8")
    assert resolve_model(REPO).num_layers == CONFIG["num_hidden_layers"]


@pytest.mark.parametrize(
    ("text", "is_id"),
    [
        ("meta-llama/Llama-3.1-8B", True),
        ("Qwen/Qwen2.5-7B", True),
        ("./models/x", False),
        ("a/b/c", False),
        ("org/config.json", False),
        ("../x", False),
        ("llama-3.1-8b", False),
    ],
)
def test_what_reads_as_an_id(text, is_id):
    assert hf_cache.is_repo_id(text) is is_id


def test_the_cli_answers_offline_or_fails_on_one_line(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    code, _, err = cli("model", REPO)
    assert code == 2 and err.count("\n") == 1 and "hf download" in err
    cache_with(tmp_path, REPO, CONFIG)
    code, out, _ = cli("model", REPO, "--json")
    assert code == 0 and json.loads(out)["num_layers"] == CONFIG["num_hidden_layers"]
