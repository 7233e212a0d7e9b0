"""Fit the speed model's efficiency constants on the `fit` rows of the throughput table.

    python benchmarks/fit_speed.py            # fit, print the result, write catalog/data/efficiency.toml
    python benchmarks/fit_speed.py --dry-run  # fit and print only

Minimizes the robust (soft-L1) sum of squared log errors of tokens/s per GPU over the `fit` rows,
each source weighted equally so that llm-foundry's 186 rows do not drown the others. The `test`
rows are never read. Needs SciPy (`pip install scipy`).
"""

from __future__ import annotations

import argparse
import datetime
import math
from collections import Counter
from pathlib import Path

import numpy as np

from gpuplan.accuracy import (
    predict_tokens_per_second_per_gpu,
    prepare_throughput_rows,
    summarize,
)
from gpuplan.estimate.efficiency import FITTED_FIELDS, Efficiency

BOUNDS = {
    "matmul_ceiling_share": (0.3, 1.0),
    "matmul_half_dimension": (1.0, 2048.0),
    "attention_efficiency": (0.1, 0.9),
    "memory_traffic_factor": (0.5, 20.0),
    "memory_bandwidth_efficiency": (0.8, 0.8),
    "layer_overhead_seconds": (0.0, 2e-3),
    "tensor_parallel_exposed": (0.0, 1.0),
    "data_parallel_overlap": (0.0, 1.0),
}
"""Physical ranges; HBM efficiency is held at 0.8 (STREAM-like copies reach 80-90 % of peak)."""

OUTPUT = Path(__file__).resolve().parents[1] / "src/gpuplan/catalog/data/efficiency.toml"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dry-run", action="store_true")
    arguments = parser.parse_args()
    from scipy.optimize import least_squares

    rows, skipped = prepare_throughput_rows("fit")
    sources = Counter(item.row.source for item in rows)
    weights = np.array([1.0 / math.sqrt(sources[item.row.source]) for item in rows])
    free = [name for name in FITTED_FIELDS if BOUNDS[name][0] < BOUNDS[name][1]]
    fixed = {name: BOUNDS[name][0] for name in FITTED_FIELDS if name not in free}
    start = Efficiency()

    def efficiency_of(vector: np.ndarray) -> Efficiency:
        return start.with_values(**dict(zip(free, map(float, vector), strict=True)), **fixed)

    def residuals(vector: np.ndarray) -> np.ndarray:
        efficiency = efficiency_of(vector)
        predicted = np.array([predict_tokens_per_second_per_gpu(item, efficiency) for item in rows])
        measured = np.array([item.measured for item in rows])
        return weights * np.log(predicted / measured)

    initial = np.array(
        [min(max(getattr(start, name), BOUNDS[name][0]), BOUNDS[name][1]) for name in free]
    )
    lower = np.array([BOUNDS[name][0] for name in free])
    upper = np.array([BOUNDS[name][1] for name in free])
    scale = np.maximum(np.abs(initial), 1e-6)
    solution = least_squares(
        residuals, initial, bounds=(lower, upper), loss="soft_l1", f_scale=0.1, x_scale=scale
    )
    fitted = efficiency_of(solution.x)
    errors = [
        (predict_tokens_per_second_per_gpu(item, fitted) - item.measured) / item.measured
        for item in rows
    ]
    summary = summarize(errors)
    print(f"fitted on {len(rows)} rows from {len(sources)} sources ({len(skipped)} not modelled)")
    for name, value in fitted.as_dict().items():
        print(f"  {name:30} {value:.6g}")
    print(
        f"fit rows: MAPE {summary.mean_absolute:.1%}, median {summary.median_absolute:.1%}, bias {summary.bias:+.1%}"
    )
    if arguments.dry_run:
        return
    lines = [
        "# Fitted constants of the speed model (gpuplan.estimate.efficiency.Efficiency).",
        "# Written by `python benchmarks/fit_speed.py`; do not edit by hand.",
        "[fit]",
        f'date = "{datetime.date.today().isoformat()}"',
        'rows = "use = fit rows of catalog/data/validation/throughput.csv"',
        f"row_count = {len(rows)}",
        f"sources = {len(sources)}",
        'method = "scipy.optimize.least_squares, soft-L1 loss on log(predicted/measured), sources weighted equally"',
        f"fit_mean_absolute_percentage_error = {summary.mean_absolute:.4f}",
        f"fit_bias = {summary.bias:.4f}",
        "",
        "[efficiency]",
    ]
    lines += [f"{name} = {value:.6g}" for name, value in fitted.as_dict().items()]
    temporary = OUTPUT.with_suffix(".toml.tmp")
    temporary.write_text("\n".join(lines) + "\n", encoding="utf-8")
    temporary.replace(OUTPUT)
    print(f"wrote {OUTPUT}")


if __name__ == "__main__":
    main()
