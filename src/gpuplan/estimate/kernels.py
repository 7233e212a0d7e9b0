"""What one kernel costs on one GPU, from published kernel measurements; nothing here is fitted.

- **GEMMs** (:func:`gemm_seconds`): compute at the GPU's measured Maximum Achievable Matmul
  FLOP/s (``achievable_matmul`` in gpus.toml), less tile quantization and misalignment; the
  operands and the output cross HBM once, at :data:`HBM_EFFICIENCY` of the peak bandwidth; a
  fixed latency per kernel. Checked against XLA's published GEMM shape table.
- **Attention** (:func:`attention_share_of_peak`): the fused attention kernel's forward plus
  backward throughput, by GPU generation and sequence length, as its authors measured it.
- **Kernel floors** (:data:`KERNEL_GAP_SECONDS`, :data:`HOST_LAUNCH_SECONDS`): the shortest
  kernel's GPU time, and the host's time to launch one.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

HBM_EFFICIENCY = 0.80
"""Share of the data-sheet HBM bandwidth that streaming kernels reach: STREAM-style copy and
triad kernels reach 80-90 % on A100 and H100 (ml-engineering ``compute/accelerator``, "memory
bandwidth"); the lower end, since training's elementwise kernels are short."""

TILE_M, TILE_N, TILE_K = 128.0, 128.0, 64.0
"""The thread-block tile of cuBLAS's and CUTLASS's default half-precision tensor-core kernels: a
dimension that is not a multiple of it wastes the padded remainder (NVIDIA, "Matrix
Multiplication Background User's Guide", tile quantization)."""

GEMM_LATENCY_SECONDS = 5.0e-6
"""Fixed time of one GEMM kernel beyond its compute or its traffic: XLA's measured Hopper GEMM
table runs 256 x 256 x 256 in bf16 at 6.7 TFLOP/s, 5.0 us for 34 MFLOP, and every larger shape
in it stays 3-5 us above ``max(compute at MAMF, traffic)`` (tensorflow/tensorflow
``third_party/xla/xla/backends/gpu/cost_model/matmul_interpolator_data.h`` @ a305421c)."""

ALIGNMENT_ELEMENTS = 8
MISALIGNED_SHARE = 272.7 / 398.4
"""A GEMM dimension that is not a multiple of 8 elements (16 bytes in bf16) cannot use the
vectorised tensor-core loads: on H100 a SwiGLU MLP with ``d_ff = 10922`` ran at 272.7 TFLOP/s
against 398.4 with ``d_ff = 10944`` (stas00/ml-engineering ``training/performance/README.md``)."""


def padded(size: npt.ArrayLike, tile: float) -> FloatArray:
    """``size`` rounded up to whole tiles: the work a GEMM does on a dimension that is not a
    multiple of its tile (tile quantization)."""
    return np.asarray(np.ceil(np.asarray(size, dtype=float) / tile) * tile, dtype=float)


def alignment_share(*sizes: npt.ArrayLike) -> FloatArray:
    """:data:`MISALIGNED_SHARE` where any dimension is not a multiple of 8 elements, else 1."""
    mask = ALIGNMENT_ELEMENTS - 1
    remainders: Any = 0
    for size in sizes:
        remainders = remainders | (np.asarray(size).astype(np.int64) & mask)
    return np.where(remainders > 0, MISALIGNED_SHARE, 1.0)


MATMUL_ELEMENT_BYTES = {"fp8": 4.0 / 3.0, "bf16": 2.0, "fp16": 2.0, "tf32": 4.0, "fp32": 4.0}
"""Bytes per element of a GEMM's three matrices in each matmul dtype, averaged over a linear's
forward and two backward GEMMs, which share the three dimensions. An fp8 GEMM reads two fp8
operands and writes its result in bf16 (``torch._scaled_mm`` ``out_dtype``, Transformer
Engine's GEMM output), and each of the three matrices is the result of one of the three GEMMs:
``(1 + 1 + 2) / 3`` bytes per element."""


@dataclass(frozen=True)
class GemmRates:
    """What a GEMM runs at on one GPU: the dtype's dense ``peak`` FLOP/s, the measured MAMF share
    of it (``ceiling``), the achievable HBM ``bandwidth`` and the operands' ``element_bytes``."""

    peak: float
    ceiling: float
    bandwidth: float
    element_bytes: float


def gemm_seconds(
    m: npt.ArrayLike, n: npt.ArrayLike, k: npt.ArrayLike, rates: GemmRates
) -> FloatArray:
    """Time of an ``m x k`` by ``k x n`` GEMM: ``sqrt(c^2 + t^2) + latency``, the compute
    ``c = 2 M N K / (peak * ceiling * a)`` on the dimensions :func:`padded` to whole tiles and
    the traffic ``t = (mk + kn + mn) * element_bytes / bandwidth`` added in quadrature (a kernel
    overlaps its loads with its math only in part), with ``ceiling`` the GPU's measured MAMF
    share of ``peak``, ``a`` :func:`alignment_share`, ``bandwidth`` the achievable HBM bandwidth
    and :data:`GEMM_LATENCY_SECONDS`. Against XLA's measured Hopper table (shapes 512^3 to
    4096^3 and 4096 x 4096 x 256 to 2048) the quadrature sum is within 17 % on every shape, a
    plain ``max`` within 18 % but above on most (``tests/estimate/test_kernels.py``)."""
    m_size, n_size, k_size = (np.asarray(x, dtype=float) for x in (m, n, k))
    padded_flops = 2.0 * padded(m_size, TILE_M) * padded(n_size, TILE_N) * padded(k_size, TILE_K)
    compute = padded_flops / (rates.peak * rates.ceiling * alignment_share(m_size, n_size, k_size))
    traffic = (m_size * k_size + k_size * n_size + m_size * n_size) * rates.element_bytes
    return np.asarray(
        np.hypot(compute, traffic / rates.bandwidth) + GEMM_LATENCY_SECONDS, dtype=float
    )


def gemm_share_of_peak(
    m: npt.ArrayLike, n: npt.ArrayLike, k: npt.ArrayLike, rates: GemmRates
) -> FloatArray:
    """Share of the dense peak that the GEMM reaches (:func:`gemm_seconds`)."""
    flops = (
        2.0 * np.asarray(m, dtype=float) * np.asarray(n, dtype=float) * np.asarray(k, dtype=float)
    )
    return np.asarray(flops / rates.peak / gemm_seconds(m, n, k, rates), dtype=float)


FUSED_KERNELS_PER_LAYER = 33.0
"""Kernels one layer launches per micro-batch with fused ops: forward two norms, four GEMMs
(QKV, output, gate-and-up, down), RoPE, attention, SwiGLU and two residual adds (11); the
backward about twice that (``traffic.py`` lists the ops)."""

EAGER_KERNELS_PER_LAYER = 108.0
"""The same in eager PyTorch: each RMSNorm is six kernels, RoPE six per tensor and SwiGLU two,
so the forward launches about 36 and the backward about twice that."""

KERNEL_GAP_SECONDS = 1.2e-6
"""GPU time of the smallest kernel, the floor every memory-bound kernel pays on top of its
bytes: a 1024-element ``x + y`` measured 1.1-1.3 us (pytorch/pytorch issue #161104)."""

HOST_LAUNCH_SECONDS = 5.0e-6
"""CPU time to launch one kernel from eager PyTorch: "between 5-20 microseconds" (Meta,
HolisticTraceAnalysis ``docs/source/features/cuda_kernel_launch_stats.rst``); the lower end.
A layer whose kernels finish sooner than the host can launch them waits for the host."""

FLASH_ATTENTION_SOURCE = (
    "Dao-AILab/flash-attention assets/flash2_a100_fwd_bwd_benchmark.png and "
    "flash2_h100_fwd_bwd_benchmark.png (commit 4f285b35, 2023-07-17; bar labels), "
    "assets/flash3_fp16_fwd.png (commit 7ef24848, 2024-07-11; bar labels)"
)
SEQUENCE_LENGTHS = (512.0, 1024.0, 2048.0, 4096.0, 8192.0, 16384.0)

ATTENTION_TFLOPS: dict[tuple[str, str, int], tuple[float, ...]] = {
    ("flash2", "a100", 64): (88, 119, 140, 156, 165, 171),
    ("flash2", "a100", 128): (99, 133, 155, 173, 182, 189),
    ("eager", "a100", 64): (15, 16, 17, 18, 18, 18),
    ("eager", "a100", 128): (23, 28, 32, 32, 34, 34),
    ("flash2", "h100", 64): (141, 192, 232, 257, 273, 284),
    ("flash2", "h100", 128): (163, 221, 265, 294, 308, 328),
    ("eager", "h100", 64): (26, 29, 31, 32, 32, 32),
    ("eager", "h100", 128): (40, 50, 57, 61, 63, 63),
}
"""Causal attention forward plus backward TFLOP/s (fp16/bf16) by kernel, GPU and head dimension at
:data:`SEQUENCE_LENGTHS` (:data:`FLASH_ATTENTION_SOURCE`; hidden 2048, batch x length = 16k,
no dropout). ``eager`` is the repository's PyTorch reference (``baddbmm``, softmax, ``einsum``);
it ran out of memory at 16k, where the 8k figure is held. The benchmark counts the forward as
``4 s^2 d h / 2`` under the causal mask and the backward as 2.5 forwards."""

CUDNN_FORWARD_TFLOPS: dict[int, tuple[float, ...]] = {
    64: (225, 288, 334, 363, 379, 388),
    128: (315, 410, 484, 518, 529, 539),
}
FLASH2_FORWARD_TFLOPS_H100: dict[int, tuple[float, ...]] = {
    64: (180, 229, 262, 284, 295, 299),
    128: (191, 260, 298, 319, 333, 335),
}
"""Causal forward TFLOP/s on H100 SXM5 of cuDNN's fused attention (the kernel Transformer Engine
runs on Hopper) and of FlashAttention-2, from the same chart (:data:`FLASH_ATTENTION_SOURCE`).
No backward of cuDNN is published there: its forward plus backward is taken as its forward times
FlashAttention-2's measured (forward + backward) / forward ratio at the same length."""

MEASURED_GPU_OF_ARCHITECTURE = {
    "Ampere": "a100",
    "Ada Lovelace": "a100",
    "Volta": "a100",
    "Hopper": "h100",
    "Blackwell": "h100",
    "Blackwell Ultra": "h100",
    "CDNA 3": "h100",
}
"""Whose measurement each GPU generation uses, as a share of its own bf16 peak: its own where
published (A100, H100); for the rest no per-length figure is published (FlashAttention-4 on B200
gives only a 71 % headline), so the nearest measured generation's shares stand in: Ada and Volta
take Ampere's, Blackwell and CDNA 3 Hopper's."""

PEAK_OF_MEASURED_GPU = {"a100": 312e12, "h100": 989.4e12}
"""The dense bf16 peaks the shares are taken against (A100 SXM, H100 SXM data sheets)."""

OUR_ATTENTION_FLOPS_PER_BENCHMARK_FLOP = 3.0 / 3.5
"""``flops.py`` counts the attention backward as two forwards, the benchmark as 2.5 (it includes
the recomputed scores): the same kernel time is 3/3.5 as many of our FLOPs."""


def _per_length(table: tuple[float, ...], seq_len: float) -> float:
    return float(np.interp(np.log(max(seq_len, 1.0)), np.log(SEQUENCE_LENGTHS), table))


def flash2_kernel_head_dim(head_dim: int) -> int:
    """The head dimension FlashAttention-2's kernel runs at: rounded up to a multiple of 32, 256
    above 192 (``csrc/flash_attn/flash_api.cpp``: ``head_size_rounded = head_size <= 192 ?
    round_multiple(head_size, 32) : 256``; the kernels are instantiated for those dimensions
    only). A head of 80 runs the 96 kernel, one of 112 the 128 kernel, doing the padded work."""
    if head_dim > 192:
        return 256
    return -(-head_dim // 32) * 32


def _per_head_dim(tables: dict[int, tuple[float, ...]], head_dim: int, seq_len: float) -> float:
    low, high = _per_length(tables[64], seq_len), _per_length(tables[128], seq_len)
    weight = min(max((head_dim - 64) / 64, 0.0), 1.0)
    return low + weight * (high - low)


@lru_cache(maxsize=1024)
def attention_share_of_peak(architecture: str, kernel: str, seq_len: float, head_dim: int) -> float:
    """Share of the GPU's bf16 peak at which the attention core's FLOPs (``flops.py``'s count)
    run forward and backward: the measured TFLOP/s of ``kernel`` (``flash2``, ``cudnn`` or
    ``eager``) at ``seq_len`` (interpolated in ``log`` length, held at the ends) and head
    dimension (interpolated between 64 and 128, held outside), over the measured GPU's peak.
    FlashAttention-2 runs a head at :func:`flash2_kernel_head_dim` and does the padded work, so
    its rate there counts ``head_dim / padded`` of it as FLOPs. ``cudnn`` is measured on Hopper
    only; elsewhere it takes ``flash2``'s figure."""
    gpu = MEASURED_GPU_OF_ARCHITECTURE.get(architecture, "h100")
    if kernel == "cudnn" and gpu == "h100":
        forward = _per_head_dim(CUDNN_FORWARD_TFLOPS, head_dim, seq_len)
        flash_forward = _per_head_dim(FLASH2_FORWARD_TFLOPS_H100, head_dim, seq_len)
        flash_both = _per_head_dim(
            {d: ATTENTION_TFLOPS[("flash2", gpu, d)] for d in (64, 128)}, head_dim, seq_len
        )
        tflops = forward * flash_both / flash_forward
    else:
        name = "eager" if kernel == "eager" else "flash2"
        kernel_dim = head_dim if name == "eager" else flash2_kernel_head_dim(head_dim)
        tflops = (
            _per_head_dim(
                {d: ATTENTION_TFLOPS[(name, gpu, d)] for d in (64, 128)}, kernel_dim, seq_len
            )
            * head_dim
            / kernel_dim
        )
    return tflops * 1e12 / PEAK_OF_MEASURED_GPU[gpu] * OUR_ATTENTION_FLOPS_PER_BENCHMARK_FLOP
