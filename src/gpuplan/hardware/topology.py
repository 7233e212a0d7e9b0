"""Instance topology: what one rented machine is, as its seller states it.

An offer sells instances of ``gpus`` GPUs. Inside an instance the GPUs talk over a link
(``intra_node``): an NVLink generation (NVSwitch on 8-GPU boards), AMD's xGMI, Huawei's HCCS,
or PCIe of some generation, with or without GPU-to-GPU peer-to-peer (GeForce cards have none,
so their traffic crosses host memory). Between instances a job uses the network the seller
offers for it (``network``): InfiniBand, RoCE, AWS EFA, plain Ethernet, or none. Rates are per
GPU and one direction, the way a collective sees them; sellers quote the instance's aggregate in
Gb/s, which the catalog divides by the GPUs.

A topology carries its own ``source`` and ``observed`` date like every catalog number.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from gpuplan.hardware.gpu import GPUSpec

IntraNodeLink = Literal[
    "nvlink2", "nvlink3", "nvlink4", "nvlink5", "xgmi", "hccs", "mlulink", "pcie3", "pcie4", "pcie5",
    "pcie6", "none",
]  # fmt: skip
INTRA_NODE_LINKS: tuple[str, ...] = get_args(IntraNodeLink)
NVLINK_LINKS = tuple(link for link in INTRA_NODE_LINKS if link.startswith("nvlink"))
FABRIC_LINKS = (*NVLINK_LINKS, "xgmi", "hccs", "mlulink")
"""GPU fabrics with peer-to-peer by construction: NVLink/NVSwitch, AMD xGMI, Huawei HCCS,
Cambricon MLU-Link."""
PCIE_LINKS = tuple(link for link in INTRA_NODE_LINKS if link.startswith("pcie"))
NetworkKind = Literal["infiniband", "roce", "efa", "ethernet", "none"]
NETWORK_KINDS: tuple[str, ...] = get_args(NetworkKind)

PCIE_X16_BANDWIDTH = {3: 15.75e9, 4: 31.5e9, 5: 63.0e9, 6: 121.0e9}
"""One direction of a x16 link, bytes per second (PCI-SIG base specifications): Gen3 8 GT/s and
Gen4 16 GT/s with 128b/130b coding (15.75 and 31.5 GB/s), Gen5 32 GT/s (63.0 GB/s), Gen6 64 GT/s
PAM4 with FLIT mode, 242 of 256 bytes carrying data (121 GB/s)."""

UNLISTED_NETWORK_GBPS = 10.0
"""Gb/s per instance assumed for an instance whose seller states no public bandwidth when the
user allows multi-instance plans on it anyway (``--allow-unlisted-network``): 10 Gb/s, the
Ethernet port every rented server has at least. An assumption, said in every output."""


def pcie_generation(link: str) -> int:
    """``pcie4`` -> 4."""
    return int(link.removeprefix("pcie"))


@dataclass(frozen=True)
class InstanceTopology:
    """One instance as sold: its GPUs, their link, and the network between instances.

    ``network_bandwidth`` is bytes per second per GPU, one direction (0 without a network);
    ``public_bandwidth`` the instance's ordinary Ethernet in bytes per second, when stated;
    ``nvlink_domain`` the GPUs one NVLink domain spans when it spans several instances (GB200
    NVL72: 72), else 0.
    """

    gpus: int
    intra_node: str
    peer_to_peer: bool
    network: str
    network_bandwidth: float = 0.0
    public_bandwidth: float | None = None
    nvlink_domain: int = 0
    source: str = ""
    observed: str = ""
    notes: str = ""

    @property
    def has_cluster_network(self) -> bool:
        return self.network != "none"

    def unlisted_network_bandwidth(self) -> float:
        """Per-GPU bytes/s of the instance's public Ethernet (or :data:`UNLISTED_NETWORK_GBPS`)."""
        per_instance = self.public_bandwidth or UNLISTED_NETWORK_GBPS * 1e9 / 8
        return per_instance / self.gpus

    def summary(self) -> str:
        """``8x nvlink4, infiniband 400 Gb/s/GPU`` for tables and reports (:func:`machine_summary`)."""
        return machine_summary(self.to_dict())

    def to_dict(self) -> dict[str, Any]:
        return {
            "gpus": self.gpus,
            "intra_node": self.intra_node,
            "p2p": self.peer_to_peer,
            "network": self.network,
            "network_bytes_per_second_per_gpu": self.network_bandwidth,
            "public_bytes_per_second": self.public_bandwidth,
            "nvlink_domain": self.nvlink_domain,
            "source": self.source,
            "observed": self.observed,
            "notes": self.notes,
        }


def assumed_topology(gpu: GPUSpec, gpus: int, source: str) -> InstanceTopology:
    """The GPU's usual server for an instance whose seller states no topology: its catalog link
    and peer-to-peer, no network between instances."""
    return InstanceTopology(
        gpus=gpus,
        intra_node=gpu.intra_node_link if gpus > 1 else "none",
        peer_to_peer=gpu.peer_to_peer,
        network="none",
        source=source,
    )


def machine_summary(machine: Mapping[str, Any], lang: str = "en") -> str:
    """An instance's topology (``InstanceTopology.to_dict``) in ``lang``:
    ``8x nvlink4, infiniband 400 Gb/s/GPU``, ``8x pcie4 (no P2P), no cluster network``,
    ``1 GPU, no cluster network``."""
    from gpuplan.i18n import translate

    gpus = machine["gpus"]
    link = machine["intra_node"] if gpus > 1 else translate("machine.one_gpu", lang)
    if gpus > 1 and machine["intra_node"] in PCIE_LINKS and not machine["p2p"]:
        link += translate("machine.no_p2p", lang)
    if machine["network"] != "none":
        gbps = machine["network_bytes_per_second_per_gpu"] * 8 / 1e9
        network = f"{machine['network']} {gbps:g} Gb/s/GPU"
    else:
        network = translate("machine.no_network", lang)
    separator = translate("machine.separator", lang)
    return f"{gpus}x {link}{separator}{network}" if gpus > 1 else f"{link}{separator}{network}"
