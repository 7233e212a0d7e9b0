"""Estimate one layout on one cluster, or its memory alone, as typed results."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gpuplan.results import build
from gpuplan.results.estimate import Estimate, MemoryEstimate
from gpuplan.scenario import Scenario

ScenarioInput = Mapping[str, Any] | str | Path | Scenario


def estimate(scenario: ScenarioInput, profile: int | None = None) -> Estimate:
    """:func:`gpuplan.api.estimate` of ``scenario`` (``profile``: a stored bench run whose
    measurements calibrate its GPU)."""
    from gpuplan.api import estimate as compute

    result: Estimate = build("estimate", compute(scenario, profile=profile))
    return result


def memory(scenario: ScenarioInput) -> MemoryEstimate:
    """:func:`gpuplan.api.memory_estimate` of ``scenario``: memory without the speed model."""
    from gpuplan.api import memory_estimate

    result: MemoryEstimate = build("memory-estimate", memory_estimate(scenario))
    return result
