"""What every catalog table shares: exact keys, and the value types that carry units.

A :class:`Table` accepts exactly its fields: an unknown key is an error, never ignored, so a
misspelled ``granularty`` cannot fall back to a default. An entry table (an offer, a GPU, a
model) names itself in errors through ``entry_kind`` and ``entry_key`` (the field holding its
name, or ``""`` when the name is its key in the enclosing table).

The value types state their unit in their description, which is also what an error says was
expected: a duration is written (``1h``), a bandwidth is Gb/s, a memory size is bytes.
"""

from __future__ import annotations

from typing import Annotated, ClassVar

import msgspec
from msgspec import Meta

from gpuplan.pricing.provenance import OBSERVED_FORMS, OBSERVED_PATTERN, DateQuality
from gpuplan.units import DURATION_FORMS, DURATION_PATTERN


class Table(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """A TOML table whose keys are exactly the fields of the type.

    Subclasses repeat ``kw_only=True`` (msgspec applies it per class): keys are named, never
    positional, so a required key may follow an optional inherited one."""

    entry_kind: ClassVar[str] = ""
    entry_key: ClassVar[str] = ""


Text = Annotated[str, Meta(min_length=1, description="a non-empty string")]
Notes = Annotated[str, Meta(description="free text")]
Source = Annotated[
    str,
    Meta(
        min_length=1,
        description="where the figure comes from: a URL, or a document and the place in it",
    ),
]
Observed = Annotated[
    str,
    Meta(
        pattern=OBSERVED_PATTERN,
        description=f"the date the figure was read, not in the future: {OBSERVED_FORMS}",
        examples=["2026-11-30", "2026-07", "undated<=2026-11-30"],
    ),
]
Day = Annotated[str, Meta(pattern=r"^\d{4}-\d{2}-\d{2}$", description="a date written YYYY-MM-DD")]
Duration = (
    Annotated[
        str,
        Meta(
            pattern=DURATION_PATTERN,
            description=f"a duration written as {DURATION_FORMS}",
            examples=["1s", "1h", "30d", "1y"],
        ),
    ]
    | Annotated[int, Meta(ge=0, description="a number of seconds")]
)
Count = Annotated[int, Meta(ge=1, description="a whole number, at least 1")]
WholeNumber = Annotated[int, Meta(ge=0, description="a whole number, at least 0")]
Amount = Annotated[float, Meta(ge=0, description="an amount of money, at least 0")]
Share = Annotated[float, Meta(ge=0, le=1, description="a share from 0 to 1 (0.05 = 5 %)")]
Positive = Annotated[float, Meta(gt=0, description="a number above 0")]
Bytes = Annotated[int, Meta(gt=0, description="a size in bytes (a whole number above 0)")]
BytesPerSecond = Annotated[float, Meta(gt=0, description="a rate in bytes per second, above 0")]
FlopsPerSecond = Annotated[float, Meta(gt=0, description="FLOP/s (dense), above 0")]
Gbps = Annotated[float, Meta(gt=0, description="a rate in Gb/s (10^9 bits per second), above 0")]
Estimate = Annotated[bool, Meta(description="true when the figure is an estimate, not a price")]


class Sourced(Table, kw_only=True):
    """A table carrying its own ``source`` and ``observed`` date."""

    source: Source
    observed: Observed


class Provenanced(Sourced, kw_only=True):
    """A price's provenance: its source and date, how exact the date is, whether an estimate."""

    date_quality: DateQuality | msgspec.UnsetType = msgspec.UNSET
    is_estimate: Estimate = False
