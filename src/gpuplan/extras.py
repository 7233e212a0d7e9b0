"""How to install an optional extra (``bench``, ``web``, ``hf``) into the gpuplan that runs.

``pip install 'gpuplan[bench]'`` only works for a gpuplan installed from a package index; for
one that runs from a clone or was installed from a local directory or wheel, pip must be given
that clone, directory or wheel. The rule, first match wins:

1. the running package sits in a source checkout (``src/gpuplan`` beside a ``pyproject.toml``):
   ``pip install -e '<checkout>[extra]'`` (``.`` when the checkout is the working directory);
2. the installed distribution records a local directory or file it came from (PEP 610
   ``direct_url.json``): ``pip install '<that path>[extra]'``, with ``-e`` for an editable one;
3. otherwise the package index: ``pip install 'gpuplan[extra]'``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TypeVar
from urllib.parse import unquote, urlparse

from gpuplan.errors import InputError

E = TypeVar("E", bound=InputError)

EXTRAS = {
    "bench": "PyTorch and nvidia-ml-py",
    "web": "FastAPI, uvicorn, python-multipart and Jinja2",
    "hf": "huggingface_hub",
}
"""Each optional extra of pyproject.toml that a command asks for, and what it brings."""


def source_checkout() -> Path | None:
    """The checkout the running package comes from: ``<root>/src/gpuplan`` with a
    ``<root>/pyproject.toml`` that names the project gpuplan; None for an installed copy."""
    package = Path(__file__).resolve().parent
    root = package.parents[1]
    pyproject = root / "pyproject.toml"
    if package.parent.name != "src" or not pyproject.is_file():
        return None
    try:
        text = pyproject.read_text(encoding="utf-8")
    except OSError:
        return None
    return root if 'name = "gpuplan"' in text else None


def _installed_from() -> tuple[str, bool] | None:
    """``(local path, editable)`` that pip recorded for the installed distribution, if any."""
    from importlib import metadata

    try:
        recorded = metadata.distribution("gpuplan").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    if not recorded:
        return None
    try:
        origin = json.loads(recorded)
    except ValueError:
        return None
    url = urlparse(str(origin.get("url", "")))
    if url.scheme != "file":
        return None
    editable = bool((origin.get("dir_info") or {}).get("editable"))
    return unquote(url.path), editable


def _shown(path: Path | str) -> str:
    return "." if Path(path) == Path(os.getcwd()) else str(path)


def install_hint(extra: str) -> str:
    """The pip command that adds ``extra`` to the running gpuplan (module docstring)."""
    checkout = source_checkout()
    if checkout is not None:
        return f"pip install -e '{_shown(checkout)}[{extra}]'"
    origin = _installed_from()
    if origin is not None:
        path, editable = origin
        return f"pip install {'-e ' if editable else ''}'{_shown(path)}[{extra}]'"
    return f"pip install 'gpuplan[{extra}]'"


def missing_extra_error(error: type[E], command: str, extra: str, missing: str) -> E:
    """``error``, one line: ``command`` needs ``extra`` (what it brings), ``missing`` is
    absent, and the pip command that installs it."""
    return error.of(
        "error.missing_extra",
        command=command,
        extra=extra,
        brings=EXTRAS[extra],
        missing=missing,
        install=install_hint(extra),
    )


def missing_extra_message(command: str, extra: str, missing: str) -> str:
    """The English of :func:`missing_extra_error`."""
    return str(missing_extra_error(InputError, command, extra, missing))
