"""ModelSpec: the architecture of a decoder-only transformer and its exact parameter count.

A spec is built from a Hugging Face ``config.json`` (a file, or the same keys in a mapping)
by :func:`ModelSpec.from_hf_config`, or from the built-in catalog by name
(:func:`gpuplan.catalog.load_model`). ``model_type`` picks the family
(:mod:`gpuplan.workload.families`, one small module per family), and with it the traits
that a config does not spell out: gated or plain MLP, which projections carry biases,
LayerNorm or RMSNorm, norms per layer, learned or rotary positions. Keys a config leaves out
take that family's ``transformers`` default.

Parameter counting follows the shapes of the ``transformers`` modelling code (a linear map
a -> b holds a*b weights plus b when it has a bias); the per-family rules and their traps are
summarised in the docstring of :func:`parameter_breakdown`. This module is the one place
that counts; the families only decide the fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from gpuplan.workload.hf_config import ConfigError
from gpuplan.workload.model_settings import NO_SETTINGS, ModelSettings

__all__ = ["ConfigError", "ModelSpec"]


@dataclass(frozen=True)
class ModelSpec:
    """A decoder-only transformer, dense or mixture-of-experts, as the training models see it.

    Sizes follow config.json names. ``head_dim`` is explicit (Gemma and Qwen3 differ from
    hidden/heads). MoE fields are zero for dense models. Multi-head latent attention
    (DeepSeek-V2/V3) is on when ``kv_lora_rank`` is set. ``attention_sinks``: one learned
    logit per head and layer joins each softmax (gpt-oss, transformers ``GptOssAttention.sinks``).
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
    moe_layer_offset: int = 1
    """Layer ``i`` (from ``first_dense_layers`` on) routes when ``(i + offset) % frequency == 0``:
    DeepSeek 0 (``i % moe_layer_freq``), Qwen-MoE, Mixtral and Llama 4 1 (``(i + 1) % step``)."""
    router_bias: bool = False
    """The router holds one bias per expert (DeepSeek-V3's ``e_score_correction_bias``,
    gpt-oss's router ``Linear`` bias)."""
    q_lora_rank: int | None = None
    kv_lora_rank: int | None = None
    qk_nope_head_dim: int = 0
    qk_rope_head_dim: int = 0
    v_head_dim: int = 0
    sliding_window: int | None = None
    sliding_window_layers: tuple[bool, ...] = ()
    """Per layer, whether it attends through ``sliding_window``; empty: every layer does."""
    attention_chunk_size: int | None = None
    """Chunked attention (Llama 4): a query sees the keys of its own chunk of this many
    positions only, causally (transformers ``create_chunked_causal_mask``)."""
    chunked_attention_layers: tuple[bool, ...] = ()
    """Per layer, whether it attends in chunks; empty: every layer does."""
    attention_sinks: bool = False
    vision_params: int = 0
    settings: ModelSettings = NO_SETTINGS
    """Rotary base and scaling, norm epsilon: what an export writes (``model_settings``)."""
    defaults_taken: tuple[str, ...] = field(default=(), compare=False)
    """Keys the config left out that the family's ``transformers`` defaults filled
    (:func:`gpuplan.workload.hf_config.defaults_taken`); what a warning names."""

    # --- construction ---------------------------------------------------------------------

    @classmethod
    def from_hf_config(
        cls, config: Mapping[str, Any] | str | Path, name: str | None = None
    ) -> ModelSpec:
        """Build a spec from a Hugging Face config.json (path) or a mapping of its keys.

        Multimodal configs (Gemma 3, Llama 4) take their ``text_config``; the vision tower's
        parameters are counted separately in ``vision_params``.
        """
        from gpuplan.workload.families import spec_from_config

        return spec_from_config(config, name)

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

    def is_chunked_layer(self, index: int) -> bool:
        """Whether layer ``index`` (0-based) attends in chunks of ``attention_chunk_size``."""
        if self.attention_chunk_size is None:
            return False
        return not self.chunked_attention_layers or self.chunked_attention_layers[index]

    def is_moe_layer(self, index: int) -> bool:
        """Whether layer ``index`` (0-based) routes to experts:
        ``index >= first_dense_layers and (index + moe_layer_offset) % moe_layer_frequency == 0``.

        DeepSeek (offset 0): ``index >= first_k_dense_replace and index % moe_layer_freq == 0``
        (transformers ``modeling_deepseek_v3.py``); Qwen-MoE and Mixtral (offset 1)
        ``(index + 1) % decoder_sparse_step == 0`` with no dense prefix, Llama 4 the same with
        ``interleave_moe_layer_step`` (``moe_layers = range(step - 1, layers, step)``).
        """
        if not self.is_moe or index < self.first_dense_layers:
            return False
        return (index + self.moe_layer_offset) % self.moe_layer_frequency == 0

    @cached_property
    def num_moe_layers(self) -> int:
        """How many layers :meth:`is_moe_layer` selects, counted in closed form (no loop over
        the layers): the multiples of the frequency among ``index + moe_layer_offset`` from
        the first routed layer on."""
        if not self.is_moe:
            return 0
        first, last, frequency = self.first_dense_layers, self.num_layers, self.moe_layer_frequency
        if first >= last:
            return 0
        low, high = first + self.moe_layer_offset, last + self.moe_layer_offset
        return (high - 1) // frequency - (low - 1) // frequency

    @property
    def num_dense_layers(self) -> int:
        return self.num_layers - self.num_moe_layers

    # --- parameters -----------------------------------------------------------------------

    def attention_params_per_layer(self) -> int:
        """Weights of one attention block: projections, their biases, q/k norms.

        Standard (MHA/GQA/MQA): q d->H*h, k and v d->K*h, o H*h->d; attention sinks add H.
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
        if self.attention_sinks:
            params += heads
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
