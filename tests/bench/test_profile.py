"""Calibration profiles from stored runs."""

from __future__ import annotations

import dataclasses

import pytest

from gpuplan.bench.profile import CalibrationProfile, load_profile, profile_from_result
from gpuplan.store import StoreError, save_bench_run


def figure(key: str, spec_ratio: float | None) -> dict:
    return {"key": key, "spec_ratio": spec_ratio}


def stored_result() -> dict:
    return {
        "method_version": 1,
        "gpu_id": "h100-sxm-80gb",
        "worst_verdict": "PASS",
        "provenance": {
            "date": "2026-01-02T03:04:05+00:00",
            "hostname": "node-1",
            "device": "cuda",
            "command": "gpuplan bench",
            "gpus": [],
        },
        "figures": [
            figure("matmul.bf16", 0.80),
            figure("matmul.fp8", 0.71),
            figure("matmul.fp32", None),
            figure("matmul_model.mlp_up.forward", 0.6),
            figure("memory.device_copy", 0.78),
            figure("collectives.all_reduce", 0.82),
            figure("collectives.all_reduce.inter_node", 0.74),
        ],
    }


def test_profile_takes_spec_efficiencies():
    profile = profile_from_result(stored_result(), run_id=7)
    assert profile.matmul_efficiency == {"bf16": 0.80, "fp8": 0.71}
    assert profile.hbm_efficiency == 0.78
    assert profile.intra_node_bus_bandwidth_efficiency == 0.82
    assert profile.inter_node_bus_bandwidth_efficiency == 0.74
    assert (profile.gpu_id, profile.source_run_id) == ("h100-sxm-80gb", 7)
    assert profile.source_date.startswith("2026-01-02")
    with pytest.raises(dataclasses.FrozenInstanceError):
        profile.hbm_efficiency = 1.0  # type: ignore[misc]
    assert profile.to_dict()["matmul_efficiency"]["bf16"] == 0.80


def test_an_nvls_busbw_above_the_link_gives_the_speed_model_at_most_one():
    result = stored_result()
    nvls = {"key": "collectives.all_reduce", "spec_ratio": 1.3, "details": {"nvls": "on"}}
    result["figures"] = [nvls]
    assert profile_from_result(result).intra_node_bus_bandwidth_efficiency == 1.0
    nvls["details"]["link_efficiency"] = 0.97
    assert profile_from_result(result).intra_node_bus_bandwidth_efficiency == 0.97


def test_load_profile_reads_the_store(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUPLAN_DATA_DIR", str(tmp_path))
    run_id = save_bench_run(stored_result())
    profile = load_profile(run_id)
    assert isinstance(profile, CalibrationProfile)
    assert profile.source_run_id == run_id
    with pytest.raises(StoreError, match="run id"):
        load_profile(run_id + 1)
