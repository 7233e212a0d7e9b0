"""Gemma 2 and Gemma 3 (text, and Gemma 3's SigLIP vision tower).

Four RMSNorms per layer (before and after attention and the MLP), a GeGLU MLP
(``gelu_pytorch_tanh``), ``head_dim`` 256 independent of the hidden size, tied embeddings
(transformers ``modeling_gemma2.py``). Gemma 2 alternates sliding-window and full attention,
layer 0 windowed (``Gemma2Config.layer_types``); Gemma 3 attends fully every
``sliding_window_pattern``-th layer (default 6) and normalises each head's q and k
(``modeling_gemma3.py``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpuplan.workload.families.family import Family
from gpuplan.workload.hf_config import positive_int

SIGLIP_DEFAULTS = {
    "hidden_size": 1152,
    "intermediate_size": 4304,
    "num_hidden_layers": 27,
    "patch_size": 14,
    "image_size": 896,
    "num_channels": 3,
}
"""Gemma 3's SigLIP tower: 27 layers, width 1152, FFN 4304, 896-pixel images in 14-pixel
patches (``Gemma3Config``'s ``vision_config``)."""


def siglip_vision_params(vision_config: Mapping[str, Any], text_hidden_size: int) -> int:
    """Parameters of a SigLIP vision tower and the Gemma 3 multimodal projector.

    Tower (transformers ``modeling_siglip.py``): per layer q, k, v, o (w*w + w each), fc1 and
    fc2 with biases, two LayerNorms with bias; a patch conv (3*p*p*w + w), a position table
    ((image/p)^2 rows), a post LayerNorm. Projector (``modeling_gemma3.py``): an RMSNorm of w
    and a w -> d_text matrix. Sizes a ``vision_config`` leaves out: :data:`SIGLIP_DEFAULTS`.
    """
    sizes = {**SIGLIP_DEFAULTS, **vision_config}
    width, inner, layers, patch, image, channels = (
        positive_int(sizes, key, field=f"vision_config.{key}") for key in SIGLIP_DEFAULTS
    )
    per_layer = 4 * (width * width + width) + (width * inner + inner) + (inner * width + width)
    per_layer += 2 * 2 * width
    embeddings = channels * patch * patch * width + width + (image // patch) ** 2 * width
    tower = layers * per_layer + embeddings + 2 * width
    projector = width + width * text_hidden_size
    return tower + projector


GEMMA2 = Family(
    name="gemma2",
    aliases=("gemma",),
    norms_per_layer=4,
    full_attention_every=2,
    tie_word_embeddings=True,
    hidden_act="gelu_pytorch_tanh",
    output_bias_follows_attention_bias=True,
    defaults={
        "vocab_size": 256000,
        "hidden_size": 2304,
        "intermediate_size": 9216,
        "num_hidden_layers": 26,
        "num_attention_heads": 8,
        "num_key_value_heads": 4,
        "head_dim": 256,
        "max_position_embeddings": 8192,
    },
    hf_decoder_layer="Gemma2DecoderLayer",
)
"""``Gemma2Config``'s defaults (Gemma 2 2B)."""

GEMMA3_TEXT = Family(
    name="gemma3_text",
    aliases=("gemma3",),
    norms_per_layer=4,
    qk_norm="per_head",
    tie_word_embeddings=True,
    hidden_act="gelu_pytorch_tanh",
    output_bias_follows_attention_bias=True,
    defaults={
        "vocab_size": 262208,
        "hidden_size": 2304,
        "intermediate_size": 9216,
        "num_hidden_layers": 26,
        "num_attention_heads": 8,
        "num_key_value_heads": 4,
        "head_dim": 256,
        "max_position_embeddings": 131072,
        "sliding_window_pattern": 6,
    },
    vision_params=siglip_vision_params,
    hf_decoder_layer="Gemma3DecoderLayer",
)
"""``Gemma3TextConfig``'s defaults (``sliding_window_pattern`` 6)."""

FAMILIES = (GEMMA2, GEMMA3_TEXT)
