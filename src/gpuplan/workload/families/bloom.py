"""BLOOM (transformers ``modeling_bloom.py``): ALiBi instead of a position table, a LayerNorm
right after the word embeddings, biases everywhere, a plain 4x GELU MLP, tied embeddings."""

from __future__ import annotations

from gpuplan.workload.families.family import Family

BLOOM = Family(
    name="bloom",
    key_aliases={
        "num_hidden_layers": ("n_layer",),
        "num_attention_heads": ("n_head",),
        "hidden_size": ("n_embed",),
    },
    gated_mlp=False,
    qkv_bias=True,
    output_bias=True,
    mlp_bias=True,
    norm="layernorm",
    position_embedding="alibi",
    embedding_norm=True,
    tie_word_embeddings=True,
    hidden_act="gelu",
    defaults={
        "vocab_size": 250880,
        "hidden_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 8,
        "max_position_embeddings": 2048,
    },
)
"""``BloomConfig``'s defaults (a two-layer test shape; ``n_embed`` is its older name for the
hidden size)."""

FAMILIES = (BLOOM,)
