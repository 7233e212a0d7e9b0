"""HBM bytes of the memory-bound work of a transformer layer, op by op.

Every elementwise or reduction kernel reads its inputs and writes its outputs once; what the
stack fuses decides how many kernels there are and what they move. Per token, for hidden ``h``,
query width ``q``, K/V width ``k``, FFN width ``F`` (per expert times the experts a token visits
for MoE), counting bf16 tensors at 2 bytes and fp32 intermediates at 4:

================= ================================ =============================================
op                fused (one kernel per op)         eager PyTorch
================= ================================ =============================================
RMSNorm           fwd read x, write y: 4h           fwd ``x.float()``, ``pow``, ``mean``, ``*
                  bwd read dy, x, write dx: 6h      rsqrt``, ``type_as``, ``* weight``: 32h;
                                                    bwd twice that: 64h
LayerNorm         4h / 6h                           ``native_layer_norm`` is one kernel: 4h / 6h
RoPE (q and k)    fwd 4 (q + k), bwd 4 (q + k)      fp32 complex product and casts: 22 (q + k)
                                                    each way
SwiGLU            fwd read gate, up, write: 6F      ``silu`` then ``*``: 10F
                  bwd: 10F                          bwd of both: 16F
GeLU              fwd 4F, bwd 6F                    the same (one kernel each way)
residual adds     2 per layer, 6h each way          the same
MoE permutation   gather and scatter of each        the same
                  routed token: 8 h k_e each way
================= ================================ =============================================

The fused column is Megatron-Core with Transformer Engine or Apex (fused RMSNorm/LayerNorm,
``bias_swiglu``, fused RoPE; ``megatron/core/fusions``), any stack with ``fused_kernels: true``
(the FlashAttention repository's ``flash_attn/ops``, Liger or Unsloth kernels: fused norm, RoPE,
SwiGLU and cross-entropy) and any stack under ``torch.compile``, whose Inductor backend fuses each chain of pointwise ops into one kernel
(PyTorch 2 paper, Ansel et al. 2024, section 4). The eager column follows the op sequences of
torchtitan's ``RMSNorm``/``apply_rotary_emb`` (``torchtitan/models/llama3/model``) and Hugging
Face's ``LlamaRMSNorm``/``apply_rotary_pos_emb``. A backward of a chain of pointwise ops reads the
incoming gradient and the saved inputs and writes one gradient per input.

Full recompute runs the forward ops again in backward. Ops on the ``h``-wide tensors (norms,
residuals) run on every tensor-parallel rank unless sequence parallelism splits them; the others
are split by tensor parallelism.

The loss, per token on the last stage, over ``V / tp`` logits: a fused cross-entropy (the
FlashAttention repository's Triton kernel, Liger's, Transformer Engine's, a compiled loss) reads
the bf16 logits twice and writes their gradient, 6V; the eager ``F.cross_entropy`` on upcast
logits moves the fp32 copy, the log-softmax and its gradient, 32V. Megatron's vocab-parallel
cross-entropy without ``--cross-entropy-loss-fusion`` (the default of Megatron-LM's arguments,
and of NeMo until its 2.0 configs turned it on, NeMo ``1d5de59``, 2024-09-05) runs one eager op
per step on the fp32 logits (``megatron/core/tensor_parallel/cross_entropy.py``, core_r0.8.0):
``.float()`` 6, ``max`` 4, ``-= max`` 8, ``exp`` in place 8, ``sum`` 4, ``div_`` 8 forward;
``mul_`` by the incoming gradient 8 and the cast back to bf16 6 backward: 52V.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gpuplan.estimate.frameworks import DTYPE_BYTES, FrameworkProfile
from gpuplan.estimate.memory import BF16, optimizer_state_bytes_per_param
from gpuplan.workload.job import TrainingJob
from gpuplan.workload.model import ModelSpec

FloatArray = npt.NDArray[np.float64]

FUSED_NORM = (4.0, 6.0)
EAGER_RMSNORM = (32.0, 64.0)
FUSED_ROPE = (4.0, 4.0)
EAGER_ROPE = (22.0, 22.0)
FUSED_SWIGLU = (6.0, 10.0)
EAGER_SWIGLU = (10.0, 16.0)
GELU = (4.0, 6.0)
RESIDUAL_ADD = (6.0, 6.0)
MOE_PERMUTATION = (8.0, 8.0)
FUSED_LOSS_BYTES_PER_LOGIT = 6.0
EAGER_LOSS_BYTES_PER_LOGIT = 32.0
VOCAB_PARALLEL_LOSS_BYTES_PER_LOGIT = 52.0


def routed_width(model: ModelSpec) -> float:
    """FFN elements a token computes: the dense FFN, or the routed experts it visits plus the
    shared experts."""
    if not model.is_moe:
        return float(model.intermediate_size)
    return float(
        model.moe_intermediate_size * model.num_experts_per_token
        + model.shared_expert_intermediate_size
    )


def layer_traffic_bytes_per_token(
    model: ModelSpec,
    fused: npt.ArrayLike,
    tp: npt.ArrayLike,
    sequence_parallel: npt.ArrayLike,
) -> tuple[FloatArray, FloatArray]:
    """Forward and backward HBM bytes of one layer's memory-bound ops, per token of the
    micro-batch on one rank (module docstring); ``fused`` per layout (fused kernels or compiled)."""
    fused_mask = np.asarray(fused, dtype=bool)
    tp_size = np.asarray(tp, dtype=float)
    replicated = np.where(np.asarray(sequence_parallel, dtype=bool), tp_size, 1.0)
    h = float(model.hidden_size)
    rope_width = (
        float(model.q_width + model.kv_width) if model.position_embedding == "rope" else 0.0
    )
    width = routed_width(model)
    norms = float(model.norms_per_layer)

    def pick(
        fused_cost: tuple[float, float], eager_cost: tuple[float, float], index: int
    ) -> FloatArray:
        return np.where(fused_mask, fused_cost[index], eager_cost[index])

    norm_eager = EAGER_RMSNORM if model.norm == "rmsnorm" else FUSED_NORM
    mlp_fused, mlp_eager = (FUSED_SWIGLU, EAGER_SWIGLU) if model.gated_mlp else (GELU, GELU)
    passes = []
    for index in (0, 1):
        hidden_wide = (norms * pick(FUSED_NORM, norm_eager, index) + 2 * RESIDUAL_ADD[index]) * h
        split = (
            pick(FUSED_ROPE, EAGER_ROPE, index) * rope_width
            + pick(mlp_fused, mlp_eager, index) * width
        )
        if model.is_moe:
            split = split + MOE_PERMUTATION[index] * h * model.num_experts_per_token
        passes.append(np.asarray(hidden_wide / replicated + split / tp_size, dtype=float))
    return passes[0], passes[1]


def loss_traffic_bytes_per_token(
    model: ModelSpec,
    fused: npt.ArrayLike,
    tp: npt.ArrayLike,
    vocab_parallel: npt.ArrayLike = False,
    fused_loss: bool = False,
) -> FloatArray:
    """HBM bytes of the cross-entropy loss per token on the last stage, forward and backward:
    ``fused_loss`` (the job names a fused loss) moves the fused bytes; else Megatron's
    ``vocab_parallel`` loss its eager ops' bytes whatever else the stack fuses; else the fused
    or the eager bytes as the stack's kernels are."""
    stack = np.where(
        np.asarray(fused, dtype=bool), FUSED_LOSS_BYTES_PER_LOGIT, EAGER_LOSS_BYTES_PER_LOGIT
    )
    per_logit = (
        np.full_like(stack, FUSED_LOSS_BYTES_PER_LOGIT)
        if fused_loss
        else np.where(
            np.asarray(vocab_parallel, dtype=bool), VOCAB_PARALLEL_LOSS_BYTES_PER_LOGIT, stack
        )
    )
    return np.asarray(per_logit * model.vocab_size / np.asarray(tp, dtype=float), dtype=float)


MX_SCALE_BYTES = 1.0 / 32.0
"""MXFP8 writes an 8-bit exponent per block of 32 values (OCP Microscaling spec v1.0)."""
TILE_SCALE_BYTES = 4.0 / 128.0
"""DeepSeek-V3's tiles write an fp32 scale per 128 values (report, section 3.3)."""


@dataclass(frozen=True)
class Fp8CastBytes:
    """HBM bytes per element that one recipe's casts move for each operand of a linear layer,
    per micro-batch, as ``(forward, backward)``: the input ``X`` (tokens x K), the output
    gradient ``dY`` (tokens x N) and the weight ``W`` (K x N). Reads count 2 bytes per bf16
    value, writes 1 per fp8 value plus the recipe's scales. ``gradient_rescale`` is what a
    recipe whose backward GEMMs cannot apply its scales moves per element of their outputs, the
    input gradient (tokens x K) and the weight gradient (K x N): a kernel of its own reads the
    bf16 result and writes it scaled. ``casts_token_shards`` says whether the stack casts each
    rank's token shard before a sequence-parallel all-gather and gathers fp8 (Transformer
    Engine; torchao's ``Float8ColwiseParallel`` and ``Float8RowwiseParallel``, which torchtitan
    applies to tensorwise scaling only, ``enable_float8_tensorwise_tp``) or gathers bf16 and
    casts the whole tensor on every rank."""

    input: tuple[float, float]
    output_gradient: tuple[float, float]
    weight: tuple[float, float]
    gradient_rescale: float = 0.0
    casts_token_shards: bool = True


FP8_CAST_BYTES: dict[str, Fp8CastBytes] = {
    "delayed": Fp8CastBytes(input=(4.0, 0.0), output_gradient=(0.0, 4.0), weight=(4.0, 0.0)),
    "tensorwise": Fp8CastBytes(input=(6.0, 0.0), output_gradient=(0.0, 6.0), weight=(5.0, 3.0)),
    "rowwise": Fp8CastBytes(
        input=(8.0, 0.0),
        output_gradient=(0.0, 8.0),
        weight=(3.0, 7.0),
        gradient_rescale=4.0,
        casts_token_shards=False,
    ),
    "mx": Fp8CastBytes(
        input=(6.0 + 2 * MX_SCALE_BYTES, 0.0),
        output_gradient=(0.0, 6.0 + 2 * MX_SCALE_BYTES),
        weight=(3.0 + MX_SCALE_BYTES, 3.0 + MX_SCALE_BYTES),
    ),
    "blockwise": Fp8CastBytes(
        input=(6.0 + 2 * TILE_SCALE_BYTES, 0.0),
        output_gradient=(0.0, 6.0 + 2 * TILE_SCALE_BYTES),
        weight=(3.0 + TILE_SCALE_BYTES, 0.0),
    ),
}
"""The cast kernels of each fp8 recipe, per operand (:class:`Fp8CastBytes`).

- ``delayed``: per-tensor scales from an amax history (Transformer Engine ``DelayedScaling``,
  the recipe of Megatron-Core and NeMo). The cast kernel records the amax as it reads, and
  ``cast_transpose`` writes both layouts the forward and backward GEMMs need in one pass:
  read 2, write 1 + 1.
- ``tensorwise``: per-tensor scales computed from the tensor being cast (torchao
  ``Float8Linear``'s dynamic scaling, torchtitan's float8). The amax is a reduction over the
  whole tensor that must finish before the cast starts, so it is a read of its own; torchao's
  training roofline (``torchao/testing/training/roofline_utils.py``
  ``get_tensor_memory_traffic_ovhd_s``, ``tensorwise``, without fusion into the previous op)
  counts, for the input and the output gradient, the amax read (2) and one kernel that reads
  the bf16 tensor and writes it in both layouts (2 + 1 + 1); for the weight, the amax read, a
  forward cast (2 + 1) and a backward cast (2 + 1), every micro-batch.
- ``rowwise``: scales along one axis (torchao ``rowwise``). The same roofline: the input and
  the output gradient are cast along rows while a transposed bf16 copy is written (2 + 1 + 2),
  then that copy is cast (2 + 1); the weight is cast forward (2 + 1), transposed (2 + 2) and
  cast again backward (2 + 1). Its two backward GEMMs accumulate exactly
  (``Float8GemmConfig()``, ``use_fast_accum=False``, the default for ``grad_input`` and
  ``grad_weight``), where the rowwise CUTLASS kernel is so slow that torchao runs cuBLAS's
  tensorwise kernel with unit scales and multiplies the bf16 output by both row scales
  afterwards (``torchao/float8/float8_ops.py`` ``addmm_float8_unwrapped``,
  ``post_inverse_scale``); under ``torch.compile`` that is one more kernel per GEMM
  (pytorch/ao issue 2184): 2 + 2 per element of the input and weight gradients.
- ``mx``: MXFP8 blocks of 32 along either axis (the roofline's ``mxfp8``): every operand is
  cast twice, once along each axis (2 + 1 each), plus the block scales.
- ``blockwise``: DeepSeek-V3's 1 x 128 activation tiles, cast along both axes as MX is, and
  128 x 128 weight blocks, whose one cast serves both GEMMs (report, section 3.3).

Two things a stack does change the weight's share (:func:`fp8_cast_bytes_per_layer`): a stack
that caches the fp8 weight casts it on the first micro-batch of a step and reuses it for the rest
(Megatron-Core passes Transformer Engine ``is_first_microbatch``;
``KernelsPart.caches_fp8_weights``), and a ZeRO gather of fp8 weights casts each rank's shard
before the all-gather, leaving the gathered weight only its transpose to write for the backward
pass (:data:`FP8_GATHERED_WEIGHT_BYTES`). Full recompute runs the forward casts again, a cached
weight's excepted."""

FP8_GATHERED_WEIGHT_BYTES = (0.0, 2.0)
"""(forward, backward) bytes per gathered fp8 weight element: torchao's
``WeightWithDynamicFloat8CastTensor`` casts the shard before the all-gather
(``fsdp_pre_all_gather``, a shard's worth, negligible against the gathered weight) and hands the
GEMM the gathered fp8 weight; the input-gradient GEMM needs its transpose, one fp8 read and one
write."""


def column_parallel_input_elements_per_token(model: ModelSpec) -> float:
    """Elements per token entering one layer's column-parallel linears (Megatron-LM's
    ``ColumnParallelLinear``: QKV, the MLP's and each expert's up projections), whose input
    every tensor-parallel rank holds whole: ``h`` into QKV and ``h`` into the MLP; routed
    experts each take their own copy of the token, ``k h``, plus ``h`` into the shared experts
    (the dispatched copies are what each expert's GEMM quantizes: Transformer Engine
    ``GroupedLinear``)."""
    if not model.is_moe:
        return float(2 * model.hidden_size)
    shared_inputs = model.hidden_size if model.shared_expert_intermediate_size else 0
    routed_inputs = model.num_experts_per_token * model.hidden_size
    return float(model.hidden_size + routed_inputs + shared_inputs)


def linear_input_elements_per_token(model: ModelSpec) -> float:
    """Elements per token entering one layer's linears: the column-parallel inputs
    (:func:`column_parallel_input_elements_per_token`) plus ``q`` into the output projection
    and ``F``, or :func:`routed_width`, into the down projections."""
    down_width = routed_width(model) if model.is_moe else model.intermediate_size
    return column_parallel_input_elements_per_token(model) + model.q_width + down_width


def row_parallel_output_elements_per_token(model: ModelSpec) -> float:
    """Elements per token leaving one layer's row-parallel linears (the output and down
    projections), whose output gradient every tensor-parallel rank holds whole: ``h`` each,
    one per routed expert and one for the shared experts."""
    if not model.is_moe:
        return float(2 * model.hidden_size)
    down_outputs = model.num_experts_per_token + (1 if model.shared_expert_intermediate_size else 0)
    return float(model.hidden_size + down_outputs * model.hidden_size)


def linear_output_elements_per_token(model: ModelSpec) -> float:
    """Elements per token leaving one layer's linears, the shape of their output gradients:
    ``q + 2 k`` out of QKV, ``2 F`` (gated) or ``F`` out of the MLP's up projection, each routed
    expert's up projection its own, plus the row-parallel outputs
    (:func:`row_parallel_output_elements_per_token`)."""
    up_per_width = 2.0 if model.gated_mlp else 1.0
    up_width = routed_width(model) if model.is_moe else model.intermediate_size
    column_outputs = model.q_width + 2 * model.kv_width + up_per_width * up_width
    return column_outputs + row_parallel_output_elements_per_token(model)


def linear_weight_elements_per_layer(model: ModelSpec, ep: npt.ArrayLike) -> FloatArray:
    """Weights of one layer's linears held on a rank before tensor parallelism splits them,
    averaged over the layers: the attention projections and the dense MLP, or the router-free
    MoE block with ``E / ep`` routed experts on the rank."""
    attention = float(model.attention_params_per_layer())
    dense = attention + model.mlp_params(model.intermediate_size)
    if not model.is_moe:
        return np.full(np.shape(ep), dense, dtype=float)
    shared = (
        model.mlp_params(model.shared_expert_intermediate_size)
        if model.shared_expert_intermediate_size
        else 0
    )
    local_experts = model.num_experts / np.maximum(np.asarray(ep, dtype=float), 1.0)
    moe = attention + shared + local_experts * model.expert_params()
    moe_share = model.num_moe_layers / model.num_layers
    return np.asarray(moe_share * moe + (1.0 - moe_share) * dense, dtype=float)


def fp8_gathered_bytes_per_param(model: ModelSpec) -> float:
    """Bytes per parameter a ZeRO gather of fp8 weights moves: 1 for the layers' linear weights
    (:func:`linear_weight_elements_per_layer`), bf16 for the rest (norms, embeddings and the
    output head, which torchtitan's float8 leaves in bf16: ``filter_fqns = ["output"]``)."""
    linear = model.num_layers * float(linear_weight_elements_per_layer(model, 1.0))
    return float(BF16 - linear / model.total_params)


def fp8_cast_bytes_per_layer(
    model: ModelSpec,
    recipe: str,
    tokens: npt.ArrayLike,
    tp: npt.ArrayLike,
    ep: npt.ArrayLike = 1.0,
    forward_passes: npt.ArrayLike = 1.0,
    micro_batches: npt.ArrayLike = 1.0,
    caches_weights: npt.ArrayLike = False,
    gathers_fp8_weights: npt.ArrayLike = False,
    sequence_parallel: npt.ArrayLike = False,
) -> FloatArray:
    """HBM bytes of one layer's fp8 casts per micro-batch on one rank: each operand's elements
    (:func:`linear_input_elements_per_token`, :func:`linear_output_elements_per_token` times the
    micro-batch's ``tokens``, :func:`linear_weight_elements_per_layer`) on the rank, times the
    recipe's bytes (:data:`FP8_CAST_BYTES`), the forward ones once per forward pass, and the
    recipe's rescale of the input and weight gradients once per micro-batch. The weight
    moves :data:`FP8_GATHERED_WEIGHT_BYTES` where ``gathers_fp8_weights``, and where
    ``caches_weights`` once per step, spread over the step's ``micro_batches``.

    Under tensor parallelism each rank holds ``1/tp`` of the weights, of the column-parallel
    outputs and of the row-parallel inputs, but the whole column-parallel input and the whole
    row-parallel output gradient. A recipe that casts before the ``sequence_parallel``
    all-gather (``Fp8CastBytes.casts_token_shards``) casts only its rank's ``1/tp`` of those
    two; the input gradients its GEMMs write are whole for the column-parallel linears."""
    cost = FP8_CAST_BYTES[recipe]
    tp_size = np.asarray(tp, dtype=float)
    passes = np.asarray(forward_passes, dtype=float)
    token_count = np.asarray(tokens, dtype=float)
    column_inputs = column_parallel_input_elements_per_token(model)
    row_inputs = linear_input_elements_per_token(model) - column_inputs
    row_outputs = row_parallel_output_elements_per_token(model)
    column_outputs = linear_output_elements_per_token(model) - row_outputs
    whole_share = np.where(
        np.asarray(sequence_parallel, dtype=bool) & cost.casts_token_shards, 1.0 / tp_size, 1.0
    )
    inputs = token_count * (column_inputs * whole_share + row_inputs / tp_size)
    output_gradients = token_count * (column_outputs / tp_size + row_outputs * whole_share)
    input_gradients = token_count * (column_inputs + row_inputs / tp_size)
    weights = linear_weight_elements_per_layer(model, ep) / tp_size

    def moved(forward_and_backward: tuple[float, float], runs: npt.ArrayLike) -> FloatArray:
        forward, backward = forward_and_backward
        return np.asarray(forward * np.asarray(runs, dtype=float) + backward, dtype=float)

    cached = np.asarray(caches_weights, dtype=bool)
    weight_bytes = np.where(
        np.asarray(gathers_fp8_weights, dtype=bool),
        moved(FP8_GATHERED_WEIGHT_BYTES, passes),
        moved(cost.weight, np.where(cached, 1.0, passes)),
    )
    weight_bytes = np.where(cached, weight_bytes / np.maximum(micro_batches, 1.0), weight_bytes)
    return np.asarray(
        inputs * moved(cost.input, passes)
        + output_gradients * moved(cost.output_gradient, passes)
        + weights * weight_bytes
        + (input_gradients + weights) * cost.gradient_rescale,
        dtype=float,
    )


FOREACH_STEP_ACCESSES = {"updated": 4.0, "gradient": 6.0, "state": 7.0}
"""Element reads and writes of ``torch.optim.AdamW``'s default ``foreach`` step (PyTorch 2.1-2.6
``torch/optim/adamw.py`` ``_multi_tensor_adamw``), one kernel per line:

- ``_foreach_mul_(params, 1 - lr * wd)``: the updated tensor ``p`` read and written;
- ``_foreach_lerp_(exp_avgs, grads)``: ``m`` read and written, ``g`` read;
- ``_foreach_mul_(exp_avg_sqs, beta2)`` then ``_foreach_addcmul_(exp_avg_sqs, grads, grads)``:
  ``v`` read and written twice, ``g`` read twice;
- ``_foreach_sqrt(exp_avg_sqs)``, ``_foreach_div_``, ``_foreach_add_(eps)``: ``v`` read, a
  ``v``-sized temporary written, then read and written twice;
- ``_foreach_addcdiv_(params, exp_avgs, temporary)``: ``p`` read and written, ``m`` and the
  temporary read;

so 4 of ``p``, 3 of ``g``, and 3 of ``m``, 5 of ``v`` and 6 of the temporary: 14 accesses of
a state-sized element, 7 times the bytes of the two moments. Gradient clipping before the step
(``torch.nn.utils.clip_grad_norm_``'s ``foreach`` path: the norms read every gradient,
``_foreach_mul_`` by the clip coefficient reads and writes them) adds 3 of ``g``."""

FUSED_STEP_ACCESSES = {"updated": 2.0, "gradient": 2.0, "state": 2.0}
"""A fused AdamW kernel (Apex/Transformer Engine ``FusedAdam`` in Megatron-LM, DeepSpeed's
``FusedAdam``, ``torch.optim.AdamW(fused=True)``) reads ``p``, ``g``, ``m`` and ``v`` and writes
``p``, ``m`` and ``v`` once, and the fused gradient-norm kernel (``multi_tensor_l2norm``) reads
``g`` once more: 2 of ``p``, 2 of ``g``, twice the bytes of the moments. bitsandbytes' 8-bit
AdamW is such a kernel too (``optimizer_update_8bit_blockwise``); SGD and Adafactor take the
one-pass count as their floor."""


def optimizer_step_bytes_per_param(job: TrainingJob, profile: FrameworkProfile) -> float:
    """HBM bytes the optimizer step moves per trained parameter under ``profile``: the foreach
    or fused access counts (:data:`FOREACH_STEP_ACCESSES` for AdamW where the profile's step
    allocates a temporary, ``OptimizerPart.step_temporaries``, else
    :data:`FUSED_STEP_ACCESSES`) in the dtype of the tensor the optimizer updates, of the
    gradient it reads and of its states (``memory.optimizer_state_bytes_per_param``), plus the
    compute copy a persistent master writes (Megatron-LM, DeepSpeed: bf16 weights from the fp32
    master). Under mixed precision with a fused step: ``2*4 + 2*4 + 2*8 + 2 = 34`` bytes; a
    foreach step over bf16 weights and states: ``4*2 + 6*2 + 7*4 = 48``."""
    foreach = job.optimizer == "adamw" and profile.optimizer.step_temporaries > 0
    accesses = FOREACH_STEP_ACCESSES if foreach else FUSED_STEP_ACCESSES
    weights = profile.weights
    updated = DTYPE_BYTES[weights.optimizer_dtype]
    gradient = DTYPE_BYTES[profile.resolved_dtype(profile.gradients.dtype)]
    writes_compute_copy = weights.master_weights != "none" and weights.residency == "persistent"
    compute_copy = DTYPE_BYTES[weights.param_dtype] if writes_compute_copy else 0.0
    return (
        accesses["updated"] * updated
        + accesses["gradient"] * gradient
        + accesses["state"] * optimizer_state_bytes_per_param(job, profile)
        + compute_copy
    )
