"""Cluster: how many GPUs of one type, how they are grouped into nodes, and how nodes talk.

Inside a node GPUs use the GPU's own link (NVLink/NVSwitch, XGMI, HCCS or PCIe, from the
GPU catalog). Across nodes each GPU has a share of the network: ``inter_node_bandwidth`` is
per GPU, one direction, in bytes per second.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuplan.errors import InputError
from gpuplan.hardware.gpu import GPUSpec

INTER_NODE_NETWORKS: dict[str, float] = {
    "ib-xdr-800g": 800e9 / 8,
    "ib-ndr-400g": 400e9 / 8,
    "ib-hdr-200g": 200e9 / 8,
    "ib-edr-100g": 100e9 / 8,
    "roce-400g": 400e9 / 8,
    "roce-200g": 200e9 / 8,
    "roce-100g": 100e9 / 8,
    "eth-100g": 100e9 / 8,
    "eth-25g": 25e9 / 8,
    "eth-10g": 10e9 / 8,
}
"""Line rate per GPU (one NIC per GPU), one direction, bytes/s: the names carry the rate in
Gb/s as the InfiniBand (XDR/NDR/HDR/EDR) and Ethernet standards define it."""

DEFAULT_INTER_NODE = {"nvlink": "ib-ndr-400g", "other": "roce-100g"}
"""Default network: 400G InfiniBand per GPU for NVLink (HGX-class) servers, 100G Ethernet for
PCIe servers, the common rental configurations."""


class ClusterError(InputError):
    """A cluster description that cannot exist."""


@dataclass(frozen=True)
class Cluster:
    """``count`` GPUs of type ``gpu`` in nodes of ``gpus_per_node``."""

    gpu: GPUSpec
    count: int = 1
    gpus_per_node: int = 0
    inter_node: str = ""

    def __post_init__(self) -> None:
        if self.count < 1:
            raise ClusterError(f"hardware.count: must be at least 1 GPU, got {self.count}")
        per_node = self.gpus_per_node or min(self.gpu.gpus_per_node, self.count)
        if per_node < 1:
            raise ClusterError(f"hardware.gpus_per_node: must be at least 1, got {per_node}")
        object.__setattr__(self, "gpus_per_node", per_node)
        network = self.inter_node or (
            DEFAULT_INTER_NODE["nvlink"]
            if self.gpu.intra_node_link.startswith("nvlink")
            else DEFAULT_INTER_NODE["other"]
        )
        if network not in INTER_NODE_NETWORKS:
            raise ClusterError(
                f"hardware.inter_node: {network!r} is not one of {', '.join(INTER_NODE_NETWORKS)}"
            )
        object.__setattr__(self, "inter_node", network)

    @property
    def nodes(self) -> int:
        return -(-self.count // self.gpus_per_node)

    @property
    def inter_node_bandwidth(self) -> float:
        return INTER_NODE_NETWORKS[self.inter_node]

    @property
    def capacity_bytes(self) -> int:
        return self.gpu.memory_bytes
