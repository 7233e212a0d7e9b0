"""What every command shares at the edge: the Rich console and JSON printing."""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any

from rich.console import Console

console = Console()
error_console = Console(stderr=True)


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, tuple | set):
        return list(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def _finite(value: Any) -> Any:
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


def to_json(data: Any) -> str:
    """JSON text in base units. Decimals become numbers; infinities and NaN become null."""
    return json.dumps(_finite(data), indent=2, ensure_ascii=False, default=_json_default)


def print_json(data: Any) -> None:
    """Print JSON on stdout without Rich markup or wrapping."""
    print(to_json(data))
