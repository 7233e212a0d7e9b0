"""The search's layout cache: memory estimated for many enumerations in one call equals each
enumeration's own estimate, bit for bit, and nothing is estimated past ``max_layouts``."""

from __future__ import annotations

import numpy as np
import pytest

from gpuplan.estimate.memory import estimate_memory
from gpuplan.scenario import parse_scenario
from gpuplan.search.evaluate import estimate_first_pass
from gpuplan.search.layout_cache import SearchCache
from gpuplan.search.layouts import enumerate_layouts
from gpuplan.search.machines import Machine
from gpuplan.search.request import PlanRequest

SCENARIOS = {
    "70b full": {"model": "llama-3.1-70b", "method": "full", "global_batch": 64},
    "8b qlora": {"model": "llama-3.1-8b", "method": "qlora", "global_batch": 32},
    "moe full": {"model": "qwen3-30b-a3b", "method": "full", "global_batch": 64},
}
KEYS = [
    ((8, (8, 16, 32), False), 8),
    ((8, (8,), True), 8),
    ((4, (4, 8), True), 4),
    ((1, (1, 2, 4), True), 1),
    ((72, (4, 8, 72), False), 4),
]


@pytest.mark.parametrize("name", SCENARIOS)
def test_one_call_over_many_enumerations_equals_one_call_each(name):
    scenario = parse_scenario({**SCENARIOS[name], "tokens": "1B", "seq_len": 4096})
    cache = SearchCache()
    cache.estimate(scenario, KEYS)
    assert {key for key in cache.memory} == set(KEYS)
    offloaded = 0.0
    for (domain, counts, offload), node in KEYS:
        layouts = enumerate_layouts(scenario, domain, counts, offload)
        alone = estimate_memory(
            scenario.job, layouts.layout, 80e9, gpus_per_node=np.minimum(node, layouts.count)
        )
        stored = cache.memory[((domain, counts, offload), node)]
        np.testing.assert_array_equal(stored.peak_bytes, alone.peak_bytes)
        np.testing.assert_array_equal(stored.host_bytes, alone.host_bytes)
        offloaded = max(offloaded, float(np.max(alone.host_bytes)))
    assert offloaded > 0


def test_known_memory_is_not_estimated_again():
    scenario = parse_scenario({**SCENARIOS["70b full"], "tokens": "1B", "seq_len": 4096})
    cache = SearchCache()
    cache.estimate(scenario, KEYS[:1])
    first = cache.memory[KEYS[0]]
    cache.estimate(scenario, KEYS)
    assert cache.memory[KEYS[0]] is first
    assert cache.layout_memory(scenario, KEYS[1]) is cache.memory[KEYS[1]]


def _h100_group(scenario):
    from gpuplan.catalog import load_gpu
    from gpuplan.hardware.topology import assumed_topology

    gpu = load_gpu("h100-sxm-80gb")
    machine = Machine(gpu, assumed_topology(gpu, 8, "GPU catalog"), ())
    return [(machine, [8, 16, 32])]


@pytest.mark.parametrize(("limit", "estimated"), [(None, 1), (10**6, 1), (100, 0)])
def test_the_first_pass_stops_before_max_layouts(limit, estimated):
    scenario = parse_scenario({**SCENARIOS["70b full"], "tokens": "1B", "seq_len": 4096})
    cache = SearchCache()
    request = PlanRequest(scenario, max_layouts=limit, allow_unlisted_network=True)
    estimate_first_pass(scenario, [_h100_group(scenario)], request, cache)
    assert len(cache.memory) == estimated
    assert len(cache.layouts) == 1 and len(next(iter(cache.layouts.values()))) > 100


def test_step_terms_are_kept_for_the_layouts_that_fit_the_largest_gpu():
    scenario = parse_scenario({**SCENARIOS["70b full"], "tokens": "1B", "seq_len": 4096})
    cache = SearchCache(usable_bytes=60e9)
    cache.estimate(scenario, KEYS[:1])
    peak = cache.memory[KEYS[0]].peak_bytes
    stored = cache.terms[KEYS[0][0]]
    kept = peak <= 60e9
    assert 0 < kept.sum() < len(peak)
    assert np.all(stored.columns[~kept] == -1)
    assert len(stored.packed) == int(kept.sum())
    every = SearchCache().layout_terms(scenario, KEYS[0][0])
    np.testing.assert_array_equal(stored.take(kept).floats, every.take(kept).floats)


def test_the_goodput_kept_for_an_enumeration_is_that_of_its_gpu_counts():
    scenario = parse_scenario({**SCENARIOS["70b full"], "tokens": "1B", "seq_len": 4096})
    cache = SearchCache()
    cache.estimate(scenario, KEYS)
    for layouts, _ in KEYS:
        counts = cache.layouts[layouts].count
        expected = scenario.reliability.estimate(scenario.job, counts).goodput
        np.testing.assert_array_equal(cache.goodput[layouts], expected)
        assert cache.layout_goodput(scenario, layouts) is cache.goodput[layouts]
    assert len(np.unique(cache.goodput[KEYS[0][0]])) == 3
