"""The small catalog files: exchange rates (``currency.toml``, and a user's ``--fx-file``) and
an owned data centre's defaults (``datacenter.toml``)."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from msgspec import UNSET, Meta, UnsetType

from gpuplan.catalog.schema.base import (
    Notes,
    Provenanced,
    Sourced,
    Table,
)

CurrencyCode = Annotated[
    str, Meta(pattern=r"^[A-Z]{3}$", description="an ISO 4217 code in capitals, e.g. USD")
]


class RateTable(Provenanced, kw_only=True):
    """``per_unit``: the price in the base currency of one unit of ``currency``."""

    entry_kind: ClassVar[str] = "rate"
    entry_key: ClassVar[str] = "currency"

    currency: CurrencyCode
    per_unit: Annotated[float, Meta(gt=0, description="units of the base currency, above 0")]


class CurrencyFile(Table, kw_only=True):
    """Exchange rates against ``base``, each with its source and date."""

    base: CurrencyCode
    rates: list[RateTable] = []


class Figure(Sourced, kw_only=True):
    """A default with its range and provenance; ``unit`` is the unit the code reads it in."""

    value: float
    low: float | UnsetType = UNSET
    high: float | UnsetType = UNSET
    derivation: Notes = ""


class Ratio(Figure, kw_only=True):
    unit: Literal["ratio"]


class UsdPerKwh(Figure, kw_only=True):
    unit: Literal["USD/kWh"]


class Watts(Figure, kw_only=True):
    unit: Literal["W"]


class DatacenterFile(Table, kw_only=True):
    """Running an owned cluster: power usage effectiveness, electricity, host power."""

    pue: Ratio
    electricity_usd_per_kwh: UsdPerKwh
    host_watts_per_eight_gpu_node: Watts
