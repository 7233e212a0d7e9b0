"""MPT (transformers ``modeling_mpt.py``): its own key names, ALiBi, a plain GELU MLP of
``expansion_ratio x d_model``, tied embeddings, and with ``no_bias`` (the default) no bias in
any linear or LayerNorm."""

from __future__ import annotations

import math

from gpuplan.workload.families.family import Family, Fields, Values
from gpuplan.workload.hf_config import ConfigError, flag


def mpt_layout(values: Values, fields: Fields) -> None:
    """Biases and LayerNorm biases from ``no_bias``; the MLP width from ``expansion_ratio``
    (default 4) when the config gives no ``intermediate_size``."""
    biases = not flag(values, "no_bias", True)
    fields["qkv_bias"] = fields["output_bias"] = fields["mlp_bias"] = biases
    if biases:
        fields["norm"] = "layernorm"
    ratio = values.get("expansion_ratio")
    ratio = 4 if ratio is None else ratio
    if isinstance(ratio, bool) or not isinstance(ratio, int | float) or not math.isfinite(ratio):
        raise ConfigError.of("error.number", field="model.expansion_ratio", value=repr(ratio))
    values.setdefault("intermediate_size", int(ratio * fields["hidden_size"]))


MPT = Family(
    name="mpt",
    key_aliases={
        "num_hidden_layers": ("n_layers",),
        "hidden_size": ("d_model",),
        "num_attention_heads": ("n_heads",),
        "max_position_embeddings": ("max_seq_len",),
    },
    gated_mlp=False,
    norm="layernorm_no_bias",
    position_embedding="alibi",
    tie_word_embeddings=True,
    hidden_act="gelu",
    reads_bias_keys=False,
    adjust=mpt_layout,
    defaults={
        "vocab_size": 50368,
        "hidden_size": 2048,
        "num_hidden_layers": 24,
        "num_attention_heads": 16,
        "max_position_embeddings": 2048,
    },
)
"""``MptConfig``'s defaults."""

FAMILIES = (MPT,)
