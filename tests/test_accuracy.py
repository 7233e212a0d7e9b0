"""Accuracy against published measurements (src/gpuplan/catalog/data/validation/).

The bounds are what the model achieves today on the held-out rows, so that a change that makes
predictions worse fails here; `python benchmarks/memory_accuracy.py` prints the full table.
"""

from __future__ import annotations

import pytest

from gpuplan.accuracy import memory_comparisons, memory_errors_by, summarize

METHOD_BOUNDS = {
    # method: (median absolute error, every row)
    "full": (0.05, 0.15),
    "lora": (0.05, 0.15),
    "qlora": (0.08, None),
}
"""The memory model issue's bounds: median within 5 % and every row within 15 % on full
fine-tuning and LoRA, QLoRA's median within 8 %. Full fine-tuning reaches 3.5 % (worst 8.7 %),
LoRA 3.8 % (worst 13.7 %), QLoRA 3.0 % (``python benchmarks/memory_accuracy.py``)."""
OVERALL_MEDIAN_BOUND = 0.05


@pytest.fixture(scope="module")
def comparisons():
    return memory_comparisons("test")


def test_every_test_row_is_modelled(comparisons):
    unmodelled = [(c.row.id, c.error) for c in comparisons if c.predicted_bytes is None]
    assert unmodelled == []


def test_memory_error_is_bounded(comparisons):
    errors = [c.relative_error for c in comparisons if c.relative_error is not None]
    summary = summarize(errors)
    assert summary.count >= 40
    assert summary.median_absolute <= OVERALL_MEDIAN_BOUND, summary


@pytest.mark.parametrize("method", sorted(METHOD_BOUNDS))
def test_memory_error_per_method_meets_the_issues_bound(comparisons, method):
    median_bound, worst_bound = METHOD_BOUNDS[method]
    summary = summarize(memory_errors_by(comparisons, "method")[method])
    assert summary.count >= 10
    assert summary.median_absolute <= median_bound, summary
    if worst_bound is not None:
        assert summary.worst_absolute <= worst_bound, summary


def test_errors_are_summarised_per_source_and_method(comparisons):
    by_source = memory_errors_by(comparisons, "source")
    by_method = memory_errors_by(comparisons, "method")
    rows = sum(1 for c in comparisons if c.relative_error is not None)
    assert sum(map(len, by_source.values())) == sum(map(len, by_method.values())) == rows
    assert {c.row.source for c in comparisons if c.relative_error is not None} == set(by_source)


def test_out_of_memory_rows_are_not_predicted_to_fit(comparisons):
    oom_rows = [c for c in comparisons if c.row.oom]
    assert len(oom_rows) >= 4
    assert [c.row.id for c in oom_rows if c.fits] == []


# --- throughput ---------------------------------------------------------------------------------

SPEED_MAPE_BOUND = 0.13
DENSE_SPEED_MAPE_BOUND = 0.12
"""Bounds on held-out rows, all and dense only; the model reaches 11.4 % and 11.0 %
(benchmarks/speed_accuracy.py)."""
MOE_SPEED_MAPE_BOUND = 0.20
"""Bound on the ten held-out MoE rows, which the model reaches at 19.3 %; the two B200
Qwen3-235B rows alone are 36 % and 97 % off."""
LEAVE_ONE_SOURCE_OUT_DENSE_BOUND = 0.15
"""Bound on dense rows predicted with residuals fitted without their source; the model reaches
13.6 % (``benchmarks/speed_accuracy.py --leave-one-source-out``)."""


@pytest.fixture(scope="module")
def prepared_test_rows():
    from gpuplan.accuracy import prepare_throughput_rows

    rows, skipped = prepare_throughput_rows("test")
    return rows, skipped


def test_speed_error_on_held_out_rows_is_bounded(prepared_test_rows):
    from gpuplan.accuracy import predict_tokens_per_second_per_gpu, relative_error

    rows, _ = prepared_test_rows
    assert len(rows) >= 150
    errors = [
        relative_error(predict_tokens_per_second_per_gpu(item), item.measured) for item in rows
    ]
    summary = summarize(errors)
    assert summary.mean_absolute <= SPEED_MAPE_BOUND, summary
    assert abs(summary.bias) <= 0.10, summary
    moe_rows = [item.scenario.job.model.is_moe for item in rows]
    dense = [error for error, moe in zip(errors, moe_rows, strict=True) if not moe]
    moe = [error for error, moe in zip(errors, moe_rows, strict=True) if moe]
    assert summarize(dense).mean_absolute <= DENSE_SPEED_MAPE_BOUND
    assert len(moe) >= 10
    assert summarize(moe).mean_absolute <= MOE_SPEED_MAPE_BOUND


@pytest.mark.slow
def test_speed_error_on_sources_left_out_of_the_fit_is_bounded():
    """Every source in turn is left out, the residuals are refitted on the others' fit rows,
    and its rows are predicted: how the model does on a stack it was not fitted on."""
    from gpuplan.accuracy import leave_one_source_out, prepare_throughput_rows, relative_error

    fit_rows, test_rows = prepare_throughput_rows("fit")[0], prepare_throughput_rows("test")[0]
    held_out = leave_one_source_out(fit_rows, fit_rows + test_rows)
    assert len({prediction.item.row.source for prediction in held_out}) >= 10
    dense = [
        relative_error(prediction.predicted, prediction.item.measured)
        for prediction in held_out
        if not prediction.item.scenario.job.model.is_moe
    ]
    assert summarize(dense).mean_absolute <= LEAVE_ONE_SOURCE_OUT_DENSE_BOUND


@pytest.fixture(scope="module")
def errors_against_one_mfu(prepared_test_rows):
    """(source, gpuplan's error, the constant MFU's error) of every test row."""
    from gpuplan.accuracy import (
        constant_mfu_prediction,
        fitted_constant_mfu,
        predict_tokens_per_second_per_gpu,
        relative_error,
    )

    constant = fitted_constant_mfu()
    rows, _ = prepared_test_rows
    return [
        (
            item.row.source,
            relative_error(predict_tokens_per_second_per_gpu(item), item.measured),
            relative_error(constant_mfu_prediction(item, constant), item.measured),
        )
        for item in rows
    ]


def test_speed_model_beats_one_constant_mfu(errors_against_one_mfu):
    model = summarize([error for _, error, _ in errors_against_one_mfu])
    baseline = summarize([error for _, _, error in errors_against_one_mfu])
    assert model.mean_absolute < baseline.mean_absolute - 0.05


def test_speed_model_beats_one_constant_mfu_on_every_source(errors_against_one_mfu):
    """On every source with five or more test rows gpuplan is closer than one constant MFU
    fitted on the same fit rows."""
    by_source: dict[str, tuple[list[float], list[float]]] = {}
    for source, model_error, baseline_error in errors_against_one_mfu:
        model, baseline = by_source.setdefault(source, ([], []))
        model.append(model_error)
        baseline.append(baseline_error)
    judged = {source: pair for source, pair in by_source.items() if len(pair[0]) >= 5}
    assert len(judged) >= 6
    for source, (model, baseline) in judged.items():
        assert summarize(model).mean_absolute < summarize(baseline).mean_absolute, source


def test_fastest_layout_is_ranked_first_in_most_workloads(prepared_test_rows):
    from gpuplan.accuracy import predict_tokens_per_second_per_gpu, ranking_regrets

    rows, _ = prepared_test_rows
    predictions = {item.row.id: predict_tokens_per_second_per_gpu(item) for item in rows}
    regrets = ranking_regrets(rows, predictions)
    assert len(regrets) >= 5
    within = sum(1 for regret in regrets.values() if regret <= 0.03)
    assert within / len(regrets) >= 0.6, regrets


def test_no_fitted_constant_ends_at_a_bound_of_its_range():
    """A constant at a bound means the fit pushed an unmodelled effect into it."""
    from gpuplan.estimate.efficiency import FIT_BOUNDS, default_efficiency

    for name, value in default_efficiency().as_dict().items():
        low, high = FIT_BOUNDS[name]
        margin = 0.02 * (high - low)
        assert low + margin < value < high - margin, (name, value)


def test_a_fit_without_internevo_rows_predicts_internevo_as_megatron():
    """InternEvo's residual has its prior centred on Megatron's: with none of its rows in the
    fit (as when it is left out), it takes Megatron's value, not the prior's 1."""
    from gpuplan.accuracy import fit_efficiency, prepare_throughput_rows

    rows = [
        item
        for item in prepare_throughput_rows("fit")[0]
        if item.row.source == "Korthikanti et al. 2022"
    ]
    assert rows
    fitted = fit_efficiency(rows)
    assert fitted.megatron != pytest.approx(1.0, abs=0.02)
    assert fitted.internevo == pytest.approx(fitted.megatron, rel=1e-3)


def test_recorded_fit_matches_the_constants_the_model_uses():
    from gpuplan.estimate.efficiency import FITTED_FIELDS, fitted_record

    record = fitted_record()
    assert set(record["efficiency"]) == set(FITTED_FIELDS)
    assert record["fit"]["row_count"] >= 300


@pytest.fixture(scope="module")
def every_prepared_row():
    from gpuplan.accuracy import prepare_throughput_rows

    return prepare_throughput_rows("fit")[0] + prepare_throughput_rows("test")[0]


RATIO_BOUNDS = {"precision": 0.8, "compile": 1.0, "scale": 0.93, "gpu": 0.8}
"""Share of one-change pairs whose predicted ratio is within 10 % of the measured one, as
reached today (benchmarks/speed_accuracy.py --pairs --rows lists the misses). The precision
pairs that miss are torchtitan's 8B on TP 8 (fp8 over bf16 measured 1.16x with and without
async TP, predicted 1.33x, fp8 all-gathers included), whose bf16 runs the model also has fast.
The A100 -> H100 pairs that still miss are llm-foundry's MPT-30B at 1k-4k tokens (predicted
13-17 % above the measured 2.2x) and its MPT-760M at 2k tokens and below, whose measured ratios
jump from 1.95x to 2.84x as the sequence shortens; the scale pairs, tinyllama's PCIe data
parallelism, llm-foundry's H100 runs from 8 or 128 to 512 GPUs (measured 9-10 % lower per GPU,
predicted level) and its 1B on A100-40GB, which gains 20 % per GPU from 32 to 64 GPUs."""


@pytest.mark.parametrize("changed", sorted(RATIO_BOUNDS))
def test_ratios_between_runs_that_differ_in_one_thing(every_prepared_row, changed):
    from gpuplan.accuracy import one_change_pairs

    pairs = one_change_pairs(every_prepared_row, changed)
    assert len(pairs) >= 2
    errors = [pair.predicted_ratio() / pair.measured_ratio - 1.0 for pair in pairs]
    within = sum(1 for error in errors if abs(error) <= 0.10) / len(errors)
    assert within >= RATIO_BOUNDS[changed], sorted(errors, key=abs)[-5:]


def test_pairs_change_only_the_named_field(every_prepared_row):
    from gpuplan.accuracy import one_change_pairs

    for pair in one_change_pairs(every_prepared_row, "gpu"):
        assert pair.first.row.gpu != pair.second.row.gpu
        assert pair.first.row.seq_len == pair.second.row.seq_len
        assert pair.first.row.micro_batch == pair.second.row.micro_batch
    for pair in one_change_pairs(every_prepared_row, "scale"):
        assert pair.first.row.num_gpus < pair.second.row.num_gpus
        assert int(pair.first.layout.micro_batches) == int(pair.second.layout.micro_batches)
    for pair in one_change_pairs(every_prepared_row, "compile"):
        assert pair.first.row.fused_loss == pair.second.row.fused_loss
