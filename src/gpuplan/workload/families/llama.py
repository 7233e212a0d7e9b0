"""Llama and the families that share its layout: Mistral and Yi.

Pre-norm decoder layers with two RMSNorms, rotary positions, a SwiGLU MLP, no biases unless
``attention_bias`` (which Llama's ``o_proj`` shares) or ``mlp_bias`` says so (transformers
``modeling_llama.py``, ``modeling_mistral.py``)."""

from __future__ import annotations

from gpuplan.workload.families.family import Family

LLAMA_DEFAULTS = {
    "vocab_size": 32000,
    "hidden_size": 4096,
    "intermediate_size": 11008,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "max_position_embeddings": 2048,
}
"""``LlamaConfig``'s defaults (the Llama 2 7B shape), which several families start from."""

LLAMA = Family(
    name="llama",
    defaults=LLAMA_DEFAULTS,
    output_bias_follows_attention_bias=True,
    hf_decoder_layer="LlamaDecoderLayer",
    megatron_flags_complete=True,
)

MISTRAL = Family(
    name="mistral",
    defaults={
        **LLAMA_DEFAULTS,
        "intermediate_size": 14336,
        "num_key_value_heads": 8,
        "max_position_embeddings": 131072,
    },
    output_bias_follows_attention_bias=True,
    hf_decoder_layer="MistralDecoderLayer",
    megatron_flags_complete=True,
)
"""``MistralConfig``'s defaults: Mistral 7B's MLP, grouped-query attention and context."""

YI = Family(name="yi", defaults=LLAMA_DEFAULTS)
"""Yi: the Llama layout under its own ``model_type`` (older remote-code configs)."""

FAMILIES = (LLAMA, MISTRAL, YI)
