"""The kernel models against the published kernel measurements they are built from."""

from __future__ import annotations

import pytest

from gpuplan.catalog import load_gpu
from gpuplan.estimate.kernels import (
    HBM_EFFICIENCY,
    GemmRates,
    alignment_share,
    attention_share_of_peak,
    gemm_share_of_peak,
    padded,
)

XLA_HOPPER_BF16_TFLOPS = {
    (512, 512, 512): 40.7,
    (1024, 1024, 1024): 252.8,
    (2048, 2048, 2048): 641.0,
    (4096, 4096, 4096): 780.2,
    (4096, 4096, 256): 398.6,
    (4096, 4096, 512): 551.8,
    (4096, 4096, 1024): 685.2,
    (4096, 4096, 2048): 735.6,
    (4096, 256, 4096): 398.9,
    (4096, 1024, 4096): 751.7,
}
"""M x N x K -> TFLOP/s, tensorflow/tensorflow third_party/xla/xla/backends/gpu/cost_model/
matmul_interpolator_data.h @ a305421c (sm_90, bf16, batch 1; 512^3 from the earlier
service/gpu/model copy @ 372d578b)."""


@pytest.mark.parametrize(("shape", "measured"), XLA_HOPPER_BF16_TFLOPS.items())
def test_gemm_model_follows_the_published_hopper_shape_sweep(shape, measured):
    gpu = load_gpu("h100-sxm-80gb")
    peak = gpu.peak("bf16")
    rates = GemmRates(
        peak, gpu.matmul_ceiling_share("bf16"), gpu.hbm_bandwidth() * HBM_EFFICIENCY, 2
    )
    share = gemm_share_of_peak(*shape, rates)
    assert float(share) * peak / 1e12 == pytest.approx(measured, rel=0.17)


def test_thin_gemms_run_below_square_ones():
    gpu = load_gpu("a100-sxm-80gb")
    rates = GemmRates(
        gpu.peak("bf16"), gpu.matmul_ceiling_share("bf16"), gpu.hbm_bandwidth() * 0.8, 2
    )
    square = gemm_share_of_peak(8192, 8192, 8192, rates)
    thin = gemm_share_of_peak(8192, 256, 8192, rates)
    assert float(thin) < 0.9 * float(square)
    assert float(square) <= gpu.matmul_ceiling_share("bf16")


def test_padding_and_misalignment_cost_what_they_waste():
    assert float(padded(129, 128)) == 256
    assert float(padded(4096, 128)) == 4096
    assert float(alignment_share(4096, 10922, 4096)) == pytest.approx(272.7 / 398.4)
    assert float(alignment_share(4096, 10944, 4096)) == 1.0


def test_attention_shares_are_the_published_kernel_figures():
    """FlashAttention-2 on A100, causal, head dim 128, 2k: 155 TFLOP/s forward plus backward in
    the benchmark's count, 3/3.5 of that in ours."""
    assert attention_share_of_peak("Ampere", "flash2", 2048, 128) == pytest.approx(
        155e12 / 312e12 * 3 / 3.5
    )
    hopper_flash = attention_share_of_peak("Hopper", "flash2", 4096, 128)
    hopper_cudnn = attention_share_of_peak("Hopper", "cudnn", 4096, 128)
    assert hopper_cudnn > 1.4 * hopper_flash
    assert attention_share_of_peak("Hopper", "eager", 4096, 128) < 0.25 * hopper_flash


def test_attention_share_grows_with_length_and_head_dimension():
    shares = [attention_share_of_peak("Ampere", "flash2", s, 128) for s in (256, 1024, 4096, 65536)]
    assert shares == sorted(shares)
    assert shares[0] == attention_share_of_peak("Ampere", "flash2", 512, 128)
    assert attention_share_of_peak("Ampere", "flash2", 2048, 64) < shares[2]
    assert attention_share_of_peak("Ampere", "flash2", 2048, 96) == pytest.approx(
        (
            attention_share_of_peak("Ampere", "flash2", 2048, 64)
            + attention_share_of_peak("Ampere", "flash2", 2048, 128)
        )
        / 2
    )


def test_a_scenario_can_name_its_attention_kernel():
    import gpuplan
    from gpuplan.errors import InputError

    base = {"model": "llama-3.1-8b", "framework": "fsdp", "hardware": {"gpu": "h100-sxm-80gb"}}
    flash = gpuplan.estimate(base)["throughput"]["breakdown"]["attention"]
    cudnn = gpuplan.estimate({**base, "attention_kernel": "cudnn"})["throughput"]["breakdown"]
    assert cudnn["attention"] < 0.8 * flash
    with pytest.raises(InputError, match="attention_kernel"):
        gpuplan.estimate({**base, "attention_kernel": "flash9"})


def test_flash_attention_2_runs_a_head_at_the_next_kernel_it_has():
    """``flash_api.cpp`` rounds the head to a multiple of 32 (256 above 192): a head of 112 costs
    the 128 kernel's time, so it reaches 112/128 of that kernel's FLOP rate."""
    from gpuplan.estimate.kernels import flash2_kernel_head_dim

    assert [flash2_kernel_head_dim(d) for d in (64, 80, 96, 112, 128, 160, 200)] == [
        64, 96, 96, 128, 128, 160, 256,
    ]  # fmt: skip
    at_128 = attention_share_of_peak("Hopper", "flash2", 4096, 128)
    assert attention_share_of_peak("Hopper", "flash2", 4096, 112) == pytest.approx(
        at_128 * 112 / 128
    )
    assert attention_share_of_peak("Hopper", "eager", 4096, 112) > attention_share_of_peak(
        "Hopper", "eager", 4096, 64
    )


def test_fp8_gemms_write_their_result_in_bf16():
    """Each of a linear's three GEMMs reads two fp8 matrices and writes the third in bf16."""
    from gpuplan.estimate.kernels import MATMUL_ELEMENT_BYTES

    assert MATMUL_ELEMENT_BYTES["fp8"] * 3 == pytest.approx(1 + 1 + 2)
    assert MATMUL_ELEMENT_BYTES["bf16"] == 2


LIGER_B200_BF16_CUBLAS_MS = {256: 0.264, 512: 0.396, 1024: 0.685, 2048: 1.336}
"""K -> cuBLAS median milliseconds of a B200 bf16 GEMM with M = 128256, N = 4096 (the output
head's weight-gradient shapes), linkedin/Liger-Kernel pull request 1380 (2026-08-14), "B200
BF16 results", cuBLAS column."""


@pytest.mark.parametrize(("k", "measured_ms"), LIGER_B200_BF16_CUBLAS_MS.items())
def test_gemm_model_follows_published_blackwell_gemm_times(k, measured_ms):
    from gpuplan.estimate.kernels import gemm_seconds

    gpu = load_gpu("b200-sxm-180gb")
    rates = GemmRates(
        gpu.peak("bf16"), gpu.matmul_ceiling_share("bf16"), gpu.hbm_bandwidth() * HBM_EFFICIENCY, 2
    )
    predicted_ms = float(gemm_seconds(128256, 4096, k, rates)) * 1e3
    assert predicted_ms == pytest.approx(measured_ms, rel=0.12)
