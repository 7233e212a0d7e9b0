"""Predictions next to published measurements: the error tables behind the accuracy tests.

Each validation row (``catalog/validation.py``) becomes a scenario; the prediction that matches the
source's metric is compared with the measurement. Memory: ``allocated`` and ``active`` rows are
compared with ``allocated_bytes`` (``torch.cuda.max_memory_allocated``), ``reserved`` rows with
``reserved_bytes``, ``nvidia-smi`` rows with ``peak_bytes``, and ``unknown`` rows with
``reserved_bytes``, the figure training logs usually print.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from statistics import median

from gpuplan.api import estimate
from gpuplan.catalog.validation import MemoryRow, memory_rows
from gpuplan.errors import InputError
from gpuplan.scenario import parse_scenario

PREDICTION_FOR_METRIC = {
    "allocated": "allocated_bytes",
    "active": "allocated_bytes",
    "reserved": "reserved_bytes",
    "nvidia-smi": "peak_bytes",
    "unknown": "reserved_bytes",
}


@dataclass(frozen=True)
class MemoryComparison:
    """One row: measured and predicted bytes (or the OOM verdict), with the relative error."""

    row: MemoryRow
    predicted_bytes: float | None
    fits: bool | None
    error: str = ""

    @property
    def relative_error(self) -> float | None:
        if self.predicted_bytes is None or not self.row.measured_bytes:
            return None
        return (self.predicted_bytes - self.row.measured_bytes) / self.row.measured_bytes


def compare_memory_row(row: MemoryRow) -> MemoryComparison:
    """Predict one row; a row the model cannot express is reported with the reason."""
    try:
        scenario = parse_scenario(row.scenario())
        if row.capacity_bytes and scenario.cluster is not None:
            gpu = replace(scenario.cluster.gpu, memory_bytes=row.capacity_bytes)
            scenario = replace(scenario, cluster=replace(scenario.cluster, gpu=gpu))
        result = estimate(scenario)
    except (InputError, ValueError) as failure:
        return MemoryComparison(row, None, None, str(failure))
    memory = result["memory"]
    return MemoryComparison(
        row, float(memory[PREDICTION_FOR_METRIC[row.metric]]), bool(memory["fits"])
    )


def memory_comparisons(use: str | None = "test") -> list[MemoryComparison]:
    return [compare_memory_row(row) for row in memory_rows(use)]


@dataclass(frozen=True)
class ErrorSummary:
    count: int
    median_absolute: float
    mean_absolute: float
    worst_absolute: float
    bias: float


def summarize(errors: list[float]) -> ErrorSummary:
    """Median, mean and worst absolute relative error, and the mean signed error (bias)."""
    if not errors:
        return ErrorSummary(0, float("nan"), float("nan"), float("nan"), float("nan"))
    absolute = [abs(error) for error in errors]
    return ErrorSummary(
        count=len(errors),
        median_absolute=median(absolute),
        mean_absolute=sum(absolute) / len(absolute),
        worst_absolute=max(absolute),
        bias=sum(errors) / len(errors),
    )
