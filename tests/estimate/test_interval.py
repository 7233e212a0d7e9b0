"""Intervals from held-out errors: their records, their fallback and where they show."""

from __future__ import annotations

import pytest

import gpuplan
from gpuplan.estimate.interval import (
    MIN_ROWS,
    SpeedInterval,
    comparable_class,
    duration_bounds,
    interval_records,
    speed_interval,
)


def _rows(fields: dict[str, str], ratios: list[float]):
    return [(fields, ratio) for ratio in ratios]


def test_records_hold_the_central_80_percent_of_the_ratios():
    fields = comparable_class("Hopper", "bf16", False, 8)
    ratios = [0.5 + 0.01 * index for index in range(101)]
    records = interval_records(_rows(fields, ratios))
    specific = next(r for r in records if r["scale"] == "2-8")
    assert specific["rows"] == 101
    assert specific["low"] == pytest.approx(0.6)
    assert specific["high"] == pytest.approx(1.4)


def test_small_classes_are_not_recorded():
    few = _rows(comparable_class("Ampere", "bf16", False, 1), [1.0] * (MIN_ROWS - 1))
    many = _rows(comparable_class("Hopper", "bf16", False, 1), [1.0] * MIN_ROWS)
    records = interval_records(few + many)
    assert not [r for r in records if r["generation"] == "Ampere"]
    assert [r for r in records if r["generation"] == "Hopper"]
    everything = next(r for r in records if r["generation"] == r["experts"] == "*")
    assert everything["rows"] == 2 * MIN_ROWS - 1


def test_recorded_interval_contains_the_prediction_and_falls_back_for_moe():
    dense = speed_interval("Hopper", "bf16", False, 8)
    assert dense is not None
    assert dense.low <= 1.0 <= dense.high
    assert dense.rows >= MIN_ROWS
    moe = speed_interval("Hopper", "bf16", True, 256)
    assert moe is not None
    assert moe.basis["scale"] == "*"


def test_duration_bounds_scale_training_not_startup():
    interval = SpeedInterval(0.8, 1.25, 10, {})
    shortest, longest = duration_bounds(100.0, 1000.0, interval)
    assert shortest == pytest.approx(100 + 800)
    assert longest == pytest.approx(100 + 1250)
    assert duration_bounds(100.0, 1000.0, None) == (1100.0, 1100.0)


def test_estimate_and_plan_carry_low_and_high_in_json():
    result = gpuplan.estimate(
        {
            "model": "llama-3.1-8b",
            "tokens": "2B",
            "hardware": {"gpu": "h100-sxm-80gb", "count": 8},
        }
    )
    speed, duration = result["throughput"], result["duration"]
    assert speed["tokens_per_second_low"] <= speed["tokens_per_second"]
    assert speed["tokens_per_second"] <= speed["tokens_per_second_high"]
    assert duration["seconds_low"] <= duration["seconds"] <= duration["seconds_high"]
    assert result["interval"]["coverage"] == 0.8
    plan = gpuplan.plan({"model": "llama-3.1-8b", "method": "qlora", "tokens": "100M"})
    row = plan[0]
    assert row["duration"]["days_low"] <= row["duration"]["days"] <= row["duration"]["days_high"]
    cost = row["cost"]
    assert cost["total_low"] <= cost["total"] <= cost["total_high"]
