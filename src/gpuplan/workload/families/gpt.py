"""GPT-2 (and the GPT-3 paper's layout in GPT-2 form) and OPT: learned absolute positions,
LayerNorms with biases, a plain 4x MLP, biases on every linear, tied embeddings
(transformers ``modeling_gpt2.py``, ``modeling_opt.py``). OPT's position table holds two
rows more than its context (``OPTLearnedPositionalEmbedding``'s offset of 2)."""

from __future__ import annotations

from gpuplan.workload.families.family import Family

GPT2 = Family(
    name="gpt2",
    aliases=("gpt3",),
    key_aliases={
        "num_hidden_layers": ("n_layer",),
        "hidden_size": ("n_embd",),
        "num_attention_heads": ("n_head",),
        "intermediate_size": ("n_inner",),
        "max_position_embeddings": ("n_positions",),
    },
    gated_mlp=False,
    qkv_bias=True,
    output_bias=True,
    mlp_bias=True,
    norm="layernorm",
    position_embedding="learned",
    tie_word_embeddings=True,
    hidden_act="gelu_new",
    defaults={
        "vocab_size": 50257,
        "hidden_size": 768,
        "num_hidden_layers": 12,
        "num_attention_heads": 12,
        "max_position_embeddings": 1024,
    },
)
"""``GPT2Config``'s defaults (GPT-2 small); its sizes under GPT-2's own key names."""

OPT = Family(
    name="opt",
    key_aliases={"intermediate_size": ("ffn_dim",)},
    gated_mlp=False,
    qkv_bias=True,
    output_bias=True,
    mlp_bias=True,
    norm="layernorm",
    position_embedding="learned",
    learned_position_offset=2,
    tie_word_embeddings=True,
    hidden_act="relu",
    defaults={
        "vocab_size": 50272,
        "hidden_size": 768,
        "num_hidden_layers": 12,
        "num_attention_heads": 12,
        "intermediate_size": 3072,
        "max_position_embeddings": 2048,
    },
)
"""``OPTConfig``'s defaults (OPT-125M)."""

FAMILIES = (GPT2, OPT)
