"""ModelSpec: exact parameter counts, HF config.json parsing, and one-line errors for bad configs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpuplan.catalog import load_model, model_entries
from gpuplan.errors import InputError
from gpuplan.workload.model import ConfigError, ModelSpec

CATALOG = model_entries()
MOE = [name for name, entry in CATALOG.items() if "reference_active_params" in entry]


@pytest.mark.parametrize("name", list(CATALOG))
def test_total_params_match_the_reference_exactly(name: str) -> None:
    assert load_model(name).total_params == CATALOG[name]["reference_total_params"]


@pytest.mark.parametrize("name", MOE)
def test_active_params_match_the_reference_exactly(name: str) -> None:
    spec = load_model(name)
    assert spec.is_moe
    assert spec.active_params == CATALOG[name]["reference_active_params"]
    assert spec.active_params < spec.total_params


def test_the_mixture_of_experts_models_carry_active_references() -> None:
    moe = {name for name in CATALOG if load_model(name).is_moe}
    assert moe == set(MOE)
    assert {"mixtral-8x7b", "deepseek-v3", "qwen3-30b-a3b", "gpt-oss-20b", "llama-4-scout"} <= moe


def test_every_catalog_model_has_a_reference_count() -> None:
    assert CATALOG and all(entry["reference_total_params"] > 0 for entry in CATALOG.values())
    assert {"mixtral-8x7b", "deepseek-v3", "qwen3-30b-a3b"} <= set(MOE)


def test_llama_3_1_8b() -> None:
    assert load_model("llama-3.1-8b").total_params == 8_030_261_248


def test_parameter_breakdown_sums_to_the_total() -> None:
    spec = load_model("gemma-3-4b")
    parts = spec.parameter_breakdown()
    assert sum(parts.values()) == spec.total_params
    assert parts["vision"] == spec.vision_params > 0
    assert spec.text_params == spec.total_params - spec.vision_params


# Config files as published on the Hugging Face Hub (keys as the families spell them).
HF_CONFIGS: dict[str, dict[str, Any]] = {
    "gpt2": {
        "activation_function": "gelu_new",
        "architectures": ["GPT2LMHeadModel"],
        "attn_pdrop": 0.1,
        "bos_token_id": 50256,
        "embd_pdrop": 0.1,
        "eos_token_id": 50256,
        "layer_norm_epsilon": 1e-05,
        "model_type": "gpt2",
        "n_ctx": 1024,
        "n_embd": 768,
        "n_head": 12,
        "n_inner": None,
        "n_layer": 12,
        "n_positions": 1024,
        "resid_pdrop": 0.1,
        "vocab_size": 50257,
    },
    "glm-4-9b": {
        "model_type": "chatglm",
        "num_layers": 40,
        "hidden_size": 4096,
        "ffn_hidden_size": 13696,
        "kv_channels": 128,
        "num_attention_heads": 32,
        "multi_query_attention": True,
        "multi_query_group_num": 2,
        "padded_vocab_size": 151552,
        "seq_length": 8192,
        "add_bias_linear": False,
        "add_qkv_bias": True,
        "post_layer_norm": True,
        "rmsnorm": True,
        "rope_ratio": 500,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
    },
    "mpt-7b": {
        "architectures": ["MPTForCausalLM"],
        "attn_config": {"alibi": True, "attn_impl": "torch"},
        "d_model": 4096,
        "expansion_ratio": 4,
        "learned_pos_emb": True,
        "max_seq_len": 2048,
        "model_type": "mpt",
        "n_heads": 32,
        "n_layers": 32,
        "no_bias": True,
        "norm_type": "low_precision_layernorm",
        "vocab_size": 50432,
    },
    "mixtral-8x7b": {
        "architectures": ["MixtralForCausalLM"],
        "hidden_act": "silu",
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "max_position_embeddings": 32768,
        "model_type": "mixtral",
        "num_attention_heads": 32,
        "num_experts_per_tok": 2,
        "num_hidden_layers": 32,
        "num_key_value_heads": 8,
        "num_local_experts": 8,
        "rms_norm_eps": 1e-05,
        "rope_theta": 1e6,
        "router_aux_loss_coef": 0.02,
        "sliding_window": None,
        "tie_word_embeddings": False,
        "vocab_size": 32000,
    },
    "gemma-3-4b": {
        "architectures": ["Gemma3ForConditionalGeneration"],
        "mm_tokens_per_image": 256,
        "model_type": "gemma3",
        "text_config": {
            "head_dim": 256,
            "hidden_size": 2560,
            "intermediate_size": 10240,
            "model_type": "gemma3_text",
            "num_attention_heads": 8,
            "num_hidden_layers": 34,
            "num_key_value_heads": 4,
            "query_pre_attn_scalar": 256,
            "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
            "sliding_window": 1024,
        },
        "vision_config": {
            "hidden_size": 1152,
            "image_size": 896,
            "intermediate_size": 4304,
            "model_type": "siglip_vision_model",
            "num_attention_heads": 16,
            "num_hidden_layers": 27,
            "patch_size": 14,
            "vision_use_head": False,
        },
    },
}


def _write(tmp_path: Path, content: str, name: str = "config.json") -> Path:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    return path


@pytest.mark.parametrize("name", list(HF_CONFIGS))
def test_a_real_config_file_gives_the_catalog_spec(name: str, tmp_path: Path) -> None:
    path = _write(tmp_path, json.dumps(HF_CONFIGS[name]))
    spec = ModelSpec.from_hf_config(path, name=name)
    assert spec == load_model(name)
    assert spec.total_params == CATALOG[name]["reference_total_params"]


def test_a_path_given_as_text_is_read_too(tmp_path: Path) -> None:
    path = _write(tmp_path, json.dumps(HF_CONFIGS["gpt2"]))
    assert ModelSpec.from_hf_config(str(path)).total_params == 124_439_808


def test_missing_keys_take_llama_defaults_when_model_type_is_absent() -> None:
    spec = ModelSpec.from_hf_config({"num_hidden_layers": 32, "hidden_size": 4096})
    assert spec.family == "llama"
    assert (spec.num_layers, spec.hidden_size, spec.num_attention_heads) == (32, 4096, 32)
    assert (spec.intermediate_size, spec.vocab_size) == (11008, 32000)
    assert spec.num_kv_heads == spec.num_attention_heads
    assert spec.total_params == load_model("llama-2-7b").total_params


def test_given_keys_override_the_defaults() -> None:
    spec = ModelSpec.from_hf_config({"num_hidden_layers": 2, "hidden_size": 64})
    assert (spec.family, spec.num_layers, spec.hidden_size) == ("llama", 2, 64)


SIZES = {"num_hidden_layers": 32, "hidden_size": 4096}
BAD_MAPPINGS = [
    ({"num_hidden_layers": None, "hidden_size": 4096}, "num_hidden_layers"),
    ({**SIZES, "hidden_size": -4096}, "hidden_size"),
    ({**SIZES, "num_attention_heads": 2.5}, "num_attention_heads"),
    ({**SIZES, "vocab_size": "many"}, "vocab_size"),
    ({**SIZES, "tie_word_embeddings": "yes"}, "tie_word_embeddings"),
    ({**SIZES, "model_type": "mixtral", "num_experts_per_tok": 9}, "num_experts_per_tok"),
    ({"model_type": "gpt5"}, "model_type"),
    ({**SIZES, "num_hidden_layers": 10**9}, "num_hidden_layers"),
    (
        {**SIZES, "model_type": "gemma2", "num_hidden_layers": 10**9, "sliding_window": 16},
        "num_hidden_layers",
    ),
    ({**SIZES, "num_attention_heads": 32, "num_key_value_heads": 5}, "num_key_value_heads"),
    ({"num_hidden_layers": 2, "hidden_size": 16, "num_attention_heads": 32}, "num_attention_heads"),
    ({**SIZES, "vocab_size": float("inf")}, "vocab_size"),
    ({}, "num_hidden_layers"),
    ({"hidden_size": 4096}, "num_hidden_layers"),
]


@pytest.mark.parametrize(("config", "field"), BAD_MAPPINGS)
def test_bad_configs_raise_one_line_naming_the_field(config: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigError) as caught:
        ModelSpec.from_hf_config(config)
    message = str(caught.value)
    assert field in message
    assert "\n" not in message
    assert isinstance(caught.value, InputError)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2, 3]", "JSON object"),
        ('{"model_type": "llama", "hidden_size": -1}', "hidden_size"),
    ],
)
def test_bad_config_files_raise_one_line(tmp_path: Path, content: str, expected: str) -> None:
    path = _write(tmp_path, content)
    with pytest.raises(ConfigError, match=expected) as caught:
        ModelSpec.from_hf_config(path)
    assert "\n" not in str(caught.value)


def test_a_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"cannot read model config file .*No such file"):
        ModelSpec.from_hf_config(tmp_path / "absent.json")


def test_family_defaults_reach_aliased_keys() -> None:
    """A Mixtral config without num_local_experts takes the transformers default of 8 experts."""
    sizes = {"model_type": "mixtral", "num_hidden_layers": 32, "hidden_size": 4096}
    spec = ModelSpec.from_hf_config(sizes)
    assert (spec.num_experts, spec.num_experts_per_token) == (8, 2)
    assert spec.total_params == load_model("mixtral-8x7b").total_params
    with pytest.raises(ConfigError, match="num_experts_per_tok"):
        ModelSpec.from_hf_config({**sizes, "num_experts_per_tok": 9})
