"""Llama 4 (Scout, Maverick; transformers ``modeling_llama4.py`` @000c33fdfde1).

Every ``interleave_moe_layer_step``-th layer (1-based: ``moe_layers = range(step - 1,
layers, step)``) is a mixture of experts: a router ``Linear(d, E)`` without bias that scores
the top-k logits with a sigmoid, ``num_local_experts`` SwiGLU experts of
``intermediate_size`` and one shared SwiGLU expert of the same width (``Llama4TextMoe``);
the other layers have a dense SwiGLU MLP of ``intermediate_size_mlp``. Every
``no_rope_layer_interval``-th layer (``no_rope_layers`` 0) has no rotary positions and
attends fully; the others attend causally within chunks of ``attention_chunk_size`` tokens
(``layer_types``: ``chunked_attention``). The q/k norm is an L2 norm without weights.
Multimodal configs add a vision encoder with a pixel-shuffle adapter and a projector
(:func:`llama4_vision_params`). Sizes a config leaves out: ``Llama4TextConfig``'s and
``Llama4VisionConfig``'s (``configuration_llama4.py`` @008e57439125)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpuplan.limits import shown
from gpuplan.workload.families.family import Family, Fields, Values
from gpuplan.workload.hf_config import ConfigError, layer_list, optional_int, positive_int

CHUNKED_LAYER_TYPES = ("chunked_attention", "full_attention")

VISION_DEFAULTS = {
    "hidden_size": 768,
    "intermediate_size": 5632,
    "num_hidden_layers": 34,
    "patch_size": 14,
    "image_size": 448,
    "num_channels": 3,
    "projector_input_dim": 4096,
    "projector_output_dim": 4096,
    "vision_output_dim": 7680,
}
"""``Llama4VisionConfig``'s defaults."""


def llama4_moe_keys(values: Values) -> None:
    """Llama 4's expert layout in the common keys: routed experts and the one shared expert
    are ``intermediate_size`` wide, dense layers ``intermediate_size_mlp``, routing every
    ``interleave_moe_layer_step``-th layer (an explicit ``moe_layers`` must be that list)."""
    expert_width = positive_int(values, "intermediate_size")
    dense_width = positive_int(values, "intermediate_size_mlp")
    step = positive_int(values, "interleave_moe_layer_step")
    if values.get("moe_intermediate_size") is None:
        values["moe_intermediate_size"] = expert_width
    values["shared_expert_intermediate_size"] = expert_width
    values["intermediate_size"] = dense_width
    values["moe_layer_freq"] = step
    given = values.get("moe_layers")
    if given is not None:
        layers = positive_int(values, "num_hidden_layers")
        if not isinstance(given, list | tuple) or not _every_step(given, step, layers):
            raise ConfigError.of(
                "error.config_moe_layers",
                value=shown(given),
                step=step,
                first=step - 1,
                second=2 * step - 1,
            )


def _every_step(moe_layers: list[Any] | tuple[Any, ...], step: int, layers: int) -> bool:
    """Whether ``moe_layers`` is ``range(step - 1, layers, step)`` (compared entry by entry,
    without building the range)."""
    if len(moe_layers) != layers // step:
        return False
    return all(
        not isinstance(layer, bool) and layer == step - 1 + index * step
        for index, layer in enumerate(moe_layers)
    )


def llama4_chunked_attention(values: Values, fields: Fields) -> None:
    """``attention_chunk_size`` (0 or absent: none) on the layers ``layer_types`` marks
    ``chunked_attention``, else those ``no_rope_layers`` marks 1 (the rotary layers), else
    all but every ``no_rope_layer_interval``-th (default 4)."""
    chunk = optional_int(values, "attention_chunk_size")
    if not chunk:
        return
    layers = fields["num_layers"]
    if values.get("layer_types") is not None:
        kinds = layer_list(values, "layer_types", layers, CHUNKED_LAYER_TYPES)
        chunked = tuple(kind == "chunked_attention" for kind in kinds)
    elif values.get("no_rope_layers"):
        chunked = tuple(bool(rope) for rope in layer_list(values, "no_rope_layers", layers, (0, 1)))
    else:
        interval = positive_int(values, "no_rope_layer_interval")
        chunked = tuple(bool((index + 1) % interval) for index in range(layers))
    if any(chunked):
        fields["attention_chunk_size"] = chunk
        fields["chunked_attention_layers"] = () if all(chunked) else chunked


def llama4_vision_params(vision_config: Mapping[str, Any], text_hidden_size: int) -> int:
    """Parameters of the Llama 4 vision encoder, its pixel-shuffle adapter and the projector.

    Encoder (``Llama4VisionModel``, width w, FFN f): per layer q, k, v, o with biases
    (4 (w^2 + w)), fc1 and fc2 with biases, two LayerNorms with bias; a patch embedding
    ``3 p^2 -> w`` without bias, a class embedding (w), a position table of
    ``(image / p)^2 + 1`` rows, LayerNorms before and after the encoder. Adapter
    (``Llama4VisionMLP2``): ``f -> projector_input_dim`` and ``projector_output_dim ->
    projector_output_dim`` without biases. Projector (``Llama4MultiModalProjector``):
    ``vision_output_dim -> d_text`` without bias."""
    sizes = {**VISION_DEFAULTS, **vision_config}
    width, inner, layers, patch, image, channels, adapter_in, adapter_out, output = (
        positive_int(sizes, key, field=f"vision_config.{key}") for key in VISION_DEFAULTS
    )
    per_layer = 4 * (width * width + width) + (width * inner + inner) + (inner * width + width)
    per_layer += 2 * 2 * width
    positions = (image // patch) ** 2 + 1
    embeddings = channels * patch * patch * width + width + positions * width
    encoder = layers * per_layer + embeddings + 2 * 2 * width
    adapter = inner * adapter_in + adapter_out * adapter_out
    return encoder + adapter + output * text_hidden_size


LLAMA4 = Family(
    name="llama4",
    aliases=("llama4_text",),
    key_aliases={"num_experts": ("num_local_experts",)},
    output_bias_follows_attention_bias=True,
    router_score_function="sigmoid",
    map_keys=llama4_moe_keys,
    adjust=llama4_chunked_attention,
    vision_params=llama4_vision_params,
    defaults={
        "vocab_size": 202048,
        "hidden_size": 5120,
        "intermediate_size": 8192,
        "intermediate_size_mlp": 16384,
        "num_hidden_layers": 48,
        "num_attention_heads": 40,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "max_position_embeddings": 131072,
        "num_experts_per_tok": 1,
        "num_local_experts": 16,
        "interleave_moe_layer_step": 1,
        "router_aux_loss_coef": 0.001,
        "attention_chunk_size": 8192,
        "no_rope_layer_interval": 4,
    },
    hf_decoder_layer="Llama4TextDecoderLayer",
)

FAMILIES = (LLAMA4,)
