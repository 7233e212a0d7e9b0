"""FLOPs per token of a training job: counted from the architecture, and by published conventions.

**Our count** (:func:`forward_flops_per_token`, :func:`training_flops_per_token`). A linear map
with ``a * b`` weights costs ``2 * a * b`` FLOPs per token in the forward pass (one multiply and
one add per weight). A token passes through the attention projections (with multi-head latent
attention's low-rank paths), the dense MLP or, in a mixture-of-experts layer, the router, its
``k`` routed experts and the shared experts, and finally the output head. The embedding lookup
costs nothing; norms, activations, biases and the softmax are left out, as every convention
below does. The attention core (``QK^T`` and ``AV``) costs ``2 * keys * H * (d_qk + d_v)`` per
token and layer, where ``keys`` is the number of keys a query attends to: ``(s + 1) / 2`` on
average under a causal mask, ``s`` without one.

Training multiplies the forward pass by three (forward, input gradient, weight gradient;
Narayanan et al. 2021, appendix): that is the **model FLOPs** of MFU. **Hardware FLOPs** (HFU)
add what activation recomputation runs again: one more forward pass of the layers under full
recompute, the attention core's forward under selective recompute (Korthikanti et al. 2022,
section 5). Frozen weights need no weight gradient, so LoRA, QLoRA and freeze tuning cost
``2 x`` forward in frozen linears (about ``4N`` instead of ``6N`` per token), plus ``6 x`` the
adapter parameters (shared/references/modeling-tools.md, section 4.3).

**Published conventions** (:data:`CONVENTIONS`), to turn a published TFLOP/s or MFU back into
tokens per second, and which calibration file (shared/calibration/) uses which:

============== ==================================================== ===============================
name           training FLOPs per token                             used by
============== ==================================================== ===============================
palm           ``6 * N + 12 * L * H * head_dim * s`` (N without     torchtitan_llama3.csv
               embedding tables; Chowdhery et al. 2022, app. B;
               torchtitan ``torchtitan/models/utils.py``)
megatron       ``72 * L * h^2 * (1 + s/6h + V/12Lh)``; with full    megatron_lm_readme_scaling.csv
               recompute ``96 * L * h^2 * (1 + s/6h + V/16Lh)``      (2021 rows, as HFU),
               (Narayanan et al. 2021, eq. 3, divided by ``B*s``)   korthikanti2022_selective_
                                                                    recompute.csv, internevo
megatron-3/4   3/4 of the 96 formula above                          flashattention_gpt_a100.csv
               (Dao-AILab/flash-attention ``training/README.md``)
megatron-core  our count without the causal mask: Megatron-Core's   megatron_lm_readme_scaling.csv
               ``num_floating_point_operations``                    (2024 H100 rows)
               (``megatron/training/training.py``)
llm-foundry    ``6 * N + 12 * L * d * s``, N all parameters with    llmfoundry_mpt_throughput.csv
               learned positions; HFU with activation checkpointing
               ``8 * N + 16 * L * d * s`` (mosaicml/llm-foundry
               ``scripts/train/benchmarking/collect_results.py``)
gpuplan        our count: causal-exact, 3 x forward                 gpuplan's own MFU
============== ==================================================== ===============================

Every convention except ours counts the attention core without the causal mask (full ``s^2``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gpuplan.errors import InputError
from gpuplan.estimate.memory import lora_params_per_layer
from gpuplan.workload.job import TrainingJob
from gpuplan.workload.model import ModelSpec

FloatArray = npt.NDArray[np.float64]
ArrayLike = float | int | npt.NDArray[np.float64] | npt.NDArray[np.int64]

PARTS = ("attention_projections", "dense_mlp", "experts", "attention_core", "head", "adapters")
"""The parts of :class:`TrainingFlops`, in the order a layer runs them."""

RECOMPUTE_NONE, RECOMPUTE_SELECTIVE, RECOMPUTE_FULL = 0, 1, 2
"""Codes of ``gpuplan.strategy.RECOMPUTE`` as :class:`~gpuplan.strategy.Layout` carries them."""


# --- the attention core ----------------------------------------------------------------------


def attended_keys_per_query(
    seq_len: ArrayLike,
    causal: bool = True,
    window: int | None = None,
    chunk: int | None = None,
) -> FloatArray:
    """Average number of keys one query attends to in a sequence of ``seq_len`` tokens.

    Causal: query ``i`` (1-based) sees ``i`` keys, on average ``(s + 1) / 2``. With a sliding
    window of ``w`` keys (itself included) query ``i`` sees ``min(i, w)``: on average
    ``(w(w + 1)/2 + (s - w) w) / s`` once ``s > w``. Without the mask every query sees ``s``.
    In chunks of ``c`` positions (Llama 4's chunked attention, transformers
    ``create_chunked_causal_mask``) a query sees only its own chunk: with ``s = q c + r``,
    ``(q c(c + 1)/2 + r(r + 1)/2) / s`` causally, ``(q c^2 + r^2) / s`` without the mask.
    """
    length = np.asarray(seq_len, dtype=float)
    if chunk is not None:
        return _chunked_keys_per_query(length, float(chunk), causal)
    if not causal:
        return length if window is None else np.minimum(length, float(window))
    full = (length + 1.0) / 2.0
    if window is None:
        return full
    w = float(window)
    windowed = (w * (w + 1.0) / 2.0 + (length - w) * w) / np.maximum(length, 1.0)
    return np.where(length > w, windowed, full)


def _chunked_keys_per_query(length: FloatArray, chunk: float, causal: bool) -> FloatArray:
    """:func:`attended_keys_per_query` in chunks of ``chunk`` positions."""
    whole = np.floor(length / chunk)
    rest = length - whole * chunk
    if causal:
        keys = whole * chunk * (chunk + 1.0) / 2.0 + rest * (rest + 1.0) / 2.0
    else:
        keys = whole * chunk * chunk + rest * rest
    return keys / np.maximum(length, 1.0)


def attention_head_widths(model: ModelSpec) -> tuple[int, int]:
    """(query-key width, value width) of one head: ``head_dim`` twice, or for multi-head latent
    attention ``qk_nope + qk_rope`` and ``v_head_dim`` (DeepSeek-V2, section 2.1)."""
    if model.uses_mla:
        return model.qk_nope_head_dim + model.qk_rope_head_dim, model.v_head_dim
    return model.head_dim, model.head_dim


def attention_core_forward_flops_per_token(
    model: ModelSpec,
    seq_len: ArrayLike,
    causal: bool = True,
    window: int | None = None,
    chunk: int | None = None,
) -> FloatArray:
    """Forward FLOPs of ``QK^T`` and ``AV`` per token in one layer:
    ``2 * keys * H * d_qk + 2 * keys * H * d_v`` with ``keys`` from
    :func:`attended_keys_per_query` (Narayanan et al. 2021, appendix: ``4 * s * h`` per token
    without the mask), through a sliding ``window`` or in ``chunk``-sized blocks when the
    layer has one."""
    qk_width, v_width = attention_head_widths(model)
    keys = attended_keys_per_query(seq_len, causal, window, chunk)
    return 2.0 * keys * model.num_attention_heads * (qk_width + v_width)


# --- linear layers ---------------------------------------------------------------------------


def attention_projection_weights(model: ModelSpec) -> int:
    """Weights of one layer's attention projections, the matrices only (no biases, norms).

    Standard: q ``d x H*h``, k and v ``d x K*h``, o ``H*h x d``. Multi-head latent attention
    (DeepSeek-V2 eq. 9-14): q through ``d x r_q`` and ``r_q x H*(nope+rope)`` (or ``d x
    H*(nope+rope)`` without query compression), kv through ``d x (r_kv + rope)`` and
    ``r_kv x H*(nope+v)``, o ``H*v x d``.
    """
    d, heads = model.hidden_size, model.num_attention_heads
    if model.uses_mla:
        assert model.kv_lora_rank is not None
        q_head = model.qk_nope_head_dim + model.qk_rope_head_dim
        if model.q_lora_rank:
            query = d * model.q_lora_rank + model.q_lora_rank * heads * q_head
        else:
            query = d * heads * q_head
        key_value = d * (
            model.kv_lora_rank + model.qk_rope_head_dim
        ) + model.kv_lora_rank * heads * (model.qk_nope_head_dim + model.v_head_dim)
        return query + key_value + heads * model.v_head_dim * d
    return 2 * model.hidden_size * model.q_width + 2 * model.hidden_size * model.kv_width


def mlp_weights(model: ModelSpec, width: int) -> int:
    """Weights of one feed-forward block of inner width ``width``: gated ``3 * d * F``
    (SwiGLU, Shazeer 2020), plain ``2 * d * F``."""
    return (3 if model.gated_mlp else 2) * model.hidden_size * width


def active_expert_weights(model: ModelSpec) -> int:
    """Weights one token passes through in a mixture-of-experts block: the router
    ``d x E``, its ``k`` routed experts, the shared experts and their gate (``d x 1``)."""
    weights = model.hidden_size * model.num_experts
    weights += model.num_experts_per_token * mlp_weights(model, model.moe_intermediate_size)
    if model.shared_expert_intermediate_size:
        weights += mlp_weights(model, model.shared_expert_intermediate_size)
    if model.shared_expert_gate:
        weights += model.hidden_size
    return weights


# --- forward and training counts -------------------------------------------------------------


@dataclass(frozen=True)
class ForwardFlops:
    """Forward FLOPs per token by part, summed over the layers that ``layers`` selects."""

    attention_projections: float
    dense_mlp: float
    experts: float
    attention_core: FloatArray
    head: float

    @property
    def layers(self) -> FloatArray:
        """Everything but the output head."""
        return self.attention_projections + self.dense_mlp + self.experts + self.attention_core

    @property
    def total(self) -> FloatArray:
        return self.layers + self.head


def forward_flops_per_token(
    model: ModelSpec,
    seq_len: ArrayLike,
    causal: bool = True,
    layers: range | None = None,
    include_head: bool = True,
    document_tokens: int | None = None,
) -> ForwardFlops:
    """Forward FLOPs per token: ``2 x`` the weights of each linear a token passes through, plus
    the attention core (module docstring). ``layers`` picks layer indices (default: all); the
    head is ``2 * d * V`` whether or not it is tied to the embedding. Layers with a sliding
    window (``ModelSpec.is_windowed_layer``) attend to at most ``sliding_window`` keys, layers
    with chunked attention (``ModelSpec.is_chunked_layer``) to their own chunk's, and every
    layer only within its document where documents of ``document_tokens`` are packed into the
    sequence (:func:`packed_document_chunk`)."""
    indices = range(model.num_layers) if layers is None else layers
    moe_layers = sum(1 for index in indices if model.is_moe_layer(index))
    dense_layers = len(indices) - moe_layers
    return ForwardFlops(
        attention_projections=2.0 * len(indices) * attention_projection_weights(model),
        dense_mlp=2.0 * dense_layers * mlp_weights(model, model.intermediate_size),
        experts=2.0 * moe_layers * active_expert_weights(model) if moe_layers else 0.0,
        attention_core=_attention_core(model, seq_len, causal, indices, document_tokens),
        head=2.0 * model.hidden_size * model.vocab_size if include_head else 0.0,
    )


def packed_document_chunk(chunk: int | None, document_tokens: int | None) -> int | None:
    """The block a query attends within: its document where documents of ``document_tokens``
    are packed back to back into the sequence under a document mask (the mask is the chunked
    mask of :func:`attended_keys_per_query` with ``c`` the document length, Σ L_i² over the
    documents; shared/references/modeling-tools.md, section 4.3), the smaller of that and a
    chunked layer's own ``chunk``."""
    blocks = [size for size in (chunk, document_tokens) if size is not None]
    return min(blocks) if blocks else None


def _attention_core(
    model: ModelSpec,
    seq_len: ArrayLike,
    causal: bool,
    indices: range,
    document_tokens: int | None = None,
) -> FloatArray:
    """The attention core of the layers ``indices``: full, windowed and chunked layers each
    by their own mask, inside each packed document (:func:`packed_document_chunk`); a
    windowed layer sees the fewer of its window's and its document's keys."""
    windowed = sum(1 for index in indices if model.is_windowed_layer(index))
    chunked = sum(1 for index in indices if model.is_chunked_layer(index))
    full = attention_core_forward_flops_per_token(model, seq_len, causal, chunk=document_tokens)
    core = (len(indices) - windowed - chunked) * full
    if windowed:
        window = attention_core_forward_flops_per_token(
            model, seq_len, causal, model.sliding_window
        )
        core = core + windowed * np.minimum(window, full)
    if chunked:
        core = core + chunked * attention_core_forward_flops_per_token(
            model,
            seq_len,
            causal,
            chunk=packed_document_chunk(model.attention_chunk_size, document_tokens),
        )
    return core


@dataclass(frozen=True)
class TrainingFlops:
    """Training FLOPs per token by part (:data:`PARTS`).

    ``parts`` are model FLOPs (the MFU numerator); ``recompute_parts`` the extra FLOPs that
    activation recomputation runs. Every array has the broadcast shape of ``seq_len`` and the
    recompute codes.
    """

    parts: dict[str, FloatArray]
    recompute_parts: dict[str, FloatArray]

    @property
    def model(self) -> FloatArray:
        """Model FLOPs per token: the MFU numerator, no recompute."""
        return np.asarray(sum(self.parts.values()), dtype=float)

    @property
    def hardware(self) -> FloatArray:
        """Hardware FLOPs per token: model FLOPs plus recompute, the HFU numerator."""
        return self.model + np.asarray(sum(self.recompute_parts.values()), dtype=float)


def adapter_params(job: TrainingJob) -> int:
    """LoRA parameters of the whole model: ``r * (d_in + d_out)`` per target module and layer
    (Hu et al. 2021); zero for other methods."""
    if not job.is_adapter:
        return 0
    return job.model.num_layers * lora_params_per_layer(job.model, job.lora.rank, job.lora.targets)


def training_flops_per_token(
    job: TrainingJob,
    recompute: ArrayLike = RECOMPUTE_NONE,
    causal: bool = True,
    seq_len: ArrayLike | None = None,
) -> TrainingFlops:
    """Training FLOPs per token of ``job`` (``seq_len`` defaults to the job's).

    - full: every linear and the attention core ``3 x`` forward (forward, input gradient, weight
      gradient; Narayanan et al. 2021, appendix).
    - lora, qlora: frozen linears and the head ``2 x`` forward (no weight gradient), the attention
      core ``3 x``, adapters ``6 x`` their parameters. QLoRA's dequantization is memory traffic,
      not matmul FLOPs, and is not counted here.
    - freeze: the last ``trainable_layers`` layers ``3 x``; the frozen head ``2 x``; the frozen
      layers below forward only, since no gradient needs to reach them.

    ``recompute`` (codes of ``strategy.RECOMPUTE``, broadcastable) adds, for each layer that runs
    a backward pass, one more forward of its linears, core and adapters (full) or of its
    attention core (selective; Korthikanti et al. 2022, section 5).
    """
    model = job.model
    length = job.seq_len if seq_len is None else seq_len
    documents = job.document_tokens
    codes = np.asarray(recompute)
    if job.method == "freeze":
        assert job.trainable_layers is not None
        first_trained = model.num_layers - job.trainable_layers
        trained = forward_flops_per_token(
            model, length, causal, range(first_trained, model.num_layers), document_tokens=documents
        )
        frozen = forward_flops_per_token(
            model,
            length,
            causal,
            range(first_trained),
            include_head=False,
            document_tokens=documents,
        )
        backward_layers, linear_factor, frozen_forward = trained, 3.0, frozen
        head_factor = 2.0
    else:
        backward_layers = forward_flops_per_token(model, length, causal, document_tokens=documents)
        frozen_forward = forward_flops_per_token(
            model, length, causal, range(0), include_head=False, document_tokens=documents
        )
        linear_factor = 2.0 if job.is_adapter else 3.0
        head_factor = linear_factor
    adapter_forward = 2.0 * adapter_params(job)

    def linear(name: str) -> FloatArray:
        return np.asarray(
            linear_factor * getattr(backward_layers, name) + getattr(frozen_forward, name),
            dtype=float,
        )

    parts = {
        "attention_projections": linear("attention_projections"),
        "dense_mlp": linear("dense_mlp"),
        "experts": linear("experts"),
        "attention_core": 3.0 * backward_layers.attention_core + frozen_forward.attention_core,
        "head": np.asarray(head_factor * backward_layers.head, dtype=float),
        "adapters": np.asarray(3.0 * adapter_forward, dtype=float),
    }
    full = codes == RECOMPUTE_FULL
    any_recompute = codes != RECOMPUTE_NONE

    def again(value: float | FloatArray, when: npt.NDArray[np.bool_]) -> FloatArray:
        return np.where(when, value, 0.0).astype(float)

    recompute_parts = {
        "attention_projections": again(backward_layers.attention_projections, full),
        "dense_mlp": again(backward_layers.dense_mlp, full),
        "experts": again(backward_layers.experts, full),
        "attention_core": again(backward_layers.attention_core, any_recompute),
        "head": again(0.0, full),
        "adapters": again(adapter_forward, full),
    }
    shape = np.zeros(np.broadcast_shapes(np.shape(length), codes.shape))
    return TrainingFlops(
        parts={name: value + shape for name, value in parts.items()},
        recompute_parts={name: value + shape for name, value in recompute_parts.items()},
    )


# --- published conventions -------------------------------------------------------------------


def palm_params(model: ModelSpec) -> int:
    """N of the PaLM convention as torchtitan counts it (``get_nparams_and_active_nparams`` in
    ``torchtitan/models/utils.py``): active parameters (routed experts weighted by ``k / E``),
    without embedding tables unless the table is also the output head. Norms and biases count.
    Older torchtitan (``get_num_params(exclude_embedding=True)``) subtracted the token embedding
    even when tied; for untied models (Llama) the two agree."""
    breakdown = model.parameter_breakdown(active_only=True)
    params = sum(breakdown.values()) - breakdown["vision"] - breakdown["embeddings"]
    if model.tie_word_embeddings:
        params += model.vocab_size * model.hidden_size
    return params


def palm_flops_per_token(model: ModelSpec, seq_len: ArrayLike) -> FloatArray:
    """``6 * N + 12 * L * H * head_dim * s`` (Chowdhery et al. 2022, appendix B), with N from
    :func:`palm_params`; for different query-key and value widths torchtitan writes the attention
    term ``6 * L * H * (d_qk + d_v) * s`` (``quadratic_attention_flops_per_token``). No causal
    halving, no recompute."""
    qk_width, v_width = attention_head_widths(model)
    length = np.asarray(seq_len, dtype=float)
    attention = 6.0 * model.num_layers * model.num_attention_heads * (qk_width + v_width) * length
    return 6.0 * palm_params(model) + attention


def megatron_flops_per_token(
    model: ModelSpec, seq_len: ArrayLike, full_recompute: bool = False
) -> FloatArray:
    """Narayanan et al. 2021, eq. 3, per token (divided by ``B * s``), for a GPT with a 4h MLP:
    model FLOPs ``72 * l * h^2 * (1 + s/(6h) + V/(12 l h))``; with full recompute (the paper's
    own figure, counting the recomputed forward) ``96 * l * h^2 * (1 + s/(6h) + V/(16 l h))``."""
    layers, hidden, vocab = model.num_layers, float(model.hidden_size), model.vocab_size
    length = np.asarray(seq_len, dtype=float)
    if full_recompute:
        return (
            96.0 * layers * hidden**2 * (1 + length / (6 * hidden) + vocab / (16 * layers * hidden))
        )
    return 72.0 * layers * hidden**2 * (1 + length / (6 * hidden) + vocab / (12 * layers * hidden))


def megatron_three_quarters_flops_per_token(model: ModelSpec, seq_len: ArrayLike) -> FloatArray:
    """The FlashAttention repository's TFLOP/s: the Megatron-LM paper's formula (with recompute)
    times 3/4, "to get the model FLOPs" (Dao-AILab/flash-attention ``training/README.md``):
    ``72 * l * h^2 * (1 + s/(6h) + V/(16 l h))``."""
    return 0.75 * megatron_flops_per_token(model, seq_len, full_recompute=True)


def llm_foundry_flops_per_token(
    model: ModelSpec,
    seq_len: ArrayLike,
    num_params: int | None = None,
    activation_checkpointing: bool = False,
) -> FloatArray:
    """mosaicml/llm-foundry ``scripts/train/benchmarking/collect_results.py``: per sequence
    ``2 * N * s`` for the weights and ``L * 2 * 2 * d * s^2`` for attention, times 3 for MFU and
    times 4 for HFU when activation checkpointing is on. Per token: ``6N + 12 L d s`` or
    ``8N + 16 L d s``. N is every parameter including learned position embeddings; pass the
    published ``NumParams`` as ``num_params`` to reproduce their table exactly."""
    params = model.text_params if num_params is None else num_params
    factor = 4.0 if activation_checkpointing else 3.0
    length = np.asarray(seq_len, dtype=float)
    return factor * (2.0 * params + 4.0 * model.num_layers * model.hidden_size * length)


def gpuplan_flops_per_token(
    model: ModelSpec, seq_len: ArrayLike, causal: bool = True
) -> FloatArray:
    """Our count for full training: ``3 x`` the forward pass, causal-exact by default."""
    return 3.0 * forward_flops_per_token(model, seq_len, causal).total


def megatron_core_flops_per_token(model: ModelSpec, seq_len: ArrayLike) -> FloatArray:
    """Megatron-Core's ``num_floating_point_operations`` counts the same matrices as our count
    (GQA projections, gated MLP, routed and shared experts, the head) with an unmasked core."""
    return gpuplan_flops_per_token(model, seq_len, causal=False)


CONVENTIONS: dict[str, Callable[[ModelSpec, ArrayLike], FloatArray]] = {
    "palm": palm_flops_per_token,
    "megatron": megatron_flops_per_token,
    "megatron-3/4": megatron_three_quarters_flops_per_token,
    "megatron-core": megatron_core_flops_per_token,
    "llm-foundry": llm_foundry_flops_per_token,
    "gpuplan": gpuplan_flops_per_token,
}
"""Model FLOPs per token (no recompute) under each published convention."""


def convention_flops_per_token(convention: str, model: ModelSpec, seq_len: ArrayLike) -> FloatArray:
    """Model FLOPs per token under ``convention`` (a key of :data:`CONVENTIONS`)."""
    if convention not in CONVENTIONS:
        raise InputError.of(
            "error.not_one_of",
            field="convention",
            value=repr(convention),
            accepted=", ".join(CONVENTIONS),
        )
    return CONVENTIONS[convention](model, seq_len)


# --- utilization -----------------------------------------------------------------------------


def flops_utilization(
    tokens_per_second_per_gpu: ArrayLike, flops_per_token: ArrayLike, peak_flops: ArrayLike
) -> FloatArray:
    """Achieved FLOP/s over the dense peak: ``tokens/s/GPU * FLOPs/token / peak``
    (Chowdhery et al. 2022, appendix B). With model FLOPs it is MFU, with hardware FLOPs HFU."""
    return np.asarray(tokens_per_second_per_gpu, dtype=float) * flops_per_token / peak_flops


def mfu(
    tokens_per_second_per_gpu: ArrayLike, flops: TrainingFlops, peak_flops: ArrayLike
) -> FloatArray:
    """Model FLOPs utilization: :func:`flops_utilization` with ``flops.model``."""
    return flops_utilization(tokens_per_second_per_gpu, flops.model, peak_flops)


def hfu(
    tokens_per_second_per_gpu: ArrayLike, flops: TrainingFlops, peak_flops: ArrayLike
) -> FloatArray:
    """Hardware FLOPs utilization: :func:`flops_utilization` with ``flops.hardware``."""
    return flops_utilization(tokens_per_second_per_gpu, flops.hardware, peak_flops)


def tokens_per_second_from_flops_rate(
    flops_per_second_per_gpu: ArrayLike, flops_per_token: ArrayLike
) -> FloatArray:
    """Tokens per second per GPU behind a published TFLOP/s figure, under the same convention's
    FLOPs per token."""
    return np.asarray(flops_per_second_per_gpu, dtype=float) / flops_per_token


def tokens_per_second_from_utilization(
    utilization: ArrayLike, flops_per_token: ArrayLike, peak_flops: ArrayLike
) -> FloatArray:
    """Tokens per second per GPU behind a published MFU or HFU (a fraction, not percent)."""
    return np.asarray(utilization, dtype=float) * peak_flops / flops_per_token
