"""ModelSpec: the architecture of a decoder-only transformer and its exact parameter count.

A spec is built from a Hugging Face ``config.json`` (a file, or the same keys in a mapping)
by :func:`ModelSpec.from_hf_config`, or from the built-in catalog by name
(:func:`gpuplan.catalog.load_model`). ``model_type`` picks the family, and with it the traits
that a config does not spell out: gated or plain MLP, which projections carry biases,
LayerNorm or RMSNorm, norms per layer, learned or rotary positions. Keys a config leaves out
take that family's ``transformers`` default.

Parameter counting follows the shapes of the ``transformers`` modelling code (a linear map
a -> b holds a*b weights plus b when it has a bias); the per-family rules and their traps are
summarised in the docstring of :func:`parameter_breakdown`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from gpuplan.errors import InputError
from gpuplan.workload.model_settings import (
    NO_SETTINGS,
    ModelSettings,
    read_model_settings,
    read_router_settings,
)


class ConfigError(InputError):
    """A model configuration that cannot describe a supported architecture."""


@dataclass(frozen=True)
class FamilyTraits:
    """What a ``model_type`` implies beyond the keys its config.json carries.

    ``router_score_function`` and ``router_always_normalizes``: what the family's modelling
    code fixes about its router (transformers ``modeling_deepseek_v3.py`` scores with a
    sigmoid; ``modeling_mixtral.py`` renormalises the top-k weights whatever the config says).
    ``full_attention_every``: every n-th layer attends fully and the rest through the sliding
    window (Gemma 2 alternates, layer 0 windowed: transformers ``Gemma2Config.layer_types``);
    ``windows_from_max_window_layers``: layers from ``max_window_layers`` on are windowed
    (``Qwen2Config`` / ``Qwen3Config.layer_types``).
    """

    gated_mlp: bool = True
    qkv_bias: bool = False
    output_bias: bool = False
    mlp_bias: bool = False
    norm: str = "rmsnorm"
    norms_per_layer: int = 2
    qk_norm: str = "none"
    position_embedding: str = "rope"
    learned_position_offset: int = 0
    embedding_norm: bool = False
    parallel_attention: bool = False
    tie_word_embeddings: bool = False
    hidden_act: str = "silu"
    router_score_function: str = "softmax"
    router_always_normalizes: bool = False
    full_attention_every: int | None = None
    windows_from_max_window_layers: bool = False
    defaults: Mapping[str, Any] = field(default_factory=dict)


_LLAMA_DEFAULTS = {
    "vocab_size": 32000,
    "hidden_size": 4096,
    "intermediate_size": 11008,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "max_position_embeddings": 2048,
}
_QWEN_DEFAULTS = {
    "vocab_size": 151936,
    "hidden_size": 4096,
    "intermediate_size": 22016,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "max_position_embeddings": 32768,
    "use_sliding_window": False,
}
_QWEN_MOE_ROUTER = {"norm_topk_prob": False, "router_aux_loss_coef": 0.001}
"""``Qwen2MoeConfig`` / ``Qwen3MoeConfig`` defaults (huggingface/transformers
``configuration_qwen3_moe.py`` @008e57439125)."""

FAMILIES: dict[str, FamilyTraits] = {
    "llama": FamilyTraits(defaults=_LLAMA_DEFAULTS),
    "mistral": FamilyTraits(
        defaults={
            **_LLAMA_DEFAULTS,
            "intermediate_size": 14336,
            "num_key_value_heads": 8,
            "max_position_embeddings": 131072,
        }
    ),
    "internlm2": FamilyTraits(defaults=_LLAMA_DEFAULTS),
    "baichuan": FamilyTraits(defaults={**_LLAMA_DEFAULTS, "vocab_size": 125696}),
    "yi": FamilyTraits(defaults=_LLAMA_DEFAULTS),
    "phi3": FamilyTraits(
        defaults={
            "vocab_size": 32064,
            "hidden_size": 3072,
            "intermediate_size": 8192,
            "num_hidden_layers": 32,
            "num_attention_heads": 32,
            "max_position_embeddings": 4096,
        }
    ),
    "qwen2": FamilyTraits(
        qkv_bias=True,
        windows_from_max_window_layers=True,
        defaults=_QWEN_DEFAULTS,
    ),
    "qwen3": FamilyTraits(
        qk_norm="per_head",
        windows_from_max_window_layers=True,
        defaults={
            **_QWEN_DEFAULTS,
            "head_dim": 128,
        },
    ),
    "qwen3_moe": FamilyTraits(
        qk_norm="per_head",
        windows_from_max_window_layers=True,
        defaults={
            **_QWEN_MOE_ROUTER,
            "use_sliding_window": False,
            "vocab_size": 151936,
            "hidden_size": 2048,
            "intermediate_size": 6144,
            "num_hidden_layers": 24,
            "num_attention_heads": 32,
            "num_key_value_heads": 4,
            "max_position_embeddings": 32768,
            "head_dim": 128,
            "num_experts": 128,
            "num_experts_per_tok": 8,
            "moe_intermediate_size": 768,
        },
    ),
    "qwen2_moe": FamilyTraits(
        qkv_bias=True,
        windows_from_max_window_layers=True,
        defaults={
            **_QWEN_MOE_ROUTER,
            "use_sliding_window": False,
            "vocab_size": 151936,
            "hidden_size": 2048,
            "intermediate_size": 5632,
            "num_hidden_layers": 24,
            "num_attention_heads": 16,
            "max_position_embeddings": 32768,
            "num_experts": 60,
            "num_experts_per_tok": 4,
            "moe_intermediate_size": 1408,
            "shared_expert_intermediate_size": 5632,
        },
    ),
    "mixtral": FamilyTraits(
        router_always_normalizes=True,
        defaults={
            "router_aux_loss_coef": 0.001,
            **_LLAMA_DEFAULTS,
            "intermediate_size": 14336,
            "num_key_value_heads": 8,
            "max_position_embeddings": 131072,
            "num_local_experts": 8,
            "num_experts_per_tok": 2,
        },
    ),
    "olmo2": FamilyTraits(qk_norm="full", defaults={**_LLAMA_DEFAULTS, "vocab_size": 50304}),
    "gemma2": FamilyTraits(
        norms_per_layer=4,
        full_attention_every=2,
        tie_word_embeddings=True,
        hidden_act="gelu_pytorch_tanh",
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
    ),
    "gemma3_text": FamilyTraits(
        norms_per_layer=4,
        qk_norm="per_head",
        tie_word_embeddings=True,
        hidden_act="gelu_pytorch_tanh",
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
    ),
    "chatglm": FamilyTraits(
        qkv_bias=True,
        defaults={
            "vocab_size": 65024,
            "hidden_size": 4096,
            "intermediate_size": 13696,
            "num_hidden_layers": 28,
            "num_attention_heads": 32,
            "max_position_embeddings": 8192,
        },
    ),
    "deepseek_v2": FamilyTraits(
        defaults={
            "vocab_size": 102400,
            "hidden_size": 4096,
            "intermediate_size": 11008,
            "num_hidden_layers": 30,
            "num_attention_heads": 32,
            "max_position_embeddings": 2048,
            "qk_nope_head_dim": 128,
            "qk_rope_head_dim": 64,
            "v_head_dim": 128,
            "kv_lora_rank": 512,
            "q_lora_rank": 1536,
            "moe_layer_freq": 1,
            "first_k_dense_replace": 0,
            "norm_topk_prob": False,
            "routed_scaling_factor": 1.0,
        },
    ),
    "deepseek_v3": FamilyTraits(
        router_score_function="sigmoid",
        defaults={
            "vocab_size": 129280,
            "hidden_size": 7168,
            "intermediate_size": 18432,
            "num_hidden_layers": 61,
            "num_attention_heads": 128,
            "max_position_embeddings": 4096,
            "qk_nope_head_dim": 128,
            "qk_rope_head_dim": 64,
            "v_head_dim": 128,
            "kv_lora_rank": 512,
            "q_lora_rank": 1536,
            "n_routed_experts": 256,
            "num_experts_per_tok": 8,
            "moe_intermediate_size": 2048,
            "n_shared_experts": 1,
            "first_k_dense_replace": 3,
            "moe_layer_freq": 1,
            "topk_method": "noaux_tc",
            "routed_scaling_factor": 2.5,
            "norm_topk_prob": True,
        },
    ),
    "falcon": FamilyTraits(
        gated_mlp=False,
        norm="layernorm",
        norms_per_layer=1,
        position_embedding="rope",
        parallel_attention=True,
        tie_word_embeddings=True,
        hidden_act="gelu",
        defaults={
            "vocab_size": 65024,
            "hidden_size": 4544,
            "num_hidden_layers": 32,
            "num_attention_heads": 71,
            "max_position_embeddings": 2048,
        },
    ),
    "gpt2": FamilyTraits(
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
    ),
    "opt": FamilyTraits(
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
    ),
    "bloom": FamilyTraits(
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
    ),
    "mpt": FamilyTraits(
        gated_mlp=False,
        norm="layernorm_no_bias",
        position_embedding="alibi",
        tie_word_embeddings=True,
        hidden_act="gelu",
        defaults={
            "vocab_size": 50368,
            "hidden_size": 2048,
            "num_hidden_layers": 24,
            "num_attention_heads": 16,
            "max_position_embeddings": 2048,
        },
    ),
}
"""Each family's ``defaults`` are its transformers config class's defaults, for the keys a
config may leave out; the router defaults of ``deepseek_v3`` (``routed_scaling_factor`` 2.5, ``norm_topk_prob``
true) are ``DeepseekV3Config``'s (huggingface/transformers @001f85b38fb4; its ``n_group`` 8 and
``topk_group`` 4 are left out, as they would not divide a smaller config's experts), those of ``deepseek_v2`` ``DeepseekV2Config``'s
(@008e57439125), Mixtral's ``router_aux_loss_coef`` 0.001 ``MixtralConfig``'s and Gemma 3's
``sliding_window_pattern`` 6 ``Gemma3TextConfig``'s."""

FAMILY_ALIASES = {
    "gemma3": "gemma3_text",
    "gemma": "gemma2",
    "glm": "chatglm",
    "glm4": "chatglm",
    "baichuan2": "baichuan",
    "qwen2_5": "qwen2",
    "mpt": "mpt",
    "gpt3": "gpt2",
}

_KEY_ALIASES: dict[str, tuple[str, ...]] = {
    "num_hidden_layers": ("n_layer", "num_layers", "n_layers"),
    "hidden_size": ("n_embd", "d_model"),
    "num_attention_heads": ("n_head", "n_heads"),
    "num_key_value_heads": ("multi_query_group_num", "num_kv_heads", "n_head_kv"),
    "head_dim": ("kv_channels",),
    "intermediate_size": ("ffn_hidden_size", "n_inner", "ffn_dim"),
    "vocab_size": ("padded_vocab_size",),
    "max_position_embeddings": ("n_positions", "max_seq_len", "seq_length", "model_max_length"),
    "num_experts": ("num_local_experts", "n_routed_experts"),
    "num_shared_experts": ("n_shared_experts",),
}

_ACCEPTED_KEYS = "num_hidden_layers, hidden_size, num_attention_heads"


@dataclass(frozen=True)
class ModelSpec:
    """A decoder-only transformer, dense or mixture-of-experts, as the training models see it.

    Sizes follow config.json names. ``head_dim`` is explicit (Gemma and Qwen3 differ from
    hidden/heads). MoE fields are zero for dense models. Multi-head latent attention
    (DeepSeek-V2/V3) is on when ``kv_lora_rank`` is set.
    """

    name: str
    family: str
    num_layers: int
    hidden_size: int
    num_attention_heads: int
    num_kv_heads: int
    head_dim: int
    intermediate_size: int
    vocab_size: int
    max_position_embeddings: int | None = None
    tie_word_embeddings: bool = False
    gated_mlp: bool = True
    hidden_act: str = "silu"
    qkv_bias: bool = False
    output_bias: bool = False
    mlp_bias: bool = False
    norm: str = "rmsnorm"
    norms_per_layer: int = 2
    qk_norm: str = "none"
    position_embedding: str = "rope"
    learned_position_rows: int = 0
    embedding_norm: bool = False
    parallel_attention: bool = False
    num_experts: int = 0
    num_experts_per_token: int = 0
    moe_intermediate_size: int = 0
    shared_expert_intermediate_size: int = 0
    shared_expert_gate: bool = False
    first_dense_layers: int = 0
    moe_layer_frequency: int = 1
    router_bias: bool = False
    q_lora_rank: int | None = None
    kv_lora_rank: int | None = None
    qk_nope_head_dim: int = 0
    qk_rope_head_dim: int = 0
    v_head_dim: int = 0
    sliding_window: int | None = None
    sliding_window_layers: tuple[bool, ...] = ()
    """Per layer, whether it attends through ``sliding_window``; empty: every layer does."""
    vision_params: int = 0
    settings: ModelSettings = NO_SETTINGS
    """Rotary base and scaling, norm epsilon: what an export writes (``model_settings``)."""
    defaults_taken: tuple[str, ...] = field(default=(), compare=False)
    """Keys the config left out that the family's ``transformers`` defaults filled
    (:func:`defaults_taken`); what a warning names."""

    # --- construction ---------------------------------------------------------------------

    @classmethod
    def from_hf_config(
        cls, config: Mapping[str, Any] | str | Path, name: str | None = None
    ) -> ModelSpec:
        """Build a spec from a Hugging Face config.json (path) or a mapping of its keys.

        Multimodal configs (Gemma 3) take their ``text_config``; the vision tower's parameters
        are counted separately in ``vision_params``.
        """
        if isinstance(config, str | Path):
            config = _read_config_file(Path(config))
        if not isinstance(config, Mapping):
            raise ConfigError("model: expected a mapping of config.json keys")
        raw = dict(config)
        model_type = str(raw.get("model_type") or "llama").lower()
        vision_params = 0
        if isinstance(raw.get("text_config"), Mapping):
            vision = raw.get("vision_config") or {}
            text = dict(raw["text_config"])
            text.setdefault("model_type", model_type)
            hidden = text.get("hidden_size", FAMILIES["gemma3_text"].defaults["hidden_size"])
            vision_params = siglip_vision_params(vision, int(hidden))
            raw = {
                **{k: v for k, v in raw.items() if k not in ("text_config", "vision_config")},
                **text,
            }
            model_type = str(text.get("model_type") or model_type).lower()
        family_name = FAMILY_ALIASES.get(model_type, model_type)
        if family_name not in FAMILIES:
            known = ", ".join(sorted(FAMILIES))
            raise ConfigError(f"model_type: unknown family {model_type!r}; accepted: {known}")
        traits = FAMILIES[family_name]
        missing = [key for key in REQUIRED_SIZE_KEYS if not _gives(raw, key)]
        if missing:
            raise ConfigError(
                f"model: {' and '.join(missing)} missing; a config must give "
                f"{', '.join(REQUIRED_SIZE_KEYS)} (other sizes may take the family's "
                "transformers defaults)"
            )
        values = _normalise_keys(raw, traits)
        spec_name = name or str(raw.get("_name_or_path") or raw.get("name") or model_type)
        spec = _build_spec(spec_name, family_name, traits, values, vision_params)
        return replace(spec, defaults_taken=defaults_taken(raw, traits))

    def with_name(self, name: str) -> ModelSpec:
        return replace(self, name=name)

    # --- derived sizes --------------------------------------------------------------------

    @property
    def is_moe(self) -> bool:
        return self.num_experts > 0

    @property
    def uses_mla(self) -> bool:
        return self.kv_lora_rank is not None

    @property
    def q_width(self) -> int:
        """Width of the concatenated query heads (H * head_dim; MLA: H * (nope + rope))."""
        if self.uses_mla:
            return self.num_attention_heads * (self.qk_nope_head_dim + self.qk_rope_head_dim)
        return self.num_attention_heads * self.head_dim

    @property
    def kv_width(self) -> int:
        """Width of one of K or V over all KV heads (K * head_dim)."""
        return self.num_kv_heads * self.head_dim

    def is_windowed_layer(self, index: int) -> bool:
        """Whether layer ``index`` (0-based) attends through the sliding window."""
        if self.sliding_window is None:
            return False
        return not self.sliding_window_layers or self.sliding_window_layers[index]

    def is_moe_layer(self, index: int) -> bool:
        """Whether layer ``index`` (0-based) routes to experts.

        DeepSeek: ``index >= first_k_dense_replace and index % moe_layer_freq == 0``
        (transformers ``modeling_deepseek_v3.py``); Qwen-MoE and Mixtral use
        ``(index + 1) % decoder_sparse_step == 0`` with no dense prefix.
        """
        if not self.is_moe or index < self.first_dense_layers:
            return False
        if self.family.startswith("deepseek"):
            return index % self.moe_layer_frequency == 0
        return (index + 1) % self.moe_layer_frequency == 0

    @cached_property
    def num_moe_layers(self) -> int:
        """How many layers :meth:`is_moe_layer` selects, counted in closed form (no loop over
        the layers): multiples of the frequency among the layer indices (DeepSeek) or among
        ``index + 1`` (Qwen-MoE, Mixtral) from the first routed layer on."""
        if not self.is_moe:
            return 0
        first, last, frequency = self.first_dense_layers, self.num_layers, self.moe_layer_frequency
        if first >= last:
            return 0
        if self.family.startswith("deepseek"):
            low, high = first, last
        else:
            low, high = first + 1, last + 1
        return (high - 1) // frequency - (low - 1) // frequency

    @property
    def num_dense_layers(self) -> int:
        return self.num_layers - self.num_moe_layers

    # --- parameters -----------------------------------------------------------------------

    def attention_params_per_layer(self) -> int:
        """Weights of one attention block: projections, their biases, q/k norms.

        Standard (MHA/GQA/MQA): q d->H*h, k and v d->K*h, o H*h->d.
        MLA (DeepSeek-V2 eq. 9-14): q via d->r_q (+ norm r_q) -> H*(nope+rope), or d->H*(nope+rope)
        without q compression; kv d->(r_kv + rope) (+ norm r_kv) -> H*(nope+v); o H*v->d.
        """
        d, heads = self.hidden_size, self.num_attention_heads
        if self.uses_mla:
            assert self.kv_lora_rank is not None
            q_head = self.qk_nope_head_dim + self.qk_rope_head_dim
            if self.q_lora_rank:
                query = d * self.q_lora_rank + self.q_lora_rank + self.q_lora_rank * heads * q_head
            else:
                query = d * heads * q_head
            key_value = (
                d * (self.kv_lora_rank + self.qk_rope_head_dim)
                + self.kv_lora_rank
                + self.kv_lora_rank * heads * (self.qk_nope_head_dim + self.v_head_dim)
            )
            output = heads * self.v_head_dim * d
            return query + key_value + output
        q_width, kv_width = self.q_width, self.kv_width
        params = d * q_width + 2 * d * kv_width + q_width * d
        if self.qkv_bias:
            params += q_width + 2 * kv_width
        if self.output_bias:
            params += d
        if self.qk_norm == "per_head":
            params += 2 * self.head_dim
        elif self.qk_norm == "full":
            params += q_width + kv_width
        return params

    def mlp_params(self, width: int) -> int:
        """Weights of one feed-forward block of inner width ``width``.

        Gated (SwiGLU/GeGLU, Shazeer 2020): 3*d*F; plain: 2*d*F; biases add 2F+d or F+d.
        """
        d = self.hidden_size
        if self.gated_mlp:
            return 3 * d * width + ((2 * width + d) if self.mlp_bias else 0)
        return 2 * d * width + ((width + d) if self.mlp_bias else 0)

    def expert_params(self) -> int:
        """Weights of one routed expert."""
        return self.mlp_params(self.moe_intermediate_size)

    def moe_block_params(self, active_only: bool = False) -> int:
        """Router, routed experts (all, or the ``k`` a token uses), shared experts and gate."""
        experts = self.num_experts_per_token if active_only else self.num_experts
        params = self.hidden_size * self.num_experts + experts * self.expert_params()
        if self.router_bias:
            params += self.num_experts
        if self.shared_expert_intermediate_size:
            params += self.mlp_params(self.shared_expert_intermediate_size)
        if self.shared_expert_gate:
            params += self.hidden_size
        return params

    def norm_params(self) -> int:
        """Weights of one normalisation layer over ``hidden_size``: LayerNorm has a bias."""
        return 2 * self.hidden_size if self.norm == "layernorm" else self.hidden_size

    def layer_params(self, index: int, active_only: bool = False) -> int:
        """All weights of layer ``index``."""
        mlp = (
            self.moe_block_params(active_only)
            if self.is_moe_layer(index)
            else self.mlp_params(self.intermediate_size)
        )
        return self.attention_params_per_layer() + mlp + self.norms_per_layer * self.norm_params()

    def parameter_breakdown(self, active_only: bool = False) -> dict[str, int]:
        """Parameters by part (:meth:`_parameter_breakdown`, computed once per spec)."""
        return dict(self._breakdowns[active_only])

    @cached_property
    def _breakdowns(self) -> dict[bool, dict[str, int]]:
        return {flag: self._parameter_breakdown(flag) for flag in (False, True)}

    def _parameter_breakdown(self, active_only: bool) -> dict[str, int]:
        """Parameters by part: embeddings, attention, mlp (dense FFN), experts (router, routed
        and shared experts), norms, head, vision. ``active_only`` keeps the experts one token uses.

        Counting rules (shared/catalog-research/models.md, checked against the published
        safetensors totals): tied heads count once; buffers (rotary ``inv_freq``) never count;
        DeepSeek-V3's ``e_score_correction_bias`` counts; the DeepSeek-V3 MTP module does not.
        """
        d = self.hidden_size
        attention = self.num_layers * self.attention_params_per_layer()
        dense_mlp = self.num_dense_layers * self.mlp_params(self.intermediate_size)
        experts = self.num_moe_layers * self.moe_block_params(active_only) if self.is_moe else 0
        norms = self.num_layers * self.norms_per_layer * self.norm_params() + self.norm_params()
        embeddings = self.vocab_size * d + self.learned_position_rows * d
        if self.embedding_norm:
            norms += self.norm_params()
        head = 0 if self.tie_word_embeddings else self.vocab_size * d
        return {
            "embeddings": embeddings,
            "attention": attention,
            "mlp": dense_mlp,
            "experts": experts,
            "norms": norms,
            "head": head,
            "vision": self.vision_params,
        }

    @property
    def total_params(self) -> int:
        """Every unique trainable parameter, exactly."""
        return sum(self.parameter_breakdown().values())

    @property
    def active_params(self) -> int:
        """Parameters one token passes through: the total less the routed experts it skips."""
        return sum(self.parameter_breakdown(active_only=True).values())

    @property
    def text_params(self) -> int:
        return self.total_params - self.vision_params

    def to_dict(self) -> dict[str, Any]:
        """The spec's fields plus ``total_params``, ``active_params`` and ``parameters`` by part."""
        data: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self)}
        data["total_params"] = self.total_params
        data["active_params"] = self.active_params
        data["parameters"] = self.parameter_breakdown()
        return data


def siglip_vision_params(vision_config: Mapping[str, Any], text_hidden_size: int) -> int:
    """Parameters of a SigLIP vision tower and the Gemma 3 multimodal projector.

    Tower (transformers ``modeling_siglip.py``): per layer q, k, v, o (w*w + w each), fc1 and
    fc2 with biases, two LayerNorms with bias; a patch conv (3*p*p*w + w), a position table
    ((image/p)^2 rows), a post LayerNorm. Projector (``modeling_gemma3.py``): an RMSNorm of w
    and a w -> d_text matrix. Defaults are Gemma 3's: 27 layers, width 1152, FFN 4304,
    896-pixel images in 14-pixel patches.
    """
    width = int(vision_config.get("hidden_size", 1152))
    inner = int(vision_config.get("intermediate_size", 4304))
    layers = int(vision_config.get("num_hidden_layers", 27))
    patch = int(vision_config.get("patch_size", 14))
    image = int(vision_config.get("image_size", 896))
    channels = int(vision_config.get("num_channels", 3))
    per_layer = 4 * (width * width + width) + (width * inner + inner) + (inner * width + width)
    per_layer += 2 * 2 * width
    embeddings = channels * patch * patch * width + width + (image // patch) ** 2 * width
    tower = layers * per_layer + embeddings + 2 * width
    projector = width + width * text_hidden_size
    return tower + projector


def _read_config_file(path: Path) -> dict[str, Any]:
    from gpuplan.limits import parse_json, read_text_file, shown

    text = read_text_file(path, "model config", ConfigError)
    data = parse_json(text, f"model: {shown(str(path))}", ConfigError)
    if not isinstance(data, dict):
        raise ConfigError(f"model: {str(path)!r} must hold a JSON object of config.json keys")
    return data


REQUIRED_SIZE_KEYS = ("num_hidden_layers", "hidden_size")
"""Sizes no family default may stand in for: without them a config names no model at all."""


def _gives(raw: Mapping[str, Any], key: str) -> bool:
    """Whether a config gives ``key`` under its own name or a family's alias for it."""
    return any(raw.get(name) is not None for name in (key, *_KEY_ALIASES.get(key, ())))


def defaults_taken(raw: Mapping[str, Any], traits: FamilyTraits) -> tuple[str, ...]:
    """The keys of the family's ``defaults`` that ``raw`` gives under no name of theirs (the key
    or an alias of it, ``_KEY_ALIASES``), in the defaults' order: what :func:`_normalise_keys`
    fills from the family's ``transformers`` defaults rather than from the config."""

    def names(key: str) -> tuple[str, ...]:
        for canonical, aliases in _KEY_ALIASES.items():
            if key == canonical or key in aliases:
                return (canonical, *aliases)
        return (key,)

    return tuple(
        key for key in traits.defaults if not any(raw.get(name) is not None for name in names(key))
    )


def _normalise_keys(raw: Mapping[str, Any], traits: FamilyTraits) -> dict[str, Any]:
    """Map family-specific key names onto config.json's common names; apply family defaults."""
    values: dict[str, Any] = dict(traits.defaults)
    for key, value in raw.items():
        values[key] = value
    for canonical, aliases in _KEY_ALIASES.items():
        if raw.get(canonical) is not None:
            continue
        given = next((raw[alias] for alias in aliases if raw.get(alias) is not None), None)
        if given is None and values.get(canonical) is None:
            given = next((values[a] for a in aliases if values.get(a) is not None), None)
        if given is not None:
            values[canonical] = given
    return values


def _positive_int(values: Mapping[str, Any], key: str, *, allow_zero: bool = False) -> int:
    value = values.get(key)
    if value is None or isinstance(value, bool):
        raise ConfigError(f"model.{key}: missing; a config needs {_ACCEPTED_KEYS}")
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError) as error:
        raise ConfigError(f"model.{key}: expected a whole number, got {value!r}") from error
    if number != value and not (isinstance(value, float) and value.is_integer()):
        raise ConfigError(f"model.{key}: expected a whole number, got {value!r}")
    if number < 0 or (number == 0 and not allow_zero):
        raise ConfigError(f"model.{key}: must be a positive whole number, got {value!r}")
    return number


def _optional_int(values: Mapping[str, Any], key: str) -> int | None:
    if values.get(key) is None:
        return None
    return _positive_int(values, key, allow_zero=True)


def _sliding_window_layers(
    values: Mapping[str, Any], traits: FamilyTraits, layers: int
) -> tuple[bool, ...]:
    """Which layers attend through the sliding window: the config's ``layer_types``
    (``"sliding_attention"`` / ``"full_attention"``, one per layer) when given; else every
    ``sliding_window_pattern``-th layer (1-based) attends fully (Gemma 3, transformers
    ``Gemma3TextConfig``: layer ``i`` is windowed iff ``(i + 1) % pattern``), or the family's
    ``full_attention_every``; else, for Qwen, layers from ``max_window_layers`` on; else all."""
    kinds = values.get("layer_types")
    if kinds is not None:
        accepted = ("sliding_attention", "full_attention")
        if not isinstance(kinds, list | tuple) or len(kinds) != layers:
            raise ConfigError(f"model.layer_types: expected a list of {layers} layer types")
        unknown = next((kind for kind in kinds if kind not in accepted), None)
        if unknown is not None:
            raise ConfigError(f"model.layer_types: {unknown!r} is not one of {', '.join(accepted)}")
        return tuple(kind == "sliding_attention" for kind in kinds)
    pattern = _optional_int(values, "sliding_window_pattern") or traits.full_attention_every
    if pattern:
        return tuple(bool((index + 1) % pattern) for index in range(layers))
    if traits.windows_from_max_window_layers and values.get("max_window_layers") is not None:
        first = _positive_int(values, "max_window_layers", allow_zero=True)
        return tuple(index >= first for index in range(layers))
    return ()


def _flag(values: Mapping[str, Any], key: str, default: bool) -> bool:
    value = values.get(key)
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    raise ConfigError(f"model.{key}: expected true or false, got {value!r}")


def _check_architecture(spec: ModelSpec, head_dim_given: bool) -> ModelSpec:
    """``spec`` when its sizes lie in ``limits.ARCHITECTURE_RANGES``, its parameters are at most
    ``limits.MAX_PARAMETERS``, and its heads fit together:
    the heads divide the hidden size unless ``head_dim`` is given, and the KV heads divide the
    heads (grouped-query attention; not checked for MLA, whose KV is a latent)."""
    from gpuplan.limits import ARCHITECTURE_RANGES, MAX_PARAMETERS, in_range

    sizes = {
        "num_hidden_layers": spec.num_layers,
        "hidden_size": spec.hidden_size,
        "intermediate_size": spec.intermediate_size,
        "num_attention_heads": spec.num_attention_heads,
        "num_key_value_heads": spec.num_kv_heads,
        "head_dim": spec.head_dim,
        "vocab_size": spec.vocab_size,
    }
    if spec.is_moe:
        sizes["num_experts"] = spec.num_experts
        sizes["num_experts_per_tok"] = spec.num_experts_per_token
        sizes["first_k_dense_replace"] = spec.first_dense_layers
        sizes["moe_layer_freq"] = spec.moe_layer_frequency
    optional = {
        "max_position_embeddings": spec.max_position_embeddings,
        "moe_intermediate_size": spec.moe_intermediate_size,
        "shared_expert_intermediate_size": spec.shared_expert_intermediate_size,
        "q_lora_rank": spec.q_lora_rank,
        "kv_lora_rank": spec.kv_lora_rank,
        "qk_nope_head_dim": spec.qk_nope_head_dim,
        "qk_rope_head_dim": spec.qk_rope_head_dim,
        "v_head_dim": spec.v_head_dim,
        "sliding_window": spec.sliding_window,
    }
    sizes.update({key: value for key, value in optional.items() if value})
    heads, kv_heads = spec.num_attention_heads, spec.num_kv_heads
    if not spec.uses_mla and not head_dim_given and spec.hidden_size % heads:
        raise ConfigError(
            f"model.num_attention_heads: {heads} heads do not divide hidden_size "
            f"{spec.hidden_size}; give head_dim"
        )
    if not spec.uses_mla and heads % kv_heads:
        raise ConfigError(
            f"model.num_key_value_heads: {kv_heads} does not divide num_attention_heads {heads}"
        )
    for key, value in sizes.items():
        low, high = ARCHITECTURE_RANGES[key]
        in_range(value, f"model.{key}", low, high, ConfigError)
    if spec.total_params > MAX_PARAMETERS:
        raise ConfigError(
            f"model: {spec.total_params:.3g} parameters, more than {MAX_PARAMETERS:.0e} "
            "(check num_hidden_layers, hidden_size, intermediate_size and the expert sizes)"
        )
    return spec


def _build_spec(
    name: str,
    family: str,
    traits: FamilyTraits,
    values: dict[str, Any],
    vision_params: int,
) -> ModelSpec:
    layers = _positive_int(values, "num_hidden_layers")
    hidden = _positive_int(values, "hidden_size")
    heads = _positive_int(values, "num_attention_heads")
    kv_heads = _optional_int(values, "num_key_value_heads") or heads
    head_dim = _optional_int(values, "head_dim") or hidden // heads
    gated, norms_per_layer, norm = traits.gated_mlp, traits.norms_per_layer, traits.norm
    qkv_bias, output_bias, mlp_bias = traits.qkv_bias, traits.output_bias, traits.mlp_bias

    if family == "falcon":
        if _flag(values, "new_decoder_architecture", False):
            norms_per_layer = 2
            kv_heads = _optional_int(values, "num_kv_heads") or kv_heads
        elif _flag(values, "multi_query", True):
            kv_heads = 1
        qkv_bias = output_bias = mlp_bias = _flag(values, "bias", False)
    elif family == "mpt":
        if not _flag(values, "no_bias", True):
            qkv_bias = output_bias = mlp_bias = True
            norm = "layernorm"
        ratio = values.get("expansion_ratio", 4)
        values.setdefault("intermediate_size", int(ratio * hidden))
    elif family == "chatglm":
        if not _flag(values, "multi_query_attention", True):
            kv_heads = heads
        qkv_bias = _flag(values, "add_qkv_bias", True)
        output_bias = mlp_bias = _flag(values, "add_bias_linear", False)
    elif family == "internlm2":
        qkv_bias = output_bias = _flag(values, "bias", False)
    else:
        qkv_bias = _flag(values, "attention_bias", qkv_bias)
        if family in ("llama", "mistral", "olmo2", "gemma2", "gemma3_text", "qwen3", "qwen3_moe"):
            output_bias = qkv_bias
        mlp_bias = _flag(values, "mlp_bias", mlp_bias)

    if not gated:
        values.setdefault("intermediate_size", 4 * hidden)
        if values.get("intermediate_size") is None:
            values["intermediate_size"] = 4 * hidden
    intermediate = _positive_int(values, "intermediate_size")
    vocab = _positive_int(values, "vocab_size")

    num_experts = _optional_int(values, "num_experts") or 0
    experts_per_token = _optional_int(values, "num_experts_per_tok") or 0
    moe_intermediate = _optional_int(values, "moe_intermediate_size") or 0
    shared_intermediate = 0
    shared_gate = False
    first_dense = 0
    frequency = 1
    router = None
    if num_experts:
        if family == "mixtral":
            moe_intermediate = moe_intermediate or intermediate
        if not moe_intermediate:
            raise ConfigError("model.moe_intermediate_size: missing for a mixture-of-experts model")
        if experts_per_token < 1 or experts_per_token > num_experts:
            raise ConfigError(
                f"model.num_experts_per_tok: must be between 1 and num_experts ({num_experts}), "
                f"got {experts_per_token}"
            )
        shared = _optional_int(values, "num_shared_experts") or 0
        shared_intermediate = shared * moe_intermediate
        if values.get("shared_expert_intermediate_size"):
            shared_intermediate = _positive_int(values, "shared_expert_intermediate_size")
            shared_gate = family == "qwen2_moe"
        first_dense = _optional_int(values, "first_k_dense_replace") or 0
        frequency = (
            _optional_int(values, "moe_layer_freq")
            or _optional_int(values, "decoder_sparse_step")
            or 1
        )
        router = read_router_settings(
            values, num_experts, traits.router_score_function, traits.router_always_normalizes
        )

    kv_lora = _optional_int(values, "kv_lora_rank") if family.startswith("deepseek") else None
    position = str(values.get("position_embedding_type") or traits.position_embedding)
    max_positions = _optional_int(values, "max_position_embeddings")
    learned_rows = 0
    if position == "learned":
        if max_positions is None:
            raise ConfigError("model.max_position_embeddings: needed for learned positions")
        learned_rows = max_positions + traits.learned_position_offset
    given_window = values.get("sliding_window")
    sliding = (
        int(given_window)
        if isinstance(given_window, int) and not isinstance(given_window, bool)
        else None
    )
    if not _flag(values, "use_sliding_window", True):
        sliding = None
    window_layers = _sliding_window_layers(values, traits, layers) if sliding else ()
    if window_layers and not any(window_layers):
        sliding = None
    if all(window_layers):
        window_layers = ()

    if qkv_bias and family in ("gpt2", "opt", "bloom"):
        output_bias = True

    spec = ModelSpec(
        name=name,
        family=family,
        num_layers=layers,
        hidden_size=hidden,
        num_attention_heads=heads,
        num_kv_heads=kv_heads,
        head_dim=head_dim,
        intermediate_size=intermediate,
        vocab_size=vocab,
        max_position_embeddings=max_positions,
        tie_word_embeddings=_flag(values, "tie_word_embeddings", traits.tie_word_embeddings),
        gated_mlp=gated,
        hidden_act=str(
            values.get("hidden_act") or values.get("activation_function") or traits.hidden_act
        ),
        qkv_bias=qkv_bias,
        output_bias=output_bias,
        mlp_bias=mlp_bias,
        norm=norm,
        norms_per_layer=norms_per_layer,
        qk_norm=traits.qk_norm,
        position_embedding=position,
        learned_position_rows=learned_rows,
        embedding_norm=traits.embedding_norm,
        parallel_attention=traits.parallel_attention,
        num_experts=num_experts,
        num_experts_per_token=experts_per_token,
        moe_intermediate_size=moe_intermediate,
        shared_expert_intermediate_size=shared_intermediate,
        shared_expert_gate=shared_gate,
        first_dense_layers=first_dense,
        moe_layer_frequency=frequency,
        router_bias=router is not None and router.expert_bias,
        q_lora_rank=_optional_int(values, "q_lora_rank") if kv_lora is not None else None,
        kv_lora_rank=kv_lora,
        qk_nope_head_dim=_optional_int(values, "qk_nope_head_dim") or 0 if kv_lora else 0,
        qk_rope_head_dim=_optional_int(values, "qk_rope_head_dim") or 0 if kv_lora else 0,
        v_head_dim=_optional_int(values, "v_head_dim") or 0 if kv_lora else 0,
        sliding_window=sliding,
        sliding_window_layers=window_layers,
        vision_params=vision_params,
        settings=replace(read_model_settings(values), router=router),
    )
    return _check_architecture(spec, head_dim_given=bool(values.get("head_dim")))
