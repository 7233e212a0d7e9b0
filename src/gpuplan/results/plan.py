"""A plan search: each feasible plan (a row), the Pareto front and the job searched."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpuplan.results.common import OMITTED_WHEN_NONE, IntervalResult, StrategyResult, Warning


@dataclass(frozen=True)
class PlanMemory:
    """Per-GPU peak against capacity in bytes, the share left (``headroom``), host RAM per
    node that offload keeps."""

    peak_bytes: float
    capacity_bytes: float
    headroom: float
    host_bytes_per_node: float


@dataclass(frozen=True)
class PlanThroughput:
    """Step seconds, tokens per second (with the interval), MFU and the shares of the step
    that exposed communication and the pipeline bubble take."""

    step_seconds: float
    tokens_per_second: float
    tokens_per_second_low: float
    tokens_per_second_high: float
    tokens_per_second_per_gpu: float
    mfu: float
    communication_share: float
    bubble_share: float


@dataclass(frozen=True)
class PlanDuration:
    """Wall-clock seconds and days (``expected_*`` with spot interruptions), the interval,
    start-up and training seconds, and goodput."""

    seconds: float
    days: float
    seconds_low: float
    seconds_high: float
    expected_seconds: float
    expected_days: float
    days_low: float
    days_high: float
    startup_seconds: float
    training_seconds: float
    goodput: float


@dataclass(frozen=True)
class PlanCost:
    """What the plan costs at its offer, in units of ``currency``: the total (with its
    interval), per million trained tokens, per GPU-hour; the billing mix and the price's
    age and source (left out when the search had no date to age prices by)."""

    total: float
    currency: str
    per_million_tokens: float | None
    per_gpu_hour: float | None
    offer: str
    provider: str
    region: str
    instance_type: str
    instances: int
    billing_mix: str
    hidden_fee_share: float
    spot: dict[str, Any] | None
    warnings: list[Warning]
    total_low: float
    total_high: float
    price_age_days: int | None = field(default=None, metadata=OMITTED_WHEN_NONE)
    price_observed: str | None = field(default=None, metadata=OMITTED_WHEN_NONE)
    price_date_quality: str | None = field(default=None, metadata=OMITTED_WHEN_NONE)
    price_source: str | None = field(default=None, metadata=OMITTED_WHEN_NONE)


@dataclass(frozen=True)
class PlanRow:
    """One feasible plan: ``count`` GPUs of ``gpu`` on ``nodes`` instances of the machine an
    offer sells, its layout, memory, speed, duration and cost (``None`` when unpriced)."""

    gpu: str
    count: int
    nodes: int
    machine: dict[str, Any]
    strategy: StrategyResult
    memory: PlanMemory
    throughput: PlanThroughput
    duration: PlanDuration
    gpu_hours: float
    cost: PlanCost | None
    interval: IntervalResult | None
    warnings: list[Warning]


@dataclass(frozen=True)
class ParetoPoint:
    """A plan on the front of days against cost (cost in the search's ``currency``)."""

    gpu: str
    count: int
    offer: str | None
    days: float
    cost: float | None


@dataclass(frozen=True)
class PlanJob:
    """The job searched and the request's limits (budget as given, deadline in seconds)."""

    model: str
    total_params: int
    method: str
    precision: str
    tokens: int | float
    seq_len: int
    global_batch: int
    global_batch_tokens: int
    batch_rule: str
    budget: str | None
    deadline_seconds: float | None
    max_gpus: int
    objective: str
    allow_unlisted_network: bool


@dataclass(frozen=True)
class ReasonResult:
    """One reason why the top plan won or why no plan qualifies: message ``reason.<code>``
    and its values, numbers and ids that a face renders in its language
    (``gpuplan.search.reasons``)."""

    code: str
    values: dict[str, Any]


@dataclass(frozen=True)
class PlanSearch:
    """The search result (``gpuplan plan --json``): plans best first, the Pareto front,
    how many layouts and machines were evaluated and in how many seconds, what was skipped,
    why the first plan won (or why none qualifies) in English and as reasons, what applies to every plan, and the file
    ``--export`` wrote."""

    job: PlanJob
    plans: list[PlanRow]
    pareto: list[ParetoPoint]
    evaluated: int
    machines: int
    seconds: float
    currency: str
    objective: str
    skipped_gpus: list[str]
    unoffered_gpus: list[str]
    offer_notes: list[str]
    explanation: str
    reasons: list[ReasonResult]
    warnings: list[Warning]
    export: str | None = field(default=None, metadata=OMITTED_WHEN_NONE)
