"""Readers for the outputs of the standard tools, so their results join gpuplan's reports.

- ``nvidia-smi -q -x``: the XML report (``<nvidia_smi_log>``, one ``<gpu>`` per device).
- ``nvidia-smi --query-gpu=... --format=csv``: CSV with units in the header and the values
  (``81559 MiB``, ``700.00 W``, ``[N/A]``).
- fio ``--output-format=json``: ``jobs[].read|write.bw_bytes`` (bytes/s), ``iops``.
- nccl-tests (``all_reduce_perf`` etc.): the fixed-width table ``size count type redop root
  time algbw busbw #wrong`` for out-of-place then in-place, GB/s decimal, time in µs.
"""

from __future__ import annotations

import csv
import io
import json
import re
import xml.etree.ElementTree as ElementTree
from typing import Any

from gpuplan.errors import InputError

UNIT_FACTORS = {
    "MiB": 2**20,
    "GiB": 2**30,
    "KiB": 2**10,
    "W": 1.0,
    "MHz": 1e6,
    "C": 1.0,
    "%": 0.01,
}


class ToolOutputError(InputError):
    """Tool output that does not have the expected format."""


def _number_with_unit(text: str | None) -> float | None:
    """``"81559 MiB"`` -> bytes, ``"1980 MHz"`` -> Hz, ``"N/A"`` -> None."""
    if text is None:
        return None
    value = text.strip().strip("[]")
    match = re.fullmatch(r"([-+]?\d+(?:\.\d+)?)\s*([A-Za-z%]*)", value)
    if not match:
        return None
    number = float(match.group(1))
    return number * UNIT_FACTORS.get(match.group(2), 1.0)


def _find_text(element: ElementTree.Element, path: str) -> str | None:
    found = element.find(path)
    return found.text.strip() if found is not None and found.text else None


def parse_nvidia_smi_xml(text: str) -> dict[str, Any]:
    """Driver, CUDA version and per-GPU identity, PCIe link, clocks, power, ECC, throttling."""
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError as error:
        raise ToolOutputError.of("error.tool_smi_xml", reason=str(error)) from error
    if root.tag != "nvidia_smi_log":
        raise ToolOutputError.of("error.tool_smi_root")
    gpus = []
    for gpu in root.findall("gpu"):
        reasons = gpu.find("clocks_event_reasons")
        if reasons is None:
            reasons = gpu.find("clocks_throttle_reasons")
        active = (
            sorted(
                child.tag.removeprefix("clocks_event_reason_").removeprefix(
                    "clocks_throttle_reason_"
                )
                for child in reasons
                if (child.text or "").strip() == "Active"
            )
            if reasons is not None
            else []
        )
        uncorrectable = _find_text(gpu, "ecc_errors/volatile/dram_uncorrectable") or _find_text(
            gpu, "ecc_errors/volatile/double_bit/total"
        )
        gpus.append(
            {
                "bus_id": gpu.get("id"),
                "name": _find_text(gpu, "product_name"),
                "uuid": _find_text(gpu, "uuid"),
                "memory_bytes": _number_with_unit(_find_text(gpu, "fb_memory_usage/total")),
                "pcie_generation": _number_with_unit(
                    _find_text(gpu, "pci/pci_gpu_link_info/pcie_gen/current_link_gen")
                ),
                "pcie_max_generation": _number_with_unit(
                    _find_text(gpu, "pci/pci_gpu_link_info/pcie_gen/max_link_gen")
                ),
                "pcie_width": _number_with_unit(
                    (
                        _find_text(gpu, "pci/pci_gpu_link_info/link_widths/current_link_width")
                        or ""
                    ).removesuffix("x")
                ),
                "sm_clock_hz": _number_with_unit(_find_text(gpu, "clocks/sm_clock")),
                "memory_clock_hz": _number_with_unit(_find_text(gpu, "clocks/mem_clock")),
                "power_watts": _number_with_unit(
                    _find_text(gpu, "gpu_power_readings/power_draw")
                    or _find_text(gpu, "power_readings/power_draw")
                ),
                "temperature_celsius": _number_with_unit(_find_text(gpu, "temperature/gpu_temp")),
                "uncorrectable_ecc_errors": _number_with_unit(uncorrectable),
                "active_throttle_reasons": active,
            }
        )
    return {
        "driver_version": _find_text(root, "driver_version"),
        "cuda_version": _find_text(root, "cuda_version"),
        "gpus": gpus,
    }


def _csv_key(header: str) -> str:
    return re.sub(r"\s*\[.*\]$", "", header.strip())


def parse_nvidia_smi_csv(text: str) -> list[dict[str, Any]]:
    """Rows of ``nvidia-smi --query-gpu=... --format=csv``: numbers in base units where the
    header gives a unit (``memory.total [MiB]``), hexadecimal bitmasks as integers, text
    otherwise; ``[N/A]`` as None."""
    reader = csv.reader(io.StringIO(text.strip()), skipinitialspace=True)
    rows = list(reader)
    if not rows or not rows[0]:
        raise ToolOutputError.of("error.tool_smi_empty")
    headers = rows[0]
    units = [re.search(r"\[(.*)\]$", header.strip()) for header in headers]
    parsed = []
    for row in rows[1:]:
        if len(row) != len(headers):
            raise ToolOutputError.of("error.tool_smi_row", fields=len(row), header=len(headers))
        entry: dict[str, Any] = {}
        for header, unit, value in zip(headers, units, row, strict=True):
            cell = value.strip()
            if cell in ("[N/A]", "N/A", "[Not Supported]"):
                entry[_csv_key(header)] = None
            elif cell.startswith("0x"):
                entry[_csv_key(header)] = int(cell, 16)
            elif unit:
                entry[_csv_key(header)] = _number_with_unit(cell)
            else:
                number = _number_with_unit(cell)
                entry[_csv_key(header)] = number if number is not None else cell
        parsed.append(entry)
    return parsed


def parse_fio_json(text: str) -> dict[str, Any]:
    """Throughput (bytes/s) and IOPS summed over jobs, per direction, from fio's JSON."""
    start = text.find("{")
    try:
        document = json.loads(text[start:] if start >= 0 else text)
    except json.JSONDecodeError as error:
        raise ToolOutputError.of("error.tool_fio_json", reason=error.msg) from error
    jobs = document.get("jobs")
    if not isinstance(jobs, list) or not jobs:
        raise ToolOutputError.of("error.tool_fio_jobs")
    result: dict[str, Any] = {"fio_version": document.get("fio version")}
    for direction in ("read", "write"):
        sections = [job.get(direction, {}) for job in jobs]
        result[f"{direction}_bytes_per_second"] = float(
            sum(section.get("bw_bytes", 0) for section in sections)
        )
        result[f"{direction}_iops"] = float(sum(section.get("iops", 0.0) for section in sections))
        result[f"{direction}_io_bytes"] = int(
            sum(section.get("io_bytes", 0) for section in sections)
        )
        latencies = [section.get("clat_ns", {}).get("mean") for section in sections]
        known = [latency for latency in latencies if latency]
        result[f"{direction}_mean_completion_latency_seconds"] = (
            sum(known) / len(known) / 1e9 if known else None
        )
    return result


NCCL_ROW = re.compile(
    r"^\s*(?P<size>\d+)\s+(?P<count>\d+)\s+(?P<type>\w+)\s+(?P<redop>\w+)\s+(?P<root>-?\d+)\s+"
    r"(?P<out_time>[\d.]+)\s+(?P<out_algbw>[\d.]+)\s+(?P<out_busbw>[\d.]+)\s+(?P<out_wrong>\S+)\s+"
    r"(?P<in_time>[\d.]+)\s+(?P<in_algbw>[\d.]+)\s+(?P<in_busbw>[\d.]+)\s+(?P<in_wrong>\S+)\s*$"
)


def parse_nccl_tests(text: str) -> dict[str, Any]:
    """Rows of an nccl-tests run in base units (bytes, seconds, bytes/s) and its footer.

    ``average_bus_bandwidth_bytes_per_second`` is nccl-tests' "Avg bus bandwidth": the mean
    over every size of the sweep, meaningful only for a single-size run (``-b X -e X``).
    """
    rows = []
    for line in text.splitlines():
        match = NCCL_ROW.match(line)
        if not match:
            continue
        fields = match.groupdict()
        rows.append(
            {
                "size_bytes": int(fields["size"]),
                "count": int(fields["count"]),
                "type": fields["type"],
                "out_of_place": {
                    "seconds": float(fields["out_time"]) * 1e-6,
                    "algorithm_bandwidth_bytes_per_second": float(fields["out_algbw"]) * 1e9,
                    "bus_bandwidth_bytes_per_second": float(fields["out_busbw"]) * 1e9,
                    "wrong": None if fields["out_wrong"] == "N/A" else int(fields["out_wrong"]),
                },
                "in_place": {
                    "seconds": float(fields["in_time"]) * 1e-6,
                    "algorithm_bandwidth_bytes_per_second": float(fields["in_algbw"]) * 1e9,
                    "bus_bandwidth_bytes_per_second": float(fields["in_busbw"]) * 1e9,
                    "wrong": None if fields["in_wrong"] == "N/A" else int(fields["in_wrong"]),
                },
            }
        )
    if not rows:
        raise ToolOutputError.of("error.tool_nccl_rows")
    average = re.search(r"#\s*Avg bus bandwidth\s*:\s*([\d.]+)", text)
    collective = re.search(r"#\s*Collective test starting:\s*(\w+)", text)
    ranks = re.findall(r"#\s+Rank\s+\d+\s+Group", text)
    return {
        "collective": collective.group(1) if collective else None,
        "ranks": len(ranks) or None,
        "rows": rows,
        "average_bus_bandwidth_bytes_per_second": float(average.group(1)) * 1e9
        if average
        else None,
        "out_of_bounds_ok": bool(re.search(r"Out of bounds values\s*:\s*0\s+OK", text)),
    }
