"""Time the plan search in-process and print layouts evaluated per second (target: at least
1,000,000/s on the 70B and 405B searches, on one core).

    OPENBLAS_NUM_THREADS=1 taskset -c 0 python benchmarks/search_speed.py

Whole-process timings (start-up, imports, printing) are in benchmarks/end_to_end.py.
"""

from __future__ import annotations

import time

from gpuplan.api import plan_search

CASES = {
    "llama-3.1-70b full fine-tune, 10B tokens, whole catalog": (
        {
            "model": "llama-3.1-70b",
            "method": "full",
            "tokens": "10B",
            "seq_len": 4096,
            "global_batch": 256,
        },
        {},
    ),
    "llama-3.1-405b pre-training, 2T tokens, up to 16,384 GPUs": (
        {
            "model": "llama-3.1-405b",
            "method": "full",
            "tokens": "2T",
            "seq_len": 8192,
            "global_batch": 2048,
        },
        {"max_gpus": 16384, "objective": "time"},
    ),
    "llama-3.1-8b QLoRA, 100M tokens, whole catalog": (
        {
            "model": "llama-3.1-8b",
            "method": "qlora",
            "tokens": "100M",
            "seq_len": 2048,
            "global_batch": 32,
        },
        {},
    ),
}


def timed_search(scenario: dict, options: dict) -> tuple[int, float]:
    """Layouts evaluated and the best of 5 in-process times, after one untimed warm-up."""
    plan_search(scenario, **options)
    timings = []
    for _ in range(5):
        started = time.perf_counter()
        result = plan_search(scenario, **options)
        timings.append(time.perf_counter() - started)
    return int(result["evaluated"]), min(timings)


def main() -> None:
    print(f"{'search':60} {'layouts':>9} {'best of 5':>10} {'layouts/s':>12}")
    for name, (scenario, options) in CASES.items():
        evaluated, best = timed_search(scenario, options)
        print(f"{name:60} {evaluated:9,} {best:9.3f}s {evaluated / best:12,.0f}")


if __name__ == "__main__":
    main()
