"""The matrix multiplications a planned model runs on one GPU, after tensor-parallel splitting.

mamf-finder's README advises measuring "the exact shapes your model uses". For a Llama-style
layer on ``tp`` GPUs (Megatron-LM's column/row split, Shoeybi et al. 2019) with
``tokens = micro_batch x seq_len / cp`` rows, the forward GEMMs are (M x N x K, FLOPs 2MNK):

- query/key/value projection: tokens x (q_width + 2 kv_width) / tp x hidden
- attention output projection: tokens x hidden x q_width / tp
- MLP up (and gate): tokens x (2 x) intermediate / tp x hidden
- MLP down: tokens x hidden x intermediate / tp
- LM head: tokens x vocab / tp x hidden

The backward pass runs each as two more GEMMs: the input gradient (tokens x K x N) and the
weight gradient (N x K x tokens).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpuplan.workload.model import ModelSpec


@dataclass(frozen=True)
class GemmShape:
    """One GEMM ``C[M, N] = A[M, K] @ B[K, N]`` and how often a training step runs it per layer."""

    name: str
    m: int
    n: int
    k: int
    pass_name: str = "forward"

    @property
    def flops(self) -> int:
        return 2 * self.m * self.n * self.k

    def label(self) -> str:
        return f"{self.name} {self.pass_name} {self.m}x{self.n}x{self.k}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "pass": self.pass_name,
            "m": self.m,
            "n": self.n,
            "k": self.k,
            "flops": self.flops,
        }


def forward_gemms(model: ModelSpec, tokens: int, tp: int = 1) -> list[GemmShape]:
    """Forward GEMMs of one decoder layer plus the LM head on one tensor-parallel rank."""
    hidden = model.hidden_size
    ffn = model.moe_intermediate_size if model.is_moe else model.intermediate_size
    expert_tokens = (
        max(1, tokens * model.num_experts_per_token // max(1, model.num_experts))
        if model.is_moe
        else tokens
    )
    up_width = (2 if model.gated_mlp else 1) * ffn
    shapes = [
        GemmShape("qkv_projection", tokens, (model.q_width + 2 * model.kv_width) // tp, hidden),
        GemmShape("attention_output", tokens, hidden, model.q_width // tp),
        GemmShape("mlp_up", expert_tokens, up_width // tp, hidden),
        GemmShape("mlp_down", expert_tokens, hidden, ffn // tp),
        GemmShape("lm_head", tokens, model.vocab_size // tp, hidden),
    ]
    return [shape for shape in shapes if shape.n > 0 and shape.k > 0]


def training_gemms(model: ModelSpec, tokens: int, tp: int = 1) -> list[GemmShape]:
    """Forward, input-gradient and weight-gradient GEMMs, without duplicates."""
    shapes: list[GemmShape] = []
    seen: set[tuple[int, int, int]] = set()
    for forward in forward_gemms(model, tokens, tp):
        for shape in (
            forward,
            GemmShape(forward.name, forward.m, forward.k, forward.n, "input_gradient"),
            GemmShape(forward.name, forward.n, forward.k, forward.m, "weight_gradient"),
        ):
            if (shape.m, shape.n, shape.k) not in seen:
                seen.add((shape.m, shape.n, shape.k))
                shapes.append(shape)
    return shapes


def scenario_gemms(scenario: Any) -> list[GemmShape]:
    """The training GEMMs of a parsed :class:`gpuplan.scenario.Scenario` on one GPU."""
    strategy = scenario.strategy
    tp = max(1, int(strategy.tp or 1))
    cp = max(1, int(strategy.cp or 1))
    tokens = max(1, int(strategy.micro_batch or 1) * scenario.job.seq_len // cp)
    return training_gemms(scenario.job.model, tokens, tp)
