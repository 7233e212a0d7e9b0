"""What a plan search is asked: the scenario, the limits and how to rank."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from decimal import Decimal

import numpy as np
import numpy.typing as npt

from gpuplan.errors import InputError
from gpuplan.estimate.efficiency import MachineMeasurements
from gpuplan.estimate.memory import DEFAULT_SAFETY_MARGIN
from gpuplan.scenario import Scenario
from gpuplan.units import Money

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

OBJECTIVES = ("cost", "time", "pareto")
DEFAULT_MAX_GPUS = 1024
DEFAULT_HEADROOM = DEFAULT_SAFETY_MARGIN
"""Memory the search keeps free on every GPU: the memory model's own safety margin."""


class PlanError(InputError):
    """A plan request that cannot be searched (the message names the option)."""


class LayoutLimitError(PlanError):
    """A search larger than the request's ``max_layouts``."""


@dataclass(frozen=True)
class PlanRequest:
    """What to search and how to rank. ``budget`` and ``deadline_seconds`` are hard limits."""

    scenario: Scenario
    objective: str = "cost"
    budget: Money | None = None
    deadline_seconds: float | None = None
    max_gpus: int = DEFAULT_MAX_GPUS
    gpus: tuple[str, ...] = ()
    exclude_gpus: tuple[str, ...] = ()
    providers: tuple[str, ...] = ()
    billing: tuple[str, ...] = ()
    headroom: float = DEFAULT_HEADROOM
    currency: str = ""
    limit: int = 20
    offers_file: str | tuple[str, ...] | None = None
    """A user's offers file, or several merged in order (``pricing.offers.OfferBook``)."""
    fx: tuple[str, ...] = ()
    """Exchange-rate overrides, ``CUR=RATE`` or ``A/B=RATE`` (``pricing.currency``)."""
    fx_file: str | None = None
    """A rates file in ``currency.toml``'s form."""
    discount_factors: dict[str, Decimal] = field(default_factory=dict)
    measured: MachineMeasurements | None = None
    allow_unlisted_network: bool = False
    today: dt.date | None = None
    max_layouts: int | None = None
    """Refuse a search that would evaluate more layouts than this (a server's per-request cap)."""

    def __post_init__(self) -> None:
        if self.objective not in OBJECTIVES:
            raise PlanError.of(
                "error.not_one_of",
                field="objective",
                value=repr(self.objective),
                accepted=", ".join(OBJECTIVES),
            )
        if self.max_gpus < 1:
            raise PlanError.of("error.at_least_one", field="max_gpus", value=self.max_gpus)
        if not 0 <= self.headroom < 1:
            raise PlanError.of("error.headroom", value=self.headroom)
        if self.budget is not None and self.budget.amount <= 0:
            raise PlanError.of("error.positive", field="budget", value=str(self.budget))
        if self.deadline_seconds is not None and self.deadline_seconds <= 0:
            raise PlanError.of("error.deadline", value=self.deadline_seconds)
        if self.limit < 1:
            raise PlanError.of("error.at_least_one", field="limit", value=self.limit)
        if self.max_layouts is not None and self.max_layouts < 1:
            raise PlanError.of("error.at_least_one", field="max_layouts", value=self.max_layouts)
        strategy, given = self.scenario.strategy, self.scenario.strategy_given
        if "etp" in given and strategy.etp and not ("tp" in given and strategy.etp == strategy.tp):
            raise PlanError.of("error.plan_etp", etp=strategy.etp)
        if "shard_group" in given and strategy.shard_group:
            raise PlanError.of("error.plan_shard_group", value=strategy.shard_group)
        if strategy.schedule != "1f1b":
            raise PlanError.of("error.plan_schedule", value=strategy.schedule)
