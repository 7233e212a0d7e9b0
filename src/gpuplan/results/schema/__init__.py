"""The JSON Schema of each result (``gpuplan.results``), generated from its type.

:func:`json_schema` generates the schema (draft 2020-12) with ``msgspec.json.schema``, as the
catalog's schemas are (``gpuplan.catalog.schema``); the same text ships as package data
(``results/schema/NAME.schema.json``), and a test keeps the two equal
(``python -m gpuplan.results.schema`` rewrites the shipped files).
"""

from __future__ import annotations

from typing import Any

from gpuplan.catalog.schema import generated_schema, packaged_text, schema_file_text
from gpuplan.results import RESULT_TYPES, result_type


def json_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of result ``name``."""
    return generated_schema(result_type(name), f"gpuplan {name} result")


def json_schema_text(name: str) -> str:
    """:func:`json_schema` as the shipped files hold it."""
    return schema_file_text(json_schema(name))


def shipped_schema_text(name: str) -> str:
    """The JSON Schema text shipped as package data for result ``name``."""
    result_type(name)
    return packaged_text(__name__, f"{name}.schema.json")


__all__ = ["RESULT_TYPES", "json_schema", "json_schema_text", "shipped_schema_text"]
