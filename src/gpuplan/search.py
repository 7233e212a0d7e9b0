"""The plan search: every GPU type x cluster size x parallel layout, evaluated on NumPy arrays.

For each GPU type the search builds all candidate layouts of all cluster sizes at once as one
:class:`~gpuplan.strategy.Layout` of 1-d arrays, keeps those that obey the parallelism rules,
runs the memory model (``estimate/memory.py``) on all of them, keeps those that fit with the
requested headroom, and runs the speed and reliability models on the survivors. The formulas are
the ones ``gpuplan.estimate`` runs on 0-d arrays: there is no second copy.

Per GPU type and count, the fastest feasible layout is the one to rent (for a given offer a
shorter job never costs more), so each (GPU, count) is priced once, at the cheapest offer in the
catalog that sells whole instances of that GPU (``pricing/``). Plans are then filtered by budget
and deadline and ranked by cost, by time, or reduced to the Pareto front of cost against days.

Layout rules (Megatron-Core's, as ``Strategy.resolved`` checks them one at a time): ``dp * tp *
pp * cp = GPUs``; ``tp`` within a node (or NVLink domain) and dividing the attention heads, with
the KV heads and ``tp`` dividing one another; ``pp`` at most the layers (uneven stages allowed)
and ``pp * vpp`` dividing them when interleaved; ``cp`` dividing the sequence; ``ep`` dividing
the experts and ``dp * cp``; ``dp * micro_batch`` dividing the global batch; LoRA and QLoRA
without a pipeline.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

import numpy as np
import numpy.typing as npt

from gpuplan.errors import InputError
from gpuplan.estimate.efficiency import MachineMeasurements
from gpuplan.estimate.frameworks import FRAMEWORK_CODES, resolve_framework_codes
from gpuplan.estimate.memory import DEFAULT_SAFETY_MARGIN, estimate_memory
from gpuplan.estimate.time import estimate_step_time
from gpuplan.hardware.cluster import Cluster
from gpuplan.hardware.gpu import GPUSpec, MissingPeakError, MissingSpecError
from gpuplan.scenario import Scenario
from gpuplan.strategy import OFFLOAD, RECOMPUTE, Layout, Strategy
from gpuplan.units import SECONDS_PER_DAY, SECONDS_PER_HOUR, Money

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

OBJECTIVES = ("cost", "time", "pareto")
DEFAULT_MAX_GPUS = 1024
DEFAULT_HEADROOM = DEFAULT_SAFETY_MARGIN
"""Memory the search keeps free on every GPU: the memory model's own safety margin."""
TENSOR_PARALLEL = (1, 2, 4, 8)
PIPELINE_PARALLEL = (1, 2, 4, 8, 16, 32, 64)
CONTEXT_PARALLEL = (1, 2, 4, 8)
MICRO_BATCHES = (1, 2, 4, 8, 16)
VIRTUAL_STAGES = (1, 2, 4)
LONG_SEQUENCE = 16384
"""Context parallelism is only searched from this sequence length on: below it the K/V exchange
costs more than the activation memory it saves (Megatron-LM's long-context guidance)."""


class PlanError(InputError):
    """A plan request that cannot be searched (the message names the option)."""


@dataclass(frozen=True)
class PlanRequest:
    """What to search and how to rank. ``budget`` and ``deadline_seconds`` are hard limits."""

    scenario: Scenario
    objective: str = "cost"
    budget: Money | None = None
    deadline_seconds: float | None = None
    max_gpus: int = DEFAULT_MAX_GPUS
    gpus: tuple[str, ...] = ()
    exclude_gpus: tuple[str, ...] = ()
    providers: tuple[str, ...] = ()
    billing: tuple[str, ...] = ()
    headroom: float = DEFAULT_HEADROOM
    currency: str = ""
    limit: int = 20
    offers_file: str | None = None
    discount_factors: dict[str, Decimal] = field(default_factory=dict)
    measured: MachineMeasurements | None = None

    def __post_init__(self) -> None:
        if self.objective not in OBJECTIVES:
            raise PlanError(f"objective: {self.objective!r} is not one of {', '.join(OBJECTIVES)}")
        if self.max_gpus < 1:
            raise PlanError(f"max_gpus: must be at least 1, got {self.max_gpus}")
        if not 0 <= self.headroom < 1:
            raise PlanError(f"headroom: must be in [0, 1), got {self.headroom}")
        if self.budget is not None and self.budget.amount <= 0:
            raise PlanError(f"budget: must be positive, got {self.budget}")
        if self.deadline_seconds is not None and self.deadline_seconds <= 0:
            raise PlanError(f"deadline: must be positive, got {self.deadline_seconds} s")
        if self.limit < 1:
            raise PlanError(f"limit: must be at least 1, got {self.limit}")


@dataclass
class Candidates:
    """Layouts of one GPU type, as parallel arrays (one entry per layout)."""

    gpu: GPUSpec
    count: IntArray
    layout: Layout

    def __len__(self) -> int:
        return int(self.count.shape[0])

    def take(self, mask: npt.NDArray[np.bool_] | IntArray) -> Candidates:
        fields = {
            name: getattr(self.layout, name)[mask] for name in self.layout.__dataclass_fields__
        }
        return Candidates(self.gpu, self.count[mask], Layout(**fields))


def cluster_sizes(gpu: GPUSpec, max_gpus: int) -> list[int]:
    """Powers of two from 1, and whole nodes (1-8 nodes, then powers of two of nodes)."""
    sizes = {2**power for power in range(0, 31) if 2**power <= max_gpus}
    per_node = gpu.gpus_per_node
    nodes = list(range(1, 9)) + [2**power for power in range(4, 20)]
    sizes.update(per_node * count for count in nodes if per_node * count <= max_gpus)
    return sorted(sizes)


def _product(**choices: Sequence[int]) -> dict[str, IntArray]:
    grids = np.meshgrid(
        *[np.asarray(values, dtype=np.int64) for values in choices.values()], indexing="ij"
    )
    return {name: grid.ravel() for name, grid in zip(choices, grids, strict=True)}


def enumerate_layouts(
    scenario: Scenario, gpu: GPUSpec, counts: Sequence[int], offload: bool
) -> Candidates:
    """Every valid layout of ``scenario``'s job on ``counts`` GPUs of ``gpu`` (module docstring).
    Strategy fields the scenario fixes are held; ``offload`` adds optimizer (and parameter)
    offload to the candidates."""
    job, model = scenario.job, scenario.job.model
    fixed = {name: getattr(scenario.strategy, name) for name in scenario.strategy_given}
    node = min(gpu.gpus_per_node, max(counts))

    def options(name: str, default: Sequence[int]) -> Sequence[int]:
        if name in fixed:
            value = fixed[name]
            if name == "recompute":
                return (RECOMPUTE.index(value),)
            if name == "offload":
                return (OFFLOAD.index(value),)
            return (int(value),)
        return default

    experts = [
        e for e in (1, 2, 4, 8, 16, 32, 64) if model.is_moe and model.num_experts % e == 0
    ] or [1]
    sequence = [
        c
        for c in CONTEXT_PARALLEL
        if c == 1 or (job.seq_len >= LONG_SEQUENCE and job.seq_len % c == 0)
    ]
    grid = _product(
        count=counts,
        tp=options("tp", [t for t in TENSOR_PARALLEL if t <= node]),
        pp=options(
            "pp", [1] if job.is_adapter else [p for p in PIPELINE_PARALLEL if p <= model.num_layers]
        ),
        vpp=options("vpp", VIRTUAL_STAGES),
        cp=options("cp", sequence),
        ep=options("ep", experts),
        zero=options("zero", (0, 1, 2, 3)),
        micro_batch=options("micro_batch", MICRO_BATCHES),
        recompute=options("recompute", (0, 1, 2)),
        offload=options("offload", (0, 1, 2) if offload else (0,)),
    )
    count, tp, pp, vpp, cp, ep = (grid[name] for name in ("count", "tp", "pp", "vpp", "cp", "ep"))
    zero, micro_batch, offload_code = grid["zero"], grid["micro_batch"], grid["offload"]
    model_parallel = tp * pp * cp
    dp = np.where(count % model_parallel == 0, count // model_parallel, 0)
    heads, kv_heads = model.num_attention_heads, model.num_kv_heads
    kv_ok = (
        (kv_heads % tp == 0) | (tp % kv_heads == 0)
        if not model.uses_mla
        else np.ones_like(tp, dtype=bool)
    )
    valid = (dp >= 1) & (heads % tp == 0) & kv_ok & (tp <= node)
    valid &= pp <= model.num_layers
    valid &= (vpp == 1) | ((pp > 1) & (model.num_layers % np.maximum(pp * vpp, 1) == 0))
    valid &= (ep == 1) | ((dp * cp) % ep == 0)
    valid &= (dp >= 1) & (job.global_batch % np.maximum(dp * micro_batch, 1) == 0)
    sharded = dp * cp > 1
    valid &= sharded | (zero == 0)
    valid &= (tp * pp == 1) | (zero <= 1) | ("zero" in fixed)
    valid &= (offload_code == 0) | ((zero >= 1) & ((offload_code == 1) | (zero == 3)))
    valid &= ~((pp > 1) & (micro_batch * dp * pp > job.global_batch))
    if "dp" in fixed and scenario.strategy.dp:
        valid &= dp == scenario.strategy.dp
    keep = np.flatnonzero(valid)
    dp, sp = dp[keep], scenario.strategy.sequence_parallel
    layout = Layout(
        dp=dp,
        tp=tp[keep],
        pp=pp[keep],
        vpp=vpp[keep],
        cp=cp[keep],
        ep=ep[keep],
        zero=zero[keep],
        micro_batch=micro_batch[keep],
        micro_batches=job.global_batch // (dp * micro_batch[keep]),
        recompute=grid["recompute"][keep],
        offload=offload_code[keep],
        sequence_parallel=(tp[keep] > 1) & sp,
    )
    return Candidates(gpu, count[keep], layout)


@dataclass
class Evaluated:
    """Feasible layouts of one GPU type with their memory, speed and duration."""

    candidates: Candidates
    peak_bytes: FloatArray
    headroom: FloatArray
    step_seconds: FloatArray
    tokens_per_second: FloatArray
    mfu: FloatArray
    goodput: FloatArray
    duration_seconds: FloatArray
    framework: IntArray


@dataclass
class Shortfall:
    """The layout that came closest to fitting when nothing did."""

    gpu: str
    count: int
    peak_bytes: float
    usable_bytes: float


def weight_bytes_lower_bound(scenario: Scenario) -> float:
    """Bytes of weights that must sit on the GPUs whatever the layout: bf16 (fp32 for fp32
    training), or about 4.4 bits per parameter for QLoRA's NF4 linear layers."""
    job = scenario.job
    bytes_per_param = 0.55 if job.method == "qlora" else (4.0 if job.precision == "fp32" else 2.0)
    return job.model.total_params * bytes_per_param


def minimum_gpus(scenario: Scenario, gpu: GPUSpec) -> int:
    """A lower bound on the GPUs a job needs: its weights within 90 % of each GPU's memory."""
    return max(1, math.ceil(weight_bytes_lower_bound(scenario) / (gpu.memory_bytes * 0.9)))


def evaluate_gpu(
    scenario: Scenario, gpu: GPUSpec, request: PlanRequest
) -> tuple[Evaluated | None, int, Shortfall | None]:
    """Evaluate every layout of ``gpu``: (feasible plans, layouts evaluated, closest miss)."""
    lower = minimum_gpus(scenario, gpu)
    counts = [count for count in cluster_sizes(gpu, request.max_gpus) if count >= lower]
    if scenario.cluster is not None and scenario.cluster.gpu.id == gpu.id:
        counts = [scenario.cluster.count]
    if not counts:
        largest = max(cluster_sizes(gpu, request.max_gpus))
        usable = gpu.memory_bytes * (1 - request.headroom)
        return (
            None,
            0,
            Shortfall(gpu.id, largest, weight_bytes_lower_bound(scenario) / largest, usable),
        )
    cluster = Cluster(
        gpu=gpu,
        count=max(counts),
        gpus_per_node=scenario.cluster.gpus_per_node if scenario.cluster else 0,
        inter_node=scenario.cluster.inter_node if scenario.cluster else "",
    )
    job = scenario.job
    evaluated_count = 0
    shortfall: Shortfall | None = None
    for offload in (False, True):
        candidates = enumerate_layouts(scenario, gpu, counts, offload)
        evaluated_count += len(candidates)
        if not len(candidates):
            continue
        memory = estimate_memory(
            job,
            candidates.layout,
            gpu.memory_bytes,
            flash_attention=scenario.strategy.flash_attention,
            safety_margin=request.headroom,
        )
        fits = memory.fits
        if not np.any(fits):
            closest = int(np.argmin(memory.peak_bytes))
            shortfall = Shortfall(
                gpu.id,
                int(candidates.count[closest]),
                float(memory.peak_bytes[closest]),
                gpu.memory_bytes * (1 - request.headroom),
            )
            continue
        feasible = candidates.take(fits)
        step = estimate_step_time(
            job,
            cluster,
            feasible.layout,
            flash_attention=scenario.strategy.flash_attention,
            measured=request.measured,
        )
        reliability = scenario.reliability.estimate(job, feasible.count)
        goodput = np.asarray(reliability.goodput, dtype=float) * np.ones_like(step.step_seconds)
        tokens = max(job.tokens, 1)
        duration = tokens / (step.tokens_per_second * goodput)
        result = Evaluated(
            candidates=feasible,
            peak_bytes=memory.peak_bytes[fits],
            headroom=memory.headroom[fits],
            step_seconds=step.step_seconds,
            tokens_per_second=step.tokens_per_second,
            mfu=step.mfu,
            goodput=goodput,
            duration_seconds=duration,
            framework=resolve_framework_codes(
                job.framework, feasible.layout.tp, feasible.layout.pp, feasible.layout.zero
            ),
        )
        return result, evaluated_count, shortfall
    return None, evaluated_count, shortfall


def best_per_cluster_size(evaluated: Evaluated) -> list[int]:
    """Index of the fastest layout for each GPU count (ties: less memory, then fewer GPUs idle)."""
    order = np.lexsort(
        (-evaluated.headroom, evaluated.duration_seconds, evaluated.candidates.count)
    )
    counts = evaluated.candidates.count[order]
    first = np.ones_like(counts, dtype=bool)
    first[1:] = counts[1:] != counts[:-1]
    return [int(index) for index in order[first]]


def _strategy_at(evaluated: Evaluated, index: int, scenario: Scenario) -> Strategy:
    layout = evaluated.candidates.layout
    return Strategy(
        dp=int(layout.dp[index]),
        tp=int(layout.tp[index]),
        pp=int(layout.pp[index]),
        vpp=int(layout.vpp[index]),
        cp=int(layout.cp[index]),
        ep=int(layout.ep[index]),
        zero=int(layout.zero[index]),
        micro_batch=int(layout.micro_batch[index]),
        recompute=RECOMPUTE[int(layout.recompute[index])],
        offload=OFFLOAD[int(layout.offload[index])],
        flash_attention=scenario.strategy.flash_attention,
        sequence_parallel=bool(layout.sequence_parallel[index])
        or scenario.strategy.sequence_parallel,
    )


def _cheapest_offer(
    gpu: str,
    count: int,
    duration: float,
    tokens: float,
    request: PlanRequest,
    book: Any,
    rates: Any,
) -> dict[str, Any] | None:
    from gpuplan.pricing.quote import quote

    best: dict[str, Any] | None = None
    best_total: Decimal | None = None
    for offer in book.offers:
        if offer.gpu != gpu or count % offer.gpus:
            continue
        if request.providers and offer.provider.lower() not in {
            p.lower() for p in request.providers
        }:
            continue
        if request.billing:
            plans = tuple(
                plan
                for plan in offer.plans
                if plan.mode in request.billing or plan.kind in request.billing
            )
            if not plans:
                continue
            offer = replace(offer, plans=plans)
        instances = count // offer.gpus
        try:
            priced = quote(offer, duration, instances, tokens=tokens or None, rates=rates)
        except InputError:
            continue
        total = rates.convert(priced.total, offer.currency, request.currency)
        if best_total is None or total < best_total:
            best_total = total
            details = priced.to_dict(request.currency, rates)
            if instances > 1 and not offer.inter_node:
                details["warnings"] = [
                    *details.get("warnings", []),
                    f"{offer.id} advertises no inter-node network for {instances} instances",
                ]
            best = details
    return best


def plan(request: PlanRequest) -> dict[str, Any]:
    """Search, price, filter and rank (module docstring). Returns the JSON-able result:
    ``{"plans": [...], "pareto": [...], "evaluated": N, "seconds": t, "explanation": str}``."""
    started = time.perf_counter()
    from gpuplan.catalog import all_gpus, resolve_gpu_id
    from gpuplan.pricing.currency import default_rates
    from gpuplan.pricing.offers import OfferBook

    scenario = request.scenario
    allowed = {resolve_gpu_id(name) for name in request.gpus}
    excluded = {resolve_gpu_id(name) for name in request.exclude_gpus}
    if scenario.cluster is not None:
        allowed = {scenario.cluster.gpu.id}
    gpus = [
        gpu for gpu in all_gpus() if (not allowed or gpu.id in allowed) and gpu.id not in excluded
    ]
    rates = default_rates()
    currency = request.currency or (request.budget.currency if request.budget else "USD")
    rates.rate(currency)
    request = replace(request, currency=currency)
    book = OfferBook.build(request.offers_file, discount_factors=request.discount_factors or None)

    evaluated_total = 0
    rows: list[dict[str, Any]] = []
    shortfalls: list[Shortfall] = []
    skipped: list[str] = []
    for gpu in gpus:
        try:
            evaluated, count, shortfall = evaluate_gpu(scenario, gpu, request)
        except (MissingSpecError, MissingPeakError) as missing:
            skipped.append(str(missing))
            continue
        evaluated_total += count
        if shortfall is not None and evaluated is None:
            shortfalls.append(shortfall)
        if evaluated is None:
            continue
        for index in best_per_cluster_size(evaluated):
            rows.append(_plan_row(evaluated, index, scenario, request, book, rates))

    feasible_rows = rows
    rows = [row for row in rows if _within_limits(row, request)]
    rows.sort(key=lambda row: _sort_key(row, request.objective))
    pareto = pareto_front(rows)
    if request.objective == "pareto":
        rows = pareto
    shown = rows[: request.limit]
    result: dict[str, Any] = {
        "plans": shown,
        "pareto": [
            {
                "gpu": row["gpu"],
                "count": row["count"],
                "days": row["duration"]["days"],
                "cost": row["cost"]["total"] if row["cost"] else None,
            }
            for row in pareto
        ],
        "evaluated": evaluated_total,
        "seconds": time.perf_counter() - started,
        "currency": currency,
        "objective": request.objective,
        "skipped_gpus": skipped,
    }
    result["explanation"] = explain(shown, request, shortfalls, scenario, feasible_rows)
    return result


def _plan_row(
    evaluated: Evaluated,
    index: int,
    scenario: Scenario,
    request: PlanRequest,
    book: Any,
    rates: Any,
) -> dict[str, Any]:
    job = scenario.job
    gpu = evaluated.candidates.gpu
    count = int(evaluated.candidates.count[index])
    strategy = _strategy_at(evaluated, index, scenario)
    duration = float(evaluated.duration_seconds[index])
    tokens_per_second = float(evaluated.tokens_per_second[index])
    cost = _cheapest_offer(gpu.id, count, duration, job.tokens, request, book, rates)
    return {
        "gpu": gpu.id,
        "count": count,
        "nodes": -(-count // gpu.gpus_per_node),
        "strategy": {
            **strategy.to_dict(),
            "framework": FRAMEWORK_CODES[int(evaluated.framework[index])],
        },
        "memory": {
            "peak_bytes": float(evaluated.peak_bytes[index]),
            "capacity_bytes": float(gpu.memory_bytes),
            "headroom": float(evaluated.headroom[index]),
        },
        "throughput": {
            "step_seconds": float(evaluated.step_seconds[index]),
            "tokens_per_second": tokens_per_second,
            "tokens_per_second_per_gpu": tokens_per_second / count,
            "mfu": float(evaluated.mfu[index]),
        },
        "duration": {
            "seconds": duration,
            "days": duration / SECONDS_PER_DAY,
            "goodput": float(evaluated.goodput[index]),
        },
        "gpu_hours": count * duration / SECONDS_PER_HOUR,
        "cost": None
        if cost is None
        else {
            "total": cost["total"],
            "currency": cost["currency"],
            "per_million_tokens": cost["per_million_tokens"],
            "per_gpu_hour": cost["per_gpu_hour"],
            "offer": cost["offer"],
            "provider": cost["provider"],
            "instances": cost["instances"],
            "billing_mix": cost["billing_mix"]["description"],
            "hidden_fee_share": cost["hidden_fee_share"],
            "warnings": cost["warnings"],
        },
    }


def _within_limits(row: dict[str, Any], request: PlanRequest) -> bool:
    if (
        request.deadline_seconds is not None
        and row["duration"]["seconds"] > request.deadline_seconds
    ):
        return False
    if request.budget is not None:
        if row["cost"] is None:
            return False
        if Decimal(str(row["cost"]["total"])) > request.budget.amount:
            return False
    return not ((request.providers or request.billing) and row["cost"] is None)


def _sort_key(row: dict[str, Any], objective: str) -> tuple[float, float, float]:
    cost = float(row["cost"]["total"]) if row["cost"] else math.inf
    if objective == "time":
        return (row["duration"]["seconds"], cost, row["gpu_hours"])
    return (cost, row["gpu_hours"], row["duration"]["seconds"])


def pareto_front(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Plans no other plan beats on both cost and days (priced plans only), cheapest first."""
    priced = sorted(
        (row for row in rows if row["cost"]),
        key=lambda row: (float(row["cost"]["total"]), row["duration"]["seconds"]),
    )
    front: list[dict[str, Any]] = []
    fastest = math.inf
    for row in priced:
        if row["duration"]["seconds"] < fastest:
            front.append(row)
            fastest = row["duration"]["seconds"]
    return front


def explain(
    plans: list[dict[str, Any]],
    request: PlanRequest,
    shortfalls: list[Shortfall],
    scenario: Scenario,
    feasible: Sequence[dict[str, Any]] = (),
) -> str:
    """Why the top plan wins and what the runner-up trades; or, with no plan, why nothing fits."""
    from gpuplan.units import format_bytes, format_duration

    if not plans:
        reasons = []
        if shortfalls:
            closest = min(shortfalls, key=lambda miss: miss.peak_bytes - miss.usable_bytes)
            reasons.append(
                f"nothing fits: the closest is {closest.count} x {closest.gpu} at "
                f"{format_bytes(closest.peak_bytes)} per GPU against {format_bytes(closest.usable_bytes)} usable "
                f"(short by {format_bytes(closest.peak_bytes - closest.usable_bytes)})"
            )
            hints = []
            if scenario.job.method == "full":
                hints.append("fine-tune with method: qlora or lora")
            hints.append(f"allow more GPUs (--max-gpus above {request.max_gpus})")
            if "recompute" in scenario.strategy_given:
                hints.append("let the search choose recompute: full")
            if "offload" in scenario.strategy_given:
                hints.append("let the search offload the optimizer")
            hints.append("shorten seq_len or lower the headroom")
            reasons.append("what would make it fit: " + "; ".join(hints))
        else:
            reasons.append("no plan meets the limits")
            if feasible:
                fastest = min(feasible, key=lambda row: row["duration"]["seconds"])
                reasons.append(
                    f"the fastest feasible plan, {fastest['count']} x {fastest['gpu']}, takes "
                    f"{fastest['duration']['days']:.1f} days"
                )
                priced = [row for row in feasible if row["cost"]]
                if priced:
                    cheapest = min(priced, key=lambda row: float(row["cost"]["total"]))
                    reasons.append(
                        f"the cheapest, {cheapest['count']} x {cheapest['gpu']}, costs "
                        f"{float(cheapest['cost']['total']):,.0f} {cheapest['cost']['currency']}"
                    )
        if request.budget is not None:
            reasons.append(f"budget {request.budget}")
        if request.deadline_seconds is not None:
            reasons.append(f"deadline {format_duration(request.deadline_seconds)}")
        return "; ".join(reasons)
    top = plans[0]
    text = (
        f"{top['count']} x {top['gpu']} wins on {request.objective}: "
        f"{top['duration']['days']:.1f} days at {top['throughput']['mfu']:.0%} MFU"
    )
    if top["cost"]:
        text += f" for {top['cost']['total']:,.0f} {top['cost']['currency']} at {top['cost']['provider']} ({top['cost']['billing_mix']})"
    if len(plans) > 1:
        second = plans[1]
        faster = second["duration"]["seconds"] < top["duration"]["seconds"]
        text += (
            f"; the runner-up, {second['count']} x {second['gpu']}, is "
            f"{'faster' if faster else 'slower'} ({second['duration']['days']:.1f} days)"
        )
        if top["cost"] and second["cost"]:
            difference = float(second["cost"]["total"]) - float(top["cost"]["total"])
            if abs(difference) < 0.5:
                text += " for the same cost"
            else:
                text += f" and costs {abs(difference):,.0f} {top['cost']['currency']} {'more' if difference > 0 else 'less'}"
    return text
