"""A model named by its Hugging Face id (``meta-llama/Llama-3.1-8B``), read offline.

gpuplan never downloads. An id resolves, first match wins, to: the catalog entry whose
``hf_repo`` it is (the same config.json, with its source); else the ``config.json`` of the
repository's ``main`` revision in the local Hugging Face cache; else a one-line error that says
how to fetch it. With the optional ``hf`` extra the cache is read through huggingface_hub's
``try_to_load_from_cache``; without it, through the cache layout that function reads
(huggingface_hub ``file_download.py``, the "Manage the cache" guide): ``<cache>/models--ORG--NAME/
refs/main`` holds the commit, ``snapshots/<commit>/config.json`` the file, and the cache is
``$HF_HUB_CACHE``, else ``$HUGGINGFACE_HUB_CACHE``, else ``$HF_HOME/hub``, else
``$XDG_CACHE_HOME/huggingface/hub``, else ``~/.cache/huggingface/hub`` (``constants.py``).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")
"""``ORG/NAME``, each part the characters the Hub allows in a namespace or repository name."""


def is_repo_id(text: str) -> bool:
    """Whether ``text`` reads as a Hugging Face model id (``ORG/NAME``; no path, no file)."""
    return bool(REPO_ID.match(text)) and ".." not in text and not text.lower().endswith(".json")


def catalog_name_for(repo_id: str) -> str | None:
    """The catalog model whose ``hf_repo`` is ``repo_id`` (ids compare case-insensitively, as
    on the Hub), if any."""
    from gpuplan.catalog import model_entries

    wanted = repo_id.lower()
    return next(
        (
            name
            for name, entry in model_entries().items()
            if str(entry.get("hf_repo", "")).lower() == wanted
        ),
        None,
    )


def hub_cache_directory() -> Path:
    """The Hugging Face hub cache, by the environment variables huggingface_hub reads."""
    for variable in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if os.environ.get(variable):
            return Path(os.environ[variable]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache).expanduser() / "huggingface" / "hub"


def _from_layout(repo_id: str, cache: Path) -> Path | None:
    repository = cache / f"models--{repo_id.replace('/', '--')}"
    reference = repository / "refs" / "main"
    try:
        revision = reference.read_text(encoding="utf-8").strip() if reference.is_file() else "main"
    except OSError:
        return None
    found = repository / "snapshots" / revision / "config.json"
    return found if found.is_file() else None


def cached_config(repo_id: str) -> Path | None:
    """The cached ``config.json`` of ``repo_id``'s main revision, or None (module docstring)."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return _from_layout(repo_id, hub_cache_directory())
    found = try_to_load_from_cache(repo_id, "config.json", cache_dir=hub_cache_directory())
    return Path(found) if isinstance(found, str) else None


def not_cached_values(repo_id: str) -> dict[str, object]:
    """The values of message ``error.hf_not_cached``: ``repo_id`` is neither in the catalog nor
    in the cache (the directory named), and how to get it."""
    return {"repo": repo_id, "cache": str(hub_cache_directory())}
