"""Machines: the offers of one GPU and topology, modelled once, and the sizes they sell."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from gpuplan.hardware.cluster import Cluster
from gpuplan.hardware.gpu import GPUSpec
from gpuplan.hardware.topology import InstanceTopology, assumed_topology
from gpuplan.scenario import Scenario
from gpuplan.search.request import PlanRequest

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

ALL_INSTANCE_COUNTS_UP_TO = 16


@dataclass(frozen=True)
class Machine:
    """A machine shape and the offers that sell it. ``listed`` is false when the offers state no
    topology (the GPU's usual server is assumed) and for the scenario's own hardware."""

    gpu: GPUSpec
    topology: InstanceTopology
    offers: tuple[Any, ...]
    listed: bool = True

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


def weight_bytes_lower_bound(scenario: Scenario) -> float:
    """Bytes of weights that must sit on the GPUs whatever the layout: bf16 (fp32 for fp32
    training), or about 4.4 bits per parameter for QLoRA's NF4 linear layers."""
    job = scenario.job
    bytes_per_param = 0.55 if job.method == "qlora" else (4.0 if job.precision == "fp32" else 2.0)
    return job.model.total_params * bytes_per_param


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
