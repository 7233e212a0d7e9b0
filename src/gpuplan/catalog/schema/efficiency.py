"""The speed model's fit (``catalog/data/efficiency.toml``, written by
``benchmarks/fit_speed.py``): the residuals of :class:`gpuplan.estimate.efficiency.Efficiency`
within their ``FIT_BOUNDS``, the fit's record, and the intervals of ``estimate/interval.py``."""

from __future__ import annotations

from typing import Annotated, ClassVar

from msgspec import UNSET, Meta, UnsetType

from gpuplan.catalog.schema.base import Day, Positive, Table, Text, WholeNumber
from gpuplan.estimate.efficiency import FIT_BOUNDS


class FitRecord(Table, kw_only=True):
    """When and how the residuals were fitted, and how well."""

    date: Day
    rows: Text
    row_count: WholeNumber
    sources: WholeNumber
    method: Text
    fit_mean_absolute_percentage_error: Annotated[float, Meta(ge=0)]
    fit_bias: float


_LOW, _HIGH = FIT_BOUNDS["megatron"]
Residual = Annotated[
    float, Meta(ge=_LOW, le=_HIGH, description=f"a share from {_LOW} to {_HIGH} (FIT_BOUNDS)")
]


class Residuals(Table, kw_only=True):
    """One fitted residual per training stack (``gpuplan.estimate.efficiency.Efficiency``)."""

    megatron: Residual | UnsetType = UNSET
    fsdp: Residual | UnsetType = UNSET
    hf: Residual | UnsetType = UNSET
    internevo: Residual | UnsetType = UNSET


class IntervalClass(Table, kw_only=True):
    """An 80 % interval of measured / predicted tokens/s for one class of rows (``*``: any)."""

    entry_kind: ClassVar[str] = "interval"

    generation: Text
    precision: Text
    experts: Text
    scale: Text
    rows: WholeNumber
    low: Positive
    high: Positive


class EfficiencyFile(Table, kw_only=True):
    """The speed model's fitted residuals with the fit's record and intervals."""

    fit: FitRecord
    efficiency: Residuals
    interval: list[IntervalClass] = []
