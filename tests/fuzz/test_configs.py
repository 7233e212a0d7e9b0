"""Fuzzed config.json mappings: a model is built and estimated with finite sizes, or the
mapping is refused with one line naming the key; a 10^9-layer config is refused, not looped."""

from __future__ import annotations

import math

import pytest
from hypothesis import given

from gpuplan.errors import InputError
from gpuplan.limits import ARCHITECTURE_RANGES, MAX_PARAMETERS

from .bounds import bounded, fuzz_settings
from .strategies import configs

pytestmark = pytest.mark.fuzz


@fuzz_settings(share=2.0)
@given(config=configs)
def test_a_fuzzed_config_builds_a_checked_model_or_is_refused(config):
    from gpuplan.api import memory_estimate
    from gpuplan.scenario import parse_scenario

    parsed = bounded(lambda: parse_scenario({"model": config, "method": "lora", "tokens": "1B"}))
    if isinstance(parsed, InputError):
        return
    model = parsed.job.model
    low, high = ARCHITECTURE_RANGES["num_hidden_layers"]
    assert low <= model.num_layers <= high
    assert model.head_dim > 0 and model.hidden_size > 0
    assert model.num_attention_heads % model.num_kv_heads == 0
    assert 0 < model.total_params <= MAX_PARAMETERS
    result = bounded(
        lambda: memory_estimate(
            {"model": config, "method": "lora", "hardware": {"gpu": "h100", "count": 8}}
        )
    )
    if not isinstance(result, InputError):
        assert math.isfinite(result["memory"]["peak_bytes"]) and result["memory"]["peak_bytes"] > 0
