"""DeepSeek-V2 and V3: multi-head latent attention and fine-grained mixture-of-experts.

Attention compresses the keys and values into a ``kv_lora_rank`` latent (and the queries
into ``q_lora_rank``, when set) with decoupled rotary heads (DeepSeek-V2, arXiv:2405.04434,
eq. 9-14). The first ``first_k_dense_replace`` layers are dense; from there every
``moe_layer_freq``-th layer index routes to ``n_routed_experts`` experts plus
``n_shared_experts`` always-on experts of ``moe_intermediate_size`` (transformers
``modeling_deepseek_v3.py``: ``layer_idx >= first_k_dense_replace and layer_idx %
moe_layer_freq == 0``). V3 scores with a sigmoid and balances by a per-expert bias
(``topk_method = "noaux_tc"``, arXiv:2412.19437 section 2.1.2)."""

from __future__ import annotations

from gpuplan.workload.families.family import Family

DEEPSEEK_KEYS = {"num_experts": ("n_routed_experts",), "num_shared_experts": ("n_shared_experts",)}

DEEPSEEK_V2 = Family(
    name="deepseek_v2",
    key_aliases=DEEPSEEK_KEYS,
    multi_latent_attention=True,
    moe_layer_offset=0,
    defaults={
        "vocab_size": 102400,
        "hidden_size": 4096,
        "intermediate_size": 11008,
        "num_hidden_layers": 30,
        "num_attention_heads": 32,
        "max_position_embeddings": 2048,
        "qk_nope_head_dim": 128,
        "qk_rope_head_dim": 64,
        "v_head_dim": 128,
        "kv_lora_rank": 512,
        "q_lora_rank": 1536,
        "moe_layer_freq": 1,
        "first_k_dense_replace": 0,
        "norm_topk_prob": False,
        "routed_scaling_factor": 1.0,
    },
    hf_decoder_layer="DeepseekV2DecoderLayer",
)
"""``DeepseekV2Config``'s defaults (huggingface/transformers @008e57439125)."""

DEEPSEEK_V3 = Family(
    name="deepseek_v3",
    key_aliases=DEEPSEEK_KEYS,
    multi_latent_attention=True,
    moe_layer_offset=0,
    router_score_function="sigmoid",
    defaults={
        "vocab_size": 129280,
        "hidden_size": 7168,
        "intermediate_size": 18432,
        "num_hidden_layers": 61,
        "num_attention_heads": 128,
        "max_position_embeddings": 4096,
        "qk_nope_head_dim": 128,
        "qk_rope_head_dim": 64,
        "v_head_dim": 128,
        "kv_lora_rank": 512,
        "q_lora_rank": 1536,
        "n_routed_experts": 256,
        "num_experts_per_tok": 8,
        "moe_intermediate_size": 2048,
        "n_shared_experts": 1,
        "first_k_dense_replace": 3,
        "moe_layer_freq": 1,
        "topk_method": "noaux_tc",
        "routed_scaling_factor": 2.5,
        "norm_topk_prob": True,
    },
    hf_decoder_layer="DeepseekV3DecoderLayer",
)
"""``DeepseekV3Config``'s defaults (huggingface/transformers @001f85b38fb4): its router's
``routed_scaling_factor`` 2.5 and ``norm_topk_prob`` true; its ``n_group`` 8 and
``topk_group`` 4 are left out, as they would not divide a smaller config's experts."""

FAMILIES = (DEEPSEEK_V2, DEEPSEEK_V3)
