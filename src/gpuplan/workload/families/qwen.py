"""Qwen2, Qwen2.5 and Qwen3, dense and mixture-of-experts.

Qwen2 (and Qwen2-MoE) biases q, k and v but not o (transformers ``modeling_qwen2.py``);
Qwen3 drops the biases and normalises each head's q and k with an RMSNorm of ``head_dim``
(``modeling_qwen3.py``: ``q_norm``, ``k_norm``). Layers from ``max_window_layers`` on attend
through the sliding window when ``use_sliding_window`` (``Qwen2Config.layer_types``).
Qwen2-MoE adds a shared expert behind a sigmoid gate (``shared_expert_gate``, ``d -> 1``);
Qwen3-MoE has none. Every ``decoder_sparse_step``-th layer routes."""

from __future__ import annotations

from gpuplan.workload.families.family import Family

QWEN_DEFAULTS = {
    "vocab_size": 151936,
    "hidden_size": 4096,
    "intermediate_size": 22016,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "max_position_embeddings": 32768,
    "use_sliding_window": False,
}
"""``Qwen2Config``'s defaults."""

QWEN_MOE_ROUTER = {"norm_topk_prob": False, "router_aux_loss_coef": 0.001}
"""``Qwen2MoeConfig`` / ``Qwen3MoeConfig`` defaults (huggingface/transformers
``configuration_qwen3_moe.py`` @008e57439125)."""

QWEN2 = Family(
    name="qwen2",
    aliases=("qwen2_5",),
    qkv_bias=True,
    windows_from_max_window_layers=True,
    defaults=QWEN_DEFAULTS,
    hf_decoder_layer="Qwen2DecoderLayer",
    megatron_flags_complete=True,
)

QWEN3 = Family(
    name="qwen3",
    qk_norm="per_head",
    windows_from_max_window_layers=True,
    defaults={**QWEN_DEFAULTS, "head_dim": 128},
    output_bias_follows_attention_bias=True,
    hf_decoder_layer="Qwen3DecoderLayer",
    megatron_flags_complete=True,
)

QWEN3_MOE = Family(
    name="qwen3_moe",
    qk_norm="per_head",
    windows_from_max_window_layers=True,
    defaults={
        **QWEN_MOE_ROUTER,
        "use_sliding_window": False,
        "vocab_size": 151936,
        "hidden_size": 2048,
        "intermediate_size": 6144,
        "num_hidden_layers": 24,
        "num_attention_heads": 32,
        "num_key_value_heads": 4,
        "max_position_embeddings": 32768,
        "head_dim": 128,
        "num_experts": 128,
        "num_experts_per_tok": 8,
        "moe_intermediate_size": 768,
    },
    output_bias_follows_attention_bias=True,
    hf_decoder_layer="Qwen3MoeDecoderLayer",
    megatron_flags_complete=True,
)
"""``Qwen3MoeConfig``'s defaults (a 24-layer Qwen3-30B-A3B-like shape)."""

QWEN2_MOE = Family(
    name="qwen2_moe",
    qkv_bias=True,
    windows_from_max_window_layers=True,
    shared_expert_gate=True,
    defaults={
        **QWEN_MOE_ROUTER,
        "use_sliding_window": False,
        "vocab_size": 151936,
        "hidden_size": 2048,
        "intermediate_size": 5632,
        "num_hidden_layers": 24,
        "num_attention_heads": 16,
        "max_position_embeddings": 32768,
        "num_experts": 60,
        "num_experts_per_tok": 4,
        "moe_intermediate_size": 1408,
        "shared_expert_intermediate_size": 5632,
    },
    hf_decoder_layer="Qwen2MoeDecoderLayer",
)
"""``Qwen2MoeConfig``'s defaults (the Qwen1.5-MoE-A2.7B shape)."""

FAMILIES = (QWEN2, QWEN3, QWEN2_MOE, QWEN3_MOE)
