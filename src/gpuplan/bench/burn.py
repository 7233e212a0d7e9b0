"""Sustained load: matmul throughput over minutes, its fluctuation, and what the GPU reports.

Method after huggingface/gpu-fryer and wilicc/gpu-burn: every GPU of the node runs 8192^3
BF16 matmuls at once (each GPU in its own thread; kernel launches release the GIL) for the
whole duration; the throughput of each interval is recorded; results are checked against the
first result of the same inputs (gpu-burn's silent-error check); NVML is sampled once a
second for clocks, power, temperature and throttle reasons, and uncorrectable ECC counts are
read before and after.

Reported: the run-to-run fluctuation of throughput ((max - min) / median over the intervals
after the first, which is warm-up) - the seed's "compute fluctuation <= 2 %" made testable -,
its coefficient of variation, the drift from the first to the last interval, the share of
telemetry samples with harmful throttling, and the spread between the GPUs of the node
(1 - slowest / fastest median, gpu-fryer's "relative to the best GPU").
"""

from __future__ import annotations

import statistics
import threading
import time
from types import ModuleType
from typing import Any

from gpuplan.bench.environment import (
    HARMLESS_THROTTLE_REASONS,
    telemetry_sample,
    throttle_names,
    uncorrectable_ecc_errors,
)
from gpuplan.bench.timing import relative_spread, summarize

GPU_MATRIX_SIZE = 8192
CPU_MATRIX_SIZE = 256


def _burn_one_device(
    torch: ModuleType,
    device: str,
    seconds: float,
    interval_seconds: float,
    matrix_size: int,
    results: dict[str, Any],
) -> None:
    dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
    generator = torch.Generator(device=device).manual_seed(0)
    a = torch.randn(matrix_size, matrix_size, device=device, dtype=dtype, generator=generator)
    b = torch.randn(matrix_size, matrix_size, device=device, dtype=dtype, generator=generator)
    expected = torch.mm(a, b)
    output = torch.empty_like(expected)
    flops = 2 * matrix_size**3
    synchronize = torch.cuda.synchronize if device.startswith("cuda") else (lambda *_: None)
    samples: list[float] = []
    mismatches = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline or not samples:
        start = time.perf_counter()
        count = 0
        while time.perf_counter() - start < interval_seconds:
            torch.mm(a, b, out=output)
            count += 1
            if count % 8 == 0:
                synchronize(device)
        synchronize(device)
        samples.append(flops * count / (time.perf_counter() - start))
        if not torch.allclose(output.float(), expected.float(), rtol=1e-2, atol=1e-2):
            mismatches += 1
    results[device] = {"interval_flops_per_second": samples, "result_mismatches": mismatches}


class TelemetrySampler(threading.Thread):
    """Samples NVML readings of some GPUs once a second until stopped."""

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
                self.samples[index].append(telemetry_sample(self.nvml, index))
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
    summary: dict[str, Any] = {"samples": len(samples), "throttle_reasons_seen": seen}
    for key in ("sm_clock_hz", "memory_clock_hz", "power_watts", "temperature_celsius"):
        readings = values(key)
        summary[key] = (
            {"min": min(readings), "median": statistics.median(readings), "max": max(readings)}
            if readings
            else None
        )
    summary["harmful_throttle_fraction"] = len(harmful) / len(reasons) if reasons else None
    return summary


def analyse_device(samples: list[float]) -> dict[str, Any]:
    """Fluctuation, variation and drift of one device's interval throughputs."""
    steady = samples[1:] if len(samples) > 2 else samples
    return {
        "median_flops_per_second": statistics.median(steady),
        "fluctuation": relative_spread(steady),
        "coefficient_of_variation": summarize(steady)["coefficient_of_variation"],
        "drift": steady[-1] / steady[0] - 1 if steady[0] else 0.0,
    }


def run_burn(
    torch: ModuleType,
    device: str,
    seconds: float,
    interval_seconds: float,
    nvml: ModuleType | None = None,
) -> dict[str, Any]:
    """Burn every GPU (or the CPU) for ``seconds`` and analyse throughput and telemetry."""
    if device == "cuda":
        devices = [f"cuda:{index}" for index in range(torch.cuda.device_count())]
        matrix_size = GPU_MATRIX_SIZE
    else:
        devices = ["cpu"]
        matrix_size = CPU_MATRIX_SIZE
    indices = list(range(len(devices))) if nvml is not None else []
    ecc_before = {index: uncorrectable_ecc_errors(nvml, index) for index in indices} if nvml else {}
    sampler = TelemetrySampler(nvml, indices) if nvml is not None else None
    if sampler is not None:
        sampler.start()
    results: dict[str, Any] = {}
    threads = [
        threading.Thread(
            target=_burn_one_device,
            args=(torch, name, seconds, interval_seconds, matrix_size, results),
        )
        for name in devices
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if sampler is not None:
        sampler.stop()
    per_device = []
    for position, name in enumerate(devices):
        entry = {
            "device": name,
            **results[name],
            **analyse_device(results[name]["interval_flops_per_second"]),
        }
        if nvml is not None and sampler is not None:
            after = uncorrectable_ecc_errors(nvml, position)
            before = ecc_before.get(position)
            entry["telemetry"] = summarize_telemetry(sampler.samples[position])
            entry["new_uncorrectable_ecc_errors"] = (
                after - before if after is not None and before is not None else None
            )
        per_device.append(entry)
    medians = [entry["median_flops_per_second"] for entry in per_device]
    return {
        "seconds": seconds,
        "interval_seconds": interval_seconds,
        "matrix_size": matrix_size,
        "dtype": "bf16" if device == "cuda" else "fp32",
        "devices": per_device,
        "gpu_spread": 1 - min(medians) / max(medians) if len(medians) > 1 else 0.0,
    }
