"""The plan search: offers x instance counts x parallel layouts, evaluated on NumPy arrays.

A plan is a machine someone sells. The search walks the catalog's offers, not GPU types: offers
that sell the same machine (GPU, GPUs per instance, link inside the instance, network between
instances) form one :class:`Machine`, modelled once with that topology and priced offer by
offer. An offer whose seller lists no network between instances gives single-instance plans
only, unless the request allows them (``allow_unlisted_network``): they are then modelled on the
instances' public Ethernet and every plan on them says so. A cluster product (``min_instances``)
is only sold from its minimum size up.

For each machine the search builds every layout of every instance count at once as one
:class:`~gpuplan.strategy.Layout` of 1-d arrays: the structural rules are checked on the small
grid of (count, tp, pp, vpp, cp, ep) first and only its valid rows are crossed with the ZeRO
stage, micro-batch, recompute and offload choices. It runs the memory model
(``estimate/memory.py``) on all of them, keeps those that fit with the requested headroom, and
runs the speed, reliability and start-up models on the survivors. The formulas are the ones
``gpuplan.estimate`` runs on 0-d arrays: there is no second copy.

Instance counts are every count up to 16 instances, then every ``m * 2^k`` instances
(``m = 8..15``), up to ``max_gpus``: spaced at most 12.5 % apart, and holding every size whose
layouts can divide a batch of ``2^a`` or ``3 * 2^a`` sequences with the pipeline sizes below.
Pipeline sizes are the powers of two, 3 and 6, and the divisors of the layer count, up to 64.

Per machine and count, the fastest feasible layout is the one to rent (for a given offer a
shorter job never costs more); each offer of the machine that sells that count prices it with
its own billing rules, the start-up time included. Plans are then filtered by budget and
deadline and ranked by cost, by time, or reduced to the Pareto front of cost against days.

Layout rules (Megatron-Core's, as ``Strategy.resolved`` checks them one at a time): ``dp * tp *
pp * cp = GPUs``; ``tp`` within a node (or NVLink domain) and dividing the attention heads, with
the KV heads and ``tp`` dividing one another; ``pp`` at most the layers (uneven stages allowed)
and ``pp * vpp`` at most the layers when interleaved; ``cp`` dividing the sequence; ``ep`` dividing
the experts and ``dp * cp``; ``dp * micro_batch`` dividing the global batch; LoRA and QLoRA
without a pipeline.
"""

from __future__ import annotations

import bisect
import datetime as dt
import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

import numpy as np
import numpy.typing as npt

from gpuplan.errors import InputError
from gpuplan.estimate.comm import ClusterRows
from gpuplan.estimate.efficiency import MachineMeasurements
from gpuplan.estimate.frameworks import FRAMEWORK_CODES, resolve_framework_codes
from gpuplan.estimate.memory import DEFAULT_SAFETY_MARGIN, estimate_memory
from gpuplan.estimate.startup import startup_seconds
from gpuplan.estimate.time import COMMUNICATION_PARTS, estimate_step_time
from gpuplan.hardware.cluster import Cluster
from gpuplan.hardware.gpu import GPUSpec, MissingPeakError, MissingSpecError
from gpuplan.hardware.topology import InstanceTopology, assumed_topology
from gpuplan.notices import Notice
from gpuplan.scenario import Scenario
from gpuplan.strategy import OFFLOAD, RECOMPUTE, Layout, Strategy, parallel_rules
from gpuplan.units import SECONDS_PER_DAY, SECONDS_PER_HOUR, Money

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

OBJECTIVES = ("cost", "time", "pareto")
DEFAULT_MAX_GPUS = 1024
DEFAULT_HEADROOM = DEFAULT_SAFETY_MARGIN
"""Memory the search keeps free on every GPU: the memory model's own safety margin."""
TENSOR_PARALLEL = (1, 2, 4, 8)
CONTEXT_PARALLEL = (1, 2, 4, 8)
MICRO_BATCHES = (1, 2, 4, 8, 16)
VIRTUAL_STAGES = (1, 2, 4)
ALL_INSTANCE_COUNTS_UP_TO = 16
LONG_SEQUENCE = 16384
"""Context parallelism is only searched from this sequence length on: below it the K/V exchange
costs more than the activation memory it saves (Megatron-LM's long-context guidance)."""
STALE_PRICE_DAYS = 180
BUBBLE_NOTICE_SHARE = 0.2
STARTUP_NOTICE_SHARE = 0.1
COMMUNICATION_NOTICE_SHARE = 0.5


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
    allow_unlisted_network: bool = False
    today: dt.date | None = None

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


# --- machines --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Machine:
    """A machine shape and the offers that sell it. ``listed`` is false when the offers state no
    topology (the GPU's usual server is assumed) and for the scenario's own hardware."""

    gpu: GPUSpec
    topology: InstanceTopology
    offers: tuple[Any, ...]
    listed: bool = True

    @property
    def key(self) -> str:
        return f"{self.gpu.id}/{self.topology.summary()}"

    def multi_instance(self, allow_unlisted_network: bool) -> bool:
        return self.topology.has_cluster_network or allow_unlisted_network

    def cluster(self, instances: int, allow_unlisted_network: bool) -> Cluster:
        return Cluster.of_instances(
            self.gpu, self.topology, instances, allow_unlisted_network=allow_unlisted_network
        )


def group_machines(
    offers: Iterable[Any], gpus: dict[str, GPUSpec], allow_unlisted_network: bool = False
) -> list[Machine]:
    """Offers that sell the same machine, as one :class:`Machine` each (modelled once). What
    cannot change the model does not split a group: the network of a machine that never spans
    two instances, the link inside a one-GPU instance."""
    groups: dict[tuple[Any, ...], list[Any]] = {}
    shapes: dict[tuple[Any, ...], InstanceTopology] = {}
    for offer in offers:
        gpu = gpus.get(offer.gpu)
        if gpu is None:
            continue
        topology = offer.topology or assumed_topology(gpu, offer.gpus, "GPU catalog")
        network: tuple[Any, ...] = ()
        if topology.has_cluster_network:
            network = (topology.network, topology.network_bandwidth)
        elif allow_unlisted_network:
            network = ("unlisted", topology.unlisted_network_bandwidth())
        link = (topology.intra_node, topology.peer_to_peer) if topology.gpus > 1 else ()
        shape = (gpu.id, topology.gpus, link, network, topology.nvlink_domain)
        groups.setdefault(shape, []).append(offer)
        shapes.setdefault(shape, topology)
    return [
        Machine(
            gpus[shape[0]],
            shapes[shape],
            tuple(members),
            listed=all(offer.topology is not None for offer in members),
        )
        for shape, members in groups.items()
    ]


def instance_counts(low: int, high: int) -> list[int]:
    """Instance counts from ``low`` to ``high``: all up to 16, then ``m * 2^k`` (``m = 8..15``),
    and ``high`` itself (module docstring)."""
    counts = set(range(1, ALL_INSTANCE_COUNTS_UP_TO + 1))
    power = 1
    while 8 * power <= high:
        counts.update(m * power for m in range(8, 16))
        power *= 2
    counts.add(high)
    return sorted(count for count in counts if low <= count <= high)


def pipeline_sizes(num_layers: int) -> list[int]:
    """Pipeline sizes to search: powers of two, 3 and 6, and the layer count's divisors, up to
    64 and at most the layers."""
    sizes = {2**power for power in range(7)} | {3, 6}
    sizes |= {size for size in range(1, 65) if num_layers % size == 0}
    return sorted(size for size in sizes if size <= min(64, num_layers))


# --- layouts ---------------------------------------------------------------------------------


@dataclass
class Candidates:
    """Layouts of one machine, as parallel arrays (one entry per layout)."""

    count: IntArray
    layout: Layout

    def __len__(self) -> int:
        return int(self.count.shape[0])

    def take(self, mask: npt.NDArray[np.bool_] | IntArray) -> Candidates:
        fields = {
            name: getattr(self.layout, name)[mask] for name in self.layout.__dataclass_fields__
        }
        return Candidates(self.count[mask], Layout(**fields))


def _product(choices: dict[str, Sequence[int]]) -> dict[str, IntArray]:
    grids = np.meshgrid(
        *[np.asarray(values, dtype=np.int64) for values in choices.values()], indexing="ij"
    )
    return {name: grid.ravel() for name, grid in zip(choices, grids, strict=True)}


def _cross(left: dict[str, IntArray], right: dict[str, IntArray]) -> dict[str, IntArray]:
    """Every row of ``left`` with every row of ``right``."""
    rows = len(next(iter(left.values())))
    others = len(next(iter(right.values())))
    crossed = {name: np.repeat(values, others) for name, values in left.items()}
    crossed.update({name: np.tile(values, rows) for name, values in right.items()})
    return crossed


def enumerate_layouts(
    scenario: Scenario, node: int, counts: Sequence[int], offload: bool
) -> Candidates:
    """Every valid layout of ``scenario``'s job on ``counts`` GPUs in nodes of ``node`` (module
    docstring). Strategy fields the scenario fixes are held; ``offload`` adds optimizer (and
    parameter) offload to the candidates."""
    job, model = scenario.job, scenario.job.model
    fixed = {name: getattr(scenario.strategy, name) for name in scenario.strategy_given}
    batch = job.global_batch

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
    shape = _product(
        {
            "count": counts,
            "tp": options("tp", [t for t in TENSOR_PARALLEL if t <= node]),
            "pp": options("pp", [1] if job.is_adapter else pipeline_sizes(model.num_layers)),
            "vpp": options("vpp", VIRTUAL_STAGES),
            "cp": options("cp", sequence),
            "ep": options("ep", experts),
        }
    )
    count, tp, pp, vpp, cp, ep = (shape[name] for name in ("count", "tp", "pp", "vpp", "cp", "ep"))
    model_parallel = tp * pp * cp
    dp = np.where(count % model_parallel == 0, count // model_parallel, 0)
    valid = (dp >= 1) & (tp <= node)
    for holds in parallel_rules(job, dp, tp, pp, vpp, cp, ep, 1).values():
        valid &= holds
    if "dp" in fixed and scenario.strategy.dp:
        valid &= dp == scenario.strategy.dp
    structure = {name: values[valid] for name, values in shape.items()}
    structure["dp"] = dp[valid]
    grid = _cross(
        structure,
        _product(
            {
                "zero": options("zero", (0, 1, 2, 3)),
                "micro_batch": options("micro_batch", MICRO_BATCHES),
                "recompute": options("recompute", (0, 1, 2)),
                "offload": options("offload", (0, 1, 2) if offload else (0,)),
            }
        ),
    )
    dp, tp, pp, cp = grid["dp"], grid["tp"], grid["pp"], grid["cp"]
    zero, micro_batch, offload_code = grid["zero"], grid["micro_batch"], grid["offload"]
    valid = parallel_rules(job, dp, tp, pp, grid["vpp"], cp, grid["ep"], micro_batch)["batch"]
    valid &= (dp * cp > 1) | (zero == 0)
    valid &= (tp * pp == 1) | (zero <= 1) | ("zero" in fixed)
    valid &= (offload_code == 0) | ((zero >= 1) & ((offload_code == 1) | (zero == 3)))
    valid &= ~((pp > 1) & (micro_batch * dp * pp > batch))
    keep = np.flatnonzero(valid)
    dp, tp, mb = dp[keep], tp[keep], micro_batch[keep]
    layout = Layout(
        dp=dp,
        tp=tp,
        pp=pp[keep],
        vpp=grid["vpp"][keep],
        cp=cp[keep],
        ep=grid["ep"][keep],
        zero=zero[keep],
        micro_batch=mb,
        micro_batches=batch // (dp * mb),
        recompute=grid["recompute"][keep],
        offload=offload_code[keep],
        sequence_parallel=(tp > 1) & scenario.strategy.sequence_parallel,
    )
    return Candidates(grid["count"][keep], layout)


# --- evaluation ------------------------------------------------------------------------------


@dataclass
class Evaluated:
    """Feasible layouts of one machine with their memory, speed, start-up and duration."""

    machine: Machine
    candidates: Candidates
    peak_bytes: FloatArray
    headroom: FloatArray
    step_seconds: FloatArray
    tokens_per_second: FloatArray
    mfu: FloatArray
    goodput: FloatArray
    startup_seconds: FloatArray
    duration_seconds: FloatArray
    framework: IntArray
    communication_share: FloatArray
    bubble_share: FloatArray
    network_assumed: bool = False


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


def weight_shortfall(
    scenario: Scenario, gpu: GPUSpec, count: int, request: PlanRequest
) -> Shortfall:
    """The miss of a machine too small for the job's weights alone."""
    return Shortfall(
        gpu.id,
        count,
        weight_bytes_lower_bound(scenario) / count,
        gpu.memory_bytes * (1 - request.headroom),
    )


def minimum_gpus(scenario: Scenario, gpu: GPUSpec) -> int:
    """A lower bound on the GPUs a job needs: its weights within 90 % of each GPU's memory."""
    return max(1, math.ceil(weight_bytes_lower_bound(scenario) / (gpu.memory_bytes * 0.9)))


def machine_gpu_counts(
    machine: Machine, scenario: Scenario, request: PlanRequest, lower_bound: bool = True
) -> list[int]:
    """GPU counts to evaluate on ``machine``: what its offers sell, up to ``max_gpus``, from the
    job's lower bound (:func:`minimum_gpus`); only the scenario's count when its hardware is
    fixed."""
    size = machine.topology.gpus
    if not machine.offers:
        low, high = 1, 1
    else:
        low = min(offer.min_instances for offer in machine.offers)
        high = max(machine.topology.nvlink_domain // size, 1)
        if machine.multi_instance(request.allow_unlisted_network):
            limits = [offer.max_instances or request.max_gpus // size for offer in machine.offers]
            high = min(max(limits), request.max_gpus // size)
    if scenario.cluster is not None:
        wanted = scenario.cluster.count
        return [wanted] if wanted % size == 0 and low <= wanted // size <= max(high, 1) else []
    lower = minimum_gpus(scenario, machine.gpu) if lower_bound else 1
    if high < low or size > request.max_gpus:
        return []
    return [n * size for n in instance_counts(low, high) if n * size >= lower]


def concatenate(parts: Sequence[Candidates]) -> Candidates:
    """The layouts of several candidate sets, one after the other."""
    names = Layout.__dataclass_fields__
    return Candidates(
        np.concatenate([part.count for part in parts]),
        Layout(
            **{
                name: np.concatenate([getattr(part.layout, name) for part in parts])
                for name in names
            }
        ),
    )


def evaluate_machines(
    scenario: Scenario,
    group: Sequence[tuple[Machine, Sequence[int]]],
    request: PlanRequest,
    layouts: dict[tuple[Any, ...], Candidates] | None = None,
) -> tuple[list[Evaluated], int, Shortfall | None]:
    """Evaluate every layout of every machine of one GPU type at once, each on its own
    topology (``comm.ClusterRows``): (feasible plans per machine, layouts evaluated, closest
    miss). A machine on which nothing fits is tried again with optimizer offload. ``layouts``
    keeps the enumerations of one search, which depend on the node size and counts only."""
    known = {} if layouts is None else layouts

    def enumerated(index: int, offload: bool) -> Candidates:
        key = (clusters[index].scale_up_domain, tuple(group[index][1]), offload)
        if key not in known:
            known[key] = enumerate_layouts(scenario, key[0], key[1], offload)
        return known[key]

    gpu = group[0][0].gpu
    job = scenario.job
    clusters = [
        machine.cluster(
            max(counts) // machine.topology.gpus,
            request.allow_unlisted_network or not machine.offers,
        )
        for machine, counts in group
    ]
    usable = gpu.memory_bytes * (1 - request.headroom)
    results: list[Evaluated] = []
    evaluated_count = 0
    shortfall: Shortfall | None = None
    pending = list(range(len(group)))
    for offload in (False, True):
        parts = [(index, enumerated(index, offload)) for index in pending]
        parts = [(index, part) for index, part in parts if len(part)]
        if not parts:
            continue
        candidates = concatenate([part for _, part in parts])
        rows = np.concatenate([np.full(len(part), index) for index, part in parts])
        evaluated_count += len(candidates)
        memory = estimate_memory(
            job,
            candidates.layout,
            gpu.memory_bytes,
            flash_attention=scenario.strategy.flash_attention,
            safety_margin=request.headroom,
        )
        fits = memory.fits
        missed = ~fits
        if np.any(missed):
            closest = int(np.flatnonzero(missed)[np.argmin(memory.peak_bytes[missed])])
            if shortfall is None or memory.peak_bytes[closest] < shortfall.peak_bytes:
                shortfall = Shortfall(
                    gpu.id,
                    int(candidates.count[closest]),
                    float(memory.peak_bytes[closest]),
                    usable,
                )
        fitted = set(np.unique(rows[fits]).tolist())
        pending = [index for index in pending if index not in fitted]
        if fitted:
            results += _evaluate_feasible(
                scenario, group, clusters, candidates.take(fits), rows[fits], memory, fits, request
            )
        if not pending:
            break
    return results, evaluated_count, shortfall


def _evaluate_feasible(
    scenario: Scenario,
    group: Sequence[tuple[Machine, Sequence[int]]],
    clusters: Sequence[Cluster],
    feasible: Candidates,
    rows: IntArray,
    memory: Any,
    fits: npt.NDArray[np.bool_],
    request: PlanRequest,
) -> list[Evaluated]:
    """Speed, reliability and start-up of the layouts that fit, split back per machine."""
    job = scenario.job
    used, local = np.unique(rows, return_inverse=True)
    fabric = ClusterRows(tuple(clusters[index] for index in used), local.astype(np.int64))
    step = estimate_step_time(
        job,
        fabric,
        feasible.layout,
        flash_attention=scenario.strategy.flash_attention,
        measured=request.measured,
    )
    reliability = scenario.reliability.estimate(job, feasible.count)
    goodput = np.asarray(reliability.goodput, dtype=float) * np.ones_like(step.step_seconds)
    node_size = np.asarray([group[index][0].topology.gpus for index in used])[local]
    startup = startup_seconds(job, -(-feasible.count // node_size), node_size, scenario.startup)
    training = max(job.tokens, 1) / (step.tokens_per_second * goodput)
    communication = sum(step.breakdown[name] for name in COMMUNICATION_PARTS)
    framework = resolve_framework_codes(
        job.framework, feasible.layout.tp, feasible.layout.pp, feasible.layout.zero
    )
    peak, headroom = memory.peak_bytes[fits], memory.headroom[fits]
    results = []
    for position, index in enumerate(used.tolist()):
        mask = local == position
        results.append(
            Evaluated(
                machine=group[index][0],
                candidates=feasible.take(mask),
                peak_bytes=peak[mask],
                headroom=headroom[mask],
                step_seconds=step.step_seconds[mask],
                tokens_per_second=step.tokens_per_second[mask],
                mfu=step.mfu[mask],
                goodput=goodput[mask],
                startup_seconds=startup[mask],
                duration_seconds=(startup + training)[mask],
                framework=framework[mask],
                communication_share=np.asarray(communication / step.step_seconds, dtype=float)[
                    mask
                ],
                bubble_share=np.asarray(step.breakdown["bubble"] / step.step_seconds, dtype=float)[
                    mask
                ],
                network_assumed=clusters[index].network_assumed,
            )
        )
    return results


def evaluate_machine(
    scenario: Scenario, machine: Machine, counts: Sequence[int], request: PlanRequest
) -> tuple[Evaluated | None, int, Shortfall | None]:
    """:func:`evaluate_machines` for one machine."""
    if not counts:
        return None, 0, None
    results, evaluated, shortfall = evaluate_machines(scenario, [(machine, counts)], request)
    return (results[0] if results else None), evaluated, shortfall


def best_per_cluster_size(evaluated: Evaluated) -> list[int]:
    """Index of the fastest layout for each GPU count (ties: less memory, then fewer GPUs idle)."""
    order = np.lexsort(
        (-evaluated.headroom, evaluated.duration_seconds, evaluated.candidates.count)
    )
    counts = evaluated.candidates.count[order]
    first = np.ones_like(counts, dtype=bool)
    first[1:] = counts[1:] != counts[:-1]
    return [int(index) for index in order[first]]


def strategy_at(evaluated: Evaluated, index: int, scenario: Scenario) -> Strategy:
    """The layout at ``index`` as a :class:`Strategy`."""
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


# --- pricing ---------------------------------------------------------------------------------


def _offer_sells(offer: Any, count: int) -> bool:
    instances, rest = divmod(count, offer.gpus)
    if rest or instances < offer.min_instances:
        return False
    return offer.max_instances is None or instances <= offer.max_instances


def _price(
    offer: Any, count: int, duration: float, tokens: float, request: PlanRequest, rates: Any
) -> dict[str, Any] | None:
    from gpuplan.pricing.quote import quote

    instances = count // offer.gpus
    try:
        priced = quote(
            offer, duration, instances, tokens=tokens or None, rates=rates, itemized=False
        )
    except InputError:
        return None
    totals = priced.summary(request.currency, rates)
    return {
        "total": totals["total"],
        "currency": totals["currency"],
        "per_million_tokens": totals["per_million_tokens"],
        "per_gpu_hour": totals["per_gpu_hour"],
        "offer": offer.id,
        "provider": offer.provider,
        "instances": instances,
        "billing_mix": totals["billing_mix_description"],
        "hidden_fee_share": totals["hidden_fee_share"],
        "warnings": totals["warnings"],
    }


def _filtered_offers(book: Any, request: PlanRequest) -> list[Any]:
    """The catalog's offers under the request's provider and billing filters."""
    providers = {name.lower() for name in request.providers}
    offers = []
    for offer in book.offers:
        if providers and offer.provider.lower() not in providers:
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
        offers.append(offer)
    return offers


# --- notices ---------------------------------------------------------------------------------


def offer_notices(offer: Any, today: dt.date) -> list[Notice]:
    """Notices about an offer's data: unlisted topology, stale prices, an article's claims."""
    notices = []
    if offer.topology is None:
        notices.append(Notice("unlisted_topology", {"offer": offer.id}))
    ages = [(plan.provenance.age_days(today), plan.provenance.observed) for plan in offer.plans]
    age, observed = max(ages)
    if age > STALE_PRICE_DAYS:
        notices.append(
            Notice("stale_price", {"offer": offer.id, "observed": observed, "days": age})
        )
    if offer.claims != "provider":
        notices.append(Notice("seed_claims", {"offer": offer.id, "claims": offer.claims}))
    return notices


def plan_notices(evaluated: Evaluated, index: int, count: int) -> list[Notice]:
    """Notices about a plan's run: an assumed network, the bubble, start-up, communication."""
    notices = []
    instances = count // evaluated.machine.topology.gpus
    if evaluated.network_assumed and instances > 1:
        notices.append(Notice("no_cluster_network", {"instances": instances}))
    bubble = float(evaluated.bubble_share[index])
    if bubble > BUBBLE_NOTICE_SHARE:
        notices.append(Notice("bubble", {"share": f"{bubble:.0%}"}))
    startup = float(evaluated.startup_seconds[index])
    share = startup / float(evaluated.duration_seconds[index])
    if share > STARTUP_NOTICE_SHARE:
        notices.append(
            Notice("startup", {"share": f"{share:.0%}", "minutes": f"{startup / 60:.0f}"})
        )
    communication = float(evaluated.communication_share[index])
    if communication > COMMUNICATION_NOTICE_SHARE:
        notices.append(Notice("communication", {"share": f"{communication:.0%}"}))
    return notices


# --- the search ------------------------------------------------------------------------------


def _machines(
    request: PlanRequest, book: Any, gpus: list[GPUSpec]
) -> tuple[list[Machine], list[str]]:
    """Machines to evaluate, and the GPUs no offer sells. A scenario with fixed hardware that no
    offer sells is modelled as given, unpriced."""
    by_id = {gpu.id: gpu for gpu in gpus}
    machines = group_machines(
        _filtered_offers(book, request), by_id, request.allow_unlisted_network
    )
    offered = {machine.gpu.id for machine in machines}
    unoffered = [gpu.id for gpu in gpus if gpu.id not in offered]
    cluster = request.scenario.cluster
    if cluster is not None:
        machines = [
            machine
            for machine in machines
            if machine_gpu_counts(machine, request.scenario, request)
        ]
        if not machines and not (request.providers or request.billing):
            topology = InstanceTopology(
                gpus=cluster.gpus_per_node,
                intra_node=cluster.intra_node_link,
                peer_to_peer=bool(cluster.peer_to_peer),
                network=cluster.network,
                network_bandwidth=cluster.inter_node_bandwidth,
                nvlink_domain=cluster.nvlink_domain,
                source="scenario hardware",
            )
            machines = [Machine(cluster.gpu, topology, (), listed=False)]
    return machines, unoffered


def job_summary(request: PlanRequest) -> dict[str, Any]:
    """The job the plans answer, restated above every answer."""
    scenario = request.scenario
    job = scenario.job
    return {
        "model": job.model.name,
        "total_params": job.model.total_params,
        "method": job.method,
        "precision": job.precision,
        "tokens": job.tokens,
        "seq_len": job.seq_len,
        "global_batch": job.global_batch,
        "global_batch_tokens": job.global_batch_tokens,
        "batch_rule": scenario.batch_rule,
        "budget": str(request.budget) if request.budget is not None else None,
        "deadline_seconds": request.deadline_seconds,
        "max_gpus": request.max_gpus,
        "objective": request.objective,
        "allow_unlisted_network": request.allow_unlisted_network,
    }


@dataclass
class PlanCandidate:
    """The fastest layout of one machine at one size, on one offer, before it is priced:
    ``floor`` is a lower bound on its cost in the request's currency (``inf`` unpriced)."""

    evaluated: Evaluated
    index: int
    offer: Any
    duration: float
    floor: float


def _cost_floor(
    offer: Any, count: int, evaluated: Evaluated, index: int, request: PlanRequest, rates: Any
) -> float:
    """``instances x seconds x`` the offer's cheapest rate (``quote.cost_floor_per_second``)."""
    from gpuplan.pricing.quote import cost_floor_per_second

    if offer is None:
        return math.inf
    rate = cost_floor_per_second(offer)
    if rate is None:
        return 0.0
    per_second = float(rates.convert(rate, offer.currency, request.currency))
    return per_second * (count // offer.gpus) * float(evaluated.duration_seconds[index])


def select_rows(
    candidates: Sequence[PlanCandidate],
    request: PlanRequest,
    build: Any,
) -> list[dict[str, Any]]:
    """The priced rows a result needs, best first, pricing as few candidates as it can.

    Quoting is exact but slow, so candidates are priced in the order of their cost floors and
    only while one could still matter: the ``limit`` cheapest (by cost), or the ``limit``
    fastest (by time), within the budget; and every candidate that could be on the Pareto
    front, that is, faster than every priced row that costs no more than its floor. A
    candidate never priced costs more than the rows shown and is slower than a cheaper one."""
    budget = float(request.budget.amount) if request.budget is not None else math.inf
    deadline = request.deadline_seconds or math.inf
    open_candidates = [
        candidate
        for candidate in candidates
        if candidate.duration <= deadline
        and (candidate.floor <= budget or math.isinf(candidate.floor))
    ]
    by_floor = sorted(open_candidates, key=lambda candidate: (candidate.floor, candidate.duration))
    kept: list[dict[str, Any]] = []
    kept_costs: list[float] = []
    cost_then_duration: list[tuple[float, float]] = []
    priced: set[int] = set()

    def price(position: int, candidate: PlanCandidate) -> None:
        priced.add(position)
        row = build(candidate)
        if _within_limits(row, request):
            cost = float(row["cost"]["total"]) if row["cost"] else math.inf
            kept.append(row)
            bisect.insort(kept_costs, cost)
            bisect.insort(cost_then_duration, (cost, row["duration"]["seconds"]))

    cheapest_needed = request.limit if request.objective != "time" else 1
    for position, candidate in enumerate(by_floor):
        if len(kept_costs) >= cheapest_needed and candidate.floor > kept_costs[cheapest_needed - 1]:
            break
        price(position, candidate)
    for position, candidate in enumerate(by_floor):
        if position in priced:
            continue
        end = bisect.bisect_right(cost_then_duration, (candidate.floor, math.inf))
        fastest = min((duration for _, duration in cost_then_duration[:end]), default=math.inf)
        if candidate.duration < fastest:
            price(position, candidate)
    if request.objective == "time":
        order = sorted(range(len(by_floor)), key=lambda position: by_floor[position].duration)
        durations = sorted(row["duration"]["seconds"] for row in kept)
        for position in order:
            if position in priced:
                continue
            candidate = by_floor[position]
            if bisect.bisect_left(durations, candidate.duration) >= request.limit:
                break
            price(position, candidate)
            durations = sorted(row["duration"]["seconds"] for row in kept)
    kept.sort(key=lambda row: _sort_key(row, request.objective))
    return kept


def plan(request: PlanRequest) -> dict[str, Any]:
    """Search, price, filter and rank (module docstring). Returns the JSON-able result:
    ``{"job": {...}, "plans": [...], "pareto": [...], "evaluated": N, "seconds": t,
    "explanation": str, ...}``."""
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
    request = replace(request, currency=currency, today=request.today or dt.date.today())
    assert request.today is not None
    book = OfferBook.build(request.offers_file, discount_factors=request.discount_factors or None)
    machines, unoffered = _machines(request, book, gpus)

    evaluated_total = 0
    candidates: list[PlanCandidate] = []
    shortfalls: list[Shortfall] = []
    skipped: dict[str, str] = {}
    notices_by_offer: dict[str, list[Notice]] = {}
    by_gpu: dict[str, list[tuple[Machine, list[int]]]] = {}
    for machine in machines:
        counts = machine_gpu_counts(machine, scenario, request)
        if counts:
            by_gpu.setdefault(machine.gpu.id, []).append((machine, counts))
            continue
        sold = machine_gpu_counts(machine, scenario, request, lower_bound=False)
        if sold:
            shortfalls.append(weight_shortfall(scenario, machine.gpu, max(sold), request))
    layouts: dict[tuple[Any, ...], Candidates] = {}
    for gpu_id, group in by_gpu.items():
        try:
            results, count, shortfall = evaluate_machines(scenario, group, request, layouts)
        except (MissingSpecError, MissingPeakError) as missing:
            skipped[gpu_id] = str(missing)
            continue
        evaluated_total += count
        if shortfall is not None and not results:
            shortfalls.append(shortfall)
        for evaluated in results:
            machine = evaluated.machine
            for index in best_per_cluster_size(evaluated):
                gpu_count = int(evaluated.candidates.count[index])
                sellers = [offer for offer in machine.offers if _offer_sells(offer, gpu_count)]
                for offer in sellers or ([None] if not machine.offers else []):
                    candidates.append(
                        PlanCandidate(
                            evaluated,
                            index,
                            offer,
                            float(evaluated.duration_seconds[index]),
                            _cost_floor(offer, gpu_count, evaluated, index, request, rates),
                        )
                    )

    def build(candidate: PlanCandidate) -> dict[str, Any]:
        offer = candidate.offer
        if offer is not None and offer.id not in notices_by_offer:
            assert request.today is not None
            notices_by_offer[offer.id] = offer_notices(offer, request.today)
        return _plan_row(
            candidate.evaluated,
            candidate.index,
            offer,
            scenario,
            request,
            rates,
            notices_by_offer.get(offer.id, []) if offer is not None else [],
        )

    rows = select_rows(candidates, request, build)
    pareto = pareto_front(rows)
    if request.objective == "pareto":
        rows = pareto
    shown = rows[: request.limit]
    feasible_rows = rows
    if not shown and candidates:
        fastest = min(candidates, key=lambda candidate: candidate.duration)
        cheapest = min(candidates, key=lambda candidate: candidate.floor)
        feasible_rows = [build(fastest), build(cheapest)]
    result: dict[str, Any] = {
        "job": job_summary(request),
        "plans": shown,
        "pareto": [
            {
                "gpu": row["gpu"],
                "count": row["count"],
                "offer": row["cost"]["offer"] if row["cost"] else None,
                "days": row["duration"]["days"],
                "cost": row["cost"]["total"] if row["cost"] else None,
            }
            for row in pareto
        ],
        "evaluated": evaluated_total,
        "machines": len(machines),
        "seconds": time.perf_counter() - started,
        "currency": currency,
        "objective": request.objective,
        "skipped_gpus": list(skipped.values()),
        "unoffered_gpus": unoffered,
    }
    result["explanation"] = explain(shown, request, shortfalls, scenario, feasible_rows)
    return result


def _plan_row(
    evaluated: Evaluated,
    index: int,
    offer: Any,
    scenario: Scenario,
    request: PlanRequest,
    rates: Any,
    offer_notes: list[Notice],
) -> dict[str, Any]:
    job = scenario.job
    machine = evaluated.machine
    count = int(evaluated.candidates.count[index])
    strategy = strategy_at(evaluated, index, scenario)
    duration = float(evaluated.duration_seconds[index])
    startup = float(evaluated.startup_seconds[index])
    tokens_per_second = float(evaluated.tokens_per_second[index])
    cost = None
    if offer is not None:
        cost = _price(offer, count, duration, job.tokens, request, rates)
    notices = plan_notices(evaluated, index, count) + offer_notes
    topology = machine.topology
    if offer is not None and offer.topology is not None:
        topology = offer.topology
    return {
        "gpu": machine.gpu.id,
        "count": count,
        "nodes": count // topology.gpus,
        "machine": {
            **topology.to_dict(),
            "summary": topology.summary(),
            "listed": offer is None or offer.topology is not None,
            "network_assumed": bool(evaluated.network_assumed and count > topology.gpus),
        },
        "strategy": {
            **strategy.to_dict(),
            "framework": FRAMEWORK_CODES[int(evaluated.framework[index])],
        },
        "memory": {
            "peak_bytes": float(evaluated.peak_bytes[index]),
            "capacity_bytes": float(machine.gpu.memory_bytes),
            "headroom": float(evaluated.headroom[index]),
        },
        "throughput": {
            "step_seconds": float(evaluated.step_seconds[index]),
            "tokens_per_second": tokens_per_second,
            "tokens_per_second_per_gpu": tokens_per_second / count,
            "mfu": float(evaluated.mfu[index]),
            "communication_share": float(evaluated.communication_share[index]),
            "bubble_share": float(evaluated.bubble_share[index]),
        },
        "duration": {
            "seconds": duration,
            "days": duration / SECONDS_PER_DAY,
            "startup_seconds": startup,
            "training_seconds": duration - startup,
            "goodput": float(evaluated.goodput[index]),
        },
        "gpu_hours": count * duration / SECONDS_PER_HOUR,
        "cost": cost,
        "warnings": [notice.to_dict() for notice in notices],
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
            if not request.allow_unlisted_network:
                hints.append("--allow-unlisted-network to join single-GPU offers")
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
        f"{top['count']} x {top['gpu']} ({top['machine']['summary']}) wins on "
        f"{request.objective}: {top['duration']['days']:.1f} days at "
        f"{top['throughput']['mfu']:.0%} MFU"
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
