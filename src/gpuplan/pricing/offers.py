"""Offers: what a provider sells, under which price plans, and which fees come with it.

One :class:`Offer` is one purchasable configuration (provider, product line, region, GPU and
count, host, network), never a component: a GPU-only row that must be added to a host row is not
an offer (shared/references/pricing-and-catalogs.md §8). Each offer carries its
:class:`PricePlan` s (pay-as-you-go, packages, reserved terms, spot), the provider's
:class:`FeeItem` s and :class:`Discount` s. Every price carries its :class:`Provenance`.

Plan modes and their defaults (a plan may override ``granularity``, ``minimum``, ``term``):

==================  =========  ===============================  =============================
mode                kind       billing                           term
==================  =========  ===============================  =============================
``per_second``      metered    rounded up to 1 s                 -
``per_minute``      metered    rounded up to 60 s                -
``hourly``          metered    rounded up to 3600 s              -
``capacity_block``  metered    rounded up to 3600 s, prepaid     -
``spot``            spot       rounded up to 3600 s unless given -
``daily``           package    one block covers 1 day            86,400 s
``weekly``          package    one block covers 7 days           604,800 s
``monthly``         package    one block covers 30 days          2,592,000 s (unless ``term``)
``yearly``          package    one block covers 365 days         31,536,000 s
``reserved``        package    commitment, paid whole            ``term`` required (1y, 3y)
==================  =========  ===============================  =============================

A price is per GPU (``per = "gpu"``) or per instance (``per = "instance"``), for one
``price_period``: an hour for metered, spot and reserved plans unless stated, the term for packages.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal, InvalidOperation
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from gpuplan.errors import InputError
from gpuplan.hardware.topology import InstanceTopology, TopologyError, parse_topology
from gpuplan.limits import MONEY_RANGE, parse_toml, plain_number, read_text_file, shown
from gpuplan.pricing.provenance import Provenance
from gpuplan.units import (
    GB,
    SECONDS_PER_DAY,
    SECONDS_PER_HOUR,
    SECONDS_PER_MONTH,
    SECONDS_PER_WEEK,
    SECONDS_PER_YEAR,
    GiB,
    parse_duration,
)


class OfferError(InputError):
    """An offers file or entry that cannot be read; the message names the file and field."""


CURRENCIES = ("CNY", "USD", "EUR")

METERED_GRANULARITY = {"per_second": 1, "per_minute": 60, "hourly": 3600, "capacity_block": 3600}
PACKAGE_TERM = {
    "daily": int(SECONDS_PER_DAY),
    "weekly": int(SECONDS_PER_WEEK),
    "monthly": int(SECONDS_PER_MONTH),
    "yearly": int(SECONDS_PER_YEAR),
}
SPOT_DEFAULT_GRANULARITY = 3600
"""Spot plans without a stated granularity are billed by the hour: the coarsest common rule."""

PLAN_MODES = (*METERED_GRANULARITY, *PACKAGE_TERM, "reserved", "spot")
PRICE_UNITS = ("gpu", "instance")

FEE_CATEGORIES = (
    "egress",
    "ingress",
    "storage_running",
    "storage_stopped",
    "storage_iops",
    "public_ip",
    "network",
    "migration",
    "backup",
    "software_license",
    "support",
    "scaling",
    "early_termination",
    "minimum_balance",
    "tax",
    "other",
)
FEE_UNITS: dict[str, tuple[str, int, int]] = {
    # unit: (what is counted, bytes in one unit of size, seconds in one unit of time)
    "GB": ("bytes", GB, 1),
    "GiB": ("bytes", GiB, 1),
    "TB": ("bytes", 1000 * GB, 1),
    "GB-hour": ("byte-seconds", GB, int(SECONDS_PER_HOUR)),
    "GB-day": ("byte-seconds", GB, int(SECONDS_PER_DAY)),
    "GB-month": ("byte-seconds", GB, int(SECONDS_PER_MONTH)),
    "GiB-month": ("byte-seconds", GiB, int(SECONDS_PER_MONTH)),
    "TB-month": ("byte-seconds", 1000 * GB, int(SECONDS_PER_MONTH)),
    "IP-hour": ("ip-seconds", 1, int(SECONDS_PER_HOUR)),
    "IP-month": ("ip-seconds", 1, int(SECONDS_PER_MONTH)),
    "hour": ("instance-seconds", 1, int(SECONDS_PER_HOUR)),
    "month": ("instance-seconds", 1, int(SECONDS_PER_MONTH)),
    "share": ("share", 1, 1),
    "one-time": ("once", 1, 1),
    "none": ("none", 1, 1),
}
"""Fee units. A month is 30 days (units.SECONDS_PER_MONTH), the length platforms bill by.
For storage (``byte-seconds``) the free allowance is a capacity in the unit's size (10 TB free
under a ``TB-month`` price means the first 10 TB of capacity cost nothing)."""

FEE_WHEN = ("running", "stopped", "always", "per_job", "informational")


LARGEST_FIGURE = Decimal(str(MONEY_RANGE[1]))
"""No price, share, allowance or tier bound of an offer is larger than any amount of money."""


def to_decimal(value: object, where: str) -> Decimal:
    """Read a price as an exact Decimal (TOML floats go through their shortest repr)."""
    if isinstance(value, bool):
        raise OfferError(f"{where}: expected a number, got {value!r}")
    try:
        number = Decimal(str(value).replace(",", "").replace("_", ""))
    except InvalidOperation:
        raise OfferError(f"{where}: expected a number, got {value!r}") from None
    if not number.is_finite() or abs(number) > LARGEST_FIGURE:
        raise OfferError(
            f"{where}: expected a finite number within ±{plain_number(float(LARGEST_FIGURE))}, "
            f"got {shown(value)}"
        )
    return number


def _seconds(value: object, where: str) -> int:
    try:
        seconds = parse_duration(value)  # type: ignore[arg-type]
    except InputError as error:
        raise OfferError(f"{where}: {error}") from None
    return round(seconds)


def _tables(fields: Mapping[str, Any], key: str, where: str) -> list[Mapping[str, Any]]:
    """``fields[key]`` as a list of tables (a TOML array of tables; absent: none)."""
    value = fields.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, Mapping) for item in value):
        raise OfferError(f"{where}.{key}: expected a list of tables, got {shown(value)}")
    return value


def _require(fields: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in fields or fields[key] in (None, ""):
        raise OfferError(f"{where}: missing {key!r}")
    return fields[key]


def _choice(value: object, allowed: Iterable[str], key: str, where: str) -> str:
    allowed = tuple(allowed)
    if value not in allowed:
        raise OfferError(f"{where}: {key} {value!r} is not one of {', '.join(allowed)}")
    return str(value)


@dataclass(frozen=True)
class PricePlan:
    """One way to pay for an offer: a metered rate, a package, a reserved term or spot."""

    name: str
    mode: str
    price: Decimal
    currency: str
    per: str
    price_period_seconds: int
    provenance: Provenance
    granularity_seconds: int = 1
    minimum_seconds: int = 0
    term_seconds: int | None = None
    upfront_share: Decimal | None = None
    notes: str = ""
    interruptions_per_hour: float | None = None
    """A spot plan's reclaim rate per instance-hour, where a source states one."""
    interruptions_source: str = ""

    @property
    def kind(self) -> str:
        """``metered``, ``package`` (packages and reserved terms) or ``spot``."""
        if self.mode in METERED_GRANULARITY:
            return "metered"
        if self.mode == "spot":
            return "spot"
        return "package"

    def instance_price(self, gpus: int) -> Decimal:
        """Price of one instance for one ``price_period``: ``price x gpus`` when per GPU."""
        return self.price * gpus if self.per == "gpu" else self.price

    def billed_seconds(self, seconds: float) -> int:
        """Seconds charged for one continuous run: ``max(minimum, ceil(s / granularity) x granularity)``.

        A run of zero seconds is not charged.
        """
        if seconds <= 0:
            return 0
        steps = math.ceil(round(seconds, 6) / self.granularity_seconds)
        return max(self.minimum_seconds, steps * self.granularity_seconds)

    def run_cost(self, seconds: float, gpus: int) -> Decimal:
        """Cost of one continuous run of one instance: ``instance price x billed / period``."""
        billed = self.billed_seconds(seconds)
        return self.instance_price(gpus) * billed / self.price_period_seconds

    def block_cost(self, gpus: int) -> Decimal:
        """Cost of one package block (one term) for one instance."""
        if self.term_seconds is None:
            raise OfferError(f"plan {self.name!r} is not a package")
        return self.instance_price(gpus) * self.term_seconds / self.price_period_seconds

    def per_gpu_hour(self, gpus: int) -> Decimal:
        """The plan's price per GPU-hour of covered time, for comparing plans and offers."""
        per_gpu = self.price if self.per == "gpu" else self.price / gpus
        return per_gpu * int(SECONDS_PER_HOUR) / self.price_period_seconds

    def scaled(self, factor: Decimal) -> PricePlan:
        """The same plan at ``price x factor`` (a negotiated discount factor)."""
        return replace(self, price=self.price * factor)

    def to_dict(self, gpus: int) -> dict[str, Any]:
        return {
            "name": self.name,
            "mode": self.mode,
            "kind": self.kind,
            "price": self.price,
            "currency": self.currency,
            "per": self.per,
            "price_period_seconds": self.price_period_seconds,
            "granularity_seconds": self.granularity_seconds if self.kind != "package" else None,
            "minimum_seconds": self.minimum_seconds,
            "term_seconds": self.term_seconds,
            "upfront_share": self.upfront_share,
            "interruptions_per_hour": self.interruptions_per_hour,
            "interruptions_source": self.interruptions_source,
            "per_gpu_hour": self.per_gpu_hour(gpus),
            "notes": self.notes,
            **self.provenance.to_dict(),
        }


@dataclass(frozen=True)
class FeeTier:
    """``price`` per unit for the quantity up to ``up_to`` units (``None``: no upper bound)."""

    up_to: Decimal | None
    price: Decimal


@dataclass(frozen=True)
class FeeItem:
    """A charge besides the GPU instance: egress, storage, public IP, support, tax, ...

    ``price`` is per ``unit``; ``tiers`` (when given) replace it with marginal prices by cumulative
    quantity; ``free_allowance`` units per instance are not charged. ``price`` is ``None`` when the
    source states a fee without a number (host-set marketplace fees): listed, never charged.
    """

    category: str
    item: str
    price: Decimal | None
    currency: str
    unit: str
    provenance: Provenance
    applies_when: str = "running"
    tiers: tuple[FeeTier, ...] = ()
    free_allowance: Decimal = Decimal(0)
    required: bool = False
    notes: str = ""

    @property
    def quantity_kind(self) -> str:
        return FEE_UNITS[self.unit][0]

    @property
    def is_note(self) -> bool:
        """A fee listed for information only (``informational``, unit ``none``), such as
        "prices exclude tax"."""
        return self.applies_when == "informational" or self.quantity_kind == "none"

    @property
    def is_charged(self) -> bool:
        """Whether the fee adds to a bill: priced, and not a note."""
        return not self.is_note and (self.price is not None or bool(self.tiers))

    @property
    def size_scale(self) -> int:
        """Bytes in one unit of size (1 for units that count no bytes)."""
        return FEE_UNITS[self.unit][1]

    @property
    def time_scale(self) -> int:
        """Seconds in one unit of time (1 for units that count no time)."""
        return FEE_UNITS[self.unit][2]

    def cost(self, quantity: Decimal, apply_allowance: bool = True) -> Decimal:
        """Cost of ``quantity`` fee units after the free allowance, through the tiers.

        Tiered: ``sum_i price_i x (min(q, up_to_i) - up_to_(i-1))`` over the tiers that ``q`` reaches.
        """
        if self.price is None and not self.tiers:
            return Decimal(0)
        allowance = self.free_allowance if apply_allowance else Decimal(0)
        chargeable = max(Decimal(0), quantity - allowance)
        if not self.tiers:
            assert self.price is not None
            return self.price * chargeable
        total = Decimal(0)
        lower = Decimal(0)
        for tier in self.tiers:
            upper = chargeable if tier.up_to is None else min(chargeable, tier.up_to)
            if upper > lower:
                total += tier.price * (upper - lower)
            if tier.up_to is None or chargeable <= tier.up_to:
                break
            lower = tier.up_to
        return total

    def to_dict(self) -> dict[str, Any]:
        return {
            "category": self.category,
            "item": self.item,
            "price": self.price,
            "currency": self.currency,
            "unit": self.unit,
            "tiers": [{"up_to": tier.up_to, "price": tier.price} for tier in self.tiers],
            "free_allowance": self.free_allowance,
            "applies_when": self.applies_when,
            "required": self.required,
            "notes": self.notes,
            **self.provenance.to_dict(),
        }


@dataclass(frozen=True)
class Discount:
    """A discount a provider states: long-term rental, education, commitment.

    ``share`` is the fraction taken off (0.05 = 5 %) for rentals of at least ``minimum_seconds``;
    when the source gives a range, ``share`` is its low end and ``share_high`` its high end, and
    quotes apply the low end. ``share = None`` records a discount the source does not quantify.
    """

    kind: str
    share: Decimal | None
    provenance: Provenance
    minimum_seconds: int = 0
    share_high: Decimal | None = None
    applies_to_modes: tuple[str, ...] = ()
    automatic: bool = True
    notes: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "share": self.share,
            "share_high": self.share_high,
            "minimum_seconds": self.minimum_seconds,
            "applies_to_modes": list(self.applies_to_modes),
            "automatic": self.automatic,
            "notes": self.notes,
            **self.provenance.to_dict(),
        }


@dataclass(frozen=True)
class Offer:
    """One purchasable configuration with its plans, fees and discounts."""

    id: str
    provider: str
    gpu: str
    gpus: int
    currency: str
    plans: tuple[PricePlan, ...]
    product_line: str = ""
    region: str = ""
    instance_type: str = ""
    vcpus: int | None = None
    ram_gb: float | None = None
    local_disk_gb: float | None = None
    topology: InstanceTopology | None = None
    min_instances: int = 1
    max_instances: int | None = None
    fees: tuple[FeeItem, ...] = ()
    discounts: tuple[Discount, ...] = ()
    tax_included: bool | None = None
    claims: str = "provider"
    notes: str = ""
    origin: str = ""

    def plan(self, name: str) -> PricePlan:
        for plan in self.plans:
            if plan.name == name:
                return plan
        names = ", ".join(plan.name for plan in self.plans)
        raise OfferError(f"offer {self.id!r} has no plan {name!r}; its plans: {names}")

    def plans_of_kind(self, kind: str) -> list[PricePlan]:
        return [plan for plan in self.plans if plan.kind == kind]

    @property
    def source(self) -> str:
        return self.plans[0].provenance.source if self.plans else ""

    @property
    def observed(self) -> str:
        return self.plans[0].provenance.observed if self.plans else ""

    def with_discount_factor(self, factor: Decimal) -> Offer:
        """The offer with every plan price multiplied by a negotiated ``factor`` (0.8 = 20 % off)."""
        from dataclasses import replace

        return replace(self, plans=tuple(plan.scaled(factor) for plan in self.plans))

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "provider": self.provider,
            "product_line": self.product_line,
            "region": self.region,
            "instance_type": self.instance_type,
            "gpu": self.gpu,
            "gpus": self.gpus,
            "vcpus": self.vcpus,
            "ram_gb": self.ram_gb,
            "local_disk_gb": self.local_disk_gb,
            "topology": self.topology.to_dict() if self.topology else None,
            "min_instances": self.min_instances,
            "max_instances": self.max_instances,
            "currency": self.currency,
            "tax_included": self.tax_included,
            "claims": self.claims,
            "source": self.source,
            "observed": self.observed,
            "plans": [plan.to_dict(self.gpus) for plan in self.plans],
            "fees": [fee.to_dict() for fee in self.fees],
            "discounts": [discount.to_dict() for discount in self.discounts],
            "notes": self.notes,
        }


# --- reading TOML --------------------------------------------------------------------------


def _parse_plan(fields: Mapping[str, Any], currency: str, where: str) -> PricePlan:
    mode = _choice(_require(fields, "mode", where), PLAN_MODES, "mode", where)
    price = to_decimal(_require(fields, "price", where), f"{where}.price")
    if fields.get("currency", currency) != currency:
        raise OfferError(f"{where}.currency: a plan is priced in its offer's currency ({currency})")
    per = _choice(_require(fields, "per", where), PRICE_UNITS, "per", where)
    provenance = Provenance.from_fields(dict(fields), where)
    term: int | None = None
    if mode in PACKAGE_TERM:
        term = _seconds(fields["term"], f"{where}.term") if "term" in fields else PACKAGE_TERM[mode]
    elif mode == "reserved":
        term = _seconds(_require(fields, "term", where), f"{where}.term")
    if term is not None and term <= 0:
        raise OfferError(f"{where}.term: must be positive")
    default_period = term if mode in PACKAGE_TERM else int(SECONDS_PER_HOUR)
    period = (
        _seconds(fields["price_period"], f"{where}.price_period")
        if "price_period" in fields
        else default_period
    )
    if period is None or period <= 0:
        raise OfferError(f"{where}.price_period: must be positive")
    if mode in METERED_GRANULARITY:
        default_granularity = METERED_GRANULARITY[mode]
    elif mode == "spot":
        default_granularity = SPOT_DEFAULT_GRANULARITY
    else:
        default_granularity = 1
    granularity = (
        _seconds(fields["granularity"], f"{where}.granularity")
        if "granularity" in fields
        else default_granularity
    )
    if granularity <= 0:
        raise OfferError(f"{where}.granularity: must be positive")
    minimum = _seconds(fields.get("minimum", 0), f"{where}.minimum")
    upfront = fields.get("upfront_share")
    upfront_share = to_decimal(upfront, f"{where}.upfront_share") if upfront is not None else None
    if upfront_share is not None and not Decimal(0) <= upfront_share <= Decimal(1):
        raise OfferError(f"{where}.upfront_share: must be between 0 and 1")
    rate, rate_source = _interruptions(fields, where)
    return PricePlan(
        name=str(fields.get("name") or mode),
        mode=mode,
        price=price,
        currency=currency,
        per=per,
        price_period_seconds=period,
        provenance=provenance,
        granularity_seconds=granularity,
        minimum_seconds=minimum,
        term_seconds=term,
        upfront_share=upfront_share,
        notes=str(fields.get("notes", "")),
        interruptions_per_hour=rate,
        interruptions_source=rate_source,
    )


def _interruptions(fields: Mapping[str, Any], where: str) -> tuple[float | None, str]:
    """A spot plan's ``interruptions_per_hour`` (a number >= 0, per instance-hour) and its
    ``interruptions_source`` (required with it)."""
    rate = fields.get("interruptions_per_hour")
    if rate is None:
        return None, ""
    if isinstance(rate, bool) or not isinstance(rate, int | float) or not 0 <= rate < math.inf:
        raise OfferError(
            f"{where}.interruptions_per_hour: expected a number >= 0 per instance-hour, "
            f"got {shown(rate)}"
        )
    source = str(fields.get("interruptions_source") or "").strip()
    if not source:
        raise OfferError(f"{where}: interruptions_per_hour needs an interruptions_source")
    return float(rate), source


def _parse_fee(fields: Mapping[str, Any], currency: str, where: str) -> FeeItem:
    category = _choice(_require(fields, "category", where), FEE_CATEGORIES, "category", where)
    unit = _choice(_require(fields, "unit", where), FEE_UNITS, "unit", where)
    raw_price = fields.get("price")
    price = to_decimal(raw_price, f"{where}.price") if raw_price is not None else None
    tiers = []
    previous = Decimal(0)
    for index, tier in enumerate(_tables(fields, "tiers", where)):
        tier_where = f"{where}.tiers[{index}]"
        up_to = to_decimal(tier["up_to"], f"{tier_where}.up_to") if "up_to" in tier else None
        if up_to is not None and up_to <= previous:
            raise OfferError(f"{tier_where}.up_to: tiers must increase")
        tiers.append(
            FeeTier(up_to=up_to, price=to_decimal(_require(tier, "price", tier_where), tier_where))
        )
        previous = up_to if up_to is not None else previous
    applies_when = _choice(fields.get("applies_when", "running"), FEE_WHEN, "applies_when", where)
    return FeeItem(
        category=category,
        item=str(_require(fields, "item", where)),
        price=price,
        currency=_choice(fields.get("currency", currency), CURRENCIES, "currency", where),
        unit=unit,
        provenance=Provenance.from_fields(dict(fields), where),
        applies_when=applies_when,
        tiers=tuple(tiers),
        free_allowance=to_decimal(fields.get("free_allowance", 0), f"{where}.free_allowance"),
        required=bool(fields.get("required", False)),
        notes=str(fields.get("notes", "")),
    )


def _parse_discount(fields: Mapping[str, Any], where: str) -> Discount:
    share = fields.get("share")
    share_high = fields.get("share_high")
    parsed_share = to_decimal(share, f"{where}.share") if share is not None else None
    for value, key in ((parsed_share, "share"),):
        if value is not None and not Decimal(0) <= value < Decimal(1):
            raise OfferError(f"{where}.{key}: must be between 0 and 1")
    return Discount(
        kind=str(_require(fields, "kind", where)),
        share=parsed_share,
        share_high=to_decimal(share_high, f"{where}.share_high")
        if share_high is not None
        else None,
        minimum_seconds=_seconds(fields.get("minimum", 0), f"{where}.minimum"),
        applies_to_modes=tuple(fields.get("applies_to_modes", ())),
        automatic=bool(fields.get("automatic", True)),
        provenance=Provenance.from_fields(dict(fields), where),
        notes=str(fields.get("notes", "")),
    )


def _optional_number(fields: Mapping[str, Any], key: str, where: str) -> float | None:
    value = fields.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise OfferError(f"{where}.{key}: expected a number, got {value!r}")
    return float(value)


def _parse_offer_topology(
    entry: Mapping[str, Any], gpus: int, where: str
) -> InstanceTopology | None:
    fields = entry.get("topology")
    if fields is None:
        return None
    try:
        topology = parse_topology(fields, gpus, f"{where}.topology")
    except TopologyError as error:
        raise OfferError(str(error)) from None
    Provenance.from_fields(dict(fields), f"{where}.topology")
    return topology


def _instance_limits(entry: Mapping[str, Any], where: str) -> tuple[int, int | None]:
    """``min_instances`` (default 1) and ``max_instances`` (default none) of a cluster offer."""
    limits: list[int | None] = []
    for key, default in (("min_instances", 1), ("max_instances", None)):
        value = entry.get(key, default)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 1
        ):
            raise OfferError(f"{where}.{key}: expected a positive whole number, got {value!r}")
        limits.append(value)
    low, high = limits
    assert low is not None
    if high is not None and high < low:
        raise OfferError(f"{where}.max_instances: {high} is below min_instances {low}")
    return low, high


def parse_provider(document: Mapping[str, Any], origin: str) -> list[Offer]:
    """Offers from one provider document (the parsed TOML of ``offers/<provider>.toml``)."""
    provider = str(_require(document, "provider", origin))
    currency = _choice(_require(document, "currency", origin), CURRENCIES, "currency", origin)
    fees = tuple(
        _parse_fee(fee, currency, f"{origin}: fees[{index}]")
        for index, fee in enumerate(_tables(document, "fees", origin))
    )
    discounts = tuple(
        _parse_discount(discount, f"{origin}: discounts[{index}]")
        for index, discount in enumerate(_tables(document, "discounts", origin))
    )
    tax_included = document.get("tax_included")
    offers = []
    for index, entry in enumerate(_tables(document, "offers", origin)):
        where = f"{origin}: offers[{index}]"
        offer_id = str(_require(entry, "id", where))
        where = f"{origin}: offer {offer_id!r}"
        gpus = _require(entry, "gpus", where)
        if isinstance(gpus, bool) or not isinstance(gpus, int) or gpus < 1:
            raise OfferError(f"{where}.gpus: expected a positive whole number, got {gpus!r}")
        plans = tuple(
            _parse_plan(plan, currency, f"{where}.plans[{plan_index}]")
            for plan_index, plan in enumerate(_tables(entry, "plans", where))
        )
        if not plans:
            raise OfferError(f"{where}: no plans")
        names = [plan.name for plan in plans]
        if len(set(names)) != len(names):
            raise OfferError(f"{where}: plan names must be unique, got {', '.join(names)}")
        offer_fees = tuple(
            _parse_fee(fee, currency, f"{where}.fees[{fee_index}]")
            for fee_index, fee in enumerate(_tables(entry, "fees", where))
        )
        vcpus = entry.get("vcpus")
        topology = _parse_offer_topology(entry, gpus, where)
        min_instances, max_instances = _instance_limits(entry, where)
        offers.append(
            Offer(
                id=offer_id,
                provider=provider,
                gpu=str(_require(entry, "gpu", where)),
                gpus=gpus,
                currency=currency,
                plans=plans,
                product_line=str(entry.get("product_line", "")),
                region=str(entry.get("region", "")),
                instance_type=str(entry.get("instance_type", "")),
                vcpus=int(vcpus) if vcpus is not None else None,
                ram_gb=_optional_number(entry, "ram_gb", where),
                local_disk_gb=_optional_number(entry, "local_disk_gb", where),
                topology=topology,
                min_instances=min_instances,
                max_instances=max_instances,
                fees=fees + offer_fees,
                discounts=discounts,
                tax_included=entry.get("tax_included", tax_included),
                claims=str(document.get("claims", "provider")),
                notes=str(entry.get("notes", "")),
                origin=origin,
            )
        )
    return offers


def read_offers_text(text: str, origin: str) -> list[Offer]:
    return parse_provider(parse_toml(text, origin, OfferError), origin)


def load_offers_file(path: str | Path) -> list[Offer]:
    """Offers from a user's TOML file (same schema as the built-in ``offers/<provider>.toml``).

    Each offer's ``gpu`` may be a catalog id or an alias ("H100 SXM"); it is stored as the id,
    and a GPU the catalog does not hold is an error, since no plan could be modelled on it."""
    from gpuplan.catalog import CatalogError, resolve_gpu_id

    offers = read_offers_text(read_text_file(path, "offers", OfferError), str(path))
    resolved = []
    for offer in offers:
        try:
            gpu_id = resolve_gpu_id(offer.gpu)
        except CatalogError as error:
            raise OfferError(f"{path}: offer {offer.id!r}.gpu: {error}") from None
        resolved.append(offer if gpu_id == offer.gpu else replace(offer, gpu=gpu_id))
    return resolved


@cache
def _catalog_offers() -> tuple[Offer, ...]:
    from gpuplan.catalog import read_catalog_toml

    folder = resources.files("gpuplan.catalog").joinpath("data", "offers")
    offers: list[Offer] = []
    for entry in sorted(folder.iterdir(), key=lambda item: item.name):
        if entry.name.endswith(".toml"):
            origin = f"offers/{entry.name}"
            offers.extend(parse_provider(read_catalog_toml("offers", entry.name), origin))
    return tuple(offers)


def catalog_offers() -> list[Offer]:
    """Every built-in offer (package data ``gpuplan/catalog/data/offers/*.toml``)."""
    return list(_catalog_offers())


@dataclass
class OfferBook:
    """The offers a command works with: the catalog plus a user's file, user entries winning."""

    offers: list[Offer] = field(default_factory=list)

    @classmethod
    def build(
        cls,
        offers_file: str | Path | None = None,
        include_catalog: bool = True,
        discount_factors: Mapping[str, Decimal] | None = None,
    ) -> OfferBook:
        """Catalog offers, then the user's (same id replaces), then negotiated factors per provider."""
        by_id: dict[str, Offer] = {}
        if include_catalog:
            by_id.update((offer.id, offer) for offer in catalog_offers())
        if offers_file is not None:
            by_id.update((offer.id, offer) for offer in load_offers_file(offers_file))
        offers = list(by_id.values())
        if discount_factors:
            known = {offer.provider.lower() for offer in offers}
            for provider in discount_factors:
                if provider.lower() not in known:
                    raise OfferError(f"discount factor for unknown provider {provider!r}")
            factors = {name.lower(): factor for name, factor in discount_factors.items()}
            offers = [
                offer.with_discount_factor(factors[offer.provider.lower()])
                if offer.provider.lower() in factors
                else offer
                for offer in offers
            ]
        return cls(offers)

    def get(self, offer_id: str) -> Offer:
        for offer in self.offers:
            if offer.id == offer_id:
                return offer
        import difflib

        close = difflib.get_close_matches(offer_id, [offer.id for offer in self.offers], n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise OfferError(f"unknown offer {offer_id!r}{hint} (`gpuplan offers` lists them)")


def parse_discount_factor(text: str) -> tuple[str, Decimal]:
    """Read ``PROVIDER=FACTOR`` (``AWS=0.8``: pay 80 % of list price)."""
    provider, sep, value = text.partition("=")
    if not sep or not provider.strip():
        raise OfferError(f"discount {text!r}: expected PROVIDER=FACTOR, e.g. AWS=0.8")
    factor = to_decimal(value.strip(), f"discount {text!r}")
    if not Decimal(0) < factor <= Decimal(1):
        raise OfferError(f"discount {text!r}: the factor must be in (0, 1], e.g. 0.8 for 20 % off")
    return provider.strip(), factor
