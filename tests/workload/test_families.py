"""Model families: the registry, the sizes each catalog model takes from its config, the
families added as modules (gpt-oss, Llama 4), and the complexity the package keeps."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gpuplan.catalog import load_model, model_entries
from gpuplan.errors import InputError
from gpuplan.workload import families
from gpuplan.workload.families import family_named, registered_families
from gpuplan.workload.model import ConfigError, ModelSpec

ROOT = Path(__file__).resolve().parents[2]
CATALOG = model_entries()

SPEC_FIELDS = {
    "num_hidden_layers": "num_layers",
    "hidden_size": "hidden_size",
    "num_attention_heads": "num_attention_heads",
    "num_key_value_heads": "num_kv_heads",
    "head_dim": "head_dim",
    "vocab_size": "vocab_size",
    "max_position_embeddings": "max_position_embeddings",
    "num_experts": "num_experts",
    "num_local_experts": "num_experts",
    "n_routed_experts": "num_experts",
    "num_experts_per_tok": "num_experts_per_token",
    "moe_intermediate_size": "moe_intermediate_size",
    "first_k_dense_replace": "first_dense_layers",
    "sliding_window": "sliding_window",
    "attention_chunk_size": "attention_chunk_size",
}
"""config.json key -> the ModelSpec field that must hold its value."""


def _text_config(name: str) -> dict[str, Any]:
    """A catalog entry's config keys, a multimodal model's text keys over the outer ones."""
    config = dict(CATALOG[name]["config"])
    text = config.pop("text_config", None)
    config.pop("vision_config", None)
    return {**config, **text} if isinstance(text, dict) else config


def _intermediate_fields(config: dict[str, Any]) -> dict[str, str]:
    """Where the MLP widths go: Llama 4 names its expert width ``intermediate_size`` and its
    dense width ``intermediate_size_mlp``; everyone else ``intermediate_size`` is dense."""
    if "intermediate_size_mlp" in config:
        return {
            "intermediate_size_mlp": "intermediate_size",
            "intermediate_size": "moe_intermediate_size",
        }
    return {"intermediate_size": "intermediate_size"}


@pytest.mark.parametrize("name", list(CATALOG))
def test_each_catalog_model_takes_every_size_its_config_gives(name: str) -> None:
    """Against the config table as written in models.toml: each size the config gives lands
    in its ModelSpec field unchanged, and the family is the one its model_type names."""
    config, spec = _text_config(name), load_model(name)
    assert spec.family == family_named(str(config.get("model_type", "llama"))).name
    fields = {**SPEC_FIELDS, **_intermediate_fields(config)}
    checked = 0
    for key, field in fields.items():
        value = config.get(key)
        if value in (None, 0) or (
            key == "sliding_window" and not config.get("use_sliding_window", True)
        ):
            continue
        assert getattr(spec, field) == value, (key, field)
        checked += 1
    assert checked >= 4


def test_every_catalog_model_type_and_alias_resolves_to_one_family() -> None:
    spellings: dict[str, str] = {}
    for family in registered_families().values():
        for spelling in (family.name, *family.aliases):
            assert spelling not in spellings, spelling
            spellings[spelling] = family.name
    for name in CATALOG:
        assert _text_config(name).get("model_type", "llama") in spellings


def test_an_unknown_model_type_lists_every_family() -> None:
    with pytest.raises(ConfigError) as caught:
        ModelSpec.from_hf_config({"model_type": "gpt5", "num_hidden_layers": 2, "hidden_size": 64})
    message = str(caught.value)
    assert all(name in message for name in registered_families())
    assert "\n" not in message


def test_a_new_module_in_the_package_registers_its_family(tmp_path: Path, monkeypatch) -> None:
    """Adding a family is adding one module: the registry finds it without a list to edit."""
    (tmp_path / "toy_family_module.py").write_text(
        "from gpuplan.workload.families.family import Family\n"
        "FAMILIES = (Family(name='toy', defaults={'vocab_size': 1000, 'intermediate_size': 256,"
        " 'num_attention_heads': 4}),)\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(families, "__path__", [*families.__path__, str(tmp_path)])
    registered_families.cache_clear()
    families._names.cache_clear()
    try:
        spec = ModelSpec.from_hf_config(
            {"model_type": "toy", "num_hidden_layers": 2, "hidden_size": 64}
        )
        assert (spec.family, spec.num_layers, spec.intermediate_size) == ("toy", 2, 256)
    finally:
        monkeypatch.undo()
        sys.modules.pop("gpuplan.workload.families.toy_family_module", None)
        registered_families.cache_clear()
        families._names.cache_clear()
    assert "toy" not in registered_families()


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is not installed")
def test_no_function_of_the_workload_package_is_too_complex() -> None:
    """Cyclomatic complexity (ruff C901) at most 15 in every function of gpuplan.workload."""
    result = subprocess.run(
        ["ruff", "check", "--select", "C901", "--config", "lint.mccabe.max-complexity = 15",
         "src/gpuplan/workload"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr


# --- gpt-oss ----------------------------------------------------------------------------------


def test_gpt_oss_counts_sinks_expert_biases_and_the_router_bias() -> None:
    """Per layer (transformers ``modeling_gpt_oss.py``): one sink per head, experts of
    ``3 d F`` weights plus ``2F + d`` biases, a router of ``d E`` weights plus ``E`` biases."""
    spec = load_model("gpt-oss-20b")
    d, width, experts = spec.hidden_size, spec.moe_intermediate_size, spec.num_experts
    assert spec.attention_sinks and spec.router_bias and spec.num_moe_layers == spec.num_layers
    assert spec.expert_params() == 3 * d * width + 2 * width + d
    without_sinks = ModelSpec.from_hf_config(
        {**_text_config("gpt-oss-20b"), "model_type": "mixtral"}
    )
    sinks = spec.attention_params_per_layer() - without_sinks.attention_params_per_layer()
    assert sinks == spec.num_attention_heads + d  # sinks, and the o_proj bias Mixtral lacks
    assert spec.moe_block_params() == d * experts + experts + experts * spec.expert_params()


def test_gpt_oss_without_layer_types_alternates_windows_from_layer_zero() -> None:
    config = _text_config("gpt-oss-120b")
    given = ModelSpec.from_hf_config(config)
    config.pop("layer_types")
    assert ModelSpec.from_hf_config(config) == given
    assert [given.is_windowed_layer(index) for index in range(4)] == [True, False, True, False]


# --- Llama 4 ----------------------------------------------------------------------------------


def test_llama4_maverick_interleaves_dense_and_moe_layers() -> None:
    config = _text_config("llama-4-maverick")
    spec = load_model("llama-4-maverick")
    routed = [spec.is_moe_layer(index) for index in range(spec.num_layers)]
    assert routed == [index % 2 == 1 for index in range(spec.num_layers)]
    assert spec.num_moe_layers == sum(routed)
    assert spec.intermediate_size == config["intermediate_size_mlp"]
    assert spec.moe_intermediate_size == spec.shared_expert_intermediate_size
    assert spec.moe_intermediate_size == config["intermediate_size"]
    assert spec.settings.router is not None and spec.settings.router.score_function == "sigmoid"


def test_llama4_chunks_attention_on_its_rope_layers() -> None:
    scout = load_model("llama-4-scout")
    ropes = _text_config("llama-4-scout")["no_rope_layers"]
    assert [scout.is_chunked_layer(index) for index in range(scout.num_layers)] == [
        bool(rope) for rope in ropes
    ]
    maverick = load_model("llama-4-maverick")
    assert scout.chunked_attention_layers == maverick.chunked_attention_layers
    without = ModelSpec.from_hf_config(
        {**_text_config("llama-4-scout"), "attention_chunk_size": None}
    )
    assert without.attention_chunk_size is None and not without.is_chunked_layer(0)


def test_llama4_vision_tower_is_the_difference_to_the_text_model() -> None:
    scout = load_model("llama-4-scout")
    text = ModelSpec.from_hf_config(_text_config("llama-4-scout"))
    assert scout.vision_params > 0 and text.vision_params == 0
    assert scout.total_params - text.total_params == scout.vision_params
    assert scout.parameter_breakdown()["vision"] == scout.vision_params


LLAMA4_BAD = [
    ({"moe_layers": [0, 2]}, "moe_layers"),
    ({"no_rope_layers": [1, 2, 1]}, "no_rope_layers"),
    ({"no_rope_layers": "yes"}, "no_rope_layers"),
    ({"intermediate_size_mlp": "wide"}, "intermediate_size_mlp"),
    ({"interleave_moe_layer_step": 0}, "interleave_moe_layer_step"),
    ({"layer_types": ["sliding_attention"] * 4}, "layer_types"),
]


@pytest.mark.parametrize(("change", "field"), LLAMA4_BAD)
def test_bad_llama4_keys_raise_one_line_naming_the_key(change: dict[str, Any], field: str) -> None:
    config = {"model_type": "llama4_text", "num_hidden_layers": 4, "hidden_size": 64,
              "num_attention_heads": 4, "head_dim": 16, "vocab_size": 100, **change}  # fmt: skip
    with pytest.raises(ConfigError) as caught:
        ModelSpec.from_hf_config(config)
    assert field in str(caught.value) and "\n" not in str(caught.value)


def test_a_vision_config_for_a_family_without_a_counted_tower_is_refused() -> None:
    config = {"model_type": "mistral3", "text_config": {"model_type": "mistral", "num_hidden_layers": 2,
              "hidden_size": 64}, "vision_config": {"hidden_size": 32}}  # fmt: skip
    with pytest.raises(ConfigError, match="vision_config") as caught:
        ModelSpec.from_hf_config(config)
    assert isinstance(caught.value, InputError)
