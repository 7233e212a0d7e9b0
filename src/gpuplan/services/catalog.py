"""The catalog listings: every built-in model and GPU as the CLI's ``--json``, the web API and
the catalog tables (``report.catalog``) give them."""

from __future__ import annotations

from typing import Any


def models() -> list[dict[str, Any]]:
    """Each built-in model: its name, family and Hugging Face repository, the exact parameter
    counts (total and, for a mixture of experts, active per token) and the architecture's
    sizes."""
    from gpuplan.catalog import all_models, model_entries

    entries = model_entries()
    return [
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
    ]


def gpus() -> list[dict[str, Any]]:
    """Each built-in GPU with every spec in base units, its source and date
    (``GPUSpec.to_dict``)."""
    from gpuplan.catalog import all_gpus

    return [gpu.to_dict() for gpu in all_gpus()]
