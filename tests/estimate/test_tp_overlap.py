"""Tensor-parallel communication pipelined with its GEMMs (tp_comm_overlap)."""

from __future__ import annotations

import numpy as np
import pytest

import gpuplan
from gpuplan.estimate.time import tensor_parallel_overlap_exposed


def test_overlap_leaves_the_first_chunk_and_what_outlasts_the_gemm():
    collective, gemm, tp = np.array(8.0), np.array(10.0), np.array(8.0)
    assert float(tensor_parallel_overlap_exposed(collective, gemm, tp)) == pytest.approx(1.0)
    slow_link = float(tensor_parallel_overlap_exposed(np.array(20.0), gemm, tp))
    assert slow_link == pytest.approx(20 / 8 + (20 * 7 / 8 - 10))


def test_overlap_hides_most_tensor_parallel_time():
    scenario = {
        "model": "llama-3.1-70b",
        "seq_len": 4096,
        "global_batch": 256,
        "hardware": {"gpu": "h100-sxm-80gb", "count": 64},
        "strategy": {"tp": 8, "pp": 2},
    }
    plain = gpuplan.estimate(scenario)["throughput"]
    overlapped = gpuplan.estimate({**scenario, "tp_comm_overlap": True})["throughput"]
    assert overlapped["breakdown"]["tensor_parallel"] < 0.5 * plain["breakdown"]["tensor_parallel"]
    assert overlapped["tokens_per_second"] > plain["tokens_per_second"]


def test_async_tp_leaves_the_summed_input_gradient_scatters_whole():
    """PyTorch's async TP cannot fuse the backward's reduce-scatter of an input gradient summed
    over separate Q/K/V (gate/up) matmuls: one of a layer's four all-reduces' bytes stays
    exposed; Transformer Engine's userbuffers hide it too."""
    scenario = {
        "model": "llama-3.1-70b",
        "seq_len": 4096,
        "global_batch": 256,
        "hardware": {"gpu": "h100-sxm-80gb", "count": 64},
        "strategy": {"tp": 8, "pp": 2, "recompute": "none"},
    }
    for framework, unpipelined in (("torchtitan", 1), ("megatron", 0)):
        plain = gpuplan.estimate({**scenario, "framework": framework})["throughput"]
        overlapped = gpuplan.estimate(
            {**scenario, "framework": framework, "tp_comm_overlap": True}
        )["throughput"]
        one_of_four = plain["breakdown"]["tensor_parallel"] / 4
        exposed = overlapped["breakdown"]["tensor_parallel"]
        assert (exposed > one_of_four) == bool(unpipelined), framework


def test_fp8_recipes_that_cast_token_shards_gather_fp8_and_reduce_bf16():
    """Transformer Engine and torchao's float8 tensor parallelism cast each rank's token shard
    before the sequence-parallel all-gather; torchtitan's rowwise runs gather bf16."""
    from gpuplan.catalog import load_gpu
    from gpuplan.estimate.comm import collective_seconds
    from gpuplan.hardware.cluster import Cluster

    scenario = {
        "model": "llama-3.1-70b",
        "seq_len": 4096,
        "global_batch": 64,
        "precision": "fp8",
        "framework": "torchtitan",
        "hardware": {"gpu": "h100-sxm-80gb", "count": 64},
        "strategy": {"tp": 8, "zero": 3},
    }

    def tensor_parallel(recipe: str) -> float:
        result = gpuplan.estimate({**scenario, "fp8_recipe": recipe})
        return result["throughput"]["breakdown"]["tensor_parallel"]

    activation = 4096 * 8192 * 2.0
    node = Cluster(load_gpu("h100-sxm-80gb"), count=64)
    gathered = float(collective_seconds("all_gather", activation / 2, 8, 1, node))
    scattered = float(collective_seconds("reduce_scatter", activation, 8, 1, node))
    reduced = float(collective_seconds("all_reduce", activation, 8, 1, node))
    assert tensor_parallel("tensorwise") / tensor_parallel("rowwise") == pytest.approx(
        (gathered + scattered) / reduced
    )
    assert 0.75 <= tensor_parallel("tensorwise") / tensor_parallel("rowwise") < 0.85
