"""Time gpuplan as a user runs it: whole processes, from start to the printed answer.

Each command runs `--repeat` times (median shown) on one core with one BLAS thread, beside the
bare interpreter's floor; then each plan's search is timed in-process and its layouts/s printed.

    python benchmarks/end_to_end.py [--repeat 5] [--core 0]

Targets: `gpuplan --help` < 0.15 s, `import gpuplan` < 0.3 s, the 70B preset < 0.5 s, the
405B pre-training plan < 1.0 s, >= 1,000,000 layouts/s on the 70B and 405B searches.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

GPUPLAN = [sys.executable, "-c", "from gpuplan.cli.app import main; main()"]

PROCESSES: dict[str, list[str]] = {
    "python (bare interpreter)": [sys.executable, "-c", "pass"],
    "import gpuplan": [sys.executable, "-c", "import gpuplan"],
    "gpuplan --help": [*GPUPLAN, "--help"],
    "gpuplan gpus": [*GPUPLAN, "gpus"],
    "gpuplan plan --preset student (8B QLoRA)": [*GPUPLAN, "plan", "--preset", "student"],
    "gpuplan plan --preset startup (70B)": [*GPUPLAN, "plan", "--preset", "startup"],
    "gpuplan plan --preset enterprise (405B)": [*GPUPLAN, "plan", "--preset", "enterprise"],
    "gpuplan plan 405B pre-training, 15T tokens": [
        *GPUPLAN,
        "plan",
        "--model",
        "llama-3.1-405b",
        "--method",
        "full",
        "--tokens",
        "15T",
        "--seq-len",
        "8192",
        "--global-batch",
        "2048",
        "--max-gpus",
        "16384",
        "--objective",
        "time",
    ],
}

SEARCHES: dict[str, tuple[dict[str, object], dict[str, object]]] = {
    "405B pre-training, 15T tokens": (
        {
            "model": "llama-3.1-405b",
            "method": "full",
            "tokens": "15T",
            "seq_len": 8192,
            "global_batch": 2048,
        },
        {"max_gpus": 16384, "objective": "time"},
    ),
}


def single_core_environment(core: int) -> tuple[dict[str, str], object]:
    """Environment and pre-exec hook that pin a child to one core and one BLAS thread."""
    environment = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")

    def pin() -> None:
        if hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, {core})

    return environment, pin


def median_seconds(command: list[str], repeat: int, core: int) -> float:
    """Median wall time of `repeat` runs of a process (after one untimed warm-up run)."""
    environment, pin = single_core_environment(core)
    timings = []
    for attempt in range(repeat + 1):
        started = time.perf_counter()
        subprocess.run(
            command,
            env=environment,
            preexec_fn=pin,  # type: ignore[arg-type]
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
        )
        if attempt:
            timings.append(time.perf_counter() - started)
    return statistics.median(timings)


def layouts_per_second() -> dict[str, tuple[int, float]]:
    """Layouts evaluated and best-of-5 in-process seconds for each preset's search and SEARCHES."""
    from gpuplan.presets import PRESETS
    from search_speed import timed_search

    cases = {
        f"preset {name}": (preset["scenario"], preset["options"])
        for name, preset in PRESETS.items()
    }
    cases.update(SEARCHES)
    return {name: timed_search(scenario, options) for name, (scenario, options) in cases.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--core", type=int, default=0)
    arguments = parser.parse_args()
    print(f"whole processes, median of {arguments.repeat}, core {arguments.core}")
    floor = median_seconds(PROCESSES["python (bare interpreter)"], arguments.repeat, arguments.core)
    print(f"  {'python (bare interpreter)':46} {floor:6.3f} s")
    for name, command in list(PROCESSES.items())[1:]:
        seconds = median_seconds(command, arguments.repeat, arguments.core)
        print(f"  {name:46} {seconds:6.3f} s   (floor + {seconds - floor:.3f} s)")
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {arguments.core})
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    print("searches in-process, best of 5")
    for name, (evaluated, seconds) in layouts_per_second().items():
        print(f"  {name:46} {evaluated:9,} layouts {seconds:6.3f} s {evaluated / seconds:12,.0f}/s")


if __name__ == "__main__":
    main()
