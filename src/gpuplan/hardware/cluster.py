"""Cluster: how many GPUs of one type, how they are grouped into nodes, and how nodes talk.

Inside a node GPUs use the node's link: the GPU's own fabric (NVLink/NVSwitch, xGMI, HCCS) or
PCIe, with or without peer-to-peer (:mod:`gpuplan.hardware.topology`). Across nodes each GPU
has a share of the network: ``inter_node_bandwidth`` is per GPU, one direction, in bytes per
second, and ``network`` says what kind of network it is (the speed model charges RDMA fabrics
and TCP Ethernet differently).

A cluster comes either from a scenario (``hardware: {gpu, count, gpus_per_node, inter_node}``,
the GPU's usual server and a named network) or from an offer's :class:`InstanceTopology`
(:meth:`Cluster.of_instances`), so that what is modelled is what is rented.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuplan.errors import InputError
from gpuplan.hardware.gpu import GPUSpec
from gpuplan.hardware.topology import (
    FABRIC_LINKS,
    INTRA_NODE_LINKS,
    PCIE_LINKS,
    PCIE_X16_BANDWIDTH,
    InstanceTopology,
    pcie_generation,
)

INTER_NODE_NETWORKS: dict[str, tuple[str, float]] = {
    "ib-xdr-800g": ("infiniband", 800e9 / 8),
    "ib-ndr-400g": ("infiniband", 400e9 / 8),
    "ib-hdr-200g": ("infiniband", 200e9 / 8),
    "ib-edr-100g": ("infiniband", 100e9 / 8),
    "roce-400g": ("roce", 400e9 / 8),
    "roce-200g": ("roce", 200e9 / 8),
    "roce-100g": ("roce", 100e9 / 8),
    "efa-400g": ("efa", 400e9 / 8),
    "efa-50g": ("efa", 50e9 / 8),
    "eth-100g": ("ethernet", 100e9 / 8),
    "eth-25g": ("ethernet", 25e9 / 8),
    "eth-10g": ("ethernet", 10e9 / 8),
}
"""Named networks for scenarios: (kind, line rate per GPU in bytes/s, one direction). The names
carry the rate in Gb/s as the InfiniBand (XDR/NDR/HDR/EDR) and Ethernet standards define it;
one NIC per GPU."""

DEFAULT_INTER_NODE = {"nvlink": "ib-ndr-400g", "other": "roce-100g"}
"""Network of a scenario that names none: 400G InfiniBand per GPU for NVLink (HGX-class)
servers, 100G RoCE for PCIe servers. Plans take the network from the offer instead."""


class ClusterError(InputError):
    """A cluster description that cannot exist."""


def clock_share_under_power_limit(limit_watts: float, tdp_watts: float) -> float:
    """Clock a GPU holds under a power limit below its TDP, as a share of its rated clock:
    dynamic power goes as ``C V^2 f`` and voltage tracks frequency across the DVFS range, so power
    goes as ``f^3`` and the clock as ``(limit / TDP)^(1/3)`` (the CMOS scaling rule); a limit at or
    above the TDP changes nothing. Compute-bound kernels (GEMMs, attention) slow with the clock;
    HBM-bound ones do not."""
    return float(min(limit_watts / tdp_watts, 1.0) ** (1.0 / 3.0))


@dataclass(frozen=True)
class Cluster:
    """``count`` GPUs of type ``gpu`` in nodes of ``gpus_per_node``.

    ``intra_node_link`` and ``peer_to_peer`` default to the GPU's catalog entry;
    ``network``/``inter_node_bandwidth`` to the named ``inter_node`` network (or the default
    one), one NIC per GPU unless ``nics_per_node`` says fewer: the node's NICs are then shared,
    ``rate * nics_per_node / gpus_per_node`` per GPU; ``nvlink_domain`` to the GPU's NVLink
    domain. ``network_assumed`` marks a network the seller does not list (the user allowed the
    plan anyway).
    """

    gpu: GPUSpec
    count: int = 1
    gpus_per_node: int = 0
    inter_node: str = ""
    intra_node_link: str = ""
    peer_to_peer: bool | None = None
    network: str = ""
    inter_node_bandwidth: float = 0.0
    nvlink_domain: int = 0
    network_assumed: bool = False
    power_limit_watts: float | None = None
    nics_per_node: int = 0
    host_memory_bytes: float | None = None
    """RAM per node in bytes where known (an offer's ``ram_gb``, or ``hardware.host_memory``):
    what CPU offload may fill (``estimate/memory.py`` ``host_memory``)."""

    def __post_init__(self) -> None:
        if self.host_memory_bytes is not None and not self.host_memory_bytes > 0:
            raise ClusterError.of("error.scenario_host_memory", value=repr(self.host_memory_bytes))
        if self.power_limit_watts is not None and not self.power_limit_watts > 0:
            raise ClusterError.of("error.cluster_power_limit", value=repr(self.power_limit_watts))
        if self.power_limit_watts is not None and self.gpu.tdp_watts is None:
            raise ClusterError.of("error.cluster_no_tdp", gpu=self.gpu.id)
        if self.count < 1:
            raise ClusterError.of("error.cluster_count", value=self.count)
        per_node = self.gpus_per_node or min(self.gpu.gpus_per_node, self.count)
        if per_node < 1:
            raise ClusterError.of(
                "error.at_least_one", field="hardware.gpus_per_node", value=per_node
            )
        object.__setattr__(self, "gpus_per_node", per_node)
        link = self.intra_node_link or self.gpu.intra_node_link
        if link not in INTRA_NODE_LINKS:
            raise ClusterError.of(
                "error.not_one_of",
                field="hardware.intra_node",
                value=repr(link),
                accepted=", ".join(INTRA_NODE_LINKS),
            )
        object.__setattr__(self, "intra_node_link", link)
        if self.peer_to_peer is None:
            object.__setattr__(self, "peer_to_peer", self.gpu.peer_to_peer)
        if not self.network:
            name = self.inter_node or (
                DEFAULT_INTER_NODE["nvlink"]
                if self.gpu.intra_node_link.startswith("nvlink")
                else DEFAULT_INTER_NODE["other"]
            )
            if name not in INTER_NODE_NETWORKS:
                raise ClusterError.of(
                    "error.not_one_of",
                    field="hardware.inter_node",
                    value=repr(name),
                    accepted=", ".join(INTER_NODE_NETWORKS),
                )
            kind, rate = INTER_NODE_NETWORKS[name]
            if self.nics_per_node:
                if not 1 <= self.nics_per_node <= per_node:
                    raise ClusterError.of(
                        "error.cluster_nics", gpus=per_node, value=self.nics_per_node
                    )
                rate = rate * self.nics_per_node / per_node
            object.__setattr__(self, "inter_node", name)
            object.__setattr__(self, "network", kind)
            object.__setattr__(self, "inter_node_bandwidth", rate)
        if not self.nvlink_domain:
            object.__setattr__(self, "nvlink_domain", self.gpu.nvlink_domain_size)

    @classmethod
    def of_instances(
        cls,
        gpu: GPUSpec,
        topology: InstanceTopology,
        instances: int,
        allow_unlisted_network: bool = False,
    ) -> Cluster:
        """``instances`` instances of an offer's topology. Without a cluster network a job spans
        one instance (or one NVLink domain that spans instances, a GB200 NVL72 rack), unless
        ``allow_unlisted_network``: then the instances talk over their public Ethernet
        (:meth:`InstanceTopology.unlisted_network_bandwidth`)."""
        within_domain = instances * topology.gpus <= max(topology.nvlink_domain, topology.gpus)
        assumed = not topology.has_cluster_network and not within_domain
        if assumed and not allow_unlisted_network:
            raise ClusterError.of("error.cluster_unlisted_network", instances=instances)
        return cls(
            gpu=gpu,
            count=instances * topology.gpus,
            gpus_per_node=topology.gpus,
            inter_node="unlisted" if assumed else f"{topology.network} (offer)",
            intra_node_link=topology.intra_node if topology.gpus > 1 else gpu.intra_node_link,
            peer_to_peer=topology.peer_to_peer,
            network="ethernet" if assumed else topology.network,
            inter_node_bandwidth=(
                topology.unlisted_network_bandwidth() if assumed else topology.network_bandwidth
            ),
            nvlink_domain=topology.nvlink_domain or topology.gpus,
            network_assumed=assumed,
        )

    @property
    def nodes(self) -> int:
        return -(-self.count // self.gpus_per_node)

    @property
    def intra_node_kind(self) -> str:
        """``nvlink`` for GPU fabrics, ``pcie`` for PCIe with peer-to-peer, ``host`` for PCIe
        without it, where every transfer is staged through host memory."""
        if self.intra_node_link in FABRIC_LINKS:
            return "nvlink"
        return "pcie" if self.peer_to_peer else "host"

    @property
    def intra_node_bandwidth(self) -> float:
        """One direction per GPU inside a node, bytes/s: the GPU's fabric bandwidth, or a x16
        link of the lower of the node's and the GPU's PCIe generation."""
        link = self.intra_node_link
        if link in PCIE_LINKS:
            generation = min(pcie_generation(link), self.gpu.pcie_generation)
            return PCIE_X16_BANDWIDTH[generation]
        return float(self.gpu.intra_node_bandwidth)

    @property
    def scale_up_domain(self) -> int:
        """GPUs that reach each other without the network: the node, or the whole NVLink domain
        when it spans several nodes (GB200/GB300 NVL72: 72 GPUs in trays of 4)."""
        if self.intra_node_kind == "nvlink" and self.nvlink_domain > self.gpus_per_node:
            return self.nvlink_domain
        return self.gpus_per_node

    @property
    def capacity_bytes(self) -> int:
        return self.gpu.memory_bytes

    @property
    def clock_share(self) -> float:
        """Share of the kernel benchmarks' clock the GPUs hold through a training step: the
        board's sustained share (``GPUSpec.sustained_clock_share``) times what a power limit
        leaves of it (:func:`clock_share_under_power_limit`)."""
        sustained = self.gpu.sustained_clock_share()
        if self.power_limit_watts is None or self.gpu.tdp_watts is None:
            return sustained
        return sustained * clock_share_under_power_limit(self.power_limit_watts, self.gpu.tdp_watts)

    def describe(self) -> dict[str, object]:
        """JSON view of the modelled machine."""
        return {
            "gpu": self.gpu.id,
            "count": self.count,
            "gpus_per_node": self.gpus_per_node,
            "nodes": self.nodes,
            "intra_node": self.intra_node_link,
            "p2p": self.peer_to_peer,
            "intra_node_bytes_per_second": self.intra_node_bandwidth,
            "inter_node": self.inter_node,
            "network": self.network,
            "network_bytes_per_second_per_gpu": self.inter_node_bandwidth,
            "nics_per_node": self.nics_per_node or self.gpus_per_node,
            "network_assumed": self.network_assumed,
            "power_limit_watts": self.power_limit_watts,
            "clock_share": self.clock_share,
            "host_memory_bytes_per_node": self.host_memory_bytes,
        }
