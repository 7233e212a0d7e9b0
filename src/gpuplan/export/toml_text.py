"""A minimal TOML writer: tables of strings, booleans, numbers and lists of those.

``tomllib`` only reads TOML; the torchtitan export needs to write a few flat tables, so this
writes exactly what TOML 1.0 (toml.io/en/v1.0.0) says for basic strings, integers, floats,
booleans and arrays, and nothing more.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

TomlValue = str | bool | int | float | Sequence[str | bool | int | float]

_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}


def toml_string(text: str) -> str:
    """A TOML basic string, escaping quotes, backslashes and control characters."""
    out = []
    for char in text:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04X}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def toml_value(value: TomlValue) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"TOML export: {value!r} is not a finite number")
        return repr(value)
    if isinstance(value, str):
        return toml_string(value)
    return "[" + ", ".join(toml_value(item) for item in value) + "]"


def toml_key(key: str) -> str:
    bare = key.replace("_", "").replace("-", "").isalnum() and key.isascii()
    return key if bare else toml_string(key)


def toml_document(tables: Mapping[str, Mapping[str, TomlValue]], header: str = "") -> str:
    """Tables in order; a table name with dots is written as a dotted header (``a.b.c``)."""
    parts = [header] if header else []
    for name, table in tables.items():
        lines = [f"[{'.'.join(toml_key(part) for part in name.split('.'))}]"]
        lines += [f"{toml_key(key)} = {toml_value(value)}" for key, value in table.items()]
        parts.append("\n".join(lines) + "\n")
    return "\n".join(parts)
