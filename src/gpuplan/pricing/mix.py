"""The cheapest way to pay for one instance over a duration: packages plus a metered tail.

A mix is a number of blocks ``n_i`` of each package or reserved term ``i`` (term ``T_i``, block
cost ``c_i``) and one continuous metered run for what the blocks leave uncovered:

    cost(n) = sum_i n_i c_i + metered(max(0, D - sum_i n_i T_i))

where ``metered(r)`` is the cheapest pay-as-you-go plan for a run of ``r`` seconds after billing
granularity and minimum charge (0 when ``r = 0``). Blocks may cover more than ``D`` (two months
for 40 days). The minimum is found exactly by an unbounded knapsack over covered time: every
covered total is a multiple of ``g = gcd(T_i)``, so ``best[k]``, the cheapest set of blocks
covering exactly ``k g`` seconds, is a dynamic programme over ``k``; no optimum covers
``D + max T_i`` or more (one block could be dropped), which bounds ``k``. The answer is
``min_k best[k] + metered(D - k g)``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from gpuplan.errors import InputError
from gpuplan.pricing.offers import PricePlan

MAX_STATES = 5_000_000
"""Guard for the dynamic programme (terms whose gcd is tiny against a long duration)."""


class BillingError(InputError):
    """A duration the offer's plans cannot cover (e.g. packages only, and too fine a gcd)."""


@dataclass(frozen=True)
class BillingMix:
    """The cheapest mix for one instance: package blocks, then a metered tail."""

    blocks: tuple[tuple[PricePlan, int], ...]
    metered_plan: PricePlan | None
    metered_seconds: float
    cost: Decimal
    duration_seconds: float

    @property
    def covered_seconds(self) -> int:
        return sum(plan.term_seconds or 0 for plan, count in self.blocks for _ in range(count))

    @property
    def plans_used(self) -> tuple[PricePlan, ...]:
        """The plans this mix pays: its package blocks, then the metered tail's plan."""
        used = [plan for plan, count in self.blocks if count]
        if self.metered_plan is not None and self.metered_seconds > 0:
            used.append(self.metered_plan)
        return tuple(used)

    @property
    def unused_seconds(self) -> float:
        """Paid-for package time beyond the duration (e.g. 20 days of a second month)."""
        return max(0.0, self.covered_seconds - self.duration_seconds)

    def describe(self) -> str:
        from gpuplan.units import format_duration

        parts = [f"{count} x {plan.name}" for plan, count in self.blocks if count]
        if self.metered_plan is not None and self.metered_seconds > 0:
            parts.append(f"{format_duration(self.metered_seconds)} {self.metered_plan.name}")
        return " + ".join(parts) if parts else "nothing to pay"


def cheapest_metered(
    plans: Sequence[PricePlan], seconds: float, gpus: int
) -> tuple[PricePlan | None, Decimal | None]:
    """The metered plan with the lowest cost for one run of ``seconds`` (``(None, 0)`` at 0 s)."""
    if seconds <= 0:
        return None, Decimal(0)
    best: tuple[PricePlan | None, Decimal | None] = (None, None)
    for plan in plans:
        cost = plan.run_cost(seconds, gpus)
        if best[1] is None or cost < best[1]:
            best = (plan, cost)
    return best


def cheapest_mix(plans: Sequence[PricePlan], duration_seconds: float, gpus: int) -> BillingMix:
    """Solve the cheapest mix exactly (see the module docstring). Spot plans are ignored."""
    if duration_seconds < 0 or not math.isfinite(duration_seconds):
        raise BillingError.of("error.duration_seconds", value=duration_seconds)
    packages = [plan for plan in plans if plan.kind == "package"]
    metered = [plan for plan in plans if plan.kind == "metered"]
    if not packages and not metered:
        raise BillingError.of("error.billing_no_plan")
    if not packages:
        plan, cost = cheapest_metered(metered, duration_seconds, gpus)
        return BillingMix((), plan, duration_seconds, cost or Decimal(0), duration_seconds)

    terms = [int(plan.term_seconds or 0) for plan in packages]
    step = math.gcd(*terms)
    needed = math.ceil(round(duration_seconds, 6) / step)
    states = needed + max(terms) // step
    if states > MAX_STATES:
        raise BillingError.of("error.billing_states", states=f"{states:,}", step=step)
    block_costs = [plan.block_cost(gpus) for plan in packages]
    block_steps = [term // step for term in terms]
    best: list[Decimal | None] = [None] * (states + 1)
    last_block: list[int] = [-1] * (states + 1)
    best[0] = Decimal(0)
    for covered in range(1, states + 1):
        for index, size in enumerate(block_steps):
            if size > covered:
                continue
            before = best[covered - size]
            if before is None:
                continue
            cost = before + block_costs[index]
            current = best[covered]
            if current is None or cost < current:
                best[covered] = cost
                last_block[covered] = index

    winner: tuple[Decimal, int, PricePlan | None] | None = None
    for covered in range(states + 1):
        blocks_cost = best[covered]
        if blocks_cost is None:
            continue
        remainder = max(0.0, duration_seconds - covered * step)
        plan, tail_cost = cheapest_metered(metered, remainder, gpus)
        if tail_cost is None:
            continue
        total = blocks_cost + tail_cost
        if winner is None or total < winner[0]:
            winner = (total, covered, plan)
    if winner is None:
        raise BillingError.of("error.billing_uncovered")
    total, covered, tail_plan = winner
    counts = [0] * len(packages)
    cursor = covered
    while cursor > 0:
        index = last_block[cursor]
        counts[index] += 1
        cursor -= block_steps[index]
    remainder = max(0.0, duration_seconds - covered * step)
    blocks = tuple((plan, count) for plan, count in zip(packages, counts, strict=True) if count)
    return BillingMix(blocks, tail_plan, remainder if tail_plan else 0.0, total, duration_seconds)


def cost_of_plan_alone(plan: PricePlan, duration_seconds: float, gpus: int) -> tuple[Decimal, int]:
    """Cost of covering the duration with one plan only, and the blocks (or billed seconds) used.

    Metered: one continuous run. Package or reserved: ``ceil(D / T)`` blocks.
    """
    if plan.kind == "package":
        term = int(plan.term_seconds or 0)
        blocks = math.ceil(round(duration_seconds, 6) / term) if duration_seconds > 0 else 0
        return plan.block_cost(gpus) * blocks, blocks
    return plan.run_cost(duration_seconds, gpus), plan.billed_seconds(duration_seconds)
