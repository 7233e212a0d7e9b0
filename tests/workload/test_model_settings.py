"""Router settings and sliding-window layers read from config.json, with one-line errors."""

from __future__ import annotations

from typing import Any

import pytest

from gpuplan.catalog import load_model
from gpuplan.errors import InputError
from gpuplan.workload.model import ModelSpec
from gpuplan.workload.model_settings import RouterSettings

TINY_MOE = {
    "model_type": "qwen3_moe", "num_hidden_layers": 2, "hidden_size": 256,
    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64,
    "intermediate_size": 512, "vocab_size": 1024, "num_experts": 8, "num_experts_per_tok": 2,
    "moe_intermediate_size": 128,
}  # fmt: skip
WINDOWED = {"sliding_window": 64, "use_sliding_window": True, "max_window_layers": 0}


def test_catalog_routers_follow_their_configs() -> None:
    deepseek = load_model("deepseek-v3").settings.router
    assert deepseek == RouterSettings(
        score_function="sigmoid", normalizes_top_k=True, num_groups=8, group_top_k=4,
        scaling_factor=2.5, expert_bias=True,
    )  # fmt: skip
    lite = load_model("deepseek-v2-lite").settings.router
    assert lite is not None and not lite.normalizes_top_k and lite.num_groups is None
    assert (lite.aux_loss_coeff, lite.aux_loss_per_sequence) == (0.001, True)
    qwen = load_model("qwen3-30b-a3b").settings.router
    assert qwen is not None and qwen.normalizes_top_k and qwen.aux_loss_coeff == 0.001
    assert load_model("llama-3.1-8b").settings.router is None


def test_mixtral_renormalises_whatever_its_config_says() -> None:
    config = {**TINY_MOE, "model_type": "mixtral", "norm_topk_prob": False}
    router = ModelSpec.from_hf_config(config).settings.router
    assert router is not None and router.normalizes_top_k


def test_qwen_moe_takes_its_class_defaults_when_the_config_is_silent() -> None:
    router = ModelSpec.from_hf_config(TINY_MOE).settings.router
    assert router == RouterSettings(normalizes_top_k=False, aux_loss_coeff=0.001)


@pytest.mark.parametrize(
    ("keys", "field"),
    [
        ({"scoring_func": "tanh"}, "scoring_func"),
        ({"n_group": 3}, "n_group"),
        ({"n_group": 4, "topk_group": 5}, "topk_group"),
        ({"routed_scaling_factor": -1.0}, "routed_scaling_factor"),
        ({"router_aux_loss_coef": "high"}, "router_aux_loss_coef"),
        ({"norm_topk_prob": "yes"}, "norm_topk_prob"),
        ({"layer_types": ["sliding_attention"], **WINDOWED}, "layer_types"),
        ({"layer_types": ["local", "global"], **WINDOWED}, "layer_types"),
    ],
)
def test_bad_router_and_window_settings_raise_one_line_naming_the_key(
    keys: dict[str, Any], field: str
) -> None:
    with pytest.raises(InputError) as caught:
        ModelSpec.from_hf_config({**TINY_MOE, **keys})
    assert f"model.{field}" in str(caught.value) and "\n" not in str(caught.value)


def test_layer_types_pick_the_windowed_layers_and_all_or_none_collapse() -> None:
    base = {**TINY_MOE, "model_type": "mistral", "num_hidden_layers": 3, "sliding_window": 64}
    mixed = ModelSpec.from_hf_config(
        {**base, "layer_types": ["full_attention", "sliding_attention", "full_attention"]}
    )
    assert [mixed.is_windowed_layer(index) for index in range(3)] == [False, True, False]
    every = ModelSpec.from_hf_config({**base, "layer_types": ["sliding_attention"] * 3})
    assert every.sliding_window_layers == () and every.is_windowed_layer(2)
    none = ModelSpec.from_hf_config({**base, "layer_types": ["full_attention"] * 3})
    assert none.sliding_window is None and not none.is_windowed_layer(0)


def test_qwen_windows_only_from_max_window_layers_and_only_when_switched_on() -> None:
    base = {**TINY_MOE, "model_type": "qwen2", "num_hidden_layers": 4, "sliding_window": 64}
    assert ModelSpec.from_hf_config({**base, "max_window_layers": 2}).sliding_window is None
    on = ModelSpec.from_hf_config({**base, "use_sliding_window": True, "max_window_layers": 2})
    assert [on.is_windowed_layer(index) for index in range(4)] == [False, False, True, True]
