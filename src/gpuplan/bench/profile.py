"""Calibration profiles: a stored bench run turned into efficiencies the speed model can use.

Efficiency = measured / data-sheet peak, per figure (design note: ``spec_efficiency`` feeds
the predictions, measured values override the fitted constants per machine).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuplan.store import StoreError, load_bench_run


@dataclass(frozen=True)
class CalibrationProfile:
    """What one machine achieved, as fractions of its GPU's catalog peaks."""

    gpu_id: str | None
    matmul_efficiency: Mapping[str, float] = field(default_factory=dict)
    """measured MAMF / dense peak, per dtype (fp32, tf32, bf16, fp16, fp8)."""
    hbm_efficiency: float | None = None
    """measured device-copy traffic / catalog memory bandwidth."""
    intra_node_bus_bandwidth_efficiency: float | None = None
    """measured all-reduce busbw inside a node / catalog intra-node link bandwidth."""
    inter_node_bus_bandwidth_efficiency: float | None = None
    """measured per-GPU network rate across nodes / line rate."""
    source_run_id: int = 0
    source_date: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "gpu_id": self.gpu_id,
            "matmul_efficiency": dict(self.matmul_efficiency),
            "hbm_efficiency": self.hbm_efficiency,
            "intra_node_bus_bandwidth_efficiency": self.intra_node_bus_bandwidth_efficiency,
            "inter_node_bus_bandwidth_efficiency": self.inter_node_bus_bandwidth_efficiency,
            "source_run_id": self.source_run_id,
            "source_date": self.source_date,
        }


def profile_from_result(result: Mapping[str, Any], run_id: int = 0) -> CalibrationProfile:
    """The profile of a bench result (as ``gpuplan bench --json`` prints it)."""
    efficiencies: dict[str, float] = {}
    matmul: dict[str, float] = {}
    for figure in result["figures"]:
        ratio = figure.get("spec_ratio")
        if ratio is None:
            continue
        key = figure["key"]
        if key.startswith("collectives."):
            ratio = min(1.0, figure.get("details", {}).get("link_efficiency", ratio))
        if key.startswith("matmul.") and key.count(".") == 1:
            matmul[key.split(".", 1)[1]] = ratio
        else:
            efficiencies.setdefault(key, ratio)
    return CalibrationProfile(
        gpu_id=result.get("gpu_id"),
        matmul_efficiency=matmul,
        hbm_efficiency=efficiencies.get("memory.device_copy"),
        intra_node_bus_bandwidth_efficiency=efficiencies.get("collectives.all_reduce"),
        inter_node_bus_bandwidth_efficiency=efficiencies.get("collectives.all_reduce.inter_node"),
        source_run_id=run_id,
        source_date=result["provenance"]["date"],
    )


def load_profile(run_id: int, database: Path | None = None) -> CalibrationProfile:
    """The calibration profile of stored run ``run_id`` (``gpuplan bench history`` lists them)."""
    result = load_bench_run(run_id, database)
    if not result.get("figures"):
        raise StoreError.of("error.profile_no_figures", run=run_id)
    return profile_from_result(result, run_id)
