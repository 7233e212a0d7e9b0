"""Which plans a result shows: limits, ranking, the Pareto front, and pricing no more
than that needs."""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import numpy as np
import numpy.typing as npt

from gpuplan.pricing.quote import cost_floor_per_second
from gpuplan.search.evaluate import Evaluated
from gpuplan.search.request import PlanRequest

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


@dataclass
class PlanCandidate:
    """The fastest layout of one machine at one size, on one offer, before it is priced:
    ``floor`` is a lower bound on its cost in the request's currency (``inf`` unpriced)."""

    evaluated: Evaluated
    index: int
    offer: Any
    duration: float
    floor: float


def cost_floor(
    offer: Any, count: int, evaluated: Evaluated, index: int, request: PlanRequest, rates: Any
) -> float:
    """``instances x seconds x`` the offer's cheapest rate (``quote.cost_floor_per_second``)."""
    if offer is None:
        return math.inf
    rate = cost_floor_per_second(offer)
    if rate is None:
        return 0.0
    per_second = float(rates.convert(rate, offer.currency, request.currency))
    return per_second * (count // offer.gpus) * float(evaluated.duration_seconds[index])


def run_seconds(row: dict[str, Any]) -> float:
    """How long a row's run is expected to take: its modelled duration, plus the time spot
    interruptions lose where the row is priced on spot."""
    return float(row["duration"].get("expected_seconds", row["duration"]["seconds"]))


def select_rows(
    candidates: Sequence[PlanCandidate],
    request: PlanRequest,
    build: Any,
) -> list[dict[str, Any]]:
    """The priced rows a result needs, best first, pricing as few candidates as it can.

    Quoting is exact but slow, so candidates are priced in the order of their cost floors and
    only while one could still matter: the ``limit`` cheapest (by cost), or the ``limit``
    fastest (by time), within the budget; and every candidate that could be on the Pareto
    front, that is, faster than every priced row that costs no more than its floor. A
    candidate never priced costs more than the rows shown and is slower than a cheaper one."""
    budget = float(request.budget.amount) if request.budget is not None else math.inf
    deadline = request.deadline_seconds or math.inf
    open_candidates = [
        candidate
        for candidate in candidates
        if candidate.duration <= deadline
        and (candidate.floor <= budget or math.isinf(candidate.floor))
    ]
    by_floor = sorted(open_candidates, key=lambda candidate: (candidate.floor, candidate.duration))
    kept: list[dict[str, Any]] = []
    cost_then_duration: list[tuple[float, float]] = []
    durations: list[float] = []
    priced: set[int] = set()

    def price(position: int, candidate: PlanCandidate) -> None:
        priced.add(position)
        row = build(candidate)
        if within_limits(row, request):
            cost = float(row["cost"]["total"]) if row["cost"] else math.inf
            kept.append(row)
            bisect.insort(cost_then_duration, (cost, run_seconds(row)))
            bisect.insort(durations, run_seconds(row))

    cheapest_needed = request.limit if request.objective != "time" else 1
    for position, candidate in enumerate(by_floor):
        enough = len(cost_then_duration) >= cheapest_needed
        if enough and candidate.floor > cost_then_duration[cheapest_needed - 1][0]:
            break
        price(position, candidate)
    for position, candidate in enumerate(by_floor):
        if position in priced:
            continue
        end = bisect.bisect_right(cost_then_duration, (candidate.floor, math.inf))
        fastest = min((duration for _, duration in cost_then_duration[:end]), default=math.inf)
        if candidate.duration < fastest:
            price(position, candidate)
    if request.objective == "time":
        order = sorted(range(len(by_floor)), key=lambda position: by_floor[position].duration)
        for position in order:
            if position in priced:
                continue
            candidate = by_floor[position]
            if bisect.bisect_left(durations, candidate.duration) >= request.limit:
                break
            price(position, candidate)
    kept.sort(key=lambda row: sort_key(row, request.objective))
    return kept


def within_limits(row: dict[str, Any], request: PlanRequest) -> bool:
    if request.deadline_seconds is not None and run_seconds(row) > request.deadline_seconds:
        return False
    if request.budget is not None:
        if row["cost"] is None:
            return False
        if Decimal(str(row["cost"]["total"])) > request.budget.amount:
            return False
    return not ((request.providers or request.billing) and row["cost"] is None)


def sort_key(row: dict[str, Any], objective: str) -> tuple[float, float, float]:
    cost = float(row["cost"]["total"]) if row["cost"] else math.inf
    if objective == "time":
        return (run_seconds(row), cost, row["gpu_hours"])
    return (cost, row["gpu_hours"], run_seconds(row))


def pareto_front(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Plans no other plan beats on both cost and days (priced plans only), cheapest first."""
    priced = sorted(
        (row for row in rows if row["cost"]),
        key=lambda row: (float(row["cost"]["total"]), run_seconds(row)),
    )
    front: list[dict[str, Any]] = []
    fastest = math.inf
    for row in priced:
        if run_seconds(row) < fastest:
            front.append(row)
            fastest = run_seconds(row)
    return front
