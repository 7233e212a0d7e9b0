"""The offers file (``catalog/data/offers/<provider>.toml``, a user's ``--offers FILE`` and the
files in the user's offers directory): one provider, its offers, price plans, fees, discounts.

The accepted values (plan modes, price units, fee categories and units, links, networks) are
those of :mod:`gpuplan.pricing.offers` and :mod:`gpuplan.hardware.topology`, which read the
decoded tables; the rules that span several keys (a reserved plan needs a ``term``, a network
needs its rate) are checked there.
"""

from __future__ import annotations

from typing import Annotated, ClassVar

from msgspec import UNSET, Meta, UnsetType

from gpuplan.catalog.schema.base import (
    Amount,
    Count,
    Duration,
    Gbps,
    Notes,
    Positive,
    Provenanced,
    Share,
    Sourced,
    Table,
    Text,
)
from gpuplan.hardware.topology import IntraNodeLink, NetworkKind
from gpuplan.pricing.offers import Currency, FeeCategory, FeeUnit, FeeWhen, PlanMode, PriceUnit


class PricePlanTable(Provenanced, kw_only=True):
    """One way to pay for the offer: a metered rate, a package, a reserved term or spot.

    ``price`` is per ``per`` for one ``price_period`` (an hour for metered, spot and reserved
    plans, the term for packages). ``granularity`` defaults to the mode's (1 s per_second, 60 s
    per_minute, 3600 s hourly, capacity_block and spot); ``term`` to the package's length and
    is required for ``reserved``."""

    mode: PlanMode
    price: Annotated[
        float, Meta(ge=0, description="a price of at least 0, in the offer's currency")
    ]
    per: PriceUnit
    name: Annotated[str, Meta(description="the plan's name; default: its mode")] = ""
    currency: Currency | UnsetType = UNSET
    term: Duration | UnsetType = UNSET
    price_period: Duration | UnsetType = UNSET
    granularity: Duration | UnsetType = UNSET
    minimum: Duration = 0
    upfront_share: Share | UnsetType = UNSET
    interruptions_per_hour: (
        Annotated[float, Meta(gt=0, description="spot interruptions per hour, above 0")] | UnsetType
    ) = UNSET
    interruptions_source: (
        Annotated[str, Meta(min_length=1, description="where the interruption rate comes from")]
        | UnsetType
    ) = UNSET
    notes: Notes = ""


class FeeTierTable(Table, kw_only=True):
    """``price`` per unit for the quantity up to ``up_to`` units (the last tier: no bound)."""

    price: Amount
    up_to: Positive | UnsetType = UNSET


class FeeTable(Provenanced, kw_only=True):
    """A charge besides the GPU instance: egress, storage, public IP, support, tax, ...

    ``price`` per ``unit``; left out when the source states the fee without a number."""

    entry_kind: ClassVar[str] = "fee"
    entry_key: ClassVar[str] = "item"

    category: FeeCategory
    item: Text
    unit: FeeUnit
    price: Amount | UnsetType = UNSET
    currency: Currency | UnsetType = UNSET
    tiers: list[FeeTierTable] = []
    applies_when: FeeWhen = "running"
    free_allowance: Annotated[
        float, Meta(ge=0, description="units per instance not charged, at least 0")
    ] = 0
    required: bool = False
    notes: Notes = ""


DiscountShare = Annotated[float, Meta(ge=0, lt=1, description="a share from 0 to below 1")]
GigaBytes = Annotated[float, Meta(ge=0, description="a size in GB (10^9 bytes), at least 0")]


class DiscountTable(Provenanced, kw_only=True):
    """A discount the provider states; ``share`` is taken off (0.05 = 5 %), its low end when
    the source gives a range (``share_high`` the high end); left out when not quantified."""

    entry_kind: ClassVar[str] = "discount"
    entry_key: ClassVar[str] = "kind"

    kind: Text
    share: DiscountShare | UnsetType = UNSET
    share_high: DiscountShare | UnsetType = UNSET
    minimum: Duration = 0
    applies_to_modes: list[PlanMode] = []
    automatic: bool = True
    notes: Notes = ""


class TopologyTable(Sourced, kw_only=True):
    """The instance as sold: the GPUs' link, peer-to-peer, and the network between instances.

    ``network_gbps_per_gpu`` is the seller's aggregate divided by the GPUs (required unless
    ``network = "none"``); ``public_gbps`` the instance's ordinary Ethernet."""

    intra_node: IntraNodeLink
    p2p: bool
    network: NetworkKind
    network_gbps_per_gpu: Gbps | UnsetType = UNSET
    public_gbps: Gbps | UnsetType = UNSET
    nvlink_domain: Annotated[
        int, Meta(ge=0, description="GPUs in one NVLink domain across instances (GB200 NVL72: 72)")
    ] = 0
    notes: Notes = ""


class OfferTable(Table, kw_only=True):
    """One purchasable configuration: ``gpus`` GPUs of catalog id (or alias) ``gpu`` per
    instance, sold under ``plans``."""

    entry_kind: ClassVar[str] = "offer"
    entry_key: ClassVar[str] = "id"

    id: Text
    gpu: Annotated[str, Meta(min_length=1, description="a catalog GPU id or alias")]
    gpus: Annotated[int, Meta(ge=1, description="GPUs per instance, at least 1")]
    plans: Annotated[list[PricePlanTable], Meta(min_length=1)]
    product_line: Notes = ""
    region: Notes = ""
    instance_type: Notes = ""
    vcpus: Count | UnsetType = UNSET
    ram_gb: GigaBytes | UnsetType = UNSET
    local_disk_gb: GigaBytes | UnsetType = UNSET
    topology: TopologyTable | UnsetType = UNSET
    min_instances: Count = 1
    max_instances: Count | UnsetType = UNSET
    fees: list[FeeTable] = []
    tax_included: bool | UnsetType = UNSET
    notes: Notes = ""


class OffersFile(Table, kw_only=True):
    """One provider's offers, in one currency, with the fees and discounts of all of them."""

    provider: Text
    currency: Currency
    offers: list[OfferTable] = []
    fees: list[FeeTable] = []
    discounts: list[DiscountTable] = []
    tax_included: bool | UnsetType = UNSET
    claims: Annotated[
        str,
        Meta(
            min_length=1,
            description="who states these prices: provider (a price list) or the publication",
        ),
    ] = "provider"
