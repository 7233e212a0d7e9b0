"""The factored enumeration (structure first, then the per-layout choices) yields exactly the
layouts, in the same order, that filtering the whole cross product once would."""

from __future__ import annotations

import numpy as np
import pytest

from gpuplan.scenario import parse_scenario
from gpuplan.search.layouts import (
    CONTEXT_PARALLEL,
    LONG_SEQUENCE,
    MICRO_BATCHES,
    TENSOR_PARALLEL,
    VIRTUAL_STAGES,
    enumerate_layouts,
    pipeline_sizes,
)
from gpuplan.strategy import OFFLOAD, RECOMPUTE, parallel_rules

FIELDS = ("count", "tp", "pp", "vpp", "cp", "ep", "zero", "micro_batch", "recompute", "offload")


def whole_product_layouts(scenario, node, counts, offload):
    """The reference: every combination of every field at once, each rule applied to it."""
    job, model = scenario.job, scenario.job.model
    fixed = {name: getattr(scenario.strategy, name) for name in scenario.strategy_given}
    experts = [e for e in (1, 2, 4, 8, 16, 32, 64) if model.is_moe and model.num_experts % e == 0]
    choices = {
        "count": counts,
        "tp": [t for t in TENSOR_PARALLEL if t <= node],
        "pp": [1] if job.is_adapter else pipeline_sizes(model.num_layers),
        "vpp": VIRTUAL_STAGES,
        "cp": [c for c in CONTEXT_PARALLEL if c == 1 or job.seq_len >= LONG_SEQUENCE],
        "ep": experts or [1],
        "zero": (0, 1, 2, 3),
        "micro_batch": MICRO_BATCHES,
        "recompute": (0, 1, 2),
        "offload": (0, 1, 2) if offload else (0,),
    }
    for name, value in fixed.items():
        if name in choices:
            codes = {"recompute": RECOMPUTE, "offload": OFFLOAD}
            choices[name] = [codes[name].index(value) if name in codes else int(value)]
    grids = np.meshgrid(
        *[np.asarray(choices[name], dtype=np.int64) for name in FIELDS], indexing="ij"
    )
    grid = {name: values.ravel() for name, values in zip(FIELDS, grids, strict=True)}
    count, tp, pp, cp, zero = (grid[name] for name in ("count", "tp", "pp", "cp", "zero"))
    micro_batch, offload_code = grid["micro_batch"], grid["offload"]
    dp = np.where(count % (tp * pp * cp) == 0, count // (tp * pp * cp), 0)
    valid = dp >= 1
    for holds in parallel_rules(job, dp, tp, pp, grid["vpp"], cp, grid["ep"], micro_batch).values():
        valid &= holds
    if fixed.get("dp"):
        valid &= dp == fixed["dp"]
    valid &= (dp * cp > 1) | (zero == 0)
    valid &= (tp * pp == 1) | (zero <= 1) | ("zero" in fixed)
    valid &= (offload_code == 0) | ((zero >= 1) & ((offload_code == 1) | (zero == 3)))
    valid &= ~((pp > 1) & (micro_batch * dp * pp > job.global_batch))
    layouts = {name: values[valid] for name, values in grid.items()}
    layouts["dp"] = dp[valid]
    return layouts


BASE = {"tokens": "1B", "seq_len": 4096, "global_batch": 256}
SCENARIOS = {
    "dense 70B": ({"model": "llama-3.1-70b", "method": "full", **BASE}, 8, [8, 16, 24, 64]),
    "MoE": ({"model": "qwen3-30b-a3b", "method": "full", **BASE}, 8, [8, 16, 32]),
    "MoE with MLA": ({"model": "deepseek-v2-lite", "method": "full", **BASE}, 8, [16, 48]),
    "context parallel": (
        {"model": "llama-3.1-8b", "method": "full", **BASE, "seq_len": 32768, "global_batch": 64},
        8,
        [8, 32],
    ),
    "LoRA": ({"model": "llama-3.1-8b", "method": "lora", **BASE, "global_batch": 32}, 4, [1, 2, 4]),
    "fixed fields": (
        {
            "model": "llama-3.1-70b",
            "method": "full",
            **BASE,
            "strategy": {"tp": 4, "zero": 1, "recompute": "full"},
        },
        8,
        [16, 32, 40],
    ),
    "fixed data parallel": (
        {"model": "llama-3.1-8b", "method": "full", **BASE, "strategy": {"dp": 4}},
        8,
        [8, 16],
    ),
}


@pytest.mark.parametrize("offload", [False, True])
@pytest.mark.parametrize("name", SCENARIOS)
def test_factored_enumeration_equals_the_filtered_whole_product(name, offload):
    mapping, node, counts = SCENARIOS[name]
    scenario = parse_scenario(mapping)
    candidates = enumerate_layouts(scenario, node, counts, offload)
    expected = whole_product_layouts(scenario, node, counts, offload)
    assert len(candidates) > 0
    np.testing.assert_array_equal(candidates.count, expected["count"])
    for field in ("dp", *FIELDS[1:]):
        np.testing.assert_array_equal(getattr(candidates.layout, field), expected[field], field)


def test_a_shard_group_is_estimate_only():
    """The search shards over every data-parallel rank; a hybrid shard group is refused by name
    rather than silently ignored."""
    from gpuplan.errors import InputError
    from gpuplan.search.request import PlanRequest

    scenario = {"model": "llama-3.1-8b", "hardware": {"gpu": "h100", "count": 16}}
    with pytest.raises(InputError, match=r"^strategy\.shard_group: 8 is estimate-only"):
        PlanRequest(parse_scenario({**scenario, "strategy": {"shard_group": 8}}))
    PlanRequest(parse_scenario(scenario))


def test_the_dualpipe_schedule_is_estimate_only():
    from gpuplan.errors import InputError
    from gpuplan.search.request import PlanRequest

    scenario = {"model": "llama-3.1-8b", "hardware": {"gpu": "h100", "count": 16}}
    with pytest.raises(InputError, match=r"^strategy\.schedule: dualpipe is estimate-only"):
        PlanRequest(parse_scenario({**scenario, "strategy": {"schedule": "dualpipe"}}))
