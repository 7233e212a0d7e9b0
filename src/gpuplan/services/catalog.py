"""The catalog listings and records: every built-in model and GPU, and one model or GPU, as
typed results (``gpuplan.results.catalog``) that the CLI's ``--json``, the web API and the
catalog tables (``report.catalog``, after :func:`gpuplan.jsonable.jsonable`) give."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpuplan.results import build

if TYPE_CHECKING:
    from gpuplan.hardware.gpu import GPUSpec
    from gpuplan.results.catalog import GpuEntry, ModelDetail, ModelListing
    from gpuplan.workload.model import ModelSpec


def models() -> list[ModelListing]:
    """Each built-in model: its name, family and Hugging Face repository, the exact parameter
    counts (total and, for a mixture of experts, active per token) and the architecture's
    sizes."""
    from gpuplan.catalog import all_models, model_entries

    entries = model_entries()
    listing: list[ModelListing] = build(
        "models",
        [
            {
                "name": model.name,
                "family": model.family,
                "hf_repo": entries[model.name].get("hf_repo"),
                "total_params": model.total_params,
                "active_params": model.active_params,
                "is_moe": model.is_moe,
                "num_layers": model.num_layers,
                "hidden_size": model.hidden_size,
                "num_attention_heads": model.num_attention_heads,
                "num_kv_heads": model.num_kv_heads,
                "vocab_size": model.vocab_size,
                "max_position_embeddings": model.max_position_embeddings,
            }
            for model in all_models()
        ],
    )
    return listing


def model(spec: ModelSpec) -> ModelDetail:
    """The full record of ``spec`` (``ModelSpec.to_dict``), with ``settings.rope_scaling`` as
    config.json's table (key -> value) rather than the spec's ``(key, value)`` pairs."""
    from gpuplan.jsonable import jsonable

    values: dict[str, Any] = jsonable(spec.to_dict())
    values["settings"]["rope_scaling"] = dict(values["settings"]["rope_scaling"])
    result: ModelDetail = build("model", values)
    return result


def gpus() -> list[GpuEntry]:
    """Each built-in GPU with every spec in base units, its source and date
    (``GPUSpec.to_dict``)."""
    from gpuplan.catalog import all_gpus

    listing: list[GpuEntry] = build("gpus", [gpu.to_dict() for gpu in all_gpus()])
    return listing


def gpu(spec: GPUSpec) -> GpuEntry:
    """The record of ``spec`` (``GPUSpec.to_dict``)."""
    result: GpuEntry = build("gpu", spec.to_dict())
    return result
