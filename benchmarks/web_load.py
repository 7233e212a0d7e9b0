"""Load test of ``gpuplan serve`` on loopback: mixed requests from many clients while the
largest plan the server accepts runs again and again, and a health probe that must stay fast.

    python benchmarks/web_load.py                      # 1,000 requests, 50 clients, 1 worker
    python benchmarks/web_load.py --workers 2 --requests 2000

It starts the real server (``gpuplan serve`` on a free port), waits for ``/api/health``, then
runs three things at once until the mixed requests are done:

- ``--clients`` clients sending ``--requests`` requests in all, drawn with a fixed seed from
  ``MIX`` (catalog reads, estimates, quotes, small plans, the plan page);
- one client posting ``LARGEST_PLAN``, the largest search the catalog's models give under the
  web form's limits (qwen3-235b-a22b, 2^15 sequences a step, up to 4,096 GPUs: 1.29M layouts);
- a probe of ``GET /api/health`` every 20 ms.

It prints p50/p95/max per kind of request and for the probe while the large plan was running,
and exits 1 if any request failed or the probe's p95 reached ``--probe-p95-ms`` (100 ms)."""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import socket
import statistics
import subprocess
import sys
import time
from typing import Any

import httpx

STUDENT = {"model": "llama-3.1-8b", "method": "qlora", "tokens": "100M", "seq_len": 2048}
MIX: list[tuple[str, int, str, str, dict[str, Any] | None]] = [
    ("health", 20, "GET", "/api/health", None),
    ("gpus", 15, "GET", "/api/gpus", None),
    ("models", 10, "GET", "/api/models", None),
    ("offers", 10, "GET", "/api/offers?gpu=H100", None),
    ("page", 10, "GET", "/plan", None),
    (
        "estimate",
        15,
        "POST",
        "/api/estimate",
        {**STUDENT, "gpu": "rtx-4090-24gb", "count": 1, "strategy": "zero=0"},
    ),
    ("quote", 10, "POST", "/api/quote", {"offer": "xingyu-a100-40gb-x4", "duration": "40d"}),
    ("plan", 10, "POST", "/api/plan", {**STUDENT, "max_gpus": 8}),
]
"""(kind, weight, method, path, JSON body)."""
LARGEST_PLAN = {
    "model": "qwen3-235b-a22b",
    "tokens": "15T",
    "seq_len": 4096,
    "global_batch": 32768,
    "max_gpus": 4096,
}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def _line(kind: str, seconds: list[float], errors: int) -> str:
    if not seconds:
        return f"{kind:<14} {0:>6} {errors:>6}"
    milliseconds = [1000 * value for value in seconds]
    return (
        f"{kind:<14} {len(seconds):>6} {errors:>6} {statistics.median(milliseconds):>9.1f} "
        f"{_percentile(milliseconds, 0.95):>9.1f} {max(milliseconds):>9.1f}"
    )


async def _wait_until_up(base: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    async with httpx.AsyncClient(base_url=base) as client:
        while time.monotonic() < deadline:
            try:
                if (await client.get("/api/health")).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.1)
    raise SystemExit(f"the server at {base} did not come up in {seconds:.0f} s")


async def _load(base: str, requests: int, clients: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    kinds = [entry for entry in MIX for _ in range(entry[1])]
    queue: asyncio.Queue[tuple[str, str, str, dict[str, Any] | None]] = asyncio.Queue()
    for _ in range(requests):
        kind, _, method, path, body = rng.choice(kinds)
        queue.put_nowait((kind, method, path, body))
    timings: dict[str, list[float]] = {}
    errors: dict[str, int] = {}
    failures: list[str] = []
    large_plans: list[float] = []
    probe_while_large: list[float] = []
    probe_all: list[float] = []
    large_running = False
    done = asyncio.Event()
    limits = httpx.Limits(max_connections=clients + 2, max_keepalive_connections=clients + 2)
    timeout = httpx.Timeout(120)

    async def client_loop(http: httpx.AsyncClient) -> None:
        while not queue.empty():
            kind, method, path, body = queue.get_nowait()
            started = time.perf_counter()
            try:
                response = await http.request(method, path, json=body)
                ok = response.status_code == 200
                if not ok:
                    failures.append(
                        f"{kind} {path}: HTTP {response.status_code} {response.text[:120]}"
                    )
            except httpx.HTTPError as error:
                ok = False
                failures.append(f"{kind} {path}: {type(error).__name__} {error}")
            timings.setdefault(kind, []).append(time.perf_counter() - started)
            errors[kind] = errors.get(kind, 0) + (not ok)

    async def large_loop(http: httpx.AsyncClient) -> None:
        nonlocal large_running
        while not done.is_set():
            large_running = True
            started = time.perf_counter()
            response = await http.post("/api/plan", json=LARGEST_PLAN)
            large_running = False
            if response.status_code != 200:
                failures.append(f"largest plan: HTTP {response.status_code} {response.text[:200]}")
                errors["largest plan"] = errors.get("largest plan", 0) + 1
            large_plans.append(time.perf_counter() - started)

    async def probe_loop(http: httpx.AsyncClient) -> None:
        while not done.is_set():
            running = large_running
            started = time.perf_counter()
            response = await http.get("/api/health")
            elapsed = time.perf_counter() - started
            if response.status_code != 200:
                failures.append(f"probe: HTTP {response.status_code}")
                errors["probe"] = errors.get("probe", 0) + 1
            probe_all.append(elapsed)
            if running and large_running:
                probe_while_large.append(elapsed)
            await asyncio.sleep(0.02)

    started = time.perf_counter()
    async with (
        httpx.AsyncClient(base_url=base, limits=limits, timeout=timeout) as http,
        httpx.AsyncClient(base_url=base, timeout=timeout) as large_http,
        httpx.AsyncClient(base_url=base, timeout=timeout) as probe_http,
    ):
        background = [
            asyncio.create_task(large_loop(large_http)),
            asyncio.create_task(probe_loop(probe_http)),
        ]
        await asyncio.sleep(0.5)
        await asyncio.gather(*(client_loop(http) for _ in range(clients)))
        done.set()
        await asyncio.gather(*background)
    return {
        "seconds": time.perf_counter() - started,
        "timings": timings,
        "errors": errors,
        "failures": failures,
        "large_plans": large_plans,
        "probe_while_large": probe_while_large,
        "probe_all": probe_all,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--probe-p95-ms", type=float, default=100.0)
    arguments = parser.parse_args(argv)
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [sys.executable, "-c", "from gpuplan.cli.app import main; main()", "serve",
         "--port", str(port), "--workers", str(arguments.workers)],
        stdout=subprocess.DEVNULL,
        env={**os.environ, "GPUPLAN_CACHE_DIR": os.environ.get("GPUPLAN_CACHE_DIR", "off")},
    )  # fmt: skip
    try:
        asyncio.run(_wait_until_up(base))
        result = asyncio.run(_load(base, arguments.requests, arguments.clients, arguments.seed))
    finally:
        server.terminate()
        server.wait(10)
    print(
        f"{arguments.requests} requests from {arguments.clients} clients, "
        f"{arguments.workers} worker(s), {os.cpu_count()} cores: {result['seconds']:.1f} s"
    )
    print(f"{'request':<14} {'count':>6} {'errors':>6} {'p50 ms':>9} {'p95 ms':>9} {'max ms':>9}")
    for kind in [entry[0] for entry in MIX]:
        print(_line(kind, result["timings"].get(kind, []), result["errors"].get(kind, 0)))
    everything = [value for values in result["timings"].values() for value in values]
    print(
        _line("all mixed", everything, sum(result["errors"].get(k, 0) for k in result["timings"]))
    )
    print(_line("largest plan", result["large_plans"], result["errors"].get("largest plan", 0)))
    print(_line("probe (all)", result["probe_all"], result["errors"].get("probe", 0)))
    probe = result["probe_while_large"]
    print(_line("probe (plan)", probe, 0))
    for failure in result["failures"][:10]:
        print("failed:", failure)
    probe_p95 = 1000 * _percentile(probe, 0.95) if probe else float("inf")
    failed = bool(result["failures"]) or probe_p95 >= arguments.probe_p95_ms
    verdict = "FAIL" if failed else "PASS"
    print(
        f"{verdict}: {len(result['failures'])} failed requests; health probe p95 "
        f"{probe_p95:.1f} ms while the largest plan ran (limit {arguments.probe_p95_ms:.0f} ms)"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
