"""ChatGLM / GLM-4 (remote code ``modeling_chatglm.py``): its own key names, a q/k/v bias
(``add_qkv_bias``) and no other linear bias (``add_bias_linear``), multi-query attention
with ``multi_query_group_num`` KV groups, a SwiGLU MLP of ``ffn_hidden_size``."""

from __future__ import annotations

from gpuplan.workload.families.family import Family, Fields, Values
from gpuplan.workload.hf_config import flag


def chatglm_layout(values: Values, fields: Fields) -> None:
    """``multi_query_attention: false`` gives every head its own KV; ``add_qkv_bias`` and
    ``add_bias_linear`` switch the biases."""
    if not flag(values, "multi_query_attention", True):
        fields["num_kv_heads"] = fields["num_attention_heads"]
    fields["qkv_bias"] = flag(values, "add_qkv_bias", True)
    fields["output_bias"] = fields["mlp_bias"] = flag(values, "add_bias_linear", False)


CHATGLM = Family(
    name="chatglm",
    aliases=("glm", "glm4"),
    key_aliases={
        "num_hidden_layers": ("num_layers",),
        "num_key_value_heads": ("multi_query_group_num",),
        "head_dim": ("kv_channels",),
        "intermediate_size": ("ffn_hidden_size",),
        "vocab_size": ("padded_vocab_size",),
        "max_position_embeddings": ("seq_length",),
    },
    qkv_bias=True,
    reads_bias_keys=False,
    adjust=chatglm_layout,
    defaults={
        "vocab_size": 65024,
        "hidden_size": 4096,
        "intermediate_size": 13696,
        "num_hidden_layers": 28,
        "num_attention_heads": 32,
        "max_position_embeddings": 8192,
    },
)
"""``ChatGLMConfig``'s defaults (ChatGLM2/3 6B)."""

FAMILIES = (CHATGLM,)
