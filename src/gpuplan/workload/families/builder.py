"""The shared builder: a family and a config.json mapping in, a checked ModelSpec out.

:func:`build_spec` runs the same steps for every family, each a small function that reads
some keys and decides some :class:`~gpuplan.workload.model.ModelSpec` fields: the attention
sizes and biases, the family's own ``adjust`` hook, the MLP and vocabulary, the experts and
their router, positions, sliding windows, multi-head latent attention, the remaining
traits, and the vision tower. :func:`check_architecture` then holds the sizes to
``limits.ARCHITECTURE_RANGES``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from gpuplan.workload.families.family import Family, Fields, Values
from gpuplan.workload.hf_config import (
    ConfigError,
    defaults_taken,
    flag,
    normalise_keys,
    optional_int,
    positive_int,
    require_sizes,
)
from gpuplan.workload.model import ModelSpec
from gpuplan.workload.model_settings import read_model_settings, read_router_settings

LAYER_TYPES = ("sliding_attention", "full_attention")
"""The ``layer_types`` of a model with sliding windows (transformers ``layer_types``)."""


def build_spec(
    family: Family,
    raw: Mapping[str, Any],
    name: str,
    vision_config: Mapping[str, Any] | None = None,
) -> ModelSpec:
    """The spec of ``raw`` (config.json keys) read as ``family``; ``vision_config`` (a
    multimodal config's, possibly empty) adds the family's vision tower."""
    require_sizes(raw, family.key_aliases)
    values = normalise_keys(raw, family.defaults, family.key_aliases)
    if family.map_keys is not None:
        family.map_keys(values)
    fields: Fields = {"name": name, "family": family.name}
    fields.update(attention_fields(values, family))
    if family.adjust is not None:
        family.adjust(values, fields)
    fields.update(mlp_fields(values, family, fields["hidden_size"]))
    fields.update(expert_fields(values, family, fields["intermediate_size"]))
    fields.update(position_fields(values, family))
    fields.update(window_fields(values, family, fields["num_layers"]))
    fields.update(latent_attention_fields(values, family))
    fields.update(trait_fields(values, family))
    fields["vision_params"] = vision_tower_params(family, vision_config, fields["hidden_size"])
    router = fields.pop("router")
    settings = replace(read_model_settings(values), router=router)
    spec = ModelSpec(
        **fields,
        settings=settings,
        defaults_taken=defaults_taken(raw, family.defaults, family.key_aliases),
    )
    return check_architecture(spec, head_dim_given=bool(values.get("head_dim")))


def attention_fields(values: Values, family: Family) -> Fields:
    """Layers, hidden size, query and KV heads (KV defaults to the query heads: multi-head
    attention), ``head_dim`` (defaults to hidden / heads), and the projections' biases: the
    family's, overridden by ``attention_bias`` and ``mlp_bias`` when it reads those keys.
    The layer count is held to its range first: later steps build per-layer patterns."""
    from gpuplan.limits import ARCHITECTURE_RANGES, in_range

    layers = positive_int(values, "num_hidden_layers")
    in_range(
        layers, "model.num_hidden_layers", *ARCHITECTURE_RANGES["num_hidden_layers"], ConfigError
    )
    hidden = positive_int(values, "hidden_size")
    heads = positive_int(values, "num_attention_heads")
    fields: Fields = {
        "num_layers": layers,
        "hidden_size": hidden,
        "num_attention_heads": heads,
        "num_kv_heads": optional_int(values, "num_key_value_heads") or heads,
        "head_dim": optional_int(values, "head_dim") or hidden // heads,
        "gated_mlp": family.gated_mlp,
        "norm": family.norm,
        "norms_per_layer": family.norms_per_layer,
        "qkv_bias": family.qkv_bias,
        "output_bias": family.output_bias,
        "mlp_bias": family.mlp_bias,
    }
    if family.reads_bias_keys:
        fields["qkv_bias"] = flag(values, "attention_bias", family.qkv_bias)
        if family.output_bias_follows_attention_bias:
            fields["output_bias"] = fields["qkv_bias"]
        fields["mlp_bias"] = flag(values, "mlp_bias", family.mlp_bias)
    return fields


def mlp_fields(values: Values, family: Family, hidden: int) -> Fields:
    """The dense MLP's width (a plain MLP defaults to ``4 * hidden``) and the vocabulary."""
    if not family.gated_mlp and values.get("intermediate_size") is None:
        values["intermediate_size"] = 4 * hidden
    return {
        "intermediate_size": positive_int(values, "intermediate_size"),
        "vocab_size": positive_int(values, "vocab_size"),
    }


def expert_fields(values: Values, family: Family, intermediate: int) -> Fields:
    """Routed experts (``num_experts``, ``num_experts_per_tok``, ``moe_intermediate_size``),
    shared experts (``num_shared_experts`` of the routed width, or
    ``shared_expert_intermediate_size``), which layers route (``first_k_dense_replace``,
    ``moe_layer_freq`` or ``decoder_sparse_step``) and the router's settings."""
    num_experts = optional_int(values, "num_experts") or 0
    per_token = optional_int(values, "num_experts_per_tok") or 0
    width = optional_int(values, "moe_intermediate_size") or 0
    fields: Fields = {
        "num_experts": num_experts,
        "num_experts_per_token": per_token,
        "moe_intermediate_size": width,
        "moe_layer_offset": family.moe_layer_offset,
        "router": None,
    }
    if not num_experts:
        return fields
    if family.expert_width_from_intermediate:
        width = width or intermediate
    if not width:
        raise ConfigError.of("error.config_moe_width")
    if per_token < 1 or per_token > num_experts:
        raise ConfigError.of("error.config_experts_per_token", experts=num_experts, value=per_token)
    shared_width = (optional_int(values, "num_shared_experts") or 0) * width
    shared_gate = False
    if values.get("shared_expert_intermediate_size"):
        shared_width = positive_int(values, "shared_expert_intermediate_size")
        shared_gate = family.shared_expert_gate
    first_dense = optional_int(values, "first_k_dense_replace") or 0
    frequency = (
        optional_int(values, "moe_layer_freq") or optional_int(values, "decoder_sparse_step") or 1
    )
    router = read_router_settings(
        values, num_experts, family.router_score_function, family.router_always_normalizes
    )
    fields.update(
        moe_intermediate_size=width,
        shared_expert_intermediate_size=shared_width,
        shared_expert_gate=shared_gate,
        first_dense_layers=first_dense,
        moe_layer_frequency=frequency,
        router_bias=family.router_logit_bias or router.expert_bias,
        router=router,
    )
    return fields


def position_fields(values: Values, family: Family) -> Fields:
    """``position_embedding_type`` (or the family's), the context, and for learned positions
    the table's rows: ``max_position_embeddings`` plus the family's offset (OPT: 2)."""
    position = str(values.get("position_embedding_type") or family.position_embedding)
    max_positions = optional_int(values, "max_position_embeddings")
    rows = 0
    if position == "learned":
        if max_positions is None:
            raise ConfigError.of("error.config_positions")
        rows = max_positions + family.learned_position_offset
    return {
        "position_embedding": position,
        "max_position_embeddings": max_positions,
        "learned_position_rows": rows,
    }


def window_fields(values: Values, family: Family, layers: int) -> Fields:
    """``sliding_window`` (off with ``use_sliding_window: false``) and which layers use it
    (:func:`sliding_window_layers`; empty when every layer does, no window when none does)."""
    given = values.get("sliding_window")
    window = given if isinstance(given, int) and not isinstance(given, bool) else None
    if not flag(values, "use_sliding_window", True):
        window = None
    pattern = sliding_window_layers(values, family, layers) if window else ()
    if pattern and not any(pattern):
        window = None
    if all(pattern):
        pattern = ()
    return {"sliding_window": window, "sliding_window_layers": pattern}


def sliding_window_layers(values: Values, family: Family, layers: int) -> tuple[bool, ...]:
    """Which layers attend through the sliding window: the config's ``layer_types``
    (``"sliding_attention"`` / ``"full_attention"``, one per layer) when given; else every
    ``sliding_window_pattern``-th layer (1-based) attends fully (Gemma 3, transformers
    ``Gemma3TextConfig``: layer ``i`` is windowed iff ``(i + 1) % pattern``), or the family's
    ``full_attention_every``; else, for Qwen, layers from ``max_window_layers`` on; else all."""
    kinds = values.get("layer_types")
    if kinds is not None:
        if not isinstance(kinds, list | tuple) or len(kinds) != layers:
            raise ConfigError.of("error.config_layer_types", layers=layers)
        unknown = next((kind for kind in kinds if kind not in LAYER_TYPES), None)
        if unknown is not None:
            raise ConfigError.of(
                "error.not_one_of",
                field="model.layer_types",
                value=repr(unknown),
                accepted=", ".join(LAYER_TYPES),
            )
        return tuple(kind == "sliding_attention" for kind in kinds)
    pattern = optional_int(values, "sliding_window_pattern") or family.full_attention_every
    if pattern:
        return tuple(bool((index + 1) % pattern) for index in range(layers))
    if family.windows_from_max_window_layers and values.get("max_window_layers") is not None:
        first = positive_int(values, "max_window_layers", allow_zero=True)
        return tuple(index >= first for index in range(layers))
    return ()


def latent_attention_fields(values: Values, family: Family) -> Fields:
    """Multi-head latent attention (DeepSeek-V2/V3), on when the family has it and the config
    gives ``kv_lora_rank``: ``q_lora_rank`` (0 or absent: no query compression) and the
    per-head ``qk_nope_head_dim``, ``qk_rope_head_dim`` and ``v_head_dim``."""
    kv_lora = optional_int(values, "kv_lora_rank") if family.multi_latent_attention else None
    fields: Fields = {
        "kv_lora_rank": kv_lora,
        "q_lora_rank": None,
        "qk_nope_head_dim": 0,
        "qk_rope_head_dim": 0,
        "v_head_dim": 0,
    }
    if kv_lora is None:
        return fields
    fields["q_lora_rank"] = optional_int(values, "q_lora_rank")
    if kv_lora:
        for key in ("qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"):
            fields[key] = optional_int(values, key) or 0
    return fields


def trait_fields(values: Values, family: Family) -> Fields:
    """The traits a config does not size: tied embeddings (``tie_word_embeddings``), the
    activation (``hidden_act`` or ``activation_function``), q/k norms, an embedding norm,
    parallel attention and attention sinks."""
    activation = values.get("hidden_act") or values.get("activation_function")
    return {
        "tie_word_embeddings": flag(values, "tie_word_embeddings", family.tie_word_embeddings),
        "hidden_act": str(activation or family.hidden_act),
        "qk_norm": family.qk_norm,
        "embedding_norm": family.embedding_norm,
        "parallel_attention": family.parallel_attention,
        "attention_sinks": family.attention_sinks,
    }


def vision_tower_params(
    family: Family, vision_config: Mapping[str, Any] | None, text_hidden: int
) -> int:
    """The family's vision tower and projector for a multimodal config (none: 0)."""
    if vision_config is None:
        return 0
    if family.vision_params is None:
        if vision_config:
            raise ConfigError.of("error.config_no_vision", family=family.name)
        return 0
    if not isinstance(vision_config, Mapping):
        raise ConfigError.of("error.config_vision_table")
    return family.vision_params(vision_config, text_hidden)


def check_architecture(spec: ModelSpec, head_dim_given: bool) -> ModelSpec:
    """``spec`` when its sizes lie in ``limits.ARCHITECTURE_RANGES``, its parameters are at most
    ``limits.MAX_PARAMETERS``, and its heads fit together:
    the heads divide the hidden size unless ``head_dim`` is given, and the KV heads divide the
    heads (grouped-query attention; not checked for MLA, whose KV is a latent)."""
    heads, kv_heads = spec.num_attention_heads, spec.num_kv_heads
    if not spec.uses_mla and not head_dim_given and spec.hidden_size % heads:
        raise ConfigError.of("error.config_heads", heads=heads, hidden=spec.hidden_size)
    if not spec.uses_mla and heads % kv_heads:
        raise ConfigError.of("error.config_kv_heads", kv_heads=kv_heads, heads=heads)
    _check_ranges(spec)
    from gpuplan.limits import MAX_PARAMETERS

    if spec.total_params > MAX_PARAMETERS:
        raise ConfigError.of(
            "error.config_too_large",
            params=f"{spec.total_params:.3g}",
            most=f"{MAX_PARAMETERS:.0e}",
        )
    return spec


def _check_ranges(spec: ModelSpec) -> None:
    """Each size of ``spec`` under its config.json name inside ``ARCHITECTURE_RANGES``."""
    from gpuplan.limits import ARCHITECTURE_RANGES, in_range

    sizes = {
        "num_hidden_layers": spec.num_layers,
        "hidden_size": spec.hidden_size,
        "intermediate_size": spec.intermediate_size,
        "num_attention_heads": spec.num_attention_heads,
        "num_key_value_heads": spec.num_kv_heads,
        "head_dim": spec.head_dim,
        "vocab_size": spec.vocab_size,
    }
    if spec.is_moe:
        sizes["num_experts"] = spec.num_experts
        sizes["num_experts_per_tok"] = spec.num_experts_per_token
        sizes["first_k_dense_replace"] = spec.first_dense_layers
        sizes["moe_layer_freq"] = spec.moe_layer_frequency
    optional = {
        "max_position_embeddings": spec.max_position_embeddings,
        "moe_intermediate_size": spec.moe_intermediate_size,
        "shared_expert_intermediate_size": spec.shared_expert_intermediate_size,
        "q_lora_rank": spec.q_lora_rank,
        "kv_lora_rank": spec.kv_lora_rank,
        "qk_nope_head_dim": spec.qk_nope_head_dim,
        "qk_rope_head_dim": spec.qk_rope_head_dim,
        "v_head_dim": spec.v_head_dim,
        "sliding_window": spec.sliding_window,
        "attention_chunk_size": spec.attention_chunk_size,
    }
    sizes.update({key: value for key, value in optional.items() if value})
    for key, value in sizes.items():
        low, high = ARCHITECTURE_RANGES[key]
        in_range(value, f"model.{key}", low, high, ConfigError)
