"""The plan search: feasibility, agreement with the scalar estimate, constraints, explanations."""

from __future__ import annotations

import itertools
from decimal import Decimal

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gpuplan
from gpuplan.api import plan_search
from gpuplan.catalog import load_gpu
from gpuplan.errors import InputError
from gpuplan.scenario import parse_scenario
from gpuplan.search import PlanRequest, _strategy_at, evaluate_gpu

FINE_TUNE_70B = {
    "model": "llama-3.1-70b",
    "method": "full",
    "tokens": "10B",
    "seq_len": 4096,
    "global_batch": 256,
}
QLORA_8B = {
    "model": "llama-3.1-8b",
    "method": "qlora",
    "tokens": "100M",
    "seq_len": 2048,
    "global_batch": 32,
}


@pytest.fixture(scope="module")
def fine_tune_result():
    return plan_search(FINE_TUNE_70B, limit=50)


def test_nothing_infeasible_is_returned(fine_tune_result):
    assert fine_tune_result["plans"]
    for plan in fine_tune_result["plans"]:
        memory = plan["memory"]
        assert memory["peak_bytes"] <= memory["capacity_bytes"] * 0.9 + 1
        strategy = plan["strategy"]
        assert strategy["dp"] * strategy["tp"] * strategy["pp"] * strategy["cp"] == plan["count"]
        assert 64 % strategy["tp"] == 0 and strategy["tp"] <= load_gpu(plan["gpu"]).gpus_per_node
        assert 256 % (strategy["dp"] * strategy["micro_batch"]) == 0


def test_plans_are_sorted_by_cost_and_priced(fine_tune_result):
    costs = [float(plan["cost"]["total"]) for plan in fine_tune_result["plans"] if plan["cost"]]
    assert costs == sorted(costs)
    top = fine_tune_result["plans"][0]
    assert top["cost"]["currency"] == "USD"
    assert top["cost"]["per_million_tokens"] > 0
    assert fine_tune_result["evaluated"] > 10_000


def test_pareto_front_is_non_dominated(fine_tune_result):
    front = fine_tune_result["pareto"]
    assert front
    for earlier, later in itertools.pairwise(front):
        assert later["cost"] >= earlier["cost"] and later["days"] < earlier["days"]


def test_time_objective_ranks_by_duration():
    plans = plan_search(FINE_TUNE_70B, objective="time", max_gpus=64)["plans"]
    days = [plan["duration"]["days"] for plan in plans]
    assert days == sorted(days)
    assert all(plan["count"] <= 64 for plan in plans)


@pytest.mark.parametrize("model", ["llama-3.1-70b", "qwen3-30b-a3b"])
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_vectorized_path_agrees_with_the_scalar_estimate(model, data):
    scenario = parse_scenario({**FINE_TUNE_70B, "model": model})
    gpu_id = data.draw(
        st.sampled_from(["h100-sxm-80gb", "a100-sxm-80gb", "h200-sxm-141gb", "rtx-4090-24gb"])
    )
    evaluated, _, _ = evaluate_gpu(scenario, load_gpu(gpu_id), PlanRequest(scenario, max_gpus=256))
    if evaluated is None:
        return
    index = data.draw(st.integers(0, len(evaluated.candidates) - 1))
    strategy = _strategy_at(evaluated, index, scenario)
    count = int(evaluated.candidates.count[index])
    scalar = gpuplan.estimate(
        {
            **FINE_TUNE_70B,
            "model": model,
            "hardware": {"gpu": gpu_id, "count": count},
            "strategy": {key: value for key, value in strategy.to_dict().items() if key != "dp"},
        }
    )
    assert scalar["memory"]["peak_bytes"] == pytest.approx(
        float(evaluated.peak_bytes[index]), rel=1e-9
    )
    assert scalar["throughput"]["tokens_per_second"] == pytest.approx(
        float(evaluated.tokens_per_second[index]), rel=1e-9
    )
    assert scalar["duration"]["seconds"] == pytest.approx(
        float(evaluated.duration_seconds[index]), rel=1e-9
    )


def test_budget_and_deadline_are_hard_limits():
    result = plan_search(QLORA_8B, budget="¥100", deadline="1d")
    assert result["plans"]
    for plan in result["plans"]:
        assert plan["cost"]["currency"] == "CNY"
        assert Decimal(str(plan["cost"]["total"])) <= 100
        assert plan["duration"]["days"] <= 1


def test_gpu_and_provider_filters():
    only = plan_search(QLORA_8B, gpus=("RTX4090",))["plans"]
    assert only and {plan["gpu"] for plan in only} == {"rtx-4090-24gb"}
    excluded = plan_search(QLORA_8B, exclude_gpus=("rtx-4090-24gb",))["plans"]
    assert all(plan["gpu"] != "rtx-4090-24gb" for plan in excluded)
    providers = {
        plan["cost"]["provider"] for plan in plan_search(QLORA_8B, providers=("Lambda",))["plans"]
    }
    assert providers == {"Lambda"}


def test_nothing_fits_says_why_and_what_would_help():
    result = plan_search(
        {**FINE_TUNE_70B, "model": "llama-3.1-405b"}, max_gpus=2, gpus=("rtx-4090-24gb",)
    )
    assert result["plans"] == []
    assert "nothing fits" in result["explanation"]
    assert "qlora" in result["explanation"] and "--max-gpus" in result["explanation"]


def test_impossible_deadline_gives_no_plan_and_names_it():
    result = plan_search(FINE_TUNE_70B, deadline="1m", max_gpus=16)
    assert result["plans"] == []
    assert "deadline" in result["explanation"]


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"budget": "-5 USD"}, "budget"),
        ({"objective": "fastest"}, "objective"),
        ({"max_gpus": 0}, "max_gpus"),
        ({"gpus": ("H1000",)}, "H1000"),
        ({"headroom": 1.5}, "headroom"),
    ],
)
def test_bad_input_is_an_input_error_naming_the_field(options, field):
    with pytest.raises(InputError, match=field):
        plan_search(QLORA_8B, **options)


def test_single_gpu_consumer_plans_are_part_of_the_search():
    plans = plan_search(QLORA_8B, limit=50)["plans"]
    assert any(plan["count"] == 1 and plan["gpu"].startswith("rtx") for plan in plans)
    assert all(np.isfinite(plan["duration"]["seconds"]) for plan in plans)
