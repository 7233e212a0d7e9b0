"""gpt-oss (OpenAI gpt-oss-20b and gpt-oss-120b; transformers ``modeling_gpt_oss.py``).

Every layer is a mixture of experts: a router ``Linear(d, E)`` with a bias, softmax over
the top-k logits (so the k weights sum to one), and ``num_local_experts`` experts laid out
as one ``gate_up_proj`` ``[E, d, 2F]`` with its bias ``[E, 2F]`` and one ``down_proj``
``[E, F, d]`` with its bias ``[E, d]``, ``F = intermediate_size`` (``GptOssExperts``): a
gated MLP with biases, whose activation is a clamped SwiGLU (``swiglu_limit``). Attention
has biases on q, k, v and o (``attention_bias``), grouped-query heads of ``head_dim`` 64,
and one learned sink logit per head (``GptOssAttention.sinks``); the layers alternate a
128-token sliding window and full attention, layer 0 windowed (``layer_types``). Two
RMSNorms per layer, untied embeddings. Sizes a config leaves out: ``GptOssConfig``'s
(gpt-oss-120b)."""

from __future__ import annotations

from gpuplan.workload.families.family import Family

GPT_OSS = Family(
    name="gpt_oss",
    key_aliases={
        "num_experts": ("num_local_experts",),
        "num_experts_per_tok": ("experts_per_token",),
    },
    qkv_bias=True,
    mlp_bias=True,
    output_bias_follows_attention_bias=True,
    attention_sinks=True,
    full_attention_every=2,
    router_always_normalizes=True,
    router_logit_bias=True,
    expert_width_from_intermediate=True,
    defaults={
        "num_hidden_layers": 36,
        "num_local_experts": 128,
        "vocab_size": 201088,
        "hidden_size": 2880,
        "intermediate_size": 2880,
        "head_dim": 64,
        "num_attention_heads": 64,
        "num_key_value_heads": 8,
        "sliding_window": 128,
        "max_position_embeddings": 131072,
        "num_experts_per_tok": 4,
        "router_aux_loss_coef": 0.001,
        "attention_bias": True,
    },
    hf_decoder_layer="GptOssDecoderLayer",
)
"""``GptOssConfig``'s defaults (huggingface/transformers ``configuration_gpt_oss.py``
@02b8f42b4240)."""

FAMILIES = (GPT_OSS,)
