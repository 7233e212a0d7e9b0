"""Predictions next to published measurements: the error tables behind the accuracy tests.

Throughput rows are compared in tokens per second per GPU: as published, or recovered from the
source's TFLOP/s or MFU under its own FLOP convention.

Each validation row (``catalog/validation.py``) becomes a scenario; the prediction that matches the
source's metric is compared with the measurement. Memory: ``allocated`` and ``active`` rows are
compared with ``allocated_bytes`` (``torch.cuda.max_memory_allocated``), ``reserved`` rows with
``reserved_bytes``, ``nvidia-smi`` rows with ``peak_bytes``, and ``unknown`` rows with
``reserved_bytes``, the figure training logs usually print.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, replace
from statistics import median
from typing import Any

from gpuplan.api import estimate
from gpuplan.catalog.validation import MemoryRow, ThroughputRow, memory_rows, throughput_rows
from gpuplan.errors import InputError
from gpuplan.estimate.efficiency import STACK_OF_FRAMEWORK, Efficiency
from gpuplan.estimate.flops import (
    CONVENTIONS,
    convention_flops_per_token,
    megatron_flops_per_token,
    training_flops_per_token,
)
from gpuplan.estimate.time import estimate_step_time
from gpuplan.scenario import Scenario, parse_scenario
from gpuplan.strategy import Layout

PREDICTION_FOR_METRIC = {
    "allocated": "allocated_bytes",
    "active": "allocated_bytes",
    "reserved": "reserved_bytes",
    "nvidia-smi": "peak_bytes",
    "unknown": "reserved_bytes",
}


def relative_error(predicted: float | None, measured: float | None) -> float | None:
    """``(predicted - measured) / measured``; ``None`` when either is missing."""
    if predicted is None or not measured:
        return None
    return (predicted - measured) / measured


@dataclass(frozen=True)
class MemoryComparison:
    """One row: measured and predicted bytes (or the OOM verdict), with the relative error."""

    row: MemoryRow
    predicted_bytes: float | None
    fits: bool | None
    error: str = ""

    @property
    def relative_error(self) -> float | None:
        return relative_error(self.predicted_bytes, self.row.measured_bytes)


def compare_memory_row(row: MemoryRow) -> MemoryComparison:
    """Predict one row; a row the model cannot express is reported with the reason."""
    try:
        scenario = parse_scenario(row.scenario())
        if row.capacity_bytes and scenario.cluster is not None:
            gpu = replace(scenario.cluster.gpu, memory_bytes=row.capacity_bytes)
            scenario = replace(scenario, cluster=replace(scenario.cluster, gpu=gpu))
        result = estimate(scenario)
    except (InputError, ValueError) as failure:
        return MemoryComparison(row, None, None, str(failure))
    memory = result["memory"]
    return MemoryComparison(
        row, float(memory[PREDICTION_FOR_METRIC[row.metric]]), bool(memory["fits"])
    )


def memory_comparisons(use: str | None = "test") -> list[MemoryComparison]:
    return [compare_memory_row(row) for row in memory_rows(use)]


def memory_errors_by(comparisons: list[MemoryComparison], column: str) -> dict[str, list[float]]:
    """Relative errors of the measured rows grouped by a row column (``source``, ``method``)."""
    groups: dict[str, list[float]] = {}
    for comparison in comparisons:
        error = comparison.relative_error
        if error is not None:
            groups.setdefault(str(getattr(comparison.row, column)), []).append(error)
    return dict(sorted(groups.items()))


@dataclass(frozen=True)
class ErrorSummary:
    count: int
    median_absolute: float
    mean_absolute: float
    worst_absolute: float
    bias: float


def summarize(errors: list[float]) -> ErrorSummary:
    """Median, mean and worst absolute relative error, and the mean signed error (bias)."""
    if not errors:
        return ErrorSummary(0, float("nan"), float("nan"), float("nan"), float("nan"))
    absolute = [abs(error) for error in errors]
    return ErrorSummary(
        count=len(errors),
        median_absolute=median(absolute),
        mean_absolute=sum(absolute) / len(absolute),
        worst_absolute=max(absolute),
        bias=sum(errors) / len(errors),
    )


# --- throughput ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class PreparedThroughputRow:
    """A throughput row turned into the model's inputs once, so a fit can re-run it cheaply."""

    row: ThroughputRow
    scenario: Scenario
    layout: Layout
    measured: float


@dataclass(frozen=True)
class ThroughputComparison:
    row: ThroughputRow
    measured: float | None
    predicted: float | None
    error: str = ""

    @property
    def relative_error(self) -> float | None:
        return relative_error(self.predicted, self.measured)


def measured_tokens_per_second_per_gpu(row: ThroughputRow) -> float | None:
    """The row's tokens/s per GPU: as published, or recovered from the published TFLOP/s or MFU
    with the source's own FLOP convention (``flops.CONVENTIONS``; Megatron's 2021 figures count
    the recomputed forward, the 96 formula)."""
    if row.tokens_per_second_per_gpu:
        return row.tokens_per_second_per_gpu
    definition = row.flops_definition
    if definition not in CONVENTIONS or row.seq_len is None:
        return None
    model = row.model_spec()
    if definition == "megatron":
        per_token = float(
            megatron_flops_per_token(model, row.seq_len, full_recompute=row.recompute == "full")
        )
    else:
        per_token = float(convention_flops_per_token(definition, model, row.seq_len))
    if row.tflops_per_gpu:
        return row.tflops_per_gpu * 1e12 / per_token
    if row.mfu and row.peak_flops_assumed:
        return row.mfu * row.peak_flops_assumed / per_token
    return None


def prepare_throughput_rows(
    use: str | None,
) -> tuple[list[PreparedThroughputRow], list[ThroughputComparison]]:
    """Rows ready to predict, and those the model cannot express (with the reason)."""
    prepared: list[PreparedThroughputRow] = []
    skipped: list[ThroughputComparison] = []
    for row in throughput_rows(use):
        try:
            measured = measured_tokens_per_second_per_gpu(row)
            if measured is None:
                raise InputError("no tokens/s, and no TFLOP/s or MFU with a known FLOP convention")
            scenario = parse_scenario(row.scenario())
            if scenario.cluster is None:
                raise InputError("no GPU")
            strategy = scenario.strategy.resolved(scenario.job, scenario.cluster)
            scenario = replace(scenario, strategy=strategy)
            prepared.append(
                PreparedThroughputRow(row, scenario, strategy.layout(scenario.job), measured)
            )
        except (InputError, ValueError) as failure:
            skipped.append(ThroughputComparison(row, None, None, str(failure)))
    return prepared, skipped


def predict_tokens_per_second_per_gpu(
    prepared: PreparedThroughputRow, efficiency: Efficiency | None = None
) -> float:
    scenario = prepared.scenario
    assert scenario.cluster is not None
    step = estimate_step_time(
        scenario.job,
        scenario.cluster,
        prepared.layout,
        efficiency,
        scenario.strategy.flash_attention,
    )
    return float(step.tokens_per_second_per_gpu)


def throughput_comparisons(
    use: str | None = "test", efficiency: Efficiency | None = None
) -> list[ThroughputComparison]:
    prepared, skipped = prepare_throughput_rows(use)
    compared = [
        ThroughputComparison(
            item.row, item.measured, predict_tokens_per_second_per_gpu(item, efficiency)
        )
        for item in prepared
    ]
    return compared + skipped


def constant_mfu_prediction(prepared: PreparedThroughputRow, mfu: float) -> float:
    """The simplest honest baseline: one MFU for every job, ``mfu * peak / (6N + attention)``."""
    scenario = prepared.scenario
    assert scenario.cluster is not None
    per_token = float(training_flops_per_token(scenario.job).model)
    return mfu * scenario.cluster.gpu.half_precision_peak() / per_token


def workload_key(item: PreparedThroughputRow) -> str:
    """Rows of one source that train the same model on the same GPUs differ only in layout."""
    row = item.row
    model = row.model or str(sorted((row.arch or {}).items()))
    return f"{row.source} | {model} | {row.gpu} x {row.num_gpus} | seq {row.seq_len} | {row.precision} | {row.method}"


def ranking_regrets(
    rows: list[PreparedThroughputRow], predictions: dict[str, float]
) -> dict[str, float]:
    """For each workload measured with two or more distinct layouts: the shortfall of the layout
    predicted fastest against the fastest measured, ``1 - measured(chosen) / max(measured)``."""
    groups: dict[str, list[PreparedThroughputRow]] = {}
    for item in rows:
        groups.setdefault(workload_key(item), []).append(item)
    regrets: dict[str, float] = {}
    for key, members in groups.items():
        layouts = {str(item.scenario.strategy.to_dict()) for item in members}
        if len(layouts) < 2:
            continue
        chosen = max(members, key=lambda item: predictions[item.row.id])
        best = max(item.measured for item in members)
        regrets[key] = 1.0 - chosen.measured / best
    return regrets


def fitted_constant_mfu(rows: list[PreparedThroughputRow] | None = None) -> float:
    """The baseline's one constant: the geometric mean of measured over predicted-at-100 %-MFU
    tokens/s across ``rows`` (by default the ``fit`` rows, which the speed model is fitted on)."""
    if rows is None:
        rows, _ = prepare_throughput_rows("fit")
    logs = [math.log(item.measured / constant_mfu_prediction(item, 1.0)) for item in rows]
    return math.exp(sum(logs) / len(logs))


def fit_efficiency(rows: list[PreparedThroughputRow]) -> Efficiency:
    """The per-stack residuals fitted on ``rows`` within ``efficiency.FIT_BOUNDS``: robust
    (soft-L1) least squares on ``log(predicted / measured)``, each source weighted equally so
    that one large source does not drown the others, plus one prior term per residual
    (``efficiency.FIT_PRIOR``, centred on the parent's value for ``FIT_PRIOR_PARENT``). Each row
    depends on its own stack's residual only, so one evaluation of the rows gives every column of
    the finite-difference Jacobian (``jac_sparsity``). Needs SciPy."""
    import numpy as np
    from scipy.optimize import least_squares

    from gpuplan.estimate.efficiency import (
        FIT_BOUNDS,
        FIT_PRIOR,
        FIT_PRIOR_PARENT,
        FITTED_FIELDS,
    )

    sources = Counter(item.row.source for item in rows)
    weights = np.array([1.0 / math.sqrt(sources[item.row.source]) for item in rows])
    measured = np.array([item.measured for item in rows])
    unit = Efficiency(**{name: 1.0 for name in FITTED_FIELDS})
    at_unit = np.array([predict_tokens_per_second_per_gpu(item, unit) for item in rows])
    stacks = [STACK_OF_FRAMEWORK[framework_of(item)] for item in rows]
    centre, spread = FIT_PRIOR

    def efficiency_of(vector: Any) -> Efficiency:
        return Efficiency(**dict(zip(FITTED_FIELDS, map(float, vector), strict=True)))

    def residuals(vector: Any) -> Any:
        efficiency = efficiency_of(vector)
        predicted = np.array([predict_tokens_per_second_per_gpu(item, efficiency) for item in rows])
        values = np.asarray(vector)
        centres = np.array(
            [
                values[FITTED_FIELDS.index(FIT_PRIOR_PARENT[name])]
                if name in FIT_PRIOR_PARENT
                else centre
                for name in FITTED_FIELDS
            ]
        )
        prior = np.log(values / centres) / spread
        return np.concatenate([weights * np.log(predicted / measured), prior])

    lower = np.array([FIT_BOUNDS[name][0] for name in FITTED_FIELDS])
    upper = np.array([FIT_BOUNDS[name][1] for name in FITTED_FIELDS])
    initial = []
    for name in FITTED_FIELDS:
        logs = [
            math.log(m / p)
            for m, p, stack in zip(measured, at_unit, stacks, strict=True)
            if stack == name
        ]
        initial.append(math.exp(sum(logs) / len(logs)) if logs else centre)
    depends_on = np.zeros((len(rows) + len(FITTED_FIELDS), len(FITTED_FIELDS)))
    for index, stack in enumerate(stacks):
        depends_on[index, FITTED_FIELDS.index(stack)] = 1.0
    depends_on[len(rows) :, :] = np.eye(len(FITTED_FIELDS))
    for child, parent in FIT_PRIOR_PARENT.items():
        depends_on[len(rows) + FITTED_FIELDS.index(child), FITTED_FIELDS.index(parent)] = 1.0
    solution = least_squares(
        residuals,
        np.clip(initial, lower * 1.01, upper * 0.99),
        bounds=(lower, upper),
        loss="soft_l1",
        f_scale=0.1,
        jac_sparsity=depends_on,
    )
    return efficiency_of(solution.x)


def framework_of(item: PreparedThroughputRow) -> str:
    """The stack a row ran on, as the speed model resolves it."""
    import numpy as np

    from gpuplan.estimate.frameworks import FRAMEWORK_CODES, resolve_framework_codes

    layout = item.layout
    code = resolve_framework_codes(item.scenario.job.framework, layout.tp, layout.pp, layout.zero)
    return FRAMEWORK_CODES[int(np.asarray(code).reshape(-1)[0])]


@dataclass(frozen=True)
class HeldOutPrediction:
    """A row predicted with constants fitted without its source."""

    item: PreparedThroughputRow
    predicted: float
    baseline: float


def leave_one_source_out(
    fit_rows: list[PreparedThroughputRow], rows: list[PreparedThroughputRow]
) -> list[HeldOutPrediction]:
    """Every row of ``rows`` predicted by the speed model and by the constant-MFU baseline, both
    fitted on the ``fit_rows`` of the other sources only. Refits once per source (about a minute on one core)."""
    predictions = []
    for source in sorted({item.row.source for item in rows}):
        others = [item for item in fit_rows if item.row.source != source]
        efficiency = fit_efficiency(others)
        mfu = fitted_constant_mfu(others)
        for item in rows:
            if item.row.source == source:
                predictions.append(
                    HeldOutPrediction(
                        item,
                        predict_tokens_per_second_per_gpu(item, efficiency),
                        constant_mfu_prediction(item, mfu),
                    )
                )
    return predictions


def row_class(item: PreparedThroughputRow) -> dict[str, str]:
    """The interval class of a measured row (``estimate.interval.comparable_class``)."""
    from gpuplan.estimate.interval import comparable_class

    scenario = item.scenario
    assert scenario.cluster is not None
    job = scenario.job
    return comparable_class(
        scenario.cluster.gpu.architecture,
        job.precision if scenario.cluster.gpu.has_fp8 else "bf16",
        job.model.is_moe,
        scenario.cluster.count,
    )


PAIRED_FIELDS = {
    "gpu": "gpu",
    "precision": "precision",
    "compile": "compile",
    "scale": "num_gpus",
}
"""What a pair of rows may differ in, and the row attribute that holds it."""

_LAYOUT_FIELDS = (
    "source", "model", "method", "seq_len", "gpu", "num_gpus", "precision", "compile", "tp",
    "pp", "cp", "ep", "vpp", "micro_batch", "recompute", "zero", "offload", "lora_rank",
    "fused_loss",
)  # fmt: skip


@dataclass(frozen=True)
class RowPair:
    """Two measured runs of one source that differ in one thing only."""

    changed: str
    first: PreparedThroughputRow
    second: PreparedThroughputRow

    @property
    def measured_ratio(self) -> float:
        return self.second.measured / self.first.measured

    def predicted_ratio(self, efficiency: Efficiency | None = None) -> float:
        return predict_tokens_per_second_per_gpu(
            self.second, efficiency
        ) / predict_tokens_per_second_per_gpu(self.first, efficiency)


_CHANGE_WORDS = {
    "precision": ("float8", "fp8", "amp_fp8", "amp_bf16"),
    "compile": ("torch.compile", "compile"),
}


def _stack_words(detail: str | None, changed: str) -> tuple[str, ...]:
    """The stack description's words, less those naming the change itself."""
    words = (detail or "").lower().replace("+", " ").replace(",", " ").replace(";", " ").split()
    dropped = _CHANGE_WORDS.get(changed, ())
    return tuple(sorted(word for word in words if word not in dropped))


def one_change_pairs(rows: list[PreparedThroughputRow], changed: str) -> list[RowPair]:
    """Pairs of rows equal in every layout field but ``changed`` (``PAIRED_FIELDS``); a change
    of scale keeps the per-GPU batch (the micro-batch and the accumulation steps) and pairs the
    smallest run with each larger one. Rows whose stack is described differently are not paired, except for the
    words that name the change itself (Float8, torch.compile); unstated values pair with
    nothing."""
    attribute = PAIRED_FIELDS[changed]

    def key(item: PreparedThroughputRow) -> tuple[Any, ...]:
        row = item.row
        values = [
            str(row.arch) if name == "model" and not row.model else getattr(row, name)
            for name in _LAYOUT_FIELDS
            if name != attribute
        ]
        values.append(_stack_words(row.framework_detail, changed))
        values.append(int(item.layout.micro_batches) if changed == "scale" else row.global_batch)
        return tuple(values)

    groups: dict[tuple[Any, ...], list[PreparedThroughputRow]] = {}
    for item in rows:
        groups.setdefault(key(item), []).append(item)
    pairs = []
    for members in groups.values():
        by_value: dict[Any, PreparedThroughputRow] = {}
        for item in sorted(members, key=lambda member: member.row.id):
            value = getattr(item.row, attribute)
            if value is not None:
                by_value.setdefault(value, item)
        if len(by_value) < 2:
            continue
        ordered = sorted(
            by_value.items(), key=lambda pair: str(pair[0]) if changed != "scale" else pair[0]
        )
        base = ordered[0][1]
        pairs += [RowPair(changed, base, other) for _, other in ordered[1:]]
    return pairs
