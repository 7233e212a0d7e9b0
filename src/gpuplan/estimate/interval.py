"""How sure a speed prediction is: an interval from the model's errors on sources it was not fitted on.

``benchmarks/fit_speed.py`` predicts every ``fit`` and ``test`` row of each source with the
residuals fitted on the other sources only (leave-one-source-out) and records, per class of
comparable rows, the 10th and 90th percentiles of ``measured / predicted``
(``catalog/data/efficiency.toml``, ``[[interval]]``). A prediction's interval is its class's: an
80 % interval, as wide as the model's real errors on unseen stacks and hardware, widened where
needed to contain the prediction (a class whose held-out rows all ran slower than predicted
gives an interval below it, and the prediction stays the model's).

Classes are GPU generation, precision (fp8 or half), dense or MoE, and scale (one GPU, one node
of up to 8, up to 64, more). A class with fewer than :data:`MIN_ROWS` rows falls back to a
coarser one: first without scale, then without generation, then without precision, then every
row; the interval says which class it used.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from gpuplan.estimate.efficiency import fitted_record

COVERAGE = 0.8
MIN_ROWS = 8
ANY = "*"
CLASS_FIELDS = ("generation", "precision", "experts", "scale")
FALLBACK_ORDER = (
    (),
    ("scale",),
    ("scale", "generation"),
    ("scale", "generation", "precision"),
    ("scale", "generation", "precision", "experts"),
)
"""The class fields each fallback level drops, most specific first."""


def scale_class(gpus: int) -> str:
    if gpus <= 1:
        return "1"
    if gpus <= 8:
        return "2-8"
    if gpus <= 64:
        return "9-64"
    return "65+"


def comparable_class(architecture: str, precision: str, is_moe: bool, gpus: int) -> dict[str, str]:
    """The class of a prediction or of a measured row."""
    return {
        "generation": architecture or ANY,
        "precision": "fp8" if precision == "fp8" else "half",
        "experts": "moe" if is_moe else "dense",
        "scale": scale_class(gpus),
    }


@dataclass(frozen=True)
class SpeedInterval:
    """Bounds on throughput as multiples of the prediction, and where they come from."""

    low: float
    high: float
    rows: int
    basis: Mapping[str, str]

    def to_dict(self) -> dict[str, Any]:
        return {
            "coverage": COVERAGE,
            "low_factor": self.low,
            "high_factor": self.high,
            "rows": self.rows,
            "basis": dict(self.basis),
        }


def interval_records(rows: Iterable[tuple[Mapping[str, str], float]]) -> list[dict[str, Any]]:
    """Per class at every fallback level with at least :data:`MIN_ROWS` rows: the row count and
    the percentiles of ``measured / predicted`` bounding :data:`COVERAGE` of them. ``rows`` are
    (class, ratio) pairs."""
    pairs = list(rows)
    records: dict[tuple[str, ...], list[float]] = {}
    for fields, ratio in pairs:
        for dropped in FALLBACK_ORDER:
            key = tuple(ANY if name in dropped else fields[name] for name in CLASS_FIELDS)
            records.setdefault(key, []).append(ratio)
    tail = (1.0 - COVERAGE) / 2.0 * 100.0
    result = []
    for key, ratios in sorted(records.items()):
        if len(ratios) < MIN_ROWS:
            continue
        low, high = np.percentile(ratios, [tail, 100.0 - tail])
        result.append(
            {
                **dict(zip(CLASS_FIELDS, key, strict=True)),
                "rows": len(ratios),
                "low": round(float(low), 4),
                "high": round(float(high), 4),
            }
        )
    return result


@cache
def _recorded_intervals() -> dict[tuple[str, ...], Mapping[str, Any]]:
    records = fitted_record().get("interval", [])
    return {tuple(record[name] for name in CLASS_FIELDS): record for record in records}


def speed_interval(
    architecture: str, precision: str, is_moe: bool, gpus: int
) -> SpeedInterval | None:
    """The recorded interval of the most specific class that has one, widened where needed to
    contain the prediction itself; None before any fit."""
    index = _recorded_intervals()
    wanted = comparable_class(architecture, precision, is_moe, gpus)
    for dropped in FALLBACK_ORDER:
        key = tuple(ANY if name in dropped else wanted[name] for name in CLASS_FIELDS)
        record = index.get(key)
        if record is not None:
            basis = {name: value for name, value in zip(CLASS_FIELDS, key, strict=True)}
            low, high = min(float(record["low"]), 1.0), max(float(record["high"]), 1.0)
            return SpeedInterval(low, high, int(record["rows"]), basis)
    return None


def duration_bounds(
    startup_seconds: float, training_seconds: float, interval: SpeedInterval | None
) -> tuple[float, float]:
    """Shortest and longest run the interval allows: training time scales with ``1 / speed``,
    start-up does not."""
    if interval is None:
        total = startup_seconds + training_seconds
        return total, total
    return (
        startup_seconds + training_seconds / interval.high,
        startup_seconds + training_seconds / interval.low,
    )
