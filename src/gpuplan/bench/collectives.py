"""Collective bus bandwidth (all-reduce, all-gather, reduce-scatter, all-to-all) over sizes.

Definitions from NVIDIA/nccl-tests ``doc/PERFORMANCE.md``: ``algbw = S / t`` and ``busbw =
algbw x factor``, with ``S`` the whole array (for all-gather and reduce-scatter the gathered
or scattered total, for all-to-all ``count x ranks x typesize``) and the factor 2(n-1)/n for
all-reduce, (n-1)/n for the other three. GB/s are decimal.

Timing follows ml-engineering's ``all_reduce_bench.py`` (blocking, like ``nccl-tests -z 1``):
per iteration a barrier, a start event, the collective, an end event, a synchronise; warm-up
iterations first. Each rank's mean duration is gathered and the slowest rank's is reported, as
``nccl-tests -a 3`` (MAX) does: a collective is over when its last rank is. Run this module on
every rank with ``torchrun -m gpuplan.bench.collectives``; rank 0 gathers the results and
writes them as JSON.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from gpuplan.bench.references import (
    LINK_EFFICIENCY,
    LINK_RULE_SOURCE,
    CatalogFigures,
    Reference,
    intra_node_collective_reference,
    nvls_all_reduce_references,
)
from gpuplan.bench.report import Figure

COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all")
GPU_SIZES = tuple(2**power for power in range(15, 35, 2))
"""32 KiB .. 8 GiB in steps of 4x (ml-engineering sweeps 32 KiB .. 16 GiB; its published NVLS
rows include 2 and 8 GiB). A size some rank cannot allocate is skipped on every rank."""
CPU_SIZES = (2**16, 2**20)
SUMMARY_SIZE_FLOOR = 2**30
"""The summary busbw is the largest payload's (never an average over the sweep, which is the
trap of nccl-tests' "Avg bus bandwidth"); payloads below 1 GiB do not saturate links."""
STDERR_TAIL_LINES = 20
TERMINATE_GRACE_SECONDS = 5.0

NVLS_ALL_REDUCE_8_GPUS: Mapping[str | None, Mapping[int, Reference]] = CatalogFigures(
    nvls_all_reduce_references
)
"""All-reduce busbw of a full 8-GPU NVSwitch node with NVLS (NVLink SHARP) on, by catalog GPU id
and payload in bytes (``achievable_all_reduce_busbw_nvls`` in gpus.toml: ml-engineering's 8x
H200 sweep and SHARP section). NVLS reduces inside the switch, so busbw exceeds the link rate
(482.26 against 450 GB/s on H200) and stops describing the wire."""
NVLS_MIN_RANKS: Mapping[str | None, int] = CatalogFigures(lambda gpu: gpu.nvls_min_ranks)
"""The fewest ranks at which NCCL selects NVLS, by catalog GPU id (``nvls_min_ranks`` in
gpus.toml, ml-engineering SHARP section: "the switch is above 4 on H200 and above 5 on B200")."""

INTER_NODE_FLOOR_EFFICIENCY = 36.95 / 50
INTER_NODE_FLOOR_SOURCE = (
    "ml-engineering network/README.md 'So what should you expect?': 4 x 8 B200 (p6-b200, "
    "400G EFA per GPU), 16 GiB all-reduce busbw 381.80 GB/s -> busbw x (k-1)/(n-1) = 36.95 of "
    "50 GB/s per GPU (73.9 %), a floor"
)
"""The published per-GPU NIC rate of a healthy multi-node all-reduce, as a share of the line
rate, computed with the same hierarchical floor conversion the figure uses."""


def bus_bandwidth_factor(collective: str, ranks: int) -> float:
    """nccl-tests' busbw factor for ``collective`` on ``ranks`` ranks."""
    if ranks < 1:
        raise ValueError("ranks must be at least 1")
    if collective == "all_reduce":
        return 2 * (ranks - 1) / ranks
    if collective in ("all_gather", "reduce_scatter", "all_to_all"):
        return (ranks - 1) / ranks
    raise ValueError(f"unknown collective {collective!r}")


def network_share(collective: str, nodes: int, ranks: int) -> float:
    """Bytes each GPU sends off its node per byte of the nccl-tests payload ``S``, with ``k`` =
    ``nodes``, ``n`` = ``ranks`` and ``g = n / k`` GPUs per node, one NIC per GPU.

    - all-reduce: ``2(k-1)/n``. Hierarchical (ml-engineering network/README.md, model 3):
      reduce-scatter inside the node leaves each GPU a shard ``S/g``, the inter-node all-reduce
      of that shard sends ``2(k-1)/k x S/g``. No algorithm sends less, so the rate is a floor.
    - all-gather and reduce-scatter: ``(k-1)/n``. A node must receive (all-gather) or send
      (reduce-scatter) the ``(k-1)/k x S`` that belongs to the other nodes, spread over its
      ``g`` NICs; a floor for the same reason.
    - all-to-all: ``(n-g)/n``. Each rank sends ``S/n`` to every rank and ``n - g`` of them are on
      other nodes; personalised data cannot be combined, so this one is exact.
    """
    if nodes < 1 or ranks < nodes or ranks % nodes:
        raise ValueError(f"ranks ({ranks}) must be a positive multiple of nodes ({nodes})")
    per_node = ranks // nodes
    if collective == "all_reduce":
        return 2 * (nodes - 1) / ranks
    if collective in ("all_gather", "reduce_scatter"):
        return (nodes - 1) / ranks
    if collective == "all_to_all":
        return (ranks - per_node) / ranks
    raise ValueError(f"unknown collective {collective!r}")


def per_gpu_network_rate(
    bus_bandwidth: float, nodes: int, ranks: int, collective: str = "all_reduce"
) -> float:
    """The per-GPU NIC rate implied by a multi-node busbw: ``busbw / factor x share``, i.e.
    ``algbw x`` :func:`network_share`. For all-reduce that is ml-engineering's payload-free
    ``busbw x (k-1)/(n-1)`` (network/README.md, "So what should you expect?"); for all-to-all it
    is ``busbw x g(k-1)/(n-1)``, ``g`` times more. 0 on one node."""
    if nodes < 2 or ranks < 2:
        return 0.0
    algorithm_bandwidth = bus_bandwidth / bus_bandwidth_factor(collective, ranks)
    return algorithm_bandwidth * network_share(collective, nodes, ranks)


def network_rate(text: str) -> tuple[float, str]:
    """The per-GPU NIC line rate (bytes/s, one direction) and its source from ``--network``:
    a network name of :data:`gpuplan.hardware.cluster.INTER_NODE_NETWORKS` or a rate
    (``400Gbps``, ``50GB/s``)."""
    from gpuplan.errors import InputError
    from gpuplan.hardware.cluster import INTER_NODE_NETWORKS
    from gpuplan.units import parse_bandwidth

    if text in INTER_NODE_NETWORKS:
        return INTER_NODE_NETWORKS[text][1], f"--network {text} (gpuplan named network, per GPU)"
    try:
        rate = parse_bandwidth(text)
    except InputError as error:
        names = ", ".join(INTER_NODE_NETWORKS)
        raise InputError.of("error.bench_network", value=repr(text), accepted=names) from error
    if rate <= 0:
        raise InputError.of("error.positive", field="--network", value=repr(text))
    return rate, f"--network {text} (stated NIC rate per GPU)"


def _operation(dist: Any, torch: Any, collective: str, size: int, ranks: int, device: str) -> Any:
    """Buffers for a collective of total size ``size`` bytes, and a callable that runs it."""
    elements = _elements(size, ranks)
    if collective == "all_reduce":
        tensor = torch.rand(elements, device=device)
        return lambda: dist.all_reduce(tensor)
    if collective == "all_gather":
        shard = torch.rand(elements // ranks, device=device)
        gathered = torch.empty(elements, device=device)
        return lambda: dist.all_gather_into_tensor(gathered, shard)
    if collective == "reduce_scatter":
        full = torch.rand(elements, device=device)
        shard = torch.empty(elements // ranks, device=device)
        return lambda: dist.reduce_scatter_tensor(shard, full)
    source = torch.rand(elements, device=device)
    target = torch.empty(elements, device=device)
    return lambda: dist.all_to_all_single(target, source)


def _elements(size: int, ranks: int) -> int:
    return max(ranks, size // 4 // ranks * ranks)


def measured_row(
    collective: str, payload: int, per_rank_seconds: Sequence[float], ranks: int
) -> dict[str, Any]:
    """One sweep row from every rank's mean seconds: the slowest rank's time ``t = max``, so
    ``algbw = S / max`` and ``busbw = algbw x factor`` (nccl-tests ``-a 3``)."""
    slowest = max(range(len(per_rank_seconds)), key=per_rank_seconds.__getitem__)
    seconds = per_rank_seconds[slowest]
    algorithm_bandwidth = payload / seconds
    return {
        "collective": collective,
        "size_bytes": payload,
        "seconds": seconds,
        "slowest_rank": slowest,
        "slowest_rank_seconds": seconds,
        "mean_rank_seconds": statistics.fmean(per_rank_seconds),
        "algorithm_bandwidth_bytes_per_second": algorithm_bandwidth,
        "bus_bandwidth_bytes_per_second": algorithm_bandwidth
        * bus_bandwidth_factor(collective, ranks),
    }


def _buffers_on_every_rank(
    dist: Any, torch: Any, collective: str, size: int, ranks: int, device: str
) -> tuple[Any, str]:
    """The collective's callable, or None and the first rank's allocation error: every rank
    learns whether all could allocate, so one rank's OOM skips the size on all of them instead
    of leaving the others in the collective until NCCL's timeout."""
    operation, error = None, ""
    try:
        operation = _operation(dist, torch, collective, size, ranks, device)
    except RuntimeError as exception:
        lines = str(exception).strip().splitlines()
        error = f"{type(exception).__name__}: {lines[0]}" if lines else type(exception).__name__
    errors: list[str] = [""] * ranks
    dist.all_gather_object(errors, error)
    failed = [(rank, message) for rank, message in enumerate(errors) if message]
    if failed:
        return None, f"rank {failed[0][0]}: {failed[0][1]}"
    return operation, ""


def measure_on_this_rank(
    collectives: Sequence[str],
    sizes: Sequence[int],
    warmup_iterations: int,
    iterations: int,
) -> dict[str, Any] | None:
    """Run the sweep on this rank of an initialised process group; rank 0 returns the table."""
    import torch
    import torch.distributed as dist

    from gpuplan.bench.timing import DeviceTimer

    ranks = dist.get_world_size()
    rank = dist.get_rank()
    local_ranks = int(os.environ.get("LOCAL_WORLD_SIZE", ranks))
    device = "cuda" if dist.get_backend() == "nccl" else "cpu"
    timer = DeviceTimer(torch, device)
    rows = []
    for collective in collectives:
        for size in sizes:
            operation, error = _buffers_on_every_rank(dist, torch, collective, size, ranks, device)
            if operation is None:
                rows.append({"collective": collective, "size_bytes": size, "error": error})
                continue
            for _ in range(warmup_iterations):
                operation()
            timer.synchronize()
            durations = []
            for _ in range(iterations):
                dist.barrier()
                durations.extend(timer.time_iterations(operation, 1))
            per_rank = [0.0] * ranks
            dist.all_gather_object(per_rank, statistics.fmean(durations))
            operation = None
            rows.append(measured_row(collective, _elements(size, ranks) * 4, per_rank, ranks))
    if rank != 0:
        return None
    return {
        "ranks": ranks,
        "nodes": max(1, ranks // max(1, local_ranks)),
        "ranks_per_node": local_ranks,
        "backend": dist.get_backend(),
        "warmup_iterations": warmup_iterations,
        "iterations": iterations,
        "timing": "slowest rank's mean per size (nccl-tests -a 3)",
        "nccl_nvls_enable": os.environ.get("NCCL_NVLS_ENABLE"),
        "hostname": socket.gethostname(),
        "results": rows,
    }


def summary(table: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per collective, the row of the largest payload measured without error."""
    best: dict[str, dict[str, Any]] = {}
    for row in table["results"]:
        if "error" in row:
            continue
        current = best.get(row["collective"])
        if current is None or row["size_bytes"] > current["size_bytes"]:
            best[row["collective"]] = row
    return best


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class _Rank:
    rank: int
    process: subprocess.Popen[bytes]
    stderr_path: Path
    log_files: tuple[IO[bytes], IO[bytes]]


def _start_rank(rank: int, ranks: int, port: int, command: Sequence[str], folder: Path) -> _Rank:
    """One worker with the variables ``torchrun --standalone`` sets, its output in files (a
    pipe that nobody reads fills at 64 KiB and blocks the writer)."""
    environment = {
        **os.environ,
        "RANK": str(rank),
        "LOCAL_RANK": str(rank),
        "WORLD_SIZE": str(ranks),
        "LOCAL_WORLD_SIZE": str(ranks),
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(port),
    }
    stdout = (folder / f"rank{rank}.stdout").open("wb")
    stderr_path = folder / f"rank{rank}.stderr"
    stderr = stderr_path.open("wb")
    process = subprocess.Popen(
        list(command), env=environment, stdout=stdout, stderr=stderr, start_new_session=True
    )
    return _Rank(rank, process, stderr_path, (stdout, stderr))


def _stop(ranks: Sequence[_Rank]) -> None:
    """SIGTERM each rank's process group, SIGKILL what is left after a grace period."""
    running = [worker for worker in ranks if worker.process.poll() is None]
    for worker in running:
        _signal_group(worker.process, signal.SIGTERM)
    deadline = time.monotonic() + TERMINATE_GRACE_SECONDS
    for worker in running:
        try:
            worker.process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            _signal_group(worker.process, signal.SIGKILL)
            worker.process.wait()


def _signal_group(process: subprocess.Popen[bytes], number: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, number)


def stderr_tail(path: Path, lines: int = STDERR_TAIL_LINES) -> str:
    """The last ``lines`` non-empty lines of a rank's stderr."""
    if not path.exists():
        return ""
    text = path.read_bytes()[-64 * 1024 :].decode("utf-8", errors="replace")
    kept = [line for line in text.splitlines() if line.strip()]
    return "\n".join(kept[-lines:])


def _wait(ranks: Sequence[_Rank], deadline: float, poll_seconds: float) -> dict[str, Any] | None:
    """Poll every rank until all exit 0 (None), one exits non-zero or the deadline passes (the
    error, after stopping the rest at once)."""
    while True:
        failed = [w for w in ranks if w.process.poll() not in (None, 0)]
        if failed:
            _stop(ranks)
            first = failed[0]
            return {
                "reason": f"rank {first.rank} exited with status {first.process.returncode}",
                "rank": first.rank,
                "returncode": first.process.returncode,
                "failed_ranks": [w.rank for w in failed],
                "stderr_tail": stderr_tail(first.stderr_path),
            }
        running = [w for w in ranks if w.process.poll() is None]
        if not running:
            return None
        if time.monotonic() >= deadline:
            _stop(ranks)
            return {
                "reason": f"timeout: ranks {[w.rank for w in running]} still running",
                "rank": running[0].rank,
                "returncode": None,
                "failed_ranks": [w.rank for w in running],
                "stderr_tail": stderr_tail(running[0].stderr_path),
            }
        time.sleep(poll_seconds)


def worker_arguments(
    device: str,
    output: Path,
    sizes: Sequence[int],
    collectives: Sequence[str],
    warmup_iterations: int,
    iterations: int,
) -> list[str]:
    """The worker module's command-line arguments (see :func:`main`)."""
    return [
        "--device",
        device,
        "--output",
        str(output),
        "--sizes",
        ",".join(map(str, sizes)),
        "--collectives",
        ",".join(collectives),
        "--warmup-iterations",
        str(warmup_iterations),
        "--iterations",
        str(iterations),
    ]


def run_on_this_node(
    ranks: int,
    device: str,
    sizes: Sequence[int],
    collectives: Sequence[str] = COLLECTIVES,
    warmup_iterations: int = 5,
    iterations: int = 20,
    timeout_seconds: float = 600,
    worker: Sequence[str] | None = None,
    poll_seconds: float = 0.1,
) -> dict[str, Any]:
    """Start ``ranks`` worker processes on this machine and return rank 0's table.

    Never raises for a worker's failure: when a rank exits non-zero the others are stopped at
    once and the table carries ``error`` (the rank, its exit status, the tail of its stderr),
    as it does when ``timeout_seconds`` pass. ``worker`` replaces the worker command (tests).
    """
    with tempfile.TemporaryDirectory(prefix="gpuplan-collectives-") as name:
        folder = Path(name)
        output = folder / "collectives.json"
        command = [
            *(worker or (sys.executable, "-m", "gpuplan.bench.collectives")),
            *worker_arguments(device, output, sizes, collectives, warmup_iterations, iterations),
        ]
        port = _free_port()
        started: list[_Rank] = []
        try:
            for rank in range(ranks):
                started.append(_start_rank(rank, ranks, port, command, folder))
            error = _wait(started, time.monotonic() + timeout_seconds, poll_seconds)
        finally:
            _stop(started)
            for worker_rank in started:
                for log in worker_rank.log_files:
                    log.close()
        if error is None and not output.exists():
            error = {
                "reason": "rank 0 exited 0 but wrote no result",
                "rank": 0,
                "returncode": 0,
                "failed_ranks": [0],
                "stderr_tail": stderr_tail(folder / "rank0.stderr"),
            }
        if error is not None:
            return failed_table(ranks, device, error)
        result: dict[str, Any] = json.loads(output.read_text())
        return result


def failed_table(ranks: int, device: str, error: dict[str, Any]) -> dict[str, Any]:
    """The table of a launch that produced no measurement: no rows, and why."""
    return {
        "ranks": ranks,
        "nodes": 1,
        "ranks_per_node": ranks,
        "backend": "nccl" if device == "cuda" else "gloo",
        "results": [],
        "error": error,
    }


def error_message(error: dict[str, Any]) -> str:
    """One line for a failed launch: the rank, what happened, the last line of its stderr."""
    tail = error.get("stderr_tail") or ""
    last = tail.splitlines()[-1] if tail else "no output"
    return f"collectives did not run: {error['reason']}: {last}"


def nvls_state(
    table: dict[str, Any], gpu_id: str | None, bus_bandwidth: float, link: float | None
) -> dict[str, Any]:
    """Whether an intra-node all-reduce likely ran on NVLS, and why (ml-engineering SHARP
    section): off when ``NCCL_NVLS_ENABLE=0``; on when busbw exceeds the link rate (only an
    in-switch reduction gets there) or when an NVLS-capable node ran ``> 4`` ranks with NVLS not
    disabled (NCCL then selects NVLS from 2 MiB)."""
    setting = table.get("nccl_nvls_enable")
    if table.get("backend") != "nccl":
        return {"likely_active": False, "why": "not NCCL", "nccl_nvls_enable": setting}
    if setting == "0":
        return {"likely_active": False, "why": "NCCL_NVLS_ENABLE=0", "nccl_nvls_enable": setting}
    if link and bus_bandwidth > link:
        why = "busbw above the link rate: only an in-switch (NVLS) reduction gets there"
        return {"likely_active": True, "why": why, "nccl_nvls_enable": setting}
    if gpu_id in NVLS_MIN_RANKS and table["ranks"] >= NVLS_MIN_RANKS[gpu_id]:
        why = (
            f"NVSwitch node, {table['ranks']} ranks, NCCL_NVLS_ENABLE "
            f"{'unset' if setting is None else '=' + setting}: NCCL selects NVLS"
        )
        return {"likely_active": True, "why": why, "nccl_nvls_enable": setting}
    return {
        "likely_active": False,
        "why": "no NVLS-capable switch known",
        "nccl_nvls_enable": setting,
    }


def nvls_reference(gpu_id: str | None, ranks: int, payload: int) -> Reference | None:
    """The published NVLS all-reduce busbw for ``gpu_id`` at the largest published payload not
    above ``payload`` (a smaller payload reaches less), 8 ranks only; None if unpublished."""
    rows = NVLS_ALL_REDUCE_8_GPUS.get(gpu_id or "", {}) if ranks == 8 else {}
    sizes = [size for size in rows if size <= payload]
    return rows[max(sizes)] if sizes else None


def link_efficiency(bus_bandwidth: float, link: float) -> float:
    """busbw / link rate, capped at 1: under NVLS busbw exceeds the wire (fewer bytes cross the
    links than busbw's ring formula assumes), and no link carries more than its rate."""
    return min(1.0, bus_bandwidth / link)


def add_collective_figures(figures: list[Figure], table: dict[str, Any], gpu_spec: Any) -> None:
    """One figure per collective: bus bandwidth at the largest payload inside a node, or the
    per-GPU NIC rate across nodes; one ERROR figure (the rank, its stderr) if the launch failed."""
    if table.get("error"):
        figures.append(
            Figure(
                "collectives.error",
                "collectives: did not finish",
                "collective_intra_node",
                "",
                None,
                error=error_message(table["error"]),
                details=table["error"],
            )
        )
        return
    gpu_id = gpu_spec.id if gpu_spec is not None else None
    for name, row in summary(table).items():
        if table["nodes"] > 1:
            figures.append(inter_node_figure(name, row, table))
        else:
            figures.append(intra_node_figure(name, row, table, gpu_spec, gpu_id))


def _label(name: str, row: dict[str, Any], table: dict[str, Any]) -> str:
    return f"{name} busbw at {row['size_bytes'] / 2**20:.0f} MiB, {table['ranks']} ranks"


def inter_node_figure(name: str, row: dict[str, Any], table: dict[str, Any]) -> Figure:
    """The per-GPU NIC rate (:func:`per_gpu_network_rate`) against the stated line rate: the
    hierarchical floor for all-reduce, all-gather and reduce-scatter is held to the published
    floor (:data:`INTER_NODE_FLOOR_EFFICIENCY`), the exact all-to-all rate to ml-engineering's
    80 % of the link. Skipped with a reason when nobody stated the line rate."""
    nodes, ranks = table["nodes"], table["ranks"]
    busbw = row["bus_bandwidth_bytes_per_second"]
    network = table.get("network") or {}
    line_rate = network.get("bytes_per_second_per_gpu")
    exact = name == "all_to_all"
    efficiency, source = (
        (LINK_EFFICIENCY, LINK_RULE_SOURCE)
        if exact
        else (INTER_NODE_FLOOR_EFFICIENCY, INTER_NODE_FLOOR_SOURCE)
    )
    return Figure(
        f"collectives.{name}.inter_node",
        _label(name, row, table) + f" on {nodes} nodes (per-GPU NIC rate)",
        "collective_inter_node",
        "bytes/s",
        per_gpu_network_rate(busbw, nodes, ranks, name),
        spec=line_rate,
        spec_source=network.get("source", ""),
        reference=efficiency * line_rate if line_rate else None,
        reference_source=source if line_rate else "",
        skip_reason=""
        if line_rate
        else "NIC rate per GPU unknown: give the worker --network NAME or RATE",
        details={
            "bus_bandwidth_bytes_per_second": busbw,
            "network_share": network_share(name, nodes, ranks),
            "conversion": "exact" if exact else "hierarchical floor",
            "row": row,
        },
    )


def intra_node_figure(
    name: str, row: dict[str, Any], table: dict[str, Any], gpu_spec: Any, gpu_id: str | None
) -> Figure:
    """busbw inside one node against the catalog link rate; an all-reduce that likely ran on
    NVLS is held to the published NVLS busbw and its link efficiency is capped at 1."""
    busbw = row["bus_bandwidth_bytes_per_second"]
    ranks = table["ranks"]
    link = (
        gpu_spec.intra_node_bandwidth
        if gpu_spec is not None and table["backend"] == "nccl"
        else None
    )
    details: dict[str, Any] = {"row": row}
    nvls = nvls_state(table, gpu_id, busbw, link) if name == "all_reduce" else None
    skip = ""
    if nvls is not None and nvls["likely_active"]:
        reference = nvls_reference(gpu_id, ranks, row["size_bytes"])
        skip = "" if reference else f"NVLS likely on ({nvls['why']}): no published NVLS busbw here"
    else:
        reference = intra_node_collective_reference(gpu_id, name, link, ranks) if link else None
        if not reference:
            skip = f"{table['backend']} on this machine has no published reference"
    if nvls is not None:
        details["nvls"] = nvls
    if link:
        details["link_efficiency"] = link_efficiency(busbw, link)
    return Figure(
        f"collectives.{name}",
        _label(name, row, table) + (" (NVLS likely)" if nvls and nvls["likely_active"] else ""),
        "collective_intra_node",
        "bytes/s",
        busbw,
        spec=link,
        spec_source=f"gpuplan catalog {gpu_id}: intra-node link, one direction" if link else "",
        reference=reference.value if reference else None,
        reference_source=reference.source if reference else "",
        skip_reason=skip,
        details=details,
    )


def launch_commands(
    nodes: int, gpus_per_node: int, output: str = "collectives.json", network: str | None = None
) -> dict[str, str]:
    """torchrun and Slurm command lines for a multi-node run; run them on every node.
    ``network`` (a named network or a rate per GPU) is what the NIC rate is held to."""
    worker = f"-m gpuplan.bench.collectives --device cuda --output {output} --store"
    if network:
        worker += f" --network {network}"
    torchrun = (
        f"torchrun --nnodes {nodes} --nproc-per-node {gpus_per_node} --rdzv-backend c10d "
        f"--rdzv-endpoint $MASTER_ADDR:29500 --rdzv-id gpuplan-bench {worker}"
    )
    slurm = (
        f"srun --nodes {nodes} --ntasks-per-node 1 --gpus-per-node {gpus_per_node} bash -c "
        f"'torchrun --nnodes $SLURM_NNODES --nproc-per-node {gpus_per_node} "
        "--rdzv-backend c10d "
        '--rdzv-endpoint $(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1):29500 '
        f"--rdzv-id $SLURM_JOB_ID {worker}'"
    )
    return {"torchrun": torchrun, "slurm": slurm}


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m gpuplan.bench.collectives",
        description="Collective bus bandwidth on every rank; run with torchrun.",
    )
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--output", default="collectives.json")
    parser.add_argument("--sizes", default=",".join(map(str, GPU_SIZES)))
    parser.add_argument("--collectives", default=",".join(COLLECTIVES))
    parser.add_argument("--warmup-iterations", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument(
        "--network",
        default=None,
        help="NIC line rate per GPU across nodes: a gpuplan network name (ib-ndr-400g) or a "
        "rate (400Gbps); without it the inter-node figures are not judged",
    )
    parser.add_argument(
        "--store", action="store_true", help="also store the run in gpuplan's database"
    )
    options = parser.parse_args(argv)
    if options.network is not None:
        from gpuplan.errors import InputError

        try:
            network_rate(options.network)
        except InputError as error:
            parser.error(str(error))
    return options


def main(argv: Sequence[str] | None = None) -> None:
    """Worker entry point: one process per GPU (or CPU rank), started by torchrun."""
    import torch
    import torch.distributed as dist

    options = _arguments(argv)
    backend = "nccl" if options.device == "cuda" else "gloo"
    if options.device == "cuda":
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    dist.init_process_group(backend=backend)
    try:
        table = measure_on_this_rank(
            [name for name in options.collectives.split(",") if name],
            [int(size) for size in options.sizes.split(",") if size],
            options.warmup_iterations,
            options.iterations,
        )
    finally:
        dist.destroy_process_group()
    if table is None:
        return
    if options.network is not None:
        rate, source = network_rate(options.network)
        table["network"] = {"bytes_per_second_per_gpu": rate, "source": source}
    Path(options.output).write_text(json.dumps(table, indent=2))
    if options.store:
        from gpuplan.bench.runner import store_collectives_run

        run_id = store_collectives_run(table, " ".join(sys.argv))
        print(f"stored as run {run_id} (gpuplan bench show {run_id})")


if __name__ == "__main__":
    main()
