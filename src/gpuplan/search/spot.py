"""A spot run of a known job: the interruption assumptions its spot price takes.

The reclaim rate is the offer's own (its spot plan's ``interruptions_per_hour``) or the stated
default (``pricing.quote.SpotAssumptions.for_plan``), per instance; ``N`` instances are
reclaimed ``N`` times as often. A job that expects reclaims checkpoints more often: Daly's
interval is chosen for hardware failures and reclaims together
(``estimate.reliability.estimate_reliability(reclaims_per_hour=...)``), which costs more
checkpoint stalls (the run stretches by ``goodput / goodput at that interval`` on its training
part) and makes each reclaim lose less: the restart plus half that interval
(``lost_seconds_per_interruption``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from gpuplan.scenario import Scenario

if TYPE_CHECKING:
    from gpuplan.pricing.quote import SpotAssumptions


def spot_assumptions(
    scenario: Scenario,
    offer: Any,
    gpu_count: int,
    goodput: float,
    startup_seconds: float,
    seconds: float,
    given: SpotAssumptions | None = None,
) -> SpotAssumptions | None:
    """The ``SpotAssumptions`` for ``gpu_count`` GPUs of ``offer`` running ``seconds`` (of
    which ``startup_seconds`` start-up) at ``goodput`` with hardware failures alone; ``None``
    when the offer sells no spot. ``given`` may fix the reclaim rate (``--interruptions-per-hour``)."""
    from gpuplan.pricing.quote import RELIABILITY_LOSS_SOURCE, SpotAssumptions, cheapest_spot_plan

    plan = cheapest_spot_plan(offer)
    if plan is None:
        return None
    assumptions = (given or SpotAssumptions()).for_plan(plan)
    instances = max(gpu_count // offer.gpus, 1)
    reliability = scenario.reliability.estimate(
        scenario.job, gpu_count, reclaims_per_hour=assumptions.rate * instances
    )
    training = seconds - startup_seconds
    stretched = startup_seconds + training * goodput / float(reliability.goodput)
    return replace(
        assumptions,
        restart_overhead_seconds=float(reliability.lost_seconds_per_interruption),
        restart_overhead_source=RELIABILITY_LOSS_SOURCE,
        run_stretch=stretched / seconds if seconds > 0 else 1.0,
    )
