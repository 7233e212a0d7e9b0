"""A fake ``torch.cuda`` on the CPU, so that every GPU code path of ``gpuplan bench`` runs in CI.

``FakeNode(profiles).torch`` is a stand-in for the ``torch`` module: every attribute is the real
CPU torch's except ``cuda`` (a fake namespace: devices, properties, events, streams, allocator
statistics) and ``Generator``. A ``TorchFunctionMode`` (``FakeCudaMode``) intercepts every torch
call: ``device="cuda:N"`` becomes the CPU, ``pin_memory=True`` becomes a tag, and the tensor is
tagged with its fake device. Tensors above ``VIRTUAL_ABOVE_BYTES`` are *virtual*: a zero expanded
to the shape (no memory), and ops touching them run on the ``meta`` device (shapes only), so a
2 GiB buffer or an 8192^3 matmul costs microseconds.

Time is synthetic. Each op on a fake device costs device time from the device's ``GpuProfile``:
matmuls ``2 x output elements x k / FLOP/s`` (per dtype; a dtype missing from the profile raises,
as ``_scaled_mm`` does on an A100), copies between host and device ``bytes / PCIe rate`` (pinned
or pageable, by the host tensor's tag), everything else ``bytes touched / HBM rate`` (a copy on the
device touches each byte twice, so copy traffic comes out at the HBM rate). CUDA events stamp the
device's accumulated work, so ``elapsed_time`` is exactly the synthetic time of the ops between
them. The Python clock that the bench modules see (``time.monotonic``/``perf_counter``, patched by
``fake_gpus``) jumps forward at ``synchronize`` to when the device would finish: a discrete-event
model of asynchronous devices that run concurrently, so wall-clock measurements (the burn) read the
synthetic rates too.

Failure injection: ``GpuProfile.fail_after_ops`` makes a device raise a CUDA error after that many
ops; ``oom_above_bytes`` makes a single allocation above that size raise ``OutOfMemoryError``
(allocations beyond ``total_memory`` always do).
"""

from __future__ import annotations

import contextlib
import importlib
import math
import sys
import threading
import time as real_time
import types
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_flatten, tree_map

VIRTUAL_ABOVE_BYTES = 2**20
"""Tensors larger than this hold no memory: their contents are never read by a verdict."""

MATMUL_FUNCTIONS = {
    "mm",
    "matmul",
    "__matmul__",
    "__rmatmul__",
    "bmm",
    "addmm",
    "baddbmm",
    "_scaled_mm",
    "linear",
}
FACTORY_FUNCTIONS = {
    "empty",
    "empty_strided",
    "empty_like",
    "zeros",
    "zeros_like",
    "ones",
    "ones_like",
    "full",
    "full_like",
    "rand",
    "rand_like",
    "randn",
    "randn_like",
    "randint",
    "randint_like",
    "randperm",
    "arange",
    "tensor",
    "normal",
}
VIEW_FUNCTIONS = {
    "t",
    "T",
    "mT",
    "view",
    "view_as",
    "reshape",
    "transpose",
    "permute",
    "expand",
    "expand_as",
    "narrow",
    "chunk",
    "split",
    "unbind",
    "select",
    "squeeze",
    "unsqueeze",
    "flatten",
    "unflatten",
    "detach",
    "__getitem__",
    "as_strided",
    "contiguous",
    "requires_grad_",
}
READ_FUNCTIONS = {"sum", "mean", "amax", "amin", "max", "min", "norm", "dot", "vdot", "prod"}
"""Reductions: they read their input at the profile's HBM read rate."""
METADATA_FUNCTIONS = {
    "size",
    "dim",
    "ndimension",
    "stride",
    "numel",
    "nelement",
    "element_size",
    "is_contiguous",
    "is_floating_point",
    "is_complex",
    "data_ptr",
    "__len__",
    "__repr__",
    "__format__",
    "untyped_storage",
    "storage_offset",
    "get_device",
}
PYTHON_RESULTS_OF_VIRTUAL: dict[str, Any] = {
    "allclose": True,
    "equal": True,
    "item": 0.0,
    "__float__": 0.0,
    "__int__": 0,
    "__bool__": False,
}
"""What ops that leave tensors return on virtual (all-zero) inputs."""

CUDA_ERROR = "CUDA error: an illegal memory access was encountered (fake device {index})"


class FakeCudaError(RuntimeError):
    """What a failing device raises, worded as PyTorch words a CUDA error."""


@dataclass(frozen=True)
class GpuProfile:
    """What one fake GPU reports and how fast it runs, in bytes, FLOP/s and bytes/s."""

    name: str
    total_memory: int
    capability: tuple[int, int]
    multi_processor_count: int
    matmul_flops: Mapping[str, float]
    hbm_bytes_per_second: float
    hbm_read_bytes_per_second: float
    host_to_device: Mapping[str, float]
    device_to_host: Mapping[str, float]
    source: str
    mig: bool = False
    pcie_link: tuple[int, int] = (5, 16)
    """PCIe generation and width, for a fake NVML of the same GPU."""
    speed_change: tuple[float, float] | None = None
    """``(after, factor)``: once the device has done ``after`` seconds of work, every op takes
    ``1 / factor`` as long (a thermal settle, a clock drop)."""
    fail_after_ops: int | None = None
    oom_above_bytes: int | None = None
    allocation_limit_bytes: int | None = None
    """Allocations beyond this total raise ``OutOfMemoryError`` while ``mem_get_info`` still
    reports ``total_memory`` free (memory that another process or fragmentation holds)."""

    def scaled(self, **factors: float) -> GpuProfile:
        """A degraded copy: ``matmul=0.6`` scales every matmul rate, ``hbm=``, ``pcie=`` too."""
        matmul = factors.get("matmul", 1.0)
        pcie = factors.get("pcie", 1.0)
        return replace(
            self,
            matmul_flops={k: v * matmul for k, v in self.matmul_flops.items()},
            hbm_bytes_per_second=self.hbm_bytes_per_second * factors.get("hbm", 1.0),
            hbm_read_bytes_per_second=self.hbm_read_bytes_per_second * factors.get("hbm", 1.0),
            host_to_device={k: v * pcie for k, v in self.host_to_device.items()},
            device_to_host={k: v * pcie for k, v in self.device_to_host.items()},
        )


@dataclass
class FakeGpu:
    """The state of one fake device: its work clock, its queue end and its allocator."""

    index: int
    profile: GpuProfile
    work_seconds: float = 0.0
    busy_until: float = 0.0
    operations: int = 0
    allocated: int = 0
    peak: int = 0

    @property
    def uuid(self) -> str:
        """As ``str(torch.cuda.get_device_properties(i).uuid)`` prints it (no ``GPU-`` prefix)."""
        prefix = "MIG-" if self.profile.mig else ""
        return prefix + f"00000000-0000-4000-8000-{self.index + 1:012d}"


class FakeClock:
    """The Python clock the bench modules read: real time plus this thread's waits.

    Each thread has its own offset, which ``synchronize`` moves forward to the end of the
    device's queue; threads that drive different GPUs (the burn) then wait for their own GPU
    only, as they would in parallel. A new thread starts at the furthest offset yet.
    """

    REAL_TIME_SHARE = 0.01
    """How much of the real time passing counts: little, so that the CPU's cost of running the
    fake (slow next to a GPU) does not show in wall-clock rates, yet a loop that reads the clock
    without waiting for the device still ends."""

    def __init__(self) -> None:
        self.local = threading.local()
        self.furthest = 0.0
        self.origin = real_time.monotonic()
        self.origin_counter = real_time.perf_counter()

    @property
    def offset(self) -> float:
        if not hasattr(self.local, "offset"):
            self.local.offset = self.furthest
        return float(self.local.offset)

    def wait_until(self, moment: float) -> None:
        now = self.monotonic()
        if moment > now:
            self.local.offset = self.offset + moment - now
            self.furthest = max(self.furthest, self.local.offset)

    def monotonic(self) -> float:
        elapsed = real_time.monotonic() - self.origin
        return self.origin + self.REAL_TIME_SHARE * elapsed + self.offset

    def perf_counter(self) -> float:
        elapsed = real_time.perf_counter() - self.origin_counter
        return self.origin_counter + self.REAL_TIME_SHARE * elapsed + self.offset

    def __getattr__(self, name: str) -> Any:
        return getattr(real_time, name)


class FakeEvent:
    """``torch.cuda.Event``: stamps the device's accumulated work when recorded."""

    def __init__(self, node: FakeNode, enable_timing: bool = False, **_: Any) -> None:
        self.node = node
        self.enable_timing = enable_timing
        self.device: int | None = None
        self.stamp: float | None = None

    def record(self, stream: Any = None) -> None:
        index = stream.device_index if stream is not None else self.node.current_device()
        gpu = self.node.gpu(index)
        with self.node.lock:
            self.device, self.stamp = index, gpu.work_seconds

    def synchronize(self) -> None:
        if self.device is not None:
            self.node.synchronize(self.device)

    def query(self) -> bool:
        return True

    def wait(self, stream: Any = None) -> None:
        return None

    def elapsed_time(self, end: FakeEvent) -> float:
        """Milliseconds of synthetic device work between this event and ``end``."""
        if not (self.enable_timing and end.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if self.stamp is None or end.stamp is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return (end.stamp - self.stamp) * 1000


class FakeStream:
    """``torch.cuda.Stream``: one queue per device is all the fake models."""

    def __init__(self, node: FakeNode, device: Any = None, **_: Any) -> None:
        self.node = node
        self.device_index = node.index_of(device)

    def synchronize(self) -> None:
        self.node.synchronize(self.device_index)

    def wait_stream(self, _other: Any) -> None:
        return None

    def wait_event(self, _event: Any) -> None:
        return None

    def record_event(self, event: FakeEvent | None = None) -> FakeEvent:
        event = event or FakeEvent(self.node)
        event.record(self)
        return event

    def query(self) -> bool:
        return True


class FakeDeviceContext:
    """``torch.cuda.device(i)``: makes ``i`` the current device of this thread for a while."""

    def __init__(self, node: FakeNode, device: Any) -> None:
        self.node = node
        self.index = node.index_of(device)
        self.previous = 0

    def __enter__(self) -> None:
        self.previous = self.node.current_device()
        self.node.set_device(self.index)

    def __exit__(self, *_: object) -> None:
        self.node.set_device(self.previous)


@dataclass(frozen=True)
class FakeDeviceProperties:
    name: str
    total_memory: int
    major: int
    minor: int
    multi_processor_count: int
    uuid: str
    is_integrated: bool = False


class FakeCuda(types.SimpleNamespace):
    """The ``torch.cuda`` namespace of a fake node."""

    OutOfMemoryError = torch.OutOfMemoryError

    def __init__(self, node: FakeNode) -> None:
        super().__init__()
        self._node = node

    def is_available(self) -> bool:
        return bool(self._node.gpus)

    def is_initialized(self) -> bool:
        return True

    def init(self) -> None:
        return None

    def device_count(self) -> int:
        return len(self._node.gpus)

    def current_device(self) -> int:
        return self._node.current_device()

    def set_device(self, device: Any) -> None:
        self._node.set_device(self._node.index_of(device))

    def device(self, device: Any) -> FakeDeviceContext:
        return FakeDeviceContext(self._node, device)

    def get_device_properties(self, device: Any = None) -> FakeDeviceProperties:
        gpu = self._node.gpu(self._node.index_of(device))
        profile = gpu.profile
        return FakeDeviceProperties(
            name=profile.name,
            total_memory=profile.total_memory,
            major=profile.capability[0],
            minor=profile.capability[1],
            multi_processor_count=profile.multi_processor_count,
            uuid=gpu.uuid,
        )

    def get_device_name(self, device: Any = None) -> str:
        return self.get_device_properties(device).name

    def get_device_capability(self, device: Any = None) -> tuple[int, int]:
        return self._node.gpu(self._node.index_of(device)).profile.capability

    def is_bf16_supported(self, including_emulation: bool = True) -> bool:
        return self.get_device_capability()[0] >= 8

    def synchronize(self, device: Any = None) -> None:
        self._node.synchronize(self._node.index_of(device))

    def Event(self, enable_timing: bool = False, **options: Any) -> FakeEvent:
        return FakeEvent(self._node, enable_timing, **options)

    def Stream(self, device: Any = None, **options: Any) -> FakeStream:
        return FakeStream(self._node, device, **options)

    def current_stream(self, device: Any = None) -> FakeStream:
        return FakeStream(self._node, device)

    def default_stream(self, device: Any = None) -> FakeStream:
        return FakeStream(self._node, device)

    @contextlib.contextmanager
    def stream(self, stream: FakeStream | None) -> Iterator[None]:
        if stream is None:
            yield
            return
        with FakeDeviceContext(self._node, stream.device_index):
            yield

    def memory_allocated(self, device: Any = None) -> int:
        return self._node.gpu(self._node.index_of(device)).allocated

    def max_memory_allocated(self, device: Any = None) -> int:
        return self._node.gpu(self._node.index_of(device)).peak

    memory_reserved = memory_allocated
    max_memory_reserved = max_memory_allocated

    def reset_peak_memory_stats(self, device: Any = None) -> None:
        gpu = self._node.gpu(self._node.index_of(device))
        gpu.peak = gpu.allocated

    def empty_cache(self) -> None:
        return None

    def mem_get_info(self, device: Any = None) -> tuple[int, int]:
        gpu = self._node.gpu(self._node.index_of(device))
        return gpu.profile.total_memory - gpu.allocated, gpu.profile.total_memory

    def manual_seed(self, seed: int) -> None:
        torch.manual_seed(seed)

    def manual_seed_all(self, seed: int) -> None:
        torch.manual_seed(seed)


class FakeTorch(types.ModuleType):
    """The real CPU ``torch`` with a fake ``cuda``; its functions enter the fake mode in any
    thread that has not (the burn runs one thread per GPU)."""

    def __init__(self, node: FakeNode) -> None:
        super().__init__("torch")
        self._node = node
        self.cuda = FakeCuda(node)
        self.__version__ = torch.__version__

    def Generator(self, device: Any = "cpu") -> torch.Generator:
        return torch.Generator(device="cpu")

    def __getattr__(self, name: str) -> Any:
        value = getattr(torch, name)
        if not callable(value) or isinstance(value, type | types.ModuleType):
            return value
        node = self._node

        def in_fake_mode(*args: Any, **kwargs: Any) -> Any:
            if node.mode_active():
                return value(*args, **kwargs)
            with FakeCudaMode(node):
                return value(*args, **kwargs)

        return in_fake_mode


def _is_device_argument(value: Any) -> bool:
    return isinstance(value, torch.device) or (
        isinstance(value, str) and value.split(":")[0] in ("cuda", "cpu", "meta")
    )


def _bytes(tensor: torch.Tensor) -> int:
    return tensor.numel() * tensor.element_size()


def _virtual(shape: Sequence[int], dtype: torch.dtype, stride: Sequence[int]) -> torch.Tensor:
    tensor = (
        torch.zeros((), dtype=dtype).expand(*shape) if len(shape) else torch.zeros((), dtype=dtype)
    )
    tensor._fake_virtual = True  # type: ignore[attr-defined]
    tensor._fake_stride = tuple(stride)  # type: ignore[attr-defined]
    return tensor


def _is_virtual(value: Any) -> bool:
    return isinstance(value, torch.Tensor) and getattr(value, "_fake_virtual", False)


def _tensors(args: Any, kwargs: Any) -> list[torch.Tensor]:
    leaves, _ = tree_flatten((args, kwargs))
    return [leaf for leaf in leaves if isinstance(leaf, torch.Tensor)]


def _on_meta(func: Any, args: Any, kwargs: dict[str, Any]) -> Any:
    """Run ``func`` on shape-only copies of its tensors; new tensors come back virtual, and an
    input that comes back (in-place, ``out=``) is the original."""
    originals: dict[int, torch.Tensor] = {}

    def to_meta(value: Any) -> Any:
        if isinstance(value, torch.Tensor):
            stride = getattr(value, "_fake_stride", None) or value.stride()
            meta = torch.empty_strided(value.shape, stride, dtype=value.dtype, device="meta")
            originals[id(meta)] = value
            return meta
        if _is_device_argument(value):
            return "meta"
        return value

    meta_args = tree_map(to_meta, args)
    meta_kwargs = tree_map(to_meta, kwargs)
    if "device" in meta_kwargs:
        meta_kwargs["device"] = "meta"
    result = func(*meta_args, **meta_kwargs)

    def back(value: Any) -> Any:
        if isinstance(value, torch.Tensor) and value.device.type == "meta":
            if id(value) in originals:
                return originals[id(value)]
            return _virtual(value.shape, value.dtype, value.stride())
        if isinstance(value, torch.device) and value.type == "meta":
            return torch.device("cpu")
        return value

    return tree_map(back, result)


class FakeNode:
    """A machine of fake GPUs: their state, the clock and the mode that runs torch on them."""

    def __init__(self, profiles: Sequence[GpuProfile]) -> None:
        self.gpus = [FakeGpu(index, profile) for index, profile in enumerate(profiles)]
        self.clock = FakeClock()
        self.lock = threading.RLock()
        self.local = threading.local()
        self.torch = FakeTorch(self)

    @property
    def uuids(self) -> list[str]:
        return [gpu.uuid for gpu in self.gpus]

    def mode_active(self) -> bool:
        return getattr(self.local, "depth", 0) > 0

    def current_device(self) -> int:
        return getattr(self.local, "current", 0)

    def set_device(self, index: int) -> None:
        self.gpu(index)
        self.local.current = index

    def gpu(self, index: int) -> FakeGpu:
        if not 0 <= index < len(self.gpus):
            raise RuntimeError(
                f"CUDA error: invalid device ordinal {index} ({len(self.gpus)} fake GPUs)"
            )
        return self.gpus[index]

    def index_of(self, device: Any) -> int:
        """The fake device index of ``None``/int/"cuda"/"cuda:N"/``torch.device``."""
        if device is None:
            return self.current_device()
        if isinstance(device, int):
            return device
        parsed = torch.device(device) if isinstance(device, str) else device
        if parsed.type != "cuda":
            raise ValueError(f"expected a CUDA device, got {device!r}")
        return parsed.index if parsed.index is not None else self.current_device()

    def enqueue(self, index: int, seconds: float) -> None:
        gpu = self.gpu(index)
        change = gpu.profile.speed_change
        if change is not None and gpu.work_seconds >= change[0]:
            seconds /= change[1]
        with self.lock:
            now = self.clock.monotonic()
            gpu.work_seconds += seconds
            gpu.busy_until = max(now, gpu.busy_until) + seconds

    def synchronize(self, index: int) -> None:
        """Wait for the device: the clock jumps to when its queue ends."""
        gpu = self.gpu(index)
        self.check_alive(gpu)
        with self.lock:
            self.clock.wait_until(gpu.busy_until)

    def check_alive(self, gpu: FakeGpu) -> None:
        failing = gpu.profile.fail_after_ops
        if failing is not None and gpu.operations >= failing:
            raise FakeCudaError(CUDA_ERROR.format(index=gpu.index))

    def allocate(self, gpu: FakeGpu, tensor: torch.Tensor) -> None:
        size = _bytes(tensor)
        limit = gpu.profile.oom_above_bytes
        total = min(gpu.profile.total_memory, gpu.profile.allocation_limit_bytes or math.inf)
        if (limit is not None and size > limit) or gpu.allocated + size > total:
            raise torch.OutOfMemoryError(
                f"CUDA out of memory. Tried to allocate {size / 2**20:.2f} MiB. GPU {gpu.index} "
                f"has a total capacity of {gpu.profile.total_memory / 2**30:.2f} GiB of which "
                f"{(gpu.profile.total_memory - gpu.allocated) / 2**30:.2f} GiB is free (fake)"
            )
        with self.lock:
            gpu.allocated += size
            gpu.peak = max(gpu.peak, gpu.allocated)
        weakref.finalize(tensor, self._free, gpu, size)

    def _free(self, gpu: FakeGpu, size: int) -> None:
        with self.lock:
            gpu.allocated -= size

    def matmul_seconds(self, gpu: FakeGpu, operand: torch.Tensor, output: Any) -> float:
        """2 x output elements x k / the profile's FLOP/s in the operand's dtype."""
        if operand.dtype == torch.float32:
            dtype = "tf32" if torch.backends.cuda.matmul.allow_tf32 else "fp32"
        else:
            dtype = {
                torch.bfloat16: "bf16",
                torch.float16: "fp16",
                torch.float8_e4m3fn: "fp8",
                torch.float8_e5m2: "fp8",
            }.get(operand.dtype, "fp32")
        rate = gpu.profile.matmul_flops.get(dtype)
        if rate is None:
            raise RuntimeError(
                f"{dtype} matmul is not supported on {gpu.profile.name} "
                f"(compute capability {gpu.profile.capability}) (fake)"
            )
        result = output[0] if isinstance(output, tuple) else output
        return 2 * result.numel() * operand.shape[-1] / rate

    def transfer_seconds(
        self, host: torch.Tensor | None, source: int | None, target: int | None, size: int
    ) -> tuple[int, float]:
        """The device that does a copy of ``size`` bytes and its seconds: host to device and
        back at the profile's pinned or pageable PCIe rate (by the host tensor's tag), device to
        device at the HBM rate, each byte read and written."""
        kind = "pinned" if getattr(host, "_fake_pinned", False) else "pageable"
        if source is None and target is not None:
            return target, size / self.gpu(target).profile.host_to_device[kind]
        if source is not None and target is None:
            return source, size / self.gpu(source).profile.device_to_host[kind]
        assert target is not None
        return target, 2 * size / self.gpu(target).profile.hbm_bytes_per_second


class FakeCudaMode(TorchFunctionMode):
    """Runs torch calls for a ``FakeNode``: devices rewritten to the CPU, work timed."""

    def __init__(self, node: FakeNode) -> None:
        super().__init__()
        self.node = node

    def __enter__(self) -> FakeCudaMode:
        self.node.local.depth = getattr(self.node.local, "depth", 0) + 1
        super().__enter__()
        return self

    def __exit__(self, *exception: object) -> None:
        super().__exit__(*exception)
        self.node.local.depth -= 1

    def _device_of(self, value: Any) -> int | str | None:
        """A fake index, None for the host, or "absent" when ``value`` names no device."""
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if _is_device_argument(value):
            parsed = torch.device(value)
            return self.node.index_of(parsed) if parsed.type == "cuda" else None
        return "absent"

    def __torch_function__(
        self,
        func: Any,
        types_: Any,
        args: Sequence[Any] = (),
        kwargs: Mapping[str, Any] | None = None,
    ) -> Any:
        name = getattr(func, "__name__", "")
        kwargs = dict(kwargs or {})
        args = tuple(args)
        if name == "is_pinned":
            return bool(getattr(args[0], "_fake_pinned", False))
        if name in METADATA_FUNCTIONS:
            return func(*args, **kwargs)
        if name == "__get__":
            return self._property(func, args, kwargs)
        target: int | str | None = "absent"
        pinned = bool(kwargs.pop("pin_memory", False))
        if "device" in kwargs:
            target = self._device_of(kwargs["device"])
            kwargs["device"] = "cpu"
        if name in ("to", "cuda", "cpu", "pin_memory"):
            args, target = self._transfer_arguments(name, args, target)
            if name == "pin_memory":
                pinned = True
        inputs = _tensors(args, kwargs)
        source_devices = [getattr(t, "_fake_device", None) for t in inputs]
        on_devices = [d for d in source_devices if d is not None]
        device = target if target != "absent" else (on_devices[0] if on_devices else None)
        assert not isinstance(device, str)
        for index in {*on_devices, *([device] if device is not None else [])}:
            gpu = self.node.gpu(index)
            self.node.check_alive(gpu)
            gpu.operations += 1
        result = self._execute(name, func, args, kwargs, inputs)
        here = getattr(args[0], "_fake_device", None) if args else None
        moved = name in ("to", "cuda", "cpu") and target not in ("absent", here)
        if moved or pinned:
            result = self._fresh_if_same(result, args[0] if args else None)
        self._tag(result, inputs, device, pinned, name)
        if device is not None or on_devices:
            self._account(name, args, inputs, source_devices, device, result)
        return result

    def _property(self, func: Any, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
        result = func(*args, **kwargs)
        if isinstance(result, torch.Tensor) and any(map(_is_virtual, args)):
            result = _on_meta(func, args, kwargs)
        if isinstance(result, torch.Tensor):
            device = getattr(args[0], "_fake_device", None)
            if device is not None:
                result._fake_device = device  # type: ignore[attr-defined]
        return result

    def _transfer_arguments(
        self, name: str, args: tuple[Any, ...], target: int | str | None
    ) -> tuple[tuple[Any, ...], int | str | None]:
        if name == "cpu":
            return args, None
        if name == "pin_memory":
            return args[:1], None
        if name == "cuda":
            index = self._device_of(args[1]) if len(args) > 1 else "absent"
            chosen = (
                index
                if index != "absent"
                else (target if target != "absent" else self.node.current_device())
            )
            return args[:1], chosen
        rewritten = [args[0]]
        for value in args[1:]:
            if isinstance(value, torch.Tensor) and value is not args[0]:
                target = getattr(value, "_fake_device", None)
                rewritten.append(value.dtype)
                continue
            place = self._device_of(value)
            if place != "absent":
                target = place
                rewritten.append("cpu")
            else:
                rewritten.append(value)
        return tuple(rewritten), target

    def _execute(
        self,
        name: str,
        func: Any,
        args: Sequence[Any],
        kwargs: dict[str, Any],
        inputs: Sequence[torch.Tensor],
    ) -> Any:
        if name in ("cuda", "cpu", "pin_memory"):
            return args[0]
        if any(map(_is_virtual, inputs)):
            if name in MATMUL_FUNCTIONS and isinstance(kwargs.get("out"), torch.Tensor):
                return kwargs["out"]
            if name in PYTHON_RESULTS_OF_VIRTUAL:
                return PYTHON_RESULTS_OF_VIRTUAL[name]
            return _on_meta(func, args, kwargs)
        if name in FACTORY_FUNCTIONS:
            shaped = _on_meta(func, args, kwargs)
            if isinstance(shaped, torch.Tensor) and _bytes(shaped) > VIRTUAL_ABOVE_BYTES:
                return shaped
        return func(*args, **kwargs)

    def _fresh_if_same(self, result: Any, source: Any) -> Any:
        """A transfer returns a new tensor even where the CPU call returned its input."""
        if result is source and isinstance(source, torch.Tensor):
            if _is_virtual(source):
                return _virtual(source.shape, source.dtype, source._fake_stride)
            return source.clone()
        return result

    def _tag(
        self,
        result: Any,
        inputs: Sequence[torch.Tensor],
        device: int | None,
        pinned: bool,
        name: str,
    ) -> None:
        known = {id(tensor) for tensor in inputs}
        leaves, _ = tree_flatten(result)
        for leaf in leaves:
            if not isinstance(leaf, torch.Tensor) or id(leaf) in known:
                continue
            if device is not None:
                leaf._fake_device = device  # type: ignore[attr-defined]
                if name not in VIEW_FUNCTIONS:
                    self.node.allocate(self.node.gpu(device), leaf)
            if pinned:
                leaf._fake_pinned = True  # type: ignore[attr-defined]

    def _account(
        self,
        name: str,
        args: Sequence[Any],
        inputs: Sequence[torch.Tensor],
        source_devices: Sequence[int | None],
        device: int | None,
        result: Any,
    ) -> None:
        if name in VIEW_FUNCTIONS:
            return
        if name in MATMUL_FUNCTIONS:
            operand = inputs[1] if name in ("addmm", "baddbmm") else inputs[0]
            index = next(d for d in source_devices if d is not None)
            gpu = self.node.gpu(index)
            self.node.enqueue(index, self.node.matmul_seconds(gpu, operand, result))
            return
        if name == "copy_" and len(inputs) >= 2:
            target, source = inputs[0], inputs[1]
            host = source if source_devices[1] is None else target
            self._account_transfer(host, source_devices[1], source_devices[0], _bytes(target))
            return
        if name in ("to", "cuda", "cpu") and inputs and isinstance(result, torch.Tensor):
            source_device = source_devices[0]
            if source_device != device:
                host = inputs[0] if source_device is None else result
                self._account_transfer(host, source_device, device, _bytes(result))
                return
        if device is None:
            return
        touched = sum(_bytes(t) for t in inputs)
        profile = self.node.gpu(device).profile
        if name in READ_FUNCTIONS:
            self.node.enqueue(device, touched / profile.hbm_read_bytes_per_second)
            return
        leaves, _ = tree_flatten(result)
        known = {id(t) for t in inputs}
        touched += sum(
            _bytes(leaf)
            for leaf in leaves
            if isinstance(leaf, torch.Tensor) and id(leaf) not in known
        )
        self.node.enqueue(device, touched / profile.hbm_bytes_per_second)

    def _account_transfer(
        self,
        host: torch.Tensor | None,
        source_device: int | None,
        target_device: int | None,
        size: int,
    ) -> None:
        if source_device is None and target_device is None:
            return
        index, seconds = self.node.transfer_seconds(host, source_device, target_device, size)
        self.node.enqueue(index, seconds)


def _reference_value(function_name: str, *arguments: Any) -> float | None:
    """``references.<function_name>(*arguments).value``, or None where it gives none."""
    from gpuplan.bench import references

    function = getattr(references, function_name, None)
    try:
        reference = function(*arguments) if function is not None else None
    except (TypeError, ValueError, KeyError):
        return None
    value = getattr(reference, "value", None)
    return float(value) if value else None


def _catalog_rates(gpu_id: str) -> tuple[dict[str, float], float, float, str]:
    """Matmul FLOP/s per dtype and HBM copy and read bytes/s of a healthy ``gpu_id``: the
    published measurements the bench holds figures to (``references``), so that a healthy fake
    sits at its reference. A dtype without one runs at the bf16 MAMF's share of its peak."""
    from gpuplan.catalog import load_gpu

    gpu = load_gpu(gpu_id)
    measured = dict(gpu.achievable_matmul)
    fraction = measured["bf16"] / gpu.peak_flops["bf16"]
    rates = {
        dtype: _reference_value("matmul_reference", gpu_id, dtype)
        or float(measured.get(dtype, fraction * peak))
        for dtype, peak in gpu.peak_flops.items()
    }
    copy = _reference_value("hbm_reference", gpu_id, "copy") or float(gpu.memory_bandwidth)
    read = _reference_value("hbm_reference", gpu_id, "read") or copy
    source = (
        f"catalog {gpu_id} achievable_matmul ({gpu.source_of('achievable_matmul.bf16')[0]}) "
        "and the bench's HBM references (gpuplan.bench.references)"
    )
    return rates, copy, read, source


PCIE_GEN5_X16_PINNED = {"host_to_device": 55.43e9, "device_to_host": 55.06e9}
"""ml-engineering network/README.md: 8xH200 Gen5 x16, nvbandwidth pinned copies."""


def _healthy(
    gpu_id: str, name: str, capability: tuple[int, int], sms: int, pcie_generation: int = 5
) -> GpuProfile:
    """A healthy GPU; its PCIe copies reach the same share of an x16 link of
    ``pcie_generation`` as ml-engineering's Gen5 measurement (each generation doubles the
    lane rate from Gen3 on)."""
    from gpuplan.catalog import load_gpu

    rates, copy, read, source = _catalog_rates(gpu_id)
    share = 2.0 ** (pcie_generation - 5)
    to_device, to_host = (share * PCIE_GEN5_X16_PINNED[d] for d in PCIE_GEN5_X16_PINNED)
    return GpuProfile(
        name=name,
        total_memory=int(load_gpu(gpu_id).memory_bytes),
        capability=capability,
        multi_processor_count=sms,
        matmul_flops=rates,
        hbm_bytes_per_second=copy,
        hbm_read_bytes_per_second=read,
        host_to_device={"pinned": to_device, "pageable": to_device},
        device_to_host={"pinned": to_host, "pageable": to_host},
        pcie_link=(pcie_generation, 16),
        source=source + "; PCIe at ml-engineering's 8xH200 Gen5 x16 pinned copies, pageable "
        "at the same rate (no published pageable figure)",
    )


def h100_sxm() -> GpuProfile:
    """A healthy H100 SXM as PyTorch names it; 132 SMs (NVIDIA H100 Tensor Core GPU
    Architecture whitepaper, SXM5)."""
    return _healthy("h100-sxm-80gb", "NVIDIA H100 80GB HBM3", (9, 0), 132)


def h200_sxm() -> GpuProfile:
    """A healthy H200 SXM; same GH100 die and SM count as the H100 SXM (NVIDIA H200 product
    brief)."""
    return _healthy("h200-sxm-141gb", "NVIDIA H200", (9, 0), 132)


def a100_sxm() -> GpuProfile:
    """A healthy A100 SXM4 80GB: compute capability 8.0, no FP8 (the catalog has no fp8 peak, so
    the profile has no fp8 rate and ``_scaled_mm`` raises); 108 SMs (NVIDIA A100 whitepaper)."""
    return _healthy("a100-sxm-80gb", "NVIDIA A100-SXM4-80GB", (8, 0), 108, pcie_generation=4)


def h100_mig_1g() -> GpuProfile:
    """One 1g.10gb MIG slice of an H100 80GB: 1/7 of the compute (16 of 132 SMs, as the NVIDIA
    MIG User Guide's H100 profile table gives) and 1/8 of the memory and its bandwidth; the name
    carries the profile as CUDA reports it for a MIG device."""
    full = h100_sxm()
    compute, memory = 16 / 132, 1 / 8
    return replace(
        full.scaled(matmul=compute, hbm=memory),
        name="NVIDIA H100 80GB HBM3 MIG 1g.10gb",
        total_memory=int(full.total_memory * memory),
        multi_processor_count=16,
        mig=True,
        source=full.source + "; MIG 1g.10gb: 1/7 compute, 1/8 memory (NVIDIA MIG User Guide)",
    )


def collective_table(
    ranks: int,
    bus_bandwidth: Callable[[str], float],
    sizes: Sequence[int] = (2**30,),
    backend: str = "nccl",
    **extra: Any,
) -> dict[str, Any]:
    """A table shaped like ``collectives.measure_on_this_rank``'s, with synthetic busbw; ``extra``
    adds keys (``nccl_nvls_enable="0"``)."""
    from gpuplan.bench.collectives import COLLECTIVES, bus_bandwidth_factor

    rows = []
    for collective in COLLECTIVES:
        busbw = bus_bandwidth(collective)
        for size in sizes:
            algbw = busbw / bus_bandwidth_factor(collective, ranks)
            rows.append(
                {
                    "collective": collective,
                    "size_bytes": size,
                    "seconds": size / algbw,
                    "slowest_rank_seconds": size / algbw,
                    "algorithm_bandwidth_bytes_per_second": algbw,
                    "bus_bandwidth_bytes_per_second": busbw,
                }
            )
    return {
        "ranks": ranks,
        "nodes": 1,
        "ranks_per_node": ranks,
        "backend": backend,
        "warmup_iterations": 0,
        "iterations": 1,
        "hostname": "fake-node",
        "results": rows,
        **extra,
    }


BENCH_MODULES = (
    "gpuplan.bench.environment",
    "gpuplan.bench.timing",
    "gpuplan.bench.matmul",
    "gpuplan.bench.memory_bandwidth",
    "gpuplan.bench.burn",
    "gpuplan.bench.probe",
    "gpuplan.bench.collectives",
    "gpuplan.bench.runner",
)


HOST_TIMED = ("gpuplan.bench.storage",)
"""Modules that time the host's own work (disk IO): they keep the real clock."""


def _bench_modules() -> list[types.ModuleType]:
    for name in BENCH_MODULES:
        importlib.import_module(name)
    return [
        module
        for name, module in list(sys.modules.items())
        if name.startswith("gpuplan.bench") and isinstance(module, types.ModuleType)
    ]


@contextlib.contextmanager
def fake_gpus(
    monkeypatch: Any,
    node: FakeNode,
    nvml: Any = None,
    collectives: Callable[..., dict[str, Any]] | None = None,
    matmul_warmup_seconds: float = 0.05,
) -> Iterator[FakeNode]:
    """Point ``gpuplan bench`` at ``node``: ``require_torch`` returns the fake torch, ``pynvml``
    is ``nvml`` (None: not installed), the bench modules (but :data:`HOST_TIMED`) read the
    fake clock, every thread
    started meanwhile (``threading.Thread.run``, thread pools too) runs in the fake mode, the matmul warm-up is capped, and ``collectives.run_on_this_node`` (which
    starts processes, beyond the fake's reach) is ``collectives`` when given."""
    for module in _bench_modules():
        if getattr(module, "require_torch", None) is not None:
            monkeypatch.setattr(module, "require_torch", lambda: node.torch)
        if getattr(module, "time", None) is real_time and module.__name__ not in HOST_TIMED:
            monkeypatch.setattr(module, "time", node.clock)
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    thread_run = threading.Thread.run

    def run_in_fake_mode(thread: threading.Thread) -> None:
        with FakeCudaMode(node):
            thread_run(thread)

    monkeypatch.setattr(threading.Thread, "run", run_in_fake_mode)
    from gpuplan.bench import collectives as collectives_module
    from gpuplan.bench import matmul

    if collectives is not None:
        monkeypatch.setattr(collectives_module, "run_on_this_node", collectives, raising=False)
    warm_up = getattr(matmul, "warm_up", None)
    if warm_up is not None:

        def capped_warm_up(*args: Any, **kwargs: Any) -> Any:
            arguments = list(args)
            if len(arguments) >= 5:
                arguments[4] = min(arguments[4], matmul_warmup_seconds)
            if "seconds" in kwargs:
                kwargs["seconds"] = min(kwargs["seconds"], matmul_warmup_seconds)
            return warm_up(*arguments, **kwargs)

        monkeypatch.setattr(matmul, "warm_up", capped_warm_up)
    with FakeCudaMode(node):
        yield node
