"""Parts that several results share: a warning, a layout, a speed interval."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

OMITTED_WHEN_NONE = {"omitted_when_none": True}
"""Field metadata (``field(default=None, metadata=OMITTED_WHEN_NONE)``): the encoder
(``gpuplan.jsonable``) leaves the key out while it is ``None``, as the computation does for a
part that does not apply (no exchange, no price date)."""


@dataclass(frozen=True)
class NoticeResult:
    """A warning carried as a code and its values (``gpuplan.notices``), with the English text."""

    code: str
    values: dict[str, Any]
    text: str


Warning = str | NoticeResult
"""A warning: a sentence, or a notice the faces render in the reader's language."""


@dataclass(frozen=True)
class StrategyResult:
    """The parallel layout: degrees, ZeRO stage and the ranks it shards over (``shard_group``:
    ``dp * cp`` unless sharding is hybrid), micro-batch per GPU, recompute and offload, and the
    pipeline ``schedule`` (``1f1b``, interleaved when ``vpp > 1``, or ``dualpipe``)."""

    dp: int
    tp: int
    pp: int
    vpp: int
    cp: int
    ep: int
    zero: int
    micro_batch: int
    etp: int
    shard_group: int
    recompute: str
    offload: str
    flash_attention: bool
    sequence_parallel: bool
    schedule: str
    framework: str


@dataclass(frozen=True)
class IntervalBasis:
    """The calibration rows a speed interval is drawn from."""

    generation: str
    precision: str
    experts: str
    scale: str


@dataclass(frozen=True)
class IntervalResult:
    """How far measured speed strays from the model's (``estimate.interval``): the middle
    ``coverage`` share of the validation rows lies between ``low_factor`` and ``high_factor``
    times the prediction."""

    coverage: float
    low_factor: float
    high_factor: float
    rows: int
    basis: IntervalBasis
