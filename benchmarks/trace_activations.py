"""Trace what one transformer layer keeps for backward, tensor class by tensor class, and put
gpuplan's activation formula (``estimate.memory.activation_terms``) beside it.

    python benchmarks/trace_activations.py            # every case: bytes per token per layer
    python benchmarks/trace_activations.py --tensors  # and every saved tensor, by op
    python benchmarks/trace_activations.py --case llama-sdpa --markdown

Each case builds one decoder layer of a real architecture from its Hugging Face config with
``transformers`` itself (``transformers/models/<family>/modeling_<family>.py``, the installed
version is printed), or, for the stacks that run their own kernels, a layer written here to mirror
the implementation it names (Megatron-Core's fused kernels). The forward pass runs under
``torch.autograd.graph.saved_tensors_hooks``, which sees every tensor an op saves for backward;
each saved tensor is recorded with the module and the op that saved it and the module and the op
that produced it, and counted once per storage (views of one buffer share it). Parameters and the
tensors a model shares across its layers (rotary tables, masks) are left out; the layer's input
is in (a stacked layer's input is the previous layer's output).

Dense layers run under ``torch._subclasses.FakeTensorMode`` at their real widths: no memory is
used and nothing is computed. Mixture-of-experts layers run on real CPU tensors at reduced widths
because the tokens each expert receives depend on the router's output; the per-token totals do
not (every token reaches ``k`` experts).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from gpuplan.estimate.memory import ACTIVATION_CLASSES as TENSOR_CLASSES

# --- recording ----------------------------------------------------------------------------------


@dataclass
class SavedTensor:
    """One storage kept for backward: who saved it first, who produced it, its size."""

    saver: str
    saver_op: str
    producer: str
    producer_op: str
    shape: tuple[int, ...]
    dtype: torch.dtype
    nbytes: int
    tensor_class: str = ""


def _storage_key(tensor: torch.Tensor) -> int:
    return int(tensor.untyped_storage()._cdata)


@dataclass
class _Recorder:
    """Module path stack, the op being run, and the producer of every storage made in the pass."""

    path: list[str] = field(default_factory=lambda: [""])
    op: str = ""
    producers: dict[int, tuple[str, str]] = field(default_factory=dict)
    keep_alive: list[torch.Tensor] = field(default_factory=list)
    saved: dict[int, SavedTensor] = field(default_factory=dict)
    excluded: set[int] = field(default_factory=set)
    parameter_derived: set[int] = field(default_factory=set)

    def produced(self, result: Any, op: str, from_parameters: bool) -> None:
        for tensor in _tensors(result):
            key = _storage_key(tensor)
            if from_parameters:
                self.parameter_derived.add(key)
            if key not in self.producers:
                self.producers[key] = (self.path[-1], op)
                self.keep_alive.append(tensor)

    def pack(self, tensor: torch.Tensor) -> torch.Tensor:
        key = _storage_key(tensor)
        if key in self.excluded or key in self.parameter_derived or key in self.saved:
            return tensor
        producer, producer_op = self.producers.get(key, (self.path[-1], self.op))
        self.saved[key] = SavedTensor(
            saver=self.path[-1],
            saver_op=self.op,
            producer=producer,
            producer_op=producer_op,
            shape=tuple(tensor.shape),
            dtype=tensor.dtype,
            nbytes=int(tensor.untyped_storage().nbytes()),
        )
        self.keep_alive.append(tensor)
        return tensor


def _tensors(value: Any) -> Iterator[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _tensors(item)


class _OpNames(TorchFunctionMode):
    """Names the outermost torch function running (the op that saves) and records producers."""

    def __init__(self, recorder: _Recorder) -> None:
        super().__init__()
        self.recorder = recorder

    def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        name = getattr(func, "__name__", str(func))
        inputs = [t for t in _tensors(list(args) + list((kwargs or {}).values()))]
        from_parameters = bool(inputs) and all(
            _storage_key(t) in self.recorder.excluded
            or _storage_key(t) in self.recorder.parameter_derived
            for t in inputs
        )
        previous, self.recorder.op = self.recorder.op, name
        try:
            result = func(*args, **(kwargs or {}))
        finally:
            self.recorder.op = previous
        self.recorder.produced(result, name, from_parameters)
        return result


@contextlib.contextmanager
def _module_paths(module: torch.nn.Module, recorder: _Recorder) -> Iterator[None]:
    handles = []
    for name, child in module.named_modules():
        handles.append(
            child.register_forward_pre_hook(
                lambda _m, _a, name=name: recorder.path.append(name) and None
            )
        )
        handles.append(child.register_forward_hook(lambda _m, _a, _o: recorder.path.pop() and None))
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()


@contextlib.contextmanager
def _cuda_dropout() -> Iterator[None]:
    """``F.dropout`` as CUDA runs it: ``at::dropout`` calls the fused ``native_dropout`` on CUDA
    tensors (``aten/src/ATen/native/Dropout.cpp``, ``is_fused_kernel_acceptable``), which keeps a
    1-byte mask; on CPU it multiplies by a noise tensor of the input's dtype instead."""
    original = torch.nn.functional.dropout

    def dropout(input, p=0.5, training=True, inplace=False):  # type: ignore[no-untyped-def]
        if not training or p == 0.0:
            return input
        return torch.native_dropout(input, p, True)[0]

    torch.nn.functional.dropout = dropout
    try:
        yield
    finally:
        torch.nn.functional.dropout = original


def record_saved_tensors(
    layer: torch.nn.Module,
    run: Callable[[], Any],
    layer_input: torch.Tensor,
    shared: tuple[torch.Tensor, ...] = (),
) -> list[SavedTensor]:
    """Every storage ``run()`` saves for backward, once, without ``layer``'s parameters and
    buffers, the tensors computed from them alone (``1 + weight`` in Gemma's norm, a
    dequantized weight) and the ``shared`` tensors (rotary tables, masks)."""
    recorder = _Recorder()
    recorder.producers[_storage_key(layer_input)] = ("<input>", "layer input")
    recorder.excluded = {_storage_key(p) for p in layer.parameters()}
    recorder.excluded |= {_storage_key(b) for b in layer.buffers()}
    recorder.excluded |= {_storage_key(t) for t in shared}
    with (
        _module_paths(layer, recorder),
        torch.autograd.graph.saved_tensors_hooks(recorder.pack, lambda tensor: tensor),
        _OpNames(recorder),
        _cuda_dropout(),
    ):
        run()
    return list(recorder.saved.values())


# --- classes ------------------------------------------------------------------------------------

_NORM = re.compile(r"(layernorm|ln_\d|ln_attn|ln_mlp|_norm|^norm\d?)$")
_QK_NORM = re.compile(r"(^|\.)(q_norm|k_norm|q_layernorm|k_layernorm)$")
_MLA_LATENT = re.compile(r"(q_a_layernorm|kv_a_layernorm|q_b_proj|kv_b_proj)$")
_ATTENTION_INPUT = re.compile(
    r"(q_proj|k_proj|v_proj|qkv_proj|c_attn|query_key_value|q_a_proj|kv_a_proj_with_mqa|linear_qkv)$"
)
_ATTENTION_OUTPUT = re.compile(
    r"((self_attn|self_attention|attn|attention)\.(o_proj|dense|c_proj|linear_proj))$"
)
_MLP_INPUT = re.compile(r"(gate_proj|up_proj|gate_up_proj|fc1|c_fc|dense_h_to_4h|linear_fc1)$")
_DROPOUT = ("dropout", "native_dropout")
_ATTENTION = re.compile(r"(^|\.)(self_attn|self_attention|attn|attention)(\.|$)")


def classify(tensor: SavedTensor, sequence_length: int) -> str:
    """The formula's class of a saved tensor, from the module that saved it (the first saver)."""
    saver, leaf = tensor.saver, tensor.saver.rsplit(".", 1)[-1]
    if "lora_" in saver:
        return "lora"
    if _QK_NORM.search(saver):
        return "qk_norm"
    if _MLA_LATENT.search(saver):
        return "mla_latent"
    if _NORM.search(leaf):
        return "norm"
    if _ATTENTION_INPUT.search(saver):
        return "attention_input"
    if _ATTENTION_OUTPUT.search(saver):
        return "attention_output"
    if ".experts" in f".{saver}" or saver.endswith("experts"):
        return "shared_experts" if "shared_expert" in saver else "experts"
    if re.search(r"(^|\.)(gate|router)$", saver):
        return "mlp_input" if tensor.saver_op == "linear" else "router"
    if _MLP_INPUT.search(saver):
        return "mlp_input"
    square = len(tensor.shape) >= 2 and tensor.shape[-2:] == (sequence_length, sequence_length)
    if _ATTENTION.search(f".{saver}.") or saver in ("", "self_attn"):
        if tensor.saver_op in _DROPOUT and not square:
            return "dropout"
        if square:
            return "scores"
        if tensor.producer_op == "scaled_dot_product_attention" and tensor.dtype != torch.float32:
            return "attention_output"
        if tensor.saver_op == "scaled_dot_product_attention" and tensor.dtype == torch.float32:
            return "scores"
        if _ATTENTION.search(f".{saver}."):
            return "qkv"
    if tensor.saver_op in _DROPOUT:
        return "dropout"
    if re.search(r"(^|\.)(mlp|feed_forward|ffn)(\.|$)", saver) or saver.startswith("mlp"):
        return "mlp"
    return "other"


def bytes_per_token_by_class(saved: list[SavedTensor], tokens: int) -> dict[str, float]:
    totals: dict[str, float] = {}
    for tensor in saved:
        totals[tensor.tensor_class] = totals.get(tensor.tensor_class, 0.0) + tensor.nbytes / tokens
    return totals


# --- cases --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One layer of one architecture under one activation profile."""

    name: str
    config: dict[str, Any]
    attention: str = "sdpa"
    kernels: dict[str, Any] = field(default_factory=dict)
    """What the traced implementation does, as ``activation_terms`` takes it (``ActivationKernels``
    fields that differ from the Hugging Face eager defaults)."""
    batch: int = 1
    sequence: int = 320
    fake: bool = True
    dropout: bool = False
    padded: bool = False
    """Pass an explicit causal mask, as a padded batch does (transformers then repeats K and V
    for grouped-query attention instead of calling SDPA with ``enable_gqa``)."""
    spec: dict[str, Any] | None = None
    """gpuplan's config of the architecture, where it is not ``config`` itself."""
    overrides: dict[str, Any] = field(default_factory=dict)
    """``ActivationKernels`` fields where the traced code differs from gpuplan's ``deepspeed``
    profile (the one that runs transformers' modelling code), with the reason in ``notes``."""
    excluded: dict[str, str] = field(default_factory=dict)
    """Tensor classes left out of the comparison, with the reason."""
    notes: str = ""

    @property
    def tokens(self) -> int:
        return self.batch * self.sequence


def _scaled_moe(config: dict[str, Any]) -> dict[str, Any]:
    """A mixture-of-experts config at reduced widths (real tensors): the routing pattern and the
    number of experts per token are the model's. Mixtral's experts take ``intermediate_size``."""
    widths = {"hidden_size": 512, "intermediate_size": 1024}
    if "moe_intermediate_size" in config:
        widths["moe_intermediate_size"] = 256
    return {**config, **widths}


LLAMA_3_8B = {
    "model_type": "llama",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "num_hidden_layers": 1,
    "vocab_size": 128256,
    "rope_theta": 500000.0,
}
MISTRAL_7B = {**LLAMA_3_8B, "model_type": "mistral", "vocab_size": 32000}
QWEN2_7B = {
    "model_type": "qwen2",
    "hidden_size": 3584,
    "intermediate_size": 18944,
    "num_attention_heads": 28,
    "num_key_value_heads": 4,
    "num_hidden_layers": 1,
    "vocab_size": 152064,
}
QWEN3_8B = {
    "model_type": "qwen3",
    "hidden_size": 4096,
    "intermediate_size": 12288,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "num_hidden_layers": 1,
    "vocab_size": 151936,
}
GEMMA_7B = {
    "model_type": "gemma",
    "hidden_size": 3072,
    "intermediate_size": 24576,
    "num_attention_heads": 16,
    "num_key_value_heads": 16,
    "head_dim": 256,
    "num_hidden_layers": 1,
    "vocab_size": 256000,
    "hidden_activation": "gelu_pytorch_tanh",
}
GEMMA_2_9B = {
    "model_type": "gemma2",
    "hidden_size": 3584,
    "intermediate_size": 14336,
    "num_attention_heads": 16,
    "num_key_value_heads": 8,
    "head_dim": 256,
    "num_hidden_layers": 1,
    "vocab_size": 256000,
    "sliding_window": 4096,
    "layer_types": ["full_attention"],
}
PHI_2 = {
    "model_type": "phi",
    "hidden_size": 2560,
    "intermediate_size": 10240,
    "num_attention_heads": 32,
    "num_hidden_layers": 1,
    "vocab_size": 51200,
    "partial_rotary_factor": 0.4,
}
PHI_3_MINI = {
    "model_type": "phi3",
    "hidden_size": 3072,
    "intermediate_size": 8192,
    "num_attention_heads": 32,
    "num_key_value_heads": 32,
    "num_hidden_layers": 1,
    "vocab_size": 32064,
}
GPT2_MEDIUM = {
    "model_type": "gpt2",
    "n_embd": 1024,
    "n_head": 16,
    "n_layer": 1,
    "n_positions": 1024,
    "vocab_size": 50257,
}
FALCON_7B = {
    "model_type": "falcon",
    "hidden_size": 4544,
    "num_attention_heads": 71,
    "num_hidden_layers": 1,
    "multi_query": True,
    "new_decoder_architecture": False,
    "parallel_attn": True,
    "bias": False,
    "vocab_size": 65024,
}
MIXTRAL_8X7B = {
    "model_type": "mixtral",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "num_hidden_layers": 1,
    "num_local_experts": 8,
    "num_experts_per_tok": 2,
    "vocab_size": 32000,
}
QWEN3_30B_A3B = {
    "model_type": "qwen3_moe",
    "hidden_size": 2048,
    "intermediate_size": 6144,
    "moe_intermediate_size": 768,
    "num_attention_heads": 32,
    "num_key_value_heads": 4,
    "head_dim": 128,
    "num_hidden_layers": 1,
    "num_experts": 128,
    "num_experts_per_tok": 8,
    "vocab_size": 151936,
}

DEEPSEEK_V3 = {
    "model_type": "deepseek_v3",
    "hidden_size": 7168,
    "intermediate_size": 18432,
    "moe_intermediate_size": 2048,
    "num_attention_heads": 128,
    "num_key_value_heads": 128,
    "q_lora_rank": 1536,
    "kv_lora_rank": 512,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
    "n_routed_experts": 256,
    "num_experts_per_tok": 8,
    "first_k_dense_replace": 1,
    "num_hidden_layers": 1,
    "vocab_size": 129280,
}
"""DeepSeek-V3's first (dense) layer: multi-head latent attention and a dense SwiGLU."""

_GQA_IN_SDPA = (
    "transformers 5 calls SDPA with enable_gqa when no mask is passed "
    "(integrations/sdpa_attention.py use_gqa_in_sdpa): K and V are not repeated"
)
_GROUPED = {"repeats_kv": False}
_PHI_AS_FALCON = {
    "model_type": "falcon",
    "num_hidden_layers": 1,
    "hidden_size": 2560,
    "num_attention_heads": 32,
    "intermediate_size": 10240,
    "vocab_size": 51200,
    "bias": True,
    "multi_query": False,
    "new_decoder_architecture": False,
    "tie_word_embeddings": False,
    "hidden_act": "gelu_new",
}

CASES = (
    Case("llama-sdpa", LLAMA_3_8B, overrides=_GROUPED, notes=_GQA_IN_SDPA),
    Case(
        "llama-sdpa-padded",
        LLAMA_3_8B,
        padded=True,
        excluded={
            "scores": "SDPA keeps the float mask it makes from a boolean mask, 2 s bytes per token: not modelled"
        },
    ),
    Case("llama-eager", LLAMA_3_8B, attention="eager"),
    Case("mistral-sdpa", MISTRAL_7B, overrides=_GROUPED, notes=_GQA_IN_SDPA),
    Case("qwen2-sdpa", QWEN2_7B, overrides=_GROUPED, notes=_GQA_IN_SDPA),
    Case("qwen3-sdpa", QWEN3_8B, overrides=_GROUPED, notes=_GQA_IN_SDPA),
    Case(
        "gemma-sdpa",
        GEMMA_7B,
        spec={**GEMMA_7B, "norms_per_layer": 2},
        notes="gpuplan builds Gemma 1 with the gemma2 family's 4 norms per layer; the spec here has Gemma 1's 2",
    ),
    Case("gemma2-eager", GEMMA_2_9B, attention="eager"),
    Case(
        "phi-sdpa",
        PHI_2,
        spec=_PHI_AS_FALCON,
        overrides={"fused_qkv": False, "rotary_by_concatenation": True},
        notes="phi-2 as gpuplan's validation rows write it (falcon family); transformers' PhiAttention has separate q, k, v projections and concatenates its partial rotary",
    ),
    Case("phi3-sdpa", PHI_3_MINI),
    Case("gpt2-eager-dropout", GPT2_MEDIUM, attention="eager", dropout=True),
    Case("gpt2-sdpa", GPT2_MEDIUM),
    Case(
        "falcon-sdpa",
        FALCON_7B,
        spec={**FALCON_7B, "hidden_act": "gelu"},
        overrides=_GROUPED,
        notes=_GQA_IN_SDPA,
    ),
    Case(
        "deepseek-v3-dense-sdpa",
        DEEPSEEK_V3,
        excluded={
            name: "CPU SDPA has no fused kernel for a value head narrower than the query's and falls back to fp32 math"
            for name in ("qkv", "scores", "attention_output")
        },
    ),
    Case(
        "mixtral-sdpa",
        _scaled_moe(MIXTRAL_8X7B),
        fake=False,
        overrides=_GROUPED,
        notes=_GQA_IN_SDPA,
    ),
    Case(
        "qwen3-moe-sdpa",
        _scaled_moe(QWEN3_30B_A3B),
        fake=False,
        overrides=_GROUPED,
        notes=_GQA_IN_SDPA,
    ),
)


# --- building and running ----------------------------------------------------------------------


def _transformers_layer(
    case: Case,
) -> tuple[torch.nn.Module, Callable[[], Any], torch.Tensor, tuple]:
    """One decoder layer of ``case.config`` in bf16, its forward call and its shared tensors."""
    from transformers import AutoConfig
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    raw = dict(case.config)
    model_type = raw.pop("model_type")
    config = AutoConfig.for_model(model_type, **raw)
    config._attn_implementation = case.attention
    if not case.dropout:
        for key in (
            "attention_dropout",
            "resid_pdrop",
            "attn_pdrop",
            "embd_pdrop",
            "hidden_dropout",
        ):
            if hasattr(config, key):
                setattr(config, key, 0.0)
    module = __import__(f"transformers.models.{model_type}.modeling_{model_type}", fromlist=["_"])
    causal_name = MODEL_FOR_CAUSAL_LM_MAPPING_NAMES[model_type]
    prefix = causal_name.removesuffix("ForCausalLM")
    layer_class = getattr(module, f"{prefix}DecoderLayer", None) or module.GPT2Block
    rotary_class = getattr(module, f"{prefix}RotaryEmbedding", None)
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)
    try:
        layer = layer_class(config, layer_idx=0)
        rotary = rotary_class(config) if rotary_class is not None else None
    finally:
        torch.set_default_dtype(previous)
    layer.train()
    hidden = torch.randn(
        case.batch, case.sequence, config.hidden_size, dtype=torch.bfloat16, requires_grad=True
    )
    positions = torch.arange(case.sequence).unsqueeze(0)
    shared: tuple = ()
    kwargs: dict[str, Any] = {"attention_mask": None}
    if case.padded:
        causal = torch.ones(case.sequence, case.sequence, dtype=torch.bool).tril()
        kwargs["attention_mask"] = causal[None, None].expand(case.batch, 1, -1, -1)
        shared = (kwargs["attention_mask"],)
    if rotary is not None:
        cos, sin = rotary(hidden, positions)
        kwargs["position_embeddings"] = (cos, sin)
        shared = (*shared, cos, sin)
    if model_type == "falcon":
        kwargs["alibi"] = None
        kwargs["position_ids"] = positions

    def run() -> Any:
        return layer(hidden, **kwargs)

    return layer, run, hidden, shared


def trace_case(case: Case) -> list[SavedTensor]:
    """The classified saved tensors of one case's layer."""
    context = contextlib.nullcontext()
    if case.fake:
        from torch._subclasses.fake_tensor import FakeTensorMode

        context = FakeTensorMode()
    with context:
        torch.manual_seed(0)
        layer, run, hidden, shared = _transformers_layer(case)
        saved = record_saved_tensors(layer, run, hidden, shared)
    for tensor in saved:
        tensor.tensor_class = classify(tensor, case.sequence)
    return saved


def formula_by_class(case: Case) -> dict[str, float]:
    """``activation_terms`` for the case's architecture under the kernels the traced code runs:
    gpuplan's ``deepspeed`` profile (transformers' modelling code) with the case's overrides."""
    from dataclasses import replace

    import numpy as np

    from gpuplan.estimate.frameworks import FRAMEWORK_CODES
    from gpuplan.estimate.memory import activation_kernels, activation_terms
    from gpuplan.strategy import Layout
    from gpuplan.workload.model import ModelSpec

    raw = dict(case.spec or case.config)
    norms = raw.pop("norms_per_layer", None)
    spec = ModelSpec.from_hf_config(raw, name=case.name)
    if norms is not None:
        spec = replace(spec, norms_per_layer=norms)
    code = np.asarray(FRAMEWORK_CODES.index("deepspeed"))
    kernels = activation_kernels(spec, code)
    kernels = replace(
        kernels, **{name: np.asarray(value) for name, value in case.overrides.items()}
    )
    one = np.asarray(1)
    layout = Layout(
        dp=one, tp=one, pp=one, vpp=one, cp=one, ep=one, etp=one, shard=one, zero=np.asarray(0),
        micro_batch=np.asarray(case.batch), micro_batches=one,
        sequence_parallel=np.asarray(False), recompute=np.asarray(0), offload=np.asarray(0),
        dualpipe=np.asarray(False),
    )  # fmt: skip
    terms = activation_terms(
        spec, layout, kernels, case.sequence, flash_attention=case.attention != "eager",
        dropout=case.dropout,
    )  # fmt: skip
    return {name: float(value) for name, value in terms.items()}


@dataclass(frozen=True)
class ClassComparison:
    case: str
    tensor_class: str
    traced: float
    formula: float
    excluded: str = ""

    @property
    def relative_error(self) -> float:
        if self.traced == 0.0:
            return 0.0 if self.formula == 0.0 else float("inf")
        return (self.formula - self.traced) / self.traced


def compare_case(case: Case) -> list[ClassComparison]:
    """Traced and formula bytes per token per layer, class by class."""
    traced = bytes_per_token_by_class(trace_case(case), case.tokens)
    formula = formula_by_class(case)
    names = [n for n in (*TENSOR_CLASSES, "other") if traced.get(n) or formula.get(n)]
    return [
        ClassComparison(
            case.name,
            name,
            traced.get(name, 0.0),
            formula.get(name, 0.0),
            case.excluded.get(name, ""),
        )
        for name in names
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--case", action="append", help="case name (repeatable); default all")
    parser.add_argument("--tensors", action="store_true", help="list every saved tensor")
    parser.add_argument("--markdown", action="store_true", help="one summary row per case")
    parser.add_argument("--json", action="store_true", help="the comparisons as JSON")
    arguments = parser.parse_args()
    if arguments.json:
        cases = [c for c in CASES if not arguments.case or c.name in arguments.case]
        print(json.dumps([asdict(row) for case in cases for row in compare_case(case)]))
        return
    import transformers

    print(f"transformers {transformers.__version__}, torch {torch.__version__}")
    cases = [c for c in CASES if not arguments.case or c.name in arguments.case]
    if arguments.markdown:
        print("| case | traced B/token/layer | formula | worst class (error) | left out |")
        print("|---|---:|---:|---|---|")
    for case in cases:
        rows = compare_case(case)
        compared = [row for row in rows if not row.excluded]
        if arguments.markdown:
            worst = max(compared, key=lambda row: abs(row.relative_error))
            left_out = ", ".join(row.tensor_class for row in rows if row.excluded) or "-"
            traced = sum(row.traced for row in compared)
            formula = sum(row.formula for row in compared)
            print(
                f"| {case.name} | {traced:,.0f} | {formula:,.0f} | "
                f"{worst.tensor_class} ({worst.relative_error:+.2%}) | {left_out} |"
            )
            continue
        print(f"\n## {case.name}" + (f"  ({case.notes})" if case.notes else ""))
        if arguments.tensors:
            for t in trace_case(case):
                print(
                    f"  {t.tensor_class:16} {t.saver:36} {t.saver_op:28} {t.producer_op:28} "
                    f"{t.shape!s:24} {t.dtype!s:15} {t.nbytes / case.tokens:10.1f}"
                )
        print(f"  {'class':18} {'traced':>12} {'formula':>12} {'error':>8}")
        for row in rows:
            note = f"  left out: {row.excluded}" if row.excluded else ""
            print(
                f"  {row.tensor_class:18} {row.traced:12.1f} {row.formula:12.1f} "
                f"{row.relative_error:+8.2%}{note}"
            )


if __name__ == "__main__":
    main()
