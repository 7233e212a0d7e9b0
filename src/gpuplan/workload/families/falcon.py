"""Falcon (transformers ``modeling_falcon.py``): attention and MLP in parallel off one
LayerNorm, a plain 4x GELU MLP, rotary positions, tied embeddings. The 7B has one KV head
(``multi_query``); ``new_decoder_architecture`` (40B, 180B) has ``num_kv_heads`` KV groups and
two LayerNorms per layer (``ln_attn``, ``ln_mlp``). One ``bias`` key switches every linear
bias. Older (RefinedWeb) configs name the sizes ``n_layer``, ``n_embed``, ``n_head`` and
``n_head_kv``."""

from __future__ import annotations

from gpuplan.workload.families.family import Family, Fields, Values
from gpuplan.workload.hf_config import flag, optional_int


def falcon_layout(values: Values, fields: Fields) -> None:
    """KV heads and norms per layer from the decoder architecture; biases from ``bias``."""
    if flag(values, "new_decoder_architecture", False):
        fields["norms_per_layer"] = 2
        fields["num_kv_heads"] = optional_int(values, "num_kv_heads") or fields["num_kv_heads"]
    elif flag(values, "multi_query", True):
        fields["num_kv_heads"] = 1
    fields["qkv_bias"] = fields["output_bias"] = fields["mlp_bias"] = flag(values, "bias", False)


FALCON = Family(
    name="falcon",
    key_aliases={
        "num_hidden_layers": ("n_layer", "num_layers"),
        "hidden_size": ("n_embed",),
        "num_attention_heads": ("n_head",),
        "num_key_value_heads": ("num_kv_heads", "n_head_kv"),
    },
    gated_mlp=False,
    norm="layernorm",
    norms_per_layer=1,
    position_embedding="rope",
    parallel_attention=True,
    tie_word_embeddings=True,
    hidden_act="gelu",
    reads_bias_keys=False,
    adjust=falcon_layout,
    defaults={
        "vocab_size": 65024,
        "hidden_size": 4544,
        "num_hidden_layers": 32,
        "num_attention_heads": 71,
        "max_position_embeddings": 2048,
    },
)
"""``FalconConfig``'s defaults (Falcon 7B)."""

FAMILIES = (FALCON,)
