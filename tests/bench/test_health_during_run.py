"""XIDs and HBM row remapping over the whole run, on fake GPUs and a fake NVML: a critical XID
or a remap fault during the run FAILs its GPU, a non-critical XID is listed but passes, a
stored partial run already has the XIDs seen so far, and an NVML without the call SKIPs."""

from __future__ import annotations

import copy
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, str(Path(__file__).parent))

from fake_cuda import FakeNode, fake_gpus, h100_sxm  # noqa: E402
from fake_nvml import FakeNvml  # noqa: E402

from gpuplan.bench import runner  # noqa: E402
from gpuplan.bench.runner import BenchOptions, run_bench  # noqa: E402


class ListRecorder:
    """A RunRecorder that keeps a copy of every stored snapshot in memory."""

    def __init__(self) -> None:
        self.stored: list[dict[str, Any]] = []

    def record(self, result: dict[str, Any]) -> None:
        self.stored.append(copy.deepcopy(result))


def _stub(action: Callable[[], None] = lambda: None) -> Callable[[Any], None]:
    def measure(_context: Any) -> None:
        action()

    return measure


def _run(
    monkeypatch: pytest.MonkeyPatch,
    nvml: FakeNvml | None,
    node: FakeNode,
    parts: dict[str, Callable[[Any], None]],
    recorder: ListRecorder | None = None,
) -> dict[str, Any]:
    """run_bench on ``node`` with each part of ``parts`` replaced by its stub (in run order)."""
    for part, measure in parts.items():
        monkeypatch.setitem(runner.MEASUREMENTS, part, measure)
    with fake_gpus(monkeypatch, node, nvml=nvml):
        return run_bench(
            BenchOptions(device="cuda", quick=True, parts=tuple(parts), command="pytest"),
            recorder=recorder,  # type: ignore[arg-type]
        )


def _figures(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {figure["key"]: figure for figure in result["figures"]}


def _two_gpus() -> tuple[FakeNode, FakeNvml]:
    node = FakeNode([h100_sxm()] * 2)
    return node, FakeNvml.for_node(node)


def test_healthy_gpus_pass_and_the_event_set_is_freed(monkeypatch):
    node, nvml = _two_gpus()
    result = _run(monkeypatch, nvml, node, {"matmul": _stub()})
    figures = _figures(result)
    for index in (0, 1):
        assert figures[f"health.xid.cuda:{index}"]["verdict"] == "PASS"
        assert figures[f"health.xid.cuda:{index}"]["measured"] == 0
        rows = figures[f"health.remapped_rows.cuda:{index}"]
        assert rows["verdict"] == "PASS"
        assert rows["details"]["after_read"] == "at the end of the run"
    assert nvml.calls.count("nvmlDeviceRegisterEvents") == 2
    assert "nvmlEventSetFree" in nvml.calls


def test_a_critical_xid_during_a_part_fails_its_gpu_and_a_non_critical_one_is_listed(monkeypatch):
    node, nvml = _two_gpus()

    def raise_xids() -> None:
        nvml.gpus[1].xids.append(79)
        nvml.gpus[0].xids.append(13)

    result = _run(monkeypatch, nvml, node, {"matmul": _stub(raise_xids), "memory": _stub()})
    figures = _figures(result)
    fallen = figures["health.xid.cuda:1"]
    assert fallen["verdict"] == "FAIL"
    assert fallen["measured"] == 1
    assert fallen["details"]["critical_xids"] == [79]
    assert "XID 79" in fallen["label"]
    assert "azure_gpu_xid.nhc" in fallen["reason"]
    other = figures["health.xid.cuda:0"]
    assert other["verdict"] == "PASS"
    assert other["details"]["non_critical_xids"] == [13]
    assert result["worst_verdict"] == "FAIL"


def test_a_stored_partial_run_has_the_xids_so_far_and_ctrl_c_closes_the_watch(monkeypatch):
    node, nvml = _two_gpus()
    recorder = ListRecorder()

    def interrupt() -> None:
        raise KeyboardInterrupt

    parts = {"matmul": _stub(lambda: nvml.gpus[0].xids.append(48)), "memory": _stub(interrupt)}
    with pytest.raises(KeyboardInterrupt):
        _run(monkeypatch, nvml, node, parts, recorder)
    after_matmul = _figures(recorder.stored[1])
    assert recorder.stored[1]["parts"] == {"matmul": "done", "memory": "pending"}
    assert after_matmul["health.xid.cuda:0"]["verdict"] == "FAIL"
    last = recorder.stored[-1]
    assert last["parts"]["memory"] == "interrupted"
    assert _figures(last)["health.remapped_rows.cuda:0"]["details"]["after_read"] == (
        "at the end of the run"
    )
    assert "nvmlEventSetFree" in nvml.calls


def test_no_event_support_skips_the_xid_figure_with_the_reason(monkeypatch):
    node = FakeNode([h100_sxm()])
    nvml = FakeNvml.for_node(node, fail={"nvmlEventSetCreate": FakeNvml.NVMLError_NotSupported})
    figure = _figures(_run(monkeypatch, nvml, node, {"matmul": _stub()}))["health.xid.cuda:0"]
    assert figure["verdict"] == "SKIPPED"
    assert "nvmlEventSetCreate" in figure["reason"] and "Not Supported" in figure["reason"]
    assert "dmesg" in figure["reason"]


def test_a_gpu_that_cannot_register_is_skipped_the_run_goes_on(monkeypatch):
    node = FakeNode([h100_sxm()])
    nvml = FakeNvml.for_node(
        node, fail={"nvmlDeviceRegisterEvents": FakeNvml.NVMLError_NotSupported}
    )
    result = _run(monkeypatch, nvml, node, {"matmul": _stub()})
    figure = _figures(result)["health.xid.cuda:0"]
    assert figure["verdict"] == "SKIPPED"
    assert "nvmlDeviceRegisterEvents" in figure["reason"]
    assert result["parts"] == {"matmul": "done"}


def test_without_nvml_both_health_figures_say_why(monkeypatch):
    node = FakeNode([h100_sxm()])
    figures = _figures(_run(monkeypatch, None, node, {"matmul": _stub()}))
    for key in ("health.xid.cuda:0", "health.remapped_rows.cuda:0"):
        assert figures[key]["verdict"] == "SKIPPED"
        assert "no NVML" in figures[key]["reason"]


def test_uncorrectable_rows_remapped_during_the_burn_fail_read_after_the_burn(monkeypatch):
    node, nvml = _two_gpus()

    def remap() -> None:
        nvml.gpus[1].remapped_rows = (3, 2, 0, 0)
        nvml.gpus[0].remapped_rows = (5, 0, 0, 0)

    result = _run(monkeypatch, nvml, node, {"burn": _stub(remap)})
    figures = _figures(result)
    faulty = figures["health.remapped_rows.cuda:1"]
    assert faulty["verdict"] == "FAIL"
    assert faulty["measured"] == 2
    assert faulty["details"]["after_read"] == "after the burn"
    assert "2 row(s) remapped for uncorrectable errors" in faulty["label"]
    assert "a100-gpu-mem-error-mgmt" in faulty["reason"]
    correctable_only = figures["health.remapped_rows.cuda:0"]
    assert correctable_only["verdict"] == "PASS"


def test_uncorrectable_rows_remapped_before_the_run_are_not_the_runs_fault(monkeypatch):
    node = FakeNode([h100_sxm()])
    nvml = FakeNvml.for_node(node)
    nvml.gpus[0].remapped_rows = (0, 4, 0, 0)
    figure = _figures(_run(monkeypatch, nvml, node, {"matmul": _stub()}))[
        "health.remapped_rows.cuda:0"
    ]
    assert figure["verdict"] == "PASS"
    assert figure["details"]["before"]["uncorrectable"] == 4


@pytest.mark.parametrize(
    ("rows", "finding"),
    [((0, 0, 1, 0), "pending"), ((0, 0, 0, 1), "failed")],
)
def test_a_pending_or_failed_remap_fails(monkeypatch, rows, finding):
    node = FakeNode([h100_sxm()])
    nvml = FakeNvml.for_node(node)
    nvml.gpus[0].remapped_rows = rows
    figure = _figures(_run(monkeypatch, nvml, node, {"matmul": _stub()}))[
        "health.remapped_rows.cuda:0"
    ]
    assert figure["verdict"] == "FAIL"
    assert finding in figure["label"]


def test_remapped_rows_unsupported_is_skipped_with_the_nvml_error(monkeypatch):
    node = FakeNode([h100_sxm()])
    nvml = FakeNvml.for_node(node)
    nvml.gpus[0].remapped_rows = None
    figure = _figures(_run(monkeypatch, nvml, node, {"matmul": _stub()}))[
        "health.remapped_rows.cuda:0"
    ]
    assert figure["verdict"] == "SKIPPED"
    assert "nvmlDeviceGetRemappedRows" in figure["reason"]
    assert "A100 and later" in figure["reason"]


def test_a_lost_gpu_is_skipped_and_the_others_are_watched(monkeypatch):
    node, _ = _two_gpus()
    nvml = FakeNvml.for_node(node, mode="lost_gpu", lost_index=1)
    result = _run(monkeypatch, nvml, node, {"matmul": _stub(lambda: nvml.gpus[0].xids.append(79))})
    figures = _figures(result)
    assert figures["health.xid.cuda:0"]["verdict"] == "FAIL"
    assert figures["health.xid.cuda:1"]["verdict"] == "SKIPPED"
    assert figures["health.remapped_rows.cuda:1"]["verdict"] == "SKIPPED"
    assert result["parts"] == {"matmul": "done"}


def test_the_cpu_self_test_has_no_gpu_health_figures(tmp_path):
    result = run_bench(
        BenchOptions(device="cpu", quick=True, parts=(), command="pytest"),
    )
    assert not [f for f in result["figures"] if f["key"].startswith("health.")]
