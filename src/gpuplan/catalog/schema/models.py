"""The model catalog (``catalog/data/models.toml``): one entry per model, keyed by its name.

``config`` holds the model's Hugging Face ``config.json`` architecture keys, as transformers
spells them; the model families (:mod:`gpuplan.workload.model`) read them and apply their own
defaults. A key the schema does not list is refused: a misspelled ``num_hiden_layers`` would
otherwise take the family's default silently. A key a new family needs is added to
:class:`ModelConfig` with its type.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from msgspec import UNSET, Meta, UnsetType

from gpuplan.catalog.schema.base import Count, Observed, Source, Table, Text, WholeNumber

Size = Count | UnsetType
Number = float | UnsetType
Flag = bool | UnsetType
Name = str | UnsetType


class RopeScaling(Table, kw_only=True):
    """transformers' ``rope_scaling`` (``rope_type`` or the older ``type`` names the method)."""

    rope_type: Name = UNSET
    type: Name = UNSET
    factor: Number = UNSET
    original_max_position_embeddings: Size = UNSET
    low_freq_factor: Number = UNSET
    high_freq_factor: Number = UNSET
    beta_fast: Number = UNSET
    beta_slow: Number = UNSET
    mscale: Number = UNSET
    mscale_all_dim: Number = UNSET
    attention_factor: Number = UNSET
    short_factor: list[float] | UnsetType = UNSET
    long_factor: list[float] | UnsetType = UNSET
    mrope_section: list[int] | UnsetType = UNSET
    truncate: Flag = UNSET


class VisionConfig(Table, kw_only=True):
    """The vision tower of a multimodal model (its parameters count toward the total)."""

    model_type: Name = UNSET
    hidden_size: Size = UNSET
    intermediate_size: Size = UNSET
    num_hidden_layers: Size = UNSET
    num_attention_heads: Size = UNSET
    patch_size: Size = UNSET
    image_size: Size = UNSET
    num_channels: Size = UNSET
    projector_input_dim: Size = UNSET
    projector_output_dim: Size = UNSET
    vision_output_dim: Size = UNSET
    pixel_shuffle_ratio: Number = UNSET


class ModelConfig(Table, kw_only=True):
    """config.json architecture keys; the alternative names of some families (``n_layer``,
    ``d_model``, ``num_kv_heads``, ...) are listed too."""

    model_type: Name = UNSET
    num_hidden_layers: Size = UNSET
    hidden_size: Size = UNSET
    num_attention_heads: Size = UNSET
    num_key_value_heads: Size = UNSET
    head_dim: Size = UNSET
    intermediate_size: Size = UNSET
    vocab_size: Size = UNSET
    max_position_embeddings: Size = UNSET
    tie_word_embeddings: Flag = UNSET
    hidden_act: Name = UNSET
    activation_function: Name = UNSET
    attention_bias: Flag = UNSET
    mlp_bias: Flag = UNSET
    add_qkv_bias: Flag = UNSET
    add_bias_linear: Flag = UNSET
    no_bias: Flag = UNSET
    rope_theta: Number = UNSET
    rope_scaling: RopeScaling | UnsetType = UNSET
    rms_norm_eps: Number = UNSET
    layer_norm_eps: Number = UNSET
    layer_norm_epsilon: Number = UNSET
    layernorm_epsilon: Number = UNSET
    position_embedding_type: Name = UNSET
    sliding_window: Size = UNSET
    use_sliding_window: Flag = UNSET
    sliding_window_pattern: Size = UNSET
    max_window_layers: WholeNumber | UnsetType = UNSET
    layer_types: list[Literal["full_attention", "sliding_attention"]] | UnsetType = UNSET
    multi_query: Flag = UNSET
    multi_query_attention: Flag = UNSET
    new_decoder_architecture: Flag = UNSET
    num_experts: Size = UNSET
    num_local_experts: Size = UNSET
    n_routed_experts: Size = UNSET
    num_experts_per_tok: Size = UNSET
    moe_intermediate_size: Size = UNSET
    shared_expert_intermediate_size: Size = UNSET
    n_shared_experts: WholeNumber | UnsetType = UNSET
    num_shared_experts: WholeNumber | UnsetType = UNSET
    decoder_sparse_step: Size = UNSET
    first_k_dense_replace: WholeNumber | UnsetType = UNSET
    moe_layer_freq: Size = UNSET
    norm_topk_prob: Flag = UNSET
    router_aux_loss_coef: Number = UNSET
    aux_loss_alpha: Number = UNSET
    seq_aux: Flag = UNSET
    topk_method: Name = UNSET
    scoring_func: Name = UNSET
    n_group: Size = UNSET
    topk_group: Size = UNSET
    routed_scaling_factor: Number = UNSET
    q_lora_rank: WholeNumber | UnsetType = UNSET
    kv_lora_rank: Size = UNSET
    qk_nope_head_dim: Size = UNSET
    qk_rope_head_dim: Size = UNSET
    v_head_dim: Size = UNSET
    n_layer: Size = UNSET
    num_layers: Size = UNSET
    n_layers: Size = UNSET
    n_embd: Size = UNSET
    d_model: Size = UNSET
    n_head: Size = UNSET
    n_heads: Size = UNSET
    n_head_kv: Size = UNSET
    num_kv_heads: Size = UNSET
    multi_query_group_num: Size = UNSET
    kv_channels: Size = UNSET
    ffn_hidden_size: Size = UNSET
    n_inner: Size = UNSET
    ffn_dim: Size = UNSET
    expansion_ratio: Size = UNSET
    padded_vocab_size: Size = UNSET
    n_positions: Size = UNSET
    max_seq_len: Size = UNSET
    seq_length: Size = UNSET
    intermediate_size_mlp: Size = UNSET
    interleave_moe_layer_step: Size = UNSET
    attention_chunk_size: Size = UNSET
    no_rope_layers: list[int] | UnsetType = UNSET
    use_qk_norm: Flag = UNSET
    initial_context_length: Size = UNSET
    experts_per_token: Size = UNSET
    swiglu_limit: Number = UNSET
    text_config: ModelConfig | UnsetType = UNSET
    vision_config: VisionConfig | UnsetType = UNSET


class ModelEntry(Table, kw_only=True):
    """One catalog model (its name is its key under ``models``), with the exact published
    parameter count the architecture must reproduce."""

    entry_kind: ClassVar[str] = "model"

    hf_repo: Annotated[
        str, Meta(min_length=1, description="the Hugging Face Hub repo, org/name (and a note)")
    ]
    reference_total_params: Annotated[int, Meta(gt=0, description="parameters, a whole number")]
    reference_kind: Literal["published", "published-explained", "computed"]
    reference_source: Text
    source: Source
    observed: Observed
    config: ModelConfig
    reference_active_params: (
        Annotated[int, Meta(gt=0, description="active parameters per token, a whole number")]
        | UnsetType
    ) = UNSET
    notes: Annotated[str, Meta(description="free text")] = ""


class ModelsFile(Table, kw_only=True):
    """``[models.NAME]`` entries."""

    models: dict[str, ModelEntry]
