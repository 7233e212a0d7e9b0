"""Per-GPU memory of a training job, part by part, for the most loaded rank.

The most loaded rank is the first pipeline stage (embedding, the most micro-batches in
flight) or the last (output head, logits and loss), whichever holds more. Parts, in bytes:

- ``weights``, ``gradients``, ``optimizer`` (fp32 master copy plus optimizer states): bytes per
  parameter from the precision, optimizer and framework profile (``frameworks.py``), divided
  by tensor, pipeline and expert parallelism, and by the ``dp * cp`` group under ZeRO.
- ``activations``: what each op keeps for backward, tensor by tensor
  (:func:`activation_bytes_per_token_per_layer`), times the layers on the stage and the
  micro-batches in flight (1F1B: ``min(pp, m)``; interleaved: times ``1 + (pp-1)/(pp*vpp)``,
  Korthikanti et al. 2022, section 4.2.3).
- ``logits``: the output head's logits and the loss, on the last stage.
- ``buffers``: framework buffers inside the allocator (FSDP/ZeRO-3 gathered layers, DeepSpeed
  and DDP gradient buckets, QLoRA's dequantized weight).
- ``fragmentation``: caching-allocator overhead, ``reserved - allocated``.
- ``context``: the CUDA context and NCCL communicator buffers, outside the allocator.

``allocated_bytes`` is the sum of the first six (``torch.cuda.max_memory_allocated``),
``reserved_bytes`` adds fragmentation (``max_memory_reserved``), ``peak_bytes`` adds the context
(what ``nvidia-smi`` shows). Every function takes a :class:`~gpuplan.strategy.Layout` of NumPy
arrays and broadcasts.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from gpuplan.estimate.frameworks import profile_values, resolve_framework_codes
from gpuplan.strategy import Layout
from gpuplan.workload.job import TrainingJob
from gpuplan.workload.model import ModelSpec

FloatArray = npt.NDArray[np.float64]

BF16 = 2.0
FP32 = 4.0
NF4_BYTES_PER_PARAM = 0.5
NF4_BLOCK = 64
DOUBLE_QUANT_BLOCK = 256
CUDA_CONTEXT_BYTES = 0.6 * 2**30
"""CUDA context with lazy module loading, cuBLAS and cuDNN handles: about 500-700 MiB on
A100/H100 with CUDA 12 (PyTorch forum measurements; ml-engineering ``training/performance``)."""
NCCL_BYTES_PER_COMMUNICATOR = 0.2 * 2**30
"""NCCL buffers per communicator that spans more than one GPU (NCCL_BUFFSIZE 4 MiB x channels x
peers, plus proxy buffers): about 150-300 MiB each on NVLink systems."""
DEFAULT_SAFETY_MARGIN = 0.10
"""``fits`` requires ``peak_bytes <= capacity * (1 - margin)``, and the plan search keeps the same
headroom: the driver and ECC reserve a few hundred MiB (an 80 GiB H100 shows 81,559 MiB in
nvidia-smi), allocation spikes vary from run to run, and the model's median error against
published peaks is about 7 %, with QLoRA about 17 % under (docs/accuracy.md)."""

PARTS = (
    "weights",
    "gradients",
    "optimizer",
    "activations",
    "logits",
    "buffers",
    "fragmentation",
    "context",
)


@dataclass(frozen=True)
class MemoryEstimate:
    """Per-rank memory in bytes, each an array over the layouts (0-d for one layout)."""

    parts: dict[str, FloatArray]
    allocated_bytes: FloatArray
    reserved_bytes: FloatArray
    peak_bytes: FloatArray
    capacity_bytes: float
    safety_margin: float

    @property
    def fits(self) -> npt.NDArray[np.bool_]:
        return self.peak_bytes <= self.capacity_bytes * (1.0 - self.safety_margin)

    @property
    def headroom(self) -> FloatArray:
        """Share of the capacity left free at the peak (negative when it does not fit)."""
        return 1.0 - self.peak_bytes / self.capacity_bytes


# --- model states -----------------------------------------------------------------------------


def optimizer_state_bytes_per_param(job: TrainingJob) -> float:
    """Optimizer state per trained parameter, without the master copy.

    AdamW: two fp32 moments, 8 bytes (Loshchilov & Hutter 2019); 8-bit AdamW: two 8-bit moments
    plus block-wise fp32 scales, 2 bytes + 8/2048 (Dettmers et al. 2022, block size 2048);
    SGD with momentum: 4; Adafactor: factored second moments, 4 * (rows + cols) per matrix
    (Shazeer & Stern 2018), written here as a per-parameter average. States follow the
    parameter dtype under ``bf16-pure`` (half the bytes).
    """
    if job.optimizer == "adamw-8bit":
        return 2.0 + 8.0 / 2048
    if job.optimizer == "adafactor":
        return FP32 * _factored_state_fraction(job.model)
    state = {"adamw": 8.0, "sgd": 4.0}[job.optimizer]
    return state / 2 if job.precision == "bf16-pure" else state


def _factored_state_fraction(model: ModelSpec) -> float:
    """Σ(rows + cols) / Σ(rows * cols) over one layer's weight matrices."""
    d, q_width, kv_width = model.hidden_size, model.q_width, model.kv_width
    width = model.moe_intermediate_size if model.is_moe else model.intermediate_size
    shapes = [(d, q_width), (d, kv_width), (d, kv_width), (q_width, d), (d, width), (width, d)]
    if model.gated_mlp:
        shapes.append((d, width))
    return sum(r + c for r, c in shapes) / sum(r * c for r, c in shapes)


def lora_params_per_layer(model: ModelSpec, rank: int, targets: tuple[str, ...]) -> int:
    """LoRA adds A (d_in x r) and B (r x d_out) to each target: r * (d_in + d_out) (Hu et al. 2021)."""
    d, q_width, kv_width, width = (
        model.hidden_size,
        model.q_width,
        model.kv_width,
        model.intermediate_size,
    )
    shapes = {
        "q_proj": (d, q_width),
        "k_proj": (d, kv_width),
        "v_proj": (d, kv_width),
        "o_proj": (q_width, d),
        "gate_proj": (d, width),
        "up_proj": (d, width),
        "down_proj": (width, d),
    }
    if not model.gated_mlp:
        shapes.pop("gate_proj")
    return sum(rank * (shapes[name][0] + shapes[name][1]) for name in targets if name in shapes)


def nf4_bytes_per_param(double_quant: bool) -> float:
    """QLoRA NF4 storage: 4 bits per weight plus one fp32 absmax per 64 weights, or with double
    quantization an 8-bit absmax plus one fp32 constant per 256 absmaxes (Dettmers et al. 2023,
    section 3: 0.5 -> 0.127 bits of constants per parameter)."""
    if double_quant:
        return NF4_BYTES_PER_PARAM + 1.0 / NF4_BLOCK + FP32 / (NF4_BLOCK * DOUBLE_QUANT_BLOCK)
    return NF4_BYTES_PER_PARAM + FP32 / NF4_BLOCK


@dataclass(frozen=True)
class StageParameters:
    """Parameters held by one rank of the first or last pipeline stage, by kind."""

    dense: FloatArray
    experts: FloatArray
    linear: FloatArray
    other: FloatArray
    layers: FloatArray
    largest_layer: FloatArray
    head_or_embedding: FloatArray


def stage_parameters(model: ModelSpec, layout: Layout, last_stage: bool) -> StageParameters:
    """Parameters on one rank of the first (``last_stage=False``) or last pipeline stage.

    Layers split ``ceil(L / pp)`` on the loaded stages; non-expert weights divide by ``tp``,
    routed experts by ``ep * tp`` (Megatron-Core's default expert tensor parallel size is
    ``tp``); norms are replicated. The first stage holds the embedding (and learned positions),
    the last the output head and final norm; with tied embeddings and ``pp > 1`` the last stage
    keeps its own copy of the embedding matrix (Megatron-LM ``shared_embedding``).
    """
    breakdown = model.parameter_breakdown()
    layers = np.ceil(model.num_layers / layout.pp)
    per_layer_attention = breakdown["attention"] / model.num_layers
    per_layer_dense_mlp = breakdown["mlp"] / model.num_layers
    per_layer_experts = breakdown["experts"] / model.num_layers
    per_layer_norms = (
        breakdown["norms"] - model.norm_params() * (2 if model.embedding_norm else 1)
    ) / model.num_layers
    tp, ep = layout.tp.astype(float), layout.ep.astype(float)
    dense = layers * ((per_layer_attention + per_layer_dense_mlp) / tp + per_layer_norms)
    experts = layers * per_layer_experts / (ep * tp)
    vocab_matrix = model.vocab_size * model.hidden_size
    single_stage = layout.pp == 1
    if last_stage:
        head = 0.0 if model.tie_word_embeddings else float(vocab_matrix)
        head = np.where(single_stage | (not model.tie_word_embeddings), head, vocab_matrix) / tp
        edge = head + model.norm_params()
        edge = edge + np.where(single_stage, breakdown["embeddings"] / tp, 0.0)
    else:
        edge = breakdown["embeddings"] / tp + (model.norm_params() if model.embedding_norm else 0.0)
        edge = edge + np.where(single_stage, (breakdown["head"] / tp) + model.norm_params(), 0.0)
    linear_per_layer = (per_layer_attention + per_layer_dense_mlp) / tp + per_layer_experts / (
        ep * tp
    )
    largest = (
        model.layer_params(model.num_layers - 1) if model.is_moe else model.layer_params(0)
    ) / tp
    return StageParameters(
        dense=dense + edge,
        experts=experts,
        linear=layers * linear_per_layer,
        other=layers * per_layer_norms + edge,
        layers=layers,
        largest_layer=np.asarray(largest, dtype=float) + 0 * layers,
        head_or_embedding=np.asarray(vocab_matrix / tp, dtype=float),
    )


def model_state_bytes(
    job: TrainingJob, layout: Layout, framework_codes: npt.NDArray[np.int64], last_stage: bool
) -> dict[str, FloatArray]:
    """Weights, gradients and optimizer bytes on one rank of the first or last stage.

    Trained parameters take the framework's bytes (``frameworks.py``); under ``bf16-pure``
    weights and gradients are 2 bytes and there is no master copy; under ``fp32`` 4 + 4, no
    master. ZeRO divides over ``dp * cp``: stage 1 the master and optimizer states, stage 2
    also gradients, stage 3 also weights. Frozen weights (LoRA, QLoRA, freeze) are bf16, or NF4
    for QLoRA's linear layers. Offload moves master and optimizer states (and with
    ``optimizer+params`` the sharded weights) to host memory. Under FSDP with gradient
    accumulation the rank also holds the unsharded gradients it accumulates (``frameworks.py``).
    """
    model = job.model
    stage = stage_parameters(model, layout, last_stage)
    total_on_rank = stage.dense + stage.experts
    shard = (layout.dp * layout.cp).astype(float)
    zero = layout.zero

    if job.is_adapter:
        per_layer = lora_params_per_layer(model, job.lora.rank, job.lora.targets)
        trained = stage.layers * per_layer / layout.tp
        frozen = total_on_rank
    elif job.method == "freeze":
        assert job.trainable_layers is not None
        trained_share = min(1.0, job.trainable_layers / model.num_layers)
        trained = (stage.dense + stage.experts - stage.other) * trained_share
        frozen = total_on_rank - trained
    else:
        trained = total_on_rank
        frozen = np.zeros_like(total_on_rank)

    if job.precision == "bf16-pure":
        weight_bytes, grad_bytes, master_bytes = (
            np.full_like(shard, BF16),
            np.full_like(shard, BF16),
            np.zeros_like(shard),
        )
    elif job.precision == "fp32" or job.is_adapter:
        weight_bytes, grad_bytes, master_bytes = (
            np.full_like(shard, FP32),
            np.full_like(shard, FP32),
            np.zeros_like(shard),
        )
    else:
        weight_bytes = profile_values(framework_codes, "compute_weight_bytes")
        grad_bytes = profile_values(framework_codes, "gradient_bytes")
        master_bytes = profile_values(framework_codes, "master_bytes")
        if job.precision == "fp8":
            weight_bytes = weight_bytes + 1.0
    state_bytes = optimizer_state_bytes_per_param(job)

    optimizer_divisor = np.where(zero >= 1, shard, 1.0)
    gradient_divisor = np.where(zero >= 2, shard, 1.0)
    weight_divisor = np.where(zero >= 3, shard, 1.0)
    offloaded_optimizer = layout.offload >= 1
    offloaded_params = layout.offload >= 2

    weights = trained * weight_bytes / weight_divisor
    weights = np.where(offloaded_params, 0.0, weights)
    if job.method == "qlora":
        frozen_bytes = (
            stage.linear * nf4_bytes_per_param(job.lora.double_quant)
            + (frozen - stage.linear) * BF16
        )
    else:
        frozen_bytes = frozen * (FP32 if job.precision == "fp32" else BF16)
    weights = weights + frozen_bytes / weight_divisor
    gradients = trained * grad_bytes / gradient_divisor
    accumulates_unsharded = (
        (zero == 3)
        & (layout.micro_batches > 1)
        & (profile_values(framework_codes, "accumulates_unsharded_gradients") > 0)
    )
    unsharded_bytes = FP32 if job.precision == "fp32" else BF16
    gradients = gradients + np.where(accumulates_unsharded, trained * unsharded_bytes, 0.0)
    optimizer = trained * (master_bytes + state_bytes) / optimizer_divisor
    optimizer = np.where(offloaded_optimizer, 0.0, optimizer)
    return {"weights": weights, "gradients": gradients, "optimizer": optimizer}


# --- activations ------------------------------------------------------------------------------


def activation_bytes_per_token_per_layer(
    model: ModelSpec,
    layout: Layout,
    framework_codes: npt.NDArray[np.int64],
    sequence_length: int,
    flash_attention: bool = True,
    dropout: bool = False,
    lora_targets: tuple[str, ...] | None = None,
    lora_dropout: bool = False,
    frozen_linear_keeps_input: bool = False,
    compiled: bool = False,
    bytes_per_value: float = BF16,
) -> FloatArray:
    """Bytes one layer keeps for backward, per token of the micro-batch, on one rank.

    Tensor by tensor (Korthikanti et al. 2022, section 4.1, adapted), in units of the value size
    (2 bytes for bf16), for hidden h, heads a, query width q = a*head_dim, K/V width k, FFN F:

    - replicated across TP unless sequence parallel: each norm's input (h for LayerNorm and
      fused RMSNorm; the eager RMSNorm's fp32 copy, 2h, plus its normalised output when the
      norm weight trains: ``frameworks.py``), the attention input (h), the MLP input (h),
      dropout masks (h/2 each after attention and MLP, 1 byte per element);
    - split by TP: Q, K, V (q + 2k, or 3q where the stack repeats K and V to every head), the
      attention output feeding the output projection (q), the fp32 log-sum-exp of flash
      attention (2a), or without flash attention the softmax output and its dropout (a*s, plus
      a*s/2 + a*s with dropout); the MLP's saved tensors (SwiGLU 3F or 4F; GeLU its input F and,
      when fc2 needs it, its output F); MoE: router logits (2E fp32), each token's k expert
      inputs and activations, the permuted copy for the combine, shared experts as a dense MLP.

    Korthikanti's GPT case (LayerNorm, GeLU, dropout, no flash attention) gives exactly
    ``34 h + 5 a s`` per token, their eq. 1; with TP ``10 h + (24 h + 5 a s)/t`` (eq. 2) and with
    sequence parallelism ``(34 h + 5 a s)/t`` (eq. 3). Selective recompute drops the ``a s``
    terms (eq. 4) and, for the eager stacks' SwiGLU, the SiLU output and product (recomputed
    from the saved gate and up). The FSDP profile's selective recompute is torchtitan's per-op
    policy instead (``torchtitan/models/llama3/infra/parallelize.py``, ``_save_list``): it keeps
    the block input, the outputs of every other matmul (wq, wv, w1, w2) and of flash attention,
    and recomputes the rest.

    LoRA (frozen base weights, Hu et al. 2021): a frozen linear layer keeps no input and a frozen
    norm no normalised output. A target keeps its input for the adapter's A gradient, or with
    LoRA dropout the dropped copy and its 1-byte mask instead (PEFT ``lora.Linear.forward``: one
    dropout per target module). QLoRA's 4-bit layers keep their input whether or not they are
    targets (``frozen_linear_keeps_input``: bitsandbytes up to 0.43.1, ``MatMul4Bit.forward``
    stores ``ctx.tensors = (A, B)``; litgpt 0.4 pins bitsandbytes 0.42).

    ``compiled`` (``torch.compile``): Inductor's min-cut partitioner keeps the gate and up
    projections and the norms' bf16 inputs, and recomputes the SwiGLU product and the norms'
    fp32 intermediates (2F, h per norm).
    """
    h = float(model.hidden_size)
    a = float(model.num_attention_heads)
    tp = layout.tp.astype(float)
    sp = layout.sequence_parallel
    selective = layout.recompute == 1
    swiglu = profile_values(framework_codes, "swiglu_bytes_per_element") / BF16
    trained = lora_targets is None
    if model.norm == "rmsnorm":
        norm_input = profile_values(framework_codes, "rmsnorm_input_bytes") / BF16
        norm_output = profile_values(framework_codes, "rmsnorm_output_bytes") / BF16
        norm_output = norm_output if trained else np.zeros_like(norm_output)
    else:
        norm_input, norm_output = np.ones_like(swiglu), np.zeros_like(swiglu)
    if compiled:
        swiglu = np.minimum(swiglu, 2.0)
        norm_input, norm_output = np.ones_like(norm_input), np.zeros_like(norm_output)

    repeats_kv = profile_values(framework_codes, "repeats_kv_heads") > 0
    if model.uses_mla:
        q_width = float(model.q_width)
        kv_width: float | FloatArray = (
            float(
                model.num_attention_heads
                * (model.qk_nope_head_dim + model.qk_rope_head_dim + model.v_head_dim)
            )
            / 2
        )
    else:
        q_width = float(model.q_width)
        kv_width = np.where(repeats_kv, q_width, float(model.kv_width))

    targets = set(lora_targets) if lora_targets is not None else set()

    def keeps_input(*modules: str) -> float:
        """1 when a linear layer keeps its input for a weight gradient (LoRA dropout keeps a
        dropped copy instead, counted with the adapters)."""
        if trained or frozen_linear_keeps_input:
            return 1.0
        return 1.0 if targets.intersection(modules) and not lora_dropout else 0.0

    norms = float(min(model.norms_per_layer, 4))
    norm_inputs = norms * h * (norm_input + norm_output)
    attention_input = h * keeps_input("q_proj", "k_proj", "v_proj")
    mlp_input = h * keeps_input("gate_proj", "up_proj")
    masks = h if dropout else 0.0
    replicated = norm_inputs + attention_input + mlp_input + masks

    sharded_qkv = (q_width + 2.0 * kv_width) / tp
    output_input = q_width / tp
    if flash_attention:
        scores = 2.0 * a / tp
    else:
        score_terms = a * sequence_length * (2.5 if dropout else 1.0)
        scores = np.where(selective, 0.0, score_terms / tp)

    def mlp_elements(width: float) -> FloatArray:
        down_input = keeps_input("down_proj")
        if not model.gated_mlp:
            return np.asarray((1.0 + down_input) * width + 0 * swiglu, dtype=float)
        saved_per_element = np.where(selective & (swiglu > 3), 2.0, swiglu)
        if down_input == 0.0:
            saved_per_element = np.maximum(saved_per_element - 1.0, 2.0)
        return np.asarray(saved_per_element * width, dtype=float)

    if model.is_moe:
        moe_share = model.num_moe_layers / model.num_layers
        k = float(model.num_experts_per_token)
        routed = k * (h + mlp_elements(model.moe_intermediate_size) + h) / tp
        router = 2.0 * model.num_experts / tp
        shared = (
            mlp_elements(model.shared_expert_intermediate_size) / tp
            if model.shared_expert_intermediate_size
            else 0.0
        )
        dense_mlp = mlp_elements(model.intermediate_size) / tp
        mlp = moe_share * (routed + router + shared) + (1 - moe_share) * dense_mlp
    else:
        mlp = mlp_elements(model.intermediate_size) / tp

    lora_extra: float | FloatArray = 0.0
    if targets and lora_dropout:
        widths = {
            "q_proj": h,
            "k_proj": h,
            "v_proj": h,
            "o_proj": q_width,
            "gate_proj": h,
            "up_proj": h,
            "down_proj": float(model.intermediate_size),
        }
        lora_extra = sum(1.5 * widths[name] for name in targets) / tp

    sharded = sharded_qkv + output_input + scores + mlp + lora_extra
    replicated_local = np.where(sp, replicated / tp, replicated)
    kept = replicated_local + sharded

    every_other_matmul = selective & (
        profile_values(framework_codes, "selective_every_other_matmul") > 0
    )
    if np.any(every_other_matmul):
        width = (
            model.moe_intermediate_size * model.num_experts_per_token
            if model.is_moe
            else model.intermediate_size
        )
        block_ends = np.where(sp, 2.0 * h / tp, 2.0 * h)
        saved_outputs = (q_width + model.kv_width + q_width + 2.0 * a + width) / tp
        kept = np.where(every_other_matmul, block_ends + saved_outputs, kept)
    return np.asarray(kept * bytes_per_value, dtype=float)


def korthikanti_activation_bytes(
    sequence_length: int,
    micro_batch: int,
    hidden: int,
    heads: int,
    tensor_parallel: int = 1,
    sequence_parallel: bool = False,
    recompute: str = "none",
) -> float:
    """Korthikanti et al. 2022, eqs. 1-4 and section 4.3, one GPT layer, 16-bit values:
    ``s b h (34 + 5 a s / h)`` without parallelism; ``s b h (10 + 24/t + 5 a s/(h t))`` with TP;
    ``s b h/t (34 + 5 a s / h)`` with TP and sequence parallelism; ``34 s b h / t`` with selective
    recompute and sequence parallelism; ``2 s b h`` (``/t`` with SP) with full recompute."""
    s, b, h, a, t = sequence_length, micro_batch, hidden, heads, tensor_parallel
    if recompute == "full":
        return 2 * s * b * h / (t if sequence_parallel else 1)
    attention_core = 0.0 if recompute == "selective" else 5 * a * s / h
    if sequence_parallel:
        return s * b * h / t * (34 + attention_core)
    return s * b * h * (10 + (24 + attention_core) / t)


def micro_batches_in_flight(layout: Layout) -> FloatArray:
    """Activations the first stage holds at its peak, in micro-batches: 1 without a pipeline,
    ``min(pp, m)`` under 1F1B, times ``1 + (pp - 1)/(pp * vpp)`` interleaved (Korthikanti et
    al. 2022, section 4.2.3; Narayanan et al. 2021, section 2.2)."""
    pp, m = layout.pp.astype(float), layout.micro_batches.astype(float)
    in_flight = np.minimum(pp, np.maximum(m, 1.0))
    interleave = np.where(layout.vpp > 1, 1.0 + (pp - 1.0) / (pp * layout.vpp), 1.0)
    return np.asarray(np.where(layout.pp > 1, in_flight * interleave, 1.0), dtype=float)


def logits_bytes(
    job: TrainingJob, layout: Layout, framework_codes: npt.NDArray[np.int64]
) -> FloatArray:
    """Output logits and the loss for one micro-batch on the last stage: ``s b V / (t cp)`` logits
    times the bytes per logit the stack keeps (Megatron 6, eager 12; see ``frameworks.py``). A
    fused or chunked cross-entropy keeps the bf16 logits and their log-probabilities (bf16 in
    litgpt's ``chunked_cross_entropy``; fp32 per chunk after torchtune's
    ``CEWithChunkedOutputLoss`` frees the bf16 chunks), 4 bytes."""
    tokens = job.seq_len * layout.micro_batch / layout.cp
    elements = tokens * job.model.vocab_size / layout.tp
    per_element = (
        4.0 if job.fused_loss else profile_values(framework_codes, "logit_bytes_per_element")
    )
    return np.asarray(elements * per_element, dtype=float)


# --- the whole rank ------------------------------------------------------------------------------


def estimate_memory(
    job: TrainingJob,
    layout: Layout,
    capacity_bytes: float,
    flash_attention: bool = True,
    safety_margin: float = DEFAULT_SAFETY_MARGIN,
) -> MemoryEstimate:
    """Peak memory of the most loaded rank, part by part (see the module docstring)."""
    model = job.model
    codes = resolve_framework_codes(job.framework, layout.tp, layout.pp, layout.zero)
    tokens = job.seq_len * layout.micro_batch / layout.cp
    lora_targets = job.lora.targets if job.is_adapter else None

    def kept_per_layer(of: Layout) -> FloatArray:
        per_token = activation_bytes_per_token_per_layer(
            model,
            of,
            codes,
            job.seq_len,
            flash_attention,
            lora_targets=lora_targets,
            lora_dropout=job.is_adapter and job.lora.dropout > 0,
            frozen_linear_keeps_input=job.method == "qlora",
            compiled=job.compile,
            bytes_per_value=FP32 if job.precision == "fp32" else BF16,
        )
        return np.asarray(per_token * tokens, dtype=float)

    layer_activation = kept_per_layer(layout)
    whole_layer = kept_per_layer(replace(layout, recompute=np.zeros_like(layout.recompute)))
    layer_input = (
        tokens * model.hidden_size * BF16 / np.where(layout.sequence_parallel, layout.tp, 1)
    )
    layers_on_stage = np.ceil(model.num_layers / layout.pp)
    stored_per_layer = np.where(layout.recompute == 2, layer_input, layer_activation)
    recomputes_in_backward = (layout.recompute == 2) | (
        (layout.recompute == 1) & (profile_values(codes, "selective_every_other_matmul") > 0)
    )
    working_layer = np.where(
        recomputes_in_backward,
        whole_layer - np.where(layout.recompute == 2, 0.0, layer_activation),
        0.0,
    )
    in_flight = micro_batches_in_flight(layout)
    first_activations = layers_on_stage * stored_per_layer * in_flight + working_layer
    last_activations = layers_on_stage * stored_per_layer + working_layer

    first_states = model_state_bytes(job, layout, codes, last_stage=False)
    last_states = model_state_bytes(job, layout, codes, last_stage=True)
    logits = logits_bytes(job, layout, codes)
    buffers = framework_buffer_bytes(job, layout, codes)

    first_total = sum(first_states.values()) + first_activations
    last_total = sum(last_states.values()) + last_activations + logits
    last_is_peak = (layout.pp == 1) | (last_total >= first_total)
    parts: dict[str, FloatArray] = {}
    for name in ("weights", "gradients", "optimizer"):
        parts[name] = np.where(last_is_peak, last_states[name], first_states[name])
    parts["activations"] = np.where(last_is_peak, last_activations, first_activations)
    parts["logits"] = np.where(last_is_peak, logits, 0.0)
    parts["buffers"] = buffers

    transient = gradients_are_transient(layout, codes)
    backward_end_is_peak = transient & (parts["gradients"] > parts["activations"] + parts["logits"])
    parts["gradients"] = np.where(transient & ~backward_end_is_peak, 0.0, parts["gradients"])
    parts["activations"] = np.where(backward_end_is_peak, 0.0, parts["activations"])
    parts["logits"] = np.where(backward_end_is_peak, 0.0, parts["logits"])
    allocated = sum(
        parts[name]
        for name in ("weights", "gradients", "optimizer", "activations", "logits", "buffers")
    )
    parts["fragmentation"] = allocated * profile_values(codes, "fragmentation")
    parts["context"] = CUDA_CONTEXT_BYTES + NCCL_BYTES_PER_COMMUNICATOR * communicator_count(layout)
    reserved = allocated + parts["fragmentation"]
    peak = reserved + parts["context"]
    return MemoryEstimate(
        parts={name: np.asarray(parts[name], dtype=float) for name in PARTS},
        allocated_bytes=np.asarray(allocated, dtype=float),
        reserved_bytes=np.asarray(reserved, dtype=float),
        peak_bytes=np.asarray(peak, dtype=float),
        capacity_bytes=float(capacity_bytes),
        safety_margin=safety_margin,
    )


def gradients_are_transient(
    layout: Layout, framework_codes: npt.NDArray[np.int64]
) -> npt.NDArray[np.bool_]:
    """Whether gradients are freed between steps and so never live beside the activations.

    PyTorch's ``optimizer.zero_grad()`` sets gradients to ``None`` (the default since 2.0);
    eager PyTorch, Hugging Face and FSDP2 then allocate gradients during backward as the
    activations are freed, and the peak is the larger of the forward end (activations and
    logits) and the backward end (all gradients). Megatron-LM and DeepSpeed keep persistent
    gradient buffers, and gradient accumulation keeps gradients across micro-batches.
    """
    persistent = profile_values(framework_codes, "persistent_gradients") > 0
    return np.asarray(~persistent & (layout.micro_batches == 1) & (layout.pp == 1), dtype=bool)


def framework_buffer_bytes(
    job: TrainingJob, layout: Layout, framework_codes: npt.NDArray[np.int64]
) -> FloatArray:
    """Buffers the stack allocates beside the model states.

    - ZeRO-3 / FSDP: the current and the prefetched layer gathered in bf16 plus one layer's
      unsharded fp32 gradient before its reduce-scatter, or the embedding/head when larger
      (torchtitan wraps them separately; PyTorch FSDP2 ``fully_shard`` prefetch of one module).
    - DeepSpeed ZeRO-1/2: two gradient buckets of ``hidden**2`` elements (the Hugging Face
      integration's ``"auto"`` reduce_bucket_size), 2 bytes each.
    - DDP (Hugging Face, plain PyTorch with dp > 1): 25 MB gradient buckets (PyTorch default), fp32.
    - QLoRA: one dequantized bf16 copy of the largest linear weight.
    """
    model = job.model
    stage = stage_parameters(model, layout, last_stage=False)
    gathered_unit = np.maximum(stage.largest_layer, stage.head_or_embedding)
    fsdp_buffers = np.where(layout.zero == 3, gathered_unit * (2 * BF16 + FP32), 0.0)
    if job.is_adapter:
        fsdp_buffers = np.where(layout.zero == 3, gathered_unit * 2 * BF16, 0.0)
    deepspeed = (framework_codes == 2) & (layout.zero >= 1) & (layout.zero <= 2)
    bucket = np.where(deepspeed, 2.0 * model.hidden_size**2 * BF16, 0.0)
    ddp = (framework_codes == 3) & (layout.dp > 1) & (layout.zero == 0)
    bucket = bucket + np.where(
        ddp, profile_values(framework_codes, "gradient_bucket_elements") * 2, 0.0
    )
    dequantized = 0.0
    if job.method == "qlora":
        dequantized = model.hidden_size * max(model.intermediate_size, model.q_width) * BF16 / 1.0
    return np.asarray(fsdp_buffers + bucket + dequantized / layout.tp, dtype=float)


def communicator_count(layout: Layout) -> FloatArray:
    """Process groups of more than one GPU that a rank joins (TP, PP, DP, CP, EP)."""
    groups = [layout.tp, layout.pp, layout.dp, layout.cp, layout.ep]
    return np.asarray(sum((group > 1).astype(float) for group in groups), dtype=float)
