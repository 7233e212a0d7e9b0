"""Search the plans for a job, as a typed result."""

from __future__ import annotations

from typing import Any

from gpuplan.results import build
from gpuplan.results.plan import PlanSearch
from gpuplan.services.estimate import ScenarioInput


def plan(
    scenario: ScenarioInput,
    objective: str = "cost",
    budget: str | None = None,
    deadline: str | float | None = None,
    **options: Any,
) -> PlanSearch:
    """:func:`gpuplan.api.plan_search`: every feasible plan best first, the Pareto front and
    why the first one won; ``options`` are :class:`gpuplan.search.PlanRequest` fields."""
    from gpuplan.api import plan_search

    result: PlanSearch = build(
        "plan", plan_search(scenario, objective, budget, deadline, **options)
    )
    return result
