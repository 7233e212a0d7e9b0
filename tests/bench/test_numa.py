"""NUMA binding of the host side of the PCIe copies: the thread runs on the GPU's local CPUs
(NVML, else sysfs) while its host buffers are allocated and copied, the previous affinity comes
back afterwards, the figure says which CPUs, and a missing NVML or sysfs gives the reason."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
if not hasattr(os, "sched_setaffinity"):
    pytest.skip("CPU affinity is Linux only", allow_module_level=True)

sys.path.insert(0, str(Path(__file__).parent))

from fake_cuda import FakeNode, fake_gpus, h100_sxm  # noqa: E402
from fake_nvml import FakeNvml  # noqa: E402

from gpuplan.bench import environment, memory_bandwidth, runner  # noqa: E402
from gpuplan.bench.environment import (  # noqa: E402
    bound_to_gpu_cpus,
    cpus_from_bitmasks,
    parse_cpulist,
    sysfs_bus_id,
)
from gpuplan.bench.runner import BenchOptions, run_bench  # noqa: E402

ALLOWED = sorted(os.sched_getaffinity(0))
LOCAL_CPU = ALLOWED[-1]
"""A CPU this process may use, standing in for the GPU's local node."""


@pytest.fixture(autouse=True)
def no_sysfs(monkeypatch, tmp_path):
    """sysfs of this machine's own PCI devices must not answer for the fake GPUs."""
    monkeypatch.setattr(environment, "SYSFS_PCI_DEVICES", tmp_path / "pci")
    return tmp_path / "pci"


def _node_and_nvml(local_cpus: list[int] | None, **options: Any) -> tuple[FakeNode, FakeNvml]:
    node = FakeNode([h100_sxm()])
    nvml = FakeNvml.for_node(node, **options)
    nvml.gpus[0].local_cpus = local_cpus
    nvml.nvmlInit()
    return node, nvml


def _binding(monkeypatch, node: FakeNode, nvml: Any) -> tuple[dict[str, Any], set[int]]:
    """What bound_to_gpu_cpus yields for cuda:0 and the thread's affinity inside it."""
    with fake_gpus(monkeypatch, node, nvml=nvml), bound_to_gpu_cpus(nvml, node.torch, 0) as bound:
        inside = set(os.sched_getaffinity(0))
    return bound, inside


def test_nvml_bitmasks_cpulists_and_bus_ids_are_read_as_documented():
    assert cpus_from_bitmasks([0x3, 0x3]) == {0, 1, 64, 65}
    assert cpus_from_bitmasks([0]) == frozenset()
    assert parse_cpulist("0-3,8,10-11\n") == {0, 1, 2, 3, 8, 10, 11}
    assert sysfs_bus_id("00000000:AB:00.0") == "0000:ab:00.0"


def test_binding_is_applied_inside_and_restored_after(monkeypatch):
    node, nvml = _node_and_nvml([LOCAL_CPU])
    before = set(os.sched_getaffinity(0))
    bound, inside = _binding(monkeypatch, node, nvml)
    assert inside == {LOCAL_CPU}
    assert set(os.sched_getaffinity(0)) == before
    assert bound == {
        "numa_cpus": [LOCAL_CPU],
        "numa_binding": "bound: nvmlDeviceGetCpuAffinityWithinScope",
    }


def test_affinity_is_restored_when_the_body_raises(monkeypatch):
    node, nvml = _node_and_nvml([LOCAL_CPU])
    before = set(os.sched_getaffinity(0))
    with (
        fake_gpus(monkeypatch, node, nvml=nvml),
        pytest.raises(RuntimeError),
        bound_to_gpu_cpus(nvml, node.torch, 0),
    ):
        raise RuntimeError("CUDA error")
    assert set(os.sched_getaffinity(0)) == before


def test_a_driver_without_the_scoped_call_uses_nvmlDeviceGetCpuAffinity(monkeypatch):
    node, nvml = _node_and_nvml(
        [LOCAL_CPU],
        fail={"nvmlDeviceGetCpuAffinityWithinScope": FakeNvml.NVMLError_FunctionNotFound},
    )
    bound, inside = _binding(monkeypatch, node, nvml)
    assert inside == {LOCAL_CPU}
    assert bound["numa_binding"] == "bound: nvmlDeviceGetCpuAffinity"


def test_sysfs_local_cpulist_answers_where_nvml_does_not(monkeypatch, no_sysfs):
    node, nvml = _node_and_nvml(None)
    device = no_sysfs / "0000:18:00.0"
    device.mkdir(parents=True)
    (device / "local_cpulist").write_text(f"{LOCAL_CPU}\n")
    bound, inside = _binding(monkeypatch, node, nvml)
    assert inside == {LOCAL_CPU}
    assert bound["numa_cpus"] == [LOCAL_CPU]
    assert bound["numa_binding"] == f"bound: {device / 'local_cpulist'}"


def test_no_local_cpu_list_anywhere_gives_the_reason_not_an_error(monkeypatch):
    node, nvml = _node_and_nvml(None)
    before = set(os.sched_getaffinity(0))
    bound, inside = _binding(monkeypatch, node, nvml)
    assert inside == before
    assert bound["numa_cpus"] is None
    assert bound["numa_binding"].startswith("not bound: ")
    assert "nvmlDeviceGetCpuAffinity" in bound["numa_binding"]
    assert "local_cpulist" in bound["numa_binding"]


def test_without_nvml_or_off_linux_it_says_not_bound(monkeypatch):
    node, _ = _node_and_nvml(None)
    bound, _ = _binding(monkeypatch, node, None)
    assert bound == {
        "numa_cpus": None,
        "numa_binding": "not bound: no NVML: the GPU's local CPUs are unknown",
    }
    nvml = FakeNvml.for_node(node)
    nvml.nvmlInit()
    monkeypatch.delattr(os, "sched_setaffinity")
    bound, _ = _binding(monkeypatch, node, nvml)
    assert bound["numa_cpus"] is None
    assert "Linux only" in bound["numa_binding"]


def test_local_cpus_outside_this_process_cpuset_are_not_bound(monkeypatch):
    outside = [cpu for cpu in range(64) if cpu not in ALLOWED][:2]
    node, nvml = _node_and_nvml(outside)
    bound, _ = _binding(monkeypatch, node, nvml)
    assert bound["numa_cpus"] is None
    assert "is allowed to this process" in bound["numa_binding"]


def test_the_pcie_figures_record_the_cpus_and_the_copies_run_bound(monkeypatch):
    node, nvml = _node_and_nvml([LOCAL_CPU])
    affinity_during_copies: list[set[int]] = []
    host_transfers = memory_bandwidth._host_transfers

    def spy(*args: Any, **kwargs: Any) -> dict[str, Any]:
        affinity_during_copies.append(set(os.sched_getaffinity(0)))
        return host_transfers(*args, **kwargs)

    monkeypatch.setattr(memory_bandwidth, "_host_transfers", spy)
    before = set(os.sched_getaffinity(0))
    with fake_gpus(monkeypatch, node, nvml=nvml):
        result = run_bench(
            BenchOptions(device="cuda", quick=True, parts=("memory",), command="pytest")
        )
    assert affinity_during_copies == [{LOCAL_CPU}]
    assert set(os.sched_getaffinity(0)) == before
    figures = {figure["key"]: figure for figure in result["figures"]}
    for name in runner.PCIE_COPIES:
        details = figures[f"pcie.{name}"]["details"]
        assert details["numa_cpus"] == [LOCAL_CPU]
        assert details["numa_binding"].startswith("bound: ")
    assert figures["pcie.host_to_device_pinned"]["verdict"] == "PASS"


def test_an_unbound_run_still_measures_and_says_why(monkeypatch):
    node, nvml = _node_and_nvml(None)
    with fake_gpus(monkeypatch, node, nvml=nvml):
        result = run_bench(
            BenchOptions(device="cuda", quick=True, parts=("memory",), command="pytest")
        )
    figure = {f["key"]: f for f in result["figures"]}["pcie.host_to_device_pinned"]
    assert figure["measured"] > 0
    assert figure["details"]["numa_cpus"] is None
    assert figure["details"]["numa_binding"].startswith("not bound: ")


def test_each_burn_thread_runs_on_its_gpus_local_cpus_and_is_restored(monkeypatch):
    from gpuplan.bench import burn

    node = FakeNode([h100_sxm()] * 2)
    nvml = FakeNvml.for_node(node)
    nvml.gpus[0].local_cpus = [LOCAL_CPU]
    nvml.gpus[1].local_cpus = None
    nvml.nvmlInit()
    seen: dict[str, set[int]] = {}
    loop = burn._burn_loop

    def spy(torch_module: Any, device: str, *args: Any) -> dict[str, Any]:
        seen[device] = set(os.sched_getaffinity(0))
        return loop(torch_module, device, *args)

    monkeypatch.setattr(burn, "_burn_loop", spy)
    before = set(os.sched_getaffinity(0))
    with fake_gpus(monkeypatch, node, nvml=nvml):
        result = burn.run_burn(node.torch, "cuda", seconds=1.0, interval_seconds=0.25, nvml=nvml)
    entries = {entry["device"]: entry for entry in result["devices"]}
    assert seen["cuda:0"] == {LOCAL_CPU}
    assert seen["cuda:1"] == before
    assert entries["cuda:0"]["numa_cpus"] == [LOCAL_CPU]
    assert entries["cuda:1"]["numa_binding"].startswith("not bound: ")
    assert set(os.sched_getaffinity(0)) == before
