"""Sequential read and write throughput of a directory, as a checkpoint save and load see it.

With fio installed: fio's libaio engine, direct IO, 1 MiB blocks, ``--unlink=1`` (fio
silently reuses old work files otherwise), JSON output (ml-engineering ``storage/fio-scan``,
with its 4 KiB blocks replaced by 1 MiB: checkpoints stream, they do not seek). Without fio,
a Python fallback writes and reads one file in 16 MiB blocks with ``O_DIRECT`` where the file
system allows it, else buffered IO with an fsync after writing and the page cache dropped
for the file (``posix_fadvise(DONTNEED)``) before reading.
"""

from __future__ import annotations

import mmap
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from gpuplan.bench.parsers import parse_fio_json

BLOCK_BYTES = 16 * 2**20
DIRECT_ALIGNMENT = 4096


def fio_command(directory: Path, mode: str, size_bytes: int, jobs: int = 4) -> list[str]:
    """A fio invocation for sequential ``mode`` ("read" or "write") of ``size_bytes`` in all."""
    return [
        "fio",
        f"--name=gpuplan-sequential-{mode}",
        f"--directory={directory}",
        f"--rw={mode}",
        "--bs=1M",
        f"--size={max(1, size_bytes // jobs // 2**20)}M",
        f"--numjobs={jobs}",
        "--iodepth=16",
        "--ioengine=libaio",
        "--direct=1",
        "--unlink=1",
        "--group_reporting",
        "--output-format=json",
    ]


def measure_with_fio(directory: Path, size_bytes: int) -> dict[str, Any]:
    results: dict[str, Any] = {"tool": "fio", "size_bytes": size_bytes, "direct_io": True}
    for mode in ("write", "read"):
        completed = subprocess.run(
            fio_command(directory, mode, size_bytes),
            capture_output=True,
            text=True,
            check=False,
            timeout=1800,
        )
        if completed.returncode != 0:
            raise RuntimeError(f"fio {mode} failed: {completed.stderr.strip()[-300:]}")
        parsed = parse_fio_json(completed.stdout)
        results[f"{mode}_bytes_per_second"] = parsed[f"{mode}_bytes_per_second"]
        results["fio_version"] = parsed["fio_version"]
    return results


def _open_direct(path: Path, flags: int) -> tuple[int, bool]:
    direct = getattr(os, "O_DIRECT", 0)
    if direct:
        try:
            return os.open(path, flags | direct, 0o600), True
        except OSError:
            pass
    return os.open(path, flags, 0o600), False


def _write_file(path: Path, size_bytes: int, block: mmap.mmap) -> tuple[float, bool]:
    descriptor, direct = _open_direct(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    written = 0
    start = time.perf_counter()
    try:
        while written < size_bytes:
            try:
                written += os.write(descriptor, block)
            except OSError:
                if not direct:
                    raise
                os.close(descriptor)
                descriptor, direct = os.open(path, os.O_WRONLY | os.O_APPEND), False
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
    return time.perf_counter() - start, direct


def _read_file(path: Path, block: mmap.mmap) -> tuple[int, float, bool]:
    descriptor, direct = _open_direct(path, os.O_RDONLY)
    if not direct and hasattr(os, "posix_fadvise"):
        os.posix_fadvise(descriptor, 0, 0, os.POSIX_FADV_DONTNEED)
    total = 0
    start = time.perf_counter()
    try:
        while True:
            try:
                count = os.readv(descriptor, [block])
            except OSError:
                if not direct:
                    raise
                os.close(descriptor)
                descriptor, direct = os.open(path, os.O_RDONLY), False
                os.lseek(descriptor, total, os.SEEK_SET)
                continue
            if count == 0:
                break
            total += count
    finally:
        os.close(descriptor)
    return total, time.perf_counter() - start, direct


def measure_with_python(directory: Path, size_bytes: int) -> dict[str, Any]:
    """Sequential write then read of one file of ``size_bytes`` in ``directory``."""
    block = mmap.mmap(-1, BLOCK_BYTES)
    block.write(os.urandom(BLOCK_BYTES))
    blocks = max(1, -(-size_bytes // BLOCK_BYTES))
    size = blocks * BLOCK_BYTES
    with tempfile.TemporaryDirectory(prefix="gpuplan-storage-", dir=directory) as folder:
        path = Path(folder) / "checkpoint.bin"
        write_seconds, write_direct = _write_file(path, size, block)
        read_bytes, read_seconds, read_direct = _read_file(path, block)
    block.close()
    return {
        "tool": "python",
        "size_bytes": size,
        "direct_io": write_direct and read_direct,
        "write_bytes_per_second": size / write_seconds,
        "read_bytes_per_second": read_bytes / read_seconds,
    }


def file_system_type(directory: Path, mounts: Path = Path("/proc/mounts")) -> str | None:
    """The type of the file system holding ``directory`` ("ext4", "tmpfs", ...): the longest
    mount point in ``/proc/mounts`` that contains it; None where that file does not exist."""
    try:
        lines = mounts.read_text().splitlines()
    except OSError:
        return None
    target = str(directory.resolve())
    best, kind = "", None
    for line in lines:
        fields = line.split()
        if len(fields) < 3:
            continue
        point = fields[1].replace("\\040", " ")
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and len(point) > len(best):
            best, kind = point, fields[2]
    return kind


def measure_storage(directory: Path, size_bytes: int, use_fio: bool = True) -> dict[str, Any]:
    """Sequential throughput of ``directory``: fio when installed, else the Python fallback."""
    if use_fio and shutil.which("fio"):
        try:
            return {"directory": str(directory), **measure_with_fio(directory, size_bytes)}
        except (RuntimeError, subprocess.TimeoutExpired, ValueError) as error:
            fallback = measure_with_python(directory, size_bytes)
            return {"directory": str(directory), **fallback, "fio_error": str(error)}
    return {"directory": str(directory), **measure_with_python(directory, size_bytes)}
