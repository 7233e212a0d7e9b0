"""Published achievable values that measurements are held to, each with its source.

Data-sheet peaks and the published achievable figures both live in the GPU catalog (gpus.toml),
one table that the speed model reads too: MAMF per dtype and the shapes that reached it
(ml-engineering), gpu-fryer's tf32 floor, STREAM-like HBM copy and read rates (Azure
AI-benchmarking-guide), DCGM's HBM floor, all-reduce busbw with and without NVLS
(ml-engineering). This module turns them into :class:`Reference` values and holds the rules that
apply where no measurement exists: HBM at the speed model's ``HBM_EFFICIENCY``, pinned PCIe at
:data:`PCIE_DIRECTION_EFFICIENCY` of the line rate, collectives at :data:`LINK_EFFICIENCY` of
the link; a figure none of these covers has no reference and its verdict says so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from gpuplan.hardware.gpu import GPUSpec

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


Value = TypeVar("Value")


class CatalogFigures(Mapping[str | None, Value]):
    """A read-only view ``{catalog GPU id: figure}`` over the catalog: ``read(gpu)`` gives the
    figure, None (or empty) where the GPU has none, and such GPUs are not in the view. A run
    without a catalog GPU looks up None, which is never a key."""

    def __init__(self, read: Callable[[GPUSpec], Value | None]) -> None:
        self._read = read

    def __getitem__(self, gpu_id: str | None) -> Value:
        from gpuplan.catalog import gpu_entries, load_gpu

        if gpu_id is None or gpu_id not in gpu_entries():
            raise KeyError(gpu_id)
        value = self._read(load_gpu(gpu_id))
        if value is None or value == {}:
            raise KeyError(gpu_id)
        return value

    def __iter__(self) -> Iterator[str | None]:
        from gpuplan.catalog import gpu_ids

        return (gpu_id for gpu_id in gpu_ids() if gpu_id in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __contains__(self, gpu_id: object) -> bool:
        if not isinstance(gpu_id, str):
            return False
        try:
            self[gpu_id]
        except KeyError:
            return False
        return True


DCGM_FLOOR: Mapping[str | None, float] = CatalogFigures(lambda gpu: gpu.dcgm_hbm_floor)
"""DCGM's minimum memory bandwidth per SKU (``dcgm_hbm_floor`` in gpus.toml,
:data:`DCGM_SOURCE`), shown beside the verdict."""


def _catalog(gpu_id: str) -> GPUSpec | None:
    from gpuplan.catalog import CatalogError, load_gpu

    try:
        return load_gpu(gpu_id)
    except CatalogError:
        return None


def catalog_reference(gpu: GPUSpec, field_name: str, value: float | None) -> Reference | None:
    """``value`` (one of ``gpu``'s catalog figures) with the source the catalog gives it."""
    if value is None:
        return None
    source, _ = gpu.source_of(field_name)
    return Reference(float(value), source)


def dcgm_floor(gpu_id: str | None) -> Reference | None:
    """DCGM's HBM floor of ``gpu_id`` with its source; None where DCGM lists no floor."""
    gpu = _catalog(gpu_id) if gpu_id else None
    return catalog_reference(gpu, "dcgm_hbm_floor", gpu.dcgm_hbm_floor) if gpu else None


def published_best_shapes() -> list[BestShape]:
    """Every best shape of ml-engineering's MAMF table: catalog GPUs (``mamf_best_shape``) by
    catalog id, then accelerators the catalog does not hold (``[uncatalogued]``) by the table's
    name."""
    from gpuplan.catalog import all_gpus, uncatalogued_best_shapes

    tables = [(gpu.id, gpu.mamf_best_shape) for gpu in all_gpus()]
    tables += [
        (name, entry["mamf_best_shape"]) for name, entry in uncatalogued_best_shapes().items()
    ]
    return [
        BestShape(gpu_id, dtype, *shape)
        for gpu_id, shapes in tables
        for dtype, shape in shapes.items()
    ]


def best_shapes(gpu_id: str | None, dtype: str) -> tuple[list[BestShape], list[BestShape]]:
    """Published best shapes for ``dtype`` (bf16's for fp16, tf32 and fp32, which the table
    does not list): those of this GPU, then of the GPU whose die it is (``same_die_as``), then
    every other GPU's."""
    table_dtype = "fp8" if dtype == "fp8" else "bf16"
    rows = [shape for shape in published_best_shapes() if shape.dtype == table_dtype]
    gpu = _catalog(gpu_id) if gpu_id else None
    own_ids = [gpu.id, gpu.same_die_as] if gpu is not None else [gpu_id]
    own = [shape for own_id in own_ids for shape in rows if own_id and shape.gpu == own_id]
    return own, [shape for shape in rows if shape not in own]


def hbm_measurement(gpu_id: str | None, kind: str) -> Reference | None:
    """The published STREAM-like HBM rate of ``gpu_id`` (``achievable_hbm_copy`` or
    ``achievable_hbm_read``) with its source; None where unpublished."""
    gpu = _catalog(gpu_id) if gpu_id else None
    if gpu is None:
        return None
    if kind == "read":
        return catalog_reference(gpu, "achievable_hbm_read", gpu.achievable_hbm_read)
    return catalog_reference(gpu, "achievable_hbm_copy", gpu.achievable_hbm_copy)


def all_reduce_measurement(gpu_id: str | None) -> Reference | None:
    """The published 8-GPU all-reduce busbw without NVLS (``achievable_all_reduce_busbw``)."""
    gpu = _catalog(gpu_id) if gpu_id else None
    if gpu is None:
        return None
    return catalog_reference(gpu, "achievable_all_reduce_busbw", gpu.achievable_all_reduce_busbw)


def nvls_all_reduce_references(gpu: GPUSpec) -> dict[int, Reference]:
    """``achievable_all_reduce_busbw_nvls`` of ``gpu`` as references by payload in bytes."""
    source, _ = gpu.source_of("achievable_all_reduce_busbw_nvls")
    return {
        size: Reference(busbw, source)
        for size, busbw in gpu.achievable_all_reduce_busbw_nvls.items()
    }


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
    MAMF figure (bf16, fp8) with its source (fp16: bf16's where the peaks are equal), or
    gpu-fryer's tf32 floor; None if unpublished."""
    gpu = _catalog(gpu_id) if gpu_id else None
    if gpu is None:
        return None
    if dtype == "tf32":
        return catalog_reference(
            gpu, "achievable_tf32_fixed_shape", gpu.achievable_tf32_fixed_shape
        )
    if dtype == "fp16" and "fp16" not in gpu.achievable_matmul:
        return _fp16_from_bf16(gpu)
    if dtype not in gpu.achievable_matmul:
        return None
    source, _ = gpu.source_of(f"achievable_matmul.{dtype}")
    return Reference(float(gpu.achievable_matmul[dtype]), source)


def _fp16_from_bf16(gpu: GPUSpec) -> Reference | None:
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

    A published STREAM-like measurement where one exists (:func:`hbm_measurement`), else one
    rule for every other GPU: ``HBM_EFFICIENCY x catalog memory_bandwidth``, the share the speed
    model itself assumes; None when the catalog has no bandwidth for the GPU.
    """
    measured = hbm_measurement(gpu_id, kind)
    if measured is not None:
        return measured
    from gpuplan.estimate.kernels import HBM_EFFICIENCY

    gpu = _catalog(gpu_id) if gpu_id else None
    bandwidth = gpu.memory_bandwidth if gpu is not None else None
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
    measured = all_reduce_measurement(gpu_id) if collective == "all_reduce" and ranks == 8 else None
    if measured is not None:
        return measured
    if link_bandwidth:
        return Reference(LINK_EFFICIENCY * link_bandwidth, LINK_RULE_SOURCE)
    return None
