"""What machine a run happened on: provenance header, GPU identity and NVML telemetry.

The header follows mamf-finder's (date, command, platform, device properties, torch and CUDA
versions, a ``method_version``) plus GPU UUIDs, so that a broken GPU handed back by a
provider is recognised. NVML readings use the documented ``pynvml`` (nvidia-ml-py) calls;
throttle reasons are the ``clocks_event_reasons`` bitmask that Azure NHC classifies.

Every NVML call goes through :class:`NvmlReader`: a lost GPU (``NVMLError_GpuIsLost``), a
function the driver lacks (``NVMLError_FunctionNotFound``) or one it does not support gives
None for that reading and an error string for that GPU, never an exception. NVML indices are
not torch indices (``CUDA_VISIBLE_DEVICES``, Slurm, ``CUDA_DEVICE_ORDER``):
:func:`nvml_index_for_torch_device` pairs them through the GPU UUID.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import platform
import re
import socket
import sys
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import Any

from gpuplan.errors import InputError

METHOD_VERSION = 1
"""Bump when a measurement method changes, so that old and new results are told apart
(mamf-finder's ``benchmark_version``)."""

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
HARMLESS_THROTTLE_REASONS = 0x1 | 0x4 | 0x10 | 0x100
"""Reasons that are not a fault of the machine: idle, the software power cap (a GPU at its
power limit under a burn), sync boost and display clocks. ``applications_clocks_setting``
(0x2) is not among them: a GPU whose clocks an operator locked below their maximum delivers
less than the reference, so it is a finding (Azure NHC warns on every reason except idle and
the software power cap: Azure/azurehpc-health-checks, customTests/azure_gpu_clock_throttling.nhc)."""

CLOCKS_SETTING_REASON = 0x2
"""``nvmlClocksEventReasonApplicationsClocksSetting``: clocks held by the applications-clock
(or locked-clock) setting (nvml.h, ``nvmlClocksEventReasons``)."""

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
        from gpuplan.extras import missing_extra_error

        raise missing_extra_error(
            MissingBenchDependencyError, "gpuplan bench", "bench", "PyTorch"
        ) from error
    return torch


CRITICAL_XIDS = frozenset(
    {48, 56, 57, 58, 62, 63, 64, 65, 68, 69, 73, 74, 79, 80, 81, 92, 119, 120}
)
"""XIDs that mark a GPU unhealthy (Azure/azurehpc-health-checks, customTests/azure_gpu_xid.nhc,
``XID_EC``; meanings in NVIDIA's XID catalog, docs.nvidia.com/deploy/xid-errors)."""

NVIDIA_PCI_VENDOR_ID = 0x10DE

PCI_DEVICE_IDS: dict[int, str | None] = {
    0x1DB1: None,
    0x1DB5: "v100-sxm-32gb",
    0x20B0: "a100-sxm-40gb",
    0x20B2: "a100-sxm-80gb",
    0x20B5: "a100-pcie-80gb",
    0x20F3: "a800-sxm-80gb",
    0x2204: "rtx-3090-24gb",
    0x2230: "rtx-a6000-48gb",
    0x2237: "a10g-24gb",
    0x2321: None,
    0x2322: None,
    0x2324: "h800-sxm-80gb",
    0x2329: "h20-96gb",
    0x232C: None,
    0x2330: "h100-sxm-80gb",
    0x2331: "h100-pcie-80gb",
    0x2335: "h200-sxm-141gb",
    0x2337: None,
    0x2338: None,
    0x2339: None,
    0x233B: None,
    0x2684: "rtx-4090-24gb",
    0x26B7: "l20-48gb",
    0x26B9: "l40s-48gb",
    0x26BA: "l20-48gb",
    0x27B8: "l4-24gb",
    0x2B85: "rtx-5090-32gb",
}
"""NVIDIA PCI device id -> catalog id, from the PCI ID database (pciutils/pciids, pci.ids
version 2026.08.22, vendor 10de): 1db1 "Tesla V100 SXM2 16GB", 1db5 "Tesla V100 SXM2 32GB",
20b0 "A100 SXM4 40GB", 20b2 "A100 SXM4 80GB", 20b5 "A100 PCIe 80GB", 20f3 "A800-SXM4-80GB",
2204 "GeForce RTX 3090", 2230 "RTX A6000", 2237 "A10G", 2321 "H100L 94GB" (the 94 GB H100 NVL),
2322 "H800 PCIe", 2324 "H800", 2329 "H20", 232c "H20 HBM3e", 2330 "H100 SXM5 80GB",
2331 "H100 PCIe", 2335 "H200 SXM 141GB", 2337/2338/2339 "H100 SXM5 64/96/94GB",
233b "H200 NVL", 2684 "GeForce RTX 4090", 26b7/26ba "L20", 26b9 "L40S", 27b8 "L4",
2b85 "GeForce RTX 5090". None: a known GPU the catalog does not hold (its figures would be
another model's), so the user passes ``--gpu``. Not listed, so named by the driver instead:
B200 (pci.ids has 2901 "B200" and 2909 "HGX B200 168GB", which does not say which board is the
catalog's 180 GB one)."""

DRIVER_NAMES: dict[str, str | None] = {
    "NVIDIA H100 80GB HBM3": "h100-sxm-80gb",
    "NVIDIA H100": None,
}
"""Driver-reported names (``torch.cuda.get_device_name``) that the catalog aliases do not
match exactly, as they appear in vLLM's tuned-kernel file names (vllm-project/vllm,
vllm/model_executor/layers/fused_moe/configs/*device_name=NVIDIA_H100_80GB_HBM3*,
*device_name=NVIDIA_H100,*). A bare "NVIDIA H100" names no SKU (pci.ids lists several H100
boards: 2330, 2336-2339, 233d), so it is unknown rather than taken for the SXM5 80GB."""

MIG_ENABLED = 1
"""``NVML_DEVICE_MIG_ENABLE``: the current mode ``nvmlDeviceGetMigMode`` returns with MIG on."""

NVML_CLOCK_GRAPHICS = 0
NVML_CLOCK_SM = 1
NVML_CLOCK_MEM = 2
NVML_TEMPERATURE_GPU = 0
NVML_VOLATILE_ECC = 0
NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1
NVML_EVENT_TYPE_XID_CRITICAL_ERROR = 0x8
"""Values of the nvml.h enums (nvidia-ml-py pynvml.py names them ``NVML_CLOCK_SM``...,
``nvmlEventTypeXidCriticalError``); used where a pynvml build lacks the name."""


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _constant(nvml: Any, name: str, default: int) -> int:
    return int(getattr(nvml, name, default))


def normalized_uuid(uuid: str | None) -> str:
    """A GPU or MIG UUID without its ``GPU-``/``MIG-`` prefix, lower case: NVML writes
    "GPU-<uuid>" and "MIG-<uuid>", ``str(torch.cuda.get_device_properties(i).uuid)`` the bare
    8-4-4-4-12 hex form."""
    text = (uuid or "").strip().lower()
    for prefix in ("gpu-", "mig-"):
        if text.startswith(prefix):
            return text[len(prefix) :]
    return text


class NvmlReader:
    """NVML calls that never raise: each failure gives None and an entry in ``errors``.

    A lost GPU raises ``NVMLError_GpuIsLost`` on every call to its handle; a driver older than
    the binding raises ``NVMLError_FunctionNotFound``; a pynvml older than the call lacks the
    attribute. All three, and anything else a binding raises, are recorded as
    ``"<function>: <message>"`` under the reading's name.
    """

    def __init__(self, nvml: Any) -> None:
        self.nvml = nvml
        self.errors: dict[str, str] = {}

    def call(self, key: str, function_name: str, *arguments: Any) -> Any:
        function = getattr(self.nvml, function_name, None)
        if function is None:
            self.errors[key] = f"{function_name}: not in this pynvml"
            return None
        try:
            return function(*arguments)
        except Exception as error:  # a reading lost, never the run
            self.errors[key] = f"{function_name}: {_error_text(error)}"
            return None

    def handle(self, index: int) -> Any:
        return self.call("handle", "nvmlDeviceGetHandleByIndex", index)

    def error_list(self) -> tuple[str, ...]:
        return tuple(f"{key}: {message}" for key, message in self.errors.items())


def _error_text(error: BaseException) -> str:
    try:
        return f"{type(error).__name__}: {error}"
    except Exception:  # pynvml's __str__ itself calls NVML
        return type(error).__name__


def load_nvml() -> ModuleType | None:
    """The initialised ``pynvml`` module, or None without nvidia-ml-py or an NVIDIA driver
    (``nvmlInit`` raises ``NVMLError_LibraryNotFound`` or ``NVMLError_DriverNotLoaded``)."""
    try:
        import pynvml
    except ImportError:
        return None
    if pynvml is None:
        return None
    try:
        pynvml.nvmlInit()
    except Exception:
        return None
    return pynvml


def pci_device_id(nvml: Any, handle: Any, reader: NvmlReader | None = None) -> int | None:
    """The 16-bit PCI device id of an NVIDIA GPU, e.g. 0x2330 for an H100 SXM5 80GB.

    NVML's ``nvmlPciInfo_t.pciDeviceId`` packs ``device << 16 | vendor`` (0x233010DE). Not
    torch's ``pci_device_id``, which is the slot number on the bus.
    """
    reader = reader or NvmlReader(nvml)
    info = reader.call("pci_device_id", "nvmlDeviceGetPciInfo", handle)
    packed = getattr(info, "pciDeviceId", None)
    if packed is None:
        return None
    packed = int(packed)
    if packed & 0xFFFF != NVIDIA_PCI_VENDOR_ID:
        return None
    return packed >> 16


def _stripped_name(device_name: str) -> str:
    return re.sub(r"^(NVIDIA|Tesla|AMD|Instinct)\s+", "", device_name.strip(), flags=re.I)


def identify_gpu(device_name: str, pci_id: int | None = None) -> str | None:
    """The catalog id of a GPU, or None (then the user passes ``--gpu``).

    In this order: the PCI device id (:data:`PCI_DEVICE_IDS`) where NVML gives one, a known
    driver name (:data:`DRIVER_NAMES`), then the whole name without its vendor word against the
    catalog aliases: "NVIDIA A100-SXM4-80GB" -> a100-sxm-80gb. Never a shorter prefix of the
    name, so "NVIDIA H100 NVL" is unknown rather than an H100 SXM, and a MIG slice's name
    ("... MIG 1g.10gb") matches nothing.
    """
    from gpuplan.catalog import resolve_gpu_id
    from gpuplan.errors import InputError as CatalogLookupError

    if pci_id is not None and pci_id in PCI_DEVICE_IDS:
        return PCI_DEVICE_IDS[pci_id]
    name = " ".join(device_name.split())
    if name in DRIVER_NAMES:
        return DRIVER_NAMES[name]
    stripped = _stripped_name(name)
    if not stripped:
        return None
    try:
        return resolve_gpu_id(stripped)
    except CatalogLookupError:
        return None


@dataclass(frozen=True)
class RemappedRows:
    """HBM row remapping of one GPU (``nvmlDeviceGetRemappedRows``, A100 and later): rows
    remapped for correctable and uncorrectable errors, a remap pending (takes effect at the next
    GPU reset) and a remap that failed (no spare row left: the GPU must be replaced)."""

    correctable: int
    uncorrectable: int
    pending: bool
    failure: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "correctable": self.correctable,
            "uncorrectable": self.uncorrectable,
            "pending": self.pending,
            "failure": self.failure,
        }


def remapped_rows(nvml: Any, index: int) -> RemappedRows | None:
    """Remapped rows of NVML GPU ``index`` now; None where not supported or the GPU is lost."""
    return remapped_rows_reading(nvml, index)[0]


def remapped_rows_reading(nvml: Any, index: int) -> tuple[RemappedRows | None, str]:
    """Remapped rows of NVML GPU ``index`` now, and "" or, where None, the failed NVML call
    ("nvmlDeviceGetRemappedRows: NVMLError_NotSupported: ..." before A100)."""
    reader = NvmlReader(nvml)
    handle = reader.handle(index)
    rows = _remapped_rows(reader, handle) if handle is not None else None
    return rows, "" if rows is not None else "; ".join(reader.error_list())


def _remapped_rows(reader: NvmlReader, handle: Any) -> RemappedRows | None:
    value = reader.call("remapped_rows", "nvmlDeviceGetRemappedRows", handle)
    if value is None:
        return None
    correctable, uncorrectable, pending, failure = (int(item) for item in value)
    return RemappedRows(correctable, uncorrectable, bool(pending), bool(failure))


def remapped_rows_finding(before: RemappedRows | None, after: RemappedRows | None) -> str | None:
    """A one-line finding where row remapping shows a memory fault, else None.

    A failed remap or a pending one is a finding whatever the history (NVIDIA, "A100 GPU
    Memory Error Management", docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt: a pending remap
    needs a GPU reset, a failed one means the GPU should be replaced); so is
    any uncorrectable remap added between ``before`` and ``after`` (the run's own errors).
    """
    if after is None:
        return None
    if after.failure:
        return "row remapping failed: no spare rows left, the GPU needs replacing"
    if after.pending:
        return "a row remap is pending: the GPU needs a reset before use"
    if before is not None and after.uncorrectable > before.uncorrectable:
        added = after.uncorrectable - before.uncorrectable
        return f"{added} row(s) remapped for uncorrectable errors during the run"
    return None


@dataclass(frozen=True)
class GpuRecord:
    """One GPU as the driver reports it; units Hz, W, bytes. None: not readable there."""

    index: int
    name: str
    uuid: str
    memory_bytes: int
    catalog_id: str | None
    pcie_generation: int | None = None
    pcie_width: int | None = None
    pcie_max_generation: int | None = None
    pcie_max_width: int | None = None
    pcie_gpu_max_generation: int | None = None
    pci_device_id: int | None = None
    torch_index: int | None = None
    mig_enabled: bool | None = None
    power_limit_watts: float | None = None
    default_power_limit_watts: float | None = None
    max_sm_clock_hz: float | None = None
    max_graphics_clock_hz: float | None = None
    max_memory_clock_hz: float | None = None
    applications_graphics_clock_hz: float | None = None
    applications_memory_clock_hz: float | None = None
    remapped_rows: RemappedRows | None = None
    errors: tuple[str, ...] = ()

    @property
    def is_mig_slice(self) -> bool:
        """With MIG on, CUDA sees GPU instances only: whatever runs, runs on a slice."""
        return bool(self.mig_enabled) or " MIG " in f" {self.name} "

    @property
    def clocks_locked_below_max(self) -> bool | None:
        """Applications clocks (graphics or memory) set below the maximum, as Azure NHC checks
        (Azure/azurehpc-health-checks, customTests/azure_gpu_app_clocks.nhc: warn where
        ``clocks.max.* > clocks.applications.*``). None where NVML gives neither pair."""
        pairs = [
            (self.applications_graphics_clock_hz, self.max_graphics_clock_hz),
            (self.applications_memory_clock_hz, self.max_memory_clock_hz),
        ]
        known = [
            applied < ceiling
            for applied, ceiling in pairs
            if applied is not None and ceiling is not None
        ]
        return any(known) if known else None

    def whole_gpu_skip_reason(self) -> str | None:
        """Why the whole-GPU references (MAMF, HBM, PCIe, power) do not apply, or None."""
        return "MIG slice" if self.is_mig_slice else None

    def findings(self) -> list[str]:
        """One line per fault the record shows on its own (no measurement needed)."""
        lines = []
        if self.clocks_locked_below_max:
            lines.append("applications clocks are set below the maximum clocks")
        if (
            self.power_limit_watts is not None
            and self.default_power_limit_watts is not None
            and self.power_limit_watts < self.default_power_limit_watts
        ):
            lines.append(
                f"power limit {self.power_limit_watts:g} W is below the default"
                f" {self.default_power_limit_watts:g} W"
            )
        if (
            self.pcie_max_generation is not None
            and self.pcie_gpu_max_generation is not None
            and self.pcie_max_generation < self.pcie_gpu_max_generation
        ):
            lines.append(
                f"the slot limits PCIe to Gen{self.pcie_max_generation}"
                f" (the GPU supports Gen{self.pcie_gpu_max_generation})"
            )
        rows = remapped_rows_finding(None, self.remapped_rows)
        if rows:
            lines.append(rows)
        return lines

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
            "pcie_gpu_max_generation": self.pcie_gpu_max_generation,
            "pci_device_id": (
                f"{NVIDIA_PCI_VENDOR_ID:04x}:{self.pci_device_id:04x}"
                if self.pci_device_id is not None
                else None
            ),
            "torch_index": self.torch_index,
            "mig_enabled": self.mig_enabled,
            "is_mig_slice": self.is_mig_slice,
            "power_limit_watts": self.power_limit_watts,
            "default_power_limit_watts": self.default_power_limit_watts,
            "max_sm_clock_hz": self.max_sm_clock_hz,
            "max_graphics_clock_hz": self.max_graphics_clock_hz,
            "max_memory_clock_hz": self.max_memory_clock_hz,
            "applications_graphics_clock_hz": self.applications_graphics_clock_hz,
            "applications_memory_clock_hz": self.applications_memory_clock_hz,
            "clocks_locked_below_max": self.clocks_locked_below_max,
            "remapped_rows": self.remapped_rows.to_dict() if self.remapped_rows else None,
            "findings": self.findings(),
            "errors": list(self.errors),
        }


def _megahertz_to_hz(value: Any) -> float | None:
    return float(value) * 1e6 if value is not None else None


def _milliwatts_to_watts(value: Any) -> float | None:
    return float(value) / 1000 if value is not None else None


def _int_or_none(value: Any) -> int | None:
    return int(value) if value is not None else None


def _pcie_link(reader: NvmlReader, handle: Any) -> dict[str, int | None]:
    readings = {
        "generation": "nvmlDeviceGetCurrPcieLinkGeneration",
        "width": "nvmlDeviceGetCurrPcieLinkWidth",
        "max_generation": "nvmlDeviceGetMaxPcieLinkGeneration",
        "max_width": "nvmlDeviceGetMaxPcieLinkWidth",
        "gpu_max_generation": "nvmlDeviceGetGpuMaxPcieLinkGeneration",
    }
    return {
        key: _int_or_none(reader.call(f"pcie_{key}", function, handle))
        for key, function in readings.items()
    }


def pcie_link(nvml: Any, index: int) -> dict[str, int | None]:
    """Current and maximum PCIe generation and width of NVML GPU ``index``; None where
    unreadable.

    ``max_generation``/``max_width`` are ``nvmlDeviceGetMaxPcieLink*``: the most the GPU *and
    the system* allow (nvml.h: "for a generation 2 PCIe device attached to a generation 1 PCIe
    bus the max link generation this function will report is generation 1"), so the slot's
    limit; ``gpu_max_generation`` is ``nvmlDeviceGetGpuMaxPcieLinkGeneration``, the GPU's own.
    The current link drops to Gen1 at idle on many GPUs; read it while a transfer runs.
    """
    reader = NvmlReader(nvml)
    handle = reader.handle(index)
    if handle is None:
        return dict.fromkeys(
            ("generation", "width", "max_generation", "max_width", "gpu_max_generation")
        )
    return _pcie_link(reader, handle)


def mig_enabled(nvml: Any, handle: Any, reader: NvmlReader | None = None) -> bool | None:
    """Whether MIG is on (``nvmlDeviceGetMigMode`` current mode); None where the GPU has no
    MIG (``NVMLError_NotSupported`` before A100) or NVML cannot tell."""
    reader = reader or NvmlReader(nvml)
    modes = reader.call("mig_mode", "nvmlDeviceGetMigMode", handle)
    if modes is None:
        return None
    return int(modes[0]) == MIG_ENABLED


def _clock(reader: NvmlReader, function: str, handle: Any, clock_type: int, key: str) -> Any:
    return _megahertz_to_hz(reader.call(key, function, handle, clock_type))


def gpu_record(nvml: Any, index: int) -> GpuRecord:
    """Everything NVML tells about GPU ``index`` that does not change during a run."""
    reader = NvmlReader(nvml)
    handle = reader.handle(index)
    if handle is None:
        return GpuRecord(index, "", "", 0, None, errors=reader.error_list())
    name = _text(reader.call("name", "nvmlDeviceGetName", handle) or "")
    memory = reader.call("memory", "nvmlDeviceGetMemoryInfo", handle)
    pci_id = pci_device_id(nvml, handle, reader)
    link = _pcie_link(reader, handle)
    graphics = _constant(nvml, "NVML_CLOCK_GRAPHICS", NVML_CLOCK_GRAPHICS)
    memory_clock = _constant(nvml, "NVML_CLOCK_MEM", NVML_CLOCK_MEM)
    sm = _constant(nvml, "NVML_CLOCK_SM", NVML_CLOCK_SM)
    return GpuRecord(
        index=index,
        name=name,
        uuid=_text(reader.call("uuid", "nvmlDeviceGetUUID", handle) or ""),
        memory_bytes=int(memory.total) if memory is not None else 0,
        catalog_id=identify_gpu(name, pci_id) if name or pci_id is not None else None,
        pcie_generation=link["generation"],
        pcie_width=link["width"],
        pcie_max_generation=link["max_generation"],
        pcie_max_width=link["max_width"],
        pcie_gpu_max_generation=link["gpu_max_generation"],
        pci_device_id=pci_id,
        mig_enabled=mig_enabled(nvml, handle, reader),
        power_limit_watts=_milliwatts_to_watts(
            reader.call("power_limit", "nvmlDeviceGetEnforcedPowerLimit", handle)
        ),
        default_power_limit_watts=_milliwatts_to_watts(
            reader.call("default_power_limit", "nvmlDeviceGetPowerManagementDefaultLimit", handle)
        ),
        max_sm_clock_hz=_clock(reader, "nvmlDeviceGetMaxClockInfo", handle, sm, "max_sm_clock"),
        max_graphics_clock_hz=_clock(
            reader, "nvmlDeviceGetMaxClockInfo", handle, graphics, "max_graphics_clock"
        ),
        max_memory_clock_hz=_clock(
            reader, "nvmlDeviceGetMaxClockInfo", handle, memory_clock, "max_memory_clock"
        ),
        applications_graphics_clock_hz=_clock(
            reader, "nvmlDeviceGetApplicationsClock", handle, graphics, "applications_graphics"
        ),
        applications_memory_clock_hz=_clock(
            reader, "nvmlDeviceGetApplicationsClock", handle, memory_clock, "applications_memory"
        ),
        remapped_rows=_remapped_rows(reader, handle),
        errors=reader.error_list(),
    )


def nvml_gpus(nvml: Any) -> list[GpuRecord]:
    """Every GPU the driver sees (NVML order: PCI bus id), one record each; a lost GPU gives a
    record with its errors, not an exception."""
    reader = NvmlReader(nvml)
    count = reader.call("count", "nvmlDeviceGetCount")
    return [gpu_record(nvml, index) for index in range(int(count or 0))]


def torch_gpus(torch: ModuleType) -> list[GpuRecord]:
    """GPUs as PyTorch sees them, for machines without NVML (ROCm, containers without it)."""
    records = []
    for index in range(torch.cuda.device_count()):
        try:
            properties = torch.cuda.get_device_properties(index)
        except Exception as error:  # one unreadable device, not the header
            records.append(
                GpuRecord(index, "", "", 0, None, torch_index=index, errors=(str(error),))
            )
            continue
        records.append(
            GpuRecord(
                index=index,
                name=properties.name,
                uuid=str(getattr(properties, "uuid", "")),
                memory_bytes=int(properties.total_memory),
                catalog_id=identify_gpu(properties.name),
                torch_index=index,
            )
        )
    return records


def _nvml_uuids(nvml: Any) -> list[tuple[str, list[str]]]:
    """Each NVML GPU's UUID and the UUIDs of its MIG devices, normalised, in NVML order."""
    reader = NvmlReader(nvml)
    entries: list[tuple[str, list[str]]] = []
    for index in range(int(reader.call("count", "nvmlDeviceGetCount") or 0)):
        handle = reader.handle(index)
        if handle is None:
            entries.append(("", []))
            continue
        uuid = normalized_uuid(_text(reader.call("uuid", "nvmlDeviceGetUUID", handle) or ""))
        entries.append((uuid, _mig_uuids(reader, handle)))
    return entries


def _mig_uuids(reader: NvmlReader, handle: Any) -> list[str]:
    if not mig_enabled(reader.nvml, handle, reader):
        return []
    count = int(reader.call("mig_count", "nvmlDeviceGetMaxMigDeviceCount", handle) or 0)
    uuids = []
    for position in range(count):
        mig = reader.call("mig_handle", "nvmlDeviceGetMigDeviceHandleByIndex", handle, position)
        if mig is not None:
            uuids.append(normalized_uuid(_text(reader.call("mig_uuid", "nvmlDeviceGetUUID", mig))))
    return uuids


def _index_of_uuid(entries: list[tuple[str, list[str]]], uuid: str) -> int | None:
    """The NVML index whose GPU UUID, or one of whose MIG UUIDs, starts with ``uuid`` (CUDA
    accepts unique UUID prefixes in ``CUDA_VISIBLE_DEVICES``); None if none or several."""
    if not uuid:
        return None
    matches = [
        index
        for index, (gpu, migs) in enumerate(entries)
        if (gpu and gpu.startswith(uuid)) or any(mig.startswith(uuid) for mig in migs)
    ]
    return matches[0] if len(matches) == 1 else None


def _torch_uuid(torch: Any, torch_index: int) -> str:
    try:
        return normalized_uuid(str(torch.cuda.get_device_properties(torch_index).uuid))
    except Exception:  # torch < 2.0 has no uuid; a broken device has no properties
        return ""


def _visible_devices() -> list[str] | None:
    value = os.environ.get("CUDA_VISIBLE_DEVICES")
    if value is None:
        return None
    return [item.strip() for item in value.split(",") if item.strip()]


def _ordinals_follow_nvml(nvml: Any) -> bool:
    """Whether CUDA ordinals count GPUs in NVML's (PCI bus) order: with
    ``CUDA_DEVICE_ORDER=PCI_BUS_ID``, or (assumed) where all GPUs are the same model, which
    CUDA's default ``FASTEST_FIRST`` has no speed to reorder by; on mixed GPUs the two orders
    may differ (CUDA C Programming Guide, "CUDA Environment Variables")."""
    if os.environ.get("CUDA_DEVICE_ORDER") == "PCI_BUS_ID":
        return True
    reader = NvmlReader(nvml)
    names = set()
    for index in range(int(reader.call("count", "nvmlDeviceGetCount") or 0)):
        handle = reader.handle(index)
        names.add(_text(reader.call("name", "nvmlDeviceGetName", handle)) if handle else None)
    return len(names) <= 1 and None not in names


def nvml_index_for_torch_device(nvml: Any, torch: Any, torch_index: int) -> int | None:
    """The NVML index of torch's CUDA device ``torch_index``, or None where it cannot be told
    (no telemetry is better than another GPU's).

    First through the UUID: ``torch.cuda.get_device_properties(i).uuid`` (torch >= 2.0) against
    ``nvmlDeviceGetUUID`` of every GPU and of its MIG devices. Else through
    ``CUDA_VISIBLE_DEVICES`` (as Slurm sets it): a UUID entry by prefix, an ordinal entry as
    the NVML index where CUDA ordinals follow the bus order; unset, the torch index itself,
    under the same condition.
    """
    entries = _nvml_uuids(nvml)
    found = _index_of_uuid(entries, _torch_uuid(torch, torch_index))
    if found is not None:
        return found
    visible = _visible_devices()
    if visible is None:
        candidate: int | None = torch_index
    elif not 0 <= torch_index < len(visible):
        return None
    elif visible[torch_index].isdigit():
        candidate = int(visible[torch_index])
    else:
        return _index_of_uuid(entries, normalized_uuid(visible[torch_index]))
    if candidate is None or not 0 <= candidate < len(entries):
        return None
    return candidate if _ordinals_follow_nvml(nvml) else None


def nvml_indices_for_torch_devices(nvml: Any, torch: Any) -> list[int | None]:
    """:func:`nvml_index_for_torch_device` for every torch CUDA device, in torch order."""
    try:
        count = int(torch.cuda.device_count())
    except Exception:
        return []
    return [nvml_index_for_torch_device(nvml, torch, index) for index in range(count)]


def catalog_id_for_torch_device(nvml: Any, torch: Any, torch_index: int = 0) -> str | None:
    """The catalog id of torch device ``torch_index``: by its NVML PCI device id and name where
    NVML pairs with it, else by the name torch reports."""
    if nvml is not None:
        index = nvml_index_for_torch_device(nvml, torch, torch_index)
        if index is not None:
            record = gpu_record(nvml, index)
            if record.name or record.pci_device_id is not None:
                return record.catalog_id
    try:
        return identify_gpu(torch.cuda.get_device_name(torch_index))
    except Exception:
        return None


def throttle_reasons(nvml: Any, handle: Any, reader: NvmlReader | None = None) -> int | None:
    """The active clock-event (throttle) bitmask, or None; never raises.

    ``nvmlDeviceGetCurrentClocksEventReasons`` first; drivers before 535 lack it
    (``NVMLError_FunctionNotFound``: Azure NHC switches its nvidia-smi query at 535.54.03,
    customTests/azure_gpu_clock_throttling.nhc), so ``nvmlDeviceGetCurrentClocksThrottleReasons``
    next.
    """
    reader = reader or NvmlReader(nvml)
    for function in (
        "nvmlDeviceGetCurrentClocksEventReasons",
        "nvmlDeviceGetCurrentClocksThrottleReasons",
    ):
        value = reader.call("throttle_reasons", function, handle)
        if value is not None:
            reader.errors.pop("throttle_reasons", None)
            return int(value)
    return None


def telemetry_sample(nvml: Any, index: int) -> dict[str, Any]:
    """Clocks (Hz), power (W), temperature (°C) and throttle bitmask of NVML GPU ``index``,
    now; each None where unreadable, with ``errors`` naming why (only when there are some)."""
    reader = NvmlReader(nvml)
    handle = reader.handle(index)
    sample: dict[str, Any] = dict.fromkeys(
        (
            "sm_clock_hz",
            "memory_clock_hz",
            "power_watts",
            "temperature_celsius",
            "throttle_reasons",
        )
    )
    if handle is not None:
        sm = _constant(nvml, "NVML_CLOCK_SM", NVML_CLOCK_SM)
        memory = _constant(nvml, "NVML_CLOCK_MEM", NVML_CLOCK_MEM)
        sensor = _constant(nvml, "NVML_TEMPERATURE_GPU", NVML_TEMPERATURE_GPU)
        sample.update(
            sm_clock_hz=_clock(reader, "nvmlDeviceGetClockInfo", handle, sm, "sm_clock"),
            memory_clock_hz=_clock(
                reader, "nvmlDeviceGetClockInfo", handle, memory, "memory_clock"
            ),
            power_watts=_milliwatts_to_watts(
                reader.call("power", "nvmlDeviceGetPowerUsage", handle)
            ),
            temperature_celsius=reader.call(
                "temperature", "nvmlDeviceGetTemperature", handle, sensor
            ),
            throttle_reasons=throttle_reasons(nvml, handle, reader),
        )
    if reader.errors:
        sample["errors"] = list(reader.error_list())
    return sample


def uncorrectable_ecc_errors(nvml: Any, index: int) -> int | None:
    """Volatile (since driver load) uncorrectable ECC errors; None where ECC is off or the GPU
    is lost."""
    reader = NvmlReader(nvml)
    handle = reader.handle(index)
    if handle is None:
        return None
    value = reader.call(
        "ecc",
        "nvmlDeviceGetTotalEccErrors",
        handle,
        _constant(nvml, "NVML_MEMORY_ERROR_TYPE_UNCORRECTED", NVML_MEMORY_ERROR_TYPE_UNCORRECTED),
        _constant(nvml, "NVML_VOLATILE_ECC", NVML_VOLATILE_ECC),
    )
    return _int_or_none(value)


def throttle_names(bitmask: int) -> list[str]:
    return [name for bit, name in THROTTLE_REASONS.items() if bitmask & bit]


def clocks_held_by_setting(bitmask: int | None) -> bool:
    """Whether the applications-clock (or locked-clock) setting holds the clocks now."""
    return bitmask is not None and bool(bitmask & CLOCKS_SETTING_REASON)


@dataclass
class XidEvent:
    """One critical XID NVML delivered: the GPU's UUID, the XID number, and whether Azure NHC
    counts it as a fault (:data:`CRITICAL_XIDS`)."""

    uuid: str
    xid: int

    @property
    def critical(self) -> bool:
        return self.xid in CRITICAL_XIDS

    def to_dict(self) -> dict[str, Any]:
        return {"uuid": self.uuid, "xid": self.xid, "critical": self.critical}


class XidMonitor:
    """Critical XID errors raised while a part runs, through NVML events.

    ``nvmlEventSetCreate``, ``nvmlDeviceRegisterEvents(handle, nvmlEventTypeXidCriticalError,
    set)`` per GPU, then ``nvmlEventSetWait(set, timeout_ms)`` until it times out
    (``NVMLError_Timeout``). Only XIDs raised after :meth:`start` arrive: earlier ones are in the
    kernel log only (``dmesg | grep -i xid``, as Azure NHC reads it, customTests/azure_gpu_xid.nhc).
    A GPU that cannot register (not supported, lost) is listed in ``errors``; the rest are
    still watched.
    """

    def __init__(self, nvml: Any) -> None:
        self.nvml = nvml
        self.reader = NvmlReader(nvml)
        self.event_set: Any = None
        self.watched: list[int] = []
        self.uuids: dict[int, str] = {}
        self.events: list[XidEvent] = []

    @classmethod
    def start(cls, nvml: Any, indices: list[int]) -> XidMonitor:
        monitor = cls(nvml)
        monitor.event_set = monitor.reader.call("event_set", "nvmlEventSetCreate")
        if monitor.event_set is None:
            return monitor
        event_type = _constant(
            nvml, "nvmlEventTypeXidCriticalError", NVML_EVENT_TYPE_XID_CRITICAL_ERROR
        )
        for index in indices:
            handle = monitor.reader.call(f"gpu{index}", "nvmlDeviceGetHandleByIndex", index)
            if handle is None:
                continue
            monitor.reader.call(
                f"gpu{index}", "nvmlDeviceRegisterEvents", handle, event_type, monitor.event_set
            )
            if f"gpu{index}" not in monitor.reader.errors:
                monitor.watched.append(index)
                uuid = monitor.reader.call(f"uuid{index}", "nvmlDeviceGetUUID", handle)
                monitor.uuids[index] = normalized_uuid(_text(uuid or ""))
        return monitor

    def events_of(self, index: int) -> list[XidEvent]:
        """The events seen so far on NVML GPU ``index`` (matched through its UUID)."""
        uuid = self.uuids.get(index)
        if not uuid:
            return []
        return [event for event in self.events if normalized_uuid(event.uuid) == uuid]

    def unwatched_reason(self, index: int) -> str:
        """Why NVML GPU ``index`` is not watched ("" when it is): the failed NVML call."""
        if index in self.watched:
            return ""
        if "event_set" in self.reader.errors:
            return self.reader.errors["event_set"]
        return self.reader.errors.get(f"gpu{index}", "not registered for XID events")

    def drain(self, timeout_seconds: float = 0.0) -> list[XidEvent]:
        """Every XID event waiting now (the first wait up to ``timeout_seconds``), also kept in
        ``events``."""
        if self.event_set is None:
            return []
        new: list[XidEvent] = []
        timeout_ms = max(int(timeout_seconds * 1000), 0)
        timeout_code = _constant(self.nvml, "NVML_ERROR_TIMEOUT", 10)
        while True:
            try:
                data = self.nvml.nvmlEventSetWait(self.event_set, timeout_ms)
            except Exception as error:
                if getattr(error, "value", None) != timeout_code:
                    self.reader.errors["wait"] = f"nvmlEventSetWait: {_error_text(error)}"
                break
            uuid = _text(self.reader.call("event_uuid", "nvmlDeviceGetUUID", data.device) or "")
            new.append(XidEvent(uuid=uuid, xid=int(data.eventData)))
            timeout_ms = 0
        self.events.extend(new)
        return new

    def close(self) -> None:
        if self.event_set is not None:
            self.reader.call("event_set_free", "nvmlEventSetFree", self.event_set)
            self.event_set = None

    def summary(self) -> dict[str, Any]:
        return {
            "watched": list(self.watched),
            "events": [event.to_dict() for event in self.events],
            "critical": sorted({event.xid for event in self.events if event.critical}),
            "errors": list(self.reader.error_list()),
            "note": "XIDs before the watch started are in the kernel log only (dmesg)",
        }


def _paired_with_torch(nvml: Any, torch: Any, records: list[GpuRecord]) -> list[GpuRecord]:
    """``records`` with ``torch_index`` set where a torch device maps to that NVML GPU."""
    pairs = {
        nvml_index: torch_index
        for torch_index, nvml_index in enumerate(nvml_indices_for_torch_devices(nvml, torch))
        if nvml_index is not None
    }
    return [replace(record, torch_index=pairs.get(record.index)) for record in records]


def _driver_version(nvml: Any) -> str | None:
    value = NvmlReader(nvml).call("driver", "nvmlSystemGetDriverVersion")
    return _text(value) if value is not None else None


def provenance(device: str, command: str, torch: ModuleType | None) -> dict[str, Any]:
    """The run header: when, where, on what, with which software, by which command."""
    nvml = load_nvml() if device == "cuda" else None
    gpus: list[GpuRecord] = []
    driver = None
    if nvml is not None:
        gpus = nvml_gpus(nvml)
        if torch is not None:
            gpus = _paired_with_torch(nvml, torch, gpus)
        driver = _driver_version(nvml)
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


NVML_AFFINITY_SCOPE_NODE = 0
"""``NVML_AFFINITY_SCOPE_NODE`` (nvml.h): the CPUs of the GPU's own NUMA node."""
NVML_AFFINITY_BITS = 64
"""pynvml returns the CPU set as an array of 64-bit ``c_ulonglong`` bitmasks."""
SYSFS_PCI_DEVICES = Path("/sys/bus/pci/devices")


def cpus_from_bitmasks(masks: Any) -> frozenset[int]:
    """CPU numbers set in NVML's affinity array: bit ``b`` of element ``e`` is CPU
    ``64 e + b`` (NVML API, "CPU and Memory Affinity": CPUs 0, 1, 32, 33 with 32-bit words give
    ``[0x3, 0x3]``; pynvml's words are 64-bit)."""
    return frozenset(
        NVML_AFFINITY_BITS * word + bit
        for word, mask in enumerate(masks)
        for bit in range(NVML_AFFINITY_BITS)
        if int(mask) >> bit & 1
    )


def parse_cpulist(text: str) -> frozenset[int]:
    """A Linux cpulist ("0-3,8,10-11", as sysfs ``local_cpulist`` writes it) as CPU numbers."""
    cpus: set[int] = set()
    for item in text.strip().split(","):
        if not item.strip():
            continue
        first, _, last = item.strip().partition("-")
        cpus.update(range(int(first), int(last or first) + 1))
    return frozenset(cpus)


def sysfs_bus_id(nvml_bus_id: str) -> str:
    """NVML's PCI bus id ("00000000:18:00.0", 8-digit domain) as sysfs names the device
    ("0000:18:00.0", 4-digit domain, lower case)."""
    domain, _, rest = nvml_bus_id.strip().partition(":")
    return f"{int(domain, 16):04x}:{rest.lower()}"


def _affinity_words() -> int:
    return max(1, -(-(os.cpu_count() or 1) // NVML_AFFINITY_BITS))


def gpu_local_cpus(nvml: Any, index: int) -> tuple[frozenset[int] | None, str]:
    """The CPUs local to NVML GPU ``index`` and where they came from, or None and why not.

    In this order: ``nvmlDeviceGetCpuAffinityWithinScope(handle, words, NODE)``,
    ``nvmlDeviceGetCpuAffinity(handle, words)`` (older drivers), then sysfs
    ``/sys/bus/pci/devices/<bus id>/local_cpulist`` for the bus id of ``nvmlDeviceGetPciInfo``;
    ``words`` = ceil(CPUs / 64), as NVIDIA/gpu_affinity sizes it.
    """
    reader = NvmlReader(nvml)
    handle = reader.handle(index)
    if handle is None:
        return None, "; ".join(reader.error_list())
    words = _affinity_words()
    scope = _constant(nvml, "NVML_AFFINITY_SCOPE_NODE", NVML_AFFINITY_SCOPE_NODE)
    for source, arguments in (
        ("nvmlDeviceGetCpuAffinityWithinScope", (handle, words, scope)),
        ("nvmlDeviceGetCpuAffinity", (handle, words)),
    ):
        masks = reader.call("cpu_affinity", source, *arguments)
        cpus = cpus_from_bitmasks(masks) if masks is not None else frozenset()
        if cpus:
            return cpus, source
    info = reader.call("pci_info", "nvmlDeviceGetPciInfo", handle)
    bus_id = _text(getattr(info, "busId", "") or "")
    if bus_id:
        path = SYSFS_PCI_DEVICES / sysfs_bus_id(bus_id) / "local_cpulist"
        try:
            cpus = parse_cpulist(path.read_text())
        except (OSError, ValueError) as error:
            reader.errors["sysfs"] = f"{path}: {type(error).__name__}"
        else:
            if cpus:
                return cpus, str(path)
    return None, "; ".join(reader.error_list()) or "no local CPU list"


@contextlib.contextmanager
def bound_to_gpu_cpus(nvml: Any, torch: Any, torch_index: int) -> Iterator[dict[str, Any]]:
    """Run the ``with`` body on the CPUs local to torch device ``torch_index``, then restore the
    thread's previous affinity; yields ``{"numa_cpus": [...], "numa_binding": "bound: ..."}``
    or ``{"numa_cpus": None, "numa_binding": "not bound: <reason>"}``, never raises.

    ``os.sched_setaffinity(0, cpus)`` binds the calling thread (Linux); ``cpus`` is the GPU's
    local set within the CPUs this process may use (taskset, a container's cpuset), as
    NVIDIA/gpu_affinity does. Host buffers allocated inside are first touched on the local
    NUMA node. The collectives part binds nothing: NCCL places its own threads.
    """
    cpus, why = _cpus_to_bind(nvml, torch, torch_index)
    if cpus is None:
        yield {"numa_cpus": None, "numa_binding": f"not bound: {why}"}
        return
    previous = os.sched_getaffinity(0)
    try:
        os.sched_setaffinity(0, cpus)
    except OSError as error:
        yield {"numa_cpus": None, "numa_binding": f"not bound: sched_setaffinity: {error}"}
        return
    try:
        yield {"numa_cpus": sorted(cpus), "numa_binding": f"bound: {why}"}
    finally:
        os.sched_setaffinity(0, previous)


def _cpus_to_bind(nvml: Any, torch: Any, torch_index: int) -> tuple[frozenset[int] | None, str]:
    if not hasattr(os, "sched_setaffinity"):
        return None, f"{platform.system()} has no sched_setaffinity (Linux only)"
    if nvml is None:
        return None, "no NVML: the GPU's local CPUs are unknown"
    index = nvml_index_for_torch_device(nvml, torch, torch_index)
    if index is None:
        return None, f"the NVML index of cuda:{torch_index} is unknown (UUID not matched)"
    local, source = gpu_local_cpus(nvml, index)
    if local is None:
        return None, source
    allowed = frozenset(os.sched_getaffinity(0))
    usable = local & allowed
    if not usable:
        return None, f"none of the GPU's local CPUs ({_cpulist(local)}) is allowed to this process"
    return usable, source


def _cpulist(cpus: frozenset[int]) -> str:
    """CPU numbers in Linux cpulist form: {0, 1, 2, 5} -> "0-2,5"."""
    runs: list[list[int]] = []
    for cpu in sorted(cpus):
        if runs and cpu == runs[-1][-1] + 1:
            runs[-1].append(cpu)
        else:
            runs.append([cpu])
    return ",".join(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]) for run in runs)
