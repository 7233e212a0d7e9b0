"""The Python API (DESIGN.md contract): ``estimate(scenario)`` returns the JSON-able result."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gpuplan.errors import InputError
from gpuplan.estimate.frameworks import FRAMEWORK_CODES, resolve_framework_codes
from gpuplan.estimate.memory import estimate_memory
from gpuplan.scenario import Scenario, parse_scenario


def _scalar(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value


def estimate(scenario: Mapping[str, Any] | str | Path | Scenario) -> dict[str, Any]:
    """Memory of one training layout on one cluster, in base units.

    ``scenario`` is a mapping, a YAML/JSON path, or a parsed :class:`Scenario`; its
    ``hardware.gpu`` is required (``plan`` searches hardware instead).
    """
    parsed = scenario if isinstance(scenario, Scenario) else parse_scenario(scenario)
    if parsed.cluster is None:
        raise InputError(
            "hardware.gpu: estimate needs a GPU (e.g. h100-sxm-80gb); `gpuplan gpus` lists them"
        )
    job, cluster = parsed.job, parsed.cluster
    strategy = parsed.strategy.resolved(job, cluster)
    layout = strategy.layout(job)
    memory = estimate_memory(
        job, layout, cluster.capacity_bytes, flash_attention=strategy.flash_attention
    )
    framework = FRAMEWORK_CODES[
        int(resolve_framework_codes(job.framework, layout.tp, layout.pp, layout.zero))
    ]
    warnings = layout_warnings(parsed, strategy)
    return {
        "memory": {
            "allocated_bytes": _scalar(memory.allocated_bytes),
            "reserved_bytes": _scalar(memory.reserved_bytes),
            "peak_bytes": _scalar(memory.peak_bytes),
            "parts": {name: _scalar(value) for name, value in memory.parts.items()},
            "fits": bool(memory.fits),
            "capacity_bytes": memory.capacity_bytes,
            "safety_margin": memory.safety_margin,
        },
        "strategy": {**strategy.to_dict(), "framework": framework},
        "model": {
            "name": job.model.name,
            "total_params": job.model.total_params,
            "active_params": job.model.active_params,
        },
        "hardware": {
            "gpu": cluster.gpu.id,
            "count": cluster.count,
            "gpus_per_node": cluster.gpus_per_node,
            "inter_node": cluster.inter_node,
        },
        "warnings": warnings,
    }


def layout_warnings(scenario: Scenario, strategy: Any) -> list[str]:
    """Layouts a practitioner would avoid, said in words."""
    warnings: list[str] = []
    cluster = scenario.cluster
    assert cluster is not None
    if strategy.tp > cluster.gpus_per_node:
        warnings.append(
            f"tp={strategy.tp} spans nodes ({cluster.gpus_per_node} GPUs per node): tensor-parallel "
            "all-reduces would cross the network on every layer"
        )
    micro_batches = strategy.micro_batches(scenario.job)
    if strategy.pp > 1 and micro_batches < strategy.pp:
        warnings.append(
            f"{micro_batches} micro-batches per step with pp={strategy.pp}: the pipeline never fills; "
            "raise global_batch or lower micro_batch"
        )
    return warnings
