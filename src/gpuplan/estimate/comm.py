"""Collective communication cost on a cluster's real topology.

**Bus bandwidth** (NVIDIA/nccl-tests ``doc/PERFORMANCE.md``). For a collective on ``n`` ranks
over a message of ``S`` bytes taking ``t`` seconds, ``algbw = S / t`` and ``busbw = algbw *
factor``: all-reduce ``2(n-1)/n``; all-gather, reduce-scatter and all-to-all ``(n-1)/n``;
broadcast, reduce and point-to-point 1. ``S`` is what nccl-tests calls the size: the whole
array for all-gather and reduce-scatter, one rank's send buffer for all-to-all. busbw is
comparable to the bottleneck link's bandwidth whatever ``n``, so a collective takes
``t = S * factor / busbw``.

**Time** (:func:`collective_seconds`): ``latency + S * factor / (bandwidth * efficiency(S))``.
The efficiency grows with the message, ``efficiency(S) = peak * S / (S + half_saturation)``, and
the latency follows NCCL's ring model (NVIDIA/nccl ``src/graph/tuning.cc``): a base latency plus
one per-hop latency for each of the ring's steps, network hops costing more than NVLink hops.
Like NCCL, each call takes the fastest of three protocols (:func:`protocol_seconds`): Simple;
LL, whose hops cost least at half the bandwidth, for the smallest messages; and LL128, between
the two at 0.92 of the bandwidth, on nodes whose GPUs talk over NVLink.

**Topology** (:func:`group_placement`). Ranks are numbered tp (innermost), cp, ep-within-dp,
dp, pp (outermost), Megatron-Core's default order (``megatron/core/parallel_state.py``,
``order="tp-cp-ep-dp-pp"``), so a group is ``n`` ranks at a fixed ``stride``
(:func:`parallel_groups`). It stays on the scale-up fabric (NVLink, NVSwitch, or PCIe in a PCIe
server) when ``n * stride`` fits one scale-up domain: a node, or a whole NVL72 rack for
GB200/GB300. Otherwise it crosses the network, one NIC per GPU at
``cluster.inter_node_bandwidth`` (a rail-optimized fabric).

**Across domains** NCCL reduces inside each node over NVLink and across nodes over the NICs, and
pipelines the two. gpuplan charges the slower of the two parts: with ``p`` group ranks in each
of ``k`` domains, the network part of an all-reduce moves ``2(k-1)/k * S`` through the node's
``p`` NICs together, the NVLink part ``2(p-1)/p * S`` through each GPU's link. This is the model
under which ml-engineering derives the per-NIC rate ``busbw * (k-1)/(n-1)`` from a multi-node
all-reduce (shared/references/verification-and-style.md, section 1.1.2). A flat NCCL ring
would move ``2(n-1)/n * S`` instead of ``2(k-1)/k * S`` across nodes, up to twice as much on two
nodes, where NCCL's double binary tree moves what the bound says. NVLink SHARP (NVLS)
and in-network reduction, which raise all-reduce busbw above the link rate (H200: 482 GB/s of
450), are not modelled; measured efficiencies can stand in for them.

Every constant is a named default that callers may override with fitted or measured values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from gpuplan.errors import InputError
from gpuplan.hardware.cluster import Cluster
from gpuplan.strategy import Layout

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
ArrayLike = float | int | npt.NDArray[np.float64] | npt.NDArray[np.int64]

COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "p2p")
LINK_KINDS = ("nvlink", "pcie", "host", "network", "ethernet")


@dataclass(frozen=True)
class LinkModel:
    """How close a kind of link gets to its nominal bandwidth, and what each ring hop costs.

    ``peak_efficiency`` is the share of the nominal one-direction bandwidth that busbw reaches on
    large messages; ``half_saturation_bytes`` the message size at which it reaches half of that;
    ``hop_latency`` the seconds each ring step adds under NCCL's Simple protocol,
    ``ll128_hop_latency`` under LL128 (NaN where NCCL does not enable LL128), ``ll_hop_latency``
    under LL (NVIDIA/nccl ``src/graph/tuning.cc`` ``hwLatencies``, Ring).
    """

    peak_efficiency: float | FloatArray
    half_saturation_bytes: float | FloatArray
    hop_latency: float | FloatArray
    ll128_hop_latency: float | FloatArray = float("nan")
    ll_hop_latency: float | FloatArray = 1.0e-6

    def efficiency(self, size_bytes: ArrayLike) -> FloatArray:
        """``peak * S / (S + half_saturation)``; zero for an empty message."""
        size = np.asarray(size_bytes, dtype=float)
        return self.peak_efficiency * size / np.maximum(size + self.half_saturation_bytes, 1e-300)


NVLINK = LinkModel(
    peak_efficiency=0.78,
    half_saturation_bytes=4 * 2**20,
    hop_latency=3.4e-6,
    ll128_hop_latency=1.9e-6,
    ll_hop_latency=0.6e-6,
)
"""NVLink/NVSwitch (and other GPU fabrics: AMD XGMI, Huawei HCCS). Peak: nccl-tests all-reduce
busbw on 8xA100 is 234.89 GB/s of 300 (78 %), on 8xH200 with rings 367.61 of 450 (82 %), on
8xB200 682.2 of 900 (76 %) (ml-engineering, shared/references/verification-and-style.md 1.1.2);
NCCL itself caps A100 busbw at 235 GB/s (``tuning.cc``). Half saturation: fitted, with NCCL's
ring latency below, to vTrain's A100 8-GPU all-reduce table (about 20 GB/s busbw at 1 MB, 130 at
16 MB, 229 at 1 GB; shared/references/modeling-tools.md 4.3), which gives 0.77 and 3.9 MB,
kept as the nccl-tests peak 0.78 and 4 MiB. Hop
latency: NCCL ``tuning.cc`` ``hwLat[NVLINK][Ring][Simple]`` = 3.4 us, LL128 1.9 us, LL 0.6 us."""

HOST = LinkModel(peak_efficiency=0.45, half_saturation_bytes=4 * 2**20, hop_latency=5.7e-6)
"""PCIe without peer-to-peer (GeForce cards): NCCL's SHM transport stages every transfer in
host memory, so each byte crosses the sender's link into a pinned host buffer and the receiver's
link out of it, and all of a node's traffic meets in the root complex and host DRAM. 8xRTX 5090
reach 28 GB/s all-reduce busbw on PCIe 5.0 (63 GB/s), 44 %; 4 of them 35 GB/s (NVIDIA/nccl
issue 1639, dual Xeon 8480+; the maintainer: "with 8 GPUs, that's 8 flows at 28GB/s in both
directions", bound by what the CPU and memory deliver); the reporter saw "little difference"
from 8xRTX 4090. 0.45 is the 8-GPU figure, the size rental servers come in. Half saturation as
NVLink (no public sweep). Hop latency: NCCL ``hwLat[PCI][Ring][Simple]`` = 5.7 us."""

PCIE = LinkModel(peak_efficiency=0.62, half_saturation_bytes=4 * 2**20, hop_latency=5.7e-6)
"""PCIe with peer-to-peer (data-centre and workstation cards: A100/H100 PCIe, L40S, L4, RTX
A6000): GPUs write into each other's memory through the PCIe switches without touching host
memory. 8xRTX PRO 6000 Blackwell on PCIe 5.0 reach 37.6-41.1 GB/s all-reduce busbw of 63
(60-65 %) across switch and dual-socket layouts, with unidirectional peer copies at 53-56 GB/s
(voipmonitor/rtx6kpro ``hardware/pcie-bandwidth.md`` @070506ff, "8-GPU Results"); 0.62 sits
between. Across CPU sockets peer-to-peer can fall below the host path (NVIDIA/nccl-tests issue
74, A40 on dual EPYC), which NCCL's topology search avoids by choosing SHM there. Half
saturation as NVLink; hop latency NCCL ``hwLat[PCI][Ring][Simple]``, LL 1.0 us (the
``LinkModel`` default, also the host path's)."""

NETWORK = LinkModel(
    peak_efficiency=0.80,
    half_saturation_bytes=32 * 2**20,
    hop_latency=9.6e-6,
    ll128_hop_latency=4.0e-6,
    ll_hop_latency=2.7e-6,
)
"""InfiniBand, RoCE or EFA, one NIC per GPU. Peak: 400G InfiniBand NDR delivers about 40-46 GB/s
per NIC of 50 (80-92 %) and ml-engineering's 4-node B200 EFA all-reduce derives 36.95 of 50 GB/s
per NIC (74 %); 0.80 sits between. Half saturation: fitted to that EFA sweep (busbw 64 GB/s at
16 MiB, 229 at 256 MiB, 362 at 1 GiB, 382 at 16 GiB on 32 GPUs), which gives 0.71 and 35 MB:
networks need far larger messages than NVLink to saturate. Hop latency: NCCL
``hwLat[NET][Ring][Simple]`` = 9.6 us (14.0 in ``tuning.cc`` @ 5067397c); LL128 4.0 us there,
used only between nodes whose GPUs talk over NVLink; LL 2.7 us."""

ETHERNET = LinkModel(
    peak_efficiency=0.40,
    half_saturation_bytes=32 * 2**20,
    hop_latency=9.6e-6,
    ll128_hop_latency=4.0e-6,
    ll_hop_latency=2.7e-6,
)
"""Plain Ethernet without RDMA: NCCL's socket transport over TCP, which copies through the host
and the kernel's network stack. 4 nodes of 8xV100 on 100 GbE reach 4-6 GB/s all-reduce busbw
per node's NIC share, 32-48 % of the 12.5 GB/s line rate (NVIDIA/nccl issue 450); on 32 GbE at
most 60 % (NVIDIA/nccl issue 209). 0.40 is the 100 GbE middle. Half saturation and hop latency
as the RDMA network."""

DEFAULT_LINKS: dict[str, LinkModel] = {
    "nvlink": NVLINK,
    "pcie": PCIE,
    "host": HOST,
    "network": NETWORK,
    "ethernet": ETHERNET,
}

BASE_LATENCY = 8.4e-6
"""Seconds every collective costs before its hops: NCCL ``tuning.cc`` ``baseLat[Ring][Simple]``."""

LL_BASE_LATENCY = 6.6e-6
LL_BANDWIDTH_SHARE = 0.5
"""NCCL's LL protocol sends 4 data bytes with a 4-byte flag in every 8, so a receiver polls
the flag instead of waiting for a fence: the cheapest hops (``LinkModel.ll_hop_latency``) at
half of Simple's bus bandwidth, after a ring base latency of 6.6 us (NVIDIA/nccl
``src/graph/tuning.cc``: ``baseLatencies`` Ring LL, ``busBw * .5``), on every kind of link;
NCCL's tuner takes it for the smallest messages."""

LL128_BASE_LATENCY = 14.0e-6
LL128_BANDWIDTH_SHARE = 0.92
"""NCCL's LL128 protocol sends 120 data bytes in every 128-byte line with its flag in the rest,
so a receiver polls the line instead of waiting for a fence: each ring hop costs less
(``LinkModel.ll128_hop_latency``) at ``120/128 = 0.92`` of Simple's bus bandwidth, after a base
latency of 14 us (NVIDIA/nccl ``src/graph/tuning.cc`` @ 5067397c: ``baseLatencies`` Ring LL128,
``busBw * 0.92``). NCCL enables it only where the GPUs of a node talk over NVLink (``typeIntra
<= PATH_NVB``), so PCIe machines keep Simple."""


# --- bus bandwidth ---------------------------------------------------------------------------


def _check(collective: str) -> None:
    if collective not in COLLECTIVES:
        raise InputError.of(
            "error.not_one_of",
            field="collective",
            value=repr(collective),
            accepted=", ".join(COLLECTIVES),
        )


def bus_bandwidth_factor(collective: str, group_size: ArrayLike) -> FloatArray:
    """busbw / algbw for ``collective`` on ``n`` ranks (nccl-tests ``doc/PERFORMANCE.md``):
    all-reduce ``2(n-1)/n``; all-gather, reduce-scatter, all-to-all ``(n-1)/n``; broadcast and
    point-to-point 1. Zero for one rank, which moves nothing."""
    _check(collective)
    n = np.asarray(group_size, dtype=float)
    if collective in ("broadcast", "p2p"):
        return np.where(n > 1, 1.0, 0.0)
    share = (n - 1.0) / np.maximum(n, 1.0)
    return 2.0 * share if collective == "all_reduce" else share


def algorithm_bandwidth(size_bytes: ArrayLike, seconds: ArrayLike) -> FloatArray:
    """nccl-tests' algbw: ``S / t`` bytes per second."""
    return np.asarray(size_bytes, dtype=float) / seconds


def bus_bandwidth(
    collective: str, size_bytes: ArrayLike, seconds: ArrayLike, group_size: ArrayLike
) -> FloatArray:
    """nccl-tests' busbw: ``algbw * factor``."""
    return algorithm_bandwidth(size_bytes, seconds) * bus_bandwidth_factor(collective, group_size)


def ring_steps(collective: str, group_size: ArrayLike) -> FloatArray:
    """Sequential steps of the ring algorithm, as NCCL's latency model counts them
    (``tuning.cc`` ``nsteps``): all-reduce ``2(n-1)``, all-gather and reduce-scatter ``n-1``;
    all-to-all and point-to-point one step (their sends run concurrently). A broadcast is a chain
    from the root: its first chunk reaches the last rank after ``n-1`` hops, the pipeline's fill,
    which a one-rank-per-node chain of a thousand GPUs pays in milliseconds (NCCL's tuner charges
    one hop when the chain's channels are the same, enough to choose a protocol by)."""
    _check(collective)
    n = np.asarray(group_size, dtype=float)
    if collective == "all_reduce":
        return 2.0 * (n - 1.0)
    if collective in ("all_gather", "reduce_scatter", "broadcast"):
        return np.maximum(n - 1.0, 0.0)
    return np.where(n > 1, 1.0, 0.0)


def protocol_latencies(
    intra_steps: ArrayLike,
    network_steps: ArrayLike,
    intra: LinkModel,
    network: LinkModel,
    base_latency: float = BASE_LATENCY,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Latency of a ring of ``intra_steps`` hops on the node link and ``network_steps`` across
    the network under NCCL's Simple protocol, under LL128 (:data:`LL128_BASE_LATENCY` and
    ``LinkModel.ll128_hop_latency``; NaN where the node link does not enable LL128) and under
    LL (:data:`LL_BASE_LATENCY`, ``LinkModel.ll_hop_latency``)."""
    simple = base_latency + intra_steps * intra.hop_latency + network_steps * network.hop_latency
    ll128 = (
        LL128_BASE_LATENCY
        + intra_steps * intra.ll128_hop_latency
        + network_steps * network.ll128_hop_latency
    )
    ll = (
        LL_BASE_LATENCY
        + intra_steps * intra.ll_hop_latency
        + network_steps * network.ll_hop_latency
    )
    return (
        np.asarray(simple, dtype=float),
        np.asarray(ll128, dtype=float),
        np.asarray(ll, dtype=float),
    )


def protocol_seconds(
    transfer: FloatArray, latencies: tuple[FloatArray, FloatArray, FloatArray]
) -> FloatArray:
    """The fastest of NCCL's Simple, LL128 and LL protocols moving ``transfer`` seconds of data
    at Simple's rate after their :func:`protocol_latencies`, as NCCL's tuner picks per call
    (``tuning.cc``: latency plus bytes over bandwidth, least of the enabled protocols): Simple
    ``latency + transfer``, LL128 ``latency + transfer / 0.92``, LL ``latency + transfer /
    0.5``; ``fmin`` skips LL128 where it is not enabled (NaN)."""
    simple, ll128, ll = latencies
    fastest = np.fmin(simple + transfer, ll128 + transfer / LL128_BANDWIDTH_SHARE)
    return np.asarray(np.minimum(fastest, ll + transfer / LL_BANDWIDTH_SHARE), dtype=float)


def flat_collective_seconds(
    collective: str,
    size_bytes: ArrayLike,
    group_size: ArrayLike,
    bandwidth: ArrayLike,
    link: LinkModel,
    base_latency: float = BASE_LATENCY,
) -> FloatArray:
    """A collective on one kind of link: ``base + steps * hop + S * factor / (B * eff(S))`` under
    the faster protocol (:func:`protocol_seconds`); zero for a group of one. ``bandwidth`` is the
    nominal one-direction bytes/s per GPU."""
    n = np.asarray(group_size)
    factor = bus_bandwidth_factor(collective, n)
    transfer = (
        np.asarray(size_bytes, dtype=float)
        * factor
        / (np.asarray(bandwidth, dtype=float) * np.maximum(link.efficiency(size_bytes), 1e-300))
    )
    latencies = protocol_latencies(ring_steps(collective, n), 0.0, link, link, base_latency)
    return np.where(n > 1, protocol_seconds(transfer, latencies), 0.0)


# --- topology --------------------------------------------------------------------------------


@dataclass(frozen=True)
class GroupPlacement:
    """Where the ``n`` ranks of a group sit: ``p`` in each of ``k`` scale-up domains."""

    group_size: IntArray
    ranks_per_domain: IntArray
    domains: IntArray
    intra_kind: str

    @property
    def crosses_network(self) -> npt.NDArray[np.bool_]:
        return self.domains > 1


def network_kind(cluster: Cluster) -> str:
    """The link model of the cluster's network: ``network`` for RDMA fabrics (InfiniBand, RoCE,
    EFA), ``ethernet`` for TCP over plain Ethernet."""
    return "ethernet" if cluster.network in ("ethernet", "none") else "network"


@dataclass(frozen=True)
class ClusterRows:
    """Several clusters of one GPU type, one per layout row (``rows`` indexes ``clusters``): the
    figures the collective model reads, as arrays, so that the layouts of every machine of a GPU
    type are evaluated at once."""

    clusters: tuple[Cluster, ...]
    rows: IntArray

    @property
    def gpu(self) -> Any:
        return self.clusters[0].gpu

    def _per_row(self, values: Sequence[Any]) -> FloatArray:
        return np.asarray(values, dtype=float)[self.rows]

    @property
    def clock_share(self) -> float:
        """Searched machines run at their rated power: the board's sustained share only
        (``Cluster.clock_share``)."""
        return float(self.gpu.sustained_clock_share())

    @cached_property
    def scale_up_domain(self) -> IntArray:
        return np.asarray([c.scale_up_domain for c in self.clusters], dtype=np.int64)[self.rows]

    @cached_property
    def intra_node_bandwidth(self) -> FloatArray:
        return self._per_row([c.intra_node_bandwidth for c in self.clusters])

    @cached_property
    def inter_node_bandwidth(self) -> FloatArray:
        return self._per_row([c.inter_node_bandwidth for c in self.clusters])

    @property
    def intra_node_kind(self) -> str:
        kinds = {c.intra_node_kind for c in self.clusters}
        return kinds.pop() if len(kinds) == 1 else "mixed"

    def links(self, models: dict[str, LinkModel]) -> tuple[LinkModel, LinkModel]:
        """Per-row link models: each row's node link and network (built once per ``models``)."""
        key = tuple(models.items())
        if key not in self._stacked_links:
            pairs = [cluster_links(cluster, models) for cluster in self.clusters]

            def stacked(side: int) -> LinkModel:
                return LinkModel(
                    peak_efficiency=self._per_row([pair[side].peak_efficiency for pair in pairs]),
                    half_saturation_bytes=self._per_row(
                        [pair[side].half_saturation_bytes for pair in pairs]
                    ),
                    hop_latency=self._per_row([pair[side].hop_latency for pair in pairs]),
                    ll128_hop_latency=self._per_row(
                        [pair[side].ll128_hop_latency for pair in pairs]
                    ),
                    ll_hop_latency=self._per_row([pair[side].ll_hop_latency for pair in pairs]),
                )

            self._stacked_links[key] = (stacked(0), stacked(1))
        return self._stacked_links[key]

    @cached_property
    def _stacked_links(self) -> dict[tuple[Any, ...], tuple[LinkModel, LinkModel]]:
        return {}


def cluster_links(
    cluster: Cluster | ClusterRows, models: dict[str, LinkModel]
) -> tuple[LinkModel, LinkModel]:
    """(node link, network) models of ``cluster``: by its link kinds, or per row."""
    if isinstance(cluster, ClusterRows):
        return cluster.links(models)
    return models[cluster.intra_node_kind], models[network_kind(cluster)]


def group_placement(
    group_size: ArrayLike, stride: ArrayLike, cluster: Cluster | ClusterRows
) -> GroupPlacement:
    """Placement of a group of ``n`` ranks ``stride`` apart. Inside one domain of ``D`` GPUs
    (``cluster.scale_up_domain``) when ``n * stride <= D``; otherwise ``p = clip(D // stride, 1,
    n)`` ranks share each domain and the group spans ``k = ceil(n / p)`` domains (groups aligned
    to domain boundaries, as the layouts of Megatron-Core are)."""
    n = np.asarray(group_size, dtype=np.int64)
    k_stride = np.maximum(np.asarray(stride, dtype=np.int64), 1)
    domain = cluster.scale_up_domain
    per_domain = np.clip(domain // k_stride, 1, np.maximum(n, 1))
    domains = -(-n // per_domain)
    return GroupPlacement(
        group_size=n,
        ranks_per_domain=per_domain.astype(np.int64),
        domains=domains.astype(np.int64),
        intra_kind=cluster.intra_node_kind,
    )


def group_link(
    group_size: ArrayLike,
    stride: ArrayLike,
    cluster: Cluster | ClusterRows,
    links: dict[str, LinkModel] | None = None,
) -> tuple[FloatArray, FloatArray]:
    """(nominal bandwidth per GPU, hop latency) of the slowest link a group uses: the GPU's
    ``cluster.intra_node_bandwidth`` and the node link's hop inside a domain, the NIC's
    ``cluster.inter_node_bandwidth`` and the network hop across domains."""
    models = DEFAULT_LINKS if links is None else links
    placement = group_placement(group_size, stride, cluster)
    intra, network = cluster_links(cluster, models)
    crosses = placement.crosses_network
    bandwidth = np.where(crosses, cluster.inter_node_bandwidth, cluster.intra_node_bandwidth)
    latency = np.where(crosses, network.hop_latency, intra.hop_latency)
    return bandwidth.astype(float), latency.astype(float)


def collective_seconds(
    collective: str,
    size_bytes: ArrayLike,
    group_size: ArrayLike,
    stride: ArrayLike,
    cluster: Cluster | ClusterRows,
    links: dict[str, LinkModel] | None = None,
    base_latency: float = BASE_LATENCY,
) -> FloatArray:
    """Seconds for one collective of ``S`` bytes (nccl-tests' size) on a group of ``n`` ranks
    ``stride`` apart, on ``cluster``'s topology; zero for a group of one. Vectorized.

    With ``p`` ranks in each of ``k`` domains (:func:`group_placement`), ``f`` the bus factor:

    - all-reduce, all-gather, reduce-scatter: the slower of ``f(p) * S / (B_intra * eff)`` inside
      the domain and ``f(k) * S / (p * B_nic * eff)`` across, the ``p`` NICs sharing the network
      part; inside one domain this is ``f(n) * S / (B_intra * eff)``.
    - all-to-all: each rank sends ``S (p-1)/n`` inside its domain and ``S (k-1)/k`` through its
      own NIC.
    - point-to-point: ``S`` over the slowest link; broadcast: ``S`` over the node link, or
      across domains through the ``p`` NICs of the group's ranks in a domain, over which NCCL
      spreads the chain's channels.

    Latency: ``base + (steps(n) - steps(k)) * hop_intra + steps(k) * hop_network``, NCCL's ring
    latency (``tuning.cc``) with :func:`ring_steps`, under the faster protocol
    (:func:`protocol_seconds`).
    """
    _check(collective)
    group = PlacedGroup.of(group_size, stride, cluster, links)
    return group.collective_seconds(collective, size_bytes, base_latency)


@dataclass(frozen=True)
class PlacedGroup:
    """A group of ranks placed on a cluster (:func:`group_placement`) with its link models,
    for several collectives on the same group (:func:`collective_seconds`)."""

    group_size: ArrayLike
    stride: ArrayLike
    cluster: Cluster | ClusterRows
    placement: GroupPlacement | None
    intra: LinkModel | None = None
    network: LinkModel | None = None

    @cached_property
    def ranks(self) -> tuple[FloatArray, FloatArray, FloatArray]:
        """The placement's ``n``, ``p`` and ``k`` as floats."""
        assert self.placement is not None
        return (
            self.placement.group_size.astype(float),
            self.placement.ranks_per_domain.astype(float),
            self.placement.domains.astype(float),
        )

    @classmethod
    def of(
        cls,
        group_size: ArrayLike,
        stride: ArrayLike,
        cluster: Cluster | ClusterRows,
        links: dict[str, LinkModel] | None = None,
    ) -> PlacedGroup:
        """The group placed, or unplaced (``placement`` None) when no group has two ranks."""
        if not np.any(np.asarray(group_size) > 1):
            return cls(group_size, stride, cluster, None)
        models = DEFAULT_LINKS if links is None else links
        placement = group_placement(group_size, stride, cluster)
        intra, network = cluster_links(cluster, models)
        return cls(group_size, stride, cluster, placement, intra, network)

    def collective_seconds(
        self, collective: str, size_bytes: ArrayLike, base_latency: float = BASE_LATENCY
    ) -> FloatArray:
        """:func:`collective_seconds` of one collective of ``size_bytes`` on this group."""
        _check(collective)
        if self.placement is None or self.intra is None or self.network is None:
            shape = np.broadcast(
                np.asarray(size_bytes), np.asarray(self.group_size), np.asarray(self.stride)
            )
            return np.zeros(shape.shape)
        cluster, intra, network = self.cluster, self.intra, self.network
        n, p, k = self.ranks
        size = np.asarray(size_bytes, dtype=float)
        intra_rate = cluster.intra_node_bandwidth * np.maximum(intra.efficiency(size), 1e-300)
        network_rate = np.where(
            k > 1, np.maximum(cluster.inter_node_bandwidth * network.efficiency(size), 1e-300), 1.0
        )

        if collective == "all_to_all":
            inside = size * (p - 1.0) / np.maximum(n, 1.0) / intra_rate
            across = size * (k - 1.0) / k / network_rate
        elif collective in ("broadcast", "p2p"):
            nics = p if collective == "broadcast" else 1.0
            inside = np.where(k > 1, 0.0, size / intra_rate)
            across = np.where(k > 1, size / (nics * network_rate), 0.0)
        else:
            inside = size * bus_bandwidth_factor(collective, p) / intra_rate
            across = size * bus_bandwidth_factor(collective, k) / (p * network_rate)

        seconds = protocol_seconds(
            np.maximum(inside, across), self._latencies(collective, base_latency)
        )
        return np.where(n > 1, seconds, 0.0)

    def _latencies(
        self, collective: str, base_latency: float
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """:func:`protocol_latencies` of ``collective`` on this group, computed once."""
        key = (collective, base_latency)
        if key not in self._latency_cache:
            assert self.intra is not None and self.network is not None
            n, _, k = self.ranks
            network_steps = np.where(k > 1, ring_steps(collective, k), 0.0)
            intra_steps = np.maximum(ring_steps(collective, n) - network_steps, 0.0)
            self._latency_cache[key] = protocol_latencies(
                intra_steps, network_steps, self.intra, self.network, base_latency
            )
        return self._latency_cache[key]

    @cached_property
    def _latency_cache(self) -> dict[tuple[str, float], tuple[FloatArray, FloatArray, FloatArray]]:
        return {}


# --- the groups of a parallel layout ---------------------------------------------------------


@dataclass(frozen=True)
class ParallelGroup:
    """``size`` ranks, ``stride`` apart in the global rank order."""

    size: IntArray
    stride: IntArray


def parallel_groups(layout: Layout) -> dict[str, ParallelGroup]:
    """The communication groups of a layout in Megatron-Core's rank order (tp, cp, ep-in-dp,
    dp, pp from innermost):

    - ``tp``: tensor parallel, stride 1; ``cp``: context parallel, stride ``tp``;
    - ``dp``: data parallel, stride ``tp * cp``; ``dp_cp``: data and context parallel together,
      stride ``tp``, where dense gradients are reduced; ``shard``: the ``layout.shard``
      consecutive ranks of it that ZeRO shards over (all of it unless sharding is hybrid), and
      ``replicate``: the ``dp * cp / shard`` ranks holding the same shard, stride ``tp * shard``;
    - ``ep``: expert parallel, stride ``tp`` (expert tensor parallel = tp, Megatron-Core's
      default), the all-to-all group; ``expert_dp``: the ``dp * cp / ep`` replicas of each
      expert, stride ``tp * ep``, where expert gradients are reduced;
    - ``pp``: pipeline parallel, stride ``tp * cp * dp``.
    """
    tp, cp, dp, ep, pp = layout.tp, layout.cp, layout.dp, layout.ep, layout.pp
    one = np.ones_like(tp)

    def group(size: IntArray, stride: IntArray) -> ParallelGroup:
        return ParallelGroup(
            size=np.asarray(size, dtype=np.int64), stride=np.asarray(stride, dtype=np.int64)
        )

    dp_cp = group(dp * cp, tp)
    shard, replicate = hybrid_shard_groups(dp_cp, layout.shard)
    return {
        "tp": group(tp, one),
        "cp": group(cp, tp),
        "dp": group(dp, tp * cp),
        "dp_cp": dp_cp,
        "shard": shard,
        "replicate": replicate,
        "ep": group(ep, tp),
        "expert_dp": group(dp * cp // np.maximum(ep, 1), tp * ep),
        "pp": group(pp, tp * cp * dp),
    }


def hybrid_shard_groups(
    dp_cp: ParallelGroup, shard_ranks: npt.ArrayLike
) -> tuple[ParallelGroup, ParallelGroup]:
    """The ``shard`` group ZeRO shards over, ``shard_ranks`` consecutive ranks of the ``dp_cp``
    group, and the ``replicate`` group of the ``dp_cp.size / shard_ranks`` ranks that hold the
    same shard, ``shard_ranks`` group members apart."""
    shard = np.clip(np.asarray(shard_ranks).astype(np.int64), 1, dp_cp.size)
    return (
        ParallelGroup(size=shard, stride=dp_cp.stride),
        ParallelGroup(size=dp_cp.size // shard, stride=dp_cp.stride * shard),
    )
