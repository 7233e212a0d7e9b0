"""A recomputed bill (``gpuplan audit USAGE.csv --offer ID --json``): money is a number in
units of the offer's ``currency``, times are seconds."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpuplan.results.common import OMITTED_WHEN_NONE


@dataclass(frozen=True)
class PlanTerms:
    """The billing plan the bill was recomputed under (``PricePlan.to_dict``): its price per
    ``per`` (``gpu`` or ``instance``) and ``price_period_seconds``, billing granularity and
    minimum, the package term and upfront share where it has them, the price per GPU-hour,
    and the price's source, date and date quality."""

    name: str
    mode: str
    kind: str
    price: float
    currency: str
    per: str
    price_period_seconds: int
    granularity_seconds: int | None
    minimum_seconds: int
    term_seconds: int | None
    upfront_share: float | None
    interruptions_per_hour: float | None
    interruptions_source: str
    per_gpu_hour: float
    notes: str
    source: str
    observed: str
    date_quality: str
    is_estimate: bool


@dataclass(frozen=True)
class Audit:
    """The bill of the usage file's ``records`` under ``offer``'s ``plan``: seconds running and
    stopped between runs, the compute, fees and total and the fees' share of it, each line
    (``kind`` ``compute``: one usage row with its billed seconds; ``fee``: one fee item with
    its quantity, unit price, source and date), the plan's terms, and with ``--invoiced`` the
    invoice's total and the invoice minus the recomputed total."""

    offer: str
    provider: str
    plan: str
    currency: str
    records: int
    running_seconds: float
    stopped_seconds: float
    compute: float
    fees: float
    total: float
    hidden_fee_share: float
    lines: list[dict[str, Any]]
    plan_terms: PlanTerms
    invoiced: float | None = field(default=None, metadata=OMITTED_WHEN_NONE)
    invoice_minus_recomputed: float | None = field(default=None, metadata=OMITTED_WHEN_NONE)
