"""Turn what a browser or an API client sends into scenarios, safely.

Nothing a user sends is opened or executed: ``model`` is a catalog name or a JSON mapping of
``config.json`` keys (sent as JSON, or pasted into the form's model field), never a path;
uploads and pasted configs are read up to a size limit and parsed as JSON; TCO inputs are TOML
text parsed as data.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from gpuplan.errors import InputError
from gpuplan.limits import parse_json, parse_toml

UPLOAD_LIMIT_BYTES = 64 * 1024
STRATEGY_INTEGERS = ("dp", "tp", "pp", "vpp", "cp", "ep", "zero", "micro_batch")
STRATEGY_WORDS = ("recompute", "offload")


def checked_model(value: Any) -> str | dict[str, Any]:
    """A catalog model name (validated against the catalog) or a config mapping, given as one
    or as its JSON text (a pasted config.json, which starts with ``{``); paths refused."""
    if isinstance(value, Mapping):
        return dict(value)
    if not isinstance(value, str) or not value.strip():
        raise InputError.of("error.model_path")
    name = value.strip()
    if name.startswith("{"):
        return parse_upload(name.encode("utf-8"), "pasted")
    if re.search(r"[/\\~]|\.json$|^\.", name, re.IGNORECASE):
        raise InputError.of("error.model_path")
    from gpuplan.catalog import load_model

    load_model(name)
    return name


def parse_upload(data: bytes, source: str = "upload") -> dict[str, Any]:
    """An uploaded (``source`` ``"upload"``) or pasted (``"pasted"``) ``config.json``: at most
    64 KiB, a JSON object."""
    if len(data) > UPLOAD_LIMIT_BYTES:
        raise InputError.of("error.upload_size", limit=UPLOAD_LIMIT_BYTES // 1024)
    not_json = f"error.{source}_json"
    try:
        parsed = parse_json(data.decode("utf-8"), "config.json")
    except UnicodeDecodeError as error:
        raise InputError.of(not_json, reason=str(error)) from None
    except InputError as error:
        raise InputError.of(not_json, reason=error) from None
    if not isinstance(parsed, dict):
        raise InputError.of(not_json, reason=type(parsed).__name__)
    return parsed


def parse_toml_text(text: str) -> dict[str, Any]:
    """TCO inputs typed or pasted as TOML (data only), size-limited like uploads."""
    if len(text.encode("utf-8")) > UPLOAD_LIMIT_BYTES:
        raise InputError.of("error.upload_size", limit=UPLOAD_LIMIT_BYTES // 1024)
    return parse_toml(text, "TOML")


def parse_strategy(text: str) -> dict[str, Any]:
    """``"tp=2 pp=1 zero=3 recompute=full"`` -> a strategy mapping."""
    strategy: dict[str, Any] = {}
    for part in re.split(r"[\s,;]+", text.strip()):
        if not part:
            continue
        key, sep, value = part.partition("=")
        key = key.strip().lower()
        if not sep or key not in (*STRATEGY_INTEGERS, *STRATEGY_WORDS):
            raise InputError.of(
                "error.strategy_part",
                part=repr(part),
                accepted=", ".join((*STRATEGY_INTEGERS, *STRATEGY_WORDS)),
            )
        if key in STRATEGY_INTEGERS:
            strategy[key] = parse_integer(value, f"strategy.{key}")
        else:
            strategy[key] = value.strip()
    return strategy


def parse_integer(value: Any, field: str) -> int:
    """A whole number from a form field."""
    try:
        return int(str(value).strip())
    except ValueError:
        raise InputError.of("error.whole_number", field=field, value=repr(value)) from None


def split_list(text: str | None) -> tuple[str, ...]:
    """``"h100, a100"`` -> ``("h100", "a100")``."""
    return tuple(item.strip() for item in re.split(r"[,\s]+", text or "") if item.strip())


def plan_scenario(fields: Mapping[str, Any], model: str | dict[str, Any]) -> dict[str, Any]:
    """The scenario mapping from plan/estimate fields (empty fields left to the defaults)."""
    scenario: dict[str, Any] = {"model": model}
    for key in ("method", "tokens", "precision", "optimizer", "framework"):
        if fields.get(key):
            scenario[key] = str(fields[key]).strip()
    for key in ("seq_len", "global_batch"):
        if fields.get(key) not in (None, ""):
            scenario[key] = fields[key]
    return scenario


def plan_options(fields: Mapping[str, Any]) -> dict[str, Any]:
    """Search options from plan fields."""
    options: dict[str, Any] = {}
    for key in ("objective", "budget", "deadline", "currency"):
        if fields.get(key):
            options[key] = str(fields[key]).strip()
    if fields.get("max_gpus") not in (None, ""):
        options["max_gpus"] = parse_integer(fields["max_gpus"], "max_gpus")
    for key in ("gpus", "providers"):
        value = fields.get(key)
        items = tuple(value) if isinstance(value, list | tuple) else split_list(value)
        if items:
            options[key] = items
    return options
