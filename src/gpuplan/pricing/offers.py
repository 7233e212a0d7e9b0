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
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar, get_args

from gpuplan.errors import InputError
from gpuplan.hardware.topology import FABRIC_LINKS, InstanceTopology
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

if TYPE_CHECKING:
    from msgspec import UnsetType

    from gpuplan.catalog.schema.offers import (
        DiscountTable,
        FeeTable,
        OffersFile,
        OfferTable,
        PricePlanTable,
        TopologyTable,
    )
    from gpuplan.pricing.currency import ExchangeRates

T = TypeVar("T")


class OfferError(InputError):
    """An offers file or entry that cannot be read; the message names the file and field."""


Currency = Literal["CNY", "USD", "EUR"]
CURRENCIES: tuple[str, ...] = get_args(Currency)

METERED_GRANULARITY = {"per_second": 1, "per_minute": 60, "hourly": 3600, "capacity_block": 3600}
PACKAGE_TERM = {
    "daily": int(SECONDS_PER_DAY),
    "weekly": int(SECONDS_PER_WEEK),
    "monthly": int(SECONDS_PER_MONTH),
    "yearly": int(SECONDS_PER_YEAR),
}
SPOT_DEFAULT_GRANULARITY = 3600
"""Spot plans without a stated granularity are billed by the hour: the coarsest common rule."""

PlanMode = Literal[
    "per_second",
    "per_minute",
    "hourly",
    "capacity_block",
    "daily",
    "weekly",
    "monthly",
    "yearly",
    "reserved",
    "spot",
]
PLAN_MODES: tuple[str, ...] = get_args(PlanMode)
"""The modes of the table above: the metered ones (``METERED_GRANULARITY``), the packages
(``PACKAGE_TERM``), ``reserved`` and ``spot``."""
PriceUnit = Literal["gpu", "instance"]
PRICE_UNITS: tuple[str, ...] = get_args(PriceUnit)

FeeCategory = Literal[
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
]
FEE_CATEGORIES: tuple[str, ...] = get_args(FeeCategory)
FeeUnit = Literal[
    "GB",
    "GiB",
    "TB",
    "GB-hour",
    "GB-day",
    "GB-month",
    "GiB-month",
    "TB-month",
    "IP-hour",
    "IP-month",
    "hour",
    "month",
    "share",
    "one-time",
    "none",
]
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

FeeWhen = Literal["running", "stopped", "always", "per_job", "informational"]
FEE_WHEN: tuple[str, ...] = get_args(FeeWhen)


LARGEST_FIGURE = Decimal(str(MONEY_RANGE[1]))
"""No price, share, allowance or tier bound of an offer is larger than any amount of money."""


def to_decimal(value: object, where: str) -> Decimal:
    """Read a price as an exact Decimal (TOML floats go through their shortest repr)."""
    if isinstance(value, bool):
        raise OfferError.of("error.number", field=where, value=repr(value))
    try:
        number = Decimal(str(value).replace(",", "").replace("_", ""))
    except InvalidOperation:
        raise OfferError.of("error.number", field=where, value=repr(value)) from None
    if not number.is_finite() or abs(number) > LARGEST_FIGURE:
        raise OfferError.of(
            "error.finite_number",
            field=where,
            largest=plain_number(float(LARGEST_FIGURE)),
            value=shown(value),
        )
    return number


def _seconds(value: object, where: str) -> int:
    try:
        seconds = parse_duration(value)  # type: ignore[arg-type]
    except InputError as error:
        raise OfferError.of("error.in_field", field=where, error=error) from None
    return round(seconds)


def _given(value: T | UnsetType) -> T | None:
    """A decoded optional key: its value, or None when the file leaves it out."""
    from msgspec import UnsetType

    return None if isinstance(value, UnsetType) else value


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
    """A spot plan's stated interruption rate, where its source gives one."""
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
            raise OfferError.of("error.offer_not_package", plan=repr(self.name))
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
        raise OfferError.of(
            "error.offer_no_plan", offer=repr(self.id), plan=repr(name), plans=names
        )

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
            "origin": self.origin,
            "source": self.source,
            "observed": self.observed,
            "plans": [plan.to_dict(self.gpus) for plan in self.plans],
            "fees": [fee.to_dict() for fee in self.fees],
            "discounts": [discount.to_dict() for discount in self.discounts],
            "notes": self.notes,
        }


# --- reading TOML ---------------------------------------------------------------------------


def _provenance(table: PricePlanTable | FeeTable | DiscountTable, where: str) -> Provenance:
    return Provenance.read(
        table.source,
        table.observed,
        where,
        date_quality=_given(table.date_quality),
        is_estimate=table.is_estimate,
    )


def _parse_plan(table: PricePlanTable, currency: str, where: str) -> PricePlan:
    """A plan; the defaults of its mode (module docstring) fill what the table leaves out."""
    mode = table.mode
    if _given(table.currency) not in (None, currency):
        raise OfferError.of("error.offer_plan_currency", field=where, currency=currency)
    term_given = _given(table.term)
    term: int | None = None
    if mode in PACKAGE_TERM:
        term = PACKAGE_TERM[mode] if term_given is None else _seconds(term_given, f"{where}.term")
    elif mode == "reserved":
        if term_given is None:
            raise OfferError.of("error.offer_reserved_term", field=where)
        term = _seconds(term_given, f"{where}.term")
    elif term_given is not None:
        raise OfferError.of("error.offer_term", field=where)
    if term is not None and term <= 0:
        raise OfferError.of("error.must_be_positive", field=f"{where}.term")
    period_given = _given(table.price_period)
    default_period = term if mode in PACKAGE_TERM else int(SECONDS_PER_HOUR)
    period = (
        default_period if period_given is None else _seconds(period_given, f"{where}.price_period")
    )
    if period is None or period <= 0:
        raise OfferError.of("error.must_be_positive", field=f"{where}.price_period")
    granularity_given = _given(table.granularity)
    if mode in METERED_GRANULARITY:
        default_granularity = METERED_GRANULARITY[mode]
    elif mode == "spot":
        default_granularity = SPOT_DEFAULT_GRANULARITY
    else:
        default_granularity = 1
    granularity = (
        default_granularity
        if granularity_given is None
        else _seconds(granularity_given, f"{where}.granularity")
    )
    if granularity <= 0:
        raise OfferError.of("error.must_be_positive", field=f"{where}.granularity")
    interruptions = _given(table.interruptions_per_hour)
    if mode != "spot":
        for key in ("interruptions_per_hour", "interruptions_source"):
            if _given(getattr(table, key)) is not None:
                raise OfferError.of("error.offer_spot_only", field=f"{where}.{key}")
    if interruptions is not None and not _given(table.interruptions_source):
        raise OfferError.of("error.offer_interruptions_source", field=where)
    upfront = _given(table.upfront_share)
    return PricePlan(
        name=table.name or mode,
        mode=mode,
        price=to_decimal(table.price, f"{where}.price"),
        currency=currency,
        per=table.per,
        price_period_seconds=period,
        provenance=_provenance(table, where),
        granularity_seconds=granularity,
        minimum_seconds=_seconds(table.minimum, f"{where}.minimum"),
        term_seconds=term,
        upfront_share=None if upfront is None else to_decimal(upfront, f"{where}.upfront_share"),
        interruptions_per_hour=interruptions,
        interruptions_source=_given(table.interruptions_source) or "",
        notes=table.notes,
    )


def _parse_fee(table: FeeTable, currency: str, where: str) -> FeeItem:
    tiers = []
    previous = Decimal(0)
    for index, tier in enumerate(table.tiers):
        tier_where = f"{where}.tiers[{index}]"
        bound = _given(tier.up_to)
        up_to = None if bound is None else to_decimal(bound, f"{tier_where}.up_to")
        if up_to is not None and up_to <= previous:
            raise OfferError.of("error.offer_tiers_increase", field=tier_where)
        if up_to is None and index < len(table.tiers) - 1:
            raise OfferError.of("error.offer_last_tier", field=tier_where)
        tiers.append(FeeTier(up_to=up_to, price=to_decimal(tier.price, f"{tier_where}.price")))
        previous = up_to if up_to is not None else previous
    price = _given(table.price)
    return FeeItem(
        category=table.category,
        item=table.item,
        price=None if price is None else to_decimal(price, f"{where}.price"),
        currency=_given(table.currency) or currency,
        unit=table.unit,
        provenance=_provenance(table, where),
        applies_when=table.applies_when,
        tiers=tuple(tiers),
        free_allowance=to_decimal(table.free_allowance, f"{where}.free_allowance"),
        required=table.required,
        notes=table.notes,
    )


def _parse_discount(table: DiscountTable, where: str) -> Discount:
    share = _given(table.share)
    share_high = _given(table.share_high)
    return Discount(
        kind=table.kind,
        share=None if share is None else to_decimal(share, f"{where}.share"),
        share_high=None if share_high is None else to_decimal(share_high, f"{where}.share_high"),
        minimum_seconds=_seconds(table.minimum, f"{where}.minimum"),
        applies_to_modes=tuple(table.applies_to_modes),
        automatic=table.automatic,
        provenance=_provenance(table, where),
        notes=table.notes,
    )


def _parse_topology(table: TopologyTable, gpus: int, where: str) -> InstanceTopology:
    """The instance's topology (``network_gbps_per_gpu`` and ``public_gbps`` in Gb/s)."""
    if table.intra_node == "none" and gpus > 1:
        raise OfferError.of("error.offer_link", field=where, gpus=gpus)
    rate = _given(table.network_gbps_per_gpu)
    if table.network != "none" and rate is None:
        raise OfferError.of("error.offer_network_rate", field=where, network=repr(table.network))
    if table.network == "none" and rate is not None:
        raise OfferError.of("error.offer_network_none", field=where)
    Provenance.read(table.source, table.observed, where)
    public = _given(table.public_gbps)
    return InstanceTopology(
        gpus=gpus,
        intra_node=table.intra_node,
        peer_to_peer=table.p2p or table.intra_node in FABRIC_LINKS,
        network=table.network,
        network_bandwidth=(rate or 0.0) * 1e9 / 8,
        public_bandwidth=None if public is None else public * 1e9 / 8,
        nvlink_domain=table.nvlink_domain,
        source=table.source,
        observed=table.observed,
        notes=table.notes,
    )


def _parse_offer(
    entry: OfferTable,
    document: OffersFile,
    shared: tuple[FeeItem, ...],
    discounts: tuple[Discount, ...],
    origin: str,
) -> Offer:
    where = f"{origin}: offer {entry.id!r}"
    plans = tuple(
        _parse_plan(plan, document.currency, f"{where}: plans[{index}]")
        for index, plan in enumerate(entry.plans)
    )
    names = [plan.name for plan in plans]
    if len(set(names)) != len(names):
        raise OfferError.of("error.offer_plan_names", field=where, names=", ".join(names))
    fees = tuple(
        _parse_fee(fee, document.currency, f"{where}: fee {fee.item!r}") for fee in entry.fees
    )
    max_instances = _given(entry.max_instances)
    if max_instances is not None and max_instances < entry.min_instances:
        raise OfferError.of(
            "error.offer_max_instances", field=where, most=max_instances, least=entry.min_instances
        )
    topology = _given(entry.topology)
    tax_included = _given(entry.tax_included)
    return Offer(
        id=entry.id,
        provider=document.provider,
        gpu=entry.gpu,
        gpus=entry.gpus,
        currency=document.currency,
        plans=plans,
        product_line=entry.product_line,
        region=entry.region,
        instance_type=entry.instance_type,
        vcpus=_given(entry.vcpus),
        ram_gb=_given(entry.ram_gb),
        local_disk_gb=_given(entry.local_disk_gb),
        topology=None
        if topology is None
        else _parse_topology(topology, entry.gpus, f"{where}: topology"),
        min_instances=entry.min_instances,
        max_instances=max_instances,
        fees=shared + fees,
        discounts=discounts,
        tax_included=_given(document.tax_included) if tax_included is None else tax_included,
        claims=document.claims,
        notes=entry.notes,
        origin=origin,
    )


def parse_provider(document: Mapping[str, Any], origin: str) -> list[Offer]:
    """Offers from one provider document (the parsed TOML of ``offers/<provider>.toml``),
    checked against the offers schema (``catalog/schema/offers.py``) first."""
    from gpuplan.catalog.schema import decode

    table: OffersFile = decode(document, "offers", origin, OfferError)
    shared = tuple(
        _parse_fee(fee, table.currency, f"{origin}: fee {fee.item!r}") for fee in table.fees
    )
    discounts = tuple(
        _parse_discount(discount, f"{origin}: discount {discount.kind!r}")
        for discount in table.discounts
    )
    return [_parse_offer(entry, table, shared, discounts, origin) for entry in table.offers]


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
            raise OfferError.of(
                "error.offer_gpu", path=str(path), offer=repr(offer.id), error=error
            ) from None
        resolved.append(offer if gpu_id == offer.gpu else replace(offer, gpu=gpu_id))
    return resolved


@cache
def _catalog_offers() -> tuple[Offer, ...]:
    from gpuplan.catalog import offer_documents

    offers: list[Offer] = []
    for origin, document in offer_documents():
        offers.extend(parse_provider(document, origin))
    return tuple(offers)


def catalog_offers() -> list[Offer]:
    """Every built-in offer (package data ``gpuplan/catalog/data/offers/*.toml``)."""
    return list(_catalog_offers())


def user_offers_files() -> list[Path]:
    """The offers files in the user's offers directory (:func:`gpuplan.user_data.user_offers_dir`,
    where ``gpuplan offers import`` writes), in name order; none when it does not exist."""
    from gpuplan.user_data import user_offers_dir

    folder = user_offers_dir()
    return sorted(folder.glob("*.toml")) if folder.is_dir() else []


OffersFiles = str | Path | Iterable[str | Path] | None
"""One offers file, several (merged in order), or none."""


def _as_paths(offers_files: OffersFiles) -> list[Path]:
    if offers_files is None:
        return []
    if isinstance(offers_files, str | Path):
        return [Path(offers_files)]
    return [Path(path) for path in offers_files]


@dataclass
class OfferBook:
    """The offers a command works with, merged in order: the built-in catalog, the files in the
    user's offers directory, then each ``--offers`` file. An offer whose id an earlier source
    already holds replaces it, and ``notes`` says so, naming both files."""

    offers: list[Offer] = field(default_factory=list)
    notes: tuple[str, ...] = ()

    @classmethod
    def build(
        cls,
        offers_file: OffersFiles = None,
        include_catalog: bool = True,
        discount_factors: Mapping[str, Decimal] | None = None,
        include_user_offers: bool = True,
        rates: ExchangeRates | None = None,
        check: bool = True,
    ) -> OfferBook:
        """Merge the sources (class docstring), reject a user's offer the validator rejects
        (``pricing/validate.py``: placeholders, spot at or above on-demand, unit slips, an id
        twice in one file; ``check=False`` leaves that to the caller, as ``gpuplan offers
        --check`` does to list every finding), then apply negotiated factors per provider."""
        by_id: dict[str, Offer] = {}
        if include_catalog:
            by_id.update((offer.id, offer) for offer in catalog_offers())
        paths = (user_offers_files() if include_user_offers else []) + _as_paths(offers_file)
        notes: list[str] = []
        user_files: list[list[Offer]] = []
        for path in paths:
            offers = load_offers_file(path)
            for offer in offers:
                earlier = by_id.get(offer.id)
                if earlier is not None and earlier.origin != offer.origin:
                    notes.append(
                        f"offer {offer.id!r} of {offer.origin} replaces the one of "
                        f"{earlier.origin} (a later file overrides an earlier one)"
                    )
                by_id[offer.id] = offer
            user_files.append(offers)
        merged = list(by_id.values())
        if check and user_files:
            from gpuplan.pricing.validate import raise_on_errors, validate_offers

            for offers in user_files:
                raise_on_errors(validate_offers(offers, rates=rates, reference=merged))
        if discount_factors:
            known = {offer.provider.lower() for offer in merged}
            for provider in discount_factors:
                if provider.lower() not in known:
                    raise OfferError.of("error.discount_provider", provider=repr(provider))
            factors = {name.lower(): factor for name, factor in discount_factors.items()}
            merged = [
                offer.with_discount_factor(factors[offer.provider.lower()])
                if offer.provider.lower() in factors
                else offer
                for offer in merged
            ]
        return cls(merged, tuple(notes))

    def get(self, offer_id: str) -> Offer:
        for offer in self.offers:
            if offer.id == offer_id:
                return offer
        import difflib

        close = difflib.get_close_matches(offer_id, [offer.id for offer in self.offers], n=3)
        values = {"kind": "offer", "name": repr(offer_id), "command": "offers"}
        if close:
            raise OfferError.of("error.unknown_name_hint", **values, close=", ".join(close))
        raise OfferError.of("error.unknown_name", **values)


def parse_discount_factor(text: str) -> tuple[str, Decimal]:
    """Read ``PROVIDER=FACTOR`` (``AWS=0.8``: pay 80 % of list price)."""
    provider, sep, value = text.partition("=")
    if not sep or not provider.strip():
        raise OfferError.of("error.discount_form", text=repr(text))
    factor = to_decimal(value.strip(), f"discount {text!r}")
    if not Decimal(0) < factor <= Decimal(1):
        raise OfferError.of("error.discount_range", text=repr(text), percent="20 %")
    return provider.strip(), factor
