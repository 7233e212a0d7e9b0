"""Collective cost: nccl-tests bus factors, link selection on the topology, size behaviour."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuplan.catalog import load_gpu
from gpuplan.errors import InputError
from gpuplan.estimate.comm import (
    BASE_LATENCY,
    COLLECTIVES,
    DEFAULT_LINKS,
    LL128_BANDWIDTH_SHARE,
    LL128_BASE_LATENCY,
    LL_BANDWIDTH_SHARE,
    LL_BASE_LATENCY,
    NETWORK,
    NVLINK,
    bus_bandwidth,
    bus_bandwidth_factor,
    collective_seconds,
    flat_collective_seconds,
    group_link,
    group_placement,
    parallel_groups,
)
from gpuplan.hardware.cluster import Cluster
from gpuplan.strategy import Layout

GiB = 2**30
MiB = 2**20


def cluster(gpu_id: str, count: int, inter_node: str = "") -> Cluster:
    return Cluster(load_gpu(gpu_id), count=count, inter_node=inter_node)


def test_bus_factors_follow_nccl_tests():
    assert bus_bandwidth_factor("all_reduce", 8) == pytest.approx(2 * 7 / 8)
    for name in ("all_gather", "reduce_scatter", "all_to_all"):
        assert bus_bandwidth_factor(name, 8) == pytest.approx(7 / 8)
    for name in ("broadcast", "p2p"):
        assert bus_bandwidth_factor(name, 8) == 1.0
    assert np.allclose(bus_bandwidth_factor("all_reduce", np.array([2, 4])), [1.0, 1.5])


def test_unknown_collective_is_refused():
    with pytest.raises(ValueError, match="collective"):
        bus_bandwidth_factor("allreduce", 8)


@pytest.mark.parametrize("collective", COLLECTIVES)
def test_a_group_of_one_costs_nothing(collective):
    h100 = cluster("h100-sxm-80gb", 16)
    assert bus_bandwidth_factor(collective, 1) == 0.0
    assert collective_seconds(collective, GiB, 1, 1, h100) == 0.0
    assert flat_collective_seconds(collective, GiB, 1, 450e9, NVLINK) == 0.0


def test_tensor_parallel_inside_a_node_uses_nvlink():
    h100 = cluster("h100-sxm-80gb", 64)
    bandwidth, latency = group_link(8, 1, h100)
    assert bandwidth == 450e9
    assert latency == NVLINK.hop_latency


def test_groups_that_leave_the_node_use_the_network():
    h100 = cluster("h100-sxm-80gb", 64)
    sizes = np.array([16, 2, 8, 4])
    strides = np.array([1, 8, 8, 2])
    bandwidth, latency = group_link(sizes, strides, h100)
    assert np.allclose(bandwidth, [50e9, 50e9, 50e9, 450e9])
    assert np.allclose(latency[:3], NETWORK.hop_latency)
    placement = group_placement(sizes, strides, h100)
    assert placement.ranks_per_domain.tolist() == [8, 1, 1, 4]
    assert placement.domains.tolist() == [2, 2, 8, 1]


def test_pcie_cards_use_pcie_inside_the_node():
    l40s = cluster("l40s-48gb", 16)
    bandwidth, latency = group_link(4, 1, l40s)
    assert bandwidth == pytest.approx(31.5e9)
    assert latency == DEFAULT_LINKS["pcie"].hop_latency
    assert group_placement(4, 1, l40s).intra_kind == "pcie"


def test_geforce_cards_go_through_host_memory():
    rtx = cluster("rtx-4090-24gb", 8)
    assert rtx.intra_node_kind == "host"
    with_p2p = Cluster(rtx.gpu, count=8, peer_to_peer=True)
    assert with_p2p.intra_node_kind == "pcie"
    host = collective_seconds("all_gather", 256 * MiB, 8, 1, rtx)
    direct = collective_seconds("all_gather", 256 * MiB, 8, 1, with_p2p)
    assert host > 1.2 * direct


def test_an_nvl72_rack_is_one_nvlink_domain():
    gb200 = cluster("gb200-186gb", 144)
    assert gb200.scale_up_domain == 72
    bandwidth, _ = group_link(np.array([64, 2]), np.array([1, 72]), gb200)
    assert bandwidth.tolist() == [900e9, gb200.inter_node_bandwidth]


def test_eight_a100_all_reduce_matches_published_bus_bandwidth():
    """8xA100 NVLink all-reduce busbw: vTrain's table about 20 GB/s at 1 MB, 130 at 16 MB, 229 at
    1 GB; nccl-tests 234.89 GB/s at 16 GiB (shared/references: modeling-tools.md 4.3,
    verification-and-style.md 1.1.2)."""
    a100 = cluster("a100-sxm-80gb", 8)
    sizes = np.array([MiB, 16 * MiB, GiB, 16 * GiB])
    seconds = collective_seconds("all_reduce", sizes, 8, 1, a100)
    published = np.array([20e9, 130e9, 229e9, 234.89e9])
    assert np.allclose(bus_bandwidth("all_reduce", sizes, seconds, 8), published, rtol=0.12)


def test_inside_one_node_the_topology_model_is_the_flat_model():
    h100 = cluster("h100-sxm-80gb", 8)
    for collective in COLLECTIVES:
        on_topology = collective_seconds(collective, 64 * MiB, 8, 1, h100)
        flat = flat_collective_seconds(collective, 64 * MiB, 8, 450e9, NVLINK)
        assert on_topology == pytest.approx(flat)


def test_cross_node_all_reduce_is_bounded_by_the_slower_part():
    size = 16 * GiB
    nodes, per_node = 4, 8
    nvlink = 2 * (per_node - 1) / per_node * size / (450e9 * NVLINK.efficiency(size))
    for network_name, nic in (("ib-hdr-200g", 25e9), ("ib-ndr-400g", 50e9)):
        h100 = cluster("h100-sxm-80gb", 32, inter_node=network_name)
        seconds = collective_seconds("all_reduce", size, 32, 1, h100)
        network = 2 * (nodes - 1) / nodes * size / (per_node * nic * NETWORK.efficiency(size))
        assert seconds == pytest.approx(max(network, nvlink), rel=0.01)


def test_data_parallel_across_nodes_is_slower_than_tensor_parallel_inside():
    h100 = cluster("h100-sxm-80gb", 64)
    inside = collective_seconds("all_reduce", GiB, 8, 1, h100)
    across = collective_seconds("all_reduce", GiB, 8, 8, h100)
    assert across > 5 * inside


def test_all_to_all_across_nodes_goes_through_each_gpus_nic():
    h100 = cluster("h100-sxm-80gb", 16)
    size = 4 * GiB
    seconds = collective_seconds("all_to_all", size, 16, 1, h100)
    assert seconds == pytest.approx(size / 2 / (50e9 * NETWORK.efficiency(size)), rel=0.01)


@given(
    st.sampled_from(COLLECTIVES),
    st.sampled_from([(2, 1), (8, 1), (16, 1), (4, 8), (64, 1)]),
    st.floats(min_value=1e3, max_value=1e10),
    st.floats(min_value=1.01, max_value=10.0),
)
def test_time_grows_with_size_and_bus_bandwidth_too(collective, group, size, growth):
    h100 = cluster("h100-sxm-80gb", 64)
    n, stride = group
    small = collective_seconds(collective, size, n, stride, h100)
    large = collective_seconds(collective, size * growth, n, stride, h100)
    assert large > small
    assert bus_bandwidth(collective, size * growth, large, n) >= bus_bandwidth(
        collective, size, small, n
    )


def test_sizes_and_groups_broadcast():
    h100 = cluster("h100-sxm-80gb", 64)
    sizes = np.array([[MiB], [GiB]])
    groups = np.array([1, 2, 8, 16])
    seconds = collective_seconds("reduce_scatter", sizes, groups, 1, h100)
    assert seconds.shape == (2, 4)
    assert np.all(seconds[:, 0] == 0)
    assert np.all(seconds[1] >= seconds[0])


def test_parallel_groups_follow_megatron_rank_order():
    layout = Layout(
        dp=np.array([4]),
        tp=np.array([2]),
        pp=np.array([2]),
        vpp=np.array([1]),
        cp=np.array([2]),
        ep=np.array([4]),
        zero=np.array([1]),
        micro_batch=np.array([1]),
        micro_batches=np.array([8]),
        recompute=np.array([0]),
        offload=np.array([0]),
        sequence_parallel=np.array([True]),
        etp=np.array([2]),
        shard=np.array([4]),
        dualpipe=np.array([False]),
    )
    groups = parallel_groups(layout)
    expected = {
        "tp": (2, 1),
        "cp": (2, 2),
        "dp": (4, 4),
        "dp_cp": (8, 2),
        "shard": (4, 2),
        "replicate": (2, 8),
        "ep": (4, 2),
        "expert_dp": (2, 8),
        "pp": (2, 16),
    }
    for name, (size, stride) in expected.items():
        assert (groups[name].size[0], groups[name].stride[0]) == (size, stride), name


def test_nodes_with_fewer_nics_than_gpus_share_them():
    """4 x 100G RoCE per 8-GPU node (InternEvo's A100 cluster, doc/en/train_performance.md) is
    50 Gb/s per GPU, and a cross-node all-reduce takes twice as long as on 8 NICs."""
    gpu = load_gpu("a100-sxm-80gb")
    shared = Cluster(gpu, count=64, inter_node="roce-100g", nics_per_node=4)
    one_each = Cluster(gpu, count=64, inter_node="roce-100g")
    assert shared.inter_node_bandwidth == pytest.approx(50e9 / 8)
    assert one_each.inter_node_bandwidth == pytest.approx(100e9 / 8)
    size = 4e9
    slow = collective_seconds("all_reduce", size, 8, 8, shared)
    fast = collective_seconds("all_reduce", size, 8, 8, one_each)
    assert float(slow) == pytest.approx(2 * float(fast), rel=0.05)
    with pytest.raises(InputError, match=r"hardware\.nics_per_node: between 1 and the node's 8"):
        Cluster(gpu, count=64, nics_per_node=9)


def test_collectives_take_the_fastest_protocol_and_only_nvlink_nodes_enable_ll128():
    """NCCL picks LL for the smallest messages, LL128 where its hops save more than its 8 % of
    bandwidth costs, and enables LL128 only where a node's GPUs talk over NVLink
    (``tuning.cc``)."""
    hops = 7

    def transfer(size, bandwidth, link):
        return 7 / 8 * size / (bandwidth * float(link.efficiency(size)))

    def protocols(size, bandwidth, link):
        moved = transfer(size, bandwidth, link)
        return {
            "simple": BASE_LATENCY + hops * link.hop_latency + moved,
            "ll128": LL128_BASE_LATENCY
            + hops * link.ll128_hop_latency
            + moved / LL128_BANDWIDTH_SHARE,
            "ll": LL_BASE_LATENCY + hops * link.ll_hop_latency + moved / LL_BANDWIDTH_SHARE,
        }

    h100 = cluster("h100-sxm-80gb", 8)
    for size, fastest in ((1024, "ll"), (4 * 1024**2, "ll128"), (GiB, "simple")):
        times = protocols(size, h100.intra_node_bandwidth, NVLINK)
        assert min(times, key=times.get) == fastest
        seconds = float(collective_seconds("all_gather", size, 8, 1, h100))
        assert seconds == pytest.approx(times[fastest])
    l40s = cluster("l40s-48gb", 8)
    pcie = DEFAULT_LINKS["pcie"]
    assert np.isnan(pcie.ll128_hop_latency)
    size = 1024**2
    times = protocols(size, l40s.intra_node_bandwidth, pcie)
    expected = min(times["simple"], times["ll"])
    assert float(collective_seconds("all_gather", size, 8, 1, l40s)) == pytest.approx(expected)


def test_a_broadcast_chain_pays_one_hop_per_rank_and_uses_every_nic_of_a_node():
    """A ring broadcast reaches its last rank after ``n - 1`` hops: a small broadcast over 1024
    GPUs costs milliseconds (InternEvo's ``zero1 = -1`` sync at 1024 A100s lost about 2.6 ms per
    broadcast). Across nodes the chain's channels spread over the node's NICs."""
    h100 = cluster("h100-sxm-80gb", 1024)
    small = collective_seconds("broadcast", np.array([MiB, MiB]), np.array([8, 1024]), 1, h100)
    assert small[1] > 1e-3 > 20 * small[0]
    across_nodes = float(collective_seconds("broadcast", 16 * GiB, 16, 1, h100))
    one_nic = 16 * GiB / (h100.inter_node_bandwidth * float(NETWORK.efficiency(16 * GiB)))
    assert across_nodes < one_nic / 4
