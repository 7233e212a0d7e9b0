"""Published achievable values that measurements are held to, each with its source.

Data-sheet peaks come from the GPU catalog; these are what real machines were measured to
reach. Where no public measurement exists for a GPU, the figure has no reference and its
verdict says so rather than inventing one.
"""

from __future__ import annotations

from dataclasses import dataclass

GPU_FRYER_SOURCE = "huggingface/gpu-fryer README, fixed 8192^3 shape (a floor, not a maximum)"
DCGM_SOURCE = "NVIDIA/DCGM nvvs/diag-skus.yaml.in memory_bandwidth floor / 0.75"
PCIE_SOURCE = "ml-engineering network/README.md: 8xH200 Gen5 x16 H2D 55.4 of 63 GB/s (88 %)"
COLLECTIVE_SOURCE = (
    "ml-engineering network/README.md: all-reduce busbw at 16 GiB, 8 GPUs, ring algorithm"
)
LINK_RULE_SOURCE = (
    "ml-engineering network/README.md: ~80 % of the unidirectional link spec is the normal case"
)
PCIE_EFFICIENCY = 0.88
LINK_EFFICIENCY = 0.80


@dataclass(frozen=True)
class Reference:
    value: float
    source: str


TENSOR_FLOAT_32: dict[str, Reference] = {
    "a100-sxm-80gb": Reference(130e12, GPU_FRYER_SOURCE),
    "h100-sxm-80gb": Reference(373e12, GPU_FRYER_SOURCE),
    "gb200-186gb": Reference(790e12, GPU_FRYER_SOURCE),
}
"""tf32 matmul FLOP/s at gpu-fryer's fixed shape, by catalog GPU id. bf16 and fp8 references are
the catalog's measured MAMF (``achievable_matmul`` in gpus.toml)."""

HBM: dict[str, Reference] = {
    "a100-sxm-80gb": Reference(1.564e12, DCGM_SOURCE + " (A100-SXM4-80GB: 1,173,000 MB/s)"),
    "h100-sxm-80gb": Reference(2.540e12, DCGM_SOURCE + " (H100 80GB HBM3: 1,905,000 MB/s)"),
    "h200-sxm-141gb": Reference(2.950e12, DCGM_SOURCE + " (H200: 2,212,500 MB/s)"),
    "b200-sxm-180gb": Reference(5.430e12, DCGM_SOURCE + " (B200: 4,072,500 MB/s)"),
    "l40s-48gb": Reference(0.700e12, DCGM_SOURCE + " (L40S: 525,000 MB/s)"),
}
"""Achievable HBM bandwidth (bytes read plus bytes written per second) by catalog GPU id."""

ALL_REDUCE_INTRA_NODE: dict[str, Reference] = {
    "a100-sxm-80gb": Reference(234.89e9, COLLECTIVE_SOURCE + " (nccl-tests, NVLink 3)"),
    "a100-sxm-40gb": Reference(234.89e9, COLLECTIVE_SOURCE + " (nccl-tests, NVLink 3)"),
    "h200-sxm-141gb": Reference(367.61e9, COLLECTIVE_SOURCE + " (NCCL_NVLS_ENABLE=0)"),
    "h100-sxm-80gb": Reference(367.61e9, COLLECTIVE_SOURCE + " (H200 row, same NVLink 4)"),
    "b200-sxm-180gb": Reference(682.2e9, COLLECTIVE_SOURCE + " (p6-b200, 8 GiB)"),
}
"""All-reduce bus bandwidth of a full 8-GPU node without NVLS, by catalog GPU id."""

PCIE_LANE_BYTES_PER_SECOND: dict[int, float] = {
    1: 2.5e9 * 8 / 10 / 8,
    2: 5.0e9 * 8 / 10 / 8,
    3: 8.0e9 * 128 / 130 / 8,
    4: 16.0e9 * 128 / 130 / 8,
    5: 32.0e9 * 128 / 130 / 8,
    6: 64.0e9 * 242 / 256 / 8,
}
"""One direction of one PCIe lane: transfer rate x encoding efficiency (8b/10b up to Gen2,
128b/130b for Gen3-5, FLIT mode 242/256 for Gen6), PCI-SIG base specifications."""


def pcie_link_bytes_per_second(generation: int, width: int) -> float | None:
    """Theoretical one-direction bandwidth of a link, e.g. Gen5 x16 = 63.0 GB/s."""
    lane = PCIE_LANE_BYTES_PER_SECOND.get(generation)
    return lane * width if lane and width > 0 else None


def matmul_reference(gpu_id: str | None, dtype: str) -> Reference | None:
    """The measured maximum achievable matmul FLOP/s of ``gpu_id`` in ``dtype``: the catalog's
    MAMF figure (bf16, fp8) with its source, or gpu-fryer's tf32 floor; None if unpublished."""
    if not gpu_id:
        return None
    if dtype == "tf32":
        return TENSOR_FLOAT_32.get(gpu_id)
    from gpuplan.catalog import CatalogError, load_gpu

    try:
        gpu = load_gpu(gpu_id)
    except CatalogError:
        return None
    if dtype not in gpu.achievable_matmul:
        return None
    source, _ = gpu.source_of(f"achievable_matmul.{dtype}")
    return Reference(float(gpu.achievable_matmul[dtype]), source)


def hbm_reference(gpu_id: str | None) -> Reference | None:
    return HBM.get(gpu_id) if gpu_id else None


def intra_node_collective_reference(
    gpu_id: str | None, collective: str, link_bandwidth: float | None, ranks: int
) -> Reference | None:
    """Expected bus bandwidth of a collective inside one node.

    A published measurement for an 8-GPU all-reduce where one exists, else 80 % of the
    catalog's unidirectional link bandwidth (ml-engineering's "normal case").
    """
    if gpu_id and collective == "all_reduce" and ranks == 8 and gpu_id in ALL_REDUCE_INTRA_NODE:
        return ALL_REDUCE_INTRA_NODE[gpu_id]
    if link_bandwidth:
        return Reference(LINK_EFFICIENCY * link_bandwidth, LINK_RULE_SOURCE)
    return None
