"""Collective bus bandwidth (all-reduce, all-gather, reduce-scatter, all-to-all) over sizes.

Definitions from NVIDIA/nccl-tests ``doc/PERFORMANCE.md``: ``algbw = S / t`` and ``busbw =
algbw x factor``, with ``S`` the whole array (for all-gather and reduce-scatter the gathered
or scattered total, for all-to-all ``count x ranks x typesize``) and the factor 2(n-1)/n for
all-reduce, (n-1)/n for the other three. GB/s are decimal.

Timing follows ml-engineering's ``all_reduce_bench.py`` (blocking, like ``nccl-tests -z 1``):
per iteration a barrier, a start event, the collective, an end event, a synchronise; warm-up
iterations first, the per-rank mean duration averaged across ranks as nccl-tests ``-a 1``
does. Run this module on every rank with ``torchrun -m gpuplan.bench.collectives``; rank 0
gathers the results and writes them as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all")
GPU_SIZES = tuple(2**power for power in range(15, 33, 2))
"""32 KiB .. 4 GiB in steps of 4x (ml-engineering sweeps 32 KiB .. 16 GiB)."""
CPU_SIZES = (2**16, 2**20)
SUMMARY_SIZE_FLOOR = 2**30
"""The summary busbw is the largest payload's (never an average over the sweep, which is the
trap of nccl-tests' "Avg bus bandwidth"); payloads below 1 GiB do not saturate links."""


def bus_bandwidth_factor(collective: str, ranks: int) -> float:
    """nccl-tests' busbw factor for ``collective`` on ``ranks`` ranks."""
    if ranks < 1:
        raise ValueError("ranks must be at least 1")
    if collective == "all_reduce":
        return 2 * (ranks - 1) / ranks
    if collective in ("all_gather", "reduce_scatter", "all_to_all"):
        return (ranks - 1) / ranks
    raise ValueError(f"unknown collective {collective!r}")


def per_gpu_network_rate(bus_bandwidth: float, nodes: int, ranks: int) -> float:
    """The per-GPU NIC rate implied by a multi-node busbw: busbw x (k-1)/(n-1) for k nodes and
    n ranks (ml-engineering network/README.md, hierarchical algorithm assumed)."""
    if nodes < 2 or ranks < 2:
        return 0.0
    return bus_bandwidth * (nodes - 1) / (ranks - 1)


def _operation(dist: Any, torch: Any, collective: str, size: int, ranks: int, device: str) -> Any:
    """Buffers for a collective of total size ``size`` bytes, and a callable that runs it."""
    elements = max(ranks, size // 4 // ranks * ranks)
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
            try:
                operation = _operation(dist, torch, collective, size, ranks, device)
            except RuntimeError as error:
                rows.append({"collective": collective, "size_bytes": size, "error": str(error)})
                continue
            for _ in range(warmup_iterations):
                operation()
            timer.synchronize()
            durations = []
            for _ in range(iterations):
                dist.barrier()
                durations.extend(timer.time_iterations(operation, 1))
            mean_seconds = statistics.fmean(durations)
            per_rank = [0.0] * ranks
            dist.all_gather_object(per_rank, mean_seconds)
            seconds = statistics.fmean(per_rank)
            payload = max(ranks, size // 4 // ranks * ranks) * 4
            algorithm_bandwidth = payload / seconds
            rows.append(
                {
                    "collective": collective,
                    "size_bytes": payload,
                    "seconds": seconds,
                    "slowest_rank_seconds": max(per_rank),
                    "algorithm_bandwidth_bytes_per_second": algorithm_bandwidth,
                    "bus_bandwidth_bytes_per_second": algorithm_bandwidth
                    * bus_bandwidth_factor(collective, ranks),
                }
            )
    if rank != 0:
        return None
    return {
        "ranks": ranks,
        "nodes": max(1, ranks // max(1, local_ranks)),
        "ranks_per_node": local_ranks,
        "backend": dist.get_backend(),
        "warmup_iterations": warmup_iterations,
        "iterations": iterations,
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


def run_on_this_node(
    ranks: int,
    device: str,
    sizes: Sequence[int],
    collectives: Sequence[str] = COLLECTIVES,
    warmup_iterations: int = 5,
    iterations: int = 20,
    timeout_seconds: float = 600,
) -> dict[str, Any]:
    """Start ``ranks`` worker processes on this machine (what ``torchrun --standalone`` would
    set up: RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR/PORT) and return rank 0's table."""
    with tempfile.TemporaryDirectory(prefix="gpuplan-collectives-") as folder:
        output = Path(folder) / "collectives.json"
        port = _free_port()
        arguments = [
            sys.executable,
            "-m",
            "gpuplan.bench.collectives",
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
        processes = []
        for rank in range(ranks):
            environment = {
                **os.environ,
                "RANK": str(rank),
                "LOCAL_RANK": str(rank),
                "WORLD_SIZE": str(ranks),
                "LOCAL_WORLD_SIZE": str(ranks),
                "MASTER_ADDR": "127.0.0.1",
                "MASTER_PORT": str(port),
            }
            processes.append(
                subprocess.Popen(
                    arguments,
                    env=environment,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            )
        deadline = time.monotonic() + timeout_seconds
        errors = []
        for process in processes:
            try:
                _, stderr = process.communicate(timeout=max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                _, stderr = process.communicate()
            if process.returncode != 0:
                errors.append(stderr.strip().splitlines()[-1] if stderr.strip() else "no output")
        if errors or not output.exists():
            raise RuntimeError("collective workers failed: " + "; ".join(errors or ["no result"]))
        result: dict[str, Any] = json.loads(output.read_text())
        return result


def launch_commands(
    nodes: int, gpus_per_node: int, output: str = "collectives.json"
) -> dict[str, str]:
    """torchrun and Slurm command lines for a multi-node run; run them on every node."""
    worker = f"-m gpuplan.bench.collectives --device cuda --output {output} --store"
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
        "--store", action="store_true", help="also store the run in gpuplan's database"
    )
    return parser.parse_args(argv)


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
    Path(options.output).write_text(json.dumps(table, indent=2))
    if options.store:
        from gpuplan.bench.runner import store_collectives_run

        run_id = store_collectives_run(table, " ".join(sys.argv))
        print(f"stored as run {run_id} (gpuplan bench show {run_id})")


if __name__ == "__main__":
    main()
