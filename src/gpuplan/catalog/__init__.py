"""The built-in catalog: models and GPUs, each number with its source and observed date.

Data lives in TOML (and the validation tables in CSV) under ``catalog/data/``. This package is
the only code that opens that package data: every file is read here, checked against its
schema (``catalog/schema/``), and handed on; every other module receives specs (``ModelSpec``,
``GPUSpec``) or checked tables and never reads these files itself.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import replace
from functools import cache
from importlib import resources
from typing import Any

from gpuplan.catalog.parsed_cache import parse_catalog_toml
from gpuplan.errors import InputError
from gpuplan.hardware.gpu import GPUSpec
from gpuplan.limits import shown
from gpuplan.workload.model import ModelSpec


class CatalogError(InputError, LookupError):
    """A name the catalog does not hold; the message suggests the closest ones."""


SCHEMA_OF_FILE = {
    "models.toml": "models",
    "gpus.toml": "gpus",
    "currency.toml": "currency",
    "datacenter.toml": "datacenter",
    "efficiency.toml": "efficiency",
    "offers": "offers",
}
"""Which schema (``catalog.schema.SCHEMA_TYPES``) each built-in file follows; ``offers`` covers
every ``offers/*.toml``."""


def _data(*parts: str) -> Any:
    return resources.files("gpuplan.catalog").joinpath("data", *parts)


def read_catalog_toml(*parts: str) -> dict[str, Any]:
    """The built-in data file ``catalog/data/<parts...>``, parsed (through ``parsed_cache``)."""
    return parse_catalog_toml(_data(*parts).read_bytes(), "/".join(parts))


def read_catalog_text(*parts: str) -> str:
    """The text of the built-in data file ``catalog/data/<parts...>`` (the validation CSVs)."""
    return str(_data(*parts).read_text("utf-8"))


def has_catalog_file(*parts: str) -> bool:
    return bool(_data(*parts).is_file())


def checked_catalog_toml(*parts: str) -> dict[str, Any]:
    """:func:`read_catalog_toml`, checked against the file's schema (:data:`SCHEMA_OF_FILE`):
    a key the schema does not hold, a wrong type or unit, a future date is a
    :class:`CatalogError` naming the file, the entry and the key."""
    from gpuplan.catalog.schema import decode

    document = read_catalog_toml(*parts)
    decode(document, SCHEMA_OF_FILE[parts[0]], "/".join(parts), CatalogError)
    return document


def offer_files() -> list[str]:
    """The built-in offers files, ``offers/<provider>.toml``, in name order."""
    folder = _data("offers")
    return sorted(
        f"offers/{entry.name}" for entry in folder.iterdir() if entry.name.endswith(".toml")
    )


def offer_documents() -> list[tuple[str, dict[str, Any]]]:
    """``(origin, parsed TOML)`` of every built-in offers file; the pricing package checks
    and reads them (``pricing.offers.parse_provider``)."""
    return [(name, read_catalog_toml(*name.split("/"))) for name in offer_files()]


@cache
def _read(filename: str) -> dict[str, Any]:
    return checked_catalog_toml(filename)


def efficiency_record() -> dict[str, Any]:
    """The speed model's fit as ``benchmarks/fit_speed.py`` wrote it (``efficiency.toml``),
    or an empty table when no fit has been recorded."""
    return _read("efficiency.toml") if has_catalog_file("efficiency.toml") else {}


def model_entries() -> dict[str, dict[str, Any]]:
    """Raw catalog entries by name: config.json keys under ``config`` plus provenance."""
    return _read("models.toml")["models"]


def gpu_entries() -> dict[str, dict[str, Any]]:
    """Raw catalog entries by GPU id."""
    return _read("gpus.toml")["gpus"]


def model_names() -> list[str]:
    return list(model_entries())


def gpu_ids() -> list[str]:
    return list(gpu_entries())


def _suggest(name: str, candidates: list[str], kind: str, command: str) -> CatalogError:
    close = difflib.get_close_matches(name.lower(), candidates, n=3, cutoff=0.5)
    values = {"kind": kind, "name": shown(name), "command": command}
    if close:
        return CatalogError.of("error.unknown_name_hint", **values, close=", ".join(close))
    return CatalogError.of("error.unknown_name", **values)


@cache
def load_model(name: str) -> ModelSpec:
    """The catalog model ``name`` (e.g. ``llama-3.1-8b``), built through ``from_hf_config``.
    An entry's config is the published config.json, so the defaults it leaves to the family are
    the model's own and no warning names them (``defaults_taken`` is empty)."""
    entries = model_entries()
    key = name.strip().lower()
    if key not in entries:
        raise _suggest(name, list(entries), "model", "models")
    spec = ModelSpec.from_hf_config(entries[key]["config"], name=key)
    return replace(spec, defaults_taken=())


def _alias_key(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


@cache
def _gpu_alias_index() -> dict[str, str]:
    index: dict[str, str] = {}
    for gpu_id, entry in gpu_entries().items():
        index[_alias_key(gpu_id)] = gpu_id
        for alias in entry.get("aliases", []):
            index[_alias_key(alias)] = gpu_id
    return index


CLOUD_NAME_KEYS = ("skypilot_names", "gpuhunt_names")
"""gpus.toml keys that list the names a cloud catalog sells a GPU under."""


@cache
def gpus_by_cloud_name(key: str) -> dict[str, tuple[str, ...]]:
    """Catalog GPU ids by the name a cloud catalog uses (``key``: one of
    :data:`CLOUD_NAME_KEYS`), the name lower-cased, the ids in gpus.toml order. One name may
    stand for several GPUs (SkyPilot's ``H100`` is sold as the SXM and the PCIe card)."""
    if key not in CLOUD_NAME_KEYS:
        raise CatalogError(
            f"unknown cloud name key {key!r}; accepted: {', '.join(CLOUD_NAME_KEYS)}"
        )
    index: dict[str, tuple[str, ...]] = {}
    for gpu_id, entry in gpu_entries().items():
        for name in entry.get(key, ()):
            index[name.lower()] = (*index.get(name.lower(), ()), gpu_id)
    return index


def resolve_gpu_id(name: str) -> str:
    """Map an id or a known alias ("H100 SXM", "A100-80GB", "RTX4090", "910B") to a catalog id."""
    gpu_id = _gpu_alias_index().get(_alias_key(name))
    if gpu_id is None:
        candidates = list(gpu_entries())
        for entry in gpu_entries().values():
            candidates.extend(alias.lower() for alias in entry.get("aliases", []))
        raise _suggest(name, candidates, "GPU", "gpus")
    return gpu_id


@cache
def load_gpu(name: str) -> GPUSpec:
    """The catalog GPU for an id or alias."""
    gpu_id = resolve_gpu_id(name)
    return gpu_spec_from_entry(gpu_id, gpu_entries()[gpu_id])


def gpu_spec_from_entry(gpu_id: str, raw: dict[str, Any]) -> GPUSpec:
    """A ``GPUSpec`` from one gpus.toml entry, already checked against the GPU schema
    (``catalog/schema/gpus.py``): shapes become tuples, payload keys integers."""
    entry = dict(raw)
    for key in ("aliases", *CLOUD_NAME_KEYS):
        entry[key] = tuple(entry.get(key, ()))
    entry["peak_flops"] = {k: float(v) for k, v in entry["peak_flops"].items()}
    entry["achievable_matmul"] = {
        k: float(v) for k, v in entry.get("achievable_matmul", {}).items()
    }
    entry["mamf_best_shape"] = {
        dtype: tuple(dims) for dtype, dims in entry.get("mamf_best_shape", {}).items()
    }
    entry["achievable_all_reduce_busbw_nvls"] = {
        int(size): float(busbw)
        for size, busbw in entry.get("achievable_all_reduce_busbw_nvls", {}).items()
    }
    same_die = entry.get("same_die_as")
    if same_die is not None and same_die not in gpu_entries():
        raise CatalogError(
            f"gpus.toml: gpu {gpu_id!r}: same_die_as: {shown(same_die)} is not a catalog id"
        )
    return GPUSpec(id=gpu_id, **entry)


def uncatalogued_best_shapes() -> dict[str, dict[str, Any]]:
    """Published MAMF best shapes of accelerators the catalog holds no entry for (GH200,
    MI325X, MI355X), by ml-engineering's name: ``mamf_best_shape``, ``source``, ``observed``."""
    entries: dict[str, dict[str, Any]] = _read("gpus.toml").get("uncatalogued", {})
    return {
        name: {
            **entry,
            "mamf_best_shape": {
                dtype: tuple(dims) for dtype, dims in entry["mamf_best_shape"].items()
            },
        }
        for name, entry in entries.items()
    }


def all_gpus() -> list[GPUSpec]:
    return [load_gpu(gpu_id) for gpu_id in gpu_ids()]


def all_models() -> list[ModelSpec]:
    return [load_model(name) for name in model_names()]


def datacenter_defaults() -> dict[str, dict[str, Any]]:
    """PUE, electricity price and host power of an owned node, each with source and date."""
    return _read("datacenter.toml")
