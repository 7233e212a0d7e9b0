"""Achievable efficiencies: every constant of the speed model in one place, with its provenance.

Two kinds of numbers live here:

- **Measured ceilings** live in the GPU catalog (``achievable_matmul`` in gpus.toml, read by
  :meth:`GPUSpec.matmul_ceiling_share`): the best matmul throughput a GPU reaches, from
  ml-engineering's Maximum Achievable Matmul FLOPS (MAMF) tables; a GPU without a published
  figure takes one stated rule.
- **Fitted constants** (:class:`Efficiency`): how close real training gets to those ceilings,
  fitted on the ``fit`` rows of the throughput validation table by ``benchmarks/fit_speed.py``,
  which writes ``catalog/data/efficiency.toml`` with the fit's date, row count and error. The
  ``test`` rows are never used to fit.

A calibration profile from ``gpuplan bench`` replaces the ceilings with the rented machine's
own measurements.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, fields, replace
from functools import cache
from importlib import resources
from typing import Any

from gpuplan.hardware.gpu import GPUSpec


@dataclass(frozen=True)
class Efficiency:
    """Fitted constants of the time model (``time.py`` says where each enters).

    - ``matmul_ceiling_share``: share of the MAMF ceiling that training GEMMs reach at large shapes.
    - ``matmul_half_dimension``: a GEMM dimension at which efficiency halves: each of M, N, K
      scales efficiency by ``x / (x + half)`` (small matmuls after TP splitting run slowly).
    - ``attention_efficiency``: flash-attention FLOP/s as a share of the dense bf16 peak.
    - ``memory_traffic_factor``: bytes moved by memory-bound ops per byte of saved activations.
    - ``memory_bandwidth_efficiency``: achievable share of HBM bandwidth.
    - ``layer_overhead_seconds``: fixed cost per layer and micro-batch (kernel launches, syncs).
    - ``tensor_parallel_exposed``: share of tensor-parallel communication not hidden by compute.
    - ``data_parallel_overlap``: share of backward time that hides gradient and ZeRO collectives.
    """

    matmul_ceiling_share: float = 0.75
    matmul_half_dimension: float = 64.0
    attention_efficiency: float = 0.45
    memory_traffic_factor: float = 2.0
    memory_bandwidth_efficiency: float = 0.8
    layer_overhead_seconds: float = 1.5e-4
    tensor_parallel_exposed: float = 0.7
    data_parallel_overlap: float = 0.8

    def with_values(self, **values: float) -> Efficiency:
        return replace(self, **values)

    def as_dict(self) -> dict[str, float]:
        return {f.name: float(getattr(self, f.name)) for f in fields(self)}


FITTED_FIELDS = tuple(f.name for f in fields(Efficiency))

FIT_BOUNDS: dict[str, tuple[float, float]] = {
    "matmul_ceiling_share": (0.3, 1.0),
    "matmul_half_dimension": (1.0, 2048.0),
    "attention_efficiency": (0.1, 0.9),
    "memory_traffic_factor": (0.5, 20.0),
    "memory_bandwidth_efficiency": (0.8, 0.8),
    "layer_overhead_seconds": (0.0, 2e-3),
    "tensor_parallel_exposed": (0.0, 1.0),
    "data_parallel_overlap": (0.0, 1.0),
}
"""Physical ranges of the fitted constants; HBM efficiency is held at 0.8 (STREAM-like copies
reach 80-90 % of peak)."""


@dataclass(frozen=True)
class MachineMeasurements:
    """What one rented machine measured (``gpuplan bench``), as shares of its catalog peaks.

    Each field, when set, replaces a built-in figure for that GPU: the MAMF ceiling per dtype,
    the HBM efficiency, and the peak bus-bandwidth efficiency of the node's link and of the
    network (``comm.LinkModel.peak_efficiency``).
    """

    gpu_id: str
    matmul_ceiling: dict[str, float] = field(default_factory=dict)
    hbm_efficiency: float | None = None
    intra_node_link_efficiency: float | None = None
    network_efficiency: float | None = None
    source: str = ""

    def applies_to(self, gpu_id: str) -> bool:
        return self.gpu_id == gpu_id


def matmul_ceiling(gpu: GPUSpec, dtype: str, measured: MachineMeasurements | None = None) -> float:
    """MAMF share of the dense peak for ``gpu`` and ``dtype`` (``GPUSpec.matmul_ceiling_share``);
    a machine's own measurement wins."""
    if measured is not None and measured.applies_to(gpu.id) and dtype in measured.matmul_ceiling:
        return measured.matmul_ceiling[dtype]
    return gpu.matmul_ceiling_share(dtype)


@cache
def fitted_record() -> dict[str, Any]:
    """The fitted constants and their provenance, as ``benchmarks/fit_speed.py`` wrote them."""
    path = resources.files("gpuplan.catalog").joinpath("data", "efficiency.toml")
    if not path.is_file():
        return {}
    return tomllib.loads(path.read_text("utf-8"))


def default_efficiency() -> Efficiency:
    """The fitted constants, or the unfitted defaults when no fit has been recorded."""
    record = fitted_record().get("efficiency", {})
    return Efficiency(**{name: float(record[name]) for name in FITTED_FIELDS if name in record})
