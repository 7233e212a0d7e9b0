"""GPU identification and NVML telemetry against FakeNvml in each mode: ok, old_driver,
lost_gpu, absent, MIG; the fault is injected and the right record or flag comes out."""

from __future__ import annotations

import sys
from types import SimpleNamespace
from typing import Any

import pytest
from fake_nvml import FakeGpu, FakeNvml

from gpuplan.bench import environment
from gpuplan.bench.environment import (
    HARMLESS_THROTTLE_REASONS,
    RemappedRows,
    XidMonitor,
    catalog_id_for_torch_device,
    clocks_held_by_setting,
    gpu_record,
    identify_gpu,
    load_nvml,
    nvml_gpus,
    nvml_index_for_torch_device,
    nvml_indices_for_torch_devices,
    pcie_link,
    provenance,
    remapped_rows,
    remapped_rows_finding,
    telemetry_sample,
    throttle_reasons,
    uncorrectable_ecc_errors,
)


def initialised(*gpus: FakeGpu, **options: Any) -> FakeNvml:
    nvml = FakeNvml(list(gpus) or None, **options)
    nvml.nvmlInit()
    return nvml


def fake_torch(uuids: list[str | None], names: list[str] | None = None) -> Any:
    """A torch whose CUDA devices report ``uuids`` (None: a torch without ``.uuid``)."""
    names = names or ["NVIDIA H100 80GB HBM3"] * len(uuids)

    def properties(index: int) -> SimpleNamespace:
        fields: dict[str, Any] = {"name": names[index], "total_memory": 80 * 2**30}
        if uuids[index] is not None:
            fields["uuid"] = uuids[index]
        return SimpleNamespace(**fields)

    return SimpleNamespace(
        cuda=SimpleNamespace(
            device_count=lambda: len(uuids),
            get_device_properties=properties,
            get_device_name=lambda index=0: names[index],
        )
    )


@pytest.fixture(autouse=True)
def _clean_visible_devices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.delenv("CUDA_DEVICE_ORDER", raising=False)


# Item 9: identification by PCI device id and full name; MIG.


@pytest.mark.parametrize(
    ("pci_id", "gpu_id"),
    [
        (0x2330, "h100-sxm-80gb"),
        (0x2331, "h100-pcie-80gb"),
        (0x2335, "h200-sxm-141gb"),
        (0x20B2, "a100-sxm-80gb"),
        (0x2321, None),
        (0x233B, None),
        (0x2339, None),
    ],
)
def test_pci_device_id_decides_over_the_name(pci_id, gpu_id):
    assert identify_gpu("NVIDIA H100 80GB HBM3", pci_id) == gpu_id


@pytest.mark.parametrize(
    "name",
    ["NVIDIA H100 NVL", "NVIDIA H100", "NVIDIA H200 NVL", "NVIDIA H100 80GB HBM3 MIG 1g.10gb"],
)
def test_names_that_only_start_like_a_catalog_gpu_are_unknown(name):
    assert identify_gpu(name) is None


def test_full_driver_names_resolve():
    assert identify_gpu("NVIDIA H200") == "h200-sxm-141gb"
    assert identify_gpu("NVIDIA A100 80GB PCIe") == "a100-pcie-80gb"
    assert identify_gpu("NVIDIA H100 80GB HBM3") == "h100-sxm-80gb"


def test_unknown_pci_id_falls_back_to_the_name():
    assert identify_gpu("NVIDIA H200", 0x9999) == "h200-sxm-141gb"


def test_nvml_record_of_an_h100_nvl_is_not_an_sxm():
    record = gpu_record(initialised(FakeGpu.h100_nvl()), 0)
    assert record.pci_device_id == 0x2321
    assert record.catalog_id is None
    assert record.to_dict()["pci_device_id"] == "10de:2321"


def test_nvml_record_of_an_h200_is_identified_by_its_pci_id():
    record = gpu_record(initialised(FakeGpu.h200_sxm()), 0)
    assert record.catalog_id == "h200-sxm-141gb"
    assert record.errors == ()
    assert record.findings() == []


def test_mig_mode_on_marks_a_slice_and_skips_whole_gpu_verdicts():
    record = gpu_record(initialised(FakeGpu.h100_sxm(mig=True)), 0)
    assert record.mig_enabled is True
    assert record.is_mig_slice
    assert record.whole_gpu_skip_reason() == "MIG slice"
    assert record.to_dict()["is_mig_slice"] is True


def test_mig_off_and_mig_unsupported_are_whole_gpus():
    off = gpu_record(initialised(FakeGpu.h100_sxm(mig=False)), 0)
    unsupported = gpu_record(initialised(FakeGpu.a100_sxm(mig=None)), 0)
    assert off.mig_enabled is False and off.whole_gpu_skip_reason() is None
    assert unsupported.mig_enabled is None and not unsupported.is_mig_slice
    assert any("nvmlDeviceGetMigMode" in error for error in unsupported.errors)


# Item 10: throttle reasons on old drivers.


def test_throttle_reasons_use_the_event_call_on_a_current_driver():
    nvml = initialised(FakeGpu.h100_sxm(throttle_reasons=0x40))
    assert telemetry_sample(nvml, 0)["throttle_reasons"] == 0x40
    assert "nvmlDeviceGetCurrentClocksThrottleReasons" not in nvml.calls


def test_throttle_reasons_fall_back_on_a_driver_before_535():
    nvml = initialised(FakeGpu.h100_sxm(throttle_reasons=0x40), mode="old_driver")
    sample = telemetry_sample(nvml, 0)
    assert sample["throttle_reasons"] == 0x40
    assert "errors" not in sample
    assert nvml.calls.index("nvmlDeviceGetCurrentClocksEventReasons") < nvml.calls.index(
        "nvmlDeviceGetCurrentClocksThrottleReasons"
    )


def test_throttle_reasons_are_none_when_both_calls_fail():
    nvml = initialised(
        fail={
            "nvmlDeviceGetCurrentClocksEventReasons": FakeNvml.NVMLError_FunctionNotFound,
            "nvmlDeviceGetCurrentClocksThrottleReasons": FakeNvml.NVMLError_NotSupported,
        }
    )
    assert throttle_reasons(nvml, nvml.nvmlDeviceGetHandleByIndex(0)) is None
    assert telemetry_sample(nvml, 0)["throttle_reasons"] is None


def test_a_pynvml_without_the_event_call_uses_the_throttle_call():
    class OldBinding(FakeNvml):
        nvmlDeviceGetCurrentClocksEventReasons = None

    nvml = OldBinding([FakeGpu.h100_sxm(throttle_reasons=0x8)])
    nvml.nvmlInit()
    assert telemetry_sample(nvml, 0)["throttle_reasons"] == 0x8


# Item 11: power limits, clocks, XID, remapped rows.


def test_power_limits_and_clocks_are_recorded_in_watts_and_hertz():
    record = gpu_record(initialised(FakeGpu.h100_sxm()), 0)
    assert record.power_limit_watts == 700.0
    assert record.default_power_limit_watts == 700.0
    assert record.max_sm_clock_hz == 1980e6
    assert record.applications_graphics_clock_hz == 1980e6
    assert record.clocks_locked_below_max is False


def test_clocks_locked_low_are_a_finding_not_harmless():
    gpu = FakeGpu.h100_sxm(applications_clocks_mhz={"graphics": 1200, "memory": 2619})
    record = gpu_record(initialised(gpu), 0)
    assert record.clocks_locked_below_max is True
    assert "applications clocks are set below the maximum clocks" in record.findings()
    assert not HARMLESS_THROTTLE_REASONS & 0x2
    assert clocks_held_by_setting(0x2 | 0x4) and not clocks_held_by_setting(0x4)


def test_a_lowered_power_limit_is_a_finding():
    record = gpu_record(initialised(FakeGpu.h100_sxm(power_limit_mw=500_000)), 0)
    assert record.findings() == ["power limit 500 W is below the default 700 W"]


def test_xid_events_are_collected_and_classified():
    nvml = initialised(FakeGpu.h100_sxm(), FakeGpu.h100_sxm(index=1, xids=[79, 13]))
    monitor = XidMonitor.start(nvml, [0, 1])
    events = monitor.drain(timeout_seconds=0.01)
    monitor.close()
    assert [(event.uuid, event.xid, event.critical) for event in events] == [
        ("GPU-00000000-0000-4000-8000-000000000002", 79, True),
        ("GPU-00000000-0000-4000-8000-000000000002", 13, False),
    ]
    assert monitor.summary()["critical"] == [79]
    assert "nvmlEventSetFree" in nvml.calls


def test_xid_monitor_without_event_support_records_the_error():
    nvml = initialised(fail={"nvmlDeviceRegisterEvents": FakeNvml.NVMLError_NotSupported})
    monitor = XidMonitor.start(nvml, [0])
    assert monitor.drain() == []
    summary = monitor.summary()
    assert summary["watched"] == []
    assert any("Not Supported" in error for error in summary["errors"])


def test_remapped_rows_before_and_after():
    gpu = FakeGpu.h100_sxm(remapped_rows=(0, 1, 0, 0))
    nvml = initialised(gpu)
    before = remapped_rows(nvml, 0)
    gpu.remapped_rows = (0, 2, 1, 0)
    after = remapped_rows(nvml, 0)
    assert before == RemappedRows(0, 1, False, False)
    assert remapped_rows_finding(before, after) == (
        "a row remap is pending: the GPU needs a reset before use"
    )
    grown = RemappedRows(0, 3, False, False)
    assert remapped_rows_finding(before, grown) == (
        "2 row(s) remapped for uncorrectable errors during the run"
    )
    assert remapped_rows_finding(before, before) is None
    failed = RemappedRows(0, 0, False, True)
    assert "replacing" in (remapped_rows_finding(None, failed) or "")


def test_remapped_rows_unsupported_is_none():
    nvml = initialised(FakeGpu.h100_sxm(remapped_rows=None))
    assert remapped_rows(nvml, 0) is None
    assert gpu_record(nvml, 0).remapped_rows is None


# Item 4: a lost GPU or a missing function never crashes the run.


def test_a_lost_gpu_gives_a_record_with_errors_and_the_others_are_read():
    nvml = initialised(FakeGpu.h100_sxm(), FakeGpu.h100_sxm(index=1), mode="lost_gpu", lost_index=1)
    healthy, lost = nvml_gpus(nvml)
    assert healthy.catalog_id == "h100-sxm-80gb" and healthy.errors == ()
    assert lost.name == "" and lost.catalog_id is None
    assert any("GPU is lost" in error for error in lost.errors)


def test_telemetry_of_a_lost_gpu_is_none_with_errors():
    nvml = initialised(mode="lost_gpu")
    sample = telemetry_sample(nvml, 0)
    assert sample["sm_clock_hz"] is None and sample["throttle_reasons"] is None
    assert any("GpuIsLost" in error for error in sample["errors"])
    assert uncorrectable_ecc_errors(nvml, 0) is None
    assert remapped_rows(nvml, 0) is None


def test_a_handle_that_cannot_be_had_gives_none_everywhere():
    nvml = initialised(fail={"nvmlDeviceGetHandleByIndex": FakeNvml.NVMLError_GpuIsLost})
    assert set(pcie_link(nvml, 0).values()) == {None}
    assert telemetry_sample(nvml, 0)["power_watts"] is None
    assert gpu_record(nvml, 0).errors


def test_absent_nvml_gives_no_module_and_the_header_still_builds(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", FakeNvml(mode="absent"))
    assert load_nvml() is None
    header = provenance("cuda", "pytest", None)
    assert header["gpus"] == [] and header["driver_version"] is None


def test_header_pairs_nvml_gpus_with_torch_devices(monkeypatch):
    nvml = FakeNvml([FakeGpu.h100_sxm(), FakeGpu.h100_sxm(index=1)])
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    torch = fake_torch(
        ["00000000-0000-4000-8000-000000000002", "00000000-0000-4000-8000-000000000001"]
    )
    header = provenance("cuda", "pytest", torch)
    assert [gpu["torch_index"] for gpu in header["gpus"]] == [1, 0]
    assert header["driver_version"] == "550.54.15"


def test_a_lost_gpu_does_not_lose_the_header(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", FakeNvml(mode="lost_gpu"))
    header = provenance("cuda", "pytest", fake_torch(["00000000-0000-4000-8000-000000000001"]))
    assert header["gpus"][0]["errors"]


def test_ecc_counts_are_read():
    nvml = initialised(FakeGpu.h100_sxm(uncorrectable_ecc=3))
    assert uncorrectable_ecc_errors(nvml, 0) == 3
    assert (
        uncorrectable_ecc_errors(initialised(FakeGpu.h100_sxm(uncorrectable_ecc=None)), 0) is None
    )


# Item 14: NVML index through the UUID.


def test_uuid_maps_torch_to_nvml_where_the_orders_differ():
    nvml = initialised(*(FakeGpu.h100_sxm(index=i) for i in range(3)))
    torch = fake_torch(
        ["00000000-0000-4000-8000-000000000003", "GPU-00000000-0000-4000-8000-000000000001"]
    )
    assert nvml_indices_for_torch_devices(nvml, torch) == [2, 0]


def test_visible_device_ordinals_are_used_without_torch_uuids(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,1")
    nvml = initialised(*(FakeGpu.h100_sxm(index=i) for i in range(4)))
    torch = fake_torch([None, None])
    assert nvml_indices_for_torch_devices(nvml, torch) == [3, 1]


def test_visible_device_uuid_prefixes_are_matched(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-00000000-0000-4000-8000-000000000002")
    nvml = initialised(*(FakeGpu.h100_sxm(index=i) for i in range(2)))
    assert nvml_index_for_torch_device(nvml, fake_torch([None]), 0) == 1


def test_a_mig_slice_maps_to_its_parent_gpu():
    nvml = initialised(FakeGpu.h100_sxm(), FakeGpu.h100_sxm(index=1, mig=True))
    torch = fake_torch(["MIG-00000000-0000-4000-9000-000000000002"])
    assert nvml_index_for_torch_device(nvml, torch, 0) == 1


def test_mixed_gpus_without_bus_order_give_no_index_rather_than_a_wrong_one(monkeypatch):
    nvml = initialised(FakeGpu.h100_sxm(), FakeGpu.a100_sxm(index=1))
    torch = fake_torch([None, None])
    assert nvml_indices_for_torch_devices(nvml, torch) == [None, None]
    monkeypatch.setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
    assert nvml_indices_for_torch_devices(nvml, torch) == [0, 1]


def test_an_unknown_uuid_or_index_gives_none(monkeypatch):
    nvml = initialised()
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-ffffffff")
    assert nvml_index_for_torch_device(nvml, fake_torch([None]), 0) is None
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    assert nvml_index_for_torch_device(nvml, fake_torch([None, None]), 1) is None


def test_catalog_id_of_a_torch_device_comes_from_its_nvml_pci_id():
    nvml = initialised(FakeGpu.h100_nvl(name="NVIDIA H100 80GB HBM3"))
    torch = fake_torch(["00000000-0000-4000-8000-000000000001"])
    assert catalog_id_for_torch_device(nvml, torch, 0) is None
    assert catalog_id_for_torch_device(None, torch, 0) == "h100-sxm-80gb"


# pcie_link keys.


def test_pcie_link_reports_current_slot_max_and_gpu_max():
    gpu = FakeGpu.h100_sxm(pcie_current=(4, 8), pcie_max=(4, 16), pcie_gpu_max_generation=5)
    nvml = initialised(gpu)
    assert pcie_link(nvml, 0) == {
        "generation": 4,
        "width": 8,
        "max_generation": 4,
        "max_width": 16,
        "gpu_max_generation": 5,
    }
    assert "the slot limits PCIe to Gen4 (the GPU supports Gen5)" in gpu_record(nvml, 0).findings()


def test_pcie_link_with_an_unsupported_reading_keeps_the_others():
    nvml = initialised(
        fail={"nvmlDeviceGetGpuMaxPcieLinkGeneration": FakeNvml.NVMLError_FunctionNotFound}
    )
    link = pcie_link(nvml, 0)
    assert link["gpu_max_generation"] is None and link["max_generation"] == 5


# FakeNvml with fake_cuda's node (engineer 5's end-to-end runs).


def test_fake_nvml_for_a_fake_cuda_node_pairs_every_device():
    fake_cuda = pytest.importorskip("fake_cuda")
    if not hasattr(fake_cuda, "h100_mig_1g"):
        pytest.skip("fake_cuda has no MIG profile")
    node = fake_cuda.FakeNode([fake_cuda.h100_sxm(), fake_cuda.h100_mig_1g()])
    nvml = FakeNvml.for_node(node)
    nvml.nvmlInit()
    assert nvml_indices_for_torch_devices(nvml, node.torch) == [0, 1]
    records = nvml_gpus(nvml)
    assert [record.is_mig_slice for record in records] == [False, True]


def test_fake_nvml_rejects_an_unknown_mode():
    with pytest.raises(ValueError, match="mode"):
        FakeNvml(mode="haunted")


def test_environment_never_imports_pynvml_for_a_call(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)
    nvml = initialised(mode="lost_gpu")
    assert environment.pcie_link(nvml, 0)["generation"] is None
