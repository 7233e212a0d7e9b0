"""Pricing results: a quote, buy versus rent, and the offers listing. Money is a number in
units of the ``currency`` its result names (the JSON contract's "currency units")."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpuplan.results.common import OMITTED_WHEN_NONE, Warning


@dataclass(frozen=True)
class BillingBlock:
    """``count`` packages of ``plan``, each ``term_seconds`` long."""

    plan: str
    count: int
    term_seconds: int


@dataclass(frozen=True)
class BillingMix:
    """The cheapest mix of packages and a metered plan for the duration, per instance."""

    description: str
    per_instance: float
    blocks: list[BillingBlock]
    metered_plan: str | None
    metered_seconds: float
    unused_seconds: float


@dataclass(frozen=True)
class PlanAlone:
    """What the compute would cost under one billing plan alone."""

    plan: str
    mode: str
    total_compute: float


@dataclass(frozen=True)
class Quote:
    """An itemized quote (``gpuplan quote --json``): ``instances`` of an offer for
    ``duration_seconds``; totals, each line (compute, fees, discounts) with its source and the
    offer's price list, in units of ``currency``; ``exchange_rate`` (``from``, ``to``, ``rate``,
    its ``source`` and date) when ``currency`` is not the offer's."""

    offer: str
    provider: str
    gpu: str
    gpus_per_instance: int
    instances: int
    gpu_count: int
    duration_seconds: float
    currency: str
    total: float
    compute: float
    fees: float
    hidden_fee_share: float
    per_gpu_hour: float | None
    per_job: float
    tokens: float | None
    per_million_tokens: float | None
    billing_mix: BillingMix
    lines: list[dict[str, Any]]
    plans_alone: list[PlanAlone]
    spot: dict[str, Any] | None
    price_list: list[dict[str, Any]]
    tax_included: bool | None
    warnings: list[Warning]
    exchange_rate: dict[str, Any] | None = field(default=None, metadata=OMITTED_WHEN_NONE)


@dataclass(frozen=True)
class TcoBuy:
    """Buying: capital expense by part, financing, yearly operations and refresh, residual
    value and the total over the horizon."""

    capex: dict[str, float]
    capex_total: float
    financing_interest: float
    depreciation_per_year: float | None
    operations_per_year: dict[str, float]
    refresh_per_year: float
    residual_value: float
    total: float


@dataclass(frozen=True)
class TcoRent:
    """Renting: the monthly price (or the offer quoted) and the total over the horizon."""

    monthly: float | None
    offer: str | None
    instances: int
    total: float


@dataclass(frozen=True)
class TcoYear:
    """Cumulative buy and rent cost at the end of ``year``."""

    year: int
    buy_cumulative: float
    rent_cumulative: float
    buy_minus_rent: float


@dataclass(frozen=True)
class Tco:
    """Buy versus rent over ``years`` (``gpuplan tco --json``) in units of ``currency``;
    ``rent_saving`` is buy minus rent (negative when buying is cheaper), break-even as a month
    and as the utilization at which buying pays off, and each input's source."""

    currency: str
    years: int
    utilization: float
    buy: TcoBuy
    rent: TcoRent
    table: list[TcoYear]
    buy_total: float
    rent_total: float
    rent_saving: float
    rent_saving_share: float | None
    break_even_month: int | None
    break_even_utilization: float | None
    buy_per_delivered_gpu_hour: float | None
    rent_per_delivered_gpu_hour: float | None
    sources: dict[str, str]


@dataclass(frozen=True)
class OfferEntry:
    """One rental offer (``gpuplan offers --json``): the machine, its plans (each with its
    price per GPU-hour in USD and its ratio to the catalog median for the GPU), fees,
    discounts and sources."""

    id: str
    provider: str
    product_line: str
    region: str
    instance_type: str
    gpu: str
    gpus: int
    vcpus: int | None
    ram_gb: float | None
    local_disk_gb: float | None
    topology: dict[str, Any] | None
    min_instances: int
    max_instances: int | None
    currency: str
    tax_included: bool | None
    claims: str
    origin: str
    source: str
    observed: str
    plans: list[dict[str, Any]]
    fees: list[dict[str, Any]]
    discounts: list[dict[str, Any]]
    notes: str
    catalog_median_per_gpu_hour: float | None
    catalog_median_currency: str
    on_demand_per_gpu_hour_usd: float | None
