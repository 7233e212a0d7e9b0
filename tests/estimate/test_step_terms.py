"""The step model's job-and-layout terms, computed once for many layouts and selected later,
give the step times of computing them for the layouts at hand, bit for bit."""

from __future__ import annotations

from dataclasses import fields, replace

import numpy as np
import pytest

from gpuplan.catalog import load_gpu
from gpuplan.estimate.step_terms import PackedTerms, layout_terms, pack
from gpuplan.estimate.time import estimate_step_time
from gpuplan.hardware.cluster import Cluster
from gpuplan.hardware.topology import assumed_topology
from gpuplan.scenario import parse_scenario
from gpuplan.search.layouts import enumerate_layouts

JOBS = {
    "70b full": {"model": "llama-3.1-70b", "method": "full", "global_batch": 64},
    "8b qlora": {"model": "llama-3.1-8b", "method": "qlora", "global_batch": 32},
    "moe full": {"model": "qwen3-30b-a3b", "method": "full", "global_batch": 64},
    "8b fp8 long": {
        "model": "llama-3.1-8b",
        "method": "full",
        "precision": "fp8",
        "global_batch": 16,
        "seq_len": 32768,
    },
}


def _scenario(name):
    return parse_scenario({"tokens": "1B", "seq_len": 4096, **JOBS[name]})


def _assert_same_terms(left, right):
    for field in fields(left):
        a, b = getattr(left, field.name), getattr(right, field.name)
        if field.name == "groups":
            assert a.keys() == b.keys()
            for name in a:
                np.testing.assert_array_equal(a[name].size, b[name].size)
                np.testing.assert_array_equal(a[name].stride, b[name].stride)
        else:
            assert a.dtype == b.dtype, field.name
            np.testing.assert_array_equal(a, b, field.name)


@pytest.mark.parametrize("name", JOBS)
def test_packed_terms_unpack_to_the_terms(name):
    scenario = _scenario(name)
    layouts = enumerate_layouts(scenario, 8, [8, 16, 64], True).layout
    terms = layout_terms(scenario.job, layouts)
    _assert_same_terms(pack(terms).unpack(), terms)


@pytest.mark.parametrize("name", JOBS)
def test_selected_terms_give_the_step_time_of_the_selected_layouts(name):
    scenario = _scenario(name)
    candidates = enumerate_layouts(scenario, 8, [8, 16, 64], True)
    packed = pack(layout_terms(scenario.job, candidates.layout))
    rng = np.random.default_rng(7)
    chosen = rng.random(len(candidates)) < 0.3
    halves = np.flatnonzero(chosen)
    first, second = halves[: len(halves) // 2], halves[len(halves) // 2 :]
    joined = PackedTerms.concatenate([packed.take(first), packed.take(second)])
    assert len(joined) == int(chosen.sum())
    subset = candidates.take(chosen)
    gpu = load_gpu("h100-sxm-80gb")
    topology = assumed_topology(gpu, 8, "GPU catalog")
    cluster = Cluster.of_instances(gpu, topology, 8, allow_unlisted_network=True)
    alone = estimate_step_time(scenario.job, cluster, subset.layout)
    shared = estimate_step_time(scenario.job, cluster, subset.layout, terms=joined.unpack())
    np.testing.assert_array_equal(shared.step_seconds, alone.step_seconds)
    np.testing.assert_array_equal(shared.mfu, alone.mfu)
    for part in alone.breakdown:
        np.testing.assert_array_equal(shared.breakdown[part], alone.breakdown[part], part)
    assert float(np.max(alone.breakdown["data_parallel"])) > 0


def test_terms_of_another_dtype_are_refused():
    scenario = _scenario("70b full")
    layouts = enumerate_layouts(scenario, 8, [8], False).layout
    terms = layout_terms(scenario.job, layouts)
    from dataclasses import replace

    with pytest.raises(TypeError, match="float64"):
        pack(replace(terms, tp=terms.tp.astype(np.float32)))


def test_the_head_share_of_the_distinct_shapes_is_that_of_every_row():
    from gpuplan.estimate.kernels import GemmRates, gemm_share_of_peak
    from gpuplan.estimate.time import matmul_efficiencies

    scenario = _scenario("70b full")
    layouts = enumerate_layouts(scenario, 8, [8, 16, 64], False).layout
    tokens = (scenario.job.seq_len * layouts.micro_batch / layouts.cp).astype(float)
    rates = GemmRates(989e12, 0.7, 3.35e12, 2.0)
    model = scenario.job.model
    _, head = matmul_efficiencies(model, layouts, tokens, rates)
    every_row = gemm_share_of_peak(
        tokens, model.vocab_size / layouts.tp.astype(float), model.hidden_size, rates
    )
    np.testing.assert_array_equal(head, every_row)
    assert len(np.unique(head)) > 1


def test_a_placed_group_times_each_collective_as_collective_seconds():
    from gpuplan.estimate.comm import PlacedGroup, collective_seconds

    gpu = load_gpu("h100-sxm-80gb")
    topology = assumed_topology(gpu, 8, "GPU catalog")
    cluster = Cluster.of_instances(gpu, topology, 4, allow_unlisted_network=True)
    size, stride = np.array([1, 2, 8, 16, 32]), np.array([1, 1, 2, 1, 1])
    message = np.array([1e6, 1e7, 1e8, 1e9, 4e9])
    group = PlacedGroup.of(size, stride, cluster)
    for collective in ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "p2p"):
        np.testing.assert_array_equal(
            group.collective_seconds(collective, message),
            collective_seconds(collective, message, size, stride, cluster),
        )
    alone = PlacedGroup.of(np.ones(3, dtype=np.int64), np.ones(3, dtype=np.int64), cluster)
    assert alone.placement is None
    assert alone.collective_seconds("all_reduce", 1e9).tolist() == [0.0, 0.0, 0.0]


def test_per_op_checkpointing_gathers_the_layer_inputs_again():
    """Four tensor-parallel all-reduces a layer, six under full recompute; torchtitan's per-op
    selective checkpointing saves reduce-scatter outputs but not all-gathers, so its backward
    gathers the two inputs again: five, under sequence parallelism."""
    from gpuplan.strategy import Strategy

    scenario = parse_scenario({"tokens": "1B", **JOBS["70b full"]})

    def collectives(framework: str, recompute: str) -> float:
        job = replace(scenario.job, framework=framework)
        layout = Strategy(dp=8, tp=8, zero=3, micro_batch=1, recompute=recompute).layout(job)
        return float(layout_terms(job, layout).tp_collectives)

    assert collectives("megatron", "selective") == 4.0
    assert collectives("torchtitan", "selective") == 5.0
    assert collectives("torchtitan", "full") == 6.0
    assert collectives("torchtitan", "none") == 4.0
