"""Verdicts, thresholds, busbw factors, GEMM shapes, PCIe rates and GPU identification."""

from __future__ import annotations

import pytest

from gpuplan.bench.collectives import bus_bandwidth_factor, launch_commands, per_gpu_network_rate
from gpuplan.bench.environment import identify_gpu, throttle_names
from gpuplan.bench.gemm_shapes import forward_gemms, training_gemms
from gpuplan.bench.references import pcie_link_bytes_per_second
from gpuplan.bench.report import (
    DEFAULT_THRESHOLDS,
    FAIL,
    PASS,
    SKIPPED,
    WARN,
    Figure,
    ThresholdError,
    figure_to_dict,
    judge,
    parse_threshold_override,
    worst_verdict,
)
from gpuplan.bench.timing import relative_spread, summarize, trimmed_mean
from gpuplan.catalog import load_model


def matmul_figure(measured: float | None, reference: float | None = 794.5e12) -> Figure:
    return Figure("matmul.bf16", "matmul bf16", "matmul", "FLOP/s", measured, 989e12, "", reference)


@pytest.mark.parametrize(
    ("measured", "status"), [(794.5e12, PASS), (0.8 * 794.5e12, WARN), (0.5 * 794.5e12, FAIL)]
)
def test_at_least_verdicts_against_the_published_mamf(measured, status):
    assert judge(matmul_figure(measured), DEFAULT_THRESHOLDS["matmul"]).status == status


def test_missing_reference_or_measurement_is_skipped_with_a_reason():
    verdict = judge(matmul_figure(700e12, reference=None), DEFAULT_THRESHOLDS["matmul"])
    assert verdict.status == SKIPPED and "no reference" in verdict.reason
    skipped = Figure("pcie.x", "x", "pcie", "bytes/s", None, skip_reason="no GPU")
    assert judge(skipped, DEFAULT_THRESHOLDS["pcie"]).reason == "no GPU"


@pytest.mark.parametrize(("fluctuation", "status"), [(0.015, PASS), (0.03, WARN), (0.08, FAIL)])
def test_fluctuation_is_the_seeds_two_percent(fluctuation, status):
    figure = Figure("burn.fluctuation.cuda:0", "f", "fluctuation", "ratio", fluctuation)
    assert judge(figure, DEFAULT_THRESHOLDS["fluctuation"]).status == status


@pytest.mark.parametrize(("measured", "status"), [(1.05e9, PASS), (1.2e9, WARN), (0.5e9, FAIL)])
def test_within_verdicts_compare_with_the_prediction(measured, status):
    figure = Figure("probe.max_memory_allocated_bytes", "m", "probe_memory", "bytes", measured)
    figure.reference = 1e9
    assert judge(figure, DEFAULT_THRESHOLDS["probe_memory"]).status == status


def test_figure_dict_has_both_ratios_and_the_threshold():
    entry = figure_to_dict(matmul_figure(794.5e12), DEFAULT_THRESHOLDS)
    assert entry["spec_ratio"] == pytest.approx(794.5 / 989)
    assert entry["reference_ratio"] == pytest.approx(1.0)
    assert entry["verdict"] == PASS
    assert "0.9" in entry["threshold"]


def test_threshold_override_keeps_the_kind_and_names_the_field_on_error():
    name, threshold = parse_threshold_override("fluctuation=0.03:0.06", DEFAULT_THRESHOLDS)
    assert name == "fluctuation" and threshold.kind == "at_most"
    assert (threshold.pass_at, threshold.warn_at) == (0.03, 0.06)
    with pytest.raises(ThresholdError, match="--threshold"):
        parse_threshold_override("speed=1:2", DEFAULT_THRESHOLDS)
    with pytest.raises(ThresholdError, match="numbers"):
        parse_threshold_override("matmul=a:b", DEFAULT_THRESHOLDS)


def test_worst_verdict_orders_fail_warn_pass_skipped():
    assert worst_verdict([PASS, SKIPPED, WARN]) == WARN
    assert worst_verdict([PASS, FAIL]) == FAIL
    assert worst_verdict([]) == SKIPPED


def test_bus_bandwidth_factors_follow_nccl_tests():
    assert bus_bandwidth_factor("all_reduce", 8) == pytest.approx(1.75)
    for name in ("all_gather", "reduce_scatter", "all_to_all"):
        assert bus_bandwidth_factor(name, 8) == pytest.approx(0.875)
    assert bus_bandwidth_factor("all_reduce", 1) == 0
    with pytest.raises(ValueError):
        bus_bandwidth_factor("broadcast_tree", 8)


def test_per_gpu_network_rate_reproduces_the_ml_engineering_b200_example():
    assert per_gpu_network_rate(381.80e9, nodes=4, ranks=32) == pytest.approx(36.95e9, rel=1e-3)
    assert per_gpu_network_rate(381.80e9, nodes=1, ranks=8) == 0.0


def test_launch_commands_name_torchrun_slurm_and_the_worker_module():
    commands = launch_commands(4, 8)
    assert "--nnodes 4 --nproc-per-node 8" in commands["torchrun"]
    assert "-m gpuplan.bench.collectives" in commands["torchrun"]
    assert commands["slurm"].startswith("srun --nodes 4")
    assert "$SLURM_JOB_ID" in commands["slurm"]


def test_llama_8b_gemms_after_tensor_parallel_split():
    model = load_model("llama-3.1-8b")
    shapes = {shape.name: shape for shape in forward_gemms(model, tokens=4096, tp=2)}
    assert (shapes["qkv_projection"].n, shapes["qkv_projection"].k) == (
        (4096 + 2 * 1024) // 2,
        4096,
    )
    assert (shapes["attention_output"].n, shapes["attention_output"].k) == (4096, 2048)
    assert shapes["mlp_up"].n == 2 * 14336 // 2
    assert shapes["mlp_down"].k == 14336 // 2
    assert shapes["lm_head"].n == 128256 // 2
    assert all(shape.m == 4096 for shape in shapes.values())
    training = training_gemms(model, 4096, 2)
    weight_gradient = next(
        s for s in training if s.name == "mlp_up" and s.pass_name == "weight_gradient"
    )
    assert (weight_gradient.m, weight_gradient.n, weight_gradient.k) == (14336, 4096, 4096)
    assert len({(s.m, s.n, s.k) for s in training}) == len(training)
    assert sum(shape.flops for shape in forward_gemms(model, 4096, 2)) > 0


def test_pcie_link_rates_per_generation():
    assert pcie_link_bytes_per_second(5, 16) == pytest.approx(63.0e9, rel=1e-2)
    assert pcie_link_bytes_per_second(4, 16) == pytest.approx(31.5e9, rel=1e-2)
    assert pcie_link_bytes_per_second(3, 0) is None
    assert pcie_link_bytes_per_second(9, 16) is None


@pytest.mark.parametrize(
    ("name", "gpu_id"),
    [
        ("NVIDIA H100 80GB HBM3", "h100-sxm-80gb"),
        ("NVIDIA A100-SXM4-80GB", "a100-sxm-80gb"),
        ("NVIDIA H100 PCIe", "h100-pcie-80gb"),
        ("NVIDIA GeForce RTX 4090", "rtx-4090-24gb"),
        ("Tesla V100-SXM2-32GB", "v100-sxm-32gb"),
        ("NVIDIA L40S", "l40s-48gb"),
        ("Mystery Accelerator 9000", None),
    ],
)
def test_driver_names_map_to_catalog_ids(name, gpu_id):
    assert identify_gpu(name) == gpu_id


def test_throttle_bitmask_names():
    assert throttle_names(0x4 | 0x20) == ["sw_power_cap", "sw_thermal_slowdown"]


def test_statistics_helpers():
    summary = summarize([1.0, 2.0, 3.0, 4.0])
    assert summary["median"] == 2.5 and summary["max"] == 4.0
    assert trimmed_mean([1.0, 5.0, 6.0, 100.0]) == 5.5
    assert relative_spread([98.0, 100.0, 102.0]) == pytest.approx(0.04)
