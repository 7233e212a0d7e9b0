"""A benchmark run (``gpuplan bench --json``, ``gpuplan bench show --json``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class BenchFigure:
    """One measured figure in its ``unit`` against the spec and a measured reference, the
    ratios, and the verdict (PASS, WARN, FAIL, SKIPPED, ERROR) with its threshold and reason."""

    key: str
    label: str
    category: str
    unit: str
    measured: float | None
    spec: float | None
    spec_source: str
    spec_ratio: float | None
    reference: float | None
    reference_source: str
    reference_ratio: float | None
    verdict: str
    threshold: str
    reason: str
    details: dict[str, Any]


@dataclass(frozen=True)
class BenchRun:
    """A run: the machine and software it ran on (``provenance``), the catalog GPU it
    matched, each figure, the worst verdict, and the raw measurements; ``id`` once stored."""

    method_version: int | str
    provenance: dict[str, Any]
    gpu_id: str | None
    figures: list[BenchFigure]
    worst_verdict: str
    parts: dict[str, Any] = field(default_factory=dict)
    thresholds: dict[str, Any] = field(default_factory=dict)
    measurements: dict[str, Any] = field(default_factory=dict)
    id: int | None = None
