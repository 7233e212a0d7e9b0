"""Speed model: step time, throughput, MFU and duration behave as a practitioner expects."""

from __future__ import annotations

import numpy as np
import pytest

import gpuplan


def _estimate(**overrides):
    scenario = {
        "model": "llama-3.1-8b",
        "seq_len": 4096,
        "global_batch": 256,
        "micro_batch": 1,
        "tokens": "10B",
        "hardware": {"gpu": "h100-sxm-80gb", "count": 8},
        "strategy": {"zero": 1},
    }
    scenario.update(overrides)
    return gpuplan.estimate(scenario)


def test_contract_keys_and_units():
    result = _estimate()
    throughput = result["throughput"]
    for key in (
        "step_seconds",
        "tokens_per_second",
        "tokens_per_second_per_gpu",
        "model_flops_per_second_per_gpu",
        "mfu",
        "hfu",
    ):
        assert throughput[key] > 0
    assert throughput["tokens_per_second"] == pytest.approx(
        8 * throughput["tokens_per_second_per_gpu"]
    )
    assert throughput["step_seconds"] == pytest.approx(sum(throughput["breakdown"].values()))
    assert 0.2 < throughput["mfu"] < 0.7
    duration = result["duration"]
    training = 10e9 / (throughput["tokens_per_second"] * result["reliability"]["goodput"])
    assert duration["training_seconds"] == pytest.approx(training)
    expected = duration["startup_seconds"] + training
    assert 0 < duration["startup_seconds"] < 0.05 * expected
    assert duration["seconds"] == pytest.approx(expected)
    assert duration["days"] == pytest.approx(expected / 86400)


def test_more_gpus_train_faster():
    small = _estimate()["duration"]["days"]
    large = _estimate(hardware={"gpu": "h100", "count": 64})["duration"]["days"]
    assert large < small / 4


def test_fp8_speeds_up_h100_but_not_a100():
    assert (
        _estimate(precision="fp8")["throughput"]["tokens_per_second"]
        > _estimate()["throughput"]["tokens_per_second"]
    )
    a100_fp8 = _estimate(precision="fp8", hardware={"gpu": "a100-sxm-80gb", "count": 8})
    a100_bf16 = _estimate(hardware={"gpu": "a100-sxm-80gb", "count": 8})
    assert a100_fp8["throughput"]["tokens_per_second"] == pytest.approx(
        a100_bf16["throughput"]["tokens_per_second"], rel=0.01
    )
    assert any("fp8" in warning for warning in a100_fp8["warnings"])


def test_recompute_costs_time_and_hfu_exceeds_mfu():
    plain = _estimate()["throughput"]
    full = _estimate(strategy={"zero": 1, "recompute": "full"})["throughput"]
    assert full["step_seconds"] > plain["step_seconds"]
    assert full["hfu"] > full["mfu"]
    assert plain["hfu"] == pytest.approx(plain["mfu"])


def test_pipeline_bubble_and_its_warning():
    few = _estimate(
        model="llama-3.1-70b",
        global_batch=16,
        hardware={"gpu": "h100", "count": 64},
        strategy={"tp": 8, "pp": 8, "zero": 1},
    )
    assert few["throughput"]["breakdown"]["bubble"] > 0
    assert any("bubble" in warning or "never fills" in warning for warning in few["warnings"])


def test_tensor_parallel_across_nodes_is_warned_and_slow():
    inside = _estimate(
        model="llama-3.1-70b", hardware={"gpu": "h100", "count": 16}, strategy={"tp": 8, "zero": 1}
    )
    across = _estimate(
        model="llama-3.1-70b", hardware={"gpu": "h100", "count": 16}, strategy={"tp": 16, "zero": 1}
    )
    assert any("spans nodes" in warning for warning in across["warnings"])
    assert (
        across["throughput"]["breakdown"]["tensor_parallel"]
        > 1.5 * inside["throughput"]["breakdown"]["tensor_parallel"]
    )


def test_goodput_falls_with_cluster_size():
    small = _estimate()["reliability"]["goodput"]
    large = _estimate(hardware={"gpu": "h100", "count": 4096}, global_batch=4096)["reliability"][
        "goodput"
    ]
    assert 0 < large < small <= 1


def test_reliability_options_are_read():
    base = _estimate(hardware={"gpu": "h100", "count": 1024}, global_batch=1024)["reliability"]
    flaky = _estimate(
        hardware={"gpu": "h100", "count": 1024},
        global_batch=1024,
        reliability={"failures_per_gpu_hour": 1e-3, "restart": "30m"},
    )["reliability"]
    assert flaky["goodput"] < base["goodput"]


def test_bad_reliability_option_is_one_line_error():
    with pytest.raises(gpuplan.errors.InputError, match=r"reliability\.failures_per_gpu_hour"):
        _estimate(reliability={"failures_per_gpu_hour": -1})


def _small_model_on(gpu: str, count: int, **hardware):
    return gpuplan.estimate(
        {
            "model": "llama-3.2-1b",
            "method": "full",
            "seq_len": 2048,
            "global_batch": 64,
            "tokens": "1B",
            "framework": "fsdp",
            "hardware": {"gpu": gpu, "count": count, **hardware},
            "strategy": {"zero": 3 if count > 1 else 0, "micro_batch": 1},
        }
    )["throughput"]


def test_geforce_zero3_pays_for_host_memory_transfers():
    """A GeForce card has no peer-to-peer: 8 x RTX 4090 under ZeRO-3 stage every gather through
    host memory, and the exposed communication is a large share of the step (TinyLlama's
    8 x RTX 3090 DeepSpeed run reaches 55 % of linear scaling, whyNLP/tinyllama README)."""
    host = _small_model_on("rtx-4090-24gb", 8)
    direct = _small_model_on("rtx-4090-24gb", 8, p2p=True)
    share = host["breakdown"]["zero3_gather"] / host["step_seconds"]
    assert share > 0.3
    assert host["breakdown"]["zero3_gather"] > 1.2 * direct["breakdown"]["zero3_gather"]


def test_pcie_data_parallel_scales_worse_than_nvlink():
    def scaling(gpu: str) -> float:
        one = _small_model_on(gpu, 1)["tokens_per_second_per_gpu"]
        return _small_model_on(gpu, 8)["tokens_per_second_per_gpu"] / one

    assert scaling("rtx-4090-24gb") < 0.8 < scaling("h100-sxm-80gb")


def test_latent_attention_runs_at_the_kernel_speed_of_its_query_key_width():
    """DeepSeek-V3's heads are 192 wide in ``QK^T`` (128 + 64 rotary) though hidden / heads is
    56: its attention time is its attention FLOPs at the measured kernel rate for width 192, at
    the clock the board sustains."""
    from gpuplan.catalog import load_gpu, load_model
    from gpuplan.estimate.efficiency import default_efficiency
    from gpuplan.estimate.flops import training_flops_per_token
    from gpuplan.estimate.kernels import attention_share_of_peak
    from gpuplan.scenario import parse_scenario

    model, gpu = load_model("deepseek-v3"), load_gpu("h100-sxm-80gb")
    assert model.head_dim == 56
    scenario = {
        "model": "deepseek-v3", "seq_len": 4096, "global_batch": 256, "micro_batch": 1,
        "framework": "megatron", "hardware": {"gpu": gpu.id, "count": 256},
        "strategy": {"pp": 8, "ep": 32, "zero": 1, "recompute": "none"},
    }  # fmt: skip
    result = gpuplan.estimate(scenario)
    job = parse_scenario(scenario).job
    core = float(training_flops_per_token(job).parts["attention_core"])
    stage_share = -(-model.num_layers // 8) / model.num_layers
    share = attention_share_of_peak(gpu.architecture, "cudnn", 4096, 192)
    tokens_per_rank = 256 * 4096 / 32
    rate = gpu.half_precision_peak() * share * gpu.sustained_clock_share()
    expected = tokens_per_rank * core * stage_share / rate
    expected /= default_efficiency().megatron
    assert result["throughput"]["breakdown"]["attention"] == pytest.approx(expected, rel=1e-6)
    assert share > attention_share_of_peak(gpu.architecture, "cudnn", 4096, 56)


def test_kernels_run_at_the_clock_the_board_sustains_and_a_power_limit_lowers_it():
    from gpuplan.catalog import load_gpu
    from gpuplan.estimate.comm import ClusterRows
    from gpuplan.hardware.cluster import Cluster, clock_share_under_power_limit

    h100 = load_gpu("h100-sxm-80gb")
    rated = Cluster(gpu=h100, count=8)
    limited = Cluster(gpu=h100, count=8, power_limit_watts=500)
    assert rated.clock_share == pytest.approx(730 / 794.5)
    assert limited.clock_share == pytest.approx(
        730 / 794.5 * clock_share_under_power_limit(500, 700)
    )
    rows = ClusterRows(clusters=(rated,), rows=np.zeros(1, dtype=int))
    assert rows.clock_share == rated.clock_share


def test_h100_gains_less_over_a100_than_their_best_shape_matmul_rates():
    """A matmul-bound job: the speed-up stays below the MAMF ratio (794.5 / 271.2 = 2.93), since
    the H100 sustains 730 TFLOP/s on a large GEMM run back to back and the A100 270."""
    scenario = {"model": "llama-2-13b", "seq_len": 2048, "micro_batch": 4, "global_batch": 256}
    h100 = _estimate(**scenario)["throughput"]["tokens_per_second"]
    a100 = _estimate(**scenario, hardware={"gpu": "a100-sxm-80gb", "count": 8})["throughput"][
        "tokens_per_second"
    ]
    assert 2.0 < h100 / a100 < 730 / 270


def test_hybrid_sharding_keeps_more_state_and_adds_a_replica_all_reduce():
    """FSDP over 64 GPUs sharded in groups of 8 (HSDP) holds 8x the per-GPU optimizer states of
    full sharding, and its gradients cross the network in the replica all-reduce."""
    scenario = {
        "hardware": {"gpu": "h100-sxm-80gb", "count": 64},
        "framework": "fsdp",
        "global_batch": 64,
    }
    full = _estimate(**scenario, strategy={"zero": 3})
    hybrid = _estimate(**scenario, strategy={"zero": 3, "shard_group": 8})
    assert full["strategy"]["shard_group"] == 64
    assert hybrid["strategy"]["shard_group"] == 8
    optimizer = hybrid["memory"]["parts"]["optimizer"] / full["memory"]["parts"]["optimizer"]
    assert optimizer == pytest.approx(8, rel=0.01)
    assert hybrid["throughput"]["step_seconds"] != full["throughput"]["step_seconds"]


def test_a_shard_group_that_does_not_divide_the_data_parallel_ranks_is_refused():
    with pytest.raises(ValueError, match=r"strategy\.shard_group: must divide 8"):
        _estimate(strategy={"zero": 1, "shard_group": 3})


def test_internevo_syncs_parameters_by_one_broadcast_per_shard_owner():
    """InternEvo's ZeRO-1 broadcasts each rank's updated shard in turn (``broadcast_params``):
    over all 512 data-parallel ranks (``zero1 = -1``) the chains' fill makes the sync far slower
    than over groups of 8 GPUs inside a node (``zero1 = 8``), as its 1024-GPU runs measured."""

    def sync_seconds(shard_group: int) -> float:
        result = _estimate(
            model="llama-2-7b",
            seq_len=2048,
            global_batch=4096,
            micro_batch=2,
            framework="internevo",
            hardware={"gpu": "a100-sxm-80gb", "count": 512},
            strategy={"zero": 1, "shard_group": shard_group},
        )
        return result["throughput"]["breakdown"]["data_parallel"]

    assert sync_seconds(0) > 5 * sync_seconds(8)


def test_packed_documents_cut_the_attention_time_not_the_matmuls():
    whole = _estimate(seq_len=8192, global_batch=64)["throughput"]["breakdown"]
    packed = _estimate(seq_len=8192, global_batch=64, document_tokens=512)["throughput"]
    assert packed["breakdown"]["attention"] < 0.25 * whole["attention"]
    assert packed["breakdown"]["matmul"] == pytest.approx(whole["matmul"])


def test_documents_longer_than_the_sequence_are_a_one_line_error():
    from gpuplan.errors import InputError

    with pytest.raises(InputError, match="document_tokens"):
        _estimate(seq_len=4096, document_tokens=8192)
