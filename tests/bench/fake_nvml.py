"""A fake ``pynvml`` (nvidia-ml-py) for the bench tests: the calls environment.py makes, on
GPUs described in Python, with the driver's failure modes.

Use::

    nvml = FakeNvml([FakeGpu.h100_sxm(), FakeGpu.h100_sxm(index=1)], mode="ok")
    monkeypatch.setitem(sys.modules, "pynvml", nvml)   # load_nvml() now returns it

Modes: ``"ok"``; ``"old_driver"`` (a driver before 535: ``nvmlDeviceGetCurrentClocksEventReasons``
raises ``NVMLError_FunctionNotFound``, ``nvmlDeviceGetCurrentClocksThrottleReasons`` works);
``"lost_gpu"`` (every call on the handle of GPU ``lost_index`` raises ``NVMLError_GpuIsLost``);
``"absent"`` (``nvmlInit`` raises ``NVMLError_LibraryNotFound``, as without a driver).
``fail={"nvmlDeviceGetRemappedRows": FakeNvml.NVMLError_NotSupported}`` makes one call raise on
every GPU. ``FakeNvml.for_node(node, mode)`` builds one for tests/bench/fake_cuda.py's ``FakeNode``.
Return values and units follow nvidia-ml-py's pynvml.py: MHz, mW, bytes, ``[current, pending]``
MIG modes, ``(correctable, uncorrectable, pending, failure)`` remapped rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, ClassVar

NVML_ERROR_NOT_SUPPORTED = 3
NVML_ERROR_TIMEOUT = 10
NVML_ERROR_LIBRARY_NOT_FOUND = 12
NVML_ERROR_FUNCTION_NOT_FOUND = 13
NVML_ERROR_GPU_IS_LOST = 15


class NVMLError(Exception):
    """As pynvml's: ``value`` is the nvmlReturn_t code."""

    code = 999
    message = "Unknown Error"

    def __init__(self, value: int | None = None) -> None:
        self.value = self.code if value is None else value
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message


class NVMLError_NotSupported(NVMLError):
    code, message = NVML_ERROR_NOT_SUPPORTED, "Not Supported"


class NVMLError_Timeout(NVMLError):
    code, message = NVML_ERROR_TIMEOUT, "Timeout"


class NVMLError_LibraryNotFound(NVMLError):
    code, message = NVML_ERROR_LIBRARY_NOT_FOUND, "NVML Shared Library Not Found"


class NVMLError_FunctionNotFound(NVMLError):
    code, message = NVML_ERROR_FUNCTION_NOT_FOUND, "Function Not Found"


class NVMLError_GpuIsLost(NVMLError):
    code, message = NVML_ERROR_GPU_IS_LOST, "GPU is lost"


GIB = 2**30
"""The fake GPUs' memory sizes are round GiB figures, not any board's exact total."""


@dataclass
class FakeGpu:
    """One fake GPU. Clocks in MHz, power in mW, as NVML reports them. ``mig``: True/False for
    MIG on/off, None for a GPU without MIG (``nvmlDeviceGetMigMode`` raises NotSupported).
    ``xids``: XID numbers delivered to a registered event set, one per wait. ``local_cpus``:
    the CPUs ``nvmlDeviceGetCpuAffinity*`` reports (None: those calls raise NotSupported)."""

    index: int = 0
    name: str = "NVIDIA H100 80GB HBM3"
    uuid: str = ""
    pci_device_id: int | None = 0x2330
    memory_bytes: int = 80 * GIB
    pcie_current: tuple[int, int] = (5, 16)
    pcie_max: tuple[int, int] = (5, 16)
    pcie_gpu_max_generation: int = 5
    mig: bool | None = False
    mig_uuids: list[str] = field(default_factory=list)
    max_clocks_mhz: dict[str, int] = field(
        default_factory=lambda: {"graphics": 1980, "sm": 1980, "memory": 2619}
    )
    applications_clocks_mhz: dict[str, int] = field(
        default_factory=lambda: {"graphics": 1980, "memory": 2619}
    )
    current_clocks_mhz: dict[str, int] = field(
        default_factory=lambda: {"graphics": 1980, "sm": 1980, "memory": 2619}
    )
    power_limit_mw: int = 700_000
    default_power_limit_mw: int = 700_000
    power_usage_mw: int = 650_000
    temperature_c: int = 60
    throttle_reasons: int = 0
    uncorrectable_ecc: int | None = 0
    remapped_rows: tuple[int, int, int, int] | None = (0, 0, 0, 0)
    xids: list[int] = field(default_factory=list)
    local_cpus: list[int] | None = None

    def __post_init__(self) -> None:
        if not self.uuid:
            self.uuid = f"GPU-00000000-0000-4000-8000-{self.index + 1:012d}"
        if self.mig and not self.mig_uuids:
            self.mig_uuids = [f"MIG-00000000-0000-4000-9000-{self.index + 1:012d}"]

    @classmethod
    def h100_sxm(cls, index: int = 0, **changes: Any) -> FakeGpu:
        return cls(index=index, **changes)

    @classmethod
    def h200_sxm(cls, index: int = 0, **changes: Any) -> FakeGpu:
        defaults: dict[str, Any] = {
            "name": "NVIDIA H200",
            "pci_device_id": 0x2335,
            "memory_bytes": 141 * GIB,
            "max_clocks_mhz": {"graphics": 1980, "sm": 1980, "memory": 3201},
            "applications_clocks_mhz": {"graphics": 1980, "memory": 3201},
        }
        return cls(index=index, **{**defaults, **changes})

    @classmethod
    def h100_nvl(cls, index: int = 0, **changes: Any) -> FakeGpu:
        defaults: dict[str, Any] = {
            "name": "NVIDIA H100 NVL",
            "pci_device_id": 0x2321,
            "memory_bytes": 94 * GIB,
            "power_limit_mw": 400_000,
            "default_power_limit_mw": 400_000,
        }
        return cls(index=index, **{**defaults, **changes})

    @classmethod
    def a100_sxm(cls, index: int = 0, **changes: Any) -> FakeGpu:
        defaults: dict[str, Any] = {
            "name": "NVIDIA A100-SXM4-80GB",
            "pci_device_id": 0x20B2,
            "pcie_current": (4, 16),
            "pcie_max": (4, 16),
            "pcie_gpu_max_generation": 4,
            "max_clocks_mhz": {"graphics": 1410, "sm": 1410, "memory": 1593},
            "applications_clocks_mhz": {"graphics": 1410, "memory": 1593},
            "power_limit_mw": 400_000,
            "default_power_limit_mw": 400_000,
        }
        return cls(index=index, **{**defaults, **changes})


@dataclass(frozen=True)
class FakeHandle:
    index: int
    mig_position: int | None = None


class FakeEventSet:
    def __init__(self) -> None:
        self.handles: list[FakeHandle] = []


class FakeNvml:
    """A stand-in for the ``pynvml`` module: ``FakeNvml(gpus, mode="ok", lost_index=0, fail=None)``.

    ``gpus`` defaults to one H100 SXM5. ``calls`` lists every function called, in order.
    """

    NVMLError = NVMLError
    NVMLError_NotSupported = NVMLError_NotSupported
    NVMLError_Timeout = NVMLError_Timeout
    NVMLError_LibraryNotFound = NVMLError_LibraryNotFound
    NVMLError_FunctionNotFound = NVMLError_FunctionNotFound
    NVMLError_GpuIsLost = NVMLError_GpuIsLost
    NVML_ERROR_TIMEOUT = NVML_ERROR_TIMEOUT
    NVML_ERROR_GPU_IS_LOST = NVML_ERROR_GPU_IS_LOST
    NVML_CLOCK_GRAPHICS = 0
    NVML_CLOCK_SM = 1
    NVML_CLOCK_MEM = 2
    NVML_TEMPERATURE_GPU = 0
    NVML_VOLATILE_ECC = 0
    NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1
    NVML_DEVICE_MIG_DISABLE = 0
    NVML_DEVICE_MIG_ENABLE = 1
    nvmlEventTypeXidCriticalError = 0x8
    NVML_AFFINITY_SCOPE_NODE = 0

    MODES = ("ok", "old_driver", "lost_gpu", "absent")
    _CLOCK_NAMES: ClassVar[dict[int, str]] = {0: "graphics", 1: "sm", 2: "memory"}

    def __init__(
        self,
        gpus: list[FakeGpu] | None = None,
        mode: str = "ok",
        lost_index: int = 0,
        fail: dict[str, type[NVMLError]] | None = None,
        driver_version: str = "550.54.15",
    ) -> None:
        if mode not in self.MODES:
            raise ValueError(f"mode: {mode!r} is not one of {', '.join(self.MODES)}")
        self.gpus = gpus if gpus is not None else [FakeGpu.h100_sxm()]
        self.mode = mode
        self.lost_index = lost_index
        self.fail = dict(fail or {})
        self.driver_version = driver_version
        self.calls: list[str] = []
        self.initialised = False

    @classmethod
    def for_node(cls, node: Any, mode: str = "ok", **options: Any) -> FakeNvml:
        """The GPUs of a fake_cuda ``FakeNode``: same names, memory and UUIDs (``GPU-`` + the
        torch UUID; for a MIG profile the slice's ``MIG-`` UUID under a parent GPU)."""
        gpus = []
        for gpu in node.gpus:
            profile = gpu.profile
            torch_uuid = str(gpu.uuid)
            mig = bool(getattr(profile, "mig", False))
            bare = torch_uuid.removeprefix("MIG-")
            gpus.append(
                FakeGpu(
                    index=gpu.index,
                    name=profile.name.split(" MIG ")[0],
                    uuid=f"GPU-00000000-0000-4000-7000-{gpu.index + 1:012d}"
                    if mig
                    else "GPU-" + bare,
                    pci_device_id=_PCI_IDS_BY_NAME.get(profile.name.split(" MIG ")[0]),
                    memory_bytes=int(profile.total_memory),
                    mig=mig,
                    mig_uuids=["MIG-" + bare] if mig else [],
                    pcie_current=tuple(getattr(profile, "pcie_link", (5, 16))),
                    pcie_max=tuple(getattr(profile, "pcie_link", (5, 16))),
                    pcie_gpu_max_generation=getattr(profile, "pcie_link", (5, 16))[0],
                )
            )
        return cls(gpus, mode=mode, **options)

    def _record(self, name: str) -> None:
        self.calls.append(name)
        if name in self.fail:
            raise self.fail[name]()

    def _gpu(self, handle: FakeHandle, function: str) -> FakeGpu:
        self._record(function)
        if not self.initialised:
            raise NVMLError(1)
        if self.mode == "lost_gpu" and handle.index == self.lost_index:
            raise NVMLError_GpuIsLost()
        return self.gpus[handle.index]

    def nvmlInit(self) -> None:
        self._record("nvmlInit")
        if self.mode == "absent":
            raise NVMLError_LibraryNotFound()
        self.initialised = True

    def nvmlShutdown(self) -> None:
        self._record("nvmlShutdown")
        self.initialised = False

    def nvmlSystemGetDriverVersion(self) -> str:
        self._record("nvmlSystemGetDriverVersion")
        return self.driver_version

    def nvmlDeviceGetCount(self) -> int:
        self._record("nvmlDeviceGetCount")
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> FakeHandle:
        self._record("nvmlDeviceGetHandleByIndex")
        if not 0 <= index < len(self.gpus):
            raise NVMLError(2)
        return FakeHandle(index)

    def nvmlDeviceGetName(self, handle: FakeHandle) -> str:
        return self._gpu(handle, "nvmlDeviceGetName").name

    def nvmlDeviceGetUUID(self, handle: FakeHandle) -> str:
        gpu = self._gpu(handle, "nvmlDeviceGetUUID")
        if handle.mig_position is not None:
            return gpu.mig_uuids[handle.mig_position]
        return gpu.uuid

    def nvmlDeviceGetPciInfo(self, handle: FakeHandle) -> SimpleNamespace:
        gpu = self._gpu(handle, "nvmlDeviceGetPciInfo")
        device = gpu.pci_device_id if gpu.pci_device_id is not None else 0
        return SimpleNamespace(
            pciDeviceId=device << 16 | 0x10DE,
            busId=f"00000000:{0x18 + handle.index:02X}:00.0",
        )

    def nvmlDeviceGetMemoryInfo(self, handle: FakeHandle) -> SimpleNamespace:
        gpu = self._gpu(handle, "nvmlDeviceGetMemoryInfo")
        return SimpleNamespace(total=gpu.memory_bytes, free=gpu.memory_bytes, used=0)

    def nvmlDeviceGetClockInfo(self, handle: FakeHandle, clock: int) -> int:
        gpu = self._gpu(handle, "nvmlDeviceGetClockInfo")
        return gpu.current_clocks_mhz[self._CLOCK_NAMES[clock]]

    def nvmlDeviceGetMaxClockInfo(self, handle: FakeHandle, clock: int) -> int:
        gpu = self._gpu(handle, "nvmlDeviceGetMaxClockInfo")
        return gpu.max_clocks_mhz[self._CLOCK_NAMES[clock]]

    def nvmlDeviceGetApplicationsClock(self, handle: FakeHandle, clock: int) -> int:
        gpu = self._gpu(handle, "nvmlDeviceGetApplicationsClock")
        name = self._CLOCK_NAMES[clock]
        if name not in gpu.applications_clocks_mhz:
            raise NVMLError_NotSupported()
        return gpu.applications_clocks_mhz[name]

    def nvmlDeviceGetPowerUsage(self, handle: FakeHandle) -> int:
        return self._gpu(handle, "nvmlDeviceGetPowerUsage").power_usage_mw

    def nvmlDeviceGetEnforcedPowerLimit(self, handle: FakeHandle) -> int:
        return self._gpu(handle, "nvmlDeviceGetEnforcedPowerLimit").power_limit_mw

    def nvmlDeviceGetPowerManagementDefaultLimit(self, handle: FakeHandle) -> int:
        return self._gpu(handle, "nvmlDeviceGetPowerManagementDefaultLimit").default_power_limit_mw

    def nvmlDeviceGetTemperature(self, handle: FakeHandle, sensor: int) -> int:
        return self._gpu(handle, "nvmlDeviceGetTemperature").temperature_c

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle: FakeHandle) -> int:
        gpu = self._gpu(handle, "nvmlDeviceGetCurrentClocksEventReasons")
        if self.mode == "old_driver":
            raise NVMLError_FunctionNotFound()
        return gpu.throttle_reasons

    def nvmlDeviceGetCurrentClocksThrottleReasons(self, handle: FakeHandle) -> int:
        return self._gpu(handle, "nvmlDeviceGetCurrentClocksThrottleReasons").throttle_reasons

    def nvmlDeviceGetTotalEccErrors(self, handle: FakeHandle, error_type: int, counter: int) -> int:
        gpu = self._gpu(handle, "nvmlDeviceGetTotalEccErrors")
        if gpu.uncorrectable_ecc is None:
            raise NVMLError_NotSupported()
        return gpu.uncorrectable_ecc

    def nvmlDeviceGetCurrPcieLinkGeneration(self, handle: FakeHandle) -> int:
        return self._gpu(handle, "nvmlDeviceGetCurrPcieLinkGeneration").pcie_current[0]

    def nvmlDeviceGetCurrPcieLinkWidth(self, handle: FakeHandle) -> int:
        return self._gpu(handle, "nvmlDeviceGetCurrPcieLinkWidth").pcie_current[1]

    def nvmlDeviceGetMaxPcieLinkGeneration(self, handle: FakeHandle) -> int:
        return self._gpu(handle, "nvmlDeviceGetMaxPcieLinkGeneration").pcie_max[0]

    def nvmlDeviceGetMaxPcieLinkWidth(self, handle: FakeHandle) -> int:
        return self._gpu(handle, "nvmlDeviceGetMaxPcieLinkWidth").pcie_max[1]

    def nvmlDeviceGetGpuMaxPcieLinkGeneration(self, handle: FakeHandle) -> int:
        return self._gpu(handle, "nvmlDeviceGetGpuMaxPcieLinkGeneration").pcie_gpu_max_generation

    def nvmlDeviceGetMigMode(self, handle: FakeHandle) -> list[int]:
        gpu = self._gpu(handle, "nvmlDeviceGetMigMode")
        if gpu.mig is None:
            raise NVMLError_NotSupported()
        mode = int(gpu.mig)
        return [mode, mode]

    def nvmlDeviceGetMaxMigDeviceCount(self, handle: FakeHandle) -> int:
        gpu = self._gpu(handle, "nvmlDeviceGetMaxMigDeviceCount")
        return 7 if gpu.mig is not None else 0

    def nvmlDeviceGetMigDeviceHandleByIndex(self, handle: FakeHandle, position: int) -> FakeHandle:
        gpu = self._gpu(handle, "nvmlDeviceGetMigDeviceHandleByIndex")
        if not gpu.mig or position >= len(gpu.mig_uuids):
            raise NVMLError(6)
        return FakeHandle(handle.index, position)

    def nvmlDeviceGetRemappedRows(self, handle: FakeHandle) -> tuple[int, int, int, int]:
        gpu = self._gpu(handle, "nvmlDeviceGetRemappedRows")
        if gpu.remapped_rows is None:
            raise NVMLError_NotSupported()
        return gpu.remapped_rows

    def _affinity(self, gpu: FakeGpu, words: int) -> list[int]:
        """``local_cpus`` as pynvml returns them: ``words`` 64-bit masks, CPU 64 e + b in bit b
        of word e."""
        if gpu.local_cpus is None:
            raise NVMLError_NotSupported()
        masks = [0] * words
        for cpu in gpu.local_cpus:
            if cpu < 64 * words:
                masks[cpu // 64] |= 1 << (cpu % 64)
        return masks

    def nvmlDeviceGetCpuAffinityWithinScope(
        self, handle: FakeHandle, words: int, scope: int
    ) -> list[int]:
        return self._affinity(self._gpu(handle, "nvmlDeviceGetCpuAffinityWithinScope"), words)

    def nvmlDeviceGetCpuAffinity(self, handle: FakeHandle, words: int) -> list[int]:
        return self._affinity(self._gpu(handle, "nvmlDeviceGetCpuAffinity"), words)

    def nvmlEventSetCreate(self) -> FakeEventSet:
        self._record("nvmlEventSetCreate")
        return FakeEventSet()

    def nvmlDeviceRegisterEvents(
        self, handle: FakeHandle, event_types: int, event_set: FakeEventSet
    ) -> None:
        self._gpu(handle, "nvmlDeviceRegisterEvents")
        event_set.handles.append(handle)

    def nvmlEventSetWait(self, event_set: FakeEventSet, timeout_ms: int) -> SimpleNamespace:
        self._record("nvmlEventSetWait")
        for handle in event_set.handles:
            gpu = self.gpus[handle.index]
            if gpu.xids:
                return SimpleNamespace(
                    device=handle,
                    eventType=self.nvmlEventTypeXidCriticalError,
                    eventData=gpu.xids.pop(0),
                )
        raise NVMLError_Timeout()

    def nvmlEventSetFree(self, event_set: FakeEventSet) -> None:
        self._record("nvmlEventSetFree")


_PCI_IDS_BY_NAME = {
    "NVIDIA H100 80GB HBM3": 0x2330,
    "NVIDIA H200": 0x2335,
    "NVIDIA A100-SXM4-80GB": 0x20B2,
    "NVIDIA H100 NVL": 0x2321,
}
"""PCI device ids of the fake profiles' names (pci.ids, as in environment.PCI_DEVICE_IDS)."""
