"""YAML output through PyYAML's safe dumper, with multi-line strings as literal blocks."""

from __future__ import annotations

from typing import Any

import yaml


class _BlockDumper(yaml.SafeDumper):
    pass


def _represent_text(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    style = "|" if "\n" in text else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_BlockDumper.add_representer(str, _represent_text)


def yaml_document(data: dict[str, Any], header: str = "") -> str:
    """``data`` in YAML, keys in insertion order, after a comment ``header``."""
    body = yaml.dump(data, Dumper=_BlockDumper, sort_keys=False, allow_unicode=True, width=100)
    return header + body
