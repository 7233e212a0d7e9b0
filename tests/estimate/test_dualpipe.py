"""DeepSeek's DualPipe schedule: its rules, its bubble and what its ranks hold."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from gpuplan.errors import InputError
from gpuplan.estimate.memory import estimate_memory, micro_batches_in_flight
from gpuplan.estimate.step_terms import bubble_micro_batches, stage_trained_params
from gpuplan.estimate.time import estimate_step_time
from gpuplan.scenario import parse_scenario

SCENARIO = {
    "model": "llama-3.1-70b",
    "hardware": {"gpu": "h100", "count": 64},
    "global_batch": 256,
    "seq_len": 4096,
    "strategy": {"tp": 8, "pp": 4, "schedule": "dualpipe"},
}


def resolved(**strategy):
    scenario = parse_scenario({**SCENARIO, "strategy": {**SCENARIO["strategy"], **strategy}})
    assert scenario.cluster is not None
    return scenario, scenario.strategy.resolved(scenario.job, scenario.cluster)


@pytest.mark.parametrize(
    ("strategy", "runs"),
    [
        ({}, True),
        ({"pp": 8}, True),
        ({"pp": 1}, False),
        ({"pp": 2, "tp": 8, "micro_batch": 2}, True),
        ({"vpp": 2}, False),
        ({"micro_batch": 32}, False),
    ],
)
def test_dualpipe_runs_only_what_its_schedule_can(strategy, runs):
    """An even ``pp`` of at least 2, no interleaving, and an even number of micro-batches, at
    least ``2 pp`` (tp 8 x pp 4 leaves 2 data-parallel ranks: micro-batch 32 gives 4 < 8)."""
    if runs:
        resolved(**strategy)
        return
    with pytest.raises(InputError, match=r"^strategy\.schedule: dualpipe needs"):
        resolved(**strategy)


def test_an_unknown_schedule_names_the_accepted_ones():
    with pytest.raises(InputError, match=r"^strategy\.schedule: .*1f1b, dualpipe"):
        parse_scenario({**SCENARIO, "strategy": {"schedule": "zb-v"}})


def test_the_dualpipe_bubble_is_the_published_formula():
    """``(pp/2 - 1)(F&B + B - 3W)`` with ``F&B = t``, ``B = 2t/3``, ``W = t/3`` without recompute
    (``t`` one stage's micro-batch), against 1F1B's ``(pp - 1) t``."""
    scenario, strategy = resolved(pp=16, tp=4)
    layout = strategy.layout(scenario.job)
    dual = float(bubble_micro_batches(layout, np.asarray(1.0 / 3.0)))
    assert dual == pytest.approx(7 * (1 + 2 / 3 - 1))
    one_f_one_b = replace(layout, dualpipe=np.asarray(False))
    assert float(bubble_micro_batches(one_f_one_b, np.asarray(1.0 / 3.0))) == 15
    recompute = float(bubble_micro_batches(layout, np.asarray(0.25)))
    assert recompute == pytest.approx(7 * (1 + 3 / 4 - 3 / 4))


def test_dualpipe_ranks_hold_two_stages_and_one_more_micro_batch():
    scenario, strategy = resolved()
    dual = strategy.layout(scenario.job)
    single = replace(dual, dualpipe=np.asarray(False))
    job = scenario.job
    assert float(stage_trained_params(job, dual)) == pytest.approx(
        2 * float(stage_trained_params(job, single))
    )
    assert float(micro_batches_in_flight(dual)) == 5
    assert float(micro_batches_in_flight(single)) == 4
    dual_memory = estimate_memory(job, dual, 80e9).parts
    single_memory = estimate_memory(job, single, 80e9).parts
    for part in ("weights", "gradients", "optimizer"):
        assert float(dual_memory[part]) > 1.8 * float(single_memory[part]), part
    assert float(dual_memory["activations"]) > float(single_memory["activations"])
    assert float(dual_memory["logits"]) > 0


def test_dualpipe_shortens_the_step_by_its_smaller_bubble():
    scenario, strategy = resolved(pp=8, tp=8)
    dual = strategy.layout(scenario.job)
    single = replace(dual, dualpipe=np.asarray(False))
    assert scenario.cluster is not None
    fast = estimate_step_time(scenario.job, scenario.cluster, dual)
    slow = estimate_step_time(scenario.job, scenario.cluster, single)
    assert float(fast.breakdown["bubble"]) < 0.5 * float(slow.breakdown["bubble"])
    assert float(fast.breakdown["pipeline_send"]) <= float(slow.breakdown["pipeline_send"])
    assert float(fast.step_seconds) < float(slow.step_seconds)
