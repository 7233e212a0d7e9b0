"""Framework profiles: what each training stack keeps in memory, built from composable parts.

A profile is six parts, each a small record of what one piece of the stack allocates:

- :class:`WeightsPart`: the dtype of the module parameters, whether every rank keeps them
  (``persistent``) or only a shard that is gathered layer by layer (``gathered``, FSDP), and the
  dtype of the master copy the optimizer updates;
- :class:`GradientsPart`: the dtype of the gradients the optimizer reads, the dtype they are
  reduced in, whether ZeRO-2 and above shards them, whether they persist between steps, and
  what gradient accumulation holds;
- :class:`OptimizerPart`: the dtype of the optimizer states (the states themselves follow the
  scenario's ``optimizer``: ``memory.optimizer_state_bytes_per_param``);
- :class:`KernelsPart`: the activation kernels (norms, SwiGLU, attention, the loss) that decide
  what each layer keeps for backward (``memory.activation_bytes_per_token_per_layer``);
- :class:`BuffersPart`: communication buckets outside the gradients;
- :class:`OffloadPart`: what CPU offload keeps in host memory.

The named stacks are presets of these parts (``PRESETS``); per trained parameter under bf16
mixed precision with AdamW, before sharding:

==================== ============ ================ =================== ======================
preset               weights      gradients        master + states     kernels
==================== ============ ================ =================== ======================
megatron             2            4 (fp32 buffer)  4 + 8               fused, cuDNN, vocab-par.
fsdp                 0 (gathered) 4 (fp32)         4 + 8               eager, fp32 loss
deepspeed            2            2 (bf16)         4 + 8               eager, fp32 loss
hf                   4 (fp32)     4 (fp32)         0 + 8               eager-fp32, fp32 loss
megatron-deepspeed   2            4 + 2, unsharded 4 + 8               fused norm, vocab-par.
torchtitan           0 (gathered) 4 (fp32)         4 + 8               eager; compiled loss
==================== ============ ================ =================== ======================

A scenario picks a preset (``framework: fsdp``) or a preset with parts overridden
(``framework: {base: fsdp, master_weights: bf16, loss: compiled}``; :data:`PART_KEYS` lists the
keys and their values). The precision then sets what it fixes (:func:`resolve_profile`):
``fp32`` trains fp32 weights, gradients and states without a master copy, ``bf16-pure`` the
same in bf16 (adapters included: litgpt's ``bf16-true`` and torchtune cast the whole model),
LoRA and QLoRA under mixed precision train fp32 adapters without a master copy (PEFT's
``autocast_adapter_dtype``), whose gradients the stack reduces in its own reduce dtype
(DeepSpeed's ZeRO optimizer in bf16); an explicit override wins over the precision.

Sources, by part (the code that allocates each, at the commit read):

- Megatron-LM ``d98e8a64``: ``megatron/training/arguments.py`` turns on
  ``accumulate_allreduce_grads_in_fp32`` for bf16, so ``param_and_grad_buffer.py`` allocates
  ``grad_data = torch.zeros(...)`` with ``grad_dtype = torch.float``;
  ``optimizer/distrib_optimizer.py`` keeps ``shard_main_param = shard_model_param.clone().float()``.
- PyTorch FSDP2: ``torchtitan/distributed/fsdp.py`` (torchtitan ``b5bcd76c``) builds
  ``MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=fp32)`` over fp32 sharded parameters;
  PyTorch ``17a7e1e0`` ``torch/distributed/fsdp/_fully_shard/_fsdp_param.py``
  ``to_accumulated_grad_if_needed`` upcasts an unsharded gradient to ``reduce_dtype`` while
  gradient sync is off; ``_fsdp_collectives.py`` (``8fc2039d``) ``foreach_reduce`` copies one
  unit's unsharded gradients into a ``reduce_dtype`` reduce-scatter input before freeing them.
- DeepSpeed ``edaa7221``: ``runtime/engine.py`` ``_do_optimizer_sanity_check`` picks the
  ``BF16_Optimizer`` for bf16 with fp32 gradient accumulation under ZeRO-1, whose
  ``bf16_optimizer.py`` allocates ``fp32_groups_gradients_flat`` with ``torch.zeros_like`` over
  the whole flat parameter group (unsharded) and ``fp32_groups_flat_partition`` over its shard;
  ``runtime/zero/stage_1_and_2.py`` allocates ``ipg`` buckets of ``reduce_bucket_size``
  elements in the bf16 dtype, a second one with ``overlap_comm``.
- Megatron-DeepSpeed ``4efb479d``: ``megatron/model/__init__.py`` takes Apex's
  ``MixedFusedRMSNorm``; ``megatron/model/transformer.py`` runs SwiGLU eagerly
  (``F.silu(x[0]) * x[1]``) and ``repeat_kv`` before flash attention.
- PyTorch DDP ``ad78a7b3``: ``torch/csrc/distributed/c10d/reducer.cpp``
  ``initialize_buckets`` allocates every bucket's flattened ``gradients`` tensor, together the
  size of all gradients (``gradient_as_bucket_view=False``, the default).
- torchtitan ``bbb1b616`` (PR #1033, 2025-04-02): ``build_cross_entropy_loss`` compiles the
  loss when ``training.compile`` is on.
- torchtitan ``9dec370`` ``parallelisms/parallelize_llama.py`` ``apply_tp``: DTensor tensor
  parallelism gathers the sequence shard before the column-parallel linears, which save the
  gathered copy (``KernelsPart.tensor_parallel``); PyTorch ``1963fc8``
  ``torch/distributed/tensor/parallel/loss.py``: ``loss_parallel``'s fused backward
  (:data:`DTENSOR_LOSS_PARALLEL_BYTES_PER_LOGIT`).
- PyTorch 2.4-2.6 ``torch/optim/adamw.py`` ``_multi_tensor_adamw``: the default ``foreach``
  step's state-sized temporary (``OptimizerPart.step_temporaries``).

The per-framework activation choices, per element of the tensor (bytes):

- RMSNorm: a fused (Transformer Engine / Apex) kernel keeps its bf16 input (2); the eager
  kernels upcast first and keep the fp32 input (4), plus the normalised value when the norm
  weight trains: bf16 in torchtitan (``type_as(x) * weight``, 2) and Hugging Face
  (``weight * x.to(dtype)``, 2), fp32 in torchtune and litgpt (4, the ``hf`` profile of the
  single-process eager stacks). LayerNorm is ``torch.native_layer_norm`` everywhere and keeps
  its bf16 input.
- Grouped-query attention: the eager stacks repeat K and V to every query head before
  ``scaled_dot_product_attention`` (torchtitan ``repeat_kv``, Hugging Face ``repeat_kv``,
  torchtune and litgpt ``expand``), so the attention kernel keeps full-width K and V;
  Megatron's fused attention keeps the grouped K and V.
- SwiGLU: Megatron's fused kernel keeps 6 bytes per FFN element (the fc1 output pair and the
  fc2 input), eager PyTorch 8 (gate, SiLU output, up, product).
- Loss, bytes per logit (:data:`LOSS_BYTES_PER_LOGIT`).

- Attention softmax without flash attention: Megatron's fused ``scaled_masked_softmax`` keeps its
  bf16 output (2 bytes per score); the eager PyTorch stacks upcast and keep the fp32 softmax (4)
  and the bf16 copy the value product takes.
- Fused Q/K/V projection: litgpt projects Q, K and V with one ``attn`` linear layer and rotates
  views of its output and builds Q and K with ``torch.cat`` (``litgpt/model.py``
  ``CausalSelfAttention.forward``), so the ``hf`` profile, validated on litgpt, keeps that buffer
  for multi-head models and a contiguous copy of the attention output.
- ``deepspeed`` runs the transformers modelling code (Hugging Face Trainer or Accelerate with
  DeepSpeed), whose per-family kernels ``memory.activation_kernels`` applies.

Gradient accumulation under FSDP skips the reduce-scatter until the last micro-batch in
Hugging Face Accelerate and Lightning Fabric (``no_sync``, FSDP2
``set_requires_gradient_sync(False)``), so each rank holds the whole model's gradients
unsharded while it accumulates; torchtitan reduce-scatters every micro-batch.

Measured for litgpt 0.4.12 on the CPU with ``torch.autograd.graph.saved_tensors_hooks``
(every saved tensor of one layer, by op): full fine-tuning keeps ``28 h + 8 F`` bytes per token
per layer for a grouped-query Llama, which the ``hf`` kernels give exactly.

Schedules (not parts): Megatron-Core's distributed optimizer gathers the updated parameters
under the next forward (``--overlap-param-gather``) and FSDP prefetches each layer's
parameters; DeepSpeed's ZeRO-1/2 gathers them at the end of ``step()``, exposed. Megatron-Core's
interleaved 1F1B overlaps pipeline sends (``overlap_p2p_comm``). Fused memory-bound kernels
(``traffic.py``) run in Megatron-Core (``megatron/core/fusions``). Transformer Engine picks
cuDNN's fused attention on Hopper and later; the PyTorch stacks run FlashAttention-2
(``kernels.attention_share_of_peak`` has both).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from gpuplan.errors import InputError
from gpuplan.estimate.identity_cache import cached_by_identity
from gpuplan.limits import shown

if TYPE_CHECKING:
    from gpuplan.workload.job import TrainingJob

BF16 = 2.0
FP32 = 4.0
DTYPE_BYTES: dict[str, float] = {"fp32": FP32, "bf16": BF16}
"""Bytes per element of the dtypes a part names (fp16 trains as bf16 does: 2 bytes)."""


class FrameworkError(InputError):
    """A framework section that names an unknown preset, part or value."""


# --- parts ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WeightsPart:
    """Module parameters and the master copy the optimizer updates.

    ``param_dtype``: the dtype the forward reads (``bf16``; ``fp32`` for Hugging Face's AMP over
    fp32 weights). ``residency``: ``persistent`` when every rank keeps its compute copy
    (Megatron-LM ``param_and_grad_buffer.py`` ``param_data``, DeepSpeed ``bf16_groups_flat``),
    ``gathered`` when only a shard persists and each unit's compute copy is all-gathered for its
    forward and backward (PyTorch FSDP2 ``_fsdp_param.py``: "the sharded parameter ... is the
    only contributor to parameter memory"). ``master_weights``: ``fp32`` (Megatron-LM
    ``distrib_optimizer.py`` ``shard_model_param.clone().float()``; DeepSpeed
    ``fp32_groups_flat_partition``; FSDP2's fp32 sharded parameter), ``bf16`` (FSDP2 over a
    model cast to bf16 before ``fully_shard``) or ``none`` (the parameters are what the optimizer
    updates).
    """

    param_dtype: str = "bf16"
    residency: str = "persistent"
    master_weights: str = "fp32"

    @property
    def optimizer_dtype(self) -> str:
        """The dtype of the tensor the optimizer updates: the master copy, else the parameters."""
        return self.param_dtype if self.master_weights == "none" else self.master_weights


@dataclass(frozen=True)
class GradientsPart:
    """Gradients: what the optimizer reads, how they are reduced and how long they live.

    ``dtype``: the gradient the optimizer reads, ``fp32`` (Megatron-LM's ``main_grad`` buffer,
    ``grad_dtype = torch.float if grad_reduce_in_fp32``; DeepSpeed ``BF16_Optimizer``
    ``fp32_groups_gradients_flat``), ``bf16`` (DeepSpeed ZeRO-1/2 ``averaged_gradients``), or
    ``param``: the dtype of the tensor the optimizer updates (FSDP2 casts the reduce-scatter
    output to the sharded parameter's dtype; DDP's gradients are the fp32 parameters').
    ``reduce_dtype``: what the data-parallel reduction carries (FSDP2 ``reduce_dtype``).
    ``sharding``: ``stage`` shards them over the data-parallel ranks from ZeRO-2 on, ``none``
    never (``BF16_Optimizer`` allocates the flat fp32 buffer over the whole group).
    ``persistent``: a buffer that lives across steps (Megatron-LM, DeepSpeed) rather than
    gradients freed by ``zero_grad(set_to_none=True)``. ``compute_copy``: the bf16 ``.grad`` of
    every parameter lives beside the fp32 buffer until the step (``BF16_Optimizer`` accumulates
    it into the fp32 buffer and clears it only in ``zero_grad``). ``accumulation``:
    ``unsharded`` when gradient accumulation under FSDP skips the reduce-scatter until the last
    micro-batch and holds the whole model's gradients in ``reduce_dtype``
    (``to_accumulated_grad_if_needed``), ``sharded`` when it reduces every micro-batch.
    """

    dtype: str = "fp32"
    reduce_dtype: str = "fp32"
    sharding: str = "stage"
    persistent: bool = True
    compute_copy: bool = False
    accumulation: str = "sharded"


@dataclass(frozen=True)
class OptimizerPart:
    """The optimizer states' dtype: ``param`` follows the tensor the optimizer updates
    (``torch.optim.AdamW`` ``torch.zeros_like(p)``; the fp32 master under Megatron-LM and
    DeepSpeed), or ``fp32`` / ``bf16`` explicitly (Megatron-Core's precision-aware optimizer,
    ``--exp-avg-dtype``). The states per parameter follow the scenario's ``optimizer``
    (``memory.optimizer_state_bytes_per_param``); ZeRO-1 and above shard them, expert states
    over the expert data-parallel ranks (``memory.model_state_bytes``).

    ``step_temporaries``: state-sized tensors AdamW's step allocates beside the states, alive
    at the step's peak: 1 for ``torch.optim.AdamW``'s default ``foreach`` implementation on CUDA
    (PyTorch 2.4-2.6 ``torch/optim/adamw.py`` ``_multi_tensor_adamw``:
    ``exp_avg_sq_sqrt = torch._foreach_sqrt(device_exp_avg_sqs)`` over every parameter of the
    rank at once; torchtitan ``9dec370`` ``optimizer.py`` passes ``foreach=not fused`` with
    ``optimizer.fused`` off by default; litgpt and the Hugging Face Trainer's ``adamw_torch``
    take the default), 0 for the fused multi-tensor kernels of Megatron-LM and DeepSpeed
    (Apex / Transformer Engine ``FusedAdam``, DeepSpeed ``FusedAdam``), which update in place.
    The same choice sets what the step moves through HBM
    (``traffic.optimizer_step_bytes_per_param``)."""

    states: str = "param"
    step_temporaries: int = 0


LOSS_BYTES_PER_LOGIT: dict[str, float] = {
    "fp32": 12.0,
    "vocab-parallel": 6.0,
    "chunked": 4.0,
    "fused": 4.0,
    "compiled": 6.0,
}
"""Bytes per logit the loss holds at its peak, its backward:

- ``fp32``: the eager path upcasts the logits and keeps the fp32 log-softmax; its backward holds
  that, the fp32 gradient from the loss and the fp32 gradient of the log-softmax at once (12;
  torchtitan and torchtune free the bf16 logits before backward, ``del pred`` / ``del logits``);
- ``vocab-parallel``: Megatron's vocab-parallel cross-entropy keeps the bf16 logits and one fp32
  softmax (6; ``megatron/core/tensor_parallel/cross_entropy.py``);
- ``chunked`` and ``fused``: the bf16 logits and their log-probabilities (bf16 in litgpt's
  ``chunked_cross_entropy``; fp32 per chunk after torchtune's ``CEWithChunkedOutputLoss`` frees
  the bf16 chunks), 4;
- ``compiled``: ``torch.compile`` of ``cross_entropy(pred.float(), labels)`` (torchtitan's loss):
  AOTAutograd's min-cut partitioner saves the fp32 log-softmax for backward, whose fused kernel
  writes the bf16 gradient, 4 + 2 = 6 (traced on PyTorch 2.13 with
  ``functorch.compile.min_cut_rematerialization_partition``: forward saves one fp32 tensor of
  the logits' shape, backward returns bf16).
"""
DTENSOR_LOSS_PARALLEL_BYTES_PER_LOGIT = 16.0
"""Bytes per local logit of the eager ``fp32`` loss under PyTorch's ``loss_parallel`` (DTensor
tensor parallelism over vocab-sharded logits; torchtitan ``9dec370`` enters it in
``utils.get_train_context``). Its backward, ``_nll_loss_and_log_softmax_backward`` in
``torch/distributed/tensor/parallel/loss.py`` (PyTorch 2.6, ``1963fc8``), fuses the NLL and
log-softmax backward as ``(grad_input + torch.exp(x)) * grad_output`` over
``grad_input = torch.zeros_like(x)``: the saved fp32 log-softmax ``x``, ``grad_input``,
``exp(x)`` and their sum are alive at once, 4 x 4 bytes (its forward, ``_log_softmax``, peaks at
14: the bf16 logits, their fp32 copy, ``shifted`` and ``exp(shifted)``). ATen's unfused path
holds 12 (:data:`LOSS_BYTES_PER_LOGIT`)."""


@dataclass(frozen=True)
class KernelsPart:
    """The activation kernels, which decide what each layer keeps for backward (module
    docstring): ``norm`` ``fused`` (bf16 input only), ``eager`` (fp32 input and the bf16
    normalised value) or ``eager-fp32`` (fp32 input and fp32 normalised value); ``swiglu``
    ``fused`` (6 bytes per FFN element) or ``eager`` (8); ``attention`` the kernel the speed
    model times (``flash2``, ``cudnn`` or ``eager``); ``repeat_kv`` whether K and V are repeated
    to every query head before the kernel; ``loss`` (:data:`LOSS_BYTES_PER_LOGIT`);
    ``loss_parallel`` whether the logits stay split over tensor parallel (Megatron's
    vocab-parallel loss, torchtitan's ``loss_parallel``) or the output head is gathered to every
    rank (DTensor TP with ``use_local_output``); ``tensor_parallel`` how tensor parallelism keeps
    a column-parallel linear's sequence-sharded input: ``megatron`` saves the shard and
    all-gathers it again in backward (``megatron/core/tensor_parallel/layers.py``
    ``LinearWithGradAccumulationAndAsyncCommunication``: ``ctx.save_for_backward(input,
    weight)`` before the gather), ``dtensor`` all-gathers it before the linear, which saves the
    gathered copy (torchtitan ``9dec370`` ``parallelisms/parallelize_llama.py`` ``apply_tp``:
    ``PrepareModuleInput(desired_input_layouts=Replicate())`` for the attention and the MLP,
    ``ColwiseParallel(input_layouts=Shard(1))`` for the output head); ``fused`` whether the memory-bound ops run
    fused (``traffic.py``); ``softmax_bytes_per_score`` what the softmax keeps without flash
    attention, ``fuses_qkv_projection`` and ``rotates_by_concatenation`` litgpt's fused Q/K/V
    layer and its ``torch.cat`` rotation, ``runs_transformers_modeling`` whether the stack runs
    the transformers modelling code (module docstring); ``fp8_recipe`` the fp8 scaling the
    stack's fp8 library applies when the job leaves ``fp8_recipe: auto``
    (``traffic.FP8_CAST_BYTES``): ``delayed`` for Transformer Engine (Megatron-Core, NeMo, and
    Accelerate's TE and MS-AMP backends behind Hugging Face and DeepSpeed, whose
    ``FP8RecipeKwargs`` take an ``amax_history_len``), ``tensorwise`` for torchao's dynamic
    scaling (torchtitan, FSDP2 stacks); ``caches_fp8_weights`` whether the fp8 weights cast on a
    step's first micro-batch serve the rest (Megatron-Core passes Transformer Engine
    ``is_first_microbatch``, ``megatron/core/extensions/transformer_engine.py``)."""

    norm: str = "eager"
    swiglu: str = "eager"
    attention: str = "flash2"
    repeat_kv: bool = True
    loss: str = "fp32"
    loss_parallel: bool = True
    tensor_parallel: str = "dtensor"
    fused: bool = False
    softmax_bytes_per_score: float = 4.0
    fuses_qkv_projection: bool = False
    rotates_by_concatenation: bool = False
    runs_transformers_modeling: bool = False
    fp8_recipe: str = "tensorwise"
    caches_fp8_weights: bool = False

    @property
    def norm_input_bytes(self) -> float:
        return BF16 if self.norm == "fused" else FP32

    @property
    def norm_output_bytes(self) -> float:
        return {"fused": 0.0, "eager": BF16, "eager-fp32": FP32}[self.norm]

    @property
    def swiglu_bytes_per_element(self) -> float:
        return 6.0 if self.swiglu == "fused" else 8.0


@dataclass(frozen=True)
class BuffersPart:
    """Gradient communication buffers outside the gradients themselves. ``gradient_buckets``:
    ``none`` (Megatron-LM's buckets are views of its gradient buffer; FSDP's reduce-scatter
    buffers are counted with its gathered units), ``ddp`` (PyTorch DDP's ``Reducer`` keeps a
    flattened copy of every gradient in its buckets, ``reducer.cpp``), or ``ipg`` (DeepSpeed
    ZeRO-1/2: ``bucket_count`` buckets of ``bucket_elements`` elements in the gradient dtype;
    ``hidden^2`` is the Hugging Face integration's ``"auto"`` ``reduce_bucket_size``)."""

    gradient_buckets: str = "none"
    bucket_elements: float | str = 0.0
    bucket_count: int = 2


@dataclass(frozen=True)
class OffloadPart:
    """What CPU offload keeps in host memory per offloaded parameter (``memory.host_memory``):
    the master copy (or the parameters' shard), its optimizer states and a host copy of its
    gradient; ``staging_copy`` adds DeepSpeed ZeRO-Offload's bf16 copy of the partition
    (``stage_1_and_2.py`` ``param_buffer_of_bit16_for_cpu_offload_groups``). ``pin_memory``
    pins the master, gradient and staging copies (DeepSpeed ``offload_optimizer.pin_memory``;
    FSDP2 ``CPUOffloadPolicy(pin_memory=True)``; Megatron-Core ``HybridDeviceOptimizer``
    ``pin_cpu_grads`` / ``pin_cpu_params``); the optimizer states are ordinary host memory."""

    staging_copy: bool = False
    pin_memory: bool = True


@dataclass(frozen=True)
class FrameworkProfile:
    """One training stack: its parts, its allocator overhead and its schedules."""

    name: str
    weights: WeightsPart
    gradients: GradientsPart
    optimizer: OptimizerPart
    kernels: KernelsPart
    buffers: BuffersPart
    offload: OffloadPart
    fragmentation: float
    selective_every_other_matmul: bool = False
    overlaps_parameter_gather: bool = False
    overlaps_pipeline_sends: bool = False
    syncs_by_broadcast: bool = False
    pipelines_summed_gradient_scatter: bool = False
    """Under ``tp_comm_overlap``, whether the backward's reduce-scatter of a summed input
    gradient is pipelined too: Transformer Engine's fused QKV and FC1 linears give one dgrad
    GEMM, and its userbuffers overlap the reduce-scatter with the wgrad GEMM (Megatron-Core);
    PyTorch's async TP leaves it exposed (``time.SUMMED_GRADIENT_SCATTERS``)."""
    version: str | None = None

    # flat views the vectorised formulas gather per layout (:func:`profile_values`)
    @property
    def attention_kernel(self) -> str:
        return self.kernels.attention

    @property
    def fused_kernels(self) -> bool:
        return self.kernels.fused

    @property
    def gradient_reduce_bytes(self) -> float:
        return DTYPE_BYTES[self.resolved_dtype(self.gradients.reduce_dtype)]

    @property
    def persistent_gradients(self) -> bool:
        return self.gradients.persistent

    @property
    def swiglu_bytes_per_element(self) -> float:
        return self.kernels.swiglu_bytes_per_element

    @property
    def rmsnorm_input_bytes(self) -> float:
        return self.kernels.norm_input_bytes

    @property
    def rmsnorm_output_bytes(self) -> float:
        return self.kernels.norm_output_bytes

    @property
    def repeats_kv_heads(self) -> bool:
        return self.kernels.repeat_kv

    @property
    def logit_bytes_per_element(self) -> float:
        return LOSS_BYTES_PER_LOGIT[self.kernels.loss]

    @property
    def loss_is_parallel(self) -> bool:
        return self.kernels.loss_parallel

    @property
    def megatron_vocab_parallel_loss(self) -> bool:
        """Megatron's vocab-parallel cross-entropy, whose ops run one by one on the fp32 logits
        (``traffic.VOCAB_PARALLEL_LOSS_BYTES_PER_LOGIT``)."""
        return self.kernels.loss == "vocab-parallel"

    @property
    def tensor_parallel_logit_bytes_per_element(self) -> float:
        """Bytes per local logit when the logits are split over ``tp > 1`` ranks: PyTorch's
        ``loss_parallel`` for the eager fp32 loss under DTensor
        (:data:`DTENSOR_LOSS_PARALLEL_BYTES_PER_LOGIT`), else as with one rank."""
        kernels = self.kernels
        if (
            kernels.tensor_parallel == "dtensor"
            and kernels.loss_parallel
            and kernels.loss == "fp32"
        ):
            return DTENSOR_LOSS_PARALLEL_BYTES_PER_LOGIT
        return self.logit_bytes_per_element

    @property
    def saves_gathered_inputs(self) -> bool:
        return self.kernels.tensor_parallel == "dtensor"

    @property
    def softmax_bytes_per_score(self) -> float:
        return self.kernels.softmax_bytes_per_score

    @property
    def fuses_qkv_projection(self) -> bool:
        return self.kernels.fuses_qkv_projection

    @property
    def rotates_by_concatenation(self) -> bool:
        return self.kernels.rotates_by_concatenation

    @property
    def runs_transformers_modeling(self) -> bool:
        return self.kernels.runs_transformers_modeling

    def fp8_recipe_for(self, job_recipe: str) -> str:
        """The fp8 recipe a job's ``fp8_recipe`` runs on this stack: the job's, or for ``auto``
        the stack's own (``KernelsPart.fp8_recipe``)."""
        return self.kernels.fp8_recipe if job_recipe == "auto" else job_recipe

    def resolved_dtype(self, dtype: str) -> str:
        """A part's dtype with ``param`` replaced by the dtype of the tensor the optimizer updates."""
        return self.weights.optimizer_dtype if dtype == "param" else dtype

    def describe(self) -> dict[str, Any]:
        """The profile as JSON: its name, version and every part's fields, with ``param``
        dtypes resolved to the dtype they stand for."""
        parts: dict[str, dict[str, Any]] = {}
        for name in ("weights", "gradients", "optimizer", "kernels", "buffers", "offload"):
            part = getattr(self, name)
            parts[name] = {f.name: getattr(part, f.name) for f in fields(part)}
        for name, key in (
            ("gradients", "dtype"),
            ("gradients", "reduce_dtype"),
            ("optimizer", "states"),
        ):
            parts[name][key] = self.resolved_dtype(parts[name][key])
        return {"name": self.name, "version": self.version, "parts": parts}


_EAGER = KernelsPart()
_MEGATRON_KERNELS = KernelsPart(
    norm="fused",
    swiglu="fused",
    attention="cudnn",
    repeat_kv=False,
    loss="vocab-parallel",
    tensor_parallel="megatron",
    fused=True,
    softmax_bytes_per_score=2.0,
    fp8_recipe="delayed",
    caches_fp8_weights=True,
)
PRESETS: dict[str, FrameworkProfile] = {
    "megatron": FrameworkProfile(
        name="megatron",
        weights=WeightsPart(),
        gradients=GradientsPart(),
        optimizer=OptimizerPart(),
        kernels=_MEGATRON_KERNELS,
        buffers=BuffersPart(),
        offload=OffloadPart(),
        fragmentation=0.05,
        overlaps_parameter_gather=True,
        overlaps_pipeline_sends=True,
        pipelines_summed_gradient_scatter=True,
    ),
    "fsdp": FrameworkProfile(
        name="fsdp",
        weights=WeightsPart(residency="gathered"),
        gradients=GradientsPart(dtype="param", persistent=False, accumulation="unsharded"),
        optimizer=OptimizerPart(step_temporaries=1),
        kernels=_EAGER,
        buffers=BuffersPart(),
        offload=OffloadPart(),
        fragmentation=0.06,
        selective_every_other_matmul=True,
        overlaps_parameter_gather=True,
    ),
    "deepspeed": FrameworkProfile(
        name="deepspeed",
        weights=WeightsPart(),
        gradients=GradientsPart(dtype="bf16", reduce_dtype="bf16"),
        optimizer=OptimizerPart(),
        kernels=replace(_EAGER, runs_transformers_modeling=True, fp8_recipe="delayed"),
        buffers=BuffersPart(gradient_buckets="ipg", bucket_elements="hidden^2", bucket_count=2),
        offload=OffloadPart(staging_copy=True),
        fragmentation=0.08,
    ),
    "hf": FrameworkProfile(
        name="hf",
        weights=WeightsPart(param_dtype="fp32", master_weights="none"),
        gradients=GradientsPart(dtype="param", reduce_dtype="param", persistent=False),
        optimizer=OptimizerPart(step_temporaries=1),
        kernels=replace(
            _EAGER,
            norm="eager-fp32",
            fuses_qkv_projection=True,
            rotates_by_concatenation=True,
            fp8_recipe="delayed",
        ),
        buffers=BuffersPart(gradient_buckets="ddp"),
        offload=OffloadPart(staging_copy=True),
        fragmentation=0.08,
    ),
    "megatron-deepspeed": FrameworkProfile(
        name="megatron-deepspeed",
        weights=WeightsPart(),
        gradients=GradientsPart(sharding="none", compute_copy=True),
        optimizer=OptimizerPart(),
        kernels=KernelsPart(
            norm="fused",
            loss="vocab-parallel",
            tensor_parallel="megatron",
            softmax_bytes_per_score=2.0,
            fp8_recipe="delayed",
        ),
        buffers=BuffersPart(),
        offload=OffloadPart(staging_copy=True),
        fragmentation=0.08,
    ),
    "torchtitan": FrameworkProfile(
        name="torchtitan",
        weights=WeightsPart(residency="gathered"),
        gradients=GradientsPart(dtype="param", persistent=False),
        optimizer=OptimizerPart(step_temporaries=1),
        kernels=_EAGER,
        buffers=BuffersPart(),
        offload=OffloadPart(),
        fragmentation=0.06,
        selective_every_other_matmul=True,
        overlaps_parameter_gather=True,
    ),
    "internevo": FrameworkProfile(
        name="internevo",
        weights=WeightsPart(),
        gradients=GradientsPart(dtype="bf16", reduce_dtype="bf16"),
        optimizer=OptimizerPart(step_temporaries=1),
        kernels=replace(_MEGATRON_KERNELS, swiglu="eager", attention="flash2", loss="fused"),
        buffers=BuffersPart(),
        offload=OffloadPart(),
        fragmentation=0.05,
        syncs_by_broadcast=True,
    ),
}
"""The named stacks (module docstring). ``megatron-deepspeed`` is Megatron's model code with
DeepSpeed's engine: ZeRO-1 with the ``BF16_Optimizer`` (bf16 weights, fp32 master partition,
unsharded fp32 gradients beside the bf16 ones), Apex's fused RMSNorm, eager SwiGLU, repeated K/V
before FlashAttention-2 and the vocab-parallel loss. ``internevo`` is InternLM's InternEvo of
July 2023 (InternLM/InternEvo @ c18bec9, the code its ``doc/en/train_performance.md`` measured):
Megatron-style tensor parallelism with FlashAttention-2 (``FlashSelfAttention``), the fused
RMSNorm and the vocab-parallel ``FlashCrossEntropyLoss`` (FlashAttention's fused Triton
cross-entropy, so the ``fused`` loss), SwiGLU as eager ``silu(x) * y``
(``internlm/model/utils.py`` ``Silu``), and its hybrid ZeRO-1 (``hybrid_zero_optim.py``), which
reduces gradients bucket by bucket under the backward but broadcasts every rank's updated
parameters after the step and waits for all of them (``broadcast_params(overlap=False)``: one
``dist.broadcast`` per rank of the ``zero1`` group, queued one after another on the group's
communicator): the parameter synchronisation is never hidden, and a ``zero1`` group of every
data-parallel rank (its default, ``zero1 = -1``) pays one chain's fill per rank
(``comm.ring_steps``). Its gradient buckets are all-reduced over every data-parallel rank
whatever the ``zero1`` group (``_attach_reduction_hook``: ``reduce_rank = None``, so
``reduce_tensor`` calls ``dist.all_reduce``), in the model's bf16 (``reduce_tensor(...,
dtype=self.dtype)``, the dtype of the parameters the optimizer was built on); only the rank's
own shard is cast to fp32 for the step (``flat_fp32_avg_grads``). Both are
``syncs_by_broadcast``. It steps PyTorch's default ``torch.optim.AdamW``
(``train.py`` ``initialize_optimizer``: the ``foreach`` path and its state-sized temporary) and
splits its linears Megatron's way (``mtp`` mode). Allocator fragmentation as Megatron's (both run
PyTorch's caching allocator over contiguous buffers)."""

FRAMEWORK_CODES = tuple(PRESETS)
PROFILES = PRESETS
"""The presets by name (the speed model reads them through :func:`job_profiles`)."""


# --- torchtitan versions -----------------------------------------------------------------------

TORCHTITAN_RELEASES: dict[str, dt.date] = {
    "v0.1.0": dt.date(2025, 6, 17),
    "v0.2.0": dt.date(2025, 10, 17),
    "v0.2.1": dt.date(2025, 12, 26),
    "v0.2.2": dt.date(2026, 2, 20),
}
"""torchtitan's release tags and their commit dates (github.com/pytorch/torchtitan tags)."""
TORCHTITAN_COMPILED_LOSS = dt.date(2025, 4, 2)
"""torchtitan ``bbb1b616`` (PR #1033, merged 2025-04-02): ``build_cross_entropy_loss`` wraps the
loss in ``torch.compile`` when ``training.compile`` is on; before it the loss ran eagerly
("compiling loss function causes CUDA errors, turning off for now")."""


def torchtitan_date(version: str) -> dt.date:
    """A torchtitan version as the date of its code: a release tag (``v0.1.0``) or the date of
    the commit trained (``2025-04``, ``2025-04-02``)."""
    text = version.strip().lower()
    if text in TORCHTITAN_RELEASES:
        return TORCHTITAN_RELEASES[text]
    for pattern in ("%Y-%m-%d", "%Y-%m"):
        try:
            return dt.datetime.strptime(text, pattern).date()
        except ValueError:
            continue
    raise FrameworkError.of(
        "error.framework_version", value=shown(version), releases=", ".join(TORCHTITAN_RELEASES)
    )


# --- overrides ---------------------------------------------------------------------------------

PART_KEYS: dict[str, tuple[str, str, tuple[Any, ...] | type]] = {
    "param_dtype": ("weights", "param_dtype", ("bf16", "fp32")),
    "weights": ("weights", "residency", ("persistent", "gathered")),
    "master_weights": ("weights", "master_weights", ("fp32", "bf16", "none")),
    "gradients": ("gradients", "dtype", ("fp32", "bf16", "param")),
    "reduce_dtype": ("gradients", "reduce_dtype", ("fp32", "bf16", "param")),
    "gradient_sharding": ("gradients", "sharding", ("stage", "none")),
    "persistent_gradients": ("gradients", "persistent", bool),
    "compute_gradients": ("gradients", "compute_copy", bool),
    "gradient_accumulation": ("gradients", "accumulation", ("sharded", "unsharded")),
    "optimizer_states": ("optimizer", "states", ("param", "fp32", "bf16")),
    "optimizer_step_temporaries": ("optimizer", "step_temporaries", int),
    "norm": ("kernels", "norm", ("fused", "eager", "eager-fp32")),
    "swiglu": ("kernels", "swiglu", ("fused", "eager")),
    "attention": ("kernels", "attention", ("flash2", "cudnn", "eager")),
    "repeat_kv": ("kernels", "repeat_kv", bool),
    "loss": ("kernels", "loss", tuple(LOSS_BYTES_PER_LOGIT)),
    "loss_parallel": ("kernels", "loss_parallel", bool),
    "tensor_parallel": ("kernels", "tensor_parallel", ("megatron", "dtensor")),
    "fused_kernels": ("kernels", "fused", bool),
    "gradient_buckets": ("buffers", "gradient_buckets", ("none", "ddp", "ipg")),
    "bucket_elements": ("buffers", "bucket_elements", float),
    "bucket_count": ("buffers", "bucket_count", int),
    "offload_staging": ("offload", "staging_copy", bool),
    "pin_memory": ("offload", "pin_memory", bool),
}
"""Scenario keys of a ``framework`` mapping: key -> (part, field, accepted values or type).
``bucket_elements`` is a number of elements or ``hidden^2``."""
FRAMEWORK_KEYS = ("base", "version", *PART_KEYS)


def parse_framework(value: Any) -> tuple[str, tuple[tuple[str, Any], ...]]:
    """A scenario's ``framework``: a preset name (or ``auto``), or a mapping with ``base`` and
    part overrides. Returns the base and the validated overrides (``version`` among them)."""
    if isinstance(value, str):
        return _base(value), ()
    if not isinstance(value, Mapping):
        raise FrameworkError.of(
            "error.framework_mapping",
            names=", ".join(("auto", *FRAMEWORK_CODES)),
            accepted=", ".join(FRAMEWORK_KEYS),
        )
    from gpuplan.limits import check_known_keys

    check_known_keys(value, FRAMEWORK_KEYS, "framework.", FrameworkError)
    base = _base(value.get("base", "auto"), "framework.base")
    overrides = tuple(
        (key, check_part_value(key, value[key])) for key in FRAMEWORK_KEYS[2:] if key in value
    )
    if "version" in value:
        if base != "torchtitan":
            raise FrameworkError.of("error.framework_version_base", base=base)
        torchtitan_date(str(value["version"]))
        overrides = (("version", str(value["version"])), *overrides)
    return base, overrides


def _base(value: Any, where: str = "framework") -> str:
    text = str(value).strip().lower()
    accepted = ("auto", *FRAMEWORK_CODES)
    if text not in accepted:
        raise FrameworkError.of(
            "error.not_one_of", field=where, value=shown(value), accepted=", ".join(accepted)
        )
    return text


def check_part_value(key: str, value: Any) -> Any:
    """``value`` for part key ``key`` (:data:`PART_KEYS`), or a one-line error naming both."""
    if key not in PART_KEYS:
        raise FrameworkError.of(
            "error.framework_part_key", field=f"framework.{key}", accepted=", ".join(FRAMEWORK_KEYS)
        )
    accepted = PART_KEYS[key][2]
    where = f"framework.{key}"
    if accepted is bool:
        if not isinstance(value, bool):
            raise FrameworkError.of("error.true_or_false", field=where, value=shown(value))
        return value
    if accepted is int:
        least = 0 if key == "optimizer_step_temporaries" else 1
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise FrameworkError.of(
                "error.whole_number_at_least", field=where, least=least, value=shown(value)
            )
        return value
    if accepted is float:
        if isinstance(value, str) and value.strip().lower() == "hidden^2":
            return "hidden^2"
        if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
            raise FrameworkError.of("error.framework_elements", field=where, value=shown(value))
        return float(value)
    assert isinstance(accepted, tuple)
    text = str(value).strip().lower()
    if text not in accepted:
        raise FrameworkError.of(
            "error.not_one_of", field=where, value=shown(value), accepted=", ".join(accepted)
        )
    return text


def _override(profile: FrameworkProfile, key: str, value: Any) -> FrameworkProfile:
    part_name, field_name, _ = PART_KEYS[key]
    part = replace(getattr(profile, part_name), **{field_name: value})
    return replace(profile, **{part_name: part})


# --- resolution --------------------------------------------------------------------------------


def resolve_profile(name: str, job: TrainingJob | None = None) -> FrameworkProfile:
    """Preset ``name`` as ``job`` trains it: first the precision and method (module docstring),
    then the stack's version (torchtitan compiles the loss from 2025-04-02 when the model is
    compiled), then the scenario's ``fused_loss`` and ``attention_kernel``, last the scenario's
    part overrides, which win."""
    profile = PRESETS[name]
    if job is None:
        return profile
    weights, gradients = profile.weights, profile.gradients
    if job.precision == "bf16-pure":
        weights = replace(weights, param_dtype="bf16", master_weights="none")
        gradients = replace(gradients, dtype="bf16", reduce_dtype="bf16")
    elif job.precision == "fp32":
        weights = replace(weights, param_dtype="fp32", master_weights="none")
        gradients = replace(gradients, dtype="fp32", reduce_dtype="fp32")
    elif job.is_adapter:
        weights = replace(weights, param_dtype="fp32", master_weights="none")
        gradients = replace(gradients, dtype="fp32")
    profile = replace(profile, weights=weights, gradients=gradients)
    overrides = dict(job.framework_parts)
    if name == "torchtitan":
        version = overrides.get("version")
        profile = replace(profile, version=version)
        compiles_loss = version is None or torchtitan_date(version) >= TORCHTITAN_COMPILED_LOSS
        if job.compile and compiles_loss:
            profile = _override(profile, "loss", "compiled")
    if job.fused_loss:
        profile = _override(profile, "loss", "chunked")
    if job.attention_kernel:
        profile = _override(profile, "attention", job.attention_kernel)
    for key, value in job.framework_parts:
        if key != "version":
            profile = _override(profile, key, value)
    return profile


ZERO_STAGES_OF_PRESET = {"megatron-deepspeed": (0, 1)}
"""ZeRO stages a preset runs, where fewer than all: DeepSpeed picks the ``BF16_Optimizer`` only
for ZeRO-0/1 (``engine.py`` ``_do_optimizer_sanity_check``), its ZeRO-2/3 optimizers are the
``deepspeed`` preset's."""


def zero_stages(framework: str) -> tuple[int, ...]:
    """ZeRO stages a layout of ``framework`` may take (all of 0-3 unless
    :data:`ZERO_STAGES_OF_PRESET` says otherwise)."""
    return ZERO_STAGES_OF_PRESET.get(framework, (0, 1, 2, 3))


@cached_by_identity(maxsize=64)
def job_profiles(job: TrainingJob | None) -> tuple[FrameworkProfile, ...]:
    """Every preset as ``job`` trains it, indexed like :data:`FRAMEWORK_CODES` (once per job:
    the search asks for them per machine and per layout block)."""
    return tuple(resolve_profile(name, job) for name in FRAMEWORK_CODES)


def resolve_framework_codes(
    framework: str,
    tp: npt.NDArray[np.int64],
    pp: npt.NDArray[np.int64],
    zero: npt.NDArray[np.int64],
) -> npt.NDArray[np.int64]:
    """Index into FRAMEWORK_CODES per layout. ``auto`` picks the stack a practitioner would:
    Megatron-LM when tensor or pipeline parallel, FSDP for ZeRO-3, DeepSpeed for ZeRO-1/2,
    and plain PyTorch/Hugging Face otherwise."""
    if framework != "auto":
        return np.full(np.broadcast(tp, pp, zero).shape, FRAMEWORK_CODES.index(framework))
    return np.where(
        tp * pp > 1,
        FRAMEWORK_CODES.index("megatron"),
        np.where(
            zero == 3,
            FRAMEWORK_CODES.index("fsdp"),
            np.where(zero >= 1, FRAMEWORK_CODES.index("deepspeed"), FRAMEWORK_CODES.index("hf")),
        ),
    )


def profile_values(
    codes: npt.NDArray[np.int64],
    attribute: str,
    profiles: Sequence[FrameworkProfile] | None = None,
) -> npt.NDArray[np.float64]:
    """One profile attribute per layout, gathered from the framework codes; ``profiles`` are
    the presets as the job trains them (:func:`job_profiles`), the bare presets by default."""
    return np.asarray(_attribute_table(profiles or job_profiles(None), attribute)[codes])


@cached_by_identity(maxsize=512)
def _attribute_table(
    profiles: Sequence[FrameworkProfile], attribute: str
) -> npt.NDArray[np.float64]:
    """``attribute`` of each profile, indexed like :data:`FRAMEWORK_CODES`: once per profile set
    (:func:`job_profiles` returns the same tuple for a job, so once per job, not per machine)."""
    return np.array([float(getattr(profile, attribute)) for profile in profiles])


def describe_framework(job: TrainingJob, code: int) -> dict[str, Any]:
    """The profile a layout used, as JSON: the preset, the scenario's base and overrides, and
    every part's fields."""
    profile = resolve_profile(FRAMEWORK_CODES[code], job)
    return {
        **profile.describe(),
        "base": job.framework,
        "overrides": {key: value for key, value in job.framework_parts},
    }
