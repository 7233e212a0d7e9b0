"""Print every throughput validation row next to gpuplan's prediction, per-source errors and bias,
the same table for a one-constant-MFU baseline fitted on the same `fit` rows, and the ranking of
layouts within each workload.

    python benchmarks/speed_accuracy.py [--use test|fit|sanity] [--rows]
    python benchmarks/speed_accuracy.py --leave-one-source-out   # refits once per source (about 1 min)
    python benchmarks/speed_accuracy.py --pairs   # runs that differ in one thing: ratio errors

Leave-one-source-out: for each source, the constants (and the baseline's one MFU) are fitted on
the `fit` rows of every other source, and every row of the left-out source, `fit` and `test`,
is predicted with them: how the model does on a stack and a hardware set it was not fitted on.
"""

from __future__ import annotations

import argparse
from collections import defaultdict

from gpuplan.accuracy import (
    PAIRED_FIELDS,
    PreparedThroughputRow,
    constant_mfu_prediction,
    fitted_constant_mfu,
    leave_one_source_out,
    one_change_pairs,
    predict_tokens_per_second_per_gpu,
    prepare_throughput_rows,
    ranking_regrets,
    relative_error,
    summarize,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--use", default="test", choices=["test", "fit", "sanity"])
    parser.add_argument(
        "--rows", action="store_true", help="print every row (with --pairs: every missed pair)"
    )
    parser.add_argument("--leave-one-source-out", action="store_true")
    parser.add_argument("--pairs", action="store_true")
    arguments = parser.parse_args()
    if arguments.pairs:
        print_pairs(every_pair=arguments.rows)
        return
    if arguments.leave_one_source_out:
        print_leave_one_source_out()
        return
    rows, skipped = prepare_throughput_rows(arguments.use)
    baseline_mfu = fitted_constant_mfu()
    baseline_list: list[float] = []
    if arguments.rows:
        print(
            f"{'row':62} {'measured':>9} {'gpuplan':>9} {'error':>7} {'baseline':>9} {'error':>7}"
        )
    predictions = {}
    for item in rows:
        predicted = predict_tokens_per_second_per_gpu(item)
        baseline = constant_mfu_prediction(item, baseline_mfu)
        predictions[item.row.id] = predicted
        error = relative_error(predicted, item.measured)
        baseline_error = (baseline - item.measured) / item.measured
        baseline_list.append(baseline_error)
        if arguments.rows:
            print(
                f"{item.row.id:62} {item.measured:9.0f} {predicted:9.0f} {error:+7.1%} {baseline:9.0f} {baseline_error:+7.1%}"
            )
    for item in skipped:
        if arguments.rows:
            print(f"{item.row.id:62} not modelled: {item.error}")
    print(
        f"\n{arguments.use} rows, tokens/s per GPU; baseline = one MFU ({baseline_mfu:.1%}) fitted on the fit rows"
    )
    print(
        f"{'source':44} {'rows':>5} {'MAPE':>7} {'median':>7} {'bias':>7} | {'baseline MAPE':>13} {'bias':>7}"
    )
    print_error_table(
        [
            (item, relative_error(predictions[item.row.id], item.measured), baseline_error)
            for item, baseline_error in zip(rows, baseline_list, strict=True)
        ],
        median=True,
    )
    print(f"not modelled: {len(skipped)} rows")
    regrets = ranking_regrets(rows, predictions)
    if regrets:
        within = sum(1 for regret in regrets.values() if regret <= 0.03)
        print(
            f"\nranking: in {within} of {len(regrets)} workloads the layout predicted fastest is within 3% of the fastest measured"
        )
        for workload, regret in sorted(regrets.items(), key=lambda pair: -pair[1])[:10]:
            print(f"  regret {regret:6.1%}  {workload}")


def print_pairs(every_pair: bool = False) -> None:
    """The ratio table; with ``every_pair``, first each pair outside 10 %."""
    rows = prepare_throughput_rows("fit")[0] + prepare_throughput_rows("test")[0]
    if every_pair:
        print(f"{'changed':10} {'first':52} {'second':52} {'measured':>8} {'predicted':>9}")
        for changed in PAIRED_FIELDS:
            for pair in one_change_pairs(rows, changed):
                predicted = pair.predicted_ratio()
                if abs(predicted / pair.measured_ratio - 1.0) > 0.10:
                    print(
                        f"{changed:10} {pair.first.row.id:52} {pair.second.row.id:52} "
                        f"{pair.measured_ratio:8.3f} {predicted:9.3f}"
                    )
        print()
    print("pairs of runs that differ in one thing: measured and predicted ratio (second / first)")
    print(f"{'changed':10} {'pairs':>5} {'within 10%':>10} {'median error':>12} {'worst':>8}")
    for changed in PAIRED_FIELDS:
        pairs = one_change_pairs(rows, changed)
        errors = [pair.predicted_ratio() / pair.measured_ratio - 1.0 for pair in pairs]
        if not errors:
            print(f"{changed:10} {0:5}")
            continue
        within = sum(1 for error in errors if abs(error) <= 0.10)
        median = sorted(abs(error) for error in errors)[len(errors) // 2]
        worst = max(errors, key=abs)
        print(f"{changed:10} {len(pairs):5} {within:10} {median:12.1%} {worst:+8.1%}")


def print_leave_one_source_out() -> None:
    fit_rows, _ = prepare_throughput_rows("fit")
    test_rows, _ = prepare_throughput_rows("test")
    held_out = leave_one_source_out(fit_rows, fit_rows + test_rows)
    print("leave-one-source-out: fitted on the fit rows of the other sources, tokens/s per GPU")
    print(
        f"{'left out':44} {'rows':>5} {'MAPE':>7} {'bias':>7} | {'baseline MAPE':>13} {'bias':>7}"
    )
    print_error_table(
        [
            (
                p.item,
                relative_error(p.predicted, p.item.measured),
                relative_error(p.baseline, p.item.measured),
            )
            for p in held_out
        ],
        median=False,
    )


def error_line(label: str, errors: list[float], baseline: list[float] | None, median: bool) -> str:
    """One table line: rows, MAPE, (median,) bias, and the baseline's MAPE and bias."""
    summary = summarize(errors)
    line = f"{label:44} {summary.count:5} {summary.mean_absolute:7.1%}"
    if median:
        line += f" {summary.median_absolute:7.1%}"
    line += f" {summary.bias:+7.1%}"
    if baseline is not None:
        base = summarize(baseline)
        line += f" | {base.mean_absolute:13.1%} {base.bias:+7.1%}"
    return line


def print_error_table(
    compared: list[tuple[PreparedThroughputRow, float, float]], median: bool
) -> None:
    """Per source, all rows, then dense and MoE rows: gpuplan's errors against the baseline's."""
    by_source: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for item, error, baseline in compared:
        by_source[item.row.source].append((error, baseline))
    for source, pairs in sorted(by_source.items()):
        print(error_line(source, [e for e, _ in pairs], [b for _, b in pairs], median))
    print(error_line("all", [e for _, e, _ in compared], [b for _, _, b in compared], median))
    for label, moe in (("dense", False), ("MoE", True)):
        errors = [e for item, e, _ in compared if item.scenario.job.model.is_moe == moe]
        if errors:
            print(error_line(label, errors, None, median))


if __name__ == "__main__":
    main()
