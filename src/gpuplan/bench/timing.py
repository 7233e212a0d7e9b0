"""Timing on the device and the statistics every benchmark reports.

On a GPU each iteration is bracketed by CUDA events and the stream is synchronised once at
the end (mamf-finder, all_reduce_bench); work done between iterations (cache flush, fresh
inputs) stays outside the timed region. On the CPU ``time.perf_counter`` does the same job.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any


class DeviceTimer:
    """Times iterations of a callable on ``device`` ("cuda" or "cpu")."""

    def __init__(self, torch: ModuleType, device: str) -> None:
        self.torch = torch
        self.device = device

    def synchronize(self) -> None:
        if self.device == "cuda":
            self.torch.cuda.synchronize()

    def time_iterations(
        self,
        operation: Callable[[], Any],
        iterations: int,
        before_each: Callable[[], Any] | None = None,
    ) -> list[float]:
        """Seconds taken by each of ``iterations`` calls of ``operation``."""
        if self.device == "cuda":
            return self._time_with_events(operation, iterations, before_each)
        durations = []
        for _ in range(iterations):
            if before_each is not None:
                before_each()
            start = time.perf_counter()
            operation()
            durations.append(time.perf_counter() - start)
        return durations

    def _time_with_events(
        self,
        operation: Callable[[], Any],
        iterations: int,
        before_each: Callable[[], Any] | None,
    ) -> list[float]:
        cuda = self.torch.cuda
        starts = [cuda.Event(enable_timing=True) for _ in range(iterations)]
        ends = [cuda.Event(enable_timing=True) for _ in range(iterations)]
        for start, end in zip(starts, ends, strict=True):
            if before_each is not None:
                before_each()
            start.record()
            operation()
            end.record()
        cuda.synchronize()
        return [start.elapsed_time(end) / 1000 for start, end in zip(starts, ends, strict=True)]


def summarize(samples: Sequence[float]) -> dict[str, float]:
    """min, median, mean, p95, max and coefficient of variation of a list of samples."""
    ordered = sorted(samples)
    mean = statistics.fmean(ordered)
    deviation = statistics.pstdev(ordered) if len(ordered) > 1 else 0.0
    p95 = ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]
    return {
        "count": float(len(ordered)),
        "min": ordered[0],
        "median": statistics.median(ordered),
        "mean": mean,
        "p95": p95,
        "max": ordered[-1],
        "coefficient_of_variation": deviation / mean if mean else 0.0,
    }


def trimmed_mean(samples: Sequence[float]) -> float:
    """Mean after dropping the fastest and the slowest sample (MLPerf Training's rule)."""
    ordered = sorted(samples)
    kept = ordered[1:-1] if len(ordered) > 2 else ordered
    return statistics.fmean(kept)


def relative_spread(samples: Sequence[float]) -> float:
    """(max - min) / median: how far apart the best and worst of a set are."""
    middle = statistics.median(samples)
    return (max(samples) - min(samples)) / middle if middle else 0.0


def percentile_spread(samples: Sequence[float]) -> float:
    """(p95 - p5) / median, the percentiles interpolated between the order statistics
    (``statistics.quantiles``, method "inclusive"): a spread that settles as samples accrue,
    where (max - min) / median keeps growing with their number. 0 for fewer than two samples."""
    if len(samples) < 2:
        return 0.0
    cuts = statistics.quantiles(samples, n=20, method="inclusive")
    middle = statistics.median(samples)
    return (cuts[-1] - cuts[0]) / middle if middle else 0.0
