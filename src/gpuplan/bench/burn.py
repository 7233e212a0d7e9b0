"""Sustained load: matmul throughput over minutes, its fluctuation, and what the GPU reports.

Method after huggingface/gpu-fryer and wilicc/gpu-burn: every GPU of the node runs 8192^3
BF16 matmuls at once (each GPU in its own thread; kernel launches release the GIL) for the
whole duration; the throughput of each interval is recorded (timed by CUDA events on the
device's stream, so host jitter does not enter it); results are checked against the
first result of the same inputs (gpu-burn's silent-error check); NVML is sampled once a
second for clocks, power, temperature and throttle reasons, and uncorrectable ECC counts are
read before and after.

The intervals that end within the warm-up (:func:`warmup_seconds`) are recorded but not
judged: clocks, power and temperature settle after the load starts, and gpu-fryer likewise
drops its first five one-second ticks (huggingface/gpu-fryer, src/main.rs, ``tick > 4``).

Judged over the steady intervals: the fluctuation ``(p95 - p5) / median``, a spread that,
unlike ``(max - min) / median``, does not grow with the number of intervals - the seed's
"compute fluctuation <= 2 %" made testable. Reported with it: the coefficient of variation,
the drift ``median(last window) / median(first window) - 1`` over windows of a quarter of the
steady intervals, the share of telemetry samples with harmful throttling, and the spread
between the GPUs of the node (1 - slowest / fastest median, gpu-fryer's "relative to the best
GPU").

Each device burns in its own thread, which records its error instead of raising: a CUDA error
on one GPU leaves the others' figures intact, and a device that does not finish within
:data:`HANG_GRACE_SECONDS` after the deadline is recorded as hung.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable, Sequence
from functools import partial
from types import ModuleType
from typing import Any

from gpuplan.bench import environment
from gpuplan.bench.environment import (
    HARMLESS_THROTTLE_REASONS,
    telemetry_sample,
    throttle_names,
    uncorrectable_ecc_errors,
)
from gpuplan.bench.timing import percentile_spread, summarize

GPU_MATRIX_SIZE = 8192
CPU_MATRIX_SIZE = 256

WARMUP_FRACTION = 0.2
"""Share of the run discarded as warm-up (a design choice: a 60 s quick burn keeps 48 s)."""
MIN_WARMUP_SECONDS = 5.0
"""gpu-fryer's warm-up: it skips its first five one-second ticks (src/main.rs, ``tick > 4``)."""
MAX_WARMUP_SHARE = 0.5
"""The warm-up never takes more than half of the run, so that short runs keep steady intervals."""
DRIFT_WINDOW_FRACTION = 0.25
"""Each drift window holds a quarter of the steady intervals (at least one)."""
HANG_GRACE_SECONDS = 120.0
"""How long after the deadline a device thread may still take before it is recorded as hung."""


def warmup_seconds(seconds: float) -> float:
    """``min(max(5 s, 0.2 x seconds), 0.5 x seconds)``: 12 s of a 60 s burn, 60 s of 300 s."""
    return min(max(MIN_WARMUP_SECONDS, WARMUP_FRACTION * seconds), MAX_WARMUP_SHARE * seconds)


def _error_text(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}".splitlines()[0]


def _burn_one_device(
    torch: ModuleType,
    device: str,
    seconds: float,
    interval_seconds: float,
    matrix_size: int,
    nvml: ModuleType | None = None,
) -> dict[str, Any]:
    """Matmuls on ``device`` for ``seconds``, with ``device`` current in this thread (so that
    its CUDA events go to its stream) and the thread bound to the GPU's local CPUs
    (:func:`gpuplan.bench.environment.bound_to_gpu_cpus`): FLOP/s and end time (s since
    start) per interval, and ``numa_cpus``/``numa_binding``."""
    if not device.startswith("cuda"):
        return _burn_loop(torch, device, seconds, interval_seconds, matrix_size)
    index = int(device.partition(":")[2] or 0)
    with environment.bound_to_gpu_cpus(nvml, torch, index) as binding, torch.cuda.device(device):
        return {**_burn_loop(torch, device, seconds, interval_seconds, matrix_size), **binding}


def _burn_loop(
    torch: ModuleType,
    device: str,
    seconds: float,
    interval_seconds: float,
    matrix_size: int,
) -> dict[str, Any]:
    """Each interval's FLOP/s is ``2 n^3 x matmuls / elapsed``; on a GPU ``elapsed`` is read
    from CUDA events around the interval (device time, free of host jitter), on the CPU from
    ``time.perf_counter``."""
    on_gpu = device.startswith("cuda")
    dtype = torch.bfloat16 if on_gpu else torch.float32
    generator = torch.Generator(device=device).manual_seed(0)
    a = torch.randn(matrix_size, matrix_size, device=device, dtype=dtype, generator=generator)
    b = torch.randn(matrix_size, matrix_size, device=device, dtype=dtype, generator=generator)
    expected = torch.mm(a, b)
    output = torch.empty_like(expected)
    flops = 2 * matrix_size**3
    synchronize = torch.cuda.synchronize if on_gpu else (lambda *_: None)
    samples: list[float] = []
    ends: list[float] = []
    mismatches = 0
    begin = time.monotonic()
    deadline = begin + seconds
    while time.monotonic() < deadline or not samples:
        start = time.perf_counter()
        if on_gpu:
            start_event = torch.cuda.Event(enable_timing=True)
            end_event = torch.cuda.Event(enable_timing=True)
            start_event.record()
        count = 0
        while time.perf_counter() - start < interval_seconds:
            torch.mm(a, b, out=output)
            count += 1
            if count % 8 == 0:
                synchronize(device)
        if on_gpu:
            end_event.record()
        synchronize(device)
        elapsed = (
            start_event.elapsed_time(end_event) / 1000 if on_gpu else time.perf_counter() - start
        )
        samples.append(flops * count / elapsed)
        ends.append(time.monotonic() - begin)
        if not torch.allclose(output.float(), expected.float(), rtol=1e-2, atol=1e-2):
            mismatches += 1
    return {
        "interval_flops_per_second": samples,
        "interval_end_seconds": ends,
        "result_mismatches": mismatches,
    }


def _isolated(work: Callable[[], dict[str, Any]], results: dict[str, Any], key: str) -> None:
    """Store ``work()`` under ``key``, or the error it raised, so that no thread dies silently."""
    try:
        results[key] = work()
    except Exception as error:  # one GPU's failure must not lose the others
        results[key] = {"error": _error_text(error)}


def burn_devices(
    torch: ModuleType,
    devices: Sequence[str],
    seconds: float,
    interval_seconds: float,
    matrix_size: int,
    hang_grace_seconds: float = HANG_GRACE_SECONDS,
    nvml: ModuleType | None = None,
) -> dict[str, dict[str, Any]]:
    """Burn every device at once, each in its own thread; a failed or hung device gets an
    ``error`` entry instead of its intervals."""
    results: dict[str, Any] = {}
    threads = {
        name: threading.Thread(
            target=_isolated,
            args=(
                partial(
                    _burn_one_device, torch, name, seconds, interval_seconds, matrix_size, nvml
                ),
                results,
                name,
            ),
            daemon=True,
            name=f"burn-{name}",
        )
        for name in devices
    }
    for thread in threads.values():
        thread.start()
    limit = time.monotonic() + seconds + hang_grace_seconds
    for name, thread in threads.items():
        thread.join(max(0.0, limit - time.monotonic()))
        if thread.is_alive():
            results[name] = {
                "error": f"hung: no result within {seconds + hang_grace_seconds:.0f} s"
            }
    return {name: results[name] for name in devices}


class TelemetrySampler(threading.Thread):
    """Samples NVML readings of some GPUs once a second until stopped; a failing reading is
    recorded as an error sample and the sampling goes on."""

    def __init__(self, nvml: ModuleType, indices: list[int], period_seconds: float = 1.0) -> None:
        super().__init__(daemon=True)
        self.nvml = nvml
        self.indices = indices
        self.period_seconds = period_seconds
        self.samples: dict[int, list[dict[str, Any]]] = {index: [] for index in indices}
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.is_set():
            for index in self.indices:
                try:
                    sample = telemetry_sample(self.nvml, index)
                except Exception as error:  # a lost GPU must not end sampling
                    sample = {"error": _error_text(error)}
                self.samples[index].append(sample)
            self.stopped.wait(self.period_seconds)

    def stop(self) -> None:
        self.stopped.set()
        self.join()


def summarize_telemetry(samples: list[dict[str, Any]]) -> dict[str, Any]:
    """Clock, power and temperature ranges and the share of samples with harmful throttling."""

    def values(key: str) -> list[float]:
        return [float(sample[key]) for sample in samples if sample.get(key) is not None]

    reasons = [
        sample["throttle_reasons"]
        for sample in samples
        if sample.get("throttle_reasons") is not None
    ]
    harmful = [bits for bits in reasons if bits & ~HARMLESS_THROTTLE_REASONS]
    seen = sorted({name for bits in reasons for name in throttle_names(bits)})
    errors = sorted({sample["error"] for sample in samples if "error" in sample})
    summary: dict[str, Any] = {
        "samples": len(samples),
        "throttle_reasons_seen": seen,
        "errors": errors,
    }
    for key in ("sm_clock_hz", "memory_clock_hz", "power_watts", "temperature_celsius"):
        readings = values(key)
        summary[key] = (
            {"min": min(readings), "median": statistics.median(readings), "max": max(readings)}
            if readings
            else None
        )
    summary["harmful_throttle_fraction"] = len(harmful) / len(reasons) if reasons else None
    return summary


def steady_intervals(
    samples: Sequence[float], end_seconds: Sequence[float], warmup: float
) -> list[float]:
    """The intervals that end after the warm-up; the last one if none does."""
    steady = [value for value, end in zip(samples, end_seconds, strict=True) if end > warmup]
    return steady or list(samples[-1:])


def drift(steady: Sequence[float]) -> float:
    """``median(last window) / median(first window) - 1``, windows of a quarter of the
    intervals: negative when the throughput sags during the run."""
    window = max(1, int(len(steady) * DRIFT_WINDOW_FRACTION))
    first = statistics.median(steady[:window])
    return statistics.median(steady[-window:]) / first - 1 if first else 0.0


def analyse_device(
    samples: Sequence[float], end_seconds: Sequence[float], warmup: float
) -> dict[str, Any]:
    """Fluctuation, variation and drift of one device's steady interval throughputs."""
    steady = steady_intervals(samples, end_seconds, warmup)
    return {
        "warmup_seconds": warmup,
        "warmup_intervals": len(samples) - len(steady),
        "steady_intervals": len(steady),
        "median_flops_per_second": statistics.median(steady),
        "fluctuation": percentile_spread(steady),
        "coefficient_of_variation": summarize(steady)["coefficient_of_variation"],
        "drift": drift(steady),
    }


def failed_device_entry(device: str, error: str) -> dict[str, Any]:
    """The entry of a device whose burn raised or hung: its error and no throughput."""
    return {
        "device": device,
        "error": error,
        "interval_flops_per_second": [],
        "interval_end_seconds": [],
        "result_mismatches": None,
        "median_flops_per_second": None,
        "fluctuation": None,
        "coefficient_of_variation": None,
        "drift": None,
    }


def gpu_spread(medians: Sequence[float]) -> float:
    """``1 - slowest / fastest`` median throughput; 0 for fewer than two devices."""
    return 1 - min(medians) / max(medians) if len(medians) > 1 and max(medians) else 0.0


def nvml_indices(nvml: ModuleType, torch: ModuleType, count: int) -> list[int | None]:
    """The NVML index of each torch device, through its UUID
    (``environment.nvml_index_for_torch_device``); the same index where that mapping is not
    available; None where it finds no match (no telemetry rather than another GPU's)."""
    mapping = getattr(environment, "nvml_index_for_torch_device", None)
    if mapping is None:
        return list(range(count))
    indices: list[int | None] = []
    for position in range(count):
        try:
            index = mapping(nvml, torch, position)
        except Exception:  # no telemetry for this device, the burn goes on
            index = None
        indices.append(int(index) if index is not None else None)
    return indices


def _ecc_count(nvml: ModuleType, index: int) -> int | None:
    try:
        return uncorrectable_ecc_errors(nvml, index)
    except Exception:  # a lost GPU has no counter to read
        return None


def run_burn(
    torch: ModuleType,
    device: str,
    seconds: float,
    interval_seconds: float,
    nvml: ModuleType | None = None,
    matrix_size: int | None = None,
    warmup: float | None = None,
) -> dict[str, Any]:
    """Burn every GPU (or the CPU) for ``seconds`` and analyse throughput and telemetry.

    ``warmup`` defaults to :func:`warmup_seconds`; it is part of ``seconds``, not added to it.
    """
    on_gpu = device == "cuda"
    count = torch.cuda.device_count() if on_gpu else 0
    devices = [f"cuda:{index}" for index in range(count)] if on_gpu else ["cpu"]
    size = matrix_size or (GPU_MATRIX_SIZE if on_gpu else CPU_MATRIX_SIZE)
    settle = warmup_seconds(seconds) if warmup is None else warmup
    telemetry_nvml = nvml if on_gpu else None
    mapped = nvml_indices(telemetry_nvml, torch, len(devices)) if telemetry_nvml else []
    watched = sorted({index for index in mapped if index is not None})
    ecc_before = (
        {index: _ecc_count(telemetry_nvml, index) for index in watched} if telemetry_nvml else {}
    )
    sampler = TelemetrySampler(telemetry_nvml, watched) if telemetry_nvml is not None else None
    if sampler is not None:
        sampler.start()
    try:
        results = burn_devices(torch, devices, seconds, interval_seconds, size, nvml=telemetry_nvml)
    finally:
        if sampler is not None:
            sampler.stop()
    per_device = []
    for position, name in enumerate(devices):
        result = results[name]
        if "error" in result:
            entry = failed_device_entry(name, result["error"])
        else:
            entry = {
                "device": name,
                **result,
                **analyse_device(
                    result["interval_flops_per_second"], result["interval_end_seconds"], settle
                ),
            }
        index = mapped[position] if position < len(mapped) else None
        if telemetry_nvml is not None and sampler is not None and index is not None:
            after = _ecc_count(telemetry_nvml, index)
            before = ecc_before.get(index)
            entry["nvml_index"] = index
            entry["telemetry"] = summarize_telemetry(sampler.samples[index])
            entry["new_uncorrectable_ecc_errors"] = (
                after - before if after is not None and before is not None else None
            )
        per_device.append(entry)
    medians = [entry["median_flops_per_second"] for entry in per_device if "error" not in entry]
    return {
        "seconds": seconds,
        "warmup_seconds": settle,
        "interval_seconds": interval_seconds,
        "matrix_size": size,
        "dtype": "bf16" if on_gpu else "fp32",
        "devices": per_device,
        "failed_devices": {
            entry["device"]: entry["error"] for entry in per_device if "error" in entry
        },
        "gpu_spread": gpu_spread(medians),
    }
