"""The speed model's ceilings and its few fitted residuals, with their provenance.

- **Measured ceilings** live in the GPU catalog (``achievable_matmul`` in gpus.toml, read by
  :meth:`GPUSpec.matmul_ceiling_share`): the best matmul throughput a GPU reaches, from
  ml-engineering's Maximum Achievable Matmul FLOPS (MAMF) tables; a GPU without a published
  figure takes one stated rule. The kernel models built on them (``kernels.py``, ``traffic.py``)
  are fixed from published kernel measurements, not fitted.
- **Fitted residuals** (:class:`Efficiency`): one per training stack, the share of that
  kernel-level speed the stack keeps end to end, fitted on the ``fit`` rows of the throughput
  validation table by ``benchmarks/fit_speed.py`` under a stated prior, which writes
  ``catalog/data/efficiency.toml`` with the fit's date, row count and error. The ``test`` rows
  are never used to fit.

A calibration profile from ``gpuplan bench`` replaces the ceilings with the rented machine's
own measurements.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

from gpuplan.hardware.gpu import GPUSpec

STACK_OF_FRAMEWORK = {
    "megatron": "megatron",
    "fsdp": "fsdp",
    "deepspeed": "hf",
    "hf": "hf",
    "megatron-deepspeed": "megatron",
    "torchtitan": "fsdp",
    "internevo": "internevo",
}
"""The residual each framework takes. DeepSpeed has no published throughput among the fit rows;
its ZeRO engine drives the same eager Hugging Face models, so it takes ``hf``'s. Megatron-DeepSpeed
runs Megatron's model code and schedules, so it takes ``megatron``'s; torchtitan is the stack
behind the ``fsdp`` fit rows, so it takes ``fsdp``'s. InternEvo has fit rows and a residual of its
own, whose prior is centred on ``megatron``'s (:data:`FIT_PRIOR_PARENT`)."""


@dataclass(frozen=True)
class Efficiency:
    """Fitted residuals: the share of the kernel-level speed (``kernels.py``, ``traffic.py``) a
    training stack keeps end to end, one per stack. Each stands for what no kernel measurement
    holds: the host's Python and dispatch time between kernels, the data loader, logging and
    metric syncs, allocator and straggler waits, and GEMM shapes slower than the sweep's best.
    ``time.py`` divides each rank's compute time by it."""

    megatron: float = 1.0
    fsdp: float = 1.0
    hf: float = 1.0
    internevo: float = 1.0

    def as_dict(self) -> dict[str, float]:
        return {f.name: float(getattr(self, f.name)) for f in fields(self)}

    def stack_shares(self, framework_codes: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
        """The residual per layout, from its framework codes (``frameworks.FRAMEWORK_CODES``)."""
        from gpuplan.estimate.frameworks import FRAMEWORK_CODES

        table = np.array(
            [getattr(self, STACK_OF_FRAMEWORK[name]) for name in FRAMEWORK_CODES], dtype=float
        )
        return np.asarray(table[framework_codes], dtype=float)


FITTED_FIELDS = tuple(f.name for f in fields(Efficiency))

FIT_BOUNDS: dict[str, tuple[float, float]] = {name: (0.3, 1.5) for name in FITTED_FIELDS}
"""Physical range of a residual: a stack keeps at least 30 % of its kernels' speed and cannot
beat them by more than the kernel tables' own spread."""

FIT_PRIOR = (1.0, 1.0)
"""Prior of every residual: centred on 1 (the kernel tables describe the stack fully), with a
standard deviation of 1 in ``log`` space; the fit adds ``log(value)`` as one more residual per
constant. Weak on purpose: a stack with no rows stays at the kernel-level prediction, a stack
with rows is decided by them (a prior of 0.3 pulled every residual up and left the fit rows
10 % over-predicted)."""

FIT_PRIOR_PARENT: dict[str, str] = {"internevo": "megatron"}
"""Residuals whose prior is centred on another residual's value instead of on 1, with the same
spread: InternEvo runs Megatron-style model code (fused norms, FlashAttention, Megatron's tensor
parallelism) on its own trainer, data loader and ZeRO, so a source it has no rows from keeps
Megatron's share and its rows decide how far its own trainer differs (in leave-one-source-out,
holding InternEvo out leaves it at Megatron's)."""


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
    from gpuplan.catalog import efficiency_record

    return efficiency_record()


def default_efficiency() -> Efficiency:
    """The fitted constants, or the unfitted defaults when no fit has been recorded."""
    record = fitted_record().get("efficiency", {})
    return Efficiency(**{name: float(record[name]) for name in FITTED_FIELDS if name in record})
