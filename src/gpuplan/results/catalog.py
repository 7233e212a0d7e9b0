"""Catalog results: the models and GPUs listings and one model's or one GPU's full record
(``gpuplan models|model|gpus|gpu --json``, ``GET /api/models``, ``GET /api/gpus``).

Parameter counts are exact integers; memory is bytes, bandwidth bytes per second, compute
FLOP/s (dense), power watts and prices US dollars, as :mod:`gpuplan.hardware.gpu` states."""

from __future__ import annotations

from dataclasses import dataclass

RopeScalingValue = str | int | float | bool | list[float]
"""A ``rope_scaling`` value as config.json gives it: the method's name, a factor, a flag, or a
list of per-dimension factors (LongRoPE's ``short_factor``)."""


@dataclass(frozen=True)
class ModelListing:
    """One row of ``gpuplan models --json``: the name, family and Hugging Face repository,
    the exact parameter counts (``active_params``: per token, less for a mixture of experts)
    and the architecture's sizes."""

    name: str
    family: str
    hf_repo: str | None
    total_params: int
    active_params: int
    is_moe: bool
    num_layers: int
    hidden_size: int
    num_attention_heads: int
    num_kv_heads: int
    vocab_size: int
    max_position_embeddings: int | None


@dataclass(frozen=True)
class RouterSettingsResult:
    """A mixture-of-experts router's scoring and balancing
    (:class:`gpuplan.workload.model_settings.RouterSettings`)."""

    score_function: str
    normalizes_top_k: bool
    num_groups: int | None
    group_top_k: int | None
    scaling_factor: float | None
    expert_bias: bool
    aux_loss_coeff: float | None
    aux_loss_per_sequence: bool


@dataclass(frozen=True)
class ModelSettingsResult:
    """The rotary base, norm epsilon (``None``: the config gives none), the config's
    ``rope_scaling`` table (empty without) and the router of a mixture of experts."""

    rope_theta: float | None
    norm_eps: float | None
    rope_scaling: dict[str, RopeScalingValue]
    router: RouterSettingsResult | None


@dataclass(frozen=True)
class ParameterCounts:
    """Exact parameters by part (``ModelSpec.parameter_breakdown``); they sum to the total."""

    embeddings: int
    attention: int
    mlp: int
    experts: int
    norms: int
    head: int
    vision: int


@dataclass(frozen=True)
class ModelDetail:
    """``gpuplan model NAME --json``: every field of :class:`gpuplan.workload.model.ModelSpec`
    (config.json names), the exact totals and the parameters by part."""

    name: str
    family: str
    num_layers: int
    hidden_size: int
    num_attention_heads: int
    num_kv_heads: int
    head_dim: int
    intermediate_size: int
    vocab_size: int
    max_position_embeddings: int | None
    tie_word_embeddings: bool
    gated_mlp: bool
    hidden_act: str
    qkv_bias: bool
    output_bias: bool
    mlp_bias: bool
    norm: str
    norms_per_layer: int
    qk_norm: str
    position_embedding: str
    learned_position_rows: int
    embedding_norm: bool
    parallel_attention: bool
    num_experts: int
    num_experts_per_token: int
    moe_intermediate_size: int
    shared_expert_intermediate_size: int
    shared_expert_gate: bool
    first_dense_layers: int
    moe_layer_frequency: int
    moe_layer_offset: int
    router_bias: bool
    q_lora_rank: int | None
    kv_lora_rank: int | None
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int
    sliding_window: int | None
    sliding_window_layers: list[bool]
    attention_chunk_size: int | None
    chunked_attention_layers: list[bool]
    attention_sinks: bool
    vision_params: int
    settings: ModelSettingsResult
    defaults_taken: list[str]
    total_params: int
    active_params: int
    parameters: ParameterCounts


@dataclass(frozen=True)
class GpuEntry:
    """One GPU (``gpuplan gpu NAME --json``, each row of ``gpuplan gpus --json``): every spec
    of :class:`gpuplan.hardware.gpu.GPUSpec` in base units, dense peaks and measured
    achievable rates by datatype, all-reduce bus bandwidth with NVLS by payload bytes, the
    source and date of the record and of each field that has its own (``provenance``: field
    -> ``source``, ``observed``), and why no offer prices it (``no_public_offer``: ``reason``,
    ``source``, ``observed``; empty when one does)."""

    id: str
    name: str
    vendor: str
    aliases: list[str]
    form_factor: str
    architecture: str
    memory_bytes: int
    memory_quoted: str
    memory_type: str
    memory_bandwidth_bytes_per_second: float | None
    peak_flops: dict[str, float]
    achievable_matmul: dict[str, float]
    mamf_best_shape: dict[str, list[int]]
    same_die_as: str
    achievable_tf32_fixed_shape: float | None
    achievable_bf16_fixed_shape: float | None
    sustained_kernel_share: float | None
    achievable_hbm_copy_bytes_per_second: float | None
    achievable_hbm_read_bytes_per_second: float | None
    dcgm_hbm_floor_bytes_per_second: float | None
    achievable_all_reduce_busbw_bytes_per_second: float | None
    achievable_all_reduce_busbw_nvls_bytes_per_second: dict[str, float]
    nvls_min_ranks: int | None
    accumulate: str
    intra_node_link: str
    intra_node_bandwidth_bytes_per_second: float
    intra_node_bandwidth_vendor_bidirectional: float | None
    nvlink_domain_size: int
    peer_to_peer: bool
    pcie_generation: int
    gpus_per_node: int
    tdp_watts: float | None
    purchase_price_usd: float | None
    purchase_price_observed: str | None
    purchase_price_source: str | None
    vendor_datasheet: bool
    skypilot_names: list[str]
    gpuhunt_names: list[str]
    source: str
    observed: str
    provenance: dict[str, dict[str, str]]
    notes: str
    speed_model_gap: str
    no_public_offer: dict[str, str]
