"""Each billing mode, with granularity and minimum-charge rounding."""

from __future__ import annotations

from decimal import Decimal

import pytest

from gpuplan.errors import InputError
from gpuplan.pricing.currency import default_rates
from gpuplan.pricing.mix import cheapest_mix
from gpuplan.pricing.quote import (
    DEFAULT_INTERRUPTIONS_PER_HOUR,
    SpotAssumptions,
    cost_floor_per_second,
    quote,
)

from .helpers import offer_from

DAY = 86400


@pytest.mark.parametrize(
    ("mode", "seconds", "billed"),
    [
        ("per_second", 90.2, 91),
        ("per_minute", 61, 120),
        ("per_minute", 60, 60),
        ("hourly", 3601, 7200),
        ("hourly", 1, 3600),
    ],
)
def test_metered_rounding_to_granularity(mode: str, seconds: float, billed: int):
    offer = offer_from([f'mode = "{mode}", price = 3.6, per = "instance"'])
    plan = offer.plans[0]
    assert plan.billed_seconds(seconds) == billed
    assert plan.run_cost(seconds, 1) == Decimal("3.6") * billed / 3600


def test_minimum_charge_applies_to_short_runs_only():
    plan = offer_from(
        ['mode = "per_second", price = 3.6, per = "instance", minimum = "10m"']
    ).plans[0]
    assert plan.billed_seconds(30) == 600
    assert plan.billed_seconds(601) == 601
    assert plan.billed_seconds(0) == 0


def test_explicit_granularity_overrides_the_mode_default():
    plan = offer_from(['mode = "hourly", price = 1, per = "gpu", granularity = "15m"']).plans[0]
    assert plan.billed_seconds(16 * 60) == 30 * 60


@pytest.mark.parametrize(
    ("mode", "days", "blocks"),
    [("daily", 3.5, 4), ("weekly", 10, 2), ("monthly", 31, 2), ("yearly", 400, 2)],
)
def test_packages_alone_cover_whole_blocks(mode: str, days: float, blocks: int):
    offer = offer_from([f'mode = "{mode}", price = 100, per = "instance"'])
    mix = cheapest_mix(offer.plans, days * DAY, 1)
    assert sum(count for _, count in mix.blocks) == blocks
    assert mix.cost == 100 * blocks


def test_month_package_is_30_days_unless_the_provider_says_otherwise():
    thirty = offer_from(['mode = "monthly", price = 1, per = "gpu"']).plans[0]
    calendar = offer_from(['mode = "monthly", price = 1, per = "gpu", term = "31d"']).plans[0]
    assert thirty.term_seconds == 30 * DAY
    assert calendar.term_seconds == 31 * DAY


def test_reserved_term_is_paid_whole_at_its_hourly_rate():
    offer = offer_from(
        [
            'mode = "reserved", term = "1y", price = 2, per = "instance", upfront_share = 0.5',
            'mode = "hourly", price = 10, per = "instance"',
        ]
    )
    result = quote(offer, 300 * DAY)
    assert result.mix.blocks[0][0].mode == "reserved"
    assert result.total == Decimal(2) * 365 * 24
    line = result.to_dict()["lines"][0]
    assert line["upfront_amount"] == line["amount"] / 2
    assert result.mix.unused_seconds == 65 * DAY


def test_forty_days_is_one_month_plus_ten_days_hourly_when_that_is_cheaper():
    offer = offer_from(
        [
            'mode = "hourly", price = 1.86, per = "instance"',
            'mode = "monthly", price = 1100, per = "instance"',
        ]
    )
    mix = cheapest_mix(offer.plans, 40 * DAY, 1)
    assert [(plan.mode, count) for plan, count in mix.blocks] == [("monthly", 1)]
    assert mix.metered_seconds == 10 * DAY
    assert mix.cost == 1100 + Decimal("1.86") * 240


def test_forty_days_is_two_months_when_the_tail_costs_more_than_a_month():
    offer = offer_from(
        [
            'mode = "hourly", price = 5, per = "instance"',
            'mode = "monthly", price = 1100, per = "instance"',
        ]
    )
    mix = cheapest_mix(offer.plans, 40 * DAY, 1)
    assert [(plan.mode, count) for plan, count in mix.blocks] == [("monthly", 2)]
    assert mix.metered_plan is None
    assert mix.cost == 2200
    assert mix.unused_seconds == 20 * DAY


def test_spot_expected_cost_and_on_demand_fallback():
    offer = offer_from(
        [
            'mode = "per_second", price = 10, per = "instance"',
            'mode = "spot", price = 3, per = "instance", granularity = "1h"',
        ]
    )
    assumptions = SpotAssumptions(interruptions_per_hour=0.1, restart_overhead_seconds=1800)
    result = quote(offer, 100 * 3600, spot=assumptions)
    assert result.spot is not None
    # 10 interruptions, 0.5 h lost each, half an hour of rounding each: 100 + 5 + 5 hours
    assert result.spot.expected_cost == Decimal(3) * 110
    assert result.spot.fallback_cost == Decimal(1000)
    assert result.to_dict()["spot"]["cheaper_than_on_demand"] is True


def test_spot_without_interruptions_costs_price_times_duration():
    offer = offer_from(
        [
            'mode = "hourly", price = 4, per = "gpu"',
            'mode = "spot", price = 1, per = "gpu", granularity = "1s"',
        ],
        gpus=8,
    )
    result = quote(offer, 10 * 3600, instances=2, spot=SpotAssumptions(0, 0))
    assert result.spot is not None
    assert result.spot.expected_cost == Decimal(1) * 8 * 10 * 2


def test_instances_multiply_and_per_gpu_hour_normalizes():
    offer = offer_from(['mode = "hourly", price = 2, per = "gpu"'], gpus=8)
    result = quote(offer, 10 * 3600, instances=3)
    assert result.total == 2 * 8 * 10 * 3
    assert result.to_dict()["per_gpu_hour"] == 2


def test_cost_per_million_tokens_from_throughput():
    offer = offer_from(['mode = "per_second", price = 3.6, per = "instance"'])
    result = quote(offer, 1000, tokens_per_second=3000).to_dict()
    assert result["tokens"] == 3_000_000
    assert float(result["per_million_tokens"]) == pytest.approx(1 / 3)


def test_negative_duration_is_an_input_error():
    from gpuplan.errors import InputError

    offer = offer_from(['mode = "hourly", price = 1, per = "gpu"'])
    with pytest.raises(InputError, match="non-negative"):
        quote(offer, -1)


def test_an_offer_of_spot_plans_only_is_priced_at_its_expected_cost():
    offer = offer_from(['mode = "spot", price = 2, per = "instance", granularity = "1s"'])
    assumptions = SpotAssumptions(interruptions_per_hour=0.5, restart_overhead_seconds=600)
    result = quote(offer, 10 * 3600, spot=assumptions)
    assert result.priced_on_spot
    assert result.spot is not None and result.spot.fallback_cost is None
    # 5 interruptions of 10 minutes, each restarting a 1 s billing step: 10 h + 50 min + 2.5 s
    assert result.total == Decimal(2) * Decimal(10 * 3600 + 5 * 600 + 5 * 0.5) / 3600
    assert result.summary("USD", default_rates())["spot"]["expected_interruptions"] == 5
    assert result.to_dict()["spot"]["on_demand_fallback_compute"] is None


def test_reclaims_are_per_instance():
    offer = offer_from(['mode = "spot", price = 1, per = "instance", granularity = "1s"'])
    assumptions = SpotAssumptions(interruptions_per_hour=0.1, restart_overhead_seconds=0)
    one = quote(offer, 3600 * 10, instances=1, spot=assumptions).spot
    four = quote(offer, 3600 * 10, instances=4, spot=assumptions).spot
    assert one is not None and four is not None
    assert four.expected_interruptions == pytest.approx(4 * one.expected_interruptions)


def test_the_plan_states_its_rate_and_the_default_says_it_is_assumed():
    stated = offer_from(
        [
            'mode = "hourly", price = 4, per = "instance"',
            'mode = "spot", price = 1, per = "instance", interruptions_per_hour = 0.25, '
            'interruptions_source = "provider status page"',
        ]
    )
    spot = quote(stated, 8 * 3600).to_dict()["spot"]
    assert spot["interruptions_per_hour"] == 0.25
    assert spot["interruptions_source"] == "provider status page"
    assert spot["expected_interruptions"] == pytest.approx(2)
    given = quote(stated, 8 * 3600, spot=SpotAssumptions(interruptions_per_hour=1.0)).spot
    assert given is not None and given.assumptions.rate == 1.0
    plain = offer_from(['mode = "spot", price = 1, per = "instance"'])
    assumed = quote(plain, 3600).to_dict()["spot"]
    assert assumed["interruptions_per_hour"] == DEFAULT_INTERRUPTIONS_PER_HOUR
    assert assumed["interruptions_source"].startswith("assumed")


def test_an_interruption_rate_needs_its_source():
    with pytest.raises(InputError, match="interruptions_source"):
        offer_from(['mode = "spot", price = 1, per = "gpu", interruptions_per_hour = 0.1'])


def test_the_cost_floor_of_a_spot_offer_is_its_spot_rate():
    offer = offer_from(['mode = "spot", price = 3.6, per = "instance", granularity = "1s"'])
    floor = cost_floor_per_second(offer)
    assert floor == Decimal("3.6") / 3600
    assert floor * 7200 <= quote(offer, 7200).total
