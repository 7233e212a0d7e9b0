"""An itemized quote: what running N instances of an offer for a duration costs.

``quote()`` takes a duration in seconds (and optionally trained tokens or a throughput) and
knows nothing about models: the speed model supplies the duration later.

1. Compute: the cheapest mix of the offer's packages, reserved terms and pay-as-you-go plans for
   one instance (:mod:`gpuplan.pricing.mix`), times the number of instances, next to the cost of
   each plan alone.
2. Discounts the provider states (long-term rental) come off the compute charge; a negotiated
   factor has already scaled the plan prices (``OfferBook.build``).
3. Fees (:mod:`gpuplan.pricing.fees`): storage while running and while stopped, egress tiers,
   public IPs, shares (support, licences), then tax. ``hidden_fee_share = fees / total``.
4. Spot, when the offer has it, as an expected cost beside the on-demand fallback; an offer left
   with spot plans only (``--billing spot``) is priced at that expected cost. Each instance is
   reclaimed at ``λ`` per hour, independently, and one reclaim stops a synchronous job, which
   loses ``h`` seconds (restart, reload, recompute since the last checkpoint) on every instance.
   ``N`` instances running ``D`` seconds (the quoted duration times ``run_stretch``, the extra
   checkpoints of a job that expects reclaims) see ``n = λ N D / 3600`` interruptions and run
   ``E = D + n h`` seconds; each replacement instance wastes half a billing step on average, so
   ``expected cost = price/s x (N E + n g / 2)`` (pricing-and-catalogs.md §9.3). ``λ`` is the
   spot plan's own rate where its offer states one (``interruptions_per_hour`` with
   ``interruptions_source``), else :data:`DEFAULT_INTERRUPTIONS_PER_HOUR`; ``h`` is
   :data:`DEFAULT_RESTART_OVERHEAD_SECONDS` unless the caller passes the reliability model's
   figure for a known job (``search.spot.spot_assumptions``), as plans and scenario quotes do.
5. Normalization: total per GPU-hour, per job, and per million trained tokens
   (``total / tokens x 10^6``, tokens given or ``throughput x duration``).

Amounts are ``Decimal`` in the offer's currency, converted at the end when another currency is
asked for; the exchange rate used is printed with its date.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

from gpuplan.errors import InputError
from gpuplan.messages import ENGLISH
from gpuplan.notices import Notice
from gpuplan.pricing.currency import ExchangeRates, default_rates
from gpuplan.pricing.fees import FeeLine, Usage, itemize_fees
from gpuplan.pricing.mix import BillingMix, cheapest_mix, cost_of_plan_alone
from gpuplan.pricing.offers import FeeItem, Offer, PricePlan
from gpuplan.pricing.provenance import Provenance
from gpuplan.units import SECONDS_PER_HOUR

DEFAULT_INTERRUPTIONS_PER_HOUR = 1 / 24
"""Assumed spot reclaim rate: once a day per instance. An assumption, not a measurement: no
provider publishes a rate per GPU offer (AWS's Spot Instance Advisor gives only a band of the
share of instances reclaimed in a month); give an offer's own figure as its spot plan's
``interruptions_per_hour`` with ``interruptions_source``."""
DEFAULT_INTERRUPTIONS_SOURCE = ENGLISH["source.assumed_reclaims"]
DEFAULT_RESTART_OVERHEAD_SECONDS = 1800.0
"""Assumed work lost per spot interruption: 30 minutes (re-provision, reload, recompute), where
no job is known to the reliability model."""
DEFAULT_RESTART_SOURCE = ENGLISH["source.assumed_restart"]
RELIABILITY_LOSS_SOURCE = (
    "reliability model: restart plus half a checkpoint interval chosen for failures and reclaims"
)
"""Where the time lost per interruption comes from when the job is known
(``estimate.reliability.lost_seconds_per_interruption``)."""


class QuoteError(InputError):
    """A quote request that cannot be priced (negative duration, no usable plan, ...)."""


@dataclass(frozen=True)
class SpotAssumptions:
    """How often spot capacity is reclaimed (per instance-hour) and what each reclaim costs the
    job in lost time, each with where it comes from. ``interruptions_per_hour = None`` takes the
    spot plan's own rate, else the default (:meth:`for_plan`)."""

    interruptions_per_hour: float | None = None
    restart_overhead_seconds: float = DEFAULT_RESTART_OVERHEAD_SECONDS
    interruptions_source: str = ""
    restart_overhead_source: str = DEFAULT_RESTART_SOURCE
    run_stretch: float = 1.0
    """How much longer the uninterrupted run is at the checkpoint interval a spot job uses
    (more checkpoints, ``search.spot``): the quoted duration times this is ``D``."""

    def __post_init__(self) -> None:
        rate = self.interruptions_per_hour
        if rate is not None and not (math.isfinite(rate) and rate >= 0):
            raise QuoteError.of("error.spot_rate")
        if not (
            math.isfinite(self.restart_overhead_seconds) and self.restart_overhead_seconds >= 0
        ):
            raise QuoteError.of("error.spot_restart")
        if not (math.isfinite(self.run_stretch) and self.run_stretch >= 1):
            raise QuoteError.of("error.spot_stretch")

    def for_plan(self, plan: PricePlan) -> SpotAssumptions:
        """The assumptions for one spot plan: a rate given here, else the plan's, else
        :data:`DEFAULT_INTERRUPTIONS_PER_HOUR`; each with its source."""
        if self.interruptions_per_hour is not None:
            return replace(self, interruptions_source=self.interruptions_source or "given")
        if plan.interruptions_per_hour is not None:
            return replace(
                self,
                interruptions_per_hour=plan.interruptions_per_hour,
                interruptions_source=plan.interruptions_source,
            )
        return replace(
            self,
            interruptions_per_hour=DEFAULT_INTERRUPTIONS_PER_HOUR,
            interruptions_source=DEFAULT_INTERRUPTIONS_SOURCE,
        )

    @property
    def rate(self) -> float:
        """The rate per instance-hour (the default where none is set)."""
        if self.interruptions_per_hour is None:
            return DEFAULT_INTERRUPTIONS_PER_HOUR
        return self.interruptions_per_hour


@dataclass(frozen=True)
class ComputeLine:
    """A compute charge: ``count`` blocks of a package, or one metered run."""

    plan: PricePlan
    count: int
    seconds: float
    amount: Decimal

    def to_dict(self, rates: ExchangeRates, currency: str) -> dict[str, Any]:
        kind = "package" if self.plan.kind == "package" else "metered"
        item = f"{self.count} x {self.plan.name}" if kind == "package" else self.plan.name
        line: dict[str, Any] = {
            "kind": "compute",
            "item": item,
            "plan": self.plan.name,
            "mode": self.plan.mode,
            "quantity": self.count if kind == "package" else self.plan.billed_seconds(self.seconds),
            "unit": "blocks" if kind == "package" else "billed seconds per instance",
            "unit_price": self.plan.price,
            "per": self.plan.per,
            "price_period_seconds": self.plan.price_period_seconds,
            "amount": rates.convert(self.amount, self.plan.currency, currency),
            "currency": currency,
            **self.plan.provenance.to_dict(),
        }
        if self.plan.upfront_share is not None:
            line["upfront_amount"] = line["amount"] * self.plan.upfront_share
        return line


@dataclass(frozen=True)
class SpotEstimate:
    """Expected cost of running on spot, beside the on-demand fallback."""

    plan: PricePlan
    assumptions: SpotAssumptions
    expected_seconds: float
    expected_interruptions: float
    expected_cost: Decimal
    fallback_cost: Decimal | None
    """The on-demand cost of the same run; ``None`` for an offer priced on spot alone."""
    discount_vs_on_demand: bool

    def to_dict(self, rates: ExchangeRates, source_currency: str, currency: str) -> dict[str, Any]:
        expected = rates.convert(self.expected_cost, source_currency, currency)
        fallback = (
            rates.convert(self.fallback_cost, source_currency, currency)
            if self.fallback_cost is not None
            else None
        )
        return {
            "plan": self.plan.name,
            "price": self.plan.price,
            "per": self.plan.per,
            "interruptions_per_hour": self.assumptions.rate,
            "interruptions_source": self.assumptions.interruptions_source,
            "restart_overhead_seconds": self.assumptions.restart_overhead_seconds,
            "restart_overhead_source": self.assumptions.restart_overhead_source,
            "expected_seconds": self.expected_seconds,
            "expected_interruptions": self.expected_interruptions,
            "expected_compute": expected,
            "on_demand_fallback_compute": fallback,
            "saving": fallback - expected if fallback is not None else None,
            "cheaper_than_on_demand": expected < fallback if fallback is not None else None,
            "spot_discount_listed": self.discount_vs_on_demand,
            "currency": currency,
            **self.plan.provenance.to_dict(),
        }


def spot_expected_cost(
    plan: PricePlan,
    duration_seconds: float,
    gpus: int,
    instances: int,
    assumptions: SpotAssumptions,
) -> tuple[Decimal, float, float]:
    """``(expected cost, expected seconds, expected interruptions)`` of ``instances`` instances:
    see the module docstring (``assumptions.rate`` is per instance-hour)."""
    run = duration_seconds * assumptions.run_stretch
    interruptions = assumptions.rate * instances * run / SECONDS_PER_HOUR
    expected_seconds = run + interruptions * assumptions.restart_overhead_seconds
    billed = expected_seconds + interruptions / instances * plan.granularity_seconds / 2
    if duration_seconds > 0:
        billed = max(billed, float(plan.minimum_seconds))
    per_second = plan.instance_price(gpus) / plan.price_period_seconds
    return per_second * Decimal(repr(billed)) * instances, expected_seconds, interruptions


@dataclass(frozen=True)
class Quote:
    """The itemized cost of a job on one offer. Amounts in the offer's currency."""

    offer: Offer
    duration_seconds: float
    instances: int
    mix: BillingMix
    compute_lines: tuple[ComputeLine, ...]
    discount_lines: tuple[tuple[str, Decimal, dict[str, Any]], ...]
    fee_lines: tuple[FeeLine, ...]
    plans_alone: tuple[tuple[PricePlan, Decimal], ...]
    spot: SpotEstimate | None
    tokens: float | None
    warnings: tuple[dict[str, Any], ...] = field(default_factory=tuple)

    @property
    def compute(self) -> Decimal:
        return sum((line.amount for line in self.compute_lines), Decimal(0)) + sum(
            (amount for _, amount, _ in self.discount_lines), Decimal(0)
        )

    @property
    def fees(self) -> Decimal:
        return sum((line.amount or Decimal(0) for line in self.fee_lines), Decimal(0))

    @property
    def total(self) -> Decimal:
        return self.compute + self.fees

    @property
    def priced_on_spot(self) -> bool:
        """Whether the total is the expected spot cost (an offer left with spot plans only)."""
        return self.mix.metered_plan is not None and self.mix.metered_plan.kind == "spot"

    @property
    def gpu_hours(self) -> float:
        return self.offer.gpus * self.instances * self.duration_seconds / SECONDS_PER_HOUR

    def summary(self, currency: str, rates: ExchangeRates) -> dict[str, Any]:
        """The totals in ``currency``: what a plan row shows (:meth:`to_dict` adds the lines)."""
        source = self.offer.currency
        total = rates.convert(self.total, source, currency)
        fees = rates.convert(self.fees, source, currency)
        gpu_hours = Decimal(repr(self.gpu_hours))
        return {
            "currency": currency,
            "total": total,
            "fees": fees,
            "hidden_fee_share": (fees / total) if total else Decimal(0),
            "per_gpu_hour": (total / gpu_hours) if gpu_hours else None,
            "per_job": total,
            "tokens": self.tokens,
            "per_million_tokens": (total / Decimal(repr(self.tokens)) * 1_000_000)
            if self.tokens
            else None,
            "billing_mix_description": self.mix.describe(),
            "spot": self.spot.to_dict(rates, source, currency)
            if self.spot is not None and self.priced_on_spot
            else None,
            "warnings": list(self.warnings),
        }

    def to_dict(
        self, currency: str | None = None, rates: ExchangeRates | None = None
    ) -> dict[str, Any]:
        """The quote in base units, converted to ``currency`` (the offer's by default)."""
        rates = rates or default_rates()
        source = self.offer.currency
        currency = currency or source
        totals = self.summary(currency, rates)

        def convert(amount: Decimal) -> Decimal:
            return rates.convert(amount, source, currency)

        total = totals["total"]
        lines = [line.to_dict(rates, currency) for line in self.compute_lines]
        for item, amount, provenance in self.discount_lines:
            lines.append(
                {
                    "kind": "discount",
                    "item": item,
                    "amount": convert(amount),
                    "currency": currency,
                    **provenance,
                }
            )
        for fee_line in self.fee_lines:
            fee = fee_line.to_dict()
            if fee_line.amount is not None:
                fee["amount"] = convert(fee_line.amount)
            fee["currency"] = currency
            lines.append(fee)
        result: dict[str, Any] = {
            "offer": self.offer.id,
            "provider": self.offer.provider,
            "gpu": self.offer.gpu,
            "gpus_per_instance": self.offer.gpus,
            "instances": self.instances,
            "gpu_count": self.offer.gpus * self.instances,
            "duration_seconds": self.duration_seconds,
            "currency": currency,
            "total": total,
            "compute": convert(self.compute),
            "fees": totals["fees"],
            "hidden_fee_share": totals["hidden_fee_share"],
            "per_gpu_hour": totals["per_gpu_hour"],
            "per_job": total,
            "tokens": self.tokens,
            "per_million_tokens": totals["per_million_tokens"],
            "billing_mix": {
                "description": self.mix.describe(),
                "per_instance": convert(self.mix.cost),
                "blocks": [
                    {"plan": plan.name, "count": count, "term_seconds": plan.term_seconds}
                    for plan, count in self.mix.blocks
                ],
                "metered_plan": self.mix.metered_plan.name if self.mix.metered_plan else None,
                "metered_seconds": self.mix.metered_seconds,
                "unused_seconds": self.mix.unused_seconds,
            },
            "lines": lines,
            "plans_alone": [
                {"plan": plan.name, "mode": plan.mode, "total_compute": convert(amount)}
                for plan, amount in self.plans_alone
            ],
            "spot": self.spot.to_dict(rates, source, currency) if self.spot else None,
            "price_list": [plan.to_dict(self.offer.gpus) for plan in self.offer.plans],
            "tax_included": self.offer.tax_included,
            "warnings": list(self.warnings),
        }
        if currency != source:
            result["exchange_rate"] = {
                "from": source,
                "to": currency,
                "rate": rates.convert(Decimal(1), source, currency),
                "source": rates.describe(source if source != rates.base else currency)["source"],
                "observed": rates.describe(source if source != rates.base else currency)[
                    "observed"
                ],
            }
        return result


def _mix_lines(mix: BillingMix, gpus: int, instances: int) -> list[ComputeLine]:
    """The compute lines of a billing mix: its package blocks, then its metered tail."""
    lines = [
        ComputeLine(
            plan,
            count,
            float(count * (plan.term_seconds or 0)),
            plan.block_cost(gpus) * count * instances,
        )
        for plan, count in mix.blocks
    ]
    if mix.metered_plan is not None and mix.metered_seconds > 0:
        lines.append(
            ComputeLine(
                mix.metered_plan,
                1,
                mix.metered_seconds,
                mix.metered_plan.run_cost(mix.metered_seconds, gpus) * instances,
            )
        )
    return lines


def _discount_lines(
    offer: Offer, compute_lines: list[ComputeLine], duration_seconds: float
) -> tuple[list[tuple[str, Decimal, dict[str, Any]]], list[dict[str, Any]]]:
    lines: list[tuple[str, Decimal, dict[str, Any]]] = []
    warnings: list[dict[str, Any]] = []
    for discount in offer.discounts:
        if duration_seconds < discount.minimum_seconds:
            continue
        if discount.share is None or not discount.automatic:
            details = discount.notes or ENGLISH["notice.no_public_figure"]
            warnings.append(
                Notice(
                    "discount_not_applied", {"kind": discount.kind, "details": details}
                ).to_dict()
            )
            continue
        base = sum(
            (
                line.amount
                for line in compute_lines
                if not discount.applies_to_modes or line.plan.mode in discount.applies_to_modes
            ),
            Decimal(0),
        )
        if base:
            label = f"{discount.kind} discount {discount.share:.0%}"
            if discount.share_high is not None:
                label += f" (source says up to {discount.share_high:.0%})"
            lines.append((label, -base * discount.share, discount.provenance.to_dict()))
    return lines, warnings


def quote(
    offer: Offer,
    duration_seconds: float,
    instances: int = 1,
    usage: Usage | None = None,
    tokens: float | None = None,
    tokens_per_second: float | None = None,
    spot: SpotAssumptions | None = None,
    tax_rate: Decimal | None = None,
    rates: ExchangeRates | None = None,
    itemized: bool = True,
) -> Quote:
    """Quote ``instances`` instances of ``offer`` running for ``duration_seconds``.

    ``usage`` gives storage, idle time, egress and public IPs (``running_seconds`` and
    ``instances`` are filled in here). ``tokens`` or ``tokens_per_second`` (the whole job's
    throughput) give the cost per million trained tokens. ``spot`` sets the interruption rate
    and the time each interruption loses (module docstring, step 4); an offer of spot plans only
    is priced at its expected spot cost. ``itemized = False`` leaves out what the total does not
    need (each plan alone, the spot estimate beside on-demand), for ranking many quotes.
    """
    if not math.isfinite(duration_seconds) or duration_seconds < 0:
        raise QuoteError.of("error.duration_seconds", value=duration_seconds)
    if instances < 1:
        raise QuoteError.of("error.instances", value=instances)
    rates = rates or default_rates()
    warnings: list[dict[str, Any]] = []
    assumptions = spot or SpotAssumptions()
    spot_plans = offer.plans_of_kind("spot")
    spot_estimate = None
    if spot_plans and len(spot_plans) == len(offer.plans):
        spot_estimate = _spot_estimate(offer, duration_seconds, instances, assumptions)
        mix = BillingMix(
            (),
            spot_estimate.plan,
            spot_estimate.expected_seconds,
            spot_estimate.expected_cost / instances,
            duration_seconds,
        )
        compute_lines = [
            ComputeLine(
                spot_estimate.plan, 1, spot_estimate.expected_seconds, spot_estimate.expected_cost
            )
        ]
    else:
        mix = cheapest_mix(offer.plans, duration_seconds, offer.gpus)
        compute_lines = _mix_lines(mix, offer.gpus, instances)
    discount_lines, discount_warnings = _discount_lines(offer, compute_lines, duration_seconds)
    warnings.extend(discount_warnings)
    compute = sum((line.amount for line in compute_lines), Decimal(0)) + sum(
        (amount for _, amount, _ in discount_lines), Decimal(0)
    )
    base_usage = usage or Usage()
    full_usage = Usage(
        instances=instances,
        running_seconds=duration_seconds,
        stopped_seconds=base_usage.stopped_seconds,
        storage_bytes=base_usage.storage_bytes,
        egress_bytes=base_usage.egress_bytes,
        ingress_bytes=base_usage.ingress_bytes,
        public_ips=base_usage.public_ips,
    )
    fee_lines = itemize_fees(offer.fees, full_usage, compute, offer.currency, rates)
    has_tax_fee = any(fee.category == "tax" and fee.is_charged for fee in offer.fees)
    if tax_rate is not None and has_tax_fee:
        warnings.append(Notice("own_tax_rate").to_dict())
    if tax_rate is not None and not has_tax_fee:
        tax_fee = FeeItem(
            category="tax",
            item="tax (rate given by the user)",
            price=tax_rate,
            currency=offer.currency,
            unit="share",
            provenance=Provenance("user input --tax-rate", dt.date.today().isoformat(), "exact"),
        )
        if offer.tax_included:
            warnings.append(Notice("tax_included").to_dict())
        fee_lines += itemize_fees(
            (tax_fee,),
            full_usage,
            compute + sum((line.amount or Decimal(0) for line in fee_lines), Decimal(0)),
            offer.currency,
            rates,
        )
    elif offer.tax_included is False and not has_tax_fee:
        warnings.append(Notice("tax_excluded").to_dict())

    plans_alone = tuple(
        (plan, cost_of_plan_alone(plan, duration_seconds, offer.gpus)[0] * instances)
        for plan in offer.plans
        if plan.kind != "spot" and itemized
    )
    if spot_plans and spot_estimate is None and itemized:
        estimate = _spot_estimate(offer, duration_seconds, instances, assumptions)
        fallback = mix.cost * instances + sum(
            (amount for _, amount, _ in discount_lines), Decimal(0)
        )
        spot_estimate = replace(estimate, fallback_cost=fallback)
        if not estimate.discount_vs_on_demand:
            warnings.append(Notice("spot_not_cheaper").to_dict())

    trained_tokens = tokens
    if trained_tokens is None and tokens_per_second is not None:
        trained_tokens = tokens_per_second * duration_seconds
    for plan in offer.plans:
        if plan.provenance.is_estimate:
            warnings.append(Notice("estimated_price", {"plan": plan.name}).to_dict())
        if plan.provenance.date_quality == "undated":
            warnings.append(
                Notice(
                    "undated_plan", {"plan": plan.name, "observed": plan.provenance.observed}
                ).to_dict()
            )
    return Quote(
        offer=offer,
        duration_seconds=duration_seconds,
        instances=instances,
        mix=mix,
        compute_lines=tuple(compute_lines),
        discount_lines=tuple(discount_lines),
        fee_lines=tuple(fee_lines),
        plans_alone=plans_alone,
        spot=spot_estimate,
        tokens=trained_tokens,
        warnings=tuple(warnings),
    )


def cheapest_spot_plan(offer: Offer) -> PricePlan | None:
    """The spot plan a quote prices: the offer's cheapest per GPU-hour (``None``: no spot)."""
    plans = offer.plans_of_kind("spot")
    return min(plans, key=lambda plan: plan.per_gpu_hour(offer.gpus)) if plans else None


def _spot_estimate(
    offer: Offer, duration_seconds: float, instances: int, assumptions: SpotAssumptions
) -> SpotEstimate:
    """The cheapest spot plan's expected cost, under that plan's assumptions (no fallback)."""
    spot_plan = cheapest_spot_plan(offer)
    assert spot_plan is not None
    resolved = assumptions.for_plan(spot_plan)
    expected, expected_seconds, interruptions = spot_expected_cost(
        spot_plan, duration_seconds, offer.gpus, instances, resolved
    )
    metered = offer.plans_of_kind("metered")
    listed_discount = not metered or spot_plan.per_gpu_hour(offer.gpus) < min(
        plan.per_gpu_hour(offer.gpus) for plan in metered
    )
    return SpotEstimate(
        spot_plan, resolved, expected_seconds, interruptions, expected, None, listed_discount
    )


def cost_floor_per_second(offer: Offer) -> Decimal | None:
    """A lower bound on what one instance of ``offer`` costs per second of any run, in the
    offer's currency: the lowest ``instance price / price period`` of its non-spot plans (a
    package of term ``T`` costs ``price x ceil(d / T) >= price x d / T`` over ``d`` seconds; a
    metered plan's minimum and granularity only add), times ``1 - s`` for the largest
    automatic discount share ``s``. Fees are never negative. An offer of spot plans only is
    priced at its expected spot cost, which is at least ``price / period`` per second of the
    uninterrupted run, so its spot plans give the floor. ``None`` for an offer without plans."""
    priced = [plan for plan in offer.plans if plan.kind != "spot"] or list(offer.plans)
    rates = [plan.instance_price(offer.gpus) / plan.price_period_seconds for plan in priced]
    if not rates:
        return None
    shares = [d.share for d in offer.discounts if d.automatic and d.share is not None]
    return min(rates) * (1 - max(shares, default=Decimal(0)))
