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
from typing import Any

from gpuplan.errors import InputError
from gpuplan.hardware.gpu import GPUSpec
from gpuplan.limits import check_known_keys

NVLINK_LINKS = ("nvlink2", "nvlink3", "nvlink4", "nvlink5")
FABRIC_LINKS = (*NVLINK_LINKS, "xgmi", "hccs")
"""GPU fabrics with peer-to-peer by construction: NVLink/NVSwitch, AMD xGMI, Huawei HCCS."""
PCIE_LINKS = ("pcie3", "pcie4", "pcie5", "pcie6")
INTRA_NODE_LINKS = (*FABRIC_LINKS, *PCIE_LINKS, "none")
NETWORK_KINDS = ("infiniband", "roce", "efa", "ethernet", "none")

PCIE_X16_BANDWIDTH = {3: 15.75e9, 4: 31.5e9, 5: 63.0e9, 6: 121.0e9}
"""One direction of a x16 link, bytes per second (PCI-SIG base specifications): Gen3 8 GT/s and
Gen4 16 GT/s with 128b/130b coding (15.75 and 31.5 GB/s), Gen5 32 GT/s (63.0 GB/s), Gen6 64 GT/s
PAM4 with FLIT mode, 242 of 256 bytes carrying data (121 GB/s)."""

UNLISTED_NETWORK_GBPS = 10.0
"""Gb/s per instance assumed for an instance whose seller states no public bandwidth when the
user allows multi-instance plans on it anyway (``--allow-unlisted-network``): 10 Gb/s, the
Ethernet port every rented server has at least. An assumption, said in every output."""


class TopologyError(InputError):
    """A topology entry that cannot be read; the message names the entry and the key."""


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
        """``8 GPUs, nvlink4, infiniband 400 Gb/s per GPU`` for tables and reports."""
        link = self.intra_node if self.gpus > 1 else "1 GPU"
        if self.gpus > 1 and self.intra_node in PCIE_LINKS and not self.peer_to_peer:
            link += " (no P2P)"
        if self.has_cluster_network:
            network = f"{self.network} {self.network_bandwidth * 8 / 1e9:g} Gb/s/GPU"
        else:
            network = "no cluster network"
        return f"{self.gpus}x {link}, {network}" if self.gpus > 1 else f"{link}, {network}"

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


TOPOLOGY_KEYS = (
    "intra_node",
    "p2p",
    "network",
    "network_gbps_per_gpu",
    "public_gbps",
    "nvlink_domain",
    "source",
    "observed",
    "notes",
)


def _gbps(fields: Mapping[str, Any], key: str, where: str) -> float | None:
    value = fields.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise TopologyError(f"{where}.{key}: expected a positive number of Gb/s, got {value!r}")
    return float(value) * 1e9 / 8


def parse_topology(fields: Mapping[str, Any], gpus: int, where: str) -> InstanceTopology:
    """Read an offer's ``topology`` table (``network_gbps_per_gpu``, ``public_gbps`` in Gb/s)."""
    check_known_keys(fields, TOPOLOGY_KEYS, f"{where}.", TopologyError)
    for key in ("intra_node", "p2p", "network", "source", "observed"):
        if fields.get(key) in (None, ""):
            raise TopologyError(f"{where}: missing {key!r}")
    intra = str(fields["intra_node"])
    if intra not in INTRA_NODE_LINKS:
        raise TopologyError(
            f"{where}.intra_node: {intra!r} is not one of {', '.join(INTRA_NODE_LINKS)}"
        )
    if intra == "none" and gpus > 1:
        raise TopologyError(f"{where}.intra_node: an instance of {gpus} GPUs needs a link")
    if not isinstance(fields["p2p"], bool):
        raise TopologyError(f"{where}.p2p: expected true or false, got {fields['p2p']!r}")
    network = str(fields["network"])
    if network not in NETWORK_KINDS:
        raise TopologyError(
            f"{where}.network: {network!r} is not one of {', '.join(NETWORK_KINDS)}"
        )
    rate = _gbps(fields, "network_gbps_per_gpu", where)
    if network != "none" and rate is None:
        raise TopologyError(f"{where}.network_gbps_per_gpu: required for network {network!r}")
    if network == "none" and rate is not None:
        raise TopologyError(f"{where}.network_gbps_per_gpu: given for network 'none'")
    domain = fields.get("nvlink_domain", 0)
    if isinstance(domain, bool) or not isinstance(domain, int) or domain < 0:
        raise TopologyError(f"{where}.nvlink_domain: expected a whole number of GPUs")
    return InstanceTopology(
        gpus=gpus,
        intra_node=intra,
        peer_to_peer=bool(fields["p2p"]) or intra in FABRIC_LINKS,
        network=network,
        network_bandwidth=rate or 0.0,
        public_bandwidth=_gbps(fields, "public_gbps", where),
        nvlink_domain=int(domain),
        source=str(fields["source"]),
        observed=str(fields["observed"]),
        notes=str(fields.get("notes", "")),
    )


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
