"""gpuplan: plan GPU rentals for LLM training.

The public API is two functions, imported lazily so that ``import gpuplan`` stays fast::

    import gpuplan
    result = gpuplan.estimate("examples/llama-8b-fsdp-8xh100.yaml")   # or a mapping
    result["memory"]["peak_bytes"], result["memory"]["fits"], result["duration"]["days"]
    plans = gpuplan.plan({"model": "llama-3.1-8b", "method": "qlora", "tokens": "100M"},
                         objective="cost", budget="¥2000", deadline="30d")

``estimate(scenario, profile=None)`` answers one layout on one cluster: ``memory``
(``allocated_bytes``, ``reserved_bytes``, ``peak_bytes``, ``parts``, ``fits``,
``capacity_bytes``), ``throughput`` (``step_seconds``, ``tokens_per_second``, ``mfu``, ``hfu``,
``breakdown``), ``reliability``, ``duration`` (``seconds``, ``days``), ``strategy``, ``model``,
``hardware``, ``job`` and ``warnings``. ``plan(scenario, objective, budget, deadline, ...)``
returns every feasible plan, best first, each with its ``gpu``, ``count``, ``machine``,
``strategy``, ``memory``, ``throughput``, ``duration``, ``cost`` and ``warnings``.

Both return JSON values, the same as ``gpuplan estimate --json`` and ``gpuplan plan --json``
print: ``json.dumps`` takes them as they are. Quantities are in base units (bytes, seconds,
FLOP/s, tokens); money is a number in the currency its mapping names (``cost["currency"]``:
``CNY``, ``USD``, ``EUR``); a value that does not apply is ``null``. A warning is
a sentence or a notice ``{"code", "values", "text"}`` (``gpuplan.notices``). A scenario is a
mapping or a YAML/JSON file whose keys the README's "Scenarios" section lists; bad input raises
``gpuplan.errors.InputError`` with a one-line message naming the field.

The same answers as typed results (frozen dataclasses, ``gpuplan.results``) come from the use
cases in ``gpuplan.services`` (``gpuplan.services.estimate.estimate``,
``gpuplan.services.plan.plan``); the JSON Schema of each result ships with the package
(``gpuplan.results.schema.shipped_schema_text("plan")``).
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
__all__ = ["__version__", "estimate", "plan"]


def __getattr__(name: str) -> Any:
    if name == "estimate":
        import gpuplan.estimate

        return gpuplan.estimate
    if name == "plan":
        from gpuplan.api import plan

        return plan
    raise AttributeError(f"module 'gpuplan' has no attribute {name!r}")
