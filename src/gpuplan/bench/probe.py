"""Probe the real job: train the scenario's model for a few steps and compare with gpuplan.

A Llama-style decoder (RMSNorm, rotary embeddings, grouped-query attention through
``scaled_dot_product_attention``, SwiGLU MLP; Touvron et al. 2023) is built with the
scenario's shapes, random weights and random tokens, and trained with AdamW at the
scenario's precision (bf16/fp16 autocast over fp32 weights; fp8 runs as bf16), micro-batch,
sequence length and recompute (full: every layer checkpointed; selective: the attention core).
It runs on one GPU without parallelism: as many layers as gpuplan's memory model says fit;
an out-of-memory error halves the layer count and tries again, down to one layer.

Memory: blocks cached by earlier parts are released and the peak statistics reset before the
model is built (``torch.cuda.empty_cache``, ``reset_peak_memory_stats``); the bytes still
allocated then are the baseline, and the probe's figures are the peaks above it. Measured
``max_memory_allocated`` / ``max_memory_reserved`` and tokens/s are set next to
``gpuplan.api.estimate`` for the same probed configuration (one GPU, the probed layer count),
and the full scenario's prediction is reported alongside.

Scaling to the full model: parameters and training FLOPs are ``fixed + per_layer x layers``
(:class:`LayerSplit`), the fixed part being the embedding, the final norm and the output head,
which do not grow with the layers (13 % of Llama-3-8B's parameters); the measured step time is
scaled by the ratio of training FLOPs, not of layer counts.

On the CPU a tiny model runs, so that the pipeline is tested without a GPU.
"""

from __future__ import annotations

import gc
import math
import time
from dataclasses import asdict, dataclass, replace
from types import ModuleType
from typing import Any

MEMORY_HEADROOM = 0.85
"""Fraction of free GPU memory the probed layers may take by gpuplan's prediction."""


@dataclass(frozen=True)
class ProbeConfig:
    """The decoder to build and how to train it."""

    hidden_size: int
    num_layers: int
    num_attention_heads: int
    num_kv_heads: int
    head_dim: int
    intermediate_size: int
    vocab_size: int
    seq_len: int
    micro_batch: int
    precision: str = "bf16"
    recompute: str = "none"
    rope_theta: float = 10000.0

    def hf_config(self) -> dict[str, Any]:
        """The same shapes as config.json keys, for ``gpuplan.api.estimate``."""
        return {
            "model_type": "llama",
            "name": "probe",
            "hidden_size": self.hidden_size,
            "num_hidden_layers": self.num_layers,
            "num_attention_heads": self.num_attention_heads,
            "num_key_value_heads": self.num_kv_heads,
            "head_dim": self.head_dim,
            "intermediate_size": self.intermediate_size,
            "vocab_size": self.vocab_size,
            "tie_word_embeddings": False,
        }


TINY_CPU_CONFIG = ProbeConfig(
    hidden_size=64,
    num_layers=2,
    num_attention_heads=4,
    num_kv_heads=2,
    head_dim=16,
    intermediate_size=128,
    vocab_size=256,
    seq_len=32,
    micro_batch=2,
    precision="fp32",
)


STATE_BYTES_PER_PARAMETER = 16
"""fp32 weights, fp32 gradients and AdamW's two moments in the parameters' dtype
(``torch.optim.AdamW`` state ``exp_avg``, ``exp_avg_sq``): 4 + 4 + 8 bytes."""


@dataclass(frozen=True)
class LayerSplit:
    """A quantity of the decoder that is ``fixed + per_layer x layers``."""

    fixed: float
    per_layer: float

    def at(self, layers: int) -> float:
        return self.fixed + self.per_layer * layers


def parameter_split(config: ProbeConfig) -> LayerSplit:
    """Parameters of :func:`build_decoder`: fixed = embedding ``V d`` + head ``d V`` + final norm
    ``d``; per layer = q ``d H h`` + k, v ``2 d K h`` + o ``H h d`` + SwiGLU ``3 d F`` + two
    norms ``2 d``."""
    d, h = config.hidden_size, config.head_dim
    attention = 2 * d * config.num_attention_heads * h + 2 * d * config.num_kv_heads * h
    per_layer = attention + 3 * d * config.intermediate_size + 2 * d
    return LayerSplit(fixed=2 * config.vocab_size * d + d, per_layer=per_layer)


def training_flops_split(config: ProbeConfig) -> LayerSplit:
    """Training FLOPs per token: ``3 x`` forward (forward, input and weight gradients;
    Narayanan et al. 2021, appendix). Forward of the head ``2 d V``; of a layer ``2 x`` its
    linear weights plus the causal attention core ``2 x (s + 1)/2 x H x 2h``
    (``gpuplan.estimate.flops.attention_core_forward_flops_per_token``). Recompute adds one
    forward of each layer (full) or of its attention core (selective; Korthikanti et al. 2022,
    section 5). The embedding is a lookup and the norms are not matmuls: no FLOPs counted."""
    d, h, heads = config.hidden_size, config.head_dim, config.num_attention_heads
    linear_weights = 2 * d * heads * h + 2 * d * config.num_kv_heads * h
    linear_weights += 3 * d * config.intermediate_size
    core = 2.0 * (config.seq_len + 1) / 2 * heads * 2 * h
    layer_forward = 2.0 * linear_weights + core
    recompute = {"full": layer_forward, "selective": core}.get(config.recompute, 0.0)
    return LayerSplit(
        fixed=3 * 2.0 * d * config.vocab_size, per_layer=3 * layer_forward + recompute
    )


def full_model_extrapolation(
    measured: dict[str, Any], probed: ProbeConfig, full_layers: int
) -> dict[str, Any]:
    """The probe's step time scaled to ``full_layers`` by training FLOPs,
    ``t_full = t_probe x F(full) / F(probed)`` with ``F = fixed + per_layer x layers``
    (:func:`training_flops_split`), and the full model's parameters and optimizer-state bytes
    (:func:`parameter_split`, :data:`STATE_BYTES_PER_PARAMETER`)."""
    flops = training_flops_split(probed)
    parameters = parameter_split(probed)
    step_seconds = (
        measured["seconds_per_step"] * flops.at(full_layers) / flops.at(probed.num_layers)
    )
    return {
        "scaled_seconds_per_step_full_model": step_seconds,
        "scaled_tokens_per_second_full_model": probed.micro_batch * probed.seq_len / step_seconds,
        "fixed_flops_share_of_probe": flops.fixed / flops.at(probed.num_layers),
        "full_model_parameters": parameters.at(full_layers),
        "full_model_state_bytes": STATE_BYTES_PER_PARAMETER * parameters.at(full_layers),
    }


def config_from_scenario(scenario: Any) -> ProbeConfig:
    """The full model of a parsed scenario as a probe configuration."""
    model = scenario.job.model
    return ProbeConfig(
        hidden_size=model.hidden_size,
        num_layers=model.num_layers,
        num_attention_heads=model.num_attention_heads,
        num_kv_heads=model.num_kv_heads,
        head_dim=model.head_dim,
        intermediate_size=model.intermediate_size or model.moe_intermediate_size,
        vocab_size=model.vocab_size,
        seq_len=scenario.job.seq_len,
        micro_batch=max(1, int(scenario.strategy.micro_batch or 1)),
        precision=scenario.job.precision,
        recompute=scenario.strategy.recompute,
    )


def single_gpu_scenario(config: ProbeConfig, gpu: str) -> dict[str, Any]:
    """The scenario gpuplan predicts for the probe: this model on one GPU, no parallelism."""
    return {
        "model": config.hf_config(),
        "method": "full",
        "precision": config.precision,
        "optimizer": "adamw",
        "framework": "fsdp",
        "seq_len": config.seq_len,
        "micro_batch": config.micro_batch,
        "global_batch": config.micro_batch,
        "hardware": {"gpu": gpu, "count": 1},
        "strategy": {"tp": 1, "pp": 1, "zero": 0, "recompute": config.recompute},
    }


def layers_that_fit(config: ProbeConfig, gpu: str, free_bytes: float) -> int:
    """The most layers whose predicted peak memory stays within the headroom (at least 1)."""
    from gpuplan.api import estimate

    def fits(layers: int) -> bool:
        result = estimate(single_gpu_scenario(replace(config, num_layers=layers), gpu))
        return float(result["memory"]["peak_bytes"]) <= MEMORY_HEADROOM * free_bytes

    low, high = 1, config.num_layers
    if fits(high):
        return high
    while low < high:
        middle = (low + high + 1) // 2
        if fits(middle):
            low = middle
        else:
            high = middle - 1
    return low


def build_decoder(torch: ModuleType, config: ProbeConfig) -> Any:
    """A Llama-style decoder-only transformer with random weights."""
    nn = torch.nn
    functional = torch.nn.functional
    checkpoint = torch.utils.checkpoint.checkpoint

    class RotaryEmbedding(nn.Module):  # type: ignore[name-defined]
        def __init__(self) -> None:
            super().__init__()
            half = config.head_dim // 2
            frequencies = 1.0 / config.rope_theta ** (torch.arange(half).float() / half)
            angles = torch.outer(torch.arange(config.seq_len).float(), frequencies)
            self.register_buffer("cos", angles.cos(), persistent=False)
            self.register_buffer("sin", angles.sin(), persistent=False)

        def forward(self, x: Any) -> Any:
            first, second = x.chunk(2, dim=-1)
            cos = self.cos[: x.shape[-2]].to(x.dtype)
            sin = self.sin[: x.shape[-2]].to(x.dtype)
            return torch.cat((first * cos - second * sin, first * sin + second * cos), dim=-1)

    class DecoderLayer(nn.Module):  # type: ignore[name-defined]
        def __init__(self) -> None:
            super().__init__()
            hidden, head = config.hidden_size, config.head_dim
            self.attention_norm = nn.RMSNorm(hidden)
            self.query = nn.Linear(hidden, config.num_attention_heads * head, bias=False)
            self.key = nn.Linear(hidden, config.num_kv_heads * head, bias=False)
            self.value = nn.Linear(hidden, config.num_kv_heads * head, bias=False)
            self.output = nn.Linear(config.num_attention_heads * head, hidden, bias=False)
            self.mlp_norm = nn.RMSNorm(hidden)
            self.gate = nn.Linear(hidden, config.intermediate_size, bias=False)
            self.up = nn.Linear(hidden, config.intermediate_size, bias=False)
            self.down = nn.Linear(config.intermediate_size, hidden, bias=False)
            self.rotary = RotaryEmbedding()

        def attention_core(self, query: Any, key: Any, value: Any) -> Any:
            return functional.scaled_dot_product_attention(
                query, key, value, is_causal=True, enable_gqa=True
            )

        def forward(self, x: Any) -> Any:
            batch, length, _ = x.shape
            normed = self.attention_norm(x)
            shape = (batch, length, -1, config.head_dim)
            query = self.rotary(self.query(normed).view(shape).transpose(1, 2))
            key = self.rotary(self.key(normed).view(shape).transpose(1, 2))
            value = self.value(normed).view(shape).transpose(1, 2)
            if config.recompute == "selective":
                attended = checkpoint(self.attention_core, query, key, value, use_reentrant=False)
            else:
                attended = self.attention_core(query, key, value)
            x = x + self.output(attended.transpose(1, 2).reshape(batch, length, -1))
            normed = self.mlp_norm(x)
            return x + self.down(functional.silu(self.gate(normed)) * self.up(normed))

    class Decoder(nn.Module):  # type: ignore[name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.embedding = nn.Embedding(config.vocab_size, config.hidden_size)
            self.layers = nn.ModuleList(DecoderLayer() for _ in range(config.num_layers))
            self.norm = nn.RMSNorm(config.hidden_size)
            self.head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)

        def forward(self, tokens: Any) -> Any:
            x = self.embedding(tokens)
            for layer in self.layers:
                if config.recompute == "full":
                    x = checkpoint(layer, x, use_reentrant=False)
                else:
                    x = layer(x)
            return self.head(self.norm(x))

    return Decoder()


def train_steps(
    torch: ModuleType, device: str, config: ProbeConfig, warmup_steps: int, steps: int
) -> dict[str, Any]:
    """Warm-up then timed AdamW steps; tokens/s and, on a GPU, the allocator's peaks above the
    baseline left by earlier parts (:func:`release_cached_memory`)."""
    baseline = release_cached_memory(torch) if device == "cuda" else None
    model = build_decoder(torch, config).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=device == "cuda")
    autocast_dtype = {"bf16": torch.bfloat16, "fp8": torch.bfloat16, "fp16": torch.float16}.get(
        config.precision
    )
    scaler = torch.amp.GradScaler(device, enabled=config.precision == "fp16")
    tokens = torch.randint(
        0, config.vocab_size, (config.micro_batch, config.seq_len + 1), device=device
    )
    inputs, targets = tokens[:, :-1], tokens[:, 1:]

    def step() -> float:
        with torch.autocast(device, dtype=autocast_dtype, enabled=autocast_dtype is not None):
            logits = model(inputs)
            loss = torch.nn.functional.cross_entropy(
                logits.float().view(-1, config.vocab_size), targets.reshape(-1)
            )
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        return float(loss.detach())

    synchronize = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    for _ in range(warmup_steps):
        step()
    synchronize()
    start = time.perf_counter()
    losses = [step() for _ in range(steps)]
    synchronize()
    seconds = time.perf_counter() - start
    result: dict[str, Any] = {
        "steps": steps,
        "warmup_steps": warmup_steps,
        "seconds_per_step": seconds / steps,
        "tokens_per_second": config.micro_batch * config.seq_len * steps / seconds,
        "final_loss": losses[-1],
        "loss_is_finite": all(math.isfinite(loss) for loss in losses),
        "parameters": sum(parameter.numel() for parameter in model.parameters()),
    }
    if baseline is not None:
        result.update(memory_above_baseline(torch, baseline))
    return result


def release_cached_memory(torch: ModuleType) -> dict[str, int]:
    """Free what earlier parts left cached and restart the peak statistics; the bytes still
    allocated and reserved afterwards are the baseline the probe's peaks are measured from."""
    gc.collect()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    return {
        "allocated": int(torch.cuda.memory_allocated()),
        "reserved": int(torch.cuda.memory_reserved()),
    }


def memory_above_baseline(torch: ModuleType, baseline: dict[str, int]) -> dict[str, int]:
    """The probe's own peaks, ``max_memory_allocated - baseline`` (and reserved alike), with
    the raw peaks and the baseline."""
    allocated = int(torch.cuda.max_memory_allocated())
    reserved = int(torch.cuda.max_memory_reserved())
    return {
        "max_memory_allocated_bytes": allocated - baseline["allocated"],
        "max_memory_reserved_bytes": reserved - baseline["reserved"],
        "raw_max_memory_allocated_bytes": allocated,
        "raw_max_memory_reserved_bytes": reserved,
        "baseline_allocated_bytes": baseline["allocated"],
        "baseline_reserved_bytes": baseline["reserved"],
    }


class ProbeOutOfMemoryError(RuntimeError):
    """The probe ran out of memory with every layer count down to one."""


def is_out_of_memory(torch: ModuleType, error: BaseException) -> bool:
    """``torch.cuda.OutOfMemoryError`` (``torch.OutOfMemoryError`` since 2.5), or an error that
    says "out of memory" (older builds raise a plain RuntimeError)."""
    kinds = tuple(
        kind
        for kind in (
            getattr(torch.cuda, "OutOfMemoryError", None),
            getattr(torch, "OutOfMemoryError", None),
        )
        if isinstance(kind, type)
    )
    return isinstance(error, kinds) or "out of memory" in str(error).lower()


def train_with_fewer_layers_on_oom(
    torch: ModuleType, device: str, config: ProbeConfig, warmup_steps: int, steps: int
) -> tuple[ProbeConfig, dict[str, Any], list[dict[str, Any]]]:
    """:func:`train_steps` with ``config.num_layers``, halved after each out-of-memory error
    down to one layer: the configuration that trained, its measurements and the failed tries.
    Raises :class:`ProbeOutOfMemoryError` when one layer does not fit either."""
    failures: list[dict[str, Any]] = []
    layers = config.num_layers
    while True:
        probed = replace(config, num_layers=layers)
        try:
            return probed, train_steps(torch, device, probed, warmup_steps, steps), failures
        except Exception as error:
            if not is_out_of_memory(torch, error):
                raise
            failures.append({"layers": layers, "error": f"{type(error).__name__}: {error}"})
        if device == "cuda":
            release_cached_memory(torch)
        if layers == 1:
            tried = ", ".join(str(failure["layers"]) for failure in failures)
            raise ProbeOutOfMemoryError(
                f"probe: out of memory with every layer count tried ({tried}): "
                + failures[-1]["error"].splitlines()[0]
            )
        layers = max(1, layers // 2)


def _prediction(scenario: Any, gpu: str | None) -> dict[str, Any] | None:
    from gpuplan.api import estimate
    from gpuplan.errors import InputError

    if gpu is None:
        return None
    try:
        return estimate(scenario)
    except InputError as error:
        return {"error": str(error)}


def run_probe(
    torch: ModuleType,
    device: str,
    scenario_source: Any,
    warmup_steps: int = 3,
    steps: int = 5,
    gpu: str | None = None,
) -> dict[str, Any]:
    """Train the scenario's model (or, on the CPU, a tiny one) and compare with gpuplan."""
    from gpuplan.scenario import parse_scenario

    scenario = parse_scenario(scenario_source)
    gpu_id = gpu or (scenario.cluster.gpu.id if scenario.cluster else None)
    full = config_from_scenario(scenario)
    notes = []
    if scenario.job.model.is_moe:
        notes.append("the probe builds a dense decoder; expert routing is not exercised")
    if scenario.job.method != "full":
        notes.append(f"method {scenario.job.method} probed as full training")
    if device == "cpu":
        planned = replace(TINY_CPU_CONFIG, recompute=full.recompute)
        notes.append("CPU: a tiny model stands in for the scenario's")
    else:
        release_cached_memory(torch)
        free_bytes, _ = torch.cuda.mem_get_info()
        layers = layers_that_fit(full, gpu_id, free_bytes) if gpu_id else full.num_layers
        planned = replace(full, num_layers=layers)
    probed, measured, failures = train_with_fewer_layers_on_oom(
        torch, device, planned, warmup_steps, steps
    )
    if failures:
        notes.append(
            f"out of memory with {failures[0]['layers']} layers; trained {probed.num_layers}"
        )
    if device == "cuda":
        measured.update(full_model_extrapolation(measured, probed, full.num_layers))
    return {
        "scenario_model": scenario.job.model.name,
        "probed_config": asdict(probed),
        "full_layers": full.num_layers,
        "out_of_memory_retries": failures,
        "measured": measured,
        "prediction_for_probe": _prediction(single_gpu_scenario(probed, gpu_id), gpu_id)
        if gpu_id
        else None,
        "prediction_for_scenario": _prediction(scenario_source, gpu_id),
        "gpu": gpu_id,
        "notes": notes,
    }
