"""Memory, speed, reliability and start-up of every layout of the machines of one GPU."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from gpuplan.estimate.comm import ClusterRows
from gpuplan.estimate.memory import HOST_MEMORY_MARGIN, host_memory_fits
from gpuplan.estimate.startup import startup_seconds
from gpuplan.estimate.step_terms import LayoutTerms
from gpuplan.estimate.time import COMMUNICATION_PARTS, estimate_step_time
from gpuplan.hardware.cluster import Cluster
from gpuplan.hardware.gpu import GPUSpec
from gpuplan.scenario import Scenario
from gpuplan.search.layout_cache import LayoutKey, MemoryKey, SearchCache
from gpuplan.search.layouts import Candidates
from gpuplan.search.machines import Machine, weight_bytes_lower_bound
from gpuplan.search.request import LayoutLimitError, PlanRequest
from gpuplan.strategy import OFFLOAD, RECOMPUTE, Strategy

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

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
    host_bytes: FloatArray | None = None
    """Host memory per node that CPU offload takes (``memory.host_memory``)."""


@dataclass
class Shortfall:
    """The layout that came closest to fitting when nothing did: in GPU memory (``kind``
    ``gpu``: the peak per GPU against the usable memory), or in host memory (``host``: a layout
    that fits the GPUs only with CPU offload, whose offloaded states per node exceed the usable
    RAM of every offer of the machine)."""

    gpu: str
    count: int
    peak_bytes: float
    usable_bytes: float
    kind: str = "gpu"


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


@dataclass(frozen=True)
class GroupMemory:
    """The memory of the layouts of one GPU's machines against that GPU's capacity and each
    machine's RAM per node (``host_capacity_bytes``, NaN where unknown)."""

    peak_bytes: FloatArray
    host_bytes: FloatArray
    host_capacity_bytes: FloatArray
    capacity_bytes: float
    usable_bytes: float

    @property
    def fits(self) -> npt.NDArray[np.bool_]:
        """Peak within the usable memory: the capacity less the request's headroom."""
        return self.peak_bytes <= self.usable_bytes

    @property
    def host_fits(self) -> npt.NDArray[np.bool_]:
        return host_memory_fits(self.host_bytes, self.host_capacity_bytes)

    @property
    def headroom(self) -> FloatArray:
        """Share of the capacity left free at the peak (``MemoryEstimate.headroom``)."""
        return np.asarray(1.0 - self.peak_bytes / self.capacity_bytes, dtype=float)


def evaluate_machines(
    scenario: Scenario,
    group: Sequence[tuple[Machine, Sequence[int]]],
    request: PlanRequest,
    cache: SearchCache | None = None,
    layout_budget: int | None = None,
) -> tuple[list[Evaluated], int, Shortfall | None]:
    """Evaluate every layout of every machine of one GPU type at once, each on its own
    topology (``comm.ClusterRows``): (feasible plans per machine, layouts evaluated, closest
    miss). A machine on which nothing fits is tried again with optimizer offload. ``cache``
    keeps the layouts, their memory, step terms and goodput across the GPU types of one search
    (:class:`SearchCache`).
    Past ``layout_budget`` layouts, :class:`LayoutLimitError` is raised before evaluating."""
    known = SearchCache() if cache is None else cache
    clusters = machine_clusters(group, request, known)

    def layout_key(index: int, offload: bool) -> LayoutKey:
        return (clusters[index].scale_up_domain, tuple(group[index][1]), offload)

    gpu = group[0][0].gpu
    usable = gpu.memory_bytes * (1 - request.headroom)
    node_sizes = np.asarray([machine.topology.gpus for machine, _ in group])
    scenario_ram = scenario.cluster.host_memory_bytes if scenario.cluster is not None else None
    host_memory = np.asarray([machine_host_memory(machine, scenario_ram) for machine, _ in group])
    results: list[Evaluated] = []
    evaluated_count = 0
    shortfall: Shortfall | None = None
    pending = list(range(len(group)))
    for offload in (False, True):
        parts = [
            (index, known.candidates(scenario, layout_key(index, offload))) for index in pending
        ]
        parts = [(index, part) for index, part in parts if len(part)]
        if not parts:
            continue
        counts = np.concatenate([part.count for _, part in parts])
        rows = np.concatenate([np.full(len(part), index) for index, part in parts])
        evaluated_count += len(counts)
        if layout_budget is not None and evaluated_count > layout_budget:
            raise LayoutLimitError.of("error.layout_limit", most=f"{request.max_layouts:,}")
        keys = [(layout_key(index, offload), int(node_sizes[index])) for index, _ in parts]
        known.estimate(scenario, keys)
        memories = [known.memory[key] for key in keys]
        memory = GroupMemory(
            peak_bytes=np.concatenate([part.peak_bytes for part in memories]),
            host_bytes=np.concatenate([part.host_bytes for part in memories]),
            host_capacity_bytes=np.asarray(host_memory[rows], dtype=float),
            capacity_bytes=float(gpu.memory_bytes),
            usable_bytes=usable,
        )
        on_gpu, on_host = memory.fits, memory.host_fits
        fits = on_gpu & on_host
        shortfall = _closest_miss(gpu.id, memory, counts, on_gpu, on_host, shortfall)
        masks = np.split(fits, np.cumsum([len(part) for _, part in parts])[:-1])
        blocks = [
            (index, int(np.count_nonzero(mask)))
            for (index, _), mask in zip(parts, masks, strict=True)
            if mask.any()
        ]
        fitted = {index for index, _ in blocks}
        pending = [index for index in pending if index not in fitted]
        if fitted:
            layout_keys = [layout_key(index, offload) for index, _ in parts]
            feasible, terms, goodput = known.feasible(scenario, layout_keys, masks)
            results += _evaluate_feasible(
                scenario, group, clusters, feasible, terms, goodput, blocks, memory, fits, request
            )
        if not pending:
            break
    return results, evaluated_count, shortfall


def _closest_miss(
    gpu_id: str,
    memory: GroupMemory,
    counts: IntArray,
    on_gpu: npt.NDArray[np.bool_],
    on_host: npt.NDArray[np.bool_],
    shortfall: Shortfall | None,
) -> Shortfall | None:
    """The layout that came closest to fitting, against the closest miss so far: in host
    memory when every layout that fits the GPUs misses the RAM, else on the GPUs."""
    missed = ~on_gpu
    host_missed = on_gpu & ~on_host
    if np.any(host_missed) and not np.any(on_gpu & on_host):
        closest = int(np.flatnonzero(host_missed)[np.argmin(memory.host_bytes[host_missed])])
        return Shortfall(
            gpu_id,
            int(counts[closest]),
            float(memory.host_bytes[closest]),
            float(memory.host_capacity_bytes[closest]) * (1 - HOST_MEMORY_MARGIN),
            kind="host",
        )
    if np.any(missed) and (shortfall is None or shortfall.kind == "gpu"):
        closest = int(np.flatnonzero(missed)[np.argmin(memory.peak_bytes[missed])])
        if shortfall is None or memory.peak_bytes[closest] < shortfall.peak_bytes:
            return Shortfall(
                gpu_id,
                int(counts[closest]),
                float(memory.peak_bytes[closest]),
                memory.usable_bytes,
            )
    return shortfall


def machine_clusters(
    group: Sequence[tuple[Machine, Sequence[int]]],
    request: PlanRequest,
    cache: SearchCache | None = None,
) -> list[Cluster]:
    """Each machine of ``group`` as a cluster of its largest GPU count (kept in ``cache``)."""
    clusters = {} if cache is None else cache.clusters
    found = []
    for machine, counts in group:
        key = (id(machine), max(counts))
        if key not in clusters:
            cluster = machine.cluster(
                max(counts) // machine.topology.gpus,
                request.allow_unlisted_network or not machine.offers,
            )
            clusters[key] = (machine, cluster)
        found.append(clusters[key][1])
    return found


def estimate_first_pass(
    scenario: Scenario,
    groups: Sequence[Sequence[tuple[Machine, Sequence[int]]]],
    request: PlanRequest,
    cache: SearchCache,
) -> None:
    """Estimate in one call the memory of every machine's layouts without offload, the first
    pass of :func:`evaluate_machines` for each group (the GPUs of one type). Nothing is
    estimated when they exceed the request's ``max_layouts``: the search stops before."""
    cache.usable_bytes = max(
        (group[0][0].gpu.memory_bytes * (1 - request.headroom) for group in groups),
        default=math.inf,
    )
    keys: list[MemoryKey] = []
    layouts = 0
    for group in groups:
        for (machine, counts), cluster in zip(
            group, machine_clusters(group, request, cache), strict=True
        ):
            key = (cluster.scale_up_domain, tuple(counts), False)
            layouts += len(cache.candidates(scenario, key))
            if request.max_layouts is not None and layouts > request.max_layouts:
                return
            keys.append((key, machine.topology.gpus))
    cache.estimate(scenario, keys)


def _evaluate_feasible(
    scenario: Scenario,
    group: Sequence[tuple[Machine, Sequence[int]]],
    clusters: Sequence[Cluster],
    feasible: Candidates,
    terms: LayoutTerms,
    goodput: FloatArray,
    blocks: Sequence[tuple[int, int]],
    memory: GroupMemory,
    fits: npt.NDArray[np.bool_],
    request: PlanRequest,
) -> list[Evaluated]:
    """Speed and start-up of the layouts that fit, with their ``goodput``, split back per
    machine (``blocks``: each machine's index in ``group`` and its count of layouts, one block after
    the other)."""
    job = scenario.job
    used = [index for index, _ in blocks]
    ends = np.cumsum([size for _, size in blocks]).tolist()
    local = np.repeat(np.arange(len(blocks)), [size for _, size in blocks])
    fabric = ClusterRows(tuple(clusters[index] for index in used), local)
    step = estimate_step_time(
        job,
        fabric,
        feasible.layout,
        flash_attention=scenario.strategy.flash_attention,
        measured=request.measured,
        terms=terms,
    )
    node_size = np.asarray([group[index][0].topology.gpus for index in used])[local]
    startup = startup_seconds(job, -(-feasible.count // node_size), node_size, scenario.startup)
    training = max(job.tokens, 1) / (step.tokens_per_second * goodput)
    communication = sum(step.breakdown[name] for name in COMMUNICATION_PARTS)
    framework = terms.codes
    peak, host = memory.peak_bytes[fits], memory.host_bytes[fits]
    headroom = np.asarray(1.0 - peak / memory.capacity_bytes, dtype=float)
    duration = startup + training
    communication_share = np.asarray(communication / step.step_seconds, dtype=float)
    bubble_share = np.asarray(step.breakdown["bubble"] / step.step_seconds, dtype=float)
    results = []
    for index, start, end in zip(used, [0, *ends[:-1]], ends, strict=True):
        mask = slice(start, end)
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
                duration_seconds=duration[mask],
                framework=framework[mask],
                communication_share=communication_share[mask],
                bubble_share=bubble_share[mask],
                network_assumed=clusters[index].network_assumed,
                host_bytes=host[mask],
            )
        )
    return results


def machine_host_memory(machine: Machine, scenario_ram: float | None = None) -> float:
    """RAM per node of a machine, bytes: the largest of its offers' ``ram_gb`` when every
    offer states it, NaN otherwise (an offer of unknown RAM may hold any offload plan; each
    offer is checked again when it is priced, :func:`offer_holds_host_memory`). The scenario's
    own hardware, sold by no offer, has the scenario's ``hardware.host_memory``."""
    if not machine.offers:
        return float("nan") if scenario_ram is None else float(scenario_ram)
    sizes = [offer.ram_gb for offer in machine.offers]
    if any(size is None for size in sizes):
        return float("nan")
    return float(max(sizes)) * 1e9


def offer_holds_host_memory(offer: Any, host_bytes: float) -> bool:
    """Whether an offer's instance RAM holds ``host_bytes`` of offloaded states per node
    within :data:`~gpuplan.estimate.memory.HOST_MEMORY_MARGIN` (true when it states no RAM)."""
    if host_bytes <= 0 or offer is None or offer.ram_gb is None:
        return True
    return bool(host_bytes <= offer.ram_gb * 1e9 * (1 - HOST_MEMORY_MARGIN))


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
