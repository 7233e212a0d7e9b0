"""The cheapest-mix solver against brute force over every block count."""

from __future__ import annotations

import itertools
import math
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplan.pricing.mix import cheapest_metered, cheapest_mix

from .helpers import offer_from

DAY = 86400


def brute_force(plans, duration: float, gpus: int) -> Decimal:
    packages = [plan for plan in plans if plan.kind == "package"]
    metered = [plan for plan in plans if plan.kind == "metered"]
    ranges = [range(math.ceil(duration / plan.term_seconds) + 1) for plan in packages]
    best = None
    for counts in itertools.product(*ranges):
        covered = sum(
            count * plan.term_seconds for count, plan in zip(counts, packages, strict=True)
        )
        remainder = max(0.0, duration - covered)
        if remainder > 0 and not metered:
            continue
        _, tail = cheapest_metered(metered, remainder, gpus)
        cost = sum(
            (count * plan.block_cost(gpus) for count, plan in zip(counts, packages, strict=True)),
            Decimal(0),
        )
        cost += tail or Decimal(0)
        if best is None or cost < best:
            best = cost
    assert best is not None
    return best


prices = st.integers(min_value=1, max_value=5000)


@settings(max_examples=60, deadline=None)
@given(
    hourly=st.one_of(st.none(), st.integers(min_value=1, max_value=80)),
    daily=st.one_of(st.none(), prices),
    weekly=st.one_of(st.none(), prices),
    monthly=st.one_of(st.none(), prices),
    hours=st.integers(min_value=0, max_value=24 * 75),
    minimum_hours=st.integers(min_value=0, max_value=30),
)
def test_cheapest_mix_matches_brute_force(hourly, daily, weekly, monthly, hours, minimum_hours):
    plans = []
    if hourly is not None:
        plans.append(
            f'mode = "hourly", price = {hourly / 10}, per = "instance", minimum = "{minimum_hours}h"'
        )
    for mode, price in (("daily", daily), ("weekly", weekly), ("monthly", monthly)):
        if price is not None:
            plans.append(f'mode = "{mode}", price = {price}, per = "instance"')
    if not plans:
        plans.append('mode = "daily", price = 10, per = "instance"')
    offer = offer_from(plans)
    duration = hours * 3600.0
    mix = cheapest_mix(offer.plans, duration, 1)
    assert mix.cost == brute_force(offer.plans, duration, 1)
    covered = mix.covered_seconds + (mix.metered_seconds if mix.metered_plan else 0)
    assert covered >= duration


def test_per_gpu_packages_scale_with_gpus():
    offer = offer_from(
        ['mode = "weekly", price = 100, per = "gpu"', 'mode = "hourly", price = 1, per = "gpu"'],
        gpus=4,
    )
    mix = cheapest_mix(offer.plans, 10 * DAY, 4)
    assert mix.cost == brute_force(offer.plans, 10 * DAY, 4)
    assert mix.cost == 4 * (100 + 72)
