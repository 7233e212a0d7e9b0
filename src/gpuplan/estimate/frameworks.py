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

The per-framework activation choices: Megatron's fused SwiGLU keeps 6 bytes per FFN element
(the fc1 output pair and the fc2 input), eager PyTorch (torchtitan without compile, Hugging
Face) keeps 8 (gate, SiLU output, up, product); Hugging Face's eager RMSNorm keeps an fp32
copy of its input; Megatron's vocab-parallel cross-entropy keeps the bf16 logits and one fp32
softmax (6 bytes per logit), the eager path bf16 logits, their fp32 upcast and the fp32
gradient (10 bytes per logit).
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
    norm_fp32_copy: bool
    logit_bytes_per_element: float
    gradient_bucket_elements: float
    fragmentation: float
    selective_every_other_matmul: bool = False
    persistent_gradients: bool = False


PROFILES: dict[str, FrameworkProfile] = {
    "megatron": FrameworkProfile(
        "megatron", 2, 4, 4, 6, False, 6, 0, 0.05, persistent_gradients=True
    ),
    "fsdp": FrameworkProfile(
        "fsdp", 0, 4, 4, 8, False, 10, 0, 0.06, selective_every_other_matmul=True
    ),
    "deepspeed": FrameworkProfile(
        "deepspeed", 2, 2, 4, 8, False, 10, 0, 0.08, persistent_gradients=True
    ),
    "hf": FrameworkProfile("hf", 4, 4, 0, 8, True, 10, 25e6, 0.08),
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
