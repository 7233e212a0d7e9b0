"""Print every memory validation row next to gpuplan's prediction, and the error summary.

python benchmarks/memory_accuracy.py [--use test|sanity] [--markdown]
"""

from __future__ import annotations

import argparse

from gpuplan.accuracy import memory_comparisons, summarize


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--use", default="test", choices=["test", "sanity"])
    arguments = parser.parse_args()
    comparisons = memory_comparisons(arguments.use)
    print(f"{'row':58} {'metric':10} {'measured GiB':>12} {'predicted GiB':>13} {'error':>8}")
    errors_by_source: dict[str, list[float]] = {}
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
        if error is not None:
            errors_by_source.setdefault(row.source, []).append(error)
    print()
    print(
        f"{'source':30} {'rows':>5} {'median |err|':>12} {'mean |err|':>11} {'worst':>8} {'bias':>8}"
    )
    everything: list[float] = []
    for source, errors in sorted(errors_by_source.items()):
        summary = summarize(errors)
        everything.extend(errors)
        print(
            f"{source:30} {summary.count:5} {summary.median_absolute:12.1%} {summary.mean_absolute:11.1%} {summary.worst_absolute:8.1%} {summary.bias:+8.1%}"
        )
    total = summarize(everything)
    print(
        f"{'all':30} {total.count:5} {total.median_absolute:12.1%} {total.mean_absolute:11.1%} {total.worst_absolute:8.1%} {total.bias:+8.1%}"
    )


if __name__ == "__main__":
    main()
