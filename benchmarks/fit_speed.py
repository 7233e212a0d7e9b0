"""Fit the speed model's per-stack residuals on the `fit` rows of the throughput table.

    python benchmarks/fit_speed.py            # fit, print the result, write catalog/data/efficiency.toml
    python benchmarks/fit_speed.py --dry-run  # fit and print only

Minimizes the robust (soft-L1) sum of squared log errors of tokens/s per GPU over the `fit` rows,
each source weighted equally so that llm-foundry's 186 rows do not drown the others, with a
log-normal prior on each residual (efficiency.FIT_PRIOR). The `test` rows are never read. Needs SciPy (`pip install scipy`).
"""

from __future__ import annotations

import argparse
import datetime
from collections import Counter
from pathlib import Path

from gpuplan.accuracy import (
    fit_efficiency,
    leave_one_source_out,
    predict_tokens_per_second_per_gpu,
    prepare_throughput_rows,
    row_class,
    summarize,
)
from gpuplan.estimate.interval import interval_records

OUTPUT = Path(__file__).resolve().parents[1] / "src/gpuplan/catalog/data/efficiency.toml"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dry-run", action="store_true")
    arguments = parser.parse_args()
    rows, skipped = prepare_throughput_rows("fit")
    sources = Counter(item.row.source for item in rows)
    fitted = fit_efficiency(rows)
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
    test_rows, _ = prepare_throughput_rows("test")
    held_out = leave_one_source_out(rows, rows + test_rows)
    intervals = interval_records(
        (row_class(p.item), p.item.measured / p.predicted) for p in held_out
    )
    print(f"intervals: {len(intervals)} classes from {len(held_out)} held-out predictions")
    lines = [
        "# Fitted constants of the speed model (gpuplan.estimate.efficiency.Efficiency).",
        "# Written by `python benchmarks/fit_speed.py`; do not edit by hand.",
        "[fit]",
        f'date = "{datetime.date.today().isoformat()}"',
        'rows = "use = fit rows of catalog/data/validation/throughput.csv"',
        f"row_count = {len(rows)}",
        f"sources = {len(sources)}",
        "method = \"scipy.optimize.least_squares, soft-L1 loss on log(predicted/measured), sources weighted equally, log-normal prior (1, 1) per residual, internevo's centred on megatron's\"",
        f"fit_mean_absolute_percentage_error = {summary.mean_absolute:.4f}",
        f"fit_bias = {summary.bias:.4f}",
        "",
        "[efficiency]",
    ]
    lines += [f"{name} = {value:.6g}" for name, value in fitted.as_dict().items()]
    lines += [
        "",
        "# 80 % intervals of measured / predicted tokens/s, per class of comparable rows, from",
        "# leave-one-source-out predictions of every fit and test row (gpuplan.estimate.interval).",
    ]
    for record in intervals:
        lines += ["", "[[interval]]"]
        lines += [
            f"{key} = {value!r}".replace("'", '"') if isinstance(value, str) else f"{key} = {value}"
            for key, value in record.items()
        ]
    temporary = OUTPUT.with_suffix(".toml.tmp")
    temporary.write_text("\n".join(lines) + "\n", encoding="utf-8")
    temporary.replace(OUTPUT)
    print(f"wrote {OUTPUT}")


if __name__ == "__main__":
    main()
