"""Maximum achievable matmul FLOP/s per dtype, by mamf-finder's method.

Method (stas00/ml-engineering ``compute/accelerator/benchmarks/mamf-finder.py``): inputs
``A = randn(m, k)`` and ``B = randn(n, k).t()`` (normally distributed data; predictable data
such as zeros draws less power and over-reports), output preallocated (``torch.mm(A, B,
out=C)``); before each timed iteration, outside the timed region, a 256 MiB buffer is zeroed
to flush the L2 cache and ``C`` is overwritten with fresh random values; a warm-up of the
accelerator (30 s by default) before the first shape; then warm-up and timed iterations per
shape, each bracketed by CUDA events. FLOPs = 2 m n k. FP8 uses ``torch._scaled_mm`` with
unit scales (``float8_e4m3fn``). The best shape by mean time is the MAMF.

Search (:func:`search_shapes`): instead of mamf-finder's brute force over up to 80^3 shapes,
the published best shapes first, then a coarse grid, within a time budget per dtype
(:data:`FULL_SEARCH_SECONDS`, :data:`QUICK_SEARCH_SECONDS`).
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

from gpuplan.bench.gemm_shapes import GemmShape
from gpuplan.bench.timing import DeviceTimer

CACHE_FLUSH_BYTES = 256 * 2**20
"""mamf-finder: "the largest LLC among current accelerators"."""

MATMUL_DTYPES = ("fp32", "tf32", "bf16", "fp16", "fp8")


COARSE_GRID = (4096, 8192, 2048, 16384, 1024)
"""Sizes of the coarse grid, each of m, n and k: the end points and powers of two of
mamf-finder's 1024-step exhaustive search ``--m_range 0 16384 1024`` (all three dimensions),
mid-sized first."""

FULL_SEARCH_SECONDS = 90.0
"""Search budget per dtype in the full mode, after the warm-up. mamf-finder's README times its
1024-step exhaustive search at 15-30 min and the 256-step one that produced the published
table at "many hours/days"; 90 s is a tenth of the shorter of those, the least of them."""
QUICK_SEARCH_SECONDS = 15.0
"""Search budget per dtype in quick mode: the published shapes and the largest grid points."""


def search_shapes(device: str, quick: bool, gpu_id: str | None, dtype: str) -> list[GemmShape]:
    """The shapes to try, most promising first: the search stops at its time budget.

    On a GPU: the shape that reached this GPU's published MAMF in ``dtype`` (ml-engineering's
    table, :func:`gpuplan.bench.references.published_best_shapes`, ``mamf_best_shape`` in
    gpus.toml), 8192^3 (gpu-fryer's fixed shape, comparable across machines), the best shapes
    of every other GPU in the table, then the coarse grid (:data:`COARSE_GRID`; quick mode: only its 4096-16384 points). On the CPU,
    small cubes.
    """
    from gpuplan.bench.references import best_shapes

    if device == "cpu":
        sizes = (128, 256) if quick else (128, 256, 512)
        return [GemmShape("sweep", size, size, size) for size in sizes]
    own, others = best_shapes(gpu_id, dtype)
    candidates = [GemmShape("published", s.m, s.n, s.k) for s in own]
    candidates.append(GemmShape("gpu-fryer", 8192, 8192, 8192))
    candidates += [GemmShape("published", s.m, s.n, s.k) for s in others]
    grid = [size for size in COARSE_GRID if not quick or size >= 4096]
    candidates += [GemmShape("grid", m, n, k) for m in grid for n in grid for k in grid]
    unique: dict[tuple[int, int, int], GemmShape] = {}
    for shape in candidates:
        unique.setdefault((shape.m, shape.n, shape.k), shape)
    return list(unique.values())


def search_budget_seconds(device: str, quick: bool) -> float | None:
    """Seconds a dtype's search may take on ``device``; None (every shape) on the CPU."""
    if device == "cpu":
        return None
    return QUICK_SEARCH_SECONDS if quick else FULL_SEARCH_SECONDS


def supported_dtypes(torch: ModuleType, device: str) -> dict[str, str]:
    """Each dtype mapped to "" when it runs here, else the reason it is skipped."""
    reasons = dict.fromkeys(MATMUL_DTYPES, "")
    if device == "cpu":
        reasons["tf32"] = "TF32 is a GPU tensor-core format"
        reasons["fp8"] = "FP8 matmul needs a GPU with FP8 tensor cores"
        return reasons
    major, minor = torch.cuda.get_device_capability()
    if (major, minor) < (8, 0):
        reasons["tf32"] = "TF32 needs compute capability 8.0 (Ampere) or newer"
        reasons["bf16"] = "BF16 tensor cores need compute capability 8.0 (Ampere) or newer"
    if (major, minor) < (8, 9) or not hasattr(torch, "float8_e4m3fn"):
        reasons["fp8"] = "FP8 needs compute capability 8.9 (Ada/Hopper) or newer and torch >= 2.5"
    return reasons


class MatmulOperands:
    """Inputs, output and the operation for one shape and dtype, built the mamf-finder way."""

    def __init__(self, torch: ModuleType, device: str, dtype: str, shape: GemmShape) -> None:
        self.torch = torch
        m, n, k = shape.m, shape.n, shape.k
        if dtype == "fp8":
            fp8 = torch.float8_e4m3fn
            self.a = torch.randn(m, k, device=device).to(fp8)
            self.b = torch.randn(n, k, device=device).to(fp8).t()
            self.scale = torch.tensor(1.0, device=device)
            self.c = torch.empty(m, n, device=device, dtype=torch.bfloat16)
        else:
            element = {
                "fp32": torch.float32,
                "tf32": torch.float32,
                "bf16": torch.bfloat16,
                "fp16": torch.float16,
            }[dtype]
            self.a = torch.randn(m, k, device=device, dtype=element)
            self.b = torch.randn(n, k, device=device, dtype=element).t()
            self.c = torch.empty(m, n, device=device, dtype=element)
        self.c_random = torch.randn_like(self.c, dtype=torch.float32).to(self.c.dtype)
        self.fp8 = dtype == "fp8"

    def run(self) -> None:
        if self.fp8:
            self.torch._scaled_mm(
                self.a, self.b, scale_a=self.scale, scale_b=self.scale, out_dtype=self.c.dtype
            )
        else:
            self.torch.mm(self.a, self.b, out=self.c)

    def refresh_output(self) -> None:
        self.c.copy_(self.c_random)


class TensorFloat32Setting:
    """Context manager that allows or forbids TF32 in matmuls, restoring the old setting."""

    def __init__(self, torch: ModuleType, allow: bool) -> None:
        self.torch = torch
        self.allow = allow
        self.previous = False

    def __enter__(self) -> None:
        self.previous = self.torch.backends.cuda.matmul.allow_tf32
        self.torch.backends.cuda.matmul.allow_tf32 = self.allow

    def __exit__(self, *_: object) -> None:
        self.torch.backends.cuda.matmul.allow_tf32 = self.previous


def measure_shape(
    torch: ModuleType,
    device: str,
    dtype: str,
    shape: GemmShape,
    warmup_iterations: int,
    iterations: int,
    flush: Callable[[], Any] | None = None,
) -> dict[str, Any]:
    """FLOP/s of one shape: mean, median and max (from the fastest iteration)."""
    timer = DeviceTimer(torch, device)
    with TensorFloat32Setting(torch, dtype == "tf32"):
        operands = MatmulOperands(torch, device, dtype, shape)
        for _ in range(warmup_iterations):
            operands.run()
        timer.synchronize()

        def before_each() -> None:
            if flush is not None:
                flush()
            operands.refresh_output()

        durations = timer.time_iterations(operands.run, iterations, before_each)
    mean = statistics.fmean(durations)
    return {
        **shape.to_dict(),
        "mean_flops_per_second": shape.flops / mean,
        "median_flops_per_second": shape.flops / statistics.median(durations),
        "max_flops_per_second": shape.flops / min(durations),
        "iterations": iterations,
    }


def cache_flusher(torch: ModuleType, device: str) -> Callable[[], Any] | None:
    """A function that evicts the L2 cache by writing 256 MiB; None on the CPU."""
    if device != "cuda":
        return None
    buffer = torch.empty(CACHE_FLUSH_BYTES // 4, dtype=torch.int32, device=device)
    return buffer.zero_


def warm_up(torch: ModuleType, device: str, dtype: str, shape: GemmShape, seconds: float) -> None:
    """Keep the accelerator busy for ``seconds`` before measuring (mamf-finder: a cold
    accelerator scores higher on its first shape than after a dozen others)."""
    if seconds <= 0:
        return
    timer = DeviceTimer(torch, device)
    with TensorFloat32Setting(torch, dtype == "tf32"):
        operands = MatmulOperands(torch, device, dtype, shape)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for _ in range(10):
                operands.run()
            timer.synchronize()


def measure_dtype(
    torch: ModuleType,
    device: str,
    dtype: str,
    shapes: Sequence[GemmShape],
    warmup_iterations: int,
    iterations: int,
    warmup_seconds: float = 0.0,
    budget_seconds: float | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> dict[str, Any]:
    """The shapes of a search in one dtype, in order, until ``budget_seconds`` (counted after
    the warm-up) is spent, and the best outcomes over them; at least one shape is measured."""
    flush = cache_flusher(torch, device)
    warm_up(torch, device, dtype, shapes[0], warmup_seconds)
    deadline = None if budget_seconds is None else clock() + budget_seconds
    results: list[dict[str, Any]] = []
    for shape in shapes:
        if results and deadline is not None and clock() >= deadline:
            break
        results.append(
            measure_shape(torch, device, dtype, shape, warmup_iterations, iterations, flush)
        )
    means = [result["mean_flops_per_second"] for result in results]
    best = max(results, key=lambda result: result["mean_flops_per_second"])
    return {
        "dtype": dtype,
        "best_mean_flops_per_second": best["mean_flops_per_second"],
        "best_median_flops_per_second": max(r["median_flops_per_second"] for r in results),
        "best_max_flops_per_second": max(r["max_flops_per_second"] for r in results),
        "best_shape": f"{best['m']}x{best['n']}x{best['k']}",
        "best_shape_origin": best["name"],
        "shapes_measured": len(results),
        "shapes_planned": len(shapes),
        "arithmetic_mean_flops_per_second": statistics.fmean(means),
        "geometric_mean_flops_per_second": math.exp(statistics.fmean(map(math.log, means))),
        "shapes": results,
    }
