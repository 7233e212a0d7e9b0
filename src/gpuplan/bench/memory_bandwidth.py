"""Device memory (HBM) bandwidth and host-device (PCIe) bandwidth.

HBM: a device-to-device copy of a buffer much larger than the L2 cache, and a read-only
reduction over it. A copy reads and writes every byte, so its memory traffic is twice the
bytes copied; nvbandwidth's ``device_local_copy`` counts them once (issue #48), gpuplan
reports traffic, the convention of STREAM and of DCGM's memory_bandwidth floors, and keeps
the copied-bytes figure in the details.

PCIe: nvbandwidth's method (NVIDIA/nvbandwidth): 512 MiB buffers, repeated copies, the
median of samples; host buffers both pinned (page-locked, DMA straight from them) and
pageable (staged through a driver buffer). The link generation and width are read from NVML
while a transfer runs, because idle links drop to Gen1. With several GPUs, every GPU also copies
from its own pinned buffer at the same time (:func:`measure_concurrent_host_to_device`): shared
PCIe switches, root ports or a remote NUMA node show there, not in one GPU's copy.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from gpuplan.bench.timing import DeviceTimer

GPU_BUFFER_BYTES = 2 * 2**30
"""Well above every L2 cache (H100: 50 MiB, B200: 126 MiB; ml-engineering suggests >= 4x L2)."""
CPU_BUFFER_BYTES = 64 * 2**20
PCIE_BUFFER_BYTES = 512 * 2**20
"""nvbandwidth's default buffer size."""


def _median_seconds(
    timer: DeviceTimer, operation: Any, iterations: int, warmup_iterations: int = 2
) -> float:
    for _ in range(warmup_iterations):
        operation()
    timer.synchronize()
    return statistics.median(timer.time_iterations(operation, iterations))


def measure_device_memory(
    torch: ModuleType, device: str, buffer_bytes: int | None = None, iterations: int = 10
) -> dict[str, Any]:
    """HBM (or, on the CPU, DRAM) bandwidth: copy traffic and read rate, bytes per second."""
    size = buffer_bytes or (GPU_BUFFER_BYTES if device == "cuda" else CPU_BUFFER_BYTES)
    elements = size // 4
    source = torch.randn(elements, device=device, dtype=torch.float32)
    target = torch.empty_like(source)
    timer = DeviceTimer(torch, device)
    copy_seconds = _median_seconds(timer, lambda: target.copy_(source), iterations)
    read_seconds = _median_seconds(timer, lambda: torch.sum(source), iterations)
    copied = elements * 4
    return {
        "buffer_bytes": copied,
        "copy_traffic_bytes_per_second": 2 * copied / copy_seconds,
        "copy_bytes_per_second": copied / copy_seconds,
        "read_bytes_per_second": copied / read_seconds,
        "iterations": iterations,
    }


def measure_host_transfers(
    torch: ModuleType,
    device_index: int = 0,
    buffer_bytes: int = PCIE_BUFFER_BYTES,
    iterations: int = 8,
    nvml: ModuleType | None = None,
) -> dict[str, Any]:
    """Host-to-device and device-to-host bandwidth, pinned and pageable, on one GPU, with this
    thread bound to the GPU's local CPUs and the host buffers allocated after binding
    (:func:`gpuplan.bench.environment.bound_to_gpu_cpus`); ``numa_cpus`` and ``numa_binding``
    say which CPUs, or why none."""
    from gpuplan.bench.environment import bound_to_gpu_cpus

    with bound_to_gpu_cpus(nvml, torch, device_index) as binding:
        results = _host_transfers(torch, device_index, buffer_bytes, iterations, nvml)
    return {**results, **binding}


def _host_transfers(
    torch: ModuleType,
    device_index: int,
    buffer_bytes: int,
    iterations: int,
    nvml: ModuleType | None,
) -> dict[str, Any]:
    device = f"cuda:{device_index}"
    timer = DeviceTimer(torch, "cuda")
    results: dict[str, Any] = {"device_index": device_index, "buffer_bytes": buffer_bytes}
    with torch.cuda.device(device_index):
        on_device = torch.empty(buffer_bytes, dtype=torch.uint8, device=device)
        for memory_kind, pinned in (("pinned", True), ("pageable", False)):
            on_host = torch.empty(buffer_bytes, dtype=torch.uint8, pin_memory=pinned)
            on_host.fill_(1)
            host_to_device = _median_seconds(
                timer, lambda h=on_host: on_device.copy_(h, non_blocking=True), iterations
            )
            device_to_host = _median_seconds(
                timer, lambda h=on_host: h.copy_(on_device, non_blocking=True), iterations
            )
            results[f"host_to_device_{memory_kind}_bytes_per_second"] = (
                buffer_bytes / host_to_device
            )
            results[f"device_to_host_{memory_kind}_bytes_per_second"] = (
                buffer_bytes / device_to_host
            )
            if pinned and nvml is not None:
                for _ in range(iterations):
                    on_device.copy_(on_host, non_blocking=True)
                results["pcie_link"] = _pcie_link_of(nvml, torch, device_index)
                timer.synchronize()
            del on_host
    return results


def _pcie_link_of(nvml: ModuleType, torch: ModuleType, device_index: int) -> dict[str, Any]:
    """The PCIe link of torch device ``device_index``, read through its NVML index (UUID
    pairing); empty where the pairing fails (no link is better than another GPU's)."""
    from gpuplan.bench.environment import nvml_index_for_torch_device, pcie_link

    index = nvml_index_for_torch_device(nvml, torch, device_index)
    return dict(pcie_link(nvml, index)) if index is not None else {}


def measure_concurrent_host_to_device(
    torch: ModuleType,
    device_indices: Sequence[int],
    buffer_bytes: int = PCIE_BUFFER_BYTES,
    iterations: int = 8,
) -> dict[str, Any]:
    """Every GPU of ``device_indices`` copies ``buffer_bytes`` from its own pinned host buffer,
    on its own stream, ``iterations`` times, all at once: total bytes / wall-clock seconds
    from the first launch to the last stream's end (after one untimed round)."""
    copies = []
    for index in device_indices:
        with torch.cuda.device(index):
            on_device = torch.empty(buffer_bytes, dtype=torch.uint8, device=f"cuda:{index}")
            on_host = torch.empty(buffer_bytes, dtype=torch.uint8, pin_memory=True)
            copies.append((index, on_device, on_host, torch.cuda.Stream()))

    def launch_all() -> None:
        for index, on_device, on_host, stream in copies:
            with torch.cuda.device(index), torch.cuda.stream(stream):
                on_device.copy_(on_host, non_blocking=True)

    def wait_all() -> None:
        for _, _, _, stream in copies:
            stream.synchronize()

    launch_all()
    wait_all()
    start = time.perf_counter()
    for _ in range(iterations):
        launch_all()
    wait_all()
    seconds = time.perf_counter() - start
    return {
        "devices": [index for index, *_ in copies],
        "buffer_bytes": buffer_bytes,
        "iterations": iterations,
        "seconds": seconds,
        "total_bytes_per_second": len(copies) * buffer_bytes * iterations / seconds,
    }
