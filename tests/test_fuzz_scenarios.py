"""Fuzzed scenarios: any mapping of scenario keys to any JSON-like values parses, or fails
with an InputError (the one-line error the CLI prints); never another exception.

The default run tries a few hundred mappings; ``GPUPLAN_FUZZ_EXAMPLES=10000 pytest
tests/test_fuzz_scenarios.py`` runs the long one."""

from __future__ import annotations

import math
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuplan.errors import InputError
from gpuplan.scenario import TOP_LEVEL_KEYS, parse_scenario

EXAMPLES = int(os.environ.get("GPUPLAN_FUZZ_EXAMPLES", "300"))

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["llama-3.1-8b", "qwen3-30b-a3b", "1B", "20B", "bf16", "fp8", "lora", "full"]),
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
sections = {
    "lora": st.dictionaries(st.sampled_from(["rank", "alpha", "dropout", "targets"]), values),
    "strategy": st.dictionaries(
        st.sampled_from(["tp", "pp", "dp", "zero", "recompute", "offload", "micro_batch"]), values
    ),
    "hardware": st.dictionaries(st.sampled_from(["gpu", "count", "offer"]), values),
    "reliability": st.dictionaries(
        st.sampled_from(["failures_per_gpu_hour", "storage_write_bandwidth", "restart"]), values
    ),
}
scenarios = st.fixed_dictionaries(
    {"model": st.sampled_from(["llama-3.1-8b", "qwen3-30b-a3b"]) | values},
    optional={
        **{key: values for key in TOP_LEVEL_KEYS if key not in sections and key != "model"},
        **sections,
    },
)


@pytest.mark.slow
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(scenario=scenarios)
def test_a_fuzzed_scenario_parses_or_is_an_input_error(scenario):
    try:
        parsed = parse_scenario(scenario)
    except InputError as error:
        assert "\n" not in str(error) and len(str(error)) < 1000
        return
    job = parsed.job
    assert job.seq_len >= 1 and job.global_batch >= 1 and job.tokens >= 0
    assert math.isfinite(job.lora.alpha)
