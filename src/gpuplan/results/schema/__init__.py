"""The JSON Schema of each result (``gpuplan.results``), generated from its type.

:func:`json_schema` generates the schema (draft 2020-12) with ``msgspec.json.schema``; the same
text ships as package data (``results/schema/NAME.schema.json``), and a test keeps the two
equal (``python -m gpuplan.results.schema`` rewrites the shipped files).
"""

from __future__ import annotations

import json
from typing import Any

from gpuplan.catalog.schema import SCHEMA_DIALECT
from gpuplan.results import RESULT_TYPES, result_type


def json_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of result ``name``."""
    import msgspec

    return {
        "$schema": SCHEMA_DIALECT,
        "title": f"gpuplan {name} result",
        **msgspec.json.schema(result_type(name)),
    }


def json_schema_text(name: str) -> str:
    """:func:`json_schema` as the shipped files hold it: indented, keys in type order."""
    return json.dumps(json_schema(name), indent=2, ensure_ascii=False) + "\n"


def shipped_schema_text(name: str) -> str:
    """The JSON Schema text shipped as package data for result ``name``."""
    from importlib import resources

    result_type(name)
    return resources.files(__name__).joinpath(f"{name}.schema.json").read_text("utf-8")


__all__ = ["RESULT_TYPES", "json_schema", "json_schema_text", "shipped_schema_text"]
