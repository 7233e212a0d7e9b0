"""Fuzzed scenarios: any mapping of scenario keys to any JSON-like values parses, or fails
with an InputError (the one-line error the CLI prints); never another exception. Those that
parse with hardware are estimated, and the estimate's numbers are finite."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuplan.errors import InputError
from gpuplan.scenario import TOP_LEVEL_KEYS, parse_scenario

from .bounds import bounded, fuzz_settings
from .strategies import CATALOG_MODELS, configs, values

pytestmark = pytest.mark.fuzz

sections = {
    "lora": st.dictionaries(st.sampled_from(["rank", "alpha", "dropout", "targets"]), values),
    "strategy": st.dictionaries(
        st.sampled_from(["tp", "pp", "dp", "zero", "recompute", "offload", "micro_batch"]), values
    ),
    "hardware": st.dictionaries(st.sampled_from(["gpu", "count", "offer"]), values)
    | st.just({"gpu": "h100-sxm-80gb", "count": 8}),
    "training": st.dictionaries(
        st.sampled_from(["stage", "learning_rate", "warmup_steps", "min_learning_rate", "lr"]),
        st.sampled_from(["pretrain", "continued", "finetune"]) | values,
    ),
    "reliability": st.dictionaries(
        st.sampled_from(["failures_per_gpu_hour", "storage_write_bandwidth", "restart"]), values
    ),
}
scenarios = st.fixed_dictionaries(
    {"model": st.sampled_from(CATALOG_MODELS) | configs | values},
    optional={
        **{key: values for key in TOP_LEVEL_KEYS if key not in sections and key != "model"},
        **sections,
    },
)


@fuzz_settings(share=2.0)
@given(scenario=scenarios)
def test_a_fuzzed_scenario_parses_or_is_an_input_error(scenario):
    parsed = bounded(lambda: parse_scenario(scenario))
    if isinstance(parsed, InputError):
        return
    job = parsed.job
    assert job.seq_len >= 1 and job.global_batch >= 1 and job.tokens >= 0
    assert math.isfinite(job.lora.alpha)
    if parsed.cluster is None:
        return
    from gpuplan.api import estimate

    result = bounded(lambda: estimate(parsed))
    if isinstance(result, InputError):
        return
    assert result["memory"]["peak_bytes"] > 0
    if result.get("throughput"):
        assert math.isfinite(result["throughput"]["tokens_per_second"])
