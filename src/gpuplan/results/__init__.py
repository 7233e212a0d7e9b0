"""Typed results: what each use case (``gpuplan.services``) answers, as frozen dataclasses.

- ``estimate``: ``gpuplan estimate --json`` and ``gpuplan.estimate``, :class:`~.estimate.Estimate`
- ``memory``: ``gpuplan memory --json``, :class:`~.estimate.MemoryResult`
- ``memory-estimate``: ``gpuplan.services.estimate.memory``, :class:`~.estimate.MemoryEstimate`
- ``plan``: ``gpuplan plan --json``, :class:`~.plan.PlanSearch`
- ``plans``: ``gpuplan.plan``, a list of :class:`~.plan.PlanRow`
- ``quote``: ``gpuplan quote --json``, :class:`~.pricing.Quote`
- ``tco``: ``gpuplan tco --json``, :class:`~.pricing.Tco`
- ``offers``: ``gpuplan offers --json``, a list of :class:`~.pricing.OfferEntry`
- ``bench-run``: ``gpuplan bench --json`` and ``gpuplan bench show --json``,
  :class:`~.bench.BenchRun`
- ``bench-history``: ``gpuplan bench history --json``, a list of
  :class:`gpuplan.store.StoredRunSummary`
- ``bench-compare``: ``gpuplan bench compare RUN OFFER --json``, :class:`~.bench.BenchCompare`
- ``bench-launch``: ``gpuplan bench --collectives --json``, :class:`~.bench.BenchLaunch`
- ``models``: ``gpuplan models --json`` and ``GET /api/models``, a list of
  :class:`~.catalog.ModelListing`
- ``model``: ``gpuplan model NAME --json``, :class:`~.catalog.ModelDetail`
- ``gpus``: ``gpuplan gpus --json`` and ``GET /api/gpus``, a list of :class:`~.catalog.GpuEntry`
- ``gpu``: ``gpuplan gpu NAME --json``, :class:`~.catalog.GpuEntry`
- ``audit``: ``gpuplan audit USAGE.csv --offer ID --json``, :class:`~.audit.Audit`
- ``offers-check``: ``gpuplan offers --check --json``, :class:`~.offers_file.OffersCheck`
- ``offers-import``: ``gpuplan offers import FILE --json``, :class:`~.offers_file.OffersImport`

Field names carry their units (``step_seconds``, ``peak_bytes``, ``tokens_per_second``);
quantities are base units (bytes, seconds, FLOP/s, tokens) and money is a number in units of
the currency its result names (the JSON contract in ``gpuplan``'s docstring). A value that
does not apply is ``None``. :func:`build` makes a result from the computation's values (checking every field's
type); :func:`gpuplan.jsonable.jsonable` is the one encoder that turns any result into JSON
values. ``gpuplan.results.schema`` publishes the JSON Schema of each name.
"""

from __future__ import annotations

import importlib
from typing import Any

from gpuplan.errors import InputError

RESULT_TYPES: dict[str, tuple[str, str, bool]] = {
    "estimate": ("gpuplan.results.estimate", "Estimate", False),
    "memory": ("gpuplan.results.estimate", "MemoryResult", False),
    "memory-estimate": ("gpuplan.results.estimate", "MemoryEstimate", False),
    "plan": ("gpuplan.results.plan", "PlanSearch", False),
    "plans": ("gpuplan.results.plan", "PlanRow", True),
    "quote": ("gpuplan.results.pricing", "Quote", False),
    "tco": ("gpuplan.results.pricing", "Tco", False),
    "offers": ("gpuplan.results.pricing", "OfferEntry", True),
    "bench-run": ("gpuplan.results.bench", "BenchRun", False),
    "bench-history": ("gpuplan.store", "StoredRunSummary", True),
    "bench-compare": ("gpuplan.results.bench", "BenchCompare", False),
    "bench-launch": ("gpuplan.results.bench", "BenchLaunch", False),
    "models": ("gpuplan.results.catalog", "ModelListing", True),
    "model": ("gpuplan.results.catalog", "ModelDetail", False),
    "gpus": ("gpuplan.results.catalog", "GpuEntry", True),
    "gpu": ("gpuplan.results.catalog", "GpuEntry", False),
    "audit": ("gpuplan.results.audit", "Audit", False),
    "offers-check": ("gpuplan.results.offers_file", "OffersCheck", False),
    "offers-import": ("gpuplan.results.offers_file", "OffersImport", False),
}
"""Result name -> (module, type, whether the result is a list of that type)."""


def result_type(name: str) -> Any:
    """The type of result ``name`` (a key of :data:`RESULT_TYPES`): a dataclass, or a list of
    one."""
    if name not in RESULT_TYPES:
        raise InputError.of("error.result_name", name=repr(name), accepted=", ".join(RESULT_TYPES))
    module, attribute, is_list = RESULT_TYPES[name]
    item = getattr(importlib.import_module(module), attribute)
    return list[item] if is_list else item  # type: ignore[valid-type]


def build(name: str, values: Any) -> Any:
    """Result ``name`` made from the computation's values (mappings with the result's keys;
    Decimals, NumPy numbers and non-finite floats as :func:`~gpuplan.jsonable.jsonable` turns
    them); a value of the wrong type is a ``msgspec.ValidationError`` naming its path."""
    import msgspec

    from gpuplan.jsonable import jsonable

    return msgspec.convert(jsonable(values), result_type(name))
