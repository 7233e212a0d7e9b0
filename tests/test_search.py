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
from gpuplan.pricing.offers import catalog_offers
from gpuplan.scenario import parse_scenario
from gpuplan.search import (
    PlanRequest,
    evaluate_machine,
    group_machines,
    machine_gpu_counts,
    strategy_at,
)

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


def _machines_of(gpu_id: str):
    gpu = load_gpu(gpu_id)
    return group_machines(catalog_offers(), {gpu.id: gpu})


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
    machine = data.draw(st.sampled_from(_machines_of(gpu_id)))
    request = PlanRequest(scenario, max_gpus=256)
    counts = machine_gpu_counts(machine, scenario, request)
    evaluated, _, _ = evaluate_machine(scenario, machine, counts, request)
    if evaluated is None:
        return
    index = data.draw(st.integers(0, len(evaluated.candidates) - 1))
    strategy = strategy_at(evaluated, index, scenario)
    count = int(evaluated.candidates.count[index])
    scalar = gpuplan.estimate(
        {
            **FINE_TUNE_70B,
            "model": model,
            "hardware": {"offer": machine.offers[0].id, "count": count},
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


def test_instance_counts_hold_every_small_count_and_a_fine_ladder():
    from gpuplan.search import instance_counts

    counts = instance_counts(1, 2048)
    assert counts[:16] == list(range(1, 17))
    assert {18, 20, 24, 72, 80, 96, 120, 1920, 2048} <= set(counts)
    assert all(later / earlier <= 1.125 for earlier, later in itertools.pairwise(counts[15:]))
    assert instance_counts(4, 10) == [4, 5, 6, 7, 8, 9, 10]
    assert instance_counts(2, 75)[-1] == 75


@pytest.fixture(scope="module")
def startup_preset_result():
    from gpuplan.presets import PRESETS

    preset = PRESETS["startup"]
    return plan_search(preset["scenario"], **{**preset["options"], "limit": 200})


def test_offers_without_a_cluster_network_are_never_joined(startup_preset_result):
    plans = startup_preset_result["plans"]
    assert plans
    for plan in plans:
        machine = plan["machine"]
        if machine["network"] == "none":
            domain = max(machine["nvlink_domain"], machine["gpus"])
            assert plan["count"] <= domain, plan["cost"]["offer"]
        assert not machine["network_assumed"]


def test_every_plan_is_priced_by_an_offer_of_the_modelled_machine(startup_preset_result):
    from gpuplan.pricing.offers import OfferBook

    book = OfferBook.build()
    for plan in startup_preset_result["plans"]:
        offer = book.get(plan["cost"]["offer"])
        assert offer.gpu == plan["gpu"]
        assert plan["count"] == offer.gpus * plan["cost"]["instances"]
        assert plan["machine"]["gpus"] == offer.gpus
        if offer.topology is not None:
            assert plan["machine"]["network"] == offer.topology.network
            assert plan["machine"]["intra_node"] == offer.topology.intra_node


def test_unlisted_networks_are_joined_only_when_allowed_and_said():
    job = {**FINE_TUNE_70B, "model": "llama-3.1-8b", "tokens": "1B"}
    plans = plan_search(
        job, gpus=("rtx-4090-24gb",), max_gpus=64, allow_unlisted_network=True, limit=50
    )["plans"]
    joined = [plan for plan in plans if plan["count"] > plan["machine"]["gpus"]]
    assert joined
    for plan in joined:
        assert plan["machine"]["network_assumed"]
        assert plan["machine"]["network"] == "none"
        codes = {notice["code"] for notice in plan["warnings"]}
        assert "no_cluster_network" in codes
    default = plan_search(job, gpus=("rtx-4090-24gb",), max_gpus=64, limit=50)
    assert all(plan["count"] == plan["machine"]["gpus"] for plan in default["plans"])


def test_the_job_and_its_batch_are_restated():
    result = plan_search({key: value for key, value in QLORA_8B.items() if key != "global_batch"})
    job = result["job"]
    assert job["model"] == "llama-3.1-8b" and job["method"] == "qlora"
    assert job["tokens"] == 100_000_000 and job["seq_len"] == 2048
    assert job["batch_rule"] == "fine-tuning"
    assert job["global_batch_tokens"] == job["global_batch"] * 2048
    given = plan_search(QLORA_8B)["job"]
    assert given["global_batch"] == 32 and given["batch_rule"] == "scenario"


def test_start_up_is_paid_in_time_and_money():
    result = plan_search({**QLORA_8B, "tokens": "2M"}, limit=50)
    for plan in result["plans"]:
        duration = plan["duration"]
        assert duration["startup_seconds"] > 0
        assert duration["seconds"] == pytest.approx(
            duration["startup_seconds"] + duration["training_seconds"]
        )


def test_a_short_job_is_not_spread_over_many_gpus_that_cost_more():
    """A job of a few hours: start-up and billing minimums make large clusters cost more, and
    the ranking is by the whole cost, so no plan ranks above a cheaper one."""
    result = plan_search({**QLORA_8B, "tokens": "20M"}, max_gpus=64, limit=200)
    costs = [float(plan["cost"]["total"]) for plan in result["plans"]]
    assert costs == sorted(costs)
    top = result["plans"][0]
    for plan in result["plans"][1:]:
        if plan["count"] > top["count"]:
            assert float(plan["cost"]["total"]) >= float(top["cost"]["total"])


def test_estimate_and_search_share_the_layout_rules():
    """A layout is valid in both or in neither: interleaving needs a layer per virtual stage,
    so pp=8 vpp=4 runs 80 layers (uneven stages) and pp=32 vpp=4 does not."""
    from gpuplan.search import enumerate_layouts

    scenario = parse_scenario(FINE_TUNE_70B)
    candidates = enumerate_layouts(scenario, 8, [256], offload=False)
    layout = candidates.layout
    seen = set(zip(layout.pp.tolist(), layout.vpp.tolist(), strict=True))
    assert (8, 4) in seen and (32, 4) not in seen and (32, 2) in seen
    base = {**FINE_TUNE_70B, "hardware": {"gpu": "h100-sxm-80gb", "count": 256}}
    with pytest.raises(InputError, match=r"strategy\.vpp"):
        gpuplan.estimate({**base, "strategy": {"tp": 8, "pp": 32, "vpp": 4}})
    assert gpuplan.estimate({**base, "strategy": {"tp": 8, "pp": 8, "vpp": 4}})["memory"]


@settings(max_examples=200, deadline=None)
@given(
    data=st.lists(
        st.tuples(st.floats(0, 100), st.floats(0, 50), st.floats(1, 100)),
        min_size=1,
        max_size=30,
    ),
    objective=st.sampled_from(["cost", "time", "pareto"]),
    limit=st.integers(1, 5),
    budget=st.sampled_from([None, "60 USD", "120 USD"]),
)
def test_lazy_pricing_selects_what_pricing_everything_would(data, objective, limit, budget):
    """Candidates priced in the order of their cost floors give the same shown plans and the
    same Pareto front as pricing every candidate."""
    from gpuplan.search import PlanCandidate, pareto_front, select_rows, sort_key, within_limits
    from gpuplan.units import parse_amount

    scenario = parse_scenario(QLORA_8B)
    request = PlanRequest(
        scenario,
        objective=objective,
        limit=limit,
        budget=parse_amount(budget) if budget else None,
        currency="USD",
    )
    candidates = [
        PlanCandidate(None, index, None, duration, floor)
        for index, (floor, _, duration) in enumerate(data)
    ]

    def build(candidate):
        floor, extra, duration = data[candidate.index]
        return {
            "gpu": "x",
            "count": candidate.index + 1,
            "gpu_hours": float(candidate.index),
            "duration": {"seconds": duration, "days": duration / 86400},
            "cost": {"total": floor + extra, "currency": "USD", "offer": str(candidate.index)},
        }

    def shown(rows):
        if objective == "pareto":
            rows = pareto_front(rows)
        return [row["count"] for row in rows[:limit]]

    lazy = select_rows(candidates, request, build)
    every = sorted(
        (row for row in map(build, candidates) if within_limits(row, request)),
        key=lambda row: sort_key(row, objective),
    )
    assert shown(lazy) == shown(every)
    assert [r["count"] for r in pareto_front(lazy)] == [r["count"] for r in pareto_front(every)]


def test_cluster_sizes_that_are_not_powers_of_two_are_priced(startup_preset_result):
    odd = [
        plan
        for plan in startup_preset_result["plans"]
        if plan["count"] & (plan["count"] - 1) and plan["cost"]
    ]
    assert odd
    for plan in odd:
        assert plan["count"] % plan["machine"]["gpus"] == 0
        assert plan["cost"]["instances"] * plan["machine"]["gpus"] == plan["count"]


def test_a_cluster_product_is_sold_from_its_minimum_size(tmp_path):
    offers = tmp_path / "cluster.toml"
    offers.write_text(
        """
provider = "Example Cluster Cloud"
currency = "USD"

[[offers]]
id = "example-h100-cluster"
gpu = "h100-sxm-80gb"
gpus = 8
min_instances = 4
max_instances = 8
topology = { intra_node = "nvlink4", p2p = true, network = "infiniband", network_gbps_per_gpu = 400, source = "test", observed = "2026-12-01" }
plans = [ { mode = "hourly", price = 1.0, per = "gpu", minimum = "7d", observed = "2026-12-01", source = "test" } ]
""",
        encoding="utf-8",
    )
    plans = plan_search(
        FINE_TUNE_70B, offers_file=str(offers), providers=("Example Cluster Cloud",), limit=50
    )["plans"]
    assert plans
    counts = {plan["count"] for plan in plans}
    assert min(counts) >= 32 and max(counts) <= 64
    for plan in plans:
        gpu_hours_billed = plan["count"] * max(plan["duration"]["seconds"], 7 * 86400) / 3600
        assert float(plan["cost"]["total"]) >= gpu_hours_billed - 1e-6
