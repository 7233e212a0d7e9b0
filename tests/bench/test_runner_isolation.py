"""Each bench part runs isolated and the run is stored part by part: an exception in one part
leaves an ERROR figure and the others still run; Ctrl-C keeps the parts already stored; the CPU
self-test passes on a healthy machine."""

from __future__ import annotations

import sys

import pytest

torch = pytest.importorskip("torch")

from gpuplan.bench import runner  # noqa: E402
from gpuplan.bench.report import Figure  # noqa: E402
from gpuplan.bench.runner import BenchOptions, RunRecorder, run_bench  # noqa: E402
from gpuplan.store import list_bench_runs, load_bench_run  # noqa: E402

FAST_PARTS = ("matmul", "memory", "storage")


def options(tmp_path, parts=FAST_PARTS) -> BenchOptions:
    return BenchOptions(
        device="cpu",
        quick=True,
        parts=parts,
        storage_directory=tmp_path,
        storage_bytes=16 * 2**20,
        command="pytest",
    )


def raising(error: BaseException):
    def measure(_context) -> None:
        raise error

    return measure


def test_a_cuda_error_in_one_part_leaves_an_error_figure_and_the_others_run(tmp_path, monkeypatch):
    message = "CUDA error: an illegal memory access was encountered\nCUDA kernel errors ..."
    monkeypatch.setitem(runner.MEASUREMENTS, "memory", raising(RuntimeError(message)))
    database = tmp_path / "runs.sqlite3"
    result = run_bench(options(tmp_path), recorder=RunRecorder(database))
    figures = {figure["key"]: figure for figure in result["figures"]}
    assert result["parts"] == {"matmul": "done", "memory": "error", "storage": "done"}
    assert figures["matmul.fp32"]["measured"] > 0
    assert figures["storage.sequential_write"]["measured"] > 0
    error = figures["memory.error"]
    assert error["verdict"] == "ERROR"
    assert error["reason"] == (
        "memory did not finish: RuntimeError: CUDA error: an illegal memory access was encountered"
    )
    assert "\n" not in error["reason"]
    assert result["worst_verdict"] == "ERROR"
    stored = load_bench_run(result["id"], path=database)
    assert stored["worst_verdict"] == "ERROR"
    assert {f["key"] for f in stored["figures"]} == set(figures)
    assert len(list_bench_runs(path=database)) == 1


def test_an_out_of_memory_error_is_recorded_for_its_part(tmp_path, monkeypatch):
    oom = torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
    monkeypatch.setitem(runner.MEASUREMENTS, "matmul", raising(oom))
    result = run_bench(options(tmp_path, ("matmul", "storage")))
    figures = {figure["key"]: figure for figure in result["figures"]}
    assert figures["matmul.error"]["verdict"] == "ERROR"
    assert "OutOfMemoryError: CUDA out of memory" in figures["matmul.error"]["reason"]
    assert result["measurements"]["errors"]["matmul"].startswith("OutOfMemoryError")
    assert figures["storage.sequential_read"]["measured"] > 0


def test_figures_added_before_the_exception_are_kept(tmp_path, monkeypatch):
    def half_done(context) -> None:
        context.figures.append(Figure("memory.device_copy", "copy", "hbm", "bytes/s", 1e9))
        raise ValueError("second half broke")

    monkeypatch.setitem(runner.MEASUREMENTS, "memory", half_done)
    result = run_bench(options(tmp_path, ("memory",)))
    keys = [figure["key"] for figure in result["figures"]]
    assert keys == ["memory.device_copy", "memory.error"]


def test_each_part_is_stored_before_the_next_one_starts(tmp_path, monkeypatch):
    database = tmp_path / "runs.sqlite3"
    seen: list[set[str]] = []

    def look_at_the_store(context) -> None:
        stored = list_bench_runs(path=database)
        run = load_bench_run(stored[0].id, path=database)
        seen.append({figure["key"] for figure in run["figures"]})
        seen.append(set(run["parts"].items()))

    monkeypatch.setitem(runner.MEASUREMENTS, "storage", look_at_the_store)
    run_bench(options(tmp_path, ("matmul", "storage")), recorder=RunRecorder(database))
    assert "matmul.fp32" in seen[0]
    assert seen[1] == {("matmul", "done"), ("storage", "pending")}


def test_ctrl_c_stops_the_run_and_keeps_the_parts_already_done(tmp_path, monkeypatch):
    monkeypatch.setitem(runner.MEASUREMENTS, "memory", raising(KeyboardInterrupt()))
    database = tmp_path / "runs.sqlite3"
    with pytest.raises(KeyboardInterrupt):
        run_bench(options(tmp_path), recorder=RunRecorder(database))
    (summary,) = list_bench_runs(path=database)
    stored = load_bench_run(summary.id, path=database)
    assert stored["parts"] == {"matmul": "done", "memory": "interrupted", "storage": "pending"}
    assert any(figure["key"] == "matmul.fp32" for figure in stored["figures"])


def test_cpu_self_test_gives_no_verdicts_and_passes(tmp_path):
    result = run_bench(options(tmp_path))
    assert result["worst_verdict"] == "PASS"
    verdicts = {figure["verdict"] for figure in result["figures"]}
    assert verdicts == {"SKIPPED"}
    storage = next(f for f in result["figures"] if f["key"] == "storage.sequential_read")
    assert storage["measured"] > 0


def test_cpu_self_test_holds_no_figure_to_a_gpu_reference_even_with_a_claim(tmp_path):
    chosen = options(tmp_path, ("storage",))
    chosen.storage_claim = 1e15
    result = run_bench(chosen)
    storage = next(f for f in result["figures"] if f["key"] == "storage.sequential_read")
    assert storage["verdict"] == "SKIPPED"
    assert storage["reason"] == "CPU self-test: no reference"
    assert result["worst_verdict"] == "PASS"


def test_cli_cpu_quick_exits_zero_and_stores_the_run(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("GPUPLAN_DATA_DIR", str(tmp_path))
    args = ("bench", "--device", "cpu", "--quick", "--only", "matmul,storage")
    code, out, _ = cli(*args, "--storage-dir", str(tmp_path), "--storage-size", "16MiB")
    assert code == 0, out
    assert "overall: PASS" in out
    assert list_bench_runs()[0].worst_verdict == "PASS"


def test_cli_exits_one_when_a_part_errors(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("GPUPLAN_DATA_DIR", str(tmp_path))
    monkeypatch.setitem(runner.MEASUREMENTS, "storage", raising(OSError("disk full")))
    code, out, _ = cli("bench", "--device", "cpu", "--quick", "--only", "storage")
    assert code == 1
    assert "storage did not finish: OSError: disk full" in out
    assert "Traceback" not in out


def test_a_broken_gpu_among_four_is_isolated_and_the_rest_are_measured(monkeypatch):
    from dataclasses import replace
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from fake_cuda import FakeNode, fake_gpus, h200_sxm

    healthy = h200_sxm()
    node = FakeNode([healthy] * 2 + [replace(healthy, fail_after_ops=5)] + [healthy])
    with fake_gpus(monkeypatch, node):
        result = run_bench(BenchOptions(device="cuda", quick=True, parts=("memory",)))
    figures = {figure["key"]: figure for figure in result["figures"]}
    assert result["parts"] == {"memory": "done"}
    assert figures["memory.error.cuda:2"]["verdict"] == "ERROR"
    assert "GPU 2" in figures["memory.error.cuda:2"]["reason"]
    for index in (1, 3):
        assert figures[f"memory.device_copy.cuda:{index}"]["verdict"] == "PASS"
        assert figures[f"pcie.host_to_device_pinned.cuda:{index}"]["measured"] > 0
    concurrent = figures["pcie.host_to_device_pinned.all_gpus"]
    assert concurrent["measured"] > 0 and "3 GPUs at once" in concurrent["label"]
    assert result["worst_verdict"] == "ERROR"


def test_updating_a_run_that_is_not_stored_is_a_one_line_error(tmp_path):
    from gpuplan.store import StoreError, update_bench_run

    result = run_bench(options(tmp_path, ("storage",)))
    with pytest.raises(StoreError, match="no stored benchmark run 7"):
        update_bench_run(7, result, path=tmp_path / "runs.sqlite3")
