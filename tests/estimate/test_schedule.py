"""The learning-rate schedule of an export: stage defaults from published practice, the
scenario's own values, and one-line errors for impossible ones."""

from __future__ import annotations

import pytest

from gpuplan.errors import InputError
from gpuplan.estimate import schedule as lr
from gpuplan.estimate.batch import training_compute_budget
from gpuplan.scenario import parse_scenario


def _schedule(steps: int = 1000, **scenario):
    parsed = parse_scenario({"model": "llama-3.1-8b", "tokens": "100B", **scenario})
    return lr.learning_rate_schedule(parsed.job, parsed.training, steps)


def test_pre_training_follows_deepseeks_law_and_llama_2s_decay():
    parsed = parse_scenario({"model": "llama-3.1-8b", "tokens": "100B"})
    expected = 0.3118 * training_compute_budget(parsed.job) ** -0.125
    chosen = _schedule(steps=100_000)
    assert chosen.stage == "pretrain" and chosen.peak == pytest.approx(expected)
    assert chosen.minimum == pytest.approx(0.1 * expected)
    assert chosen.warmup_steps == 2000 and chosen.decay == "cosine"


def test_a_larger_budget_takes_a_smaller_rate():
    small = _schedule(steps=10_000)
    large = _schedule(steps=10_000, tokens="10T")
    assert large.peak < small.peak


def test_continued_pre_training_takes_code_llamas_rates():
    assert _schedule(training={"stage": "continued"}).peak == 3e-4
    big = parse_scenario(
        {"model": "llama-3.1-70b", "tokens": "1T", "training": {"stage": "continued"}}
    )
    assert lr.learning_rate_schedule(big.job, big.training, 1000).peak == 1.5e-4


def test_fine_tuning_rates_by_method():
    full = _schedule(training={"stage": "finetune"})
    assert full.peak == 2e-5 and full.minimum == 0 and full.warmup_steps == 30
    assert _schedule(method="lora").peak == 2e-4
    large = parse_scenario({"model": "llama-3.1-70b", "method": "qlora", "tokens": "1B"})
    assert lr.learning_rate_schedule(large.job, large.training, 100).peak == 1e-4


def test_warm_up_never_takes_more_than_a_tenth_of_a_short_run():
    assert _schedule(steps=500).warmup_steps == 50


def test_the_scenario_sets_every_part():
    chosen = _schedule(
        training={"learning_rate": 1e-4, "warmup_steps": 10, "min_learning_rate": 1e-6}
    )
    assert (chosen.peak, chosen.warmup_steps, chosen.minimum) == (1e-4, 10, 1e-6)
    assert "training.learning_rate" in chosen.source


@pytest.mark.parametrize(
    ("training", "named"),
    [
        ({"stage": "warmstart"}, "training.stage"),
        ({"learning_rate": float("nan")}, "training.learning_rate"),
        ({"learning_rate": 5}, "training.learning_rate"),
        ({"warmup_steps": -1}, "training.warmup_steps"),
        ({"lr": 1e-4}, "unknown key"),
        ({"learning_rate": 1e-5, "min_learning_rate": 1e-4}, "training.min_learning_rate"),
        ("fast", "training"),
    ],
)
def test_impossible_values_are_one_line_naming_the_key(training, named):
    with pytest.raises(InputError, match=named) as caught:
        _schedule(training=training)
    assert "\n" not in str(caught.value)
