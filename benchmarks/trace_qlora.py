"""Where QLoRA's memory goes: live bytes of a bitsandbytes 4-bit training loop, op by op.

    python benchmarks/trace_qlora.py

``torch.autograd.graph.saved_tensors_hooks`` cannot see what bitsandbytes keeps: its
``MatMul4Bit`` (``bitsandbytes/autograd/_functions.py``) stores tensors as attributes of the
autograd context, not through ``save_for_backward``. This script counts every storage alive
after each op instead (``torch.cuda.max_memory_allocated`` on fake tensors: no memory is used),
through two training steps of a small Llama stack as litgpt 0.4 runs it (``finetune/lora.py``
``fit``: ``logits = model(input_ids, lm_head_chunk_size=128)``; the previous step's ``logits``
stay referenced until that assignment, so their autograd graph lives through the next forward
pass). Three runs differ only in the frozen linear layers:

- ``bf16``: plain bf16 ``nn.Linear`` (LoRA);
- ``bnb-0.42``: bitsandbytes 0.42.0 ``MatMul4Bit`` (commit 4870580): dequantizes the weight to its
  quantization dtype, casts it to the input dtype, and keeps ``ctx.tensors = (A, B)``; the weights
  are quantized from fp16 as Lightning's ``BitsandbytesPrecision`` does (``_Linear4bit.quantize``:
  ``weight.to(dtype=torch.half)``), and every ``nn.Linear``, the output head included, is 4-bit;
- ``bnb-0.43.2``: the same with ``ctx.tensors = (None, B)`` (bitsandbytes PR #1270, released in
  0.43.2).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass, field
from typing import Any

import torch
from torch.multiprocessing.reductions import StorageWeakRef
from torch.utils._python_dispatch import TorchDispatchMode


@dataclass
class LiveBytes(TorchDispatchMode):
    """Sum of the storages made inside the mode and still alive, after every op; the peak."""

    live: dict[int, tuple[int, StorageWeakRef, str]] = field(default_factory=dict)
    peak: int = 0
    current: int = 0
    at_peak: dict[str, int] = field(default_factory=dict)
    """Live bytes at the peak by the op that made them."""
    excluded: set[int] = field(default_factory=set)
    """Storages made before (parameters and buffers), which views of them must not count."""

    def __post_init__(self) -> None:
        super().__init__()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        result = func(*args, **(kwargs or {}))
        for tensor in torch.utils._pytree.tree_leaves(result):
            if isinstance(tensor, torch.Tensor):
                storage = tensor.untyped_storage()
                key = int(storage._cdata)
                if key not in self.live and key not in self.excluded:
                    self.live[key] = (int(storage.nbytes()), StorageWeakRef(storage), str(func))
        self.current = self.count()
        if self.current > self.peak:
            self.peak = self.current
            self.at_peak = {}
            for size, _, op in self.live.values():
                self.at_peak[op] = self.at_peak.get(op, 0) + size
        return result

    def count(self) -> int:
        for key in [k for k, (_, ref, _) in self.live.items() if ref.expired()]:
            del self.live[key]
        return sum(size for size, _, _ in self.live.values())


class MatMul4Bit(torch.autograd.Function):
    """bitsandbytes ``MatMul4Bit`` as of 0.42.0 (``keeps_input``) or 0.43.2: the weight is
    dequantized to ``quant_dtype`` (``functional.dequantize_4bit``: ``torch.empty(quant_state.shape,
    dtype=quant_state.dtype)``), cast to the input's dtype, and multiplied; backward does the same
    to get the input's gradient."""

    @staticmethod
    def forward(ctx, A, B, shape, quant_dtype, keeps_input):  # type: ignore[no-untyped-def]
        weight = torch.empty(shape, dtype=quant_dtype, device=A.device).to(A.dtype)
        output = torch.nn.functional.linear(A, weight)
        ctx.shape, ctx.quant_dtype = shape, quant_dtype
        ctx.tensors = (A, B) if keeps_input else (None, B)
        return output

    @staticmethod
    def backward(ctx, grad_output):  # type: ignore[no-untyped-def]
        _, B = ctx.tensors
        weight = torch.empty(ctx.shape, dtype=ctx.quant_dtype, device=B.device)
        grad_a = torch.matmul(grad_output, weight.to(grad_output.dtype))
        return grad_a, None, None, None, None


class Linear4bit(torch.nn.Module):
    """A frozen linear layer stored as NF4: packed 4-bit weight (``out * in / 2`` bytes) and one
    fp32 absmax per 64 weights (bitsandbytes ``Params4bit``, no double quantization)."""

    def __init__(self, d_in: int, d_out: int, keeps_input: bool) -> None:
        super().__init__()
        self.shape = (d_out, d_in)
        self.register_buffer("packed", torch.empty(d_out * d_in // 2, 1, dtype=torch.uint8))
        self.register_buffer("absmax", torch.empty(d_out * d_in // 64, dtype=torch.float32))
        self.keeps_input = keeps_input

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return MatMul4Bit.apply(x, self.packed, self.shape, torch.float16, self.keeps_input)


class LoRA(torch.nn.Module):
    """litgpt ``LoRALinear``: the frozen layer plus ``dropout(x) @ A.T @ B.T * scaling``."""

    def __init__(self, base: torch.nn.Module, d_in: int, d_out: int, rank: int, dropout: float):
        super().__init__()
        self.base = base
        self.lora_a = torch.nn.Parameter(torch.empty(rank, d_in))
        self.lora_b = torch.nn.Parameter(torch.empty(d_out, rank))
        self.dropout = dropout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dropped = torch.native_dropout(x, self.dropout, True)[0]
        return self.base(x) + (dropped @ self.lora_a.T @ self.lora_b.T) * 0.5


@dataclass(frozen=True)
class Stack:
    """A Llama-style stack (separate q, k, v projections, RMSNorm, SwiGLU) at real widths."""

    name: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    ffn: int
    vocab: int
    batch: int = 2
    sequence: int = 512
    rank: int = 8
    targets: tuple[str, ...] = ("q_proj", "v_proj")

    @property
    def tokens(self) -> int:
        return self.batch * self.sequence


LLAMA_2_7B_TWO_LAYERS = Stack("llama-2-7b, 2 layers", 2, 4096, 32, 32, 11008, 32000)


def _linear(kind: str, d_in: int, d_out: int) -> torch.nn.Module:
    if kind == "bf16":
        linear = torch.nn.Linear(d_in, d_out, bias=False)
        linear.weight.requires_grad_(False)
        return linear
    return Linear4bit(d_in, d_out, keeps_input=kind == "bnb-0.42")


class _Layer(torch.nn.Module):
    def __init__(self, stack: Stack, kind: str) -> None:
        super().__init__()
        h, head_dim = stack.hidden, stack.hidden // stack.heads
        widths = {
            "q_proj": (h, stack.heads * head_dim),
            "k_proj": (h, stack.kv_heads * head_dim),
            "v_proj": (h, stack.kv_heads * head_dim),
            "o_proj": (stack.heads * head_dim, h),
            "gate_proj": (h, stack.ffn),
            "up_proj": (h, stack.ffn),
            "down_proj": (stack.ffn, h),
        }
        for name, (d_in, d_out) in widths.items():
            module = _linear(kind, d_in, d_out)
            if name in stack.targets:
                module = LoRA(module, d_in, d_out, stack.rank, 0.05)
            setattr(self, name, module)
        self.norm_1 = torch.nn.RMSNorm(h)
        self.norm_2 = torch.nn.RMSNorm(h)
        for norm in (self.norm_1, self.norm_2):
            norm.weight.requires_grad_(False)
        self.stack = stack

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = self.stack
        b, t, _ = x.shape
        n = self.norm_1(x)
        q = self.q_proj(n).view(b, t, s.heads, -1).transpose(1, 2)
        k = self.k_proj(n).view(b, t, s.kv_heads, -1).transpose(1, 2)
        v = self.v_proj(n).view(b, t, s.kv_heads, -1).transpose(1, 2)
        y = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o_proj(y.transpose(1, 2).reshape(b, t, -1))
        n = self.norm_2(x)
        return x + self.down_proj(torch.nn.functional.silu(self.gate_proj(n)) * self.up_proj(n))


class _Model(torch.nn.Module):
    def __init__(self, stack: Stack, kind: str) -> None:
        super().__init__()
        self.layers = torch.nn.ModuleList(_Layer(stack, kind) for _ in range(stack.layers))
        self.norm = torch.nn.RMSNorm(stack.hidden)
        self.norm.weight.requires_grad_(False)
        self.head = _linear(kind, stack.hidden, stack.vocab)

    def forward(self, x: torch.Tensor) -> list[torch.Tensor]:
        for layer in self.layers:
            x = layer(x)
        x = self.norm(x)
        return [self.head(chunk) for chunk in x.split(128, dim=1)]


def chunked_cross_entropy(logits: list[torch.Tensor], targets: torch.Tensor) -> torch.Tensor:
    """litgpt ``utils.chunked_cross_entropy`` for a chunked head: bf16 cross-entropy per chunk."""
    losses = [
        torch.nn.functional.cross_entropy(
            chunk.reshape(-1, chunk.size(-1)), target.reshape(-1), reduction="none"
        )
        for chunk, target in zip(logits, targets.split(logits[0].size(1), dim=1), strict=True)
    ]
    return torch.cat(losses).sum() / targets.numel()


@dataclass(frozen=True)
class LoopPeak:
    kind: str
    peak_bytes: int
    first_step_peak_bytes: int
    at_peak: dict[str, int]


def training_loop_peak(stack: Stack, kind: str, steps: int = 2) -> LoopPeak:
    """Peak live bytes of ``steps`` litgpt-style training steps, parameters and buffers left out."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        previous = torch.get_default_dtype()
        torch.set_default_dtype(torch.bfloat16)
        try:
            model = _Model(stack, kind)
        finally:
            torch.set_default_dtype(previous)
        embeddings = torch.empty(stack.batch, stack.sequence, stack.hidden, dtype=torch.bfloat16)
        targets = torch.zeros(stack.batch, stack.sequence, dtype=torch.long)
        tracker = LiveBytes()
        tracker.excluded = {
            int(t.untyped_storage()._cdata) for t in (*model.parameters(), *model.buffers())
        }
        peaks = []
        logits: Any = None
        with tracker:
            for _ in range(steps):
                logits = model(embeddings)
                loss = chunked_cross_entropy(logits, targets)
                loss.backward()
                for parameter in model.parameters():
                    parameter.grad = None
                del loss
                peaks.append(tracker.peak)
        del logits
    return LoopPeak(kind, peaks[-1], peaks[0], tracker.at_peak)


def four_bit_input_bytes(stack: Stack) -> float:
    """Bytes the 4-bit layers' inputs add under bitsandbytes 0.42, one step, by gpuplan's formula:
    the inputs ``activation_terms`` counts with ``frozen_linear_keeps_input`` less those it counts
    without (the output projection's input is flash attention's saved output already)."""
    import numpy as np

    from gpuplan.estimate.frameworks import FRAMEWORK_CODES
    from gpuplan.estimate.memory import activation_kernels, activation_terms
    from gpuplan.strategy import Layout
    from gpuplan.workload.model import ModelSpec

    model = ModelSpec.from_hf_config(
        {
            "model_type": "llama",
            "num_hidden_layers": stack.layers,
            "hidden_size": stack.hidden,
            "num_attention_heads": stack.heads,
            "num_key_value_heads": stack.kv_heads,
            "intermediate_size": stack.ffn,
            "vocab_size": stack.vocab,
        }
    )
    one = np.asarray(1)
    layout = Layout(
        dp=one, tp=one, pp=one, vpp=one, cp=one, ep=one, etp=one, shard=one, zero=np.asarray(0),
        micro_batch=np.asarray(stack.batch), micro_batches=one,
        sequence_parallel=np.asarray(False), recompute=np.asarray(0), offload=np.asarray(0),
        dualpipe=np.asarray(False),
    )  # fmt: skip
    kernels = activation_kernels(model, np.asarray(FRAMEWORK_CODES.index("megatron")))

    def total(keeps: bool) -> float:
        terms = activation_terms(
            model, layout, kernels, stack.sequence, lora_targets=stack.targets,
            lora_dropout=True, frozen_linear_keeps_input=keeps,
        )  # fmt: skip
        return float(sum(terms.values()))

    return stack.tokens * stack.layers * (total(True) - total(False))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", action="store_true", help="the peaks and the formula as JSON")
    arguments = parser.parse_args()
    stack = LLAMA_2_7B_TWO_LAYERS
    runs = {kind: training_loop_peak(stack, kind) for kind in ("bf16", "bnb-0.43.2", "bnb-0.42")}
    if arguments.json:
        report = {kind: asdict(run) for kind, run in runs.items()}
        report["formula"] = {
            "four_bit_input_bytes": four_bit_input_bytes(stack),
            "dequantized_head_bytes": 4.0 * stack.vocab * stack.hidden,
        }
        print(json.dumps(report))
        return
    print(f"{stack.name}: {stack.tokens} tokens, LoRA on {', '.join(stack.targets)}")
    print(f"{'frozen layers':14} {'step 1 peak MiB':>16} {'step 2 peak MiB':>16}")
    for run in runs.values():
        print(
            f"{run.kind:14} {run.first_step_peak_bytes / 2**20:16.1f} {run.peak_bytes / 2**20:16.1f}"
        )
        for op, size in sorted(run.at_peak.items(), key=lambda item: -item[1])[:6]:
            print(f"{'':14}   at the peak: {op:40} {size / 2**20:10.1f} MiB")
    inputs = four_bit_input_bytes(stack)
    for step, attribute in ((1, "first_step_peak_bytes"), (2, "peak_bytes")):
        extra = getattr(runs["bnb-0.42"], attribute) - getattr(runs["bnb-0.43.2"], attribute)
        print(
            f"\nstep {step}: bnb-0.42 - bnb-0.43.2 = {extra / 2**20:.1f} MiB = {extra / inputs:.3f} x"
            f" the inputs the 4-bit layers keep in one step ({inputs / 2**20:.1f} MiB)"
        )
    transient = runs["bnb-0.43.2"].peak_bytes - runs["bf16"].peak_bytes
    head = 4.0 * stack.vocab * stack.hidden
    print(
        f"bnb-0.43.2 - bf16 = {transient / 2**20:.1f} MiB; the head's weight dequantized to fp16 "
        f"and cast to bf16: {head / 2**20:.1f} MiB"
    )


if __name__ == "__main__":
    main()
