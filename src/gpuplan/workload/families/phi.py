"""Phi-3 and Phi-4: the Llama layout with fused ``qkv_proj`` and ``gate_up_proj`` (the same
weights) and no biases (transformers ``modeling_phi3.py``)."""

from __future__ import annotations

from gpuplan.workload.families.family import Family

PHI3 = Family(
    name="phi3",
    defaults={
        "vocab_size": 32064,
        "hidden_size": 3072,
        "intermediate_size": 8192,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "max_position_embeddings": 4096,
    },
    hf_decoder_layer="Phi3DecoderLayer",
)
"""``Phi3Config``'s defaults (Phi-3 mini)."""

FAMILIES = (PHI3,)
