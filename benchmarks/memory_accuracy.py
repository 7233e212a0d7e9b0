"""Print every memory validation row next to gpuplan's prediction, and the error summary.

python benchmarks/memory_accuracy.py [--use test|sanity] [--markdown]
"""

from __future__ import annotations

import argparse

from gpuplan.accuracy import memory_comparisons, memory_errors_by, summarize


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--use", default="test", choices=["test", "sanity"])
    arguments = parser.parse_args()
    comparisons = memory_comparisons(arguments.use)
    print(f"{'row':58} {'metric':10} {'measured GiB':>12} {'predicted GiB':>13} {'error':>8}")
    for comparison in comparisons:
        row = comparison.row
        measured = (
            f"{row.measured_bytes / 2**30:.2f}"
            if row.measured_bytes
            else ("OOM" if row.oom else "-")
        )
        if comparison.predicted_bytes is None:
            print(
                f"{row.id:58} {row.metric:10} {measured:>12} {'-':>13} {'':>8}  not modelled: {comparison.error}"
            )
            continue
        predicted = f"{comparison.predicted_bytes / 2**30:.2f}"
        error = comparison.relative_error
        verdict = (
            ""
            if not row.oom
            else ("  OOM predicted" if not comparison.fits else "  WRONG: predicted to fit")
        )
        print(
            f"{row.id:58} {row.metric:10} {measured:>12} {predicted:>13} {'' if error is None else f'{error:+.1%}':>8}{verdict}"
        )
    everything = [c.relative_error for c in comparisons if c.relative_error is not None]
    for column in ("source", "method"):
        print()
        print(
            f"{column:30} {'rows':>5} {'median |err|':>12} {'mean |err|':>11} {'worst':>8} {'bias':>8}"
        )
        groups = memory_errors_by(comparisons, column)
        for name, errors in [*groups.items(), ("all", everything)]:
            summary = summarize(errors)
            print(
                f"{name:30} {summary.count:5} {summary.median_absolute:12.1%} {summary.mean_absolute:11.1%} {summary.worst_absolute:8.1%} {summary.bias:+8.1%}"
            )
    oom = [c for c in comparisons if c.row.oom]
    wrong = [c.row.id for c in oom if c.fits]
    print(
        f"\nout-of-memory rows: {len(oom)}, predicted to fit: {len(wrong)} {wrong if wrong else ''}"
    )


if __name__ == "__main__":
    main()
