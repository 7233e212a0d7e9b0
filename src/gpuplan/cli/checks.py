"""Checks a Typer option needs beyond its type and range: Click's float range lets NaN through
(every comparison with NaN is false), so each float option also takes ``callback=finite``."""

from __future__ import annotations

import math

import typer


def finite(value: float | None) -> float | None:
    """``value`` unless it is NaN or infinite (then a usage error naming the option)."""
    if value is not None and not math.isfinite(value):
        raise typer.BadParameter(f"{value} is not a finite number")
    return value
