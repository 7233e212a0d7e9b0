"""A plan row: one machine at one size on one offer, priced, with its notices."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from gpuplan.errors import InputError
from gpuplan.estimate.frameworks import FRAMEWORK_CODES
from gpuplan.estimate.interval import duration_bounds, speed_interval
from gpuplan.notices import Notice
from gpuplan.pricing.provenance import STALE_AFTER_DAYS, oldest_price
from gpuplan.scenario import Scenario
from gpuplan.search.evaluate import Evaluated, strategy_at
from gpuplan.search.request import PlanRequest

if TYPE_CHECKING:
    from gpuplan.pricing.quote import SpotAssumptions
from gpuplan.units import SECONDS_PER_DAY, SECONDS_PER_HOUR

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

BUBBLE_NOTICE_SHARE = 0.2
STARTUP_NOTICE_SHARE = 0.1
COMMUNICATION_NOTICE_SHARE = 0.5


# --- pricing ---------------------------------------------------------------------------------


def offer_sells(offer: Any, count: int) -> bool:
    instances, rest = divmod(count, offer.gpus)
    if rest or instances < offer.min_instances:
        return False
    return offer.max_instances is None or instances <= offer.max_instances


def _price(
    offer: Any,
    count: int,
    duration: float,
    tokens: float,
    request: PlanRequest,
    rates: Any,
    spot: SpotAssumptions | None = None,
) -> dict[str, Any] | None:
    """The row's cost; an offer left with spot plans only is priced at its expected spot cost
    under ``spot`` (``search.spot.spot_assumptions``)."""
    from gpuplan.pricing.quote import quote

    instances = count // offer.gpus
    try:
        priced = quote(
            offer,
            duration,
            instances,
            tokens=tokens or None,
            spot=spot,
            rates=rates,
            itemized=False,
        )
    except InputError:
        return None
    totals = priced.summary(request.currency, rates)
    age = None
    if request.today is not None:
        age = oldest_price((plan.provenance for plan in priced.mix.plans_used), request.today)
    return {
        "total": totals["total"],
        "currency": totals["currency"],
        "per_million_tokens": totals["per_million_tokens"],
        "per_gpu_hour": totals["per_gpu_hour"],
        "offer": offer.id,
        "provider": offer.provider,
        "region": offer.region,
        "instance_type": offer.instance_type,
        "instances": instances,
        "billing_mix": totals["billing_mix_description"],
        "hidden_fee_share": totals["hidden_fee_share"],
        "spot": totals["spot"],
        "warnings": totals["warnings"],
        **(age.to_dict() if age else {}),
    }


def _spot(
    scenario: Scenario, offer: Any, count: int, duration: dict[str, Any], seconds: float
) -> SpotAssumptions | None:
    """Spot assumptions for an offer left with spot plans only (``None`` otherwise)."""
    if not offer.plans or any(plan.kind != "spot" for plan in offer.plans):
        return None
    from gpuplan.search.spot import spot_assumptions

    return spot_assumptions(
        scenario, offer, count, duration["goodput"], duration["startup_seconds"], seconds
    )


def add_cost_bounds(
    row: dict[str, Any], offer: Any, tokens: float, request: PlanRequest, rates: Any
) -> None:
    """Price a shown row at the shortest and longest run its interval allows (``total_low``,
    ``total_high``); only shown rows are re-priced, so the search stays as fast."""
    cost = row["cost"]
    if cost is None:
        return
    duration = row["duration"]
    for key, seconds in (("total_low", "seconds_low"), ("total_high", "seconds_high")):
        spot = _spot(request.scenario, offer, row["count"], duration, duration[seconds])
        priced = _price(offer, row["count"], duration[seconds], tokens, request, rates, spot)
        cost[key] = priced["total"] if priced else cost["total"]


# --- notices ---------------------------------------------------------------------------------


def offer_notices(offer: Any, today: dt.date) -> list[Notice]:
    """Notices about an offer's data: unlisted topology, an article's claims."""
    notices = []
    if offer.topology is None:
        notices.append(Notice("unlisted_topology", {"offer": offer.id}))
    if offer.claims != "provider":
        notices.append(Notice("seed_claims", {"offer": offer.id, "claims": offer.claims}))
    return notices


def price_notices(cost: dict[str, Any] | None) -> list[Notice]:
    """Notices about the price a plan pays: older than ``STALE_AFTER_DAYS`` (judged on the
    latest date its oldest price could have been read), or from an undated source."""
    if not cost or "price_age_days" not in cost:
        return []
    values = {"offer": cost["offer"], "observed": cost["price_observed"]}
    if cost["price_date_quality"] == "undated":
        return [Notice("undated_price", values)]
    if cost["price_age_days"] > STALE_AFTER_DAYS:
        days = {"days": cost["price_age_days"], "limit": STALE_AFTER_DAYS}
        return [Notice("stale_price", {**values, **days})]
    return []


def plan_notices(evaluated: Evaluated, index: int, count: int) -> list[Notice]:
    """Notices about a plan's run: an assumed network, the bubble, start-up, communication."""
    notices = []
    instances = count // evaluated.machine.topology.gpus
    if evaluated.network_assumed and instances > 1:
        notices.append(Notice("no_cluster_network", {"instances": instances}))
    bubble = float(evaluated.bubble_share[index])
    if bubble > BUBBLE_NOTICE_SHARE:
        notices.append(Notice("bubble", {"share": f"{bubble:.0%}"}))
    startup = float(evaluated.startup_seconds[index])
    share = startup / float(evaluated.duration_seconds[index])
    if share > STARTUP_NOTICE_SHARE:
        notices.append(
            Notice("startup", {"share": f"{share:.0%}", "minutes": f"{startup / 60:.0f}"})
        )
    communication = float(evaluated.communication_share[index])
    if communication > COMMUNICATION_NOTICE_SHARE:
        notices.append(Notice("communication", {"share": f"{communication:.0%}"}))
    return notices


def spot_notice(offer_id: str, spot: dict[str, Any]) -> Notice:
    """What a spot price assumes: the reclaim rate, the time each reclaim loses, their sources,
    and the run's expected length."""
    from gpuplan.units import format_duration

    return Notice(
        "spot",
        {
            "offer": offer_id,
            "interruptions": f"{spot['expected_interruptions']:.1f}",
            "rate": f"{spot['interruptions_per_hour']:.3g}",
            "rate_source": spot["interruptions_source"],
            "lost": format_duration(spot["restart_overhead_seconds"]),
            "lost_source": spot["restart_overhead_source"],
            "expected": format_duration(spot["expected_seconds"]),
        },
    )


def plan_row(
    evaluated: Evaluated,
    index: int,
    offer: Any,
    scenario: Scenario,
    request: PlanRequest,
    rates: Any,
    offer_notes: list[Notice],
) -> dict[str, Any]:
    job = scenario.job
    machine = evaluated.machine
    count = int(evaluated.candidates.count[index])
    strategy = strategy_at(evaluated, index, scenario)
    duration = float(evaluated.duration_seconds[index])
    startup = float(evaluated.startup_seconds[index])
    tokens_per_second = float(evaluated.tokens_per_second[index])
    interval = speed_interval(
        machine.gpu.architecture,
        job.precision if machine.gpu.has_fp8 else "bf16",
        job.model.is_moe,
        count,
    )
    low_factor, high_factor = (interval.low, interval.high) if interval else (1.0, 1.0)
    shortest, longest = duration_bounds(startup, duration - startup, interval)
    cost = None
    if offer is not None:
        assumptions = _spot(
            scenario,
            offer,
            count,
            {"goodput": float(evaluated.goodput[index]), "startup_seconds": startup},
            duration,
        )
        cost = _price(offer, count, duration, job.tokens, request, rates, assumptions)
    spot = cost["spot"] if cost else None
    expected = spot["expected_seconds"] if spot else duration
    notices = plan_notices(evaluated, index, count) + price_notices(cost) + offer_notes
    if spot:
        notices.append(spot_notice(offer.id, spot))
    topology = machine.topology
    if offer is not None and offer.topology is not None:
        topology = offer.topology
    return {
        "gpu": machine.gpu.id,
        "count": count,
        "nodes": count // topology.gpus,
        "machine": {
            **topology.to_dict(),
            "summary": topology.summary(),
            "listed": offer is None or offer.topology is not None,
            "network_assumed": bool(evaluated.network_assumed and count > topology.gpus),
        },
        "strategy": {
            **strategy.to_dict(),
            "framework": FRAMEWORK_CODES[int(evaluated.framework[index])],
        },
        "memory": {
            "peak_bytes": float(evaluated.peak_bytes[index]),
            "capacity_bytes": float(machine.gpu.memory_bytes),
            "headroom": float(evaluated.headroom[index]),
            "host_bytes_per_node": (
                0.0 if evaluated.host_bytes is None else float(evaluated.host_bytes[index])
            ),
        },
        "throughput": {
            "step_seconds": float(evaluated.step_seconds[index]),
            "tokens_per_second": tokens_per_second,
            "tokens_per_second_low": tokens_per_second * low_factor,
            "tokens_per_second_high": tokens_per_second * high_factor,
            "tokens_per_second_per_gpu": tokens_per_second / count,
            "mfu": float(evaluated.mfu[index]),
            "communication_share": float(evaluated.communication_share[index]),
            "bubble_share": float(evaluated.bubble_share[index]),
        },
        "duration": {
            "seconds": duration,
            "days": duration / SECONDS_PER_DAY,
            "seconds_low": shortest,
            "seconds_high": longest,
            "expected_seconds": expected,
            "expected_days": expected / SECONDS_PER_DAY,
            "days_low": shortest / SECONDS_PER_DAY,
            "days_high": longest / SECONDS_PER_DAY,
            "startup_seconds": startup,
            "training_seconds": duration - startup,
            "goodput": float(evaluated.goodput[index]),
        },
        "gpu_hours": count * duration / SECONDS_PER_HOUR,
        "cost": cost,
        "interval": interval.to_dict() if interval else None,
        "warnings": [notice.to_dict() for notice in notices],
    }
