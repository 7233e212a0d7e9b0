"""A config that leaves keys to its family's defaults says which; one that names no model fails."""

from __future__ import annotations

import pytest

import gpuplan
from gpuplan.api import memory_estimate, plan_search
from gpuplan.catalog import load_model, model_entries
from gpuplan.notices import notice_text
from gpuplan.workload.families import family_named
from gpuplan.workload.model import ConfigError, ModelSpec

SMALL_LLAMA = {"model_type": "llama", "num_hidden_layers": 4, "hidden_size": 512}


def test_every_family_default_taken_is_named_and_used():
    defaults = family_named("llama").defaults
    spec = ModelSpec.from_hf_config(SMALL_LLAMA)
    left_out = [key for key in defaults if key not in SMALL_LLAMA]
    assert spec.defaults_taken == tuple(left_out) and left_out
    assert spec.vocab_size == defaults["vocab_size"]
    assert spec.intermediate_size == defaults["intermediate_size"]
    assert spec.num_attention_heads == defaults["num_attention_heads"]


def test_a_key_given_under_an_alias_is_not_taken_from_the_defaults():
    defaults = family_named("mixtral").defaults
    assert "num_local_experts" in defaults
    config = {
        "model_type": "mixtral",
        "num_hidden_layers": 2,
        "hidden_size": 256,
        "num_attention_heads": 8,
        "num_experts": 4,
    }
    spec = ModelSpec.from_hf_config(config)
    assert spec.num_experts == 4
    assert "num_local_experts" not in spec.defaults_taken
    assert "num_experts_per_tok" in spec.defaults_taken


def test_a_complete_config_and_the_catalog_assume_nothing():
    config = {**family_named("llama").defaults, **SMALL_LLAMA}
    assert ModelSpec.from_hf_config(config).defaults_taken == ()
    for name in model_entries():
        assert load_model(name).defaults_taken == ()


@pytest.mark.parametrize(
    ("config", "named"),
    [({}, ("num_hidden_layers", "hidden_size")), ({"hidden_size": 4096}, ("num_hidden_layers",))],
)
def test_a_config_without_the_size_keys_is_an_error_naming_them(config, named):
    with pytest.raises(ConfigError) as raised:
        ModelSpec.from_hf_config(config)
    message = str(raised.value)
    assert "\n" not in message
    assert all(f"{key} missing" in message or f"{key} and" in message for key in named)


def _notice(warnings):
    return [w for w in warnings if isinstance(w, dict) and w["code"] == "config_defaults"]


def test_estimate_memory_and_plan_warn_of_the_keys_taken():
    spec = ModelSpec.from_hf_config(SMALL_LLAMA)
    job = {"model": SMALL_LLAMA, "method": "full", "tokens": "1M", "seq_len": 512}
    scenario = {**job, "hardware": {"gpu": "h100-sxm-80gb", "count": 1}}
    for warnings in (
        gpuplan.estimate(scenario)["warnings"],
        memory_estimate(scenario)["warnings"],
        plan_search(job, limit=1, max_gpus=1)["warnings"],
    ):
        (notice,) = _notice(warnings)
        assert notice["values"]["keys"] == ", ".join(spec.defaults_taken)
        assert "vocab_size" in notice["text"] and "llama" in notice["text"]
        assert "vocab_size" in notice_text(notice, "zh") and "默认值" in notice_text(notice, "zh")
    catalog = {**scenario, "model": "llama-3.1-8b"}
    assert _notice(gpuplan.estimate(catalog)["warnings"]) == []


def test_the_cli_prints_the_warning(cli, tmp_path):
    import json

    path = tmp_path / "config.json"
    path.write_text(json.dumps(SMALL_LLAMA), encoding="utf-8")
    code, out, _ = cli("memory", "--model", str(path), "--gpu", "h100-sxm-80gb")
    text = " ".join(out.split())
    assert code == 0 and "warning:" in text and "leaves out vocab_size" in text
    code, out, _ = cli("model", str(path))
    assert code == 0 and "leaves out vocab_size" in " ".join(out.split())
