"""Family: what a ``model_type`` implies beyond the keys its config.json carries.

A family holds three things, each in its own module of this package:

- **traits**: gated or plain MLP, which projections carry biases, LayerNorm or RMSNorm, norms
  per layer, learned, rotary or ALiBi positions, how its router scores and which layers it
  routes or windows, as its ``transformers`` modelling code fixes them;
- its **Hugging Face key mapping**: the ``transformers`` config class's ``defaults`` for the
  keys a config may leave out, its own spellings of the common keys (``key_aliases``), and
  ``map_keys`` for keys that need more than a rename;
- its **builder** hooks: ``adjust`` for the decisions its modelling code takes from its own
  keys (Falcon's ``new_decoder_architecture``, ChatGLM's ``add_qkv_bias``), ``vision_params``
  for a vision tower. The shared builder (:mod:`.builder`) does everything else.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

Values = dict[str, Any]
"""A config's keys after normalisation: canonical names over the family's defaults."""
Fields = dict[str, Any]
"""The :class:`~gpuplan.workload.model.ModelSpec` fields the builder has decided so far."""


@dataclass(frozen=True)
class Family:
    """One ``model_type`` (``name``; other spellings of it in ``aliases``).

    Biases: ``qkv_bias``, ``output_bias``, ``mlp_bias`` are the defaults; the config's
    ``attention_bias`` and ``mlp_bias`` keys override them (unless ``reads_bias_keys`` is off:
    the family's ``adjust`` reads its own keys), and ``attention_bias`` covers the output
    projection too when ``output_bias_follows_attention_bias`` (Llama's ``o_proj``; Qwen2
    biases q, k and v only). ``full_attention_every``: every n-th layer attends fully and
    the rest through the sliding window (Gemma 2, gpt-oss: layer 0 windowed);
    ``windows_from_max_window_layers``: layers from ``max_window_layers`` on are windowed
    (Qwen2 / Qwen3 ``layer_types``). ``router_score_function`` and
    ``router_always_normalizes``: what the modelling code fixes about the router (DeepSeek-V3
    scores with a sigmoid; Mixtral renormalises the top-k weights whatever the config says).
    ``moe_layer_offset``: layer ``i`` routes when ``(i + offset) % frequency == 0``
    (DeepSeek 0, everyone else 1). ``expert_width_from_intermediate``: routed experts take
    ``intermediate_size`` when the config gives no ``moe_intermediate_size`` (Mixtral).
    ``hf_decoder_layer``: the ``transformers`` decoder-layer class (FSDP's wrap unit);
    ``megatron_flags_complete``: the Megatron-LM export's flags describe every layer.
    """

    name: str
    defaults: Mapping[str, Any] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()
    key_aliases: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    gated_mlp: bool = True
    qkv_bias: bool = False
    output_bias: bool = False
    mlp_bias: bool = False
    reads_bias_keys: bool = True
    output_bias_follows_attention_bias: bool = False
    norm: str = "rmsnorm"
    norms_per_layer: int = 2
    qk_norm: str = "none"
    position_embedding: str = "rope"
    learned_position_offset: int = 0
    embedding_norm: bool = False
    parallel_attention: bool = False
    tie_word_embeddings: bool = False
    hidden_act: str = "silu"
    attention_sinks: bool = False
    full_attention_every: int | None = None
    windows_from_max_window_layers: bool = False
    multi_latent_attention: bool = False
    router_score_function: str = "softmax"
    router_always_normalizes: bool = False
    router_logit_bias: bool = False
    moe_layer_offset: int = 1
    expert_width_from_intermediate: bool = False
    shared_expert_gate: bool = False
    hf_decoder_layer: str | None = None
    megatron_flags_complete: bool = False
    map_keys: Callable[[Values], None] | None = None
    """Rewrites family-specific keys into the canonical ones, in place, before any is read."""
    adjust: Callable[[Values, Fields], None] | None = None
    """Changes the builder's fields, in place, from the family's own keys."""
    vision_params: Callable[[Mapping[str, Any], int], int] | None = None
    """Parameters of the vision tower and projector from ``vision_config`` and the text
    model's hidden size, for a multimodal config."""
