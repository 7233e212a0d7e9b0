"""JSON-safe values for API responses: Decimals and NumPy scalars become numbers, infinities
and NaN become null (the same base units as the CLI's ``--json``)."""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any


def jsonable(value: Any) -> Any:
    """``value`` with every leaf a plain JSON type."""
    if isinstance(value, dict):
        return {str(key): jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set):
        return [jsonable(item) for item in value]
    if isinstance(value, Decimal):
        value = float(value)
    elif hasattr(value, "item") and not isinstance(value, str | bytes):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
