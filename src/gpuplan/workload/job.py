"""TrainingJob: what is trained, how, and on how many tokens.

The job is the part of a scenario that does not depend on the machine or the parallel
layout: the model, the training method (full, LoRA, QLoRA, freeze), precision, optimizer,
framework profile, sequence length, batch and the token budget.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpuplan.errors import InputError
from gpuplan.estimate.frameworks import FRAMEWORK_CODES, check_part_value, torchtitan_date
from gpuplan.limits import shown
from gpuplan.workload.model import ModelSpec

METHODS = ("full", "lora", "qlora", "freeze")
PRECISIONS = ("bf16", "fp16", "fp8", "fp32", "bf16-pure")
"""``bf16``/``fp16``: mixed precision with fp32 master weights; ``bf16-pure``: weights, gradients
and optimizer states all in bf16 (litgpt ``bf16-true``, torchtune's default); ``fp8``: fp8 matmuls
with bf16 weights and fp32 master weights (Transformer Engine)."""
OPTIMIZERS = ("adamw", "adamw-8bit", "sgd", "adafactor")
FRAMEWORKS = ("auto", *FRAMEWORK_CODES)
"""``auto`` or a preset of ``estimate/frameworks.py``."""
LORA_TARGET_SETS = {
    "attention": ("q_proj", "k_proj", "v_proj", "o_proj"),
    "all-linear": ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"),
    "q,v": ("q_proj", "v_proj"),
}
LINEAR_MODULES = LORA_TARGET_SETS["all-linear"]
QUANTIZERS = ("bitsandbytes", "bitsandbytes-0.42")
"""QLoRA's 4-bit kernels. ``bitsandbytes``: 0.43.2 and later, as PEFT and transformers load
them (``BitsAndBytesConfig``: the output head stays bf16, weights quantized from the load dtype);
``bitsandbytes-0.42``: up to 0.43.1 under Lightning's ``BitsandbytesPrecision``, litgpt 0.4's
path (it pins 0.42): every ``nn.Linear``, the head included, is quantized from fp16, and each
4-bit layer keeps its input on the autograd context until the graph is freed
(``estimate/memory.py``)."""


class JobError(InputError):
    """A training job whose fields contradict each other or take unknown values."""


def _choice(field_name: str, value: str, accepted: tuple[str, ...]) -> str:
    text = str(value).strip().lower()
    if text not in accepted:
        raise JobError.of(
            "error.not_one_of", field=field_name, value=repr(value), accepted=", ".join(accepted)
        )
    return text


FP8_RECIPES = ("auto", "delayed", "tensorwise", "rowwise", "mx", "blockwise")
"""``auto``: the recipe of the job's stack (``frameworks.KernelsPart.fp8_recipe``); or one of
``traffic.FP8_CAST_BYTES``."""
ATTENTION_KERNELS = ("flash2", "cudnn", "eager")
MOE_DISPATCHES = ("all_to_all", "deepep")
MOE_DISPATCH_DTYPES = ("bf16", "fp8")
MOE_ROUTINGS = ("learned", "round_robin")


@dataclass(frozen=True)
class MoEOptions:
    """How a mixture-of-experts stack moves tokens to their experts (``estimate/moe.py``):
    ``all_to_all`` (NCCL all-to-all of every routed copy) or ``deepep`` (DeepSeek's DeepEP: one
    copy per destination node over the network, forwarded over NVLink inside it); the dtype of
    the forward dispatch; the load of the busiest expert over the mean (1 = balanced); and
    which experts a token reaches: ``learned`` (a trained router: its ``k`` experts anywhere,
    within the router's group limit) or ``round_robin`` (a benchmark's fixed balanced gate that
    sends token ``t`` to experts ``t k ... t k + k - 1``, NeMo AutoModel ``FakeBalancedGate``);
    and whether one micro-batch's all-to-alls run under another micro-batch's compute
    (``a2a_overlap``: DeepSeek-V3's DualPipe, Megatron-Core ``--overlap-moe-expert-parallel-comm``)."""

    dispatch: str = "all_to_all"
    dispatch_dtype: str = "bf16"
    load_imbalance: float = 1.0
    routing: str = "learned"
    a2a_overlap: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "dispatch", _choice("moe.dispatch", self.dispatch, MOE_DISPATCHES))
        object.__setattr__(
            self,
            "dispatch_dtype",
            _choice("moe.dispatch_dtype", self.dispatch_dtype, MOE_DISPATCH_DTYPES),
        )
        object.__setattr__(self, "routing", _choice("moe.routing", self.routing, MOE_ROUTINGS))
        if not isinstance(self.a2a_overlap, bool):
            raise JobError.of(
                "error.true_or_false", field="moe.a2a_overlap", value=repr(self.a2a_overlap)
            )
        if not self.load_imbalance >= 1.0:
            raise JobError.of("error.job_load_imbalance", value=repr(self.load_imbalance))


@dataclass(frozen=True)
class LoraConfig:
    """LoRA adapters (Hu et al. 2021): rank ``r`` matrices A (d_in x r) and B (r x d_out) on
    each target module. ``double_quant`` applies to QLoRA's quantization constants
    (Dettmers et al. 2023, section 3)."""

    rank: int = 16
    alpha: float = 32
    targets: tuple[str, ...] = LORA_TARGET_SETS["all-linear"]
    dropout: float = 0.0
    double_quant: bool = True
    quantizer: str = "bitsandbytes"
    """QLoRA's 4-bit kernels, one of ``QUANTIZERS``."""

    @staticmethod
    def parse_targets(value: str | list[str] | tuple[str, ...]) -> tuple[str, ...]:
        """``attention``, ``all-linear``, ``q,v`` or a list of module names (q_proj, gate_proj, ...)."""
        if isinstance(value, str):
            key = value.strip().lower()
            if key in LORA_TARGET_SETS:
                return LORA_TARGET_SETS[key]
            names = [part.strip() for part in key.split(",") if part.strip()]
        elif isinstance(value, list | tuple):
            names = [str(part).strip().lower() for part in value]
        else:
            names = []
        aliases = {
            "q": "q_proj",
            "k": "k_proj",
            "v": "v_proj",
            "o": "o_proj",
            "gate": "gate_proj",
            "up": "up_proj",
            "down": "down_proj",
        }
        targets = tuple(aliases.get(name, name) for name in names)
        unknown = [name for name in targets if name not in LINEAR_MODULES]
        if unknown or not targets:
            raise JobError.of(
                "error.job_lora_targets", value=shown(value), modules=", ".join(LINEAR_MODULES)
            )
        return targets


@dataclass(frozen=True)
class TrainingJob:
    """One training run's workload. ``global_batch`` is in sequences per optimizer step."""

    model: ModelSpec
    method: str = "full"
    precision: str = "bf16"
    optimizer: str = "adamw"
    framework: str = "auto"
    seq_len: int = 4096
    document_tokens: int | None = None
    """Mean tokens of the documents packed into each sequence, where attention is masked to
    each document (variable-length FlashAttention, Transformer Engine's THD format, a
    document-causal mask); None: one document fills the sequence."""
    global_batch: int = 256
    tokens: int = 0
    lora: LoraConfig = field(default_factory=LoraConfig)
    trainable_layers: int | None = None
    fused_loss: bool = False
    compile: bool = False
    moe: MoEOptions = field(default_factory=MoEOptions)
    fp8_recipe: str = "auto"
    fp8_all_gather: bool = False
    """ZeRO/FSDP parameter gathers move the linear weights in fp8, cast on each rank's shard
    before the all-gather (torchao ``enable_fsdp_float8_all_gather``; Megatron
    ``--fp8-param-gather``); no effect without ZeRO."""
    tp_comm_overlap: bool = False
    fused_kernels: bool = False
    attention_kernel: str | None = None
    framework_parts: tuple[tuple[str, Any], ...] = ()
    """The scenario's part overrides of the framework preset (``frameworks.PART_KEYS``, and
    ``version`` for torchtitan), as ``(key, value)`` pairs."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "fp8_recipe", _choice("fp8_recipe", self.fp8_recipe, FP8_RECIPES))
        if self.attention_kernel is not None:
            object.__setattr__(
                self,
                "attention_kernel",
                _choice("attention_kernel", self.attention_kernel, ATTENTION_KERNELS),
            )
        object.__setattr__(self, "method", _choice("method", self.method, METHODS))
        object.__setattr__(
            self, "precision", _choice("precision", self.precision, (*PRECISIONS, "bf16-true"))
        )
        if self.precision == "bf16-true":
            object.__setattr__(self, "precision", "bf16-pure")
        object.__setattr__(self, "optimizer", _choice("optimizer", self.optimizer, OPTIMIZERS))
        object.__setattr__(self, "framework", _choice("framework", self.framework, FRAMEWORKS))
        self._check_framework_parts()
        if self.seq_len < 1:
            raise JobError.of("error.job_seq_len", value=self.seq_len)
        if self.global_batch < 1:
            raise JobError.of("error.job_global_batch", value=self.global_batch)
        if self.document_tokens is not None and not 1 <= self.document_tokens <= self.seq_len:
            raise JobError.of(
                "error.job_document_tokens", seq_len=self.seq_len, value=self.document_tokens
            )
        if self.tokens < 0:
            raise JobError.of("error.job_tokens", value=self.tokens)
        if self.method in ("lora", "qlora") and self.lora.rank < 1:
            raise JobError.of(
                "error.positive_whole_number", field="lora.rank", value=self.lora.rank
            )
        if self.fp8_all_gather and self.precision != "fp8":
            raise JobError.of("error.job_fp8_all_gather", value=self.precision)
        if self.method == "qlora" and self.precision in ("fp32", "fp8"):
            raise JobError.of("error.job_qlora_precision", value=self.precision)
        if self.method == "freeze":
            layers = self.trainable_layers
            if layers is None or not 1 <= layers <= self.model.num_layers:
                raise JobError.of(
                    "error.job_freeze_layers", layers=self.model.num_layers, value=layers
                )

    def _check_framework_parts(self) -> None:
        """Validate the part overrides and keep the scenario's own loss and attention keys in
        step with them: ``fused_loss`` is a ``fused`` or ``chunked`` loss, ``attention_kernel``
        the ``attention`` part."""
        parts = dict(self.framework_parts)
        for key, value in self.framework_parts:
            if key == "version":
                if self.framework != "torchtitan":
                    raise JobError.of("error.framework_version_base", base=self.framework)
                torchtitan_date(str(value))
            else:
                check_part_value(key, value)
        loss = parts.get("loss")
        if loss is not None:
            if self.fused_loss and loss not in ("fused", "chunked"):
                raise JobError.of("error.job_fused_loss", value=loss)
            object.__setattr__(self, "fused_loss", loss in ("fused", "chunked"))
        attention = parts.get("attention")
        if attention is not None:
            if self.attention_kernel is not None and self.attention_kernel != attention:
                raise JobError.of(
                    "error.job_attention", value=attention, kernel=self.attention_kernel
                )
            object.__setattr__(self, "attention_kernel", attention)

    @property
    def is_adapter(self) -> bool:
        return self.method in ("lora", "qlora")

    @property
    def global_batch_tokens(self) -> int:
        return self.global_batch * self.seq_len

    @property
    def mixed_precision(self) -> bool:
        """Whether an fp32 master copy of the trained weights is kept."""
        return self.precision in ("bf16", "fp16", "fp8")
