"""GPUSpec: what one accelerator offers a training job.

All figures are in base units: bytes, bytes per second, FLOP/s, watts, US dollars. Peak FLOP/s
are **dense** (no 2:4 sparsity) and, for GeForce cards, with the FP32 accumulate that training
uses (the RTX 4090 does 165 dense bf16 TFLOP/s with FP32 accumulate, not the 330 printed for
FP16 accumulate). Links are per GPU and unidirectional unless named otherwise: NVIDIA markets
NVLink as bidirectional (H100: 900 GB/s), a collective sees one direction (450 GB/s).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gpuplan.errors import InputError

DTYPES = ("fp32", "tf32", "bf16", "fp16", "fp8")
"""Datatypes with a dense peak in the catalog; fp8 only where the tensor cores support it."""

UNMEASURED_MATMUL_SHARE = {"bf16": 0.8033, "fp8": 0.7344}
"""Share of the dense peak a GPU without a published MAMF figure is taken to reach: the median
of the distinct measured NVIDIA shares in the catalog (``achievable_matmul``), bf16: RTX 3090
1.099, RTX 4090 1.084, A100 SXM 0.869, RTX A6000 0.847, A100 PCIe 0.811, H100 0.803,
B300 0.786, B200 0.776, L4 0.755, GB200 0.729, L40S 0.696; fp8: B200 0.763, B300 0.745, H200
0.734, GB200 0.723, H100 0.709. One rule for every unmeasured GPU; fp16 and tf32 take the bf16
share (``tests/catalog/test_gpus.py`` recomputes the medians). GeForce boards pass 1: their
data-sheet peak is taken at the rated boost clock, and GPU Boost runs them above it while power
allows (the RTX 3090's 78.0 TFLOP/s is 1.10 x its 71 at 1695 MHz, about 1860 MHz)."""


UNMEASURED_SUSTAINED_CLOCK_SHARE = 0.8860
"""Sustained clock share (:meth:`GPUSpec.sustained_clock_share`) of a GPU without a published
sustained rate: the median over the distinct measured boards, A100 SXM 0.996, H100 SXM 0.919,
B200 0.853, GB200 0.851. One rule for every unmeasured GPU, so that a board whose sustained rate has
been measured is not ranked below one whose has not (``tests/catalog/test_gpus.py`` recomputes
the median)."""


class MissingPeakError(InputError, KeyError):
    """A datatype the GPU has no dense peak for (V100 has no bf16 tensor cores)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class MissingSpecError(InputError):
    """A figure the catalog does not hold for this GPU, and the model needs."""


class SpeedModelGapError(MissingSpecError):
    """An accelerator whose speed the model does not predict (``GPUSpec.speed_model_gap``)."""


@dataclass(frozen=True)
class GPUSpec:
    """One GPU model from the catalog, with provenance for its numbers."""

    id: str
    name: str
    vendor: str
    memory_bytes: int
    memory_quoted: str
    memory_type: str
    peak_flops: Mapping[str, float]
    intra_node_link: str
    intra_node_bandwidth: float
    pcie_generation: int
    gpus_per_node: int
    source: str
    observed: str
    memory_bandwidth: float | None = None
    """HBM/GDDR bytes per second; ``None`` where no source gives it (Ascend 910B)."""
    tdp_watts: float | None = None
    form_factor: str = ""
    architecture: str = ""
    aliases: tuple[str, ...] = ()
    accumulate: str = "fp32"
    intra_node_bandwidth_vendor_bidirectional: float | None = None
    nvlink_domain_size: int = 1
    achievable_matmul: Mapping[str, float] = field(default_factory=dict)
    """Measured Maximum Achievable Matmul FLOP/s by dtype (mamf-finder), where published."""
    mamf_best_shape: Mapping[str, tuple[int, int, int]] = field(default_factory=dict)
    """The GEMM shape ``(m, n, k)`` at which ``achievable_matmul`` was reached, by dtype."""
    same_die_as: str = ""
    """Catalog id of the GPU whose die this one is (H800 -> H100): its best shapes stand in for
    a dtype this GPU has none of."""
    achievable_tf32_fixed_shape: float | None = None
    """tf32 matmul FLOP/s at gpu-fryer's fixed 8192^3 shape: a floor, not a maximum."""
    achievable_bf16_fixed_shape: float | None = None
    """bf16 matmul FLOP/s that gpu-fryer's fixed 8192^3 GEMM keeps when run back to back
    (:meth:`sustained_clock_share`)."""
    sustained_kernel_share: float | None = None
    """Share of a tensor-core kernel's short-benchmark rate that it keeps when run back to back
    until the board throttles, where no sustained GEMM rate is published
    (:meth:`sustained_clock_share`)."""
    achievable_hbm_copy: float | None = None
    """Measured STREAM-like copy traffic, bytes read plus bytes written per second."""
    achievable_hbm_read: float | None = None
    """Measured STREAM Dot read rate (two arrays read, nothing written), bytes per second."""
    dcgm_hbm_floor: float | None = None
    """DCGM's minimum memory bandwidth for this SKU, bytes per second: a diagnostic floor."""
    achievable_all_reduce_busbw: float | None = None
    """All-reduce bus bandwidth of a full 8-GPU node without NVLS, bytes per second."""
    achievable_all_reduce_busbw_nvls: Mapping[int, float] = field(default_factory=dict)
    """All-reduce busbw of a full 8-GPU node with NVLS on, by payload in bytes."""
    nvls_min_ranks: int | None = None
    """The fewest ranks in one node at which NCCL selects NVLS (NVLink SHARP)."""
    peer_to_peer: bool = True
    """Whether two of these GPUs in one server exchange data directly over PCIe or their fabric.
    GeForce cards do not: NVIDIA's driver disables PCIe peer-to-peer on them, and NCCL stages
    their traffic through host memory."""
    purchase_price_usd: float | None = None
    purchase_price_observed: str | None = None
    purchase_price_source: str | None = None
    vendor_datasheet: bool = True
    skypilot_names: tuple[str, ...] = ()
    """SkyPilot accelerator names (``AcceleratorName`` in its catalogs, ``sky show-gpus``) under
    which clouds sell this GPU; the first is the one a SkyPilot export asks for."""
    gpuhunt_names: tuple[str, ...] = ()
    """dstack gpuhunt ``gpu_name`` values under which its catalogs list this GPU."""
    notes: str = ""
    provenance: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    speed_model_gap: str = ""
    """What the speed model cannot predict for this accelerator and why (no published matmul or
    attention efficiency measurement): a GPU with a gap gets memory answers only."""
    no_public_offer: Mapping[str, str] = field(default_factory=dict)
    """``reason``, ``source``, ``observed``: why no built-in offer prices this GPU."""

    def peak(self, dtype: str) -> float:
        """Dense peak FLOP/s for ``dtype``.

        fp8 falls back to bf16 (then fp16) where the GPU has no fp8: an fp8 recipe runs in
        half precision there. A dtype the GPU lacks (V100: bf16) raises MissingPeakError.
        """
        if dtype in self.peak_flops:
            return float(self.peak_flops[dtype])
        if dtype == "fp8":
            for fallback in ("bf16", "fp16"):
                if fallback in self.peak_flops:
                    return float(self.peak_flops[fallback])
        known = ", ".join(self.peak_flops) or "none"
        raise MissingPeakError.of("error.gpu_no_peak", gpu=self.id, dtype=dtype, known=known)

    def matmul_ceiling_share(self, dtype: str) -> float:
        """Share of the dense ``dtype`` peak the best matmuls reach: the measured MAMF where the
        catalog has one (fp16 and tf32 take bf16's), else :data:`UNMEASURED_MATMUL_SHARE`."""
        key = "fp8" if dtype == "fp8" and self.has_fp8 else "bf16"
        if key in self.achievable_matmul:
            return float(self.achievable_matmul[key]) / self.peak(key)
        return UNMEASURED_MATMUL_SHARE[key]

    def sustained_clock_share(self) -> float:
        """Share of the rate of the short kernel benchmarks (MAMF, the FlashAttention charts)
        that the tensor cores keep under the sustained load of a training job:
        ``min(1, achievable_bf16_fixed_shape / achievable_matmul["bf16"])``, else the measured
        ``sustained_kernel_share``, else :data:`UNMEASURED_SUSTAINED_CLOCK_SHARE`.

        mamf-finder times 100 iterations per shape of its sweep after a 50-iteration warm-up;
        gpu-fryer runs one large bf16 GEMM back to back into a ring buffer that fills 95 % of
        memory, and takes bf16 because fp32 did not draw the board's full power (its issue #4).
        At 8192^3 the GEMM model is within 1.5 % of the MAMF ceiling, so what separates the two
        figures is the sustained load: nothing on the 400 W A100 SXM (270 against 271.2 TFLOP/s),
        8 % on the 700 W H100 SXM (730 against 794.5), 15 % on the GB200 (1550 against 1822).
        It scales every compute-bound kernel, like a power limit (``Cluster.clock_share``):
        GEMMs in every dtype and attention. gpu-fryer's fp8 figures cannot set an fp8 share of
        their own: they exceed the fp8 MAMF, and its README calls fp8 unfit for a throttling
        test since it draws less power. The B200 has no gpu-fryer figure; FlashInfer timed a
        bf16 FlashAttention-4 kernel back to back on it, 1450 TFLOP/s in iterations 10-19 and
        1237 once fully throttled (iterations 70-79, SM clock 1965 -> about 1580 MHz): 0.853,
        the same loss as the GB200's GEMM."""
        sustained = self.achievable_bf16_fixed_shape
        burst = self.achievable_matmul.get("bf16")
        if sustained is None or burst is None:
            if self.sustained_kernel_share is not None:
                return float(self.sustained_kernel_share)
            return UNMEASURED_SUSTAINED_CLOCK_SHARE
        return min(1.0, float(sustained) / float(burst))

    def require_speed_model(self) -> None:
        """Raise :class:`SpeedModelGapError` with the catalog's plain statement where the speed
        model has no measurements to stand on for this accelerator."""
        if self.speed_model_gap:
            raise SpeedModelGapError.of(
                "error.gpu_speed_gap", gpu=self.id, gap=self.speed_model_gap
            )

    def hbm_bandwidth(self) -> float:
        """Memory bandwidth in bytes per second; MissingSpecError where the catalog has none."""
        if self.memory_bandwidth is None:
            raise MissingSpecError.of("error.gpu_no_bandwidth", gpu=self.id)
        return float(self.memory_bandwidth)

    def achievable_hbm_share(self) -> float | None:
        """``achievable_hbm_copy / memory_bandwidth``: the share of the data-sheet bandwidth a
        measured STREAM-like copy reaches; None where either figure is missing."""
        if self.achievable_hbm_copy is None or not self.memory_bandwidth:
            return None
        return self.achievable_hbm_copy / self.memory_bandwidth

    def half_precision_peak(self) -> float:
        """Dense bf16 peak, or fp16 on GPUs without bf16 (V100): the reference for MFU."""
        return self.peak("bf16") if "bf16" in self.peak_flops else self.peak("fp16")

    @property
    def has_fp8(self) -> bool:
        return "fp8" in self.peak_flops

    @property
    def memory_gib(self) -> float:
        return self.memory_bytes / 2**30

    def source_of(self, field_name: str) -> tuple[str, str]:
        """(source, observed) for one field: its own entry in ``provenance``, else the GPU's.

        ``peak_flops.fp8`` names one dtype's peak and falls back to ``peak_flops``.
        """
        candidates = [field_name]
        if "." in field_name:
            candidates.append(field_name.split(".", 1)[0])
        for name in candidates:
            entry = self.provenance.get(name)
            if entry:
                return entry["source"], entry["observed"]
        return self.source, self.observed

    def to_dict(self) -> dict[str, Any]:
        """JSON view with stable keys in base units."""
        bidirectional = self.intra_node_bandwidth_vendor_bidirectional
        return {
            "id": self.id,
            "name": self.name,
            "vendor": self.vendor,
            "aliases": list(self.aliases),
            "form_factor": self.form_factor,
            "architecture": self.architecture,
            "memory_bytes": self.memory_bytes,
            "memory_quoted": self.memory_quoted,
            "memory_type": self.memory_type,
            "memory_bandwidth_bytes_per_second": self.memory_bandwidth,
            "peak_flops": dict(self.peak_flops),
            "achievable_matmul": dict(self.achievable_matmul),
            "mamf_best_shape": {
                dtype: list(shape) for dtype, shape in self.mamf_best_shape.items()
            },
            "same_die_as": self.same_die_as,
            "achievable_tf32_fixed_shape": self.achievable_tf32_fixed_shape,
            "achievable_bf16_fixed_shape": self.achievable_bf16_fixed_shape,
            "sustained_kernel_share": self.sustained_kernel_share,
            "achievable_hbm_copy_bytes_per_second": self.achievable_hbm_copy,
            "achievable_hbm_read_bytes_per_second": self.achievable_hbm_read,
            "dcgm_hbm_floor_bytes_per_second": self.dcgm_hbm_floor,
            "achievable_all_reduce_busbw_bytes_per_second": self.achievable_all_reduce_busbw,
            "achievable_all_reduce_busbw_nvls_bytes_per_second": {
                str(size): busbw for size, busbw in self.achievable_all_reduce_busbw_nvls.items()
            },
            "nvls_min_ranks": self.nvls_min_ranks,
            "accumulate": self.accumulate,
            "intra_node_link": self.intra_node_link,
            "intra_node_bandwidth_bytes_per_second": self.intra_node_bandwidth,
            "intra_node_bandwidth_vendor_bidirectional": bidirectional,
            "nvlink_domain_size": self.nvlink_domain_size,
            "peer_to_peer": self.peer_to_peer,
            "pcie_generation": self.pcie_generation,
            "gpus_per_node": self.gpus_per_node,
            "tdp_watts": self.tdp_watts,
            "purchase_price_usd": self.purchase_price_usd,
            "purchase_price_observed": self.purchase_price_observed,
            "purchase_price_source": self.purchase_price_source,
            "vendor_datasheet": self.vendor_datasheet,
            "skypilot_names": list(self.skypilot_names),
            "gpuhunt_names": list(self.gpuhunt_names),
            "source": self.source,
            "observed": self.observed,
            "provenance": {k: dict(v) for k, v in self.provenance.items()},
            "notes": self.notes,
            "speed_model_gap": self.speed_model_gap,
            "no_public_offer": dict(self.no_public_offer),
        }
