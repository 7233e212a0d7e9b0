"""Strict schemas of the catalog files, and the JSON Schema published from them.

Each catalog file has one type (``msgspec.Struct`` tables that accept exactly their keys):

==============  ==========================================  =====================================
name            files                                       type
==============  ==========================================  =====================================
``offers``      ``offers/*.toml``, ``--offers FILE``,       :class:`~.offers.OffersFile`
                the user's offers directory
``gpus``        ``gpus.toml``                               :class:`~.gpus.GpusFile`
``models``      ``models.toml``                             :class:`~.models.ModelsFile`
``currency``    ``currency.toml``, ``--fx-file FILE``       :class:`~.tables.CurrencyFile`
``datacenter``  ``datacenter.toml``                         :class:`~.tables.DatacenterFile`
``efficiency``  ``efficiency.toml``                         :class:`~.efficiency.EfficiencyFile`
==============  ==========================================  =====================================

:func:`decode` checks a parsed document against its type (``decoding.py`` words the refusal).
:func:`json_schema` generates the JSON Schema (draft 2020-12) of a type with
``msgspec.json.schema``; the same text ships as package data
(``catalog/schema/NAME.schema.json``) for editors, and a test keeps the two equal
(``python -m gpuplan.catalog.schema`` rewrites the shipped files). msgspec is imported only
when a file is decoded or a schema generated, so ``import gpuplan`` does not pay for it.
"""

from __future__ import annotations

import importlib
import json
from typing import Any

from gpuplan.errors import InputError

SCHEMA_TYPES: dict[str, tuple[str, str]] = {
    "offers": ("gpuplan.catalog.schema.offers", "OffersFile"),
    "gpus": ("gpuplan.catalog.schema.gpus", "GpusFile"),
    "models": ("gpuplan.catalog.schema.models", "ModelsFile"),
    "currency": ("gpuplan.catalog.schema.tables", "CurrencyFile"),
    "datacenter": ("gpuplan.catalog.schema.tables", "DatacenterFile"),
    "efficiency": ("gpuplan.catalog.schema.efficiency", "EfficiencyFile"),
}
"""Schema name -> (module, type)."""

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def schema_type(name: str) -> Any:
    """The Struct type of catalog file kind ``name`` (a key of :data:`SCHEMA_TYPES`)."""
    if name not in SCHEMA_TYPES:
        raise InputError(f"schema {name!r}: not one of {', '.join(SCHEMA_TYPES)}")
    module, attribute = SCHEMA_TYPES[name]
    return getattr(importlib.import_module(module), attribute)


def decode(document: Any, name: str, origin: str, error: type[InputError] | None = None) -> Any:
    """``document`` (parsed TOML) decoded as a ``name`` file; ``error`` (default
    :class:`~.decoding.SchemaError`) with one line naming ``origin``, the entry and the key."""
    from gpuplan.catalog.schema.decoding import SchemaError
    from gpuplan.catalog.schema.decoding import decode as decode_as

    return decode_as(document, schema_type(name), origin, error or SchemaError)


def json_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of a ``name`` file, generated from its type."""
    import msgspec

    generated = msgspec.json.schema(schema_type(name))
    return {
        "$schema": SCHEMA_DIALECT,
        "title": f"gpuplan {name} file",
        **generated,
    }


def json_schema_text(name: str) -> str:
    """:func:`json_schema` as the shipped files hold it: indented, keys in type order."""
    return json.dumps(json_schema(name), indent=2, ensure_ascii=False) + "\n"


def shipped_schema_text(name: str) -> str:
    """The JSON Schema text shipped as package data for ``name``."""
    from importlib import resources

    schema_type(name)
    return resources.files(__name__).joinpath(f"{name}.schema.json").read_text("utf-8")
