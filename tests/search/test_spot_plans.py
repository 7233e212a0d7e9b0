"""Spot plans: `--billing spot` finds the catalog's spot offers and prices them at the expected
cost of an interrupted run, with each assumption and its source in the plan."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from gpuplan.api import plan_search
from gpuplan.estimate.reliability import estimate_reliability
from gpuplan.pricing.offers import OfferBook, catalog_offers
from gpuplan.pricing.quote import DEFAULT_RESTART_OVERHEAD_SECONDS
from gpuplan.scenario import parse_scenario

QLORA_8B = {
    "model": "llama-3.1-8b",
    "method": "qlora",
    "tokens": "200M",
    "seq_len": 2048,
    "global_batch": 32,
}
TODAY = dt.date(2026, 12, 3)


def _spot_search(scenario=QLORA_8B, **options):
    return plan_search(scenario, billing=("spot",), today=TODAY, limit=5, **options)


def test_billing_spot_returns_plans_on_offers_that_sell_spot():
    spot_offers = {o.id: o for o in catalog_offers() if o.plans_of_kind("spot")}
    assert spot_offers, "the catalog sells spot somewhere"
    result = _spot_search()
    assert result["plans"], result["explanation"]
    for row in result["plans"]:
        cost = row["cost"]
        offer = spot_offers[cost["offer"]]
        assert "spot" in cost["billing_mix"]
        spot = cost["spot"]
        assert spot["interruptions_source"] and spot["restart_overhead_source"]
        assert row["duration"]["expected_seconds"] == spot["expected_seconds"]
        assert spot["expected_seconds"] > row["duration"]["seconds"]
        cheapest = min(plan.instance_price(offer.gpus) for plan in offer.plans_of_kind("spot"))
        uninterrupted = cheapest * cost["instances"] * Decimal(row["duration"]["seconds"]) / 3600
        assert Decimal(str(cost["total"])) > uninterrupted
        assert "spot" in {notice["code"] for notice in row["warnings"]}


def test_each_reclaim_loses_what_the_reliability_model_says():
    result = _spot_search()
    scenario = parse_scenario(QLORA_8B)
    for row in result["plans"]:
        spot = row["cost"]["spot"]
        reclaims = spot["interruptions_per_hour"] * row["cost"]["instances"]
        expected = scenario.reliability.estimate(scenario.job, row["count"], reclaims)
        assert spot["restart_overhead_seconds"] == pytest.approx(
            float(expected.lost_seconds_per_interruption)
        )
        assert spot["restart_overhead_seconds"] != DEFAULT_RESTART_OVERHEAD_SECONDS


def test_an_offers_stated_rate_is_used_and_a_higher_rate_costs_more(tmp_path):
    def search_with(rate: float):
        path = tmp_path / f"spot-{rate}.toml"
        path.write_text(
            'provider = "SpotCo"\ncurrency = "USD"\n\n[[offers]]\nid = "spotco-h100-x1"\n'
            'gpu = "h100-sxm-80gb"\ngpus = 1\nplans = [\n'
            '  { mode = "spot", price = 1.0, per = "gpu", granularity = "1s", '
            f"interruptions_per_hour = {rate}, "
            'interruptions_source = "status page", observed = "2026-11-01", source = "test" },\n'
            "]\n"
        )
        result = _spot_search(offers_file=str(path), providers=("SpotCo",))
        assert result["plans"], result["explanation"]
        return result["plans"][0]

    calm, stormy = search_with(0.01), search_with(0.5)
    for row, rate in ((calm, 0.01), (stormy, 0.5)):
        spot = row["cost"]["spot"]
        assert spot["interruptions_per_hour"] == rate
        assert spot["interruptions_source"] == "status page"
        run = (
            spot["expected_seconds"]
            - spot["expected_interruptions"] * spot["restart_overhead_seconds"]
        )
        assert spot["expected_interruptions"] == pytest.approx(
            rate * row["cost"]["instances"] * run / 3600
        )
    assert float(stormy["cost"]["total"]) > float(calm["cost"]["total"])


def test_without_spot_billing_the_search_prices_on_demand():
    result = plan_search(QLORA_8B, today=TODAY, limit=3)
    assert all(row["cost"] is None or row["cost"]["spot"] is None for row in result["plans"])


def test_spot_offers_are_the_only_ones_kept():
    book = OfferBook.build()
    without_spot = {o.id for o in book.offers if not o.plans_of_kind("spot")}
    offered = {row["cost"]["offer"] for row in _spot_search()["plans"]}
    assert offered.isdisjoint(without_spot)


def test_reclaims_shorten_the_checkpoint_interval():
    job = parse_scenario({"model": "llama-3.1-70b", "method": "full", "tokens": "2B"}).job
    calm = estimate_reliability(job, 16)
    reclaimed = estimate_reliability(job, 16, reclaims_per_hour=2 / 24)
    assert float(reclaimed.interval_seconds) < float(calm.interval_seconds)
    assert float(reclaimed.lost_seconds_per_interruption) < float(
        calm.lost_seconds_per_interruption
    )
    assert float(reclaimed.goodput) <= float(calm.goodput)
