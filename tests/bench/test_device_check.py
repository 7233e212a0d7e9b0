"""scripts/device-check.sh and its comparison with the independent referee, run on the CPU."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _compare_module():
    spec = importlib.util.spec_from_file_location(
        "device_compare", ROOT / "scripts/device_compare.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_facts_both_measured_are_compared_and_a_disagreement_is_marked():
    compare = _compare_module()
    figures = {
        "matmul.bf16": {"measured": 700e12},
        "memory.device_copy": {"measured": 4.0e12, "details": {"buffer_bytes": 2 * 2**30}},
        "pcie.host_to_device_pinned": {"measured": 55e9},
    }
    raw = {
        "bf16_shapes_vs_mamf": {"best_gpuplan_quick_shapes": 690.0, "best_extra": 760.0},
        "events_vs_wall_and_hbm": {
            "256MiB": {"copy_traffic_TBps_events": 3.0, "read_TBps": 3.5},
            "2048MiB": {"copy_traffic_TBps_events": 4.1, "read_TBps": 4.4},
        },
        "pcie": {"h2d_pinned_GBps": 55.4},
    }
    lines = compare.comparison_lines(figures, raw)
    matmul, copy, pcie = lines[1:]
    assert "matmul bf16" in matmul and "DISAGREE" in matmul
    assert "-2.4%" in copy and "DISAGREE" not in copy
    assert "pcie.host_to_device_pinned" in pcie and "DISAGREE" not in pcie
    assert "no fact" in compare.comparison_lines({}, raw)[1]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("timeout") is None, reason="needs coreutils timeout")
def test_device_check_dry_run_on_the_cpu_writes_every_result(tmp_path):
    pytest.importorskip("torch")
    out = tmp_path / "out"
    environment = {**os.environ, "DEVICE": "cpu", "OUT": str(out), "GPU_FACTS": "/nonexistent"}
    completed = subprocess.run(
        ["bash", "scripts/device-check.sh"], cwd=ROOT, env=environment, capture_output=True,
        text=True, timeout=300,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr
    log = (out / "log.txt").read_text()
    for step in ("environment", "bench-quick", "bench-matmul-full", "bench-probe", "compare"):
        assert f"=== {step}: exit 0" in log, log[-2000:]
    assert json.loads((out / "bench-quick.json").read_text())["worst_verdict"] == "PASS"
    assert (out / "compare.txt").exists()
