"""Published achievable values that measurements are held to, each with its source.

Data-sheet peaks come from the GPU catalog; these are what real machines were measured to
reach: MAMF per dtype and the shapes that reached it (ml-engineering), STREAM-like HBM copy and
read rates (Azure AI-benchmarking-guide), pinned PCIe shares of the line rate (ml-engineering,
nvbandwidth), all-reduce busbw (ml-engineering). Where no public measurement exists, either one
stated rule applies (HBM: the speed model's ``HBM_EFFICIENCY``) or the figure has no reference
and its verdict says so rather than inventing one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

GPU_FRYER_SOURCE = "huggingface/gpu-fryer README, fixed 8192^3 shape (a floor, not a maximum)"
MAMF_SOURCE = (
    "github:stas00/ml-engineering compute/accelerator/README.md @ 744d01e1 (2026-08-22), "
    "Maximum Achievable Matmul FLOPS comparison table, 'Best Shape MxNxK' column"
)
AZURE_HBM_SOURCE = (
    "github:Azure/AI-benchmarking-guide Azure_Results/{file}, 'HBM Bandwidth' table "
    "(STREAM-like {kernel}: bytes read plus bytes written per second)"
)
DCGM_SOURCE = "NVIDIA/DCGM nvvs/diag-skus.yaml.in memory_bandwidth floor"
HBM_RULE_SOURCE = (
    "no published STREAM-like measurement for this GPU: gpuplan.estimate.kernels."
    "HBM_EFFICIENCY ({share:.0%}) of the catalog bandwidth, the speed model's own ceiling; "
    "Azure AI-benchmarking-guide's copies reach 80.5 % (A100 80GB), 86.6 % (H100), "
    "83.5 % (H200) of spec"
)
PCIE_SOURCE = (
    "ml-engineering network/README.md: 8xH200 Gen5 x16 nvbandwidth host_to_device "
    "55.43 GB/s (88 %), device_to_host 55.06 GB/s (87 %) of 63 GB/s"
)
PAGEABLE_NO_REFERENCE = (
    "pageable copy: staged through a driver bounce buffer at host memcpy speed; no published "
    "pageable measurement for this link (nvbandwidth and ml-engineering measure pinned only): "
    "measured only"
)
COLLECTIVE_SOURCE = (
    "ml-engineering network/README.md: all-reduce busbw at 16 GiB, 8 GPUs, ring algorithm"
)
LINK_RULE_SOURCE = (
    "ml-engineering network/README.md: ~80 % of the unidirectional link spec is the normal case"
)
PCIE_EFFICIENCY = 0.88
"""Pinned host-to-device share of the line rate (ml-engineering, 8xH200: 55.43 / 63 GB/s)."""
PCIE_DIRECTION_EFFICIENCY: dict[str, float] = {"host_to_device": 0.88, "device_to_host": 0.87}
"""Pinned share of the line rate per direction, same ml-engineering measurement."""
LINK_EFFICIENCY = 0.80


@dataclass(frozen=True)
class Reference:
    value: float
    source: str


@dataclass(frozen=True)
class BestShape:
    """A GEMM shape ``M x N x K`` that reached a GPU's published MAMF in one dtype."""

    gpu: str
    dtype: str
    m: int
    n: int
    k: int


PUBLISHED_BEST_SHAPES: tuple[BestShape, ...] = (
    BestShape("a100-sxm-80gb", "bf16", 1024, 10240, 5120),
    BestShape("gh200", "bf16", 1024, 15360, 4096),
    BestShape("a100-pcie-80gb", "bf16", 2048, 5120, 6144),
    BestShape("h100-sxm-80gb", "bf16", 2048, 2048, 13312),
    BestShape("b300-sxm-288gb", "bf16", 12288, 18432, 1024),
    BestShape("b200-sxm-180gb", "bf16", 1792, 16128, 3072),
    BestShape("gb200-186gb", "bf16", 4096, 9728, 2048),
    BestShape("mi355x", "bf16", 12288, 8192, 8192),
    BestShape("mi325x", "bf16", 13312, 10240, 8192),
    BestShape("mi300x-192gb", "bf16", 10240, 15360, 8192),
    BestShape("gh200", "fp8", 1024, 14336, 14336),
    BestShape("b200-sxm-180gb", "fp8", 15360, 4096, 3072),
    BestShape("b300-sxm-288gb", "fp8", 3072, 6144, 7168),
    BestShape("h200-sxm-141gb", "fp8", 1280, 4096, 12032),
    BestShape("gb200-186gb", "fp8", 19456, 5120, 1536),
    BestShape("h100-sxm-80gb", "fp8", 1024, 9216, 14336),
)
"""The shape at which each row of ml-engineering's MAMF table (:data:`MAMF_SOURCE`) reached
its maximum, keyed by gpuplan catalog id where the catalog has the GPU (the table's own
accelerator name otherwise). The table's bf16 H100 row says "H200 is the same"."""

SAME_DIE: dict[str, str] = {
    "h200-sxm-141gb": "h100-sxm-80gb",
    "h800-sxm-80gb": "h100-sxm-80gb",
    "a800-sxm-80gb": "a100-sxm-80gb",
    "a100-sxm-40gb": "a100-sxm-80gb",
}
"""Catalog GPUs whose matmul is another's (the catalog's own achievable_matmul notes)."""


def best_shapes(gpu_id: str | None, dtype: str) -> tuple[list[BestShape], list[BestShape]]:
    """Published best shapes for ``dtype`` (bf16's for fp16, tf32 and fp32, which the table
    does not list): those of this GPU (or its die), then every other GPU's."""
    table_dtype = "fp8" if dtype == "fp8" else "bf16"
    rows = [shape for shape in PUBLISHED_BEST_SHAPES if shape.dtype == table_dtype]
    own_ids = {gpu_id, SAME_DIE.get(gpu_id or "")} - {None, ""}
    own = [shape for shape in rows if shape.gpu in own_ids]
    return own, [shape for shape in rows if shape not in own]


TENSOR_FLOAT_32: dict[str, Reference] = {
    "a100-sxm-80gb": Reference(130e12, GPU_FRYER_SOURCE),
    "h100-sxm-80gb": Reference(373e12, GPU_FRYER_SOURCE),
    "gb200-186gb": Reference(790e12, GPU_FRYER_SOURCE),
}
"""tf32 matmul FLOP/s at gpu-fryer's fixed shape, by catalog GPU id. bf16 and fp8 references are
the catalog's measured MAMF (``achievable_matmul`` in gpus.toml)."""


def _azure(value: float, file: str, kernel: str) -> Reference:
    return Reference(value, AZURE_HBM_SOURCE.format(file=file, kernel=kernel))


HBM_COPY: dict[str, Reference] = {
    "a100-sxm-80gb": _azure(1.61e12, "ND_A100_v4_results.md @ 3bb66cac", "Copy"),
    "h100-sxm-80gb": _azure(
        2.90e12, "ND_H100_v5_results.md (fork samuel-bohman @ a6533f14)", "Copy"
    ),
    "h200-sxm-141gb": _azure(4.01e12, "ND_H200_v5_results.md @ 7f20e5fa", "Copy"),
}
"""Measured HBM copy traffic (read + write bytes per second), by catalog GPU id."""

HBM_READ: dict[str, Reference] = {
    "a100-sxm-80gb": _azure(1.75e12, "ND_A100_v4_results.md @ 3bb66cac", "Dot"),
    "h100-sxm-80gb": _azure(
        3.18e12, "ND_H100_v5_results.md (fork samuel-bohman @ a6533f14)", "Dot"
    ),
    "h200-sxm-141gb": _azure(4.48e12, "ND_H200_v5_results.md @ 7f20e5fa", "Dot"),
}
"""Measured HBM read rate (STREAM Dot: two arrays read, nothing written), by catalog GPU id."""

DCGM_FLOOR: dict[str, float] = {
    "a100-sxm-80gb": 1.173e12,
    "h100-sxm-80gb": 1.905e12,
    "h200-sxm-141gb": 2.2125e12,
    "b200-sxm-180gb": 4.0725e12,
    "l40s-48gb": 0.525e12,
}
"""DCGM's minimum memory bandwidth per SKU (:data:`DCGM_SOURCE`), shown beside the verdict."""

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


def _catalog(gpu_id: str) -> Any:
    from gpuplan.catalog import CatalogError, load_gpu

    try:
        return load_gpu(gpu_id)
    except CatalogError:
        return None


def matmul_reference(gpu_id: str | None, dtype: str) -> Reference | None:
    """The measured maximum achievable matmul FLOP/s of ``gpu_id`` in ``dtype``: the catalog's
    MAMF figure (bf16, fp8) with its source (fp16: bf16's where the peaks are equal), or
    gpu-fryer's tf32 floor; None if unpublished."""
    if not gpu_id:
        return None
    if dtype == "tf32":
        return TENSOR_FLOAT_32.get(gpu_id)
    gpu = _catalog(gpu_id)
    if gpu is None:
        return None
    if dtype == "fp16" and "fp16" not in gpu.achievable_matmul:
        return _fp16_from_bf16(gpu)
    if dtype not in gpu.achievable_matmul:
        return None
    source, _ = gpu.source_of(f"achievable_matmul.{dtype}")
    return Reference(float(gpu.achievable_matmul[dtype]), source)


def _fp16_from_bf16(gpu: Any) -> Reference | None:
    """The bf16 MAMF for fp16 where the catalog gives both the same tensor-core peak."""
    peaks = gpu.peak_flops
    if "bf16" not in gpu.achievable_matmul or peaks.get("fp16") != peaks.get("bf16"):
        return None
    source, _ = gpu.source_of("achievable_matmul.bf16")
    return Reference(
        float(gpu.achievable_matmul["bf16"]),
        f"bf16 MAMF, fp16 having the same tensor-core peak in the catalog: {source}",
    )


def hbm_reference(gpu_id: str | None, kind: str = "copy") -> Reference | None:
    """Achievable HBM rate of ``gpu_id`` for ``kind`` "copy" (read + write traffic) or "read".

    A published STREAM-like measurement where one exists (:data:`HBM_COPY`, :data:`HBM_READ`),
    else one rule for every other GPU: ``HBM_EFFICIENCY x catalog memory_bandwidth``, the share
    the speed model itself assumes; None when the catalog has no bandwidth for the GPU.
    """
    if not gpu_id:
        return None
    measured = (HBM_READ if kind == "read" else HBM_COPY).get(gpu_id)
    if measured is not None:
        return measured
    from gpuplan.estimate.kernels import HBM_EFFICIENCY

    gpu = _catalog(gpu_id)
    bandwidth = getattr(gpu, "memory_bandwidth", None) if gpu is not None else None
    if not bandwidth:
        return None
    return Reference(HBM_EFFICIENCY * bandwidth, HBM_RULE_SOURCE.format(share=HBM_EFFICIENCY))


def pcie_reference(
    direction: str, memory_kind: str, link: dict[str, Any]
) -> tuple[Reference | None, float | None, str]:
    """The reference of one host-device copy, the line rate it is a share of, and a note.

    The line rate is that of the link's MAXIMUM generation and width (what GPU and slot
    support), so a link that trained down (Gen4 x8 in a Gen5 x16 slot) is held to the full
    rate; when NVML gives no maximum, the current link, said in the note. Pinned copies are held
    to :data:`PCIE_DIRECTION_EFFICIENCY` of it; pageable copies get no reference
    (:data:`PAGEABLE_NO_REFERENCE`).
    """
    generation, width = link.get("generation"), link.get("width")
    maximum_generation = link.get("max_generation") or generation
    maximum_width = link.get("max_width") or width
    note = describe_link(link)
    if not maximum_generation or not maximum_width:
        return None, None, note
    line_rate = pcie_link_bytes_per_second(int(maximum_generation), int(maximum_width))
    if line_rate is None or memory_kind != "pinned":
        return None, line_rate, note
    share = PCIE_DIRECTION_EFFICIENCY[direction]
    source = f"{share:.0%} of the Gen{maximum_generation} x{maximum_width} line rate: {PCIE_SOURCE}"
    return Reference(share * line_rate, source), line_rate, note


def describe_link(link: dict[str, Any]) -> str:
    """``Gen4 x8 of max Gen5 x16``, or the current link alone when NVML gives no maximum."""
    generation, width = link.get("generation"), link.get("width")
    maximum_generation, maximum_width = link.get("max_generation"), link.get("max_width")
    current = f"Gen{generation or '?'} x{width or '?'}"
    if not maximum_generation or not maximum_width:
        return f"{current} (no maximum from NVML: held to the current link)"
    return f"{current} of max Gen{maximum_generation} x{maximum_width}"


def link_is_degraded(link: dict[str, Any]) -> bool:
    """True when the link runs below the generation or width it supports."""
    pairs = (("generation", "max_generation"), ("width", "max_width"))
    return any(
        link.get(current) and link.get(maximum) and link[current] < link[maximum]
        for current, maximum in pairs
    )


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
