"""Benchmark results: a run (``gpuplan bench --json``, ``gpuplan bench show --json``), a run
held against an offer (``gpuplan bench compare``) and the multi-node launch commands."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class BenchFigure:
    """One measured figure in its ``unit`` against the spec and a measured reference, the
        ratios, and the verdict (PASS, WARN, FAIL, SKIPPED, ERROR) with its threshold and reason; a
    run stored without a part (an older version's) reads it as empty."""

    key: str
    label: str
    category: str
    unit: str
    measured: float | None
    verdict: str
    spec: float | None = None
    spec_source: str = ""
    spec_ratio: float | None = None
    reference: float | None = None
    reference_source: str = ""
    reference_ratio: float | None = None
    threshold: str = ""
    reason: str = ""
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class BenchRun:
    """A run: the machine and software it ran on (``provenance``), the catalog GPU it
    matched, each figure, the worst verdict, and the raw measurements; ``id`` once stored."""

    method_version: int
    provenance: dict[str, Any]
    gpu_id: str | None
    figures: list[BenchFigure]
    worst_verdict: str
    parts: dict[str, Any] = field(default_factory=dict)
    thresholds: dict[str, Any] = field(default_factory=dict)
    measurements: dict[str, Any] = field(default_factory=dict)
    id: int | None = None


@dataclass(frozen=True)
class BenchCheck:
    """One identity check of a run against an offer: what the offer ``advertised`` (the GPU's
    catalog id, the GPU count), what the run ``measured`` (``None``: the run does not say),
    and the verdict (PASS, FAIL, SKIPPED)."""

    item: str
    advertised: str | int
    measured: str | int | None
    verdict: str


@dataclass(frozen=True)
class BenchCompare:
    """``gpuplan bench compare RUN OFFER --json``: the stored run, the offer and its catalog
    GPU, the identity checks, and the run's figures judged against what the offer advertised."""

    run_id: int | None
    offer: str
    gpu: str
    checks: list[BenchCheck]
    figures: list[BenchFigure]


@dataclass(frozen=True)
class BenchLaunch:
    """``gpuplan bench --collectives --json``: the command lines that run the multi-node
    collectives benchmark, with torchrun on every node and with Slurm from the login node."""

    torchrun: str
    slurm: str
