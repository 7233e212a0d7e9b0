"""JSON in base units: one conversion for everything gpuplan prints or stores as JSON.

Results (``gpuplan.results`` dataclasses) become mappings of their fields (less those
``omitted_when_none`` while ``None``), Decimals become
numbers, NumPy scalars and arrays become Python numbers and lists, tuples and
sets become lists, and infinities and NaN become ``null`` so that any JSON parser reads the text.
"""

from __future__ import annotations

import dataclasses
import json
import math
from decimal import Decimal
from typing import Any

PLAIN_TYPES = (str, int, bool, type(None))
"""Values JSON holds as they are (checked by exact type: a NumPy integer or a float subclass
goes through the conversions)."""


def jsonable(value: Any) -> Any:
    """``value`` with every part replaced by its plain JSON counterpart (module docstring)."""
    kind = type(value)
    if kind in PLAIN_TYPES:
        return value
    if kind is float:
        return value if math.isfinite(value) else None
    if kind is dict:
        return {key: jsonable(item) for key, item in value.items()}
    if kind is list:
        return [jsonable(item) for item in value]
    if isinstance(value, Decimal):
        return float(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            field.name: jsonable(getattr(value, field.name))
            for field in dataclasses.fields(value)
            if not (field.metadata.get("omitted_when_none") and getattr(value, field.name) is None)
        }
    if hasattr(value, "tolist") and not isinstance(value, str | bytes):
        return jsonable(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set):
        return [jsonable(item) for item in value]
    return value


def to_json(data: Any, indent: int | None = 2) -> str:
    """JSON text of ``data`` after :func:`jsonable`."""
    return json.dumps(
        jsonable(data), indent=indent, ensure_ascii=False, allow_nan=False, default=str
    )
