"""Per-GPU memory of a training job, part by part, for the most loaded rank.

The most loaded rank is the first pipeline stage (embedding, the most micro-batches in
flight) or the last (output head, logits and loss), whichever holds more; under DualPipe the
first rank holds both (stages ``0`` and ``pp - 1``: twice a stage's parameters, ``pp + 1``
micro-batches in flight and the logits, deepseek-ai/DualPipe README). Parts, in bytes:

- ``weights``, ``gradients``, ``optimizer`` (fp32 master copy plus optimizer states): bytes per
  parameter from the precision, optimizer and framework profile (``frameworks.py``), divided
  by tensor, pipeline and expert parallelism, and by the ``dp * cp`` group (or its shard group)
  under ZeRO.
- ``activations``: what each op keeps for backward, tensor by tensor
  (:func:`activation_bytes_per_token_per_layer`), times the layers on the stage and the
  micro-batches in flight (1F1B: ``min(pp, m)``; interleaved: times ``1 + (pp-1)/(pp*vpp)``,
  Korthikanti et al. 2022, section 4.2.3).
- ``logits``: the output head's logits and the loss, on the last stage.
- ``buffers``: framework buffers inside the allocator (FSDP/ZeRO-3 gathered layers, DeepSpeed
  and DDP gradient buckets, QLoRA's dequantized weight).
- ``fragmentation``: caching-allocator overhead, ``reserved - allocated``.

The peak is the largest of three moments: the forward's end (activations and logits), the
backward's end where gradients are freed between steps (:func:`gradients_are_transient`), and
the optimizer step (:func:`optimizer_step_bytes`: the states and the step's temporaries).
- ``context``: the CUDA context and NCCL communicator buffers, outside the allocator.

``allocated_bytes`` is the sum of the first six (``torch.cuda.max_memory_allocated``),
``reserved_bytes`` adds fragmentation (``max_memory_reserved``), ``peak_bytes`` adds the context
(what ``nvidia-smi`` shows). Every function takes a :class:`~gpuplan.strategy.Layout` of NumPy
arrays and broadcasts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields, replace

import numpy as np
import numpy.typing as npt

from gpuplan.estimate.frameworks import (
    BF16,
    DTYPE_BYTES,
    FP32,
    FRAMEWORK_CODES,
    FrameworkProfile,
    job_profiles,
    profile_values,
    resolve_framework_codes,
    resolve_profile,
)
from gpuplan.estimate.identity_cache import cached_by_identity
from gpuplan.strategy import Layout
from gpuplan.workload.job import TrainingJob
from gpuplan.workload.model import ModelSpec

FloatArray = npt.NDArray[np.float64]

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
published peaks is about 3.4 %, its worst full or LoRA row 14 % under (docs/accuracy.md)."""

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
    """Per-rank memory in bytes, each an array over the layouts (0-d for one layout), and the
    host memory per node that CPU offload takes (``host_capacity_bytes`` NaN where the node's
    RAM is unknown)."""

    parts: dict[str, FloatArray]
    allocated_bytes: FloatArray
    reserved_bytes: FloatArray
    peak_bytes: FloatArray
    capacity_bytes: float
    safety_margin: float
    host_bytes: FloatArray
    host_pinned_bytes: FloatArray
    host_capacity_bytes: FloatArray

    @property
    def host_fits(self) -> npt.NDArray[np.bool_]:
        """:func:`host_memory_fits` of the offloaded states and the node's RAM."""
        return host_memory_fits(self.host_bytes, self.host_capacity_bytes)

    @property
    def fits(self) -> npt.NDArray[np.bool_]:
        return self.peak_bytes <= self.capacity_bytes * (1.0 - self.safety_margin)

    @property
    def headroom(self) -> FloatArray:
        """Share of the capacity left free at the peak (negative when it does not fit)."""
        return 1.0 - self.peak_bytes / self.capacity_bytes


# --- model states -----------------------------------------------------------------------------

FP8_WEIGHT_BYTES = 1.0
"""fp8 training keeps an fp8 copy of each weight beside the bf16 one (Transformer Engine's fp8
weight cache; torchao's float8 linear casts per step)."""
BNB_BLOCK = 2048
"""bitsandbytes' block-wise 8-bit optimizers keep one fp32 absmax per block of 2048 values per
state (``bitsandbytes/optim/optimizer.py`` ``Optimizer2State.init_state``, ``blocks = n // 2048``,
commit 06029dd6; later releases use blocks of 256)."""


def optimizer_state_bytes_per_param(
    job: TrainingJob, profile: FrameworkProfile | None = None
) -> float:
    """Optimizer state per trained parameter, without the master copy, under ``profile`` (by
    default the job's framework as a single rank runs it).

    AdamW: two moments in the states' dtype (``torch.optim.AdamW`` ``exp_avg`` and ``exp_avg_sq``
    as ``torch.zeros_like(p)``: fp32 over an fp32 master, bf16 over bf16 weights; Loshchilov &
    Hutter 2019); SGD with momentum: one (``momentum_buffer = torch.clone(grad)``); 8-bit AdamW:
    two uint8 states plus one fp32 absmax per :data:`BNB_BLOCK` values each (Dettmers et al.
    2022); Adafactor: factored second moments, 4 * (rows + cols) per matrix, fp32 whatever the
    parameter dtype (``transformers`` ``Adafactor`` upcasts bf16 gradients; Shazeer & Stern
    2018), written here as a per-parameter average.
    """
    if job.optimizer == "adamw-8bit":
        return 2.0 + 2.0 * FP32 / BNB_BLOCK
    if job.optimizer == "adafactor":
        return FP32 * _factored_state_fraction(job.model)
    profile = profile or single_rank_profile(job)
    element = DTYPE_BYTES[profile.resolved_dtype(profile.optimizer.states)]
    return {"adamw": 2.0, "sgd": 1.0}[job.optimizer] * element


def single_rank_profile(job: TrainingJob) -> FrameworkProfile:
    """The job's framework as it runs without model parallelism (``auto`` under ZeRO-1 picks
    DeepSpeed): the profile of what a checkpoint stores and a rank updates."""
    one = np.asarray(1)
    code = int(resolve_framework_codes(job.framework, one, one, one))
    return resolve_profile(FRAMEWORK_CODES[code], job)


def _factored_state_fraction(model: ModelSpec) -> float:
    """Σ(rows + cols) / Σ(rows * cols) over one layer's weight matrices."""
    d, q_width, kv_width = model.hidden_size, model.q_width, model.kv_width
    width = model.moe_intermediate_size if model.is_moe else model.intermediate_size
    shapes = [(d, q_width), (d, kv_width), (d, kv_width), (q_width, d), (d, width), (width, d)]
    if model.gated_mlp:
        shapes.append((d, width))
    return sum(r + c for r, c in shapes) / sum(r * c for r, c in shapes)


@dataclass(frozen=True)
class ParameterBytes:
    """Bytes per trained parameter under one profile, before any sharding: the persistent
    weights (``frameworks.WeightsPart``: 0 when only the master shard persists), fp8 training's
    fp8 copy of them, the master copy,
    the optimizer states, the gradients the optimizer reads, the bf16 gradients kept beside an
    fp32 buffer, the unsharded accumulation of FSDP's skipped reduce-scatters, the gradient
    reduction, whether ZeRO-2 shards the gradients, one element in the parameter dtype, and the
    temporaries the optimizer's step allocates (``frameworks.OptimizerPart``)."""

    weights: float
    fp8_copy: float
    master: float
    states: float
    gradients: float
    compute_gradients: float
    accumulation: float
    reduce: float
    gradients_shard: bool
    param_element: float
    step_temporaries: float = 0.0

    @property
    def persistent(self) -> float:
        """Weights, master and states: what a resumable checkpoint stores per parameter."""
        return self.weights + self.master + self.states


def parameter_bytes(job: TrainingJob, profile: FrameworkProfile) -> ParameterBytes:
    """:class:`ParameterBytes` of ``profile`` as ``job`` trains it (``frameworks.resolve_profile``
    applied the precision)."""
    weights_part, gradients_part = profile.weights, profile.gradients
    param = DTYPE_BYTES[weights_part.param_dtype]
    keeps_compute_copy = (
        weights_part.residency == "persistent" or weights_part.master_weights == "none"
    )
    weights = param if keeps_compute_copy else 0.0
    fp8_copy = FP8_WEIGHT_BYTES if job.precision == "fp8" and not job.is_adapter else 0.0
    master = (
        0.0 if weights_part.master_weights == "none" else DTYPE_BYTES[weights_part.master_weights]
    )
    reduce = profile.gradient_reduce_bytes
    state_element = DTYPE_BYTES[profile.resolved_dtype(profile.optimizer.states)]
    temporaries = profile.optimizer.step_temporaries * state_element
    return ParameterBytes(
        weights=weights,
        fp8_copy=fp8_copy,
        master=master,
        states=optimizer_state_bytes_per_param(job, profile),
        gradients=DTYPE_BYTES[profile.resolved_dtype(gradients_part.dtype)],
        compute_gradients=param if gradients_part.compute_copy else 0.0,
        accumulation=reduce if gradients_part.accumulation == "unsharded" else 0.0,
        reduce=reduce,
        gradients_shard=gradients_part.sharding == "stage",
        param_element=param,
        step_temporaries=temporaries if job.optimizer == "adamw" else 0.0,
    )


def _per_layout(
    job: TrainingJob,
    codes: npt.NDArray[np.int64],
    profiles: Sequence[FrameworkProfile],
    name: str,
) -> FloatArray:
    """One :class:`ParameterBytes` field per layout."""
    return np.asarray(_parameter_table(job, tuple(profiles))[name][codes], dtype=float)


@cached_by_identity(maxsize=64)
def _parameter_table(
    job: TrainingJob, profiles: tuple[FrameworkProfile, ...]
) -> dict[str, FloatArray]:
    """Every :class:`ParameterBytes` field over ``profiles``, computed once per job."""
    sizes = [parameter_bytes(job, profile) for profile in profiles]
    return {
        field.name: np.array([float(getattr(size, field.name)) for size in sizes])
        for field in fields(ParameterBytes)
    }


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


def expert_data_parallel(layout: Layout) -> FloatArray:
    """Ranks one expert shard is replicated over, which ZeRO shards expert states across:
    ``dp * cp * tp / (ep * etp)`` (Megatron-Core ``parallel_state.py``:
    ``expert_data_parallel_size = world_size // (etp * ep * pp)``; DeepSpeed's and torchtitan's
    expert data-parallel groups are the same ranks)."""
    ranks = (layout.dp * layout.cp * layout.tp).astype(float)
    return np.asarray(ranks / (layout.ep * layout.etp), dtype=float)


def zero_shard_ranks(layout: Layout) -> tuple[FloatArray, FloatArray]:
    """Ranks ZeRO shards dense and routed-expert states over: the ``layout.shard`` ranks of
    the ``dp * cp`` group (all of them unless sharding is hybrid), and the same share of the
    :func:`expert_data_parallel` ranks, at least one."""
    share = layout.shard / (layout.dp * layout.cp).astype(float)
    return layout.shard.astype(float), np.maximum(expert_data_parallel(layout) * share, 1.0)


def quantizes_head(job: TrainingJob) -> bool:
    """Whether QLoRA's output head is 4-bit: Lightning's ``BitsandbytesPrecision`` (litgpt 0.4,
    ``lora.quantizer: bitsandbytes-0.42``) replaces every ``torch.nn.Linear`` as the model is
    built (``_ClassReplacementContextManager({"torch.nn.Linear": ...})``, lightning 2.4
    ``fabric/plugins/precision/bitsandbytes.py``); transformers' ``BitsAndBytesConfig`` keeps the
    output embedding in the compute dtype (``get_keys_to_not_convert``). A tied head is the
    embedding matrix and stays bf16."""
    return (
        job.method == "qlora"
        and job.lora.quantizer == "bitsandbytes-0.42"
        and not job.model.tie_word_embeddings
    )


def quantized_head_parameters(job: TrainingJob, layout: Layout, last_stage: bool) -> FloatArray:
    """Output-head parameters held in NF4 on one rank of the first or last pipeline stage."""
    on_stage = (layout.pp == 1) | last_stage
    head = job.model.vocab_size * job.model.hidden_size / layout.tp.astype(float)
    return np.asarray(np.where(on_stage & quantizes_head(job), head, 0.0), dtype=float)


@dataclass(frozen=True)
class StageParameters:
    """Parameters held by one rank of the first or last pipeline stage, by kind: ``dense``
    (split by ``tp``, replicated over ``dp * cp``) and ``experts`` (routed experts, split by
    ``ep * etp``, replicated over :func:`expert_data_parallel`)."""

    dense: FloatArray
    experts: FloatArray
    linear: FloatArray
    other: FloatArray
    layers: FloatArray
    largest_layer: FloatArray
    head_or_embedding: FloatArray


@cached_by_identity(maxsize=16)
def stage_parameters(model: ModelSpec, layout: Layout, last_stage: bool) -> StageParameters:
    """Parameters on one rank of the first (``last_stage=False``) or last pipeline stage.

    Layers split ``ceil(L / pp)`` on the loaded stages; non-expert weights (attention, dense
    MLPs, the router and shared experts) divide by ``tp``, routed experts by ``ep * etp``
    (Megatron-Core's expert tensor parallel size, ``tp`` unless given); norms are replicated.
    The first stage holds the embedding (and learned positions), the last the output head and
    final norm; with tied embeddings and ``pp > 1`` the last stage keeps its own copy of the
    embedding matrix (Megatron-LM ``shared_embedding``). ``largest_layer`` is one layer as a
    rank holds it (FSDP's gathered unit).
    """
    breakdown = model.parameter_breakdown()
    layers = np.ceil(model.num_layers / layout.pp)
    routed = model.num_moe_layers * model.num_experts * model.expert_params() if model.is_moe else 0
    per_layer_attention = breakdown["attention"] / model.num_layers
    per_layer_dense_mlp = (breakdown["mlp"] + breakdown["experts"] - routed) / model.num_layers
    per_layer_experts = routed / model.num_layers
    per_layer_norms = (
        breakdown["norms"] - model.norm_params() * (2 if model.embedding_norm else 1)
    ) / model.num_layers
    tp = layout.tp.astype(float)
    experts_split = (layout.ep * layout.etp).astype(float)
    dense = layers * ((per_layer_attention + per_layer_dense_mlp) / tp + per_layer_norms)
    experts = layers * per_layer_experts / experts_split
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
    linear_per_layer = (per_layer_attention + per_layer_dense_mlp) / tp + (
        per_layer_experts / experts_split
    )
    largest_index = model.num_layers - 1 if model.is_moe else 0
    largest_routed = (
        model.num_experts * model.expert_params() if model.is_moe_layer(largest_index) else 0
    )
    largest = (model.layer_params(largest_index) - largest_routed) / tp + (
        largest_routed / experts_split
    )
    return StageParameters(
        dense=dense + edge,
        experts=experts,
        linear=layers * linear_per_layer,
        other=layers * per_layer_norms + edge,
        layers=layers,
        largest_layer=np.asarray(largest, dtype=float) + 0 * layers,
        head_or_embedding=np.asarray(vocab_matrix / tp, dtype=float),
    )


@dataclass(frozen=True)
class TrainedSplit:
    """Parameters on one rank by what trains: trained and frozen, dense and expert."""

    trained_dense: FloatArray
    trained_experts: FloatArray
    frozen_dense: FloatArray
    frozen_experts: FloatArray

    @property
    def trained(self) -> FloatArray:
        return np.asarray(self.trained_dense + self.trained_experts, dtype=float)


def trained_split(job: TrainingJob, layout: Layout, stage: StageParameters) -> TrainedSplit:
    """Full fine-tuning trains everything; LoRA and QLoRA train their adapters (dense, split by
    ``tp``) over frozen weights; freeze trains the last ``trainable_layers`` layers' matrices."""
    zero = np.zeros_like(stage.dense)
    if job.is_adapter:
        per_layer = lora_params_per_layer(job.model, job.lora.rank, job.lora.targets)
        adapters = stage.layers * per_layer / layout.tp
        return TrainedSplit(adapters, zero, stage.dense, stage.experts)
    if job.method == "freeze":
        assert job.trainable_layers is not None
        share = min(1.0, job.trainable_layers / job.model.num_layers)
        dense = (stage.dense - stage.other) * share
        experts = stage.experts * share
        return TrainedSplit(dense, experts, stage.dense - dense, stage.experts - experts)
    return TrainedSplit(stage.dense, stage.experts, zero, zero)


def model_state_bytes(
    job: TrainingJob,
    layout: Layout,
    framework_codes: npt.NDArray[np.int64],
    last_stage: bool,
    profiles: Sequence[FrameworkProfile] | None = None,
    accumulating: bool = True,
) -> dict[str, FloatArray]:
    """Weights, gradients and optimizer bytes on one rank of the first or last stage
    (``accumulating=False``: at the optimizer step, after FSDP reduced what it accumulated).

    Trained parameters take their profile's bytes (:func:`parameter_bytes`). ZeRO divides dense
    parameters and routed experts over their shard ranks (:func:`zero_shard_ranks`): stage 1 the
    master and optimizer states, stage 2 also gradients (unless the profile never shards them:
    DeepSpeed's ``BF16_Optimizer``), stage 3 also weights. Frozen weights (LoRA, QLoRA, freeze)
    are bf16, or NF4 for QLoRA's linear layers. Offload moves master and optimizer states (and
    with ``optimizer+params`` the sharded weights) to host memory (:func:`host_memory`). Under
    FSDP with gradient accumulation the rank holds the unsharded gradients it accumulates
    (``frameworks.GradientsPart``) instead of the sharded ones: the sharded gradients appear
    unit by unit as the last micro-batch's backward reduce-scatters and frees the unsharded
    ones (FSDP1 ``_runtime_utils._post_backward_hook``, FSDP2 ``foreach_reduce``), and the
    optimizer's ``zero_grad`` frees them before the next step; ``BF16_Optimizer`` holds the
    bf16 gradients beside its fp32 buffer.
    """
    profiles = profiles or job_profiles(job)
    stage = stage_parameters(job.model, layout, last_stage)
    split = trained_split(job, layout, stage)
    zero = layout.zero
    dense_ranks, expert_ranks = zero_shard_ranks(layout)

    table = _parameter_table(job, tuple(profiles))

    def values(name: str) -> FloatArray:
        return np.asarray(table[name][framework_codes], dtype=float)

    def sharded(
        dense: FloatArray, experts: FloatArray, shards: npt.NDArray[np.bool_]
    ) -> FloatArray:
        dense_share = np.asarray(dense / np.where(shards, dense_ranks, 1.0), dtype=float)
        if not job.model.is_moe:
            return dense_share
        return np.asarray(dense_share + experts / np.where(shards, expert_ranks, 1.0), dtype=float)

    weight_bytes = values("weights") + values("fp8_copy")
    weights = sharded(
        split.trained_dense * weight_bytes, split.trained_experts * weight_bytes, zero >= 3
    )
    weights = np.where(layout.offload >= 2, 0.0, weights)
    frozen_element = FP32 if job.precision == "fp32" else BF16
    if job.method == "qlora":
        nf4 = nf4_bytes_per_param(job.lora.double_quant)
        quantized = (
            stage.linear - stage.experts + quantized_head_parameters(job, layout, last_stage)
        )
        frozen_dense = quantized * nf4 + (split.frozen_dense - quantized) * BF16
        frozen_experts = split.frozen_experts * nf4
    else:
        frozen_dense = split.frozen_dense * frozen_element
        frozen_experts = split.frozen_experts * frozen_element
    weights = weights + sharded(frozen_dense, frozen_experts, zero >= 3)

    gradient_bytes = values("gradients")
    shards_gradients = (zero >= 2) & (values("gradients_shard") > 0)
    gradients = sharded(
        split.trained_dense * gradient_bytes,
        split.trained_experts * gradient_bytes,
        shards_gradients,
    )
    gradients = gradients + split.trained * values("compute_gradients")
    accumulation = values("accumulation")
    accumulates_unsharded = (
        accumulating & (zero == 3) & (layout.micro_batches > 1) & (accumulation > 0)
    )
    gradients = np.where(accumulates_unsharded, split.trained * accumulation, gradients)

    optimizer_bytes = values("master") + values("states")
    optimizer = sharded(
        split.trained_dense * optimizer_bytes, split.trained_experts * optimizer_bytes, zero >= 1
    )
    optimizer = np.where(layout.offload >= 1, 0.0, optimizer)
    return {"weights": weights, "gradients": gradients, "optimizer": optimizer}


def optimizer_step_bytes(
    job: TrainingJob,
    layout: Layout,
    framework_codes: npt.NDArray[np.int64],
    profiles: Sequence[FrameworkProfile],
    stage_states: tuple[dict[str, FloatArray], dict[str, FloatArray]] | None = None,
) -> dict[str, FloatArray]:
    """Model states of the more loaded pipeline stage (of both, on a DualPipe rank, which holds
    the first and the last) at the optimizer step: weights, the
    gradients as the step reads them (FSDP's accumulation already reduce-scattered), and the
    optimizer states plus the temporaries the step allocates (``frameworks.OptimizerPart``
    ``step_temporaries``), sharded like the states; none on the GPU when offloaded.
    ``stage_states``: the first and last stage's :func:`model_state_bytes`, reused where no
    layout accumulates unsharded gradients (the step then holds the same states)."""
    table = _parameter_table(job, tuple(profiles))
    temporaries_per_param = np.asarray(table["step_temporaries"][framework_codes], dtype=float)
    dense_ranks, shard_experts = zero_shard_ranks(layout)
    ranks = np.where(layout.zero >= 1, dense_ranks, 1.0)
    expert_ranks = np.where(layout.zero >= 1, shard_experts, 1.0)
    accumulates = np.any(
        (layout.zero == 3)
        & (layout.micro_batches > 1)
        & (table["accumulation"][framework_codes] > 0)
    )
    stages: list[dict[str, FloatArray]] = []
    for last_stage in (False, True):
        if stage_states is not None and not accumulates:
            states = dict(stage_states[int(last_stage)])
        else:
            states = model_state_bytes(
                job, layout, framework_codes, last_stage, profiles, accumulating=False
            )
        split = trained_split(job, layout, stage_parameters(job.model, layout, last_stage))
        trained = split.trained_dense / ranks + split.trained_experts / expert_ranks
        temporaries = np.where(layout.offload >= 1, 0.0, trained * temporaries_per_param)
        states["optimizer"] = np.asarray(states["optimizer"] + temporaries, dtype=float)
        stages.append(states)
    first, last = stages
    larger = sum(last.values()) > sum(first.values())
    best = {name: np.where(larger, last[name], first[name]) for name in first}
    if not np.any(layout.dualpipe):
        return best
    return {name: np.where(layout.dualpipe, first[name] + last[name], best[name]) for name in best}


MODEL_STATE_FIELDS = (
    "zero", "dp", "cp", "tp", "pp", "ep", "etp", "shard", "offload", "micro_batches", "dualpipe",
)  # fmt: skip
"""The layout fields :func:`model_state_bytes` and :func:`optimizer_step_bytes` read (of
``micro_batches`` only whether it exceeds one)."""


def model_states_at_peaks(
    job: TrainingJob,
    layout: Layout,
    framework_codes: npt.NDArray[np.int64],
    profiles: Sequence[FrameworkProfile],
) -> tuple[dict[str, FloatArray], dict[str, FloatArray], dict[str, FloatArray]]:
    """The first and last stage's :func:`model_state_bytes` and the optimizer step's
    (:func:`optimizer_step_bytes`), computed once per distinct :data:`MODEL_STATE_FIELDS`."""
    states_layout = replace(layout, micro_batches=np.minimum(layout.micro_batches, 2))
    rows = distinct_rows(states_layout, framework_codes, MODEL_STATE_FIELDS)
    if rows is not None:
        parts = model_states_at_peaks(job, rows.layout, rows.codes, profiles)
        return tuple(  # type: ignore[return-value]
            {name: np.asarray(value[rows.inverse], dtype=float) for name, value in part.items()}
            for part in parts
        )
    first = model_state_bytes(job, layout, framework_codes, False, profiles)
    last = model_state_bytes(job, layout, framework_codes, True, profiles)
    step = optimizer_step_bytes(job, layout, framework_codes, profiles, (first, last))
    return first, last, step


# --- activations ------------------------------------------------------------------------------

ACTIVATION_CLASSES = (
    "norm",
    "qk_norm",
    "attention_input",
    "mla_latent",
    "qkv",
    "scores",
    "attention_output",
    "mlp_input",
    "mlp",
    "router",
    "experts",
    "shared_experts",
    "dropout",
    "lora",
)
"""The tensor classes of :func:`activation_terms`, which ``benchmarks/trace_activations.py``
measures one by one on real layers."""

HF_FUSED_QKV_FAMILIES = frozenset({"phi3", "falcon", "chatglm", "internlm2"})
"""Families whose transformers modelling code projects Q, K and V with one linear layer and
applies rotary embeddings to views of its output (``Phi3Attention.qkv_proj``,
``FalconAttention.query_key_value``, ChatGLM and InternLM2 ``query_key_value``/``wqkv``)."""
HF_CONCATENATED_ROTARY_FAMILIES = frozenset({"phi3", "chatglm"})
"""Families whose transformers rotary embedding builds Q by concatenating its rotated and
passed-through parts (``modeling_phi3.apply_rotary_pos_emb``: ``torch.cat``)."""
HF_BF16_SOFTMAX_FAMILIES = frozenset({"gpt2", "opt", "bloom", "mpt"})
"""Families whose transformers eager attention keeps the softmax in the input dtype
(``GPT2Attention`` ``eager_attention_forward``); the others upcast it to fp32
(``modeling_llama.eager_attention_forward``: ``softmax(..., dtype=torch.float32).to(dtype)``)."""


@dataclass(frozen=True)
class ActivationKernels:
    """What a stack's kernels keep for backward, per layout (arrays broadcast like a Layout).

    Bytes per element of the tensor named, for 16-bit compute:

    - ``norm_input_bytes``: each norm's input (2: fused RMSNorm and ``native_layer_norm`` keep the
      bf16 input; 4: the eager RMSNorm upcasts and keeps the fp32 copy);
    - ``norm_output_bytes``: the normalised value the norm weight's gradient needs (0 fused; 2 when
      the eager norm multiplies the weight by ``x.to(dtype)``; 4 when it multiplies in fp32);
    - ``swiglu_bytes``: per FFN element of a gated MLP (6: Megatron's fused kernel keeps the fc1
      output pair and the fc2 input; 8: eager gate, activation, up and product);
    - ``softmax_bytes``: per attention score of the eager softmax (2 bf16, 4 fp32);
    - ``repeats_kv``: K and V copied to every query head before attention;
    - ``fused_qkv``: Q, K and V are views of one projection's output, so rotary embeddings make
      new Q and K while V keeps the whole buffer alive;
    - ``rotary_by_concatenation``: rotary embeddings build Q with ``torch.cat``, so Q is laid
      out by head and flash attention's output, allocated like Q (FlashAttention-2 ``mha_fwd``
      ``empty_like(q)``; PyTorch's meta kernel for ``_scaled_dot_product_flash_attention``), is
      not the storage the output projection reads: the model makes a contiguous copy;
    - ``composite_gelu``: the tanh GeLU written as separate ops (transformers ``gelu_new``,
      ``NewGELUActivation``), which keep four FFN-wide tensors instead of one;
    - ``moe_combine_copies``: expert outputs kept per routed token by the combine (1: the
      permute/unpermute of Megatron-Core; 2: transformers' expert loop, whose ``index_add_``
      keeps the weighted output beside the unweighted one its multiply keeps);
    - ``every_other_matmul``: torchtitan's per-op selective recompute policy;
    - ``saves_gathered_inputs``: DTensor tensor parallelism, whose column-parallel linears save
      the all-gathered input rather than its sequence shard (``frameworks.KernelsPart``
      ``tensor_parallel``).
    """

    norm_input_bytes: FloatArray
    norm_output_bytes: FloatArray
    swiglu_bytes: FloatArray
    softmax_bytes: FloatArray
    repeats_kv: npt.NDArray[np.bool_]
    fused_qkv: npt.NDArray[np.bool_]
    rotary_by_concatenation: npt.NDArray[np.bool_]
    composite_gelu: npt.NDArray[np.bool_]
    moe_combine_copies: FloatArray
    every_other_matmul: npt.NDArray[np.bool_]
    saves_gathered_inputs: npt.NDArray[np.bool_] | None = None


def activation_kernels(
    model: ModelSpec,
    framework_codes: npt.NDArray[np.int64],
    profiles: Sequence[FrameworkProfile] | None = None,
) -> ActivationKernels:
    """The kernels of each layout's framework profile (``frameworks.py``), with what the
    transformers modelling code does differently by family where the profile runs it:
    Gemma's RMSNorm multiplies by ``1 + weight`` in fp32 (``GemmaRMSNorm.forward``), ``gelu_new``
    is composite, some families fuse Q, K and V (``HF_FUSED_QKV_FAMILIES``) and GPT-2-style
    attention keeps a bf16 softmax (``HF_BF16_SOFTMAX_FAMILIES``)."""
    transformers = profile_values(framework_codes, "runs_transformers_modeling", profiles) > 0
    rmsnorm = model.norm == "rmsnorm"
    norm_input = profile_values(framework_codes, "rmsnorm_input_bytes", profiles)
    norm_output = profile_values(framework_codes, "rmsnorm_output_bytes", profiles)
    gemma = model.family.startswith("gemma")
    norm_output = np.where(transformers & gemma & (norm_output > 0), FP32, norm_output)
    if not rmsnorm:
        norm_input, norm_output = np.full_like(norm_input, BF16), np.zeros_like(norm_output)
    softmax = profile_values(framework_codes, "softmax_bytes_per_score", profiles)
    softmax = np.where(transformers & (model.family in HF_BF16_SOFTMAX_FAMILIES), BF16, softmax)
    fused = profile_values(framework_codes, "fuses_qkv_projection", profiles) > 0
    fused = fused | (transformers & (model.family in HF_FUSED_QKV_FAMILIES))
    composite_gelu = transformers & (model.hidden_act == "gelu_new")
    concatenated = profile_values(framework_codes, "rotates_by_concatenation", profiles) > 0
    concatenated = concatenated | (transformers & (model.family in HF_CONCATENATED_ROTARY_FAMILIES))
    return ActivationKernels(
        norm_input_bytes=np.asarray(norm_input, dtype=float),
        norm_output_bytes=np.asarray(norm_output, dtype=float),
        swiglu_bytes=profile_values(framework_codes, "swiglu_bytes_per_element", profiles),
        softmax_bytes=np.asarray(softmax, dtype=float),
        repeats_kv=profile_values(framework_codes, "repeats_kv_heads", profiles) > 0,
        fused_qkv=np.asarray(fused, dtype=bool),
        rotary_by_concatenation=np.asarray(concatenated & (model.position_embedding == "rope")),
        composite_gelu=np.asarray(composite_gelu, dtype=bool),
        moe_combine_copies=np.where(transformers, 2.0, 1.0),
        every_other_matmul=profile_values(framework_codes, "selective_every_other_matmul", profiles)
        > 0,
        saves_gathered_inputs=profile_values(framework_codes, "saves_gathered_inputs", profiles)
        > 0,
    )


def activation_terms(
    model: ModelSpec,
    layout: Layout,
    kernels: ActivationKernels,
    sequence_length: int,
    flash_attention: bool = True,
    dropout: bool = False,
    lora_targets: tuple[str, ...] | None = None,
    lora_dropout: bool = False,
    frozen_linear_keeps_input: bool = False,
    compiled: bool = False,
    bytes_per_value: float = BF16,
    expert_load: float = 1.0,
) -> dict[str, FloatArray]:
    """Bytes one layer keeps for backward per token of the micro-batch on one rank, by tensor
    class (``ACTIVATION_CLASSES``). Tensor by tensor, after Korthikanti et al. 2022 (section 4.1)
    and measured on transformers layers (``benchmarks/trace_activations.py``, docs/accuracy.md),
    for hidden h, heads a and KV heads g of head size d, query width q = a d, K/V width k = g d,
    FFN width F and 2-byte values (bytes below; fp32 compute doubles them):

    - ``norm``, per norm: the input (2 h or 4 h, ``ActivationKernels``) and the normalised value
      when the weight trains (0, 2 h or 4 h), plus fp32 statistics (rstd 4, LayerNorm mean and
      rstd 8);
    - ``qk_norm`` (Qwen3, Gemma 3 per head; OLMo 2 over the width): the same kernel on Q and K;
    - ``attention_input``: the input of the Q/K/V projections, 2 h (with a parallel MLP also the
      MLP's input, ``mlp_input`` is then 0);
    - ``mla_latent`` (DeepSeek multi-head latent attention): the query and KV latent norms and the
      up-projections' inputs;
    - ``qkv``: Q, K, V as the attention kernel keeps them, 2 (q + 2k); 6 q where K and V are
      repeated to every head; with ``fused_qkv`` and rotary embeddings the whole projection
      output (q + 2k) plus the rotated Q and K (q + k), 2 (2q + 3k);
    - ``scores``: flash attention's fp32 log-sum-exp, 4 a; eager attention a s times the softmax
      (2 or 4), its bf16 copy or dropped copy fed to the value product (2, when it is a new
      tensor), the dropout mask (1) and Gemma 2's soft-capping ``tanh`` output (2);
    - ``attention_output``: the output projection's input, 2 q: flash attention's saved output is
      the same storage unless ``rotary_by_concatenation`` (then 4 q when the projection keeps
      its input); eager attention keeps only the projection's input;
    - ``mlp``: gated ``swiglu_bytes`` F; GeLU its input and the fc2 input, 4 F (``gelu_new`` 10 F);
    - MoE layers: ``router`` (fp32 softmax 4 E, int64 top-k indices 8 k, renormalised weights
      4 k + 4), ``experts`` per routed token (the gathered input 2 h, the expert MLP,
      ``moe_combine_copies`` outputs of 2 h, fp32 weight 4, int64 indices 16; the rank receiving
      the busiest load keeps ``expert_load`` (``moe.load_imbalance``) times its share of the
      inputs, second indices and expert MLPs, and ``etp`` times the inputs and indices, which
      the dispatcher all-gathers over the expert tensor-parallel group, Megatron-Core
      ``token_dispatcher.py`` ``dispatch_postprocess``) and
      ``shared_experts`` as a dense MLP;
    - ``dropout``: the two residual dropout masks, 1 byte per element each;
    - ``lora``: each adapter with dropout keeps the dropped bf16 copy of its input and a 1-byte
      mask (PEFT ``lora.Linear.forward``); with ``fused_qkv`` the Q, K and V adapters share one
      (litgpt ``LoRAQKVLinear``).

    Tensor parallelism divides everything but the norms, the projections' inputs and the
    residual masks, which sequence parallelism divides too (the projections' inputs only where
    the stack saves the shard: DTensor keeps the gathered input, ``saves_gathered_inputs``).
    Korthikanti's GPT case (LayerNorm,
    GeLU, dropout, eager attention, Megatron) gives ``34 h + 5 a s`` bytes per token plus the
    norms' statistics, their eq. 1; with TP ``10 h + (24 h + 5 a s)/t`` (eq. 2), with sequence
    parallelism ``(34 h + 5 a s)/t`` (eq. 3). Selective recompute drops the ``a s`` terms (eq. 4)
    and, for the eager stacks' SwiGLU, the activation output and product. The FSDP profile's
    selective recompute is torchtitan's per-op policy instead
    (``torchtitan/models/llama3/infra/parallelize.py``, ``_save_list``): it keeps the block input,
    the outputs of every other matmul (wq, wv, w1, w2) and of flash attention.

    LoRA (frozen base weights, Hu et al. 2021): a frozen linear layer keeps no input and a frozen
    norm no normalised output; a target keeps its input for the adapter's A gradient, or with
    LoRA dropout the dropped copy instead. ``frozen_linear_keeps_input``: bitsandbytes up to
    0.43.1 keeps every 4-bit layer's input (``MatMul4Bit.forward``: ``ctx.tensors = (A, B)``).
    ``compiled`` (``torch.compile``): Inductor's min-cut partitioner keeps the gate and up
    projections and the norms' bf16 inputs, and recomputes the SwiGLU product and the norms'
    fp32 intermediates.
    """
    h, a = float(model.hidden_size), float(model.num_attention_heads)
    tp = layout.tp.astype(float)
    sp = layout.sequence_parallel
    selective = layout.recompute == 1
    trained = lora_targets is None
    targets = set(lora_targets) if lora_targets is not None else set()
    zeros = np.zeros(np.broadcast(tp, kernels.swiglu_bytes).shape)

    def keeps_input(*modules: str) -> float:
        if trained or frozen_linear_keeps_input:
            return 1.0
        return 1.0 if targets.intersection(modules) and not lora_dropout else 0.0

    norm_input = kernels.norm_input_bytes
    norm_output = kernels.norm_output_bytes if trained else np.zeros_like(kernels.norm_output_bytes)
    swiglu = kernels.swiglu_bytes
    if compiled:
        swiglu = np.minimum(swiglu, 4.0)
        norm_input, norm_output = np.full_like(norm_input, BF16), np.zeros_like(norm_output)
    stats = FP32 if model.norm == "rmsnorm" else 2 * FP32
    norms = float(min(model.norms_per_layer, 4))
    terms: dict[str, FloatArray] = {}
    terms["norm"] = norms * (h * (norm_input + norm_output) + stats) + zeros

    q_width = float(model.q_width)
    kv_width = float(model.kv_width)
    if model.qk_norm != "none":
        qk_widths = q_width + kv_width
        norm_stats = (a + model.num_kv_heads) if model.qk_norm == "per_head" else 2.0
        terms["qk_norm"] = (qk_widths * (norm_input + norm_output) + FP32 * norm_stats) / tp + zeros

    attention_keeps = keeps_input("q_proj", "k_proj", "v_proj")
    mlp_keeps = keeps_input("gate_proj", "up_proj")
    if model.parallel_attention:
        attention_keeps, mlp_keeps = max(attention_keeps, mlp_keeps), 0.0
    terms["attention_input"] = BF16 * h * attention_keeps + zeros
    terms["mlp_input"] = BF16 * h * mlp_keeps + zeros
    terms["dropout"] = (2.0 * h if dropout else 0.0) + zeros

    rotary = model.position_embedding == "rope"
    if model.uses_mla:
        q_lora = float(model.q_lora_rank or 0)
        kv_lora = float(model.kv_lora_rank or 0)
        latents = q_lora + kv_lora
        latent_norms = 2.0 if q_lora else 1.0
        terms["mla_latent"] = (
            latents * (norm_input + norm_output + BF16) + FP32 * latent_norms
        ) / tp + zeros
        qk_head = float(model.qk_nope_head_dim + model.qk_rope_head_dim)
        kv_buffer = float(model.qk_nope_head_dim + model.v_head_dim)
        qkv_elements = a * (2.0 * qk_head + kv_buffer) + zeros
    else:
        repeated = kernels.repeats_kv & (model.num_kv_heads < model.num_attention_heads)
        whole_buffer = kernels.fused_qkv & ~repeated & rotary
        kept_kv = np.where(repeated, q_width, kv_width)
        qkv_elements = np.where(
            whole_buffer, 2.0 * q_width + 3.0 * kv_width, q_width + 2.0 * kept_kv
        )
    terms["qkv"] = BF16 * qkv_elements / tp
    output_keeps = keeps_input("o_proj")
    if flash_attention:
        copy = np.where(kernels.rotary_by_concatenation, output_keeps, 0.0)
        terms["attention_output"] = BF16 * q_width * (1.0 + copy) / tp + zeros
        terms["scores"] = FP32 * a / tp + zeros
    else:
        terms["attention_output"] = BF16 * q_width * output_keeps / tp + zeros
        copy = np.where((kernels.softmax_bytes > BF16) | dropout, BF16, 0.0)
        per_score = kernels.softmax_bytes + copy + (1.0 if dropout else 0.0)
        per_score = per_score + (BF16 if model.family == "gemma2" else 0.0)
        terms["scores"] = np.where(selective, 0.0, a * sequence_length * per_score / tp)

    def mlp_bytes(width: float) -> FloatArray:
        down_input = keeps_input("down_proj")
        if not model.gated_mlp:
            activation = np.where(kernels.composite_gelu, 4.0, 1.0)
            return np.asarray(BF16 * (activation + down_input) * width + zeros, dtype=float)
        per_element = np.where(selective & (swiglu > 6), 4.0, swiglu)
        if down_input == 0.0:
            per_element = np.maximum(per_element - BF16, 4.0)
        return np.asarray(per_element * width + zeros, dtype=float)

    if model.is_moe:
        moe_share = model.num_moe_layers / model.num_layers
        k = float(model.num_experts_per_token)
        router = model.settings.router
        renormalised = router is not None and router.normalizes_top_k
        router_bytes = (
            FP32 * model.num_experts + 8.0 * k + ((FP32 * k + FP32) if renormalised else 0.0)
        )
        etp = layout.etp.astype(float)
        kept_by_origin = BF16 * h * kernels.moe_combine_copies + FP32 + 8.0
        received = etp * (BF16 * h + 8.0) + mlp_bytes(model.moe_intermediate_size)
        per_routed_token = kept_by_origin + expert_load * received
        terms["router"] = moe_share * router_bytes / tp + zeros
        terms["experts"] = moe_share * k * per_routed_token / tp
        if model.shared_expert_intermediate_size:
            terms["shared_experts"] = (
                moe_share * mlp_bytes(model.shared_expert_intermediate_size) / tp
            )
        terms["mlp"] = (1 - moe_share) * mlp_bytes(model.intermediate_size) / tp
    else:
        terms["mlp"] = mlp_bytes(model.intermediate_size) / tp

    if targets and lora_dropout:
        widths = {
            "o_proj": q_width,
            "gate_proj": h,
            "up_proj": h,
            "down_proj": float(model.intermediate_size),
        }
        others = sum(widths[name] for name in targets if name in widths)
        attention_targets = len(targets & {"q_proj", "k_proj", "v_proj"})
        attention = np.where(kernels.fused_qkv, min(attention_targets, 1), attention_targets) * h
        terms["lora"] = (BF16 + 1.0) * (others + attention) / tp + zeros

    gathered = (
        kernels.saves_gathered_inputs
        if kernels.saves_gathered_inputs is not None
        else np.zeros_like(sp)
    )
    for name in ("norm", "attention_input", "mlp_input", "dropout"):
        shards = sp & ~gathered if name in ("attention_input", "mlp_input") else sp
        terms[name] = np.where(shards, terms[name] / tp, terms[name])

    if np.any(selective & kernels.every_other_matmul):
        width = (
            model.moe_intermediate_size * model.num_experts_per_token
            if model.is_moe
            else model.intermediate_size
        )
        block_ends = np.where(sp, 2.0 * h / tp, 2.0 * h)
        saved_outputs = (q_width + kv_width + q_width + 2.0 * a + width) / tp
        policy = selective & kernels.every_other_matmul
        for name in list(terms):
            terms[name] = np.where(policy, 0.0, terms[name])
        terms["attention_input"] = np.where(policy, BF16 * block_ends, terms["attention_input"])
        terms["mlp"] = np.where(policy, BF16 * saved_outputs, terms["mlp"])
    scale = bytes_per_value / BF16
    return {name: np.asarray(value * scale, dtype=float) for name, value in terms.items()}


@dataclass(frozen=True)
class DistinctRows:
    """One layout of each group that agrees on some fields, and the index back to all."""

    layout: Layout
    codes: npt.NDArray[np.int64]
    inverse: npt.NDArray[np.int64]


def distinct_rows(
    layout: Layout, framework_codes: npt.NDArray[np.int64], fields: tuple[str, ...]
) -> DistinctRows | None:
    """The layouts that differ in the framework code or one of ``fields``, one each, for a
    formula that reads only those (``result[inverse]`` spreads its answer back); None for a
    single layout or when no two agree. The search evaluates every micro-batch, recompute and
    pipeline choice of a machine at once, so a part that depends on a few fields repeats."""
    codes = np.asarray(framework_codes)
    if codes.ndim != 1 or codes.shape != layout.tp.shape or codes.size < 2:
        return None
    key = np.zeros(codes.size, dtype=np.int64)
    span = 1
    for column in (codes, *(np.asarray(getattr(layout, name)) for name in fields)):
        values = column.astype(np.int64)
        radix = int(values.max()) + 1
        if span * radix >= 2**62:
            _, key = np.unique(key, return_inverse=True)
            key, span = key.ravel().astype(np.int64), int(key.max()) + 1
        key, span = key * radix + values, span * radix
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    if len(first) == codes.size:
        return None
    distinct = Layout(
        **{name: getattr(layout, name)[first] for name in layout.__dataclass_fields__}
    )
    return DistinctRows(distinct, codes[first], inverse.ravel())


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
    profiles: Sequence[FrameworkProfile] | None = None,
    expert_load: float = 1.0,
) -> FloatArray:
    """Bytes one layer keeps for backward, per token of the micro-batch, on one rank: the sum of
    :func:`activation_terms` under each layout's framework kernels (:func:`activation_kernels`).
    The bytes depend on the framework, ``tp``, ``etp``, the recompute policy and sequence
    parallelism only, so each distinct combination of those is computed once."""
    rows = distinct_rows(layout, framework_codes, ("tp", "etp", "recompute", "sequence_parallel"))
    if rows is not None:
        return np.asarray(
            activation_bytes_per_token_per_layer(
                model, rows.layout, rows.codes, sequence_length, flash_attention, dropout,
                lora_targets, lora_dropout, frozen_linear_keeps_input, compiled,
                bytes_per_value, profiles, expert_load,
            )[rows.inverse],
            dtype=float,
        )  # fmt: skip
    terms = activation_terms(
        model,
        layout,
        activation_kernels(model, framework_codes, profiles),
        sequence_length,
        flash_attention,
        dropout,
        lora_targets,
        lora_dropout,
        frozen_linear_keeps_input,
        compiled,
        bytes_per_value,
        expert_load,
    )
    return np.asarray(sum(terms.values()), dtype=float)


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
    """Activations the first stage holds at its peak, in micro-batches of one stage's layers: 1
    without a pipeline, ``min(pp, m)`` under 1F1B, times ``1 + (pp - 1)/(pp * vpp)`` interleaved
    (Korthikanti et al. 2022, section 4.2.3; Narayanan et al. 2021, section 2.2), ``pp + 1``
    under DualPipe (deepseek-ai/DualPipe README, "Activation: PP+1")."""
    pp, m = layout.pp.astype(float), layout.micro_batches.astype(float)
    in_flight = np.minimum(pp, np.maximum(m, 1.0))
    interleave = np.where(layout.vpp > 1, 1.0 + (pp - 1.0) / (pp * layout.vpp), 1.0)
    in_flight = np.where(layout.dualpipe, pp + 1.0, in_flight * interleave)
    return np.asarray(np.where(layout.pp > 1, in_flight, 1.0), dtype=float)


def logits_bytes(
    job: TrainingJob,
    layout: Layout,
    framework_codes: npt.NDArray[np.int64],
    profiles: Sequence[FrameworkProfile] | None = None,
) -> FloatArray:
    """Output logits and the loss for one micro-batch on the last stage, and the output head's
    input: ``s b V / cp`` logits, divided by ``tp`` where the loss stays vocab-parallel
    (``frameworks.KernelsPart`` ``loss_parallel``), times the bytes per logit the stack's loss
    holds (``frameworks.LOSS_BYTES_PER_LOGIT``: fp32 12, vocab-parallel 6, fused or chunked 4,
    compiled 6; PyTorch's ``loss_parallel`` over ``tp > 1`` ranks 16,
    ``frameworks.DTENSOR_LOSS_PARALLEL_BYTES_PER_LOGIT``); plus the final norm's bf16 output
    that the head's matmul saves for its weight gradient, ``2 h`` per token, divided by ``tp``
    under sequence parallelism only where the stack saves the sequence shard (``megatron``
    tensor parallelism; DTensor's ``ColwiseParallel`` head saves the gathered copy). A frozen
    head (LoRA, QLoRA) keeps no input, except a 4-bit head under bitsandbytes 0.42
    (:func:`quantizes_head`, whose ``MatMul4Bit`` keeps it)."""
    profiles = profiles or job_profiles(job)
    tokens = job.seq_len * layout.micro_batch / layout.cp
    parallel = (profile_values(framework_codes, "loss_is_parallel", profiles) > 0) & (layout.tp > 1)
    elements = tokens * job.model.vocab_size / np.where(parallel, layout.tp, 1)
    per_element = np.where(
        parallel,
        profile_values(framework_codes, "tensor_parallel_logit_bytes_per_element", profiles),
        profile_values(framework_codes, "logit_bytes_per_element", profiles),
    )
    gathered = profile_values(framework_codes, "saves_gathered_inputs", profiles) > 0
    sharded_input = layout.sequence_parallel & ~gathered
    head_input = tokens * job.model.hidden_size * BF16 / np.where(sharded_input, layout.tp, 1)
    if job.is_adapter and not quantizes_head(job):
        head_input = 0.0 * head_input
    return np.asarray(elements * per_element + head_input, dtype=float)


# --- the whole rank ------------------------------------------------------------------------------


def estimate_memory(
    job: TrainingJob,
    layout: Layout,
    capacity_bytes: float,
    flash_attention: bool = True,
    safety_margin: float = DEFAULT_SAFETY_MARGIN,
    gpus_per_node: npt.ArrayLike = 1,
    host_capacity_bytes: npt.ArrayLike | None = None,
) -> MemoryEstimate:
    """Peak memory of the most loaded rank, part by part (see the module docstring), and the
    host memory per node of ``gpus_per_node`` GPUs that CPU offload takes (:func:`host_memory`),
    against ``host_capacity_bytes`` per node where known."""
    model = job.model
    profiles = job_profiles(job)
    codes = resolve_framework_codes(job.framework, layout.tp, layout.pp, layout.zero)
    tokens = job.seq_len * layout.micro_batch / layout.cp
    lora_targets = job.lora.targets if job.is_adapter else None
    keeps_quantized_inputs = job.method == "qlora" and job.lora.quantizer == "bitsandbytes-0.42"

    def kept_per_layer(of: Layout, keeps_quantized_inputs: bool = keeps_quantized_inputs) -> FloatArray:  # fmt: skip
        per_token = activation_bytes_per_token_per_layer(
            model,
            of,
            codes,
            job.seq_len,
            flash_attention,
            lora_targets=lora_targets,
            lora_dropout=job.is_adapter and job.lora.dropout > 0,
            frozen_linear_keeps_input=keeps_quantized_inputs,
            compiled=job.compile,
            bytes_per_value=FP32 if job.precision == "fp32" else BF16,
            profiles=profiles,
            expert_load=job.moe.load_imbalance,
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
        (layout.recompute == 1)
        & (profile_values(codes, "selective_every_other_matmul", profiles) > 0)
    )
    working_layer = np.where(
        recomputes_in_backward,
        whole_layer - np.where(layout.recompute == 2, 0.0, layer_activation),
        0.0,
    )
    in_flight = micro_batches_in_flight(layout)
    held: float | FloatArray = 0.0
    if keeps_quantized_inputs:
        inputs = layer_activation - kept_per_layer(layout, False)
        held = np.where(layout.recompute == 0, layers_on_stage * inputs, 0.0)
    first_activations = layers_on_stage * stored_per_layer * in_flight + working_layer + held
    last_activations = layers_on_stage * stored_per_layer + working_layer + held

    first_states, last_states, step = model_states_at_peaks(job, layout, codes, profiles)
    logits = logits_bytes(job, layout, codes, profiles)
    buffers = framework_buffer_bytes(job, layout, codes, profiles)

    first_total = sum(first_states.values()) + first_activations
    last_total = sum(last_states.values()) + last_activations + logits
    last_is_peak = (layout.pp == 1) | (last_total >= first_total)
    parts: dict[str, FloatArray] = {}
    for name in ("weights", "gradients", "optimizer"):
        parts[name] = np.where(last_is_peak, last_states[name], first_states[name])
    parts["activations"] = np.where(last_is_peak, last_activations, first_activations)
    parts["logits"] = np.where(last_is_peak, logits, 0.0)
    if np.any(dualpipe := layout.dualpipe & (layout.pp > 1)):
        for name in ("weights", "gradients", "optimizer"):
            parts[name] = np.where(dualpipe, first_states[name] + last_states[name], parts[name])
        parts["activations"] = np.where(dualpipe, first_activations, parts["activations"])
        parts["logits"] = np.where(dualpipe, logits, parts["logits"])
    parts["buffers"] = buffers

    transient = gradients_are_transient(layout, codes, profiles)
    backward_end_is_peak = transient & (parts["gradients"] > parts["activations"] + parts["logits"])
    parts["gradients"] = np.where(transient & ~backward_end_is_peak, 0.0, parts["gradients"])
    parts["activations"] = np.where(backward_end_is_peak, 0.0, parts["activations"])
    parts["logits"] = np.where(backward_end_is_peak, 0.0, parts["logits"])
    allocated = sum(
        parts[name]
        for name in ("weights", "gradients", "optimizer", "activations", "logits", "buffers")
    )
    step["buffers"] = np.where(layout.zero == 3, 0.0, buffers)
    step_is_peak = sum(step.values()) > allocated
    for name in PARTS[:6]:
        parts[name] = np.where(step_is_peak, step.get(name, 0.0), parts[name])
    allocated = np.maximum(allocated, sum(step.values()))
    parts["fragmentation"] = allocated * profile_values(codes, "fragmentation", profiles)
    parts["context"] = CUDA_CONTEXT_BYTES + NCCL_BYTES_PER_COMMUNICATOR * communicator_count(layout)
    reserved = allocated + parts["fragmentation"]
    peak = reserved + parts["context"]
    host, pinned = host_memory(job, layout, codes, profiles, gpus_per_node)
    host_capacity = np.asarray(
        np.nan if host_capacity_bytes is None else host_capacity_bytes, dtype=float
    ) + np.zeros_like(host)
    return MemoryEstimate(
        parts={name: np.asarray(parts[name], dtype=float) for name in PARTS},
        allocated_bytes=np.asarray(allocated, dtype=float),
        reserved_bytes=np.asarray(reserved, dtype=float),
        peak_bytes=np.asarray(peak, dtype=float),
        capacity_bytes=float(capacity_bytes),
        safety_margin=safety_margin,
        host_bytes=host,
        host_pinned_bytes=pinned,
        host_capacity_bytes=host_capacity,
    )


def gradients_are_transient(
    layout: Layout,
    framework_codes: npt.NDArray[np.int64],
    profiles: Sequence[FrameworkProfile] | None = None,
) -> npt.NDArray[np.bool_]:
    """Whether gradients are freed between steps and so never live beside the activations.

    PyTorch's ``optimizer.zero_grad()`` sets gradients to ``None`` (the default since 2.0);
    eager PyTorch, Hugging Face and FSDP2 then allocate gradients during backward as the
    activations are freed, and the peak is the larger of the forward end (activations and
    logits) and the backward end (all gradients). Megatron-LM and DeepSpeed keep persistent
    gradient buffers (``frameworks.GradientsPart.persistent``), and gradient accumulation keeps
    gradients across micro-batches.
    """
    persistent = profile_values(framework_codes, "persistent_gradients", profiles) > 0
    return np.asarray(~persistent & (layout.micro_batches == 1) & (layout.pp == 1), dtype=bool)


FSDP_GATHERED_UNITS = 2
"""Layer units a ZeRO-3 / FSDP rank holds gathered at once: the one computing and the one
prefetched (FSDP2 prefetches one module ahead; DeepSpeed ZeRO-3 ``prefetch_bucket_size``)."""


def fsdp_root_parameters(model: ModelSpec, layout: Layout) -> FloatArray:
    """Parameters of the root FSDP unit on one rank, gathered from its forward to the end of the
    backward: what no wrapped layer holds, the embedding and the output head (one matrix when
    tied, or on one pipeline stage), divided by ``tp``. Both FSDP generations leave the root
    unsharded after its forward: FSDP1 ``torch/distributed/fsdp/_runtime_utils.py``
    ``_post_forward_reshard`` ("Do not free the root's parameters in the post-forward for
    FULL_SHARD", ``free_unsharded_flat_param = not state._is_root and ...``), FSDP2
    ``_fully_shard/_fsdp_state.py`` ``_lazy_init`` ("For the root, do not reshard after forward":
    ``post_forward_mesh_info = None``); litgpt, the fsdp_qlora script and torchtitan wrap each
    block and leave embedding and head to the root."""
    matrices = np.where((layout.pp == 1) & (not model.tie_word_embeddings), 2.0, 1.0)
    return np.asarray(matrices * model.vocab_size * model.hidden_size / layout.tp, dtype=float)


def framework_buffer_bytes(
    job: TrainingJob,
    layout: Layout,
    framework_codes: npt.NDArray[np.int64],
    profiles: Sequence[FrameworkProfile] | None = None,
) -> FloatArray:
    """Buffers the stack allocates beside the model states.

    - ZeRO-3 / FSDP: the root unit (:func:`fsdp_root_parameters`) and
      :data:`FSDP_GATHERED_UNITS` layer units gathered in the parameter dtype (fp8 under
      ``fp8_all_gather``), plus one unit's
      unsharded gradient in the parameter dtype and its copy into the ``reduce_dtype``
      reduce-scatter input, which coexist until the copy-in ends (FSDP2 ``foreach_reduce``:
      "only after the copy-in finishes can we free the gradients"); that unit is the largest
      layer or the output head when larger. LoRA gathers the frozen bf16 weights only, QLoRA's
      layers their NF4 storage (FSDP gathers the packed 4-bit data, ``quant_storage``).
    - Gradient buckets (``frameworks.BuffersPart``): DeepSpeed ZeRO-1/2's ``bucket_count``
      buckets of ``bucket_elements`` elements (``hidden^2`` is ``hidden_size**2``) in the
      gradient dtype; DDP (dp > 1 without ZeRO) a flattened copy of all the rank's gradients.
    - MoE: one layer's dispatch buffers, the permuted copies a rank sends (``s b k / tp``
      tokens) and those it receives (``load * etp`` times as many), bf16 rows of ``h``
      (Megatron-Core ``all_to_all`` allocates the receive buffer; the backward combine moves
      bf16 gradients).
    - QLoRA: the dequantized copy of the largest 4-bit weight (:func:`dequantized_weight_bytes`).
    """
    profiles = profiles or job_profiles(job)
    model = job.model
    stage = stage_parameters(model, layout, False)
    split = trained_split(job, layout, stage)
    root = fsdp_root_parameters(model, layout)
    if job.is_adapter:
        layer_element = (
            nf4_bytes_per_param(job.lora.double_quant) if job.method == "qlora" else BF16
        )
        gathered = root * BF16 + FSDP_GATHERED_UNITS * stage.largest_layer * layer_element
    else:
        element = _per_layout(job, framework_codes, profiles, "param_element")
        reduce = _per_layout(job, framework_codes, profiles, "reduce")
        reduced_unit = np.maximum(stage.largest_layer, stage.head_or_embedding)
        gathered_element = np.where(job.fp8_all_gather, FP8_WEIGHT_BYTES, element)
        gathered = root * element + FSDP_GATHERED_UNITS * stage.largest_layer * gathered_element
        gathered = gathered + reduced_unit * (element + reduce)
    fsdp_buffers = np.where(layout.zero == 3, gathered, 0.0)

    def bucket_elements(profile: FrameworkProfile) -> float:
        elements = profile.buffers.bucket_elements
        return float(model.hidden_size**2) if elements == "hidden^2" else float(elements)

    ipg = np.array(
        [
            profile.buffers.bucket_count
            * bucket_elements(profile)
            * parameter_bytes(job, profile).gradients
            if profile.buffers.gradient_buckets == "ipg"
            else 0.0
            for profile in profiles
        ]
    )[framework_codes]
    buckets = np.where((layout.zero >= 1) & (layout.zero <= 2), ipg, 0.0)
    ddp = np.array([profile.buffers.gradient_buckets == "ddp" for profile in profiles])[
        framework_codes
    ]
    data_parallel = (layout.dp * layout.cp) > 1
    gradient_copy = split.trained * _per_layout(job, framework_codes, profiles, "gradients")
    buckets = buckets + np.where(ddp & data_parallel & (layout.zero == 0), gradient_copy, 0.0)
    dispatch: float | FloatArray = 0.0
    if model.is_moe:
        routed = job.seq_len * layout.micro_batch / layout.cp / layout.tp
        routed = routed * model.num_experts_per_token * model.hidden_size * BF16
        dispatch = routed * (1.0 + job.moe.load_imbalance * layout.etp)
    dequantized = 0.0
    if job.method == "qlora":
        dequantized = dequantized_weight_bytes(job)
    return np.asarray(fsdp_buffers + buckets + dispatch + dequantized / layout.tp, dtype=float)


HOST_MEMORY_MARGIN = 0.10
"""Share of a node's RAM an offload plan leaves free: the operating system, the data loader's
workers and each rank's own host memory (its CUDA context, the Python process) live there too,
and the plan search keeps the same 10 % as on the GPU (:data:`DEFAULT_SAFETY_MARGIN`)."""


def host_memory_fits(
    host_bytes: FloatArray, host_capacity_bytes: FloatArray
) -> npt.NDArray[np.bool_]:
    """Whether the offloaded states per node fit the node's RAM less :data:`HOST_MEMORY_MARGIN`
    (true where nothing is offloaded or the RAM is unknown, NaN)."""
    known = ~np.isnan(host_capacity_bytes)
    limit = np.where(known, host_capacity_bytes, np.inf) * (1.0 - HOST_MEMORY_MARGIN)
    return np.asarray((host_bytes == 0) | (host_bytes <= limit), dtype=bool)


def host_memory(
    job: TrainingJob,
    layout: Layout,
    framework_codes: npt.NDArray[np.int64],
    profiles: Sequence[FrameworkProfile],
    gpus_per_node: npt.ArrayLike,
) -> tuple[FloatArray, FloatArray]:
    """Host memory per node that CPU offload keeps, and its pinned (page-locked) part.

    Each rank offloads its own shard of the trained parameters (over :func:`zero_shard_ranks`
    from ZeRO-1 on), on the larger of the first and
    last pipeline stage; a node holds ``gpus_per_node`` ranks. Per offloaded parameter
    (``frameworks.OffloadPart``): its master copy (or the parameters themselves where there is
    none), the optimizer states, a host copy of its gradient in the master's dtype, and for
    DeepSpeed ZeRO-Offload a bf16 staging copy of the partition (``stage_1_and_2.py``:
    ``single_partition_of_fp32_groups`` and its ``.grad`` on the CPU, pinned with
    ``pin_memory``; ``param_buffer_of_bit16_for_cpu_offload_groups``; DeepSpeed's CPU Adam keeps
    its states in ordinary host memory). FSDP2's ``CPUOffloadPolicy`` keeps the fp32 sharded
    parameters (the master) and their gradients pinned, the optimizer states on the CPU;
    Megatron-Core's ``HybridDeviceOptimizer`` the same (``cpu_offloading/hybrid_optimizer.py``).
    ``optimizer+params`` also moves the rank's persistent weights to the host (ZeRO-Infinity's
    ``offload_param``), pinned.
    """
    if not np.any(layout.offload >= 1):
        nothing = np.zeros(np.broadcast(layout.dp, layout.offload).shape)
        return nothing, nothing.copy()
    ranks, expert_ranks = zero_shard_ranks(layout)
    shards = layout.zero >= 1
    per_rank = np.zeros(np.broadcast(layout.dp, layout.offload).shape)
    for last_stage in (False, True):
        split = trained_split(job, layout, stage_parameters(job.model, layout, last_stage))
        local = split.trained_dense / np.where(shards, ranks, 1.0) + split.trained_experts / (
            np.where(shards, expert_ranks, 1.0)
        )
        per_rank = np.maximum(per_rank, local)

    host_table, pinned_table, params_table = [], [], []
    for profile in profiles:
        sizes = parameter_bytes(job, profile)
        master = sizes.master or sizes.param_element
        gradient = DTYPE_BYTES[profile.weights.optimizer_dtype]
        staging = sizes.param_element if profile.offload.staging_copy else 0.0
        host_table.append(master + gradient + staging + sizes.states)
        pinned_table.append(master + gradient + staging if profile.offload.pin_memory else 0.0)
        params_table.append(sizes.param_element if sizes.weights else 0.0)

    def gathered(table: list[float]) -> FloatArray:
        return np.asarray(np.array(table)[framework_codes], dtype=float)

    optimizer = layout.offload >= 1
    params = layout.offload >= 2
    host = np.where(optimizer, per_rank * gathered(host_table), 0.0)
    locked = np.where(optimizer, per_rank * gathered(pinned_table), 0.0)
    moved_weights = np.where(params, per_rank * gathered(params_table), 0.0)
    node = np.asarray(gpus_per_node, dtype=float)
    return (
        np.asarray((host + moved_weights) * node, dtype=float),
        np.asarray((locked + moved_weights) * node, dtype=float),
    )


def dequantized_weight_bytes(job: TrainingJob) -> float:
    """QLoRA's transient full-width copy of the largest 4-bit weight, alive at the peak: every
    4-bit matmul dequantizes its weight forward and backward (bitsandbytes ``MatMul4Bit``:
    ``F.dequantize_4bit(B, quant_state).to(A.dtype)``). ``dequantize_4bit`` returns the dtype the
    weight was quantized from (``torch.empty(quant_state.shape, dtype=quant_state.dtype)``):
    Lightning quantizes from fp16 (``_Linear4bit.quantize``: ``weight.to(dtype=torch.half)``),
    so under ``bitsandbytes-0.42`` the fp16 copy and its bf16 cast are both alive, 4 bytes per
    weight; transformers quantizes from the bf16 load dtype, one 2-byte copy. With a 4-bit
    head the largest weight is the head, dequantized for every chunk of litgpt's chunked head,
    the last of them at the forward pass's end (``benchmarks/trace_qlora.py``)."""
    model = job.model
    largest = model.hidden_size * max(model.intermediate_size, model.q_width)
    if quantizes_head(job):
        largest = max(largest, model.vocab_size * model.hidden_size)
    per_weight = BF16 + BF16 if job.lora.quantizer == "bitsandbytes-0.42" else BF16
    return float(largest * per_weight)


def communicator_count(layout: Layout) -> FloatArray:
    """Process groups of more than one GPU that a rank joins (TP, PP, DP, CP, EP)."""
    groups = [layout.tp, layout.pp, layout.dp, layout.cp, layout.ep]
    return np.asarray(sum((group > 1).astype(float) for group in groups), dtype=float)
