"""The GPU catalog (``catalog/data/gpus.toml``): one entry per accelerator, keyed by its id.

The fields are :class:`gpuplan.hardware.gpu.GPUSpec`'s, in base units: bytes, bytes per
second (one direction per GPU for links), dense FLOP/s. Every figure may carry its own source
under ``provenance.FIELD`` (``provenance."peak_flops.fp8"`` for one datatype's peak); the entry's
``source`` and ``observed`` cover the rest.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

import msgspec
from msgspec import UNSET, Meta, UnsetType

from gpuplan.catalog.schema.base import (
    BytesPerSecond,
    Count,
    FlopsPerSecond,
    Notes,
    Observed,
    Positive,
    Share,
    Source,
    Sourced,
    Table,
    Text,
)
from gpuplan.hardware.topology import IntraNodeLink


class DensePeaks(Table, kw_only=True):
    """Dense (not 2:4-sparse) peak FLOP/s per datatype; GeForce peaks with FP32 accumulate."""

    fp32: FlopsPerSecond | UnsetType = UNSET
    tf32: FlopsPerSecond | UnsetType = UNSET
    bf16: FlopsPerSecond | UnsetType = UNSET
    fp16: FlopsPerSecond | UnsetType = UNSET
    fp8: FlopsPerSecond | UnsetType = UNSET


class AchievableMatmul(Table, kw_only=True):
    """Measured Maximum Achievable Matmul FLOP/s (mamf-finder) per datatype."""

    bf16: FlopsPerSecond | UnsetType = UNSET
    fp8: FlopsPerSecond | UnsetType = UNSET


GemmShape = Annotated[
    tuple[Count, Count, Count], Meta(description="a GEMM shape [m, n, k] of positive integers")
]


class BestShapes(Table, kw_only=True):
    """The GEMM shape ``[m, n, k]`` at which ``achievable_matmul`` was reached, per datatype."""

    bf16: GemmShape | UnsetType = UNSET
    fp8: GemmShape | UnsetType = UNSET


PayloadBytes = Annotated[
    str, Meta(pattern=r"^[1-9][0-9]*$", description='a payload size in bytes, e.g. "2147483648"')
]


class NoPublicOffer(Table, kw_only=True):
    """Why no built-in offer prices a GPU, with the source that shows it."""

    reason: Text
    source: Source
    observed: Observed


class GpuFigures(Table, kw_only=True):
    """What one accelerator offers a training job, with its source and observed date."""

    entry_kind: ClassVar[str] = "gpu"

    name: Text
    vendor: Text
    memory_bytes: Annotated[int, Meta(gt=0, description="memory in bytes (80 GiB = 85899345920)")]
    memory_quoted: Annotated[str, Meta(min_length=1, description="memory as the vendor writes it")]
    memory_type: Text
    peak_flops: DensePeaks
    intra_node_link: IntraNodeLink
    intra_node_bandwidth: Annotated[
        float, Meta(gt=0, description="bytes per second per GPU, one direction, above 0")
    ]
    pcie_generation: Annotated[int, Meta(ge=1, le=6, description="a PCIe generation, 1 to 6")]
    gpus_per_node: Count
    source: Source
    observed: Observed
    memory_bandwidth: BytesPerSecond | UnsetType = UNSET
    tdp_watts: Annotated[float, Meta(gt=0, description="watts, above 0")] | UnsetType = UNSET
    form_factor: Notes = ""
    architecture: Notes = ""
    aliases: list[Text] = []
    skypilot_names: list[Text] = []
    gpuhunt_names: list[Text] = []
    accumulate: Literal["fp32", "fp16"] = "fp32"
    intra_node_bandwidth_vendor_bidirectional: BytesPerSecond | UnsetType = UNSET
    nvlink_domain_size: Count = 1
    achievable_matmul: AchievableMatmul | UnsetType = UNSET
    mamf_best_shape: BestShapes | UnsetType = UNSET
    same_die_as: Annotated[str, Meta(min_length=1, description="a catalog GPU id")] | (
        UnsetType
    ) = UNSET
    achievable_tf32_fixed_shape: FlopsPerSecond | UnsetType = UNSET
    achievable_bf16_fixed_shape: FlopsPerSecond | UnsetType = UNSET
    sustained_kernel_share: Share | UnsetType = UNSET
    achievable_hbm_copy: BytesPerSecond | UnsetType = UNSET
    achievable_hbm_read: BytesPerSecond | UnsetType = UNSET
    dcgm_hbm_floor: BytesPerSecond | UnsetType = UNSET
    achievable_all_reduce_busbw: BytesPerSecond | UnsetType = UNSET
    achievable_all_reduce_busbw_nvls: dict[PayloadBytes, BytesPerSecond] = {}
    nvls_min_ranks: Count | UnsetType = UNSET
    peer_to_peer: bool = True
    purchase_price_usd: Positive | UnsetType = UNSET
    purchase_price_observed: Observed | UnsetType = UNSET
    purchase_price_source: Source | UnsetType = UNSET
    vendor_datasheet: bool = True
    notes: Notes = ""
    speed_model_gap: Notes = ""
    no_public_offer: NoPublicOffer | UnsetType = UNSET


class FigureSource(Sourced, kw_only=True):
    """The source and observed date of one figure."""


NOT_SOURCED_APART = (
    "name",
    "source",
    "observed",
    "notes",
    "aliases",
    "purchase_price_observed",
    "purchase_price_source",
    "speed_model_gap",
    "no_public_offer",
)
"""Fields that carry no provenance of their own (the purchase price carries its own)."""


def _provenance_keys() -> list[str]:
    """``FIELD`` for every figure, and ``FIELD.DTYPE`` for the figures given per datatype."""
    keys = []
    for field in msgspec.structs.fields(GpuFigures):
        if field.name in NOT_SOURCED_APART:
            continue
        keys.append(field.encode_name)
        part = _struct_of(field.type)
        if part is not None:
            keys.extend(
                f"{field.encode_name}.{sub.encode_name}" for sub in msgspec.structs.fields(part)
            )
    return keys


def _struct_of(annotation: Any) -> type[msgspec.Struct] | None:
    for candidate in (annotation, *getattr(annotation, "__args__", ())):
        if isinstance(candidate, type) and issubclass(candidate, msgspec.Struct):
            return candidate
    return None


FigureSources: Any = msgspec.defstruct(
    "FigureSources",
    [
        (key.replace(".", "__"), FigureSource | UnsetType, msgspec.field(default=UNSET, name=key))
        for key in _provenance_keys()
    ],
    bases=(Table,),
    kw_only=True,
    forbid_unknown_fields=True,
    module=__name__,
)
FigureSources.__doc__ = (
    "Sources of single figures that differ from the entry's: FIELD, or FIELD.DTYPE for one "
    "datatype of peak_flops, achievable_matmul or mamf_best_shape."
)


class GpuEntry(GpuFigures, kw_only=True):
    """One catalog GPU (its id is its key under ``gpus``)."""

    provenance: FigureSources = msgspec.field(default_factory=FigureSources)


class UncataloguedShapes(Sourced, kw_only=True):
    """A published MAMF best shape of an accelerator the catalog holds no entry for."""

    entry_kind: ClassVar[str] = "uncatalogued accelerator"

    name: Text
    mamf_best_shape: BestShapes


class GpusFile(Table, kw_only=True):
    """``[gpus.ID]`` entries, and ``[uncatalogued.NAME]`` best shapes of other accelerators."""

    gpus: dict[str, GpuEntry]
    uncatalogued: dict[str, UncataloguedShapes] = {}
