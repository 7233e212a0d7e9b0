"""Framework profiles: what each training stack keeps in GPU memory, and how it overlaps work.

Model-state bytes per trained parameter under mixed precision (bf16/fp16 compute, fp32 master):

========== ================= ========================== =====================================
framework  compute weights   gradients                  master + optimizer
========== ================= ========================== =====================================
megatron   2 (bf16)          4 (fp32 grad buffer)       4 + 8, sharded by the distributed optimizer
fsdp       0 (gathered)      4 (fp32, sharded)          4 + 8 (the fp32 sharded parameter is the master)
deepspeed  2 (bf16)          2 (bf16; ZeRO-2 shards)    4 + 8, sharded from ZeRO-1
hf         4 (fp32 + AMP)    4 (fp32)                   0 + 8 (the fp32 weights are the master)
========== ================= ========================== =====================================

Sources: Megatron-LM ``megatron/training/theoretical_memory_usage.py`` (18 bytes/param, or
6 + 12/d with the distributed optimizer); torchtitan ``parallelize_llama.py`` (FSDP2 with
``MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=fp32)`` over fp32 sharded parameters);
Rajbhandari et al. 2020 (ZeRO, section 5: 2 + 2 + 12 bytes, stages 1-3); Hugging Face Trainer
with ``bf16=True`` runs ``torch.autocast`` over fp32 weights.

The per-framework activation choices, per element of the tensor (bytes):

- RMSNorm: Megatron's fused (Transformer Engine / Apex) kernel keeps its bf16 input (2); the
  eager kernels upcast first and keep the fp32 input (4), plus the normalised value when the
  norm weight trains: bf16 in torchtitan (``type_as(x) * weight``, 2) and Hugging Face
  (``weight * x.to(dtype)``, 2), fp32 in torchtune and litgpt (4, which the ``hf`` profile of
  the single-process eager stacks takes). LayerNorm is
  ``torch.native_layer_norm`` everywhere and keeps its bf16 input.
- Grouped-query attention: the eager stacks repeat K and V to every query head before
  ``scaled_dot_product_attention`` (torchtitan ``repeat_kv``, Hugging Face ``repeat_kv``,
  torchtune and litgpt ``expand``), so the attention kernel keeps full-width K and V;
  Megatron's fused attention keeps the grouped K and V.
- SwiGLU: Megatron's fused kernel keeps 6 bytes per FFN element (the fc1 output pair and the
  fc2 input), eager PyTorch 8 (gate, SiLU output, up, product).
- Loss: Megatron's vocab-parallel cross-entropy keeps the bf16 logits and one fp32 softmax
  (6 bytes per logit). The eager path upcasts the logits to fp32 and keeps the fp32 log-softmax;
  its backward holds that, the fp32 gradient from the loss and the fp32 gradient of the
  log-softmax at once (12 bytes per logit; torchtitan and torchtune free the bf16 logits before
  backward, ``del pred`` / ``del logits``).

- Attention softmax without flash attention: Megatron's fused ``scaled_masked_softmax`` keeps its
  bf16 output (2 bytes per score); the eager PyTorch stacks upcast and keep the fp32 softmax (4)
  and the bf16 copy the value product takes.
- Fused Q/K/V projection: litgpt projects Q, K and V with one ``attn`` linear layer and rotates
  views of its output and builds Q and K with ``torch.cat`` (``litgpt/model.py``
  ``CausalSelfAttention.forward``), so the ``hf`` profile, validated on litgpt, keeps that buffer
  for multi-head models and a contiguous copy of the attention output.
- ``deepspeed`` runs the transformers modelling code (Hugging Face Trainer or Accelerate with
  DeepSpeed), whose per-family kernels ``memory.activation_kernels`` applies.

Gradient accumulation under FSDP skips the reduce-scatter until the last micro-batch
(``FullyShardedDataParallel.no_sync``, FSDP2 ``set_requires_gradient_sync(False)``; Lightning
Fabric's ``no_backward_sync`` and Hugging Face Accelerate's ``accumulate`` call it), so each rank
holds the whole model's gradients unsharded in the compute dtype while it accumulates (PyTorch
``no_sync`` docstring: "gradients are accumulated ... in unsharded form").

Measured for litgpt 0.4.12 on the CPU with ``torch.autograd.graph.saved_tensors_hooks``
(every saved tensor of one layer, by op): full fine-tuning keeps ``28 h + 8 F`` bytes per token
per layer for a grouped-query Llama, which this table gives exactly.

Overlap of the sharded optimizer's parameter all-gather: Megatron-Core's distributed optimizer
gathers the updated parameters bucket by bucket under the next step's forward pass
(``--overlap-param-gather``, on in NeMo's and Megatron-LM's published configurations) and FSDP
prefetches each layer's parameters during the previous layer's forward pass
(``forward_prefetch``; FSDP2 prefetches one layer ahead by default). DeepSpeed's ZeRO-1/2
gathers them at the end of ``step()``, after compute, so that gather is exposed; its
``overlap_comm`` overlaps the gradient reduction only.

Fused kernels: Megatron-Core runs Transformer Engine's (or Apex's) fused norms, SwiGLU, RoPE and
vocab-parallel cross-entropy (``megatron/core/fusions``); the PyTorch stacks run the eager ops
unless compiled (``traffic.py`` counts the bytes of each).

Pipeline sends: Megatron-Core's interleaved 1F1B schedule posts each chunk's send and receive
asynchronously and computes the next chunk meanwhile (``overlap_p2p_comm``, set with a virtual
pipeline in ``megatron/core/pipeline_parallel/schedules.py`` and NeMo's configurations).

Attention kernel: Transformer Engine's ``DotProductAttention`` picks cuDNN's fused attention on
Hopper and later (``transformer_engine/pytorch/attention``, backend selection); the PyTorch stacks
call ``scaled_dot_product_attention``, whose flash backend is FlashAttention-2
(``kernels.attention_share_of_peak`` has both).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FRAMEWORK_CODES = ("megatron", "fsdp", "deepspeed", "hf")


@dataclass(frozen=True)
class FrameworkProfile:
    """Memory behaviour of one training stack; see the module docstring for the sources."""

    name: str
    compute_weight_bytes: float
    gradient_bytes: float
    master_bytes: float
    swiglu_bytes_per_element: float
    rmsnorm_input_bytes: float
    rmsnorm_output_bytes: float
    repeats_kv_heads: bool
    logit_bytes_per_element: float
    gradient_bucket_elements: float
    fragmentation: float
    selective_every_other_matmul: bool = False
    persistent_gradients: bool = False
    accumulates_unsharded_gradients: bool = False
    overlaps_parameter_gather: bool = False
    fused_kernels: bool = False
    attention_kernel: str = "flash2"
    overlaps_pipeline_sends: bool = False
    softmax_bytes_per_score: float = 4.0
    fuses_qkv_projection: bool = False
    rotates_by_concatenation: bool = False
    runs_transformers_modeling: bool = False


PROFILES: dict[str, FrameworkProfile] = {
    "megatron": FrameworkProfile(
        name="megatron",
        compute_weight_bytes=2,
        gradient_bytes=4,
        master_bytes=4,
        swiglu_bytes_per_element=6,
        rmsnorm_input_bytes=2,
        rmsnorm_output_bytes=0,
        repeats_kv_heads=False,
        logit_bytes_per_element=6,
        gradient_bucket_elements=0,
        fragmentation=0.05,
        persistent_gradients=True,
        overlaps_parameter_gather=True,
        fused_kernels=True,
        attention_kernel="cudnn",
        overlaps_pipeline_sends=True,
        softmax_bytes_per_score=2.0,
    ),
    "fsdp": FrameworkProfile(
        name="fsdp",
        compute_weight_bytes=0,
        gradient_bytes=4,
        master_bytes=4,
        swiglu_bytes_per_element=8,
        rmsnorm_input_bytes=4,
        rmsnorm_output_bytes=2,
        repeats_kv_heads=True,
        logit_bytes_per_element=12,
        gradient_bucket_elements=0,
        fragmentation=0.06,
        selective_every_other_matmul=True,
        accumulates_unsharded_gradients=True,
        overlaps_parameter_gather=True,
    ),
    "deepspeed": FrameworkProfile(
        name="deepspeed",
        compute_weight_bytes=2,
        gradient_bytes=2,
        master_bytes=4,
        swiglu_bytes_per_element=8,
        rmsnorm_input_bytes=4,
        rmsnorm_output_bytes=2,
        repeats_kv_heads=True,
        logit_bytes_per_element=12,
        gradient_bucket_elements=0,
        fragmentation=0.08,
        persistent_gradients=True,
        runs_transformers_modeling=True,
    ),
    "hf": FrameworkProfile(
        name="hf",
        compute_weight_bytes=4,
        gradient_bytes=4,
        master_bytes=0,
        swiglu_bytes_per_element=8,
        rmsnorm_input_bytes=4,
        rmsnorm_output_bytes=4,
        repeats_kv_heads=True,
        logit_bytes_per_element=12,
        gradient_bucket_elements=25e6,
        fragmentation=0.08,
        fuses_qkv_projection=True,
        rotates_by_concatenation=True,
    ),
}


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


def profile_values(codes: npt.NDArray[np.int64], attribute: str) -> npt.NDArray[np.float64]:
    """One profile attribute per layout, gathered from the framework codes."""
    table = np.array([float(getattr(PROFILES[name], attribute)) for name in FRAMEWORK_CODES])
    return table[codes]
