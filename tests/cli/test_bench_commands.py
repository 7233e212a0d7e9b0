"""`gpuplan bench` and its history/show/compare subcommands through the real entry point."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from gpuplan.store import save_bench_run


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUPLAN_DATA_DIR", str(tmp_path))
    return tmp_path


def stored_run() -> int:
    return save_bench_run(
        {
            "method_version": 1,
            "gpu_id": "h100-sxm-80gb",
            "worst_verdict": "WARN",
            "provenance": {
                "date": "2026-01-02T03:04:05+00:00",
                "hostname": "node-1",
                "device": "cuda",
                "command": "gpuplan bench --quick",
                "gpus": [{"name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-1"}] * 8,
                "driver_version": "550.54.15",
                "cuda_version": "12.4",
                "torch_version": "2.13.0",
            },
            "figures": [
                {
                    "key": "matmul.bf16",
                    "label": "matmul bf16",
                    "category": "matmul",
                    "unit": "FLOP/s",
                    "measured": 700e12,
                    "spec": 989e12,
                    "spec_ratio": 700 / 989,
                    "reference": 794.5e12,
                    "reference_ratio": 700 / 794.5,
                    "verdict": "WARN",
                    "threshold": "PASS >= 0.9 x reference, WARN >= 0.75 x",
                    "reason": "88.1% of reference",
                    "details": {},
                },
                {
                    "key": "collectives.all_reduce.inter_node",
                    "label": "all_reduce across nodes",
                    "category": "collective_inter_node",
                    "unit": "bytes/s",
                    "measured": 45e9,
                    "spec": 50e9,
                    "spec_ratio": 0.9,
                    "reference": 40e9,
                    "reference_ratio": 45 / 40,
                    "verdict": "PASS",
                    "threshold": "",
                    "reason": "",
                    "details": {},
                },
            ],
            "measurements": {},
        }
    )


def test_without_torch_bench_says_what_to_install(cli, monkeypatch, data_dir):
    monkeypatch.setitem(sys.modules, "torch", None)
    code, out, err = cli("bench", "--device", "cpu", "--quick")
    assert code == 2
    assert out == ""
    assert err.strip().count("\n") == 0
    from gpuplan.extras import install_hint

    assert "PyTorch" in err and install_hint("bench") in err


def test_bad_input_names_the_field(cli, data_dir):
    code, _, err = cli("bench", "--device", "tpu")
    assert code == 2 and err.startswith("error: --device")
    code, _, err = cli("bench", "show", "99")
    assert code == 2 and "run id" in err


def test_collectives_prints_launch_lines(cli):
    code, out, _ = cli("bench", "--collectives", "--nodes", "4", "--json")
    assert code == 0
    commands = json.loads(out)
    assert "torchrun --nnodes 4" in commands["torchrun"]
    assert commands["slurm"].startswith("srun")
    code, out, _ = cli("bench", "--collectives", "--network", "ib-ndr-400g", "--json")
    assert code == 0 and "--network ib-ndr-400g" in json.loads(out)["torchrun"]
    code, _, err = cli("bench", "--collectives", "--network", "fast")
    assert code == 2 and "--network" in err and "ib-ndr-400g" in err


def test_history_show_and_compare(cli, data_dir):
    run_id = stored_run()
    code, out, _ = cli("bench", "history", "--json")
    assert code == 0 and json.loads(out)[0]["id"] == run_id
    code, out, _ = cli("bench", "history")
    assert code == 0 and "node-1" in out
    code, out, _ = cli("bench", "show", str(run_id), "--json")
    assert code == 0 and json.loads(out)["figures"][0]["key"] == "matmul.bf16"
    code, out, _ = cli("bench", "show", str(run_id))
    assert code == 0 and "matmul bf16" in out and "WARN" in out
    code, out, _ = cli(
        "bench",
        "compare",
        str(run_id),
        "azure-nd96isr-h100-v5-eastus",
        "--json",
    )
    assert code == 0
    comparison = json.loads(out)
    checks = {check["item"]: check["verdict"] for check in comparison["checks"]}
    assert checks == {"GPU model": "PASS", "GPU count": "PASS"}
    figures = {figure["key"]: figure for figure in comparison["figures"]}
    assert figures["matmul.bf16"]["verdict"] == "WARN"
    assert figures["collectives.all_reduce.inter_node"]["spec"] == 50e9
    assert figures["collectives.all_reduce.inter_node"]["verdict"] == "PASS"
    code, out, _ = cli("bench", "compare", str(run_id), "lambda-b200-x1")
    assert code == 1 and "FAIL" in out, "a comparison that FAILs is a negative verdict"


@pytest.mark.slow
def test_cpu_quick_bench_end_to_end(cli, data_dir, tmp_path):
    pytest.importorskip("torch")
    code, out, _ = cli(
        "bench",
        "--device",
        "cpu",
        "--quick",
        "--storage-dir",
        str(tmp_path),
        "--storage-size",
        "16MiB",
        "--storage-claim",
        "1MB/s",
        "--json",
    )
    assert code == 0
    result = json.loads(out)
    assert result["worst_verdict"] == "PASS"
    assert result["provenance"]["command"].startswith("gpuplan bench --device cpu")
    assert result["method_version"] >= 1
    code, out, _ = cli("bench", "history", "--json")
    assert json.loads(out)[0]["id"] == result["id"]


def test_help_does_not_import_torch_or_nvml():
    code = (
        "import sys; from gpuplan.cli.app import app; from typer.testing import CliRunner; "
        "CliRunner().invoke(app, ['--help']); CliRunner().invoke(app, ['bench', '--help']); "
        "print([m for m in ('torch', 'pynvml') if m in sys.modules])"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"
