"""Model families: one small module per family, found and registered here.

Each module of this package that defines ``FAMILIES`` (a tuple of
:class:`~gpuplan.workload.families.family.Family`) registers them: its traits, its Hugging
Face key mapping and its builder hooks live in that module alone. Adding a family is adding
a module; :func:`registered_families` finds it without a list to update
(CONTRIBUTING.md, "Add a model").

:func:`spec_from_config` is what :meth:`ModelSpec.from_hf_config
<gpuplan.workload.model.ModelSpec.from_hf_config>` runs: read the file, unwrap a multimodal
config's ``text_config``, pick the family by ``model_type`` (Llama when absent) and build.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuplan.workload.families.family import Family
from gpuplan.workload.hf_config import ConfigError, read_config_file

if TYPE_CHECKING:
    from gpuplan.workload.model import ModelSpec

DEFAULT_MODEL_TYPE = "llama"
"""The family of a config without ``model_type``."""


@cache
def registered_families() -> dict[str, Family]:
    """Every family of every module in this package, by name."""
    found: dict[str, Family] = {}
    for module_info in sorted(pkgutil.iter_modules(__path__), key=lambda info: info.name):
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        for family in getattr(module, "FAMILIES", ()):
            if family.name in found:
                raise RuntimeError(f"family {family.name!r} is defined twice")
            found[family.name] = family
    return dict(sorted(found.items()))


@cache
def _names() -> dict[str, str]:
    """``model_type`` spellings -> family name: each name and each of its aliases."""
    names: dict[str, str] = {}
    for family in registered_families().values():
        for spelling in (family.name, *family.aliases):
            if names.setdefault(spelling, family.name) != family.name:
                raise RuntimeError(f"model_type {spelling!r} names two families")
    return names


def family_named(model_type: str) -> Family:
    """The family of ``model_type`` (case-insensitive; aliases accepted)."""
    name = _names().get(model_type.lower())
    if name is None:
        known = ", ".join(registered_families())
        raise ConfigError.of("error.config_family", value=repr(model_type), accepted=known)
    return registered_families()[name]


def spec_from_config(config: Mapping[str, Any] | str | Path, name: str | None = None) -> ModelSpec:
    """The spec of a config.json (path) or a mapping of its keys (``ModelSpec.from_hf_config``).

    A multimodal config (``text_config`` and ``vision_config``) is read as its text model,
    with the outer keys beneath the text keys; the text family counts the vision tower.
    """
    from gpuplan.workload.families.builder import build_spec

    if isinstance(config, str | Path):
        config = read_config_file(Path(config))
    if not isinstance(config, Mapping):
        raise ConfigError.of("error.config_mapping")
    raw = dict(config)
    model_type = str(raw.get("model_type") or DEFAULT_MODEL_TYPE).lower()
    vision_config: Mapping[str, Any] | None = None
    if isinstance(raw.get("text_config"), Mapping):
        vision_config = raw.get("vision_config") or {}
        text = dict(raw["text_config"])
        text.setdefault("model_type", model_type)
        raw = {
            **{k: v for k, v in raw.items() if k not in ("text_config", "vision_config")},
            **text,
        }
        model_type = str(text.get("model_type") or model_type).lower()
    family = family_named(model_type)
    spec_name = name or str(raw.get("_name_or_path") or raw.get("name") or model_type)
    return build_spec(family, raw, spec_name, vision_config)
