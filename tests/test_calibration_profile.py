"""A stored bench run calibrates `gpuplan estimate` and `gpuplan plan` for its GPU."""

from __future__ import annotations

import pytest

from gpuplan.api import estimate, plan_search
from gpuplan.store import save_bench_run

SCENARIO = {
    "model": "llama-3.1-8b",
    "seq_len": 4096,
    "global_batch": 64,
    "tokens": "1B",
    "hardware": {"gpu": "h100-sxm-80gb", "count": 8},
    "strategy": {"zero": 1},
}


def _run(bf16_matmul: float, gpu_id: str = "h100-sxm-80gb") -> dict:
    return {
        "method_version": 1,
        "gpu_id": gpu_id,
        "worst_verdict": "PASS",
        "provenance": {
            "date": "2026-11-30T00:00:00+00:00",
            "hostname": "rented",
            "device": "cuda",
            "command": "gpuplan bench",
            "gpus": [],
        },
        "figures": [
            {"key": "matmul.bf16", "spec_ratio": bf16_matmul},
            {"key": "memory.device_copy", "spec_ratio": 0.85},
            {"key": "collectives.all_reduce", "spec_ratio": 0.80},
        ],
    }


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUPLAN_DATA_DIR", str(tmp_path))


def test_a_slow_machine_predicts_slower_training(store):
    slow = save_bench_run(_run(0.40))
    fast = save_bench_run(_run(0.90))
    built_in = estimate(SCENARIO)["throughput"]["tokens_per_second"]
    slow_result = estimate(SCENARIO, profile=slow)
    fast_result = estimate(SCENARIO, profile=fast)
    assert (
        slow_result["throughput"]["tokens_per_second"]
        < built_in
        < fast_result["throughput"]["tokens_per_second"]
    )
    assert any(f"bench run {slow}" in warning for warning in slow_result["warnings"])


def test_a_profile_of_another_gpu_changes_nothing_and_says_so(store):
    other = save_bench_run(_run(0.40, gpu_id="a100-sxm-80gb"))
    result = estimate(SCENARIO, profile=other)
    assert result["throughput"]["tokens_per_second"] == pytest.approx(
        estimate(SCENARIO)["throughput"]["tokens_per_second"]
    )
    assert any("not h100-sxm-80gb" in warning for warning in result["warnings"])


def test_plan_uses_the_profile_for_its_gpu(store):
    slow = save_bench_run(_run(0.30))
    scenario = {
        key: value for key, value in SCENARIO.items() if key not in ("hardware", "strategy")
    }
    plain = plan_search(scenario, gpus=("h100",), objective="time", limit=1)["plans"][0]
    calibrated = plan_search(scenario, gpus=("h100",), objective="time", limit=1, profile=slow)[
        "plans"
    ][0]
    assert calibrated["duration"]["seconds"] > plain["duration"]["seconds"]
