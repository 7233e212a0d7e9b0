"""``gpuplan bench --device cuda`` end to end on fake GPUs (tests/bench/fake_cuda.py): healthy
H100/H200 figures pass, degraded ones do not, an A100 skips fp8, and failures are isolated."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, str(Path(__file__).parent))

from fake_cuda import (  # noqa: E402
    FakeCudaError,
    FakeCudaMode,
    FakeNode,
    a100_sxm,
    collective_table,
    fake_gpus,
    h100_mig_1g,
    h100_sxm,
    h200_sxm,
)
from fake_nvml import FakeNvml  # noqa: E402

from gpuplan.bench.runner import BenchOptions, run_bench  # noqa: E402

HEALTHY_PARTS = ("matmul", "memory")
TINY_MODEL = {
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "intermediate_size": 128,
    "vocab_size": 256,
}


def _run(
    monkeypatch: pytest.MonkeyPatch,
    node: FakeNode,
    parts: tuple[str, ...] = HEALTHY_PARTS,
    collectives: Any = None,
    nvml: Any = "ok",
    **options: Any,
) -> dict[str, Any]:
    """run_bench on ``node``; ``nvml`` is a FakeNvml mode for the node's GPUs, a FakeNvml, or
    None (no NVML)."""
    if isinstance(nvml, str):
        nvml = _nvml_for(node, nvml)
    with fake_gpus(monkeypatch, node, nvml=nvml, collectives=collectives):
        result = run_bench(
            BenchOptions(device="cuda", quick=True, parts=parts, command="pytest", **options)
        )
    return result


def _nvml_for(node: FakeNode, mode: str = "ok") -> FakeNvml:
    """FakeNvml.for_node: each GPU's PCIe link from its profile (an A100 is Gen4)."""
    return FakeNvml.for_node(node, mode)


def test_a_lowered_power_limit_warns_and_a_healthy_record_passes(monkeypatch):
    node = FakeNode([h100_sxm()] * 2)
    nvml = _nvml_for(node)
    nvml.gpus[1].power_limit_mw = 500_000
    result = _run(monkeypatch, node, parts=("memory",), nvml=nvml)
    verdicts = {
        f["key"]: f["verdict"] for f in result["figures"] if f["key"].startswith("health.findings")
    }
    assert verdicts == {"health.findings.cuda:0": "PASS", "health.findings.cuda:1": "WARN"}
    assert result["worst_verdict"] == "WARN"


def _figures(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {figure["key"]: figure for figure in result["figures"]}


def _healthy_collectives(gpu_id: str) -> Any:
    """Synthetic busbw at the bench's own ring (NVLS off) reference for ``gpu_id``."""
    from gpuplan.bench import references
    from gpuplan.catalog import load_gpu

    link = load_gpu(gpu_id).intra_node_bandwidth

    def launcher(ranks: int, *_: Any, **__: Any) -> dict[str, Any]:
        def busbw(name: str) -> float:
            reference = references.intra_node_collective_reference(gpu_id, name, link, ranks)
            assert reference is not None
            return float(reference.value)

        return collective_table(ranks, busbw, nccl_nvls_enable="0")

    return launcher


def test_fake_layer_times_work_at_the_profiles_rates():
    from gpuplan.bench import matmul, memory_bandwidth
    from gpuplan.bench.gemm_shapes import GemmShape

    profile = h100_sxm()
    node = FakeNode([profile])
    with FakeCudaMode(node):
        bf16 = matmul.measure_shape(
            node.torch, "cuda", "bf16", GemmShape("sweep", 8192, 8192, 8192), 1, 3
        )
        memory = memory_bandwidth.measure_device_memory(node.torch, "cuda", 2**30)
        link = memory_bandwidth.measure_host_transfers(node.torch, 0, 2**28, iterations=2)
    assert bf16["mean_flops_per_second"] == pytest.approx(profile.matmul_flops["bf16"])
    assert memory["copy_traffic_bytes_per_second"] == pytest.approx(profile.hbm_bytes_per_second)
    assert memory["read_bytes_per_second"] == pytest.approx(profile.hbm_read_bytes_per_second)
    assert link["host_to_device_pinned_bytes_per_second"] == pytest.approx(
        profile.host_to_device["pinned"]
    )
    assert node.gpus[0].peak >= 2**30
    assert node.gpus[0].allocated < 2**30


def test_fake_layer_tells_pinned_from_pageable_and_injects_faults():
    from gpuplan.bench import memory_bandwidth

    slow_pageable = replace(h100_sxm(), host_to_device={"pinned": 50e9, "pageable": 10e9})
    node = FakeNode([slow_pageable, replace(h100_sxm(), fail_after_ops=0)])
    with FakeCudaMode(node):
        link = memory_bandwidth.measure_host_transfers(node.torch, 0, 2**28, iterations=2)
        with pytest.raises(FakeCudaError):
            node.torch.ones(4, device="cuda:1")
    assert link["host_to_device_pinned_bytes_per_second"] == pytest.approx(50e9)
    assert link["host_to_device_pageable_bytes_per_second"] == pytest.approx(10e9)
    small = FakeNode([replace(h100_sxm(), oom_above_bytes=2**20)])
    with FakeCudaMode(small), pytest.raises(torch.OutOfMemoryError):
        small.torch.empty(2**21, dtype=torch.uint8, device="cuda")


def test_fake_cuda_answers_like_torch_cuda():
    node = FakeNode([h100_sxm(), a100_sxm()])
    cuda = node.torch.cuda
    assert cuda.is_available() and cuda.device_count() == 2
    assert cuda.get_device_capability(1) == (8, 0)
    assert cuda.get_device_properties(0).multi_processor_count == 132
    assert str(cuda.get_device_properties(1).uuid) != str(cuda.get_device_properties(0).uuid)
    with cuda.device(1):
        assert cuda.current_device() == 1
    assert cuda.current_device() == 0
    start, end = cuda.Event(), cuda.Event()
    start.record()
    end.record()
    with pytest.raises(RuntimeError, match="enable_timing"):
        start.elapsed_time(end)
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        cuda.get_device_name(2)


def test_fake_tensors_live_on_the_cpu_and_carry_their_device():
    node = FakeNode([h100_sxm()] * 2)
    with FakeCudaMode(node):
        small = node.torch.ones(8, device="cuda:1")
        host = node.torch.empty(8, pin_memory=True)
        moved = host.to("cuda:0", non_blocking=True)
        big = node.torch.randn(2**22, device="cuda")
        assert node.gpus[1].allocated == small.numel() * 4
        assert host.is_pinned() and not small.is_pinned()
        assert (moved._fake_device, small._fake_device) == (0, 1)
        assert float(small.sum()) == 8.0
        assert big.untyped_storage().nbytes() < 2**10
        assert node.gpus[0].allocated >= 2**24
    work = node.gpus[0].work_seconds
    assert work == pytest.approx(
        8 * 4 / h100_sxm().host_to_device["pinned"] + 2**24 / h100_sxm().hbm_bytes_per_second
    )


def test_threads_that_sync_different_gpus_wait_in_parallel():
    import threading

    node = FakeNode([h100_sxm()] * 4)
    elapsed: dict[int, float] = {}

    def work(index: int) -> None:
        with FakeCudaMode(node):
            start = node.clock.monotonic()
            node.enqueue(index, 1.0)
            node.synchronize(index)
            elapsed[index] = node.clock.monotonic() - start

    threads = [threading.Thread(target=work, args=(index,)) for index in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(value == pytest.approx(1.0, abs=0.01) for value in elapsed.values())


@pytest.mark.parametrize(
    ("profile", "gpu_id"),
    [(h100_sxm, "h100-sxm-80gb"), (h200_sxm, "h200-sxm-141gb")],
    ids=["h100", "h200"],
)
def test_healthy_gpu_passes_matmul_and_hbm(monkeypatch, profile, gpu_id):
    result = _run(monkeypatch, FakeNode([profile()]))
    figures = _figures(result)
    assert result["gpu_id"] == gpu_id
    assert result["provenance"]["gpus"][0]["catalog_id"] == gpu_id
    for key in ("matmul.bf16", "matmul.fp8", "memory.device_copy", "memory.device_read"):
        assert figures[key]["verdict"] == "PASS", (key, figures[key]["reason"])
    assert not [f for f in result["figures"] if f["verdict"] in ("WARN", "FAIL")]


def test_healthy_pinned_pcie_passes_and_pageable_is_not_held_to_pinned(monkeypatch):
    slow_pageable = replace(
        h100_sxm(),
        host_to_device={**h100_sxm().host_to_device, "pageable": 20e9},
        device_to_host={**h100_sxm().device_to_host, "pageable": 20e9},
    )
    figures = _figures(_run(monkeypatch, FakeNode([slow_pageable]), parts=("memory",)))
    for direction in ("host_to_device", "device_to_host"):
        assert figures[f"pcie.{direction}_pinned"]["verdict"] == "PASS"
        assert figures[f"pcie.{direction}_pageable"]["verdict"] in ("PASS", "SKIPPED")


def test_a_link_trained_down_to_gen4_x8_fails(monkeypatch):
    quarter = h100_sxm().scaled(pcie=0.25)
    node = FakeNode([quarter])
    nvml = _nvml_for(node)
    nvml.gpus[0].pcie_current = (4, 8)
    figures = _figures(_run(monkeypatch, node, parts=("memory",), nvml=nvml))
    assert figures["pcie.host_to_device_pinned"]["verdict"] == "FAIL"
    assert figures["pcie.device_to_host_pinned"]["verdict"] == "FAIL"


@pytest.mark.parametrize("mode", ["ok", "old_driver", "lost_gpu", "absent"])
def test_every_nvml_mode_runs_to_the_end(monkeypatch, mode):
    node = FakeNode([h100_sxm()] * 2)
    result = _run(monkeypatch, node, parts=("memory", "burn"), nvml=mode, burn_seconds=1.0)
    assert set(result["parts"].values()) == {"done"}, result["measurements"].get("errors")
    throttle = _figures(result)["burn.throttle.cuda:1"]
    if mode in ("ok", "old_driver"):
        assert throttle["verdict"] == "PASS", throttle["reason"]
    if mode == "absent":
        assert throttle["verdict"] == "SKIPPED"


def test_telemetry_follows_the_uuid_when_nvml_and_torch_count_differently(monkeypatch):
    node = FakeNode([h100_sxm()] * 2)
    nvml = _nvml_for(node)
    nvml.gpus.reverse()
    for position, gpu in enumerate(nvml.gpus):
        gpu.index = position
    hw_slowdown = 0x8
    nvml.gpus[0].throttle_reasons = hw_slowdown
    throttled_uuid = nvml.gpus[0].uuid
    figures = _figures(_run(monkeypatch, node, parts=("burn",), nvml=nvml, burn_seconds=1.0))
    torch_index = [gpu.uuid for gpu in node.gpus].index(throttled_uuid.removeprefix("GPU-"))
    assert torch_index == 1
    assert figures["burn.throttle.cuda:1"]["verdict"] == "FAIL"
    assert figures["burn.throttle.cuda:0"]["verdict"] == "PASS"


def test_matmul_at_60_percent_of_mamf_fails(monkeypatch):
    result = _run(monkeypatch, FakeNode([h100_sxm().scaled(matmul=0.6)]), parts=("matmul",))
    figures = _figures(result)
    assert figures["matmul.bf16"]["verdict"] == "FAIL"
    assert figures["matmul.fp8"]["verdict"] == "FAIL"


def test_hbm_at_55_percent_of_spec_fails(monkeypatch):
    from gpuplan.catalog import load_gpu

    profile = h200_sxm()
    spec = load_gpu("h200-sxm-141gb").memory_bandwidth
    degraded = replace(
        profile, hbm_bytes_per_second=0.55 * spec, hbm_read_bytes_per_second=0.55 * spec
    )
    figures = _figures(_run(monkeypatch, FakeNode([degraded]), parts=("memory",)))
    assert figures["memory.device_copy"]["verdict"] == "FAIL", figures["memory.device_copy"]
    assert figures["memory.device_read"]["verdict"] == "FAIL"


def test_a100_skips_fp8_for_its_compute_capability(monkeypatch):
    result = _run(monkeypatch, FakeNode([a100_sxm()]))
    figures = _figures(result)
    assert result["gpu_id"] == "a100-sxm-80gb"
    assert figures["matmul.fp8"]["verdict"] == "SKIPPED"
    assert "8.9" in figures["matmul.fp8"]["reason"]
    for key in ("matmul.bf16", "memory.device_copy", "pcie.host_to_device_pinned"):
        assert figures[key]["verdict"] == "PASS", (key, figures[key]["reason"])
    assert not [f["key"] for f in result["figures"] if f["verdict"] in ("WARN", "FAIL")]


def test_eight_gpu_node_runs_collectives_and_burn_on_every_gpu(monkeypatch):
    node = FakeNode([h100_sxm()] * 8)
    result = _run(
        monkeypatch,
        node,
        parts=("collectives", "burn"),
        collectives=_healthy_collectives("h100-sxm-80gb"),
        burn_seconds=3.0,
    )
    figures = _figures(result)
    for name in ("all_reduce", "all_gather", "reduce_scatter", "all_to_all"):
        assert figures[f"collectives.{name}"]["verdict"] == "PASS", figures[f"collectives.{name}"]
    burned = result["measurements"]["burn"]["devices"]
    assert [entry["device"] for entry in burned] == [f"cuda:{index}" for index in range(8)]
    for entry in burned:
        assert entry["median_flops_per_second"] == pytest.approx(
            h100_sxm().matmul_flops["bf16"], rel=0.05
        )
    assert figures["burn.gpu_spread"]["verdict"] == "PASS"
    assert all(gpu.work_seconds > 2.0 for gpu in node.gpus)


H200_NVLS_ALL_REDUCE_1GIB = 463.58e9
"""ml-engineering network/benchmarks/results/all-reduce-8xH200.md: 8x H200 all-reduce busbw at
1 GiB with NVLS (NCCL's default on an NVSwitch node), above the 450 GB/s link rate."""


def test_nvls_all_reduce_above_link_rate_passes_with_link_efficiency_capped(monkeypatch):
    def launcher(ranks: int, *_: Any, **__: Any) -> dict[str, Any]:
        return collective_table(
            ranks, lambda name: H200_NVLS_ALL_REDUCE_1GIB if name == "all_reduce" else 360e9
        )

    node = FakeNode([h200_sxm()] * 8)
    figures = _figures(_run(monkeypatch, node, parts=("collectives",), collectives=launcher))
    all_reduce = figures["collectives.all_reduce"]
    assert all_reduce["verdict"] == "PASS", all_reduce["reason"]
    assert all_reduce["details"]["nvls"]["likely_active"]
    assert all_reduce["details"]["link_efficiency"] == 1.0


def test_a_slow_gpu_in_the_node_shows_in_the_spread(monkeypatch):
    node = FakeNode([h100_sxm()] * 3 + [h100_sxm().scaled(matmul=0.8)])
    figures = _figures(_run(monkeypatch, node, parts=("burn",), burn_seconds=2.0))
    assert figures["burn.gpu_spread"]["verdict"] == "FAIL"
    assert figures["burn.gpu_spread"]["measured"] == pytest.approx(0.2, abs=0.03)


def test_healthy_eight_gpu_node_ends_pass_on_every_gpu_part(monkeypatch, tmp_path):
    """The issue's headline: a healthy 8 x H100 node ended "overall: FAIL". The probe is left
    out: its figures compare CPU training of a tiny model with a GPU prediction."""
    node = FakeNode([h100_sxm()] * 8)
    result = _run(
        monkeypatch,
        node,
        parts=("matmul", "memory", "collectives", "storage", "burn"),
        collectives=_healthy_collectives("h100-sxm-80gb"),
        burn_seconds=2.0,
        storage_directory=tmp_path,
        storage_bytes=16 * 2**20,
    )
    judged = [f for f in result["figures"] if f["verdict"] != "SKIPPED"]
    assert len(judged) >= 10
    assert result["worst_verdict"] == "PASS", [
        (f["key"], f["reason"]) for f in judged if f["verdict"] != "PASS"
    ]
    assert set(result["parts"].values()) == {"done"}


def _burn_fluctuation(monkeypatch: pytest.MonkeyPatch, profile: Any, seconds: float) -> Any:
    figures = _figures(
        _run(monkeypatch, FakeNode([profile]), parts=("burn",), burn_seconds=seconds)
    )
    return figures["burn.fluctuation.cuda:0"]


def test_a_three_percent_settle_during_the_warm_up_passes(monkeypatch):
    settling = replace(h100_sxm(), speed_change=(2.0, 0.97))
    figure = _burn_fluctuation(monkeypatch, settling, 12.0)
    assert figure["verdict"] == "PASS", figure["reason"]


def test_a_ten_percent_drop_after_the_warm_up_fails_the_fluctuation(monkeypatch):
    dropping = replace(h100_sxm(), speed_change=(8.0, 0.90))
    figure = _burn_fluctuation(monkeypatch, dropping, 12.0)
    assert figure["verdict"] == "FAIL", figure["reason"]


def test_probe_trains_on_a_fake_gpu_and_reads_its_allocator(monkeypatch):
    scenario = {
        "model": TINY_MODEL,
        "precision": "bf16",
        "seq_len": 32,
        "micro_batch": 2,
        "hardware": {"gpu": "h100-sxm-80gb", "count": 1},
    }
    node = FakeNode([h100_sxm()])
    result = _run(monkeypatch, node, parts=("probe",), probe_scenario=scenario)
    measured = result["measurements"]["probe"]["measured"]
    figures = _figures(result)
    assert measured["loss_is_finite"]
    assert measured["max_memory_allocated_bytes"] > 0
    assert figures["probe.max_memory_allocated_bytes"]["measured"] > 0
    assert figures["probe.tokens_per_second"]["measured"] > 0


def _part_error_recorded(result: dict[str, Any], part: str) -> bool:
    return any(
        figure["key"] == f"{part}.error" and figure["verdict"] == "ERROR"
        for figure in result["figures"]
    )


def test_a_gpu_that_fails_on_use_is_recorded_not_raised(monkeypatch):
    node = FakeNode([replace(h100_sxm(), fail_after_ops=0)])
    result = _run(monkeypatch, node, parts=("matmul", "memory"))
    assert _part_error_recorded(result, "matmul")
    assert _part_error_recorded(result, "memory")
    assert result["parts"] == {"matmul": "error", "memory": "error"}
    assert "CUDA error" in result["measurements"]["errors"]["matmul"]


def test_one_burn_thread_failing_keeps_the_other_gpus(monkeypatch):
    node = FakeNode([h100_sxm()] * 3 + [replace(h100_sxm(), fail_after_ops=50)] + [h100_sxm()] * 4)
    result = _run(monkeypatch, node, parts=("burn",), burn_seconds=1.0)
    devices = {entry["device"]: entry for entry in result["measurements"]["burn"]["devices"]}
    assert "CUDA error" in devices["cuda:3"]["error"]
    for index in (0, 1, 2, 4, 5, 6, 7):
        assert devices[f"cuda:{index}"]["median_flops_per_second"] > 0


def test_a_burn_thread_that_raised_makes_the_run_not_pass(monkeypatch):
    node = FakeNode([h100_sxm()] * 3 + [replace(h100_sxm(), fail_after_ops=50)] + [h100_sxm()] * 4)
    result = _run(monkeypatch, node, parts=("burn",), burn_seconds=1.0)
    verdicts = [f["verdict"] for f in result["figures"] if "cuda:3" in f["key"]]
    assert "ERROR" in verdicts or "FAIL" in verdicts
    assert result["worst_verdict"] != "PASS"


def test_a_failing_collective_rank_is_recorded_and_the_run_goes_on(monkeypatch):
    def failing_launcher(*_: Any, **__: Any) -> dict[str, Any]:
        raise RuntimeError("collective workers failed: rank 3: CUDA out of memory (fake)")

    node = FakeNode([h100_sxm()] * 8)
    result = _run(monkeypatch, node, parts=("matmul", "collectives"), collectives=failing_launcher)
    assert _part_error_recorded(result, "collectives")
    assert _figures(result)["matmul.bf16"]["verdict"] == "PASS"


def test_a_rank_out_of_memory_reported_by_the_launcher_is_an_error_figure(monkeypatch):
    from gpuplan.bench.collectives import failed_table

    def launcher(ranks: int, device: str, *_: Any, **__: Any) -> dict[str, Any]:
        error = {
            "reason": "rank 3 exited 1",
            "rank": 3,
            "returncode": 1,
            "failed_ranks": [3],
            "stderr_tail": "torch.OutOfMemoryError: CUDA out of memory (fake)",
        }
        return failed_table(ranks, device, error)

    node = FakeNode([h100_sxm()] * 8)
    result = _run(monkeypatch, node, parts=("collectives",), collectives=launcher)
    error = _figures(result)["collectives.error"]
    assert error["verdict"] == "ERROR"
    assert "rank 3" in error["reason"] and "OutOfMemoryError" in error["reason"]
    assert result["worst_verdict"] == "ERROR"


def test_probe_retries_with_fewer_layers_after_an_out_of_memory(monkeypatch):
    from gpuplan.bench.probe import run_probe

    scenario = {
        "model": {**TINY_MODEL, "num_hidden_layers": 4},
        "precision": "bf16",
        "seq_len": 32,
        "micro_batch": 2,
        "hardware": {"gpu": "h100-sxm-80gb", "count": 1},
    }

    def probe(profile: Any) -> dict[str, Any]:
        node = FakeNode([profile])
        with fake_gpus(monkeypatch, node):
            return run_probe(node.torch, "cuda", scenario, 0, 1, gpu="h100-sxm-80gb")

    four_layer_peak = probe(h100_sxm())["measured"]["max_memory_allocated_bytes"]
    tight = replace(h100_sxm(), allocation_limit_bytes=int(0.8 * four_layer_peak))
    result = probe(tight)
    assert result["probed_config"]["num_layers"] == 2
    assert result["measured"]["max_memory_allocated_bytes"] <= 0.8 * four_layer_peak


def test_probe_out_of_memory_is_recorded(monkeypatch):
    scenario = {
        "model": TINY_MODEL,
        "precision": "bf16",
        "seq_len": 32,
        "micro_batch": 2,
        "hardware": {"gpu": "h100-sxm-80gb", "count": 1},
    }
    node = FakeNode([replace(h100_sxm(), oom_above_bytes=4096)])
    result = _run(monkeypatch, node, parts=("probe",), probe_scenario=scenario)
    assert _part_error_recorded(result, "probe")
    assert "OutOfMemoryError" in result["measurements"]["errors"]["probe"]


def test_mig_slice_is_not_failed_against_the_whole_gpu(monkeypatch):
    result = _run(monkeypatch, FakeNode([h100_mig_1g()]))
    failed = [f["key"] for f in result["figures"] if f["verdict"] == "FAIL"]
    assert not failed
