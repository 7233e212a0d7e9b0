"""References and verdicts of the GPU figures on synthetic measurements: healthy H100/H200
figures pass; a slow HBM, a trained-down PCIe link or a slow matmul fail; pageable copies and
unclaimed storage are measured without a verdict; the matmul search keeps to its budget."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuplan.bench import matmul, references
from gpuplan.bench.report import DEFAULT_THRESHOLDS, FAIL, PASS, SKIPPED, WARN, figure_to_dict
from gpuplan.bench.runner import (
    BenchOptions,
    RunContext,
    hbm_figures,
    matmul_figure,
    pcie_figures,
    storage_directory,
    storage_test_bytes,
)
from gpuplan.bench.storage import file_system_type
from gpuplan.catalog import load_gpu

GEN5_X16 = {"generation": 5, "width": 16, "max_generation": 5, "max_width": 16}


def context(gpu_id: str | None, quick: bool = False) -> RunContext:
    return RunContext(None, BenchOptions(quick=quick), load_gpu(gpu_id) if gpu_id else None, None)  # type: ignore[arg-type]


def judged(figures) -> dict[str, dict]:
    return {f.key: figure_to_dict(f, DEFAULT_THRESHOLDS) for f in figures}


def device_memory(copy: float, read: float) -> dict:
    return {
        "copy_traffic_bytes_per_second": copy,
        "read_bytes_per_second": read,
        "buffer_bytes": 2 * 2**30,
    }


def transfers(link: dict, h2d: float, d2h: float, pageable: float = 20e9) -> dict:
    return {
        "pcie_link": link,
        "host_to_device_pinned_bytes_per_second": h2d,
        "device_to_host_pinned_bytes_per_second": d2h,
        "host_to_device_pageable_bytes_per_second": pageable,
        "device_to_host_pageable_bytes_per_second": pageable,
    }


@pytest.mark.parametrize(
    ("gpu_id", "copy", "read"),
    [("h100-sxm-80gb", 2.85e12, 3.1e12), ("h200-sxm-141gb", 3.95e12, 4.4e12)],
)
def test_healthy_hbm_passes_against_the_published_stream_rates(gpu_id, copy, read):
    figures = judged(hbm_figures(context(gpu_id), device_memory(copy, read)))
    assert figures["memory.device_copy"]["verdict"] == PASS
    assert figures["memory.device_read"]["verdict"] == PASS
    assert "Azure/AI-benchmarking-guide" in figures["memory.device_copy"]["reference_source"]
    assert "Dot" in figures["memory.device_read"]["reference_source"]


def test_an_h200_at_55_percent_of_its_hbm_spec_fails():
    spec = load_gpu("h200-sxm-141gb").memory_bandwidth
    figures = judged(hbm_figures(context("h200-sxm-141gb"), device_memory(0.55 * spec, 4.4e12)))
    copy = figures["memory.device_copy"]
    assert copy["verdict"] == FAIL
    assert copy["spec_ratio"] == pytest.approx(0.55)
    assert copy["details"]["dcgm_floor_bytes_per_second"] == 2.2125e12


def test_unmeasured_gpus_take_the_speed_models_hbm_share():
    from gpuplan.estimate.kernels import HBM_EFFICIENCY

    reference = references.hbm_reference("b200-sxm-180gb")
    assert reference is not None
    assert reference.value == pytest.approx(HBM_EFFICIENCY * 8e12)
    assert "HBM_EFFICIENCY" in reference.source
    assert references.hbm_reference("no-such-gpu") is None


def test_healthy_gen5_x16_pinned_copies_pass_and_pageable_is_measured_only():
    figures = judged(pcie_figures(transfers(GEN5_X16, 55.4e9, 55.0e9), 0))
    assert figures["pcie.host_to_device_pinned"]["verdict"] == PASS
    assert figures["pcie.device_to_host_pinned"]["verdict"] == PASS
    assert figures["pcie.device_to_host_pinned"]["reference"] == pytest.approx(
        0.87 * references.pcie_link_bytes_per_second(5, 16)
    )
    pageable = figures["pcie.host_to_device_pageable"]
    assert pageable["verdict"] == SKIPPED and pageable["measured"] == 20e9
    assert "measured only" in pageable["reason"]


def test_a_link_trained_down_to_gen4_x8_fails_and_names_both_links():
    link = {"generation": 4, "width": 8, "max_generation": 5, "max_width": 16}
    rate = references.pcie_link_bytes_per_second(4, 8)
    figures = judged(pcie_figures(transfers(link, 0.88 * rate, 0.87 * rate), 0))
    pinned = figures["pcie.host_to_device_pinned"]
    assert pinned["verdict"] == FAIL
    assert "Gen4 x8 of max Gen5 x16" in pinned["label"]
    assert "DEGRADED" in pinned["label"]
    assert pinned["spec"] == pytest.approx(references.pcie_link_bytes_per_second(5, 16))


def test_without_a_maximum_the_current_link_is_used_and_said():
    link = {"generation": 5, "width": 16, "max_generation": None, "max_width": None}
    figures = judged(pcie_figures(transfers(link, 55e9, 55e9), 0))
    pinned = figures["pcie.host_to_device_pinned"]
    assert pinned["verdict"] == PASS
    assert "no maximum from NVML" in pinned["details"]["link"]
    no_link = judged(pcie_figures(transfers({}, 55e9, 55e9), 0))
    assert no_link["pcie.host_to_device_pinned"]["reason"].startswith("PCIe link unknown")


def matmul_result(flops: float) -> dict:
    return {
        "best_mean_flops_per_second": flops,
        "best_shape": "2048x2048x13312",
        "best_shape_origin": "published",
        "shapes_measured": 40,
        "shapes_planned": 135,
    }


@pytest.mark.parametrize("gpu_id", ["h100-sxm-80gb", "h200-sxm-141gb"])
def test_healthy_matmul_passes_and_a_slow_one_fails(gpu_id):
    mamf = load_gpu(gpu_id).achievable_matmul["bf16"]
    run = context(gpu_id)
    healthy = matmul_figure(run, "bf16", "matmul", matmul_result(0.95 * mamf), 90.0)
    slow = matmul_figure(run, "bf16", "matmul", matmul_result(0.6 * mamf), 90.0)
    assert figure_to_dict(healthy, DEFAULT_THRESHOLDS)["verdict"] == PASS
    assert figure_to_dict(slow, DEFAULT_THRESHOLDS)["verdict"] == FAIL


def test_quick_search_is_held_to_its_own_threshold():
    mamf = load_gpu("h100-sxm-80gb").achievable_matmul["bf16"]
    run = context("h100-sxm-80gb", quick=True)
    quick = matmul_figure(run, "bf16", "matmul_quick", matmul_result(0.87 * mamf), 15.0)
    full = matmul_figure(run, "bf16", "matmul", matmul_result(0.87 * mamf), 90.0)
    assert figure_to_dict(quick, DEFAULT_THRESHOLDS)["verdict"] == PASS
    assert figure_to_dict(full, DEFAULT_THRESHOLDS)["verdict"] == WARN


def test_search_starts_with_the_published_best_shape_of_this_gpu():
    h200_fp8 = matmul.search_shapes("cuda", False, "h200-sxm-141gb", "fp8")
    assert (h200_fp8[0].m, h200_fp8[0].n, h200_fp8[0].k) == (1280, 4096, 12032)
    h200_bf16 = matmul.search_shapes("cuda", False, "h200-sxm-141gb", "bf16")
    assert (h200_bf16[0].m, h200_bf16[0].n, h200_bf16[0].k) == (2048, 2048, 13312)
    dims = [(s.m, s.n, s.k) for s in h200_bf16]
    assert len(dims) == len(set(dims))
    assert (8192, 8192, 8192) in dims and (16384, 1024, 4096) in dims
    quick = matmul.search_shapes("cuda", True, "h200-sxm-141gb", "bf16")
    assert all(min(s.m, s.n, s.k) >= 1024 for s in quick) and len(quick) < len(h200_bf16)
    unknown = matmul.search_shapes("cuda", False, None, "bf16")
    assert unknown[0].name == "gpu-fryer"


def test_search_stops_at_its_time_budget(monkeypatch):
    measured = []

    def fake_shape(torch, device, dtype, shape, *rest):
        measured.append(shape)
        return {"name": shape.name, "m": shape.m, "n": shape.n, "k": shape.k,
                "mean_flops_per_second": float(shape.m), "median_flops_per_second": 1.0,
                "max_flops_per_second": 1.0}  # fmt: skip

    ticks = iter(range(1000))
    monkeypatch.setattr(matmul, "measure_shape", fake_shape)
    monkeypatch.setattr(matmul, "cache_flusher", lambda torch, device: None)
    shapes = matmul.search_shapes("cuda", False, "h100-sxm-80gb", "bf16")
    result = matmul.measure_dtype(
        None, "cuda", "bf16", shapes, 0, 1, 0.0, budget_seconds=5, clock=lambda: next(ticks)
    )
    assert len(measured) == 5 == result["shapes_measured"]
    assert result["shapes_planned"] == len(shapes)
    assert matmul.search_budget_seconds("cuda", False) <= 0.1 * 15 * 60
    assert matmul.search_budget_seconds("cpu", True) is None


def test_storage_defaults_to_the_working_directory_and_a_share_of_free_space(tmp_path):
    assert storage_directory(BenchOptions()) == Path.cwd()
    assert storage_directory(BenchOptions(storage_directory=tmp_path)) == tmp_path
    assert storage_test_bytes(BenchOptions(), free_bytes=10**15) == 16 * 2**30
    assert storage_test_bytes(BenchOptions(quick=True), free_bytes=10**15) == 2 * 2**30
    assert storage_test_bytes(BenchOptions(), free_bytes=50 * 2**30) == 5 * 2**30
    assert storage_test_bytes(BenchOptions(storage_bytes=2**40), free_bytes=2**30) < 2**27


def test_file_system_type_finds_the_longest_mount(tmp_path):
    mounts = tmp_path / "mounts"
    mounts.write_text("/dev/sda1 / ext4 rw 0 0\ntmpfs /tmp tmpfs rw 0 0\n")
    assert file_system_type(Path("/tmp/x"), mounts) == "tmpfs"
    assert file_system_type(Path("/tmpfoo"), mounts) == "ext4"
    assert file_system_type(Path("/"), tmp_path / "missing") is None


def test_every_published_figure_is_read_from_the_catalog_with_its_source():
    from gpuplan.catalog import all_gpus

    for gpu in all_gpus():
        pairs = [
            (references.hbm_measurement(gpu.id, "copy"), "achievable_hbm_copy"),
            (references.hbm_measurement(gpu.id, "read"), "achievable_hbm_read"),
            (references.matmul_reference(gpu.id, "tf32"), "achievable_tf32_fixed_shape"),
            (references.dcgm_floor(gpu.id), "dcgm_hbm_floor"),
            (references.all_reduce_measurement(gpu.id), "achievable_all_reduce_busbw"),
        ]
        for reference, field_name in pairs:
            value = getattr(gpu, field_name)
            if value is None:
                assert reference is None, (gpu.id, field_name)
                continue
            assert reference == references.Reference(value, gpu.source_of(field_name)[0])
        assert dict(references.DCGM_FLOOR).get(gpu.id) == gpu.dcgm_hbm_floor
        if gpu.achievable_hbm_copy is not None:
            assert references.hbm_reference(gpu.id) == references.hbm_measurement(gpu.id, "copy")


def test_collective_references_come_from_the_catalog():
    from gpuplan.bench import collectives
    from gpuplan.catalog import all_gpus

    for gpu in all_gpus():
        measured = references.intra_node_collective_reference(gpu.id, "all_reduce", 1e9, 8)
        assert measured is not None
        if gpu.achievable_all_reduce_busbw is None:
            assert measured.value == references.LINK_EFFICIENCY * 1e9
        else:
            assert measured.value == gpu.achievable_all_reduce_busbw
            assert measured.source == gpu.source_of("achievable_all_reduce_busbw")[0]
        four = references.intra_node_collective_reference(gpu.id, "all_reduce", 1e9, 4)
        assert four == references.Reference(
            references.LINK_EFFICIENCY * 1e9, references.LINK_RULE_SOURCE
        )
        assert collectives.NVLS_MIN_RANKS.get(gpu.id) == gpu.nvls_min_ranks
        source, _ = gpu.source_of("achievable_all_reduce_busbw_nvls")
        for size, busbw in gpu.achievable_all_reduce_busbw_nvls.items():
            assert collectives.nvls_reference(gpu.id, 8, size) == references.Reference(
                busbw, source
            )
            assert collectives.nvls_reference(gpu.id, 4, size) is None


def test_a_changed_catalog_changes_the_references(monkeypatch):
    import dataclasses

    import gpuplan.catalog
    from gpuplan.bench import collectives

    real = gpuplan.catalog.load_gpu

    def edited(name: str):
        return dataclasses.replace(
            real(name),
            achievable_hbm_copy=1.0e12,
            dcgm_hbm_floor=0.5e12,
            achievable_all_reduce_busbw=1.0e9,
            achievable_all_reduce_busbw_nvls={2**30: 2.0e9},
            nvls_min_ranks=3,
            mamf_best_shape={"bf16": (64, 128, 256)},
            same_die_as="",
        )

    monkeypatch.setattr(gpuplan.catalog, "load_gpu", edited)
    gpu_id = "h200-sxm-141gb"
    assert references.hbm_reference(gpu_id).value == 1.0e12
    assert references.DCGM_FLOOR[gpu_id] == 0.5e12
    assert references.intra_node_collective_reference(gpu_id, "all_reduce", None, 8).value == 1e9
    assert collectives.nvls_reference(gpu_id, 8, 2**31).value == 2.0e9
    assert collectives.NVLS_MIN_RANKS[gpu_id] == 3
    own, _ = references.best_shapes(gpu_id, "bf16")
    assert [(s.m, s.n, s.k) for s in own] == [(64, 128, 256)]


def test_the_module_holds_no_table_keyed_by_gpu_ids():
    from gpuplan.bench import collectives
    from gpuplan.catalog import gpu_ids

    ids = set(gpu_ids())
    for module in (references, collectives):
        for name, value in vars(module).items():
            if isinstance(value, dict):
                assert not ids & set(value), (module.__name__, name)
            if isinstance(value, tuple):
                assert not any(isinstance(item, references.BestShape) for item in value), name


def test_catalog_figures_hold_only_catalog_ids_with_the_figure():
    floors = references.DCGM_FLOOR
    assert None not in floors and "" not in floors and "H200" not in floors
    assert "l4-24gb" not in floors and floors.get("l4-24gb") is None
    assert "h200-sxm-141gb" in floors
    with pytest.raises(KeyError):
        floors["no-such-gpu"]
    assert set(floors) == {
        gpu_id for gpu_id in floors if load_gpu(gpu_id).dcgm_hbm_floor is not None
    }
    assert len(floors) == len(list(floors)) > 0


def test_best_shapes_put_the_gpus_own_first_then_its_dies_then_the_rest():
    from gpuplan.catalog import uncatalogued_best_shapes

    h200, rest = references.best_shapes("h200-sxm-141gb", "fp8")
    assert [s.gpu for s in h200] == ["h200-sxm-141gb", "h100-sxm-80gb"]
    assert (h200[0].m, h200[0].n, h200[0].k) == load_gpu("h200").mamf_best_shape["fp8"]
    h800, _ = references.best_shapes("h800-sxm-80gb", "bf16")
    assert [(s.m, s.n, s.k) for s in h800] == [load_gpu("h100").mamf_best_shape["bf16"]]
    nothing, everyone = references.best_shapes("l20-48gb", "bf16")
    assert nothing == []
    assert set(uncatalogued_best_shapes()) <= {s.gpu for s in everyone}
    assert not set(h200) & set(rest)
    assert references.best_shapes(None, "bf16")[0] == []
    assert references.best_shapes("no-such-gpu", "tf32")[1] == everyone
