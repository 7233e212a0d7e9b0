"""What every command shares at the edge: the Rich console and JSON printing."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from gpuplan.jsonable import to_json

__all__ = ["console", "error_console", "print_json", "to_json"]

console = Console()
error_console = Console(stderr=True)


def print_json(data: Any) -> None:
    """Print JSON on stdout without Rich markup or wrapping."""
    print(to_json(data))
