"""Reading the user's pricing files: one place for the one-line errors a bad file gets."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from gpuplan.errors import InputError


def read_text_file(path: str | Path, what: str, error: type[InputError]) -> str:
    """The file's text; ``error("cannot read WHAT file 'PATH': REASON")`` when it cannot be read."""
    try:
        return Path(path).read_text("utf-8")
    except OSError as failure:
        raise error(f"cannot read {what} file {str(path)!r}: {failure.strerror}") from None


def parse_toml(text: str, origin: str, error: type[InputError]) -> dict[str, Any]:
    """The TOML document; ``error("ORIGIN: malformed TOML: ...")`` when it does not parse."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as failure:
        raise error(f"{origin}: malformed TOML: {failure}") from None


def read_toml_file(path: str | Path, what: str, error: type[InputError]) -> dict[str, Any]:
    """:func:`read_text_file` then :func:`parse_toml`."""
    return parse_toml(read_text_file(path, what, error), str(path), error)
