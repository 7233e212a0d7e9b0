"""OLMo 2: the Llama layout with the two RMSNorms after attention and after the MLP, and
RMSNorms over the full q (``H x head_dim``) and k (``K x head_dim``) projections (transformers
``modeling_olmo2.py``: ``q_norm``, ``k_norm``)."""

from __future__ import annotations

from gpuplan.workload.families.family import Family
from gpuplan.workload.families.llama import LLAMA_DEFAULTS

OLMO2 = Family(
    name="olmo2",
    qk_norm="full",
    defaults={**LLAMA_DEFAULTS, "vocab_size": 50304},
    output_bias_follows_attention_bias=True,
    hf_decoder_layer="Olmo2DecoderLayer",
)

FAMILIES = (OLMO2,)
