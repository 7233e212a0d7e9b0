"""Parsers against representative samples of nvidia-smi, fio and nccl-tests output."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuplan.bench.parsers import (
    ToolOutputError,
    parse_fio_json,
    parse_nccl_tests,
    parse_nvidia_smi_csv,
    parse_nvidia_smi_xml,
)

SAMPLES = Path(__file__).parent / "samples"


def test_nvidia_smi_xml_reads_identity_link_ecc_and_throttling():
    report = parse_nvidia_smi_xml((SAMPLES / "nvidia_smi_q_x.xml").read_text())
    assert report["driver_version"] == "550.54.15"
    assert report["cuda_version"] == "12.4"
    first, second = report["gpus"]
    assert first["name"] == "NVIDIA H100 80GB HBM3"
    assert first["uuid"].startswith("GPU-2f6f")
    assert first["memory_bytes"] == 81559 * 2**20
    assert (first["pcie_generation"], first["pcie_width"]) == (5, 16)
    assert first["sm_clock_hz"] == 1980e6
    assert first["active_throttle_reasons"] == ["gpu_idle"]
    assert (second["pcie_generation"], second["pcie_width"]) == (4, 8)
    assert second["uncorrectable_ecc_errors"] == 2
    assert second["active_throttle_reasons"] == ["sw_power_cap", "sw_thermal_slowdown"]
    assert second["power_watts"] == pytest.approx(698.10)


def test_nvidia_smi_xml_rejects_other_documents():
    with pytest.raises(ToolOutputError, match="nvidia-smi"):
        parse_nvidia_smi_xml("<html/>")
    with pytest.raises(ToolOutputError, match="not valid XML"):
        parse_nvidia_smi_xml("not xml")


def test_nvidia_smi_csv_converts_units_bitmasks_and_missing_values():
    rows = parse_nvidia_smi_csv((SAMPLES / "nvidia_smi_query.csv").read_text())
    assert len(rows) == 2
    assert rows[0]["memory.total"] == 81559 * 2**20
    assert rows[0]["clocks.sm"] == 1980e6
    assert rows[0]["clocks_event_reasons.active"] == 0x4
    assert rows[0]["pcie.link.gen.current"] == 5
    assert rows[1]["power.draw"] is None
    assert rows[1]["clocks_event_reasons.active"] == 0x20
    assert rows[1]["name"] == "NVIDIA H100 80GB HBM3"


def test_fio_json_gives_bytes_per_second_even_after_a_warning_line():
    result = parse_fio_json((SAMPLES / "fio_sequential_read.json").read_text())
    assert result["fio_version"] == "fio-3.36"
    assert result["read_bytes_per_second"] == 6612345678
    assert result["write_bytes_per_second"] == 0
    assert result["read_iops"] == pytest.approx(6306.12)
    assert result["read_mean_completion_latency_seconds"] == pytest.approx(2.5341235e-3)


def test_fio_json_errors_are_one_line():
    with pytest.raises(ToolOutputError, match="fio"):
        parse_fio_json('{"jobs": []}')


def test_nccl_tests_rows_in_base_units_and_the_sweep_average():
    result = parse_nccl_tests((SAMPLES / "nccl_tests_all_reduce.txt").read_text())
    assert result["ranks"] == 8
    assert result["collective"] == "all_reduce_perf"
    assert len(result["rows"]) == 4
    largest = result["rows"][-1]
    assert largest["size_bytes"] == 16 * 2**30
    assert largest["out_of_place"]["bus_bandwidth_bytes_per_second"] == pytest.approx(412.33e9)
    assert largest["in_place"]["seconds"] == pytest.approx(72880e-6)
    assert largest["out_of_place"]["wrong"] == 0
    busbw = [row["out_of_place"]["bus_bandwidth_bytes_per_second"] for row in result["rows"]]
    assert result["average_bus_bandwidth_bytes_per_second"] == pytest.approx(
        sum(busbw) / len(busbw)
    )
    assert result["out_of_bounds_ok"]


def test_nccl_tests_busbw_matches_the_all_reduce_factor():
    from gpuplan.bench.collectives import bus_bandwidth_factor

    result = parse_nccl_tests((SAMPLES / "nccl_tests_all_reduce.txt").read_text())
    for row in result["rows"]:
        place = row["out_of_place"]
        expected = place["algorithm_bandwidth_bytes_per_second"] * bus_bandwidth_factor(
            "all_reduce", 8
        )
        assert place["bus_bandwidth_bytes_per_second"] == pytest.approx(expected, rel=1e-3)


def test_nccl_tests_without_rows_is_an_error():
    with pytest.raises(ToolOutputError, match="no result rows"):
        parse_nccl_tests("# nThread 1 nGpus 8\n")
