"""What machine a run happened on: provenance header, GPU identity and NVML telemetry.

The header follows mamf-finder's (date, command, platform, device properties, torch and CUDA
versions, a ``method_version``) plus GPU UUIDs, so that a broken GPU handed back by a
provider is recognised. NVML readings use the documented ``pynvml`` (nvidia-ml-py) calls;
throttle reasons are the ``clocks_event_reasons`` bitmask that Azure NHC classifies.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import re
import socket
import sys
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from gpuplan.errors import InputError

METHOD_VERSION = 1
"""Bump when a measurement method changes, so that old and new results are told apart
(mamf-finder's ``benchmark_version``)."""

INSTALL_HINT = "pip install 'gpuplan[bench]'"

THROTTLE_REASONS: dict[int, str] = {
    0x1: "gpu_idle",
    0x2: "applications_clocks_setting",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
}
HARMLESS_THROTTLE_REASONS = 0x1 | 0x2 | 0x4 | 0x10 | 0x100
"""Azure NHC warns on every reason except idle and the software power cap; application
clocks, sync boost and display clocks are settings, not faults."""

ENVIRONMENT_VARIABLES_OF_INTEREST = re.compile(
    r"^(CUDA_VISIBLE_DEVICES|NCCL_.*|PYTORCH_.*|TORCH_.*|OMP_NUM_THREADS|SLURM_JOB_ID)$"
)


class MissingBenchDependencyError(InputError):
    """The optional [bench] extra (torch, nvidia-ml-py) is not installed."""


def require_torch() -> ModuleType:
    """``torch``, or a one-line error saying how to install it."""
    try:
        import torch
    except ImportError as error:
        raise MissingBenchDependencyError(
            f"gpuplan bench needs PyTorch, which is not installed: {INSTALL_HINT}"
        ) from error
    return torch


def load_nvml() -> ModuleType | None:
    """The initialised ``pynvml`` module, or None without nvidia-ml-py or an NVIDIA driver."""
    try:
        import pynvml
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError:
        return None
    return pynvml


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def identify_gpu(device_name: str) -> str | None:
    """The catalog id of a device name as the driver reports it, or None.

    Drops the vendor prefix and tries ever shorter word prefixes against the catalog aliases:
    "NVIDIA H100 80GB HBM3" -> "H100 80GB" -> h100-sxm-80gb; "Tesla V100-SXM2-32GB" -> v100.
    """
    from gpuplan.catalog import resolve_gpu_id
    from gpuplan.errors import InputError as CatalogLookupError

    name = re.sub(r"^(NVIDIA|Tesla|AMD|Instinct)\s+", "", device_name.strip(), flags=re.I)
    words = name.split()
    for length in range(len(words), 0, -1):
        try:
            return resolve_gpu_id(" ".join(words[:length]))
        except CatalogLookupError:
            continue
    return None


@dataclass(frozen=True)
class GpuRecord:
    """One GPU as the driver reports it."""

    index: int
    name: str
    uuid: str
    memory_bytes: int
    catalog_id: str | None
    pcie_generation: int | None = None
    pcie_width: int | None = None
    pcie_max_generation: int | None = None
    pcie_max_width: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "name": self.name,
            "uuid": self.uuid,
            "memory_bytes": self.memory_bytes,
            "catalog_id": self.catalog_id,
            "pcie_generation": self.pcie_generation,
            "pcie_width": self.pcie_width,
            "pcie_max_generation": self.pcie_max_generation,
            "pcie_max_width": self.pcie_max_width,
        }


def _nvml_call(function: Any, *arguments: Any) -> Any:
    """One NVML reading, or None where this GPU or driver does not support it."""
    import pynvml

    try:
        return function(*arguments)
    except pynvml.NVMLError:
        return None


def pcie_link(nvml: ModuleType, index: int) -> dict[str, int | None]:
    """Current and maximum PCIe generation and width of GPU ``index``.

    The current link drops to Gen1 at idle on many GPUs; read it while a transfer runs.
    """
    handle = nvml.nvmlDeviceGetHandleByIndex(index)
    return {
        "generation": _nvml_call(nvml.nvmlDeviceGetCurrPcieLinkGeneration, handle),
        "width": _nvml_call(nvml.nvmlDeviceGetCurrPcieLinkWidth, handle),
        "max_generation": _nvml_call(nvml.nvmlDeviceGetMaxPcieLinkGeneration, handle),
        "max_width": _nvml_call(nvml.nvmlDeviceGetMaxPcieLinkWidth, handle),
    }


def nvml_gpus(nvml: ModuleType) -> list[GpuRecord]:
    """Every GPU the driver sees, with UUID and PCIe link."""
    records = []
    for index in range(nvml.nvmlDeviceGetCount()):
        handle = nvml.nvmlDeviceGetHandleByIndex(index)
        name = _text(nvml.nvmlDeviceGetName(handle))
        memory = _nvml_call(nvml.nvmlDeviceGetMemoryInfo, handle)
        link = pcie_link(nvml, index)
        records.append(
            GpuRecord(
                index=index,
                name=name,
                uuid=_text(_nvml_call(nvml.nvmlDeviceGetUUID, handle) or ""),
                memory_bytes=int(memory.total) if memory is not None else 0,
                catalog_id=identify_gpu(name),
                pcie_generation=link["generation"],
                pcie_width=link["width"],
                pcie_max_generation=link["max_generation"],
                pcie_max_width=link["max_width"],
            )
        )
    return records


def torch_gpus(torch: ModuleType) -> list[GpuRecord]:
    """GPUs as PyTorch sees them, for machines without NVML (ROCm, containers without it)."""
    records = []
    for index in range(torch.cuda.device_count()):
        properties = torch.cuda.get_device_properties(index)
        records.append(
            GpuRecord(
                index=index,
                name=properties.name,
                uuid=str(getattr(properties, "uuid", "")),
                memory_bytes=int(properties.total_memory),
                catalog_id=identify_gpu(properties.name),
            )
        )
    return records


def telemetry_sample(nvml: ModuleType, index: int) -> dict[str, Any]:
    """Clocks (Hz), power (W), temperature (°C) and throttle bitmask of one GPU, now."""
    handle = nvml.nvmlDeviceGetHandleByIndex(index)
    reasons_function = getattr(
        nvml,
        "nvmlDeviceGetCurrentClocksEventReasons",
        getattr(nvml, "nvmlDeviceGetCurrentClocksThrottleReasons", None),
    )
    sm_clock = _nvml_call(nvml.nvmlDeviceGetClockInfo, handle, nvml.NVML_CLOCK_SM)
    memory_clock = _nvml_call(nvml.nvmlDeviceGetClockInfo, handle, nvml.NVML_CLOCK_MEM)
    power = _nvml_call(nvml.nvmlDeviceGetPowerUsage, handle)
    return {
        "sm_clock_hz": sm_clock * 1e6 if sm_clock is not None else None,
        "memory_clock_hz": memory_clock * 1e6 if memory_clock is not None else None,
        "power_watts": power / 1000 if power is not None else None,
        "temperature_celsius": _nvml_call(
            nvml.nvmlDeviceGetTemperature, handle, nvml.NVML_TEMPERATURE_GPU
        ),
        "throttle_reasons": _nvml_call(reasons_function, handle) if reasons_function else None,
    }


def uncorrectable_ecc_errors(nvml: ModuleType, index: int) -> int | None:
    """Volatile (since driver load) uncorrectable ECC errors; None where ECC is off."""
    handle = nvml.nvmlDeviceGetHandleByIndex(index)
    return _nvml_call(
        nvml.nvmlDeviceGetTotalEccErrors,
        handle,
        nvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
        nvml.NVML_VOLATILE_ECC,
    )


def throttle_names(bitmask: int) -> list[str]:
    return [name for bit, name in THROTTLE_REASONS.items() if bitmask & bit]


def provenance(device: str, command: str, torch: ModuleType | None) -> dict[str, Any]:
    """The run header: when, where, on what, with which software, by which command."""
    nvml = load_nvml() if device == "cuda" else None
    gpus: list[GpuRecord] = []
    driver = None
    if nvml is not None:
        gpus = nvml_gpus(nvml)
        driver = _text(nvml.nvmlSystemGetDriverVersion())
    elif torch is not None and device == "cuda":
        gpus = torch_gpus(torch)
    nccl = None
    if torch is not None and device == "cuda" and hasattr(torch.cuda, "nccl"):
        try:
            version = torch.cuda.nccl.version()
            nccl = ".".join(map(str, version)) if isinstance(version, tuple) else str(version)
        except (RuntimeError, AttributeError):
            nccl = None
    return {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "hostname": socket.gethostname(),
        "device": device,
        "command": command,
        "method_version": METHOD_VERSION,
        "gpus": [gpu.to_dict() for gpu in gpus],
        "driver_version": driver,
        "cuda_version": getattr(getattr(torch, "version", None), "cuda", None),
        "nccl_version": nccl,
        "torch_version": getattr(torch, "__version__", None),
        "python_version": platform.python_version(),
        "platform": " ".join(platform.uname()),
        "cpu_count": os.cpu_count(),
        "environment": {
            key: value
            for key, value in sorted(os.environ.items())
            if ENVIRONMENT_VARIABLES_OF_INTEREST.match(key)
        },
        "argv": list(sys.argv),
    }
