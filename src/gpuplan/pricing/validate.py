"""Catalog hygiene: reject prices that cannot be right, flag prices that may be out of date.

Rules, from the quirks found in public catalogs (pricing-and-catalogs.md §2 and §8.5):

Errors (the offer is rejected):
  * a placeholder price: zero or negative, or a known sentinel (GCP rows use 700.0 for
    unavailable regions) on a metered or spot plan;
  * spot at or above on-demand: that is no spot offer (AWS lists spot == on-demand in zones
    without spot capacity; GCP once listed spot above on-demand);
  * a per-GPU versus per-instance unit slip: an offer's on-demand price per GPU-hour that is
    at least ``0.6 x gpus`` times the catalog median for its GPU (an instance price labelled per
    GPU), or at most ``1.5 / gpus`` times it (a GPU price labelled per instance), for offers of
    four GPUs or more (with fewer, a slip is within the spread between providers); and any
    price above 100 USD per GPU-hour;
  * a duplicated offer id.
  (An unknown key, a value of the wrong type or unit, a negative price or fee, a missing,
  unreadable or future date, or a missing source, is rejected when the file is read, by the
  offers schema: ``catalog/schema/offers.py``.)

Every finding names the file, the offer and the key (``plans[1].price``).

Warnings (kept, but shown):
  * a price observed longer ago than the staleness limit (judged on the latest date the
    observation could have), an undated source, a price marked ``is_estimate``;
  * a GPU id the GPU catalog does not hold; an offer that states no topology.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from gpuplan.errors import InputError
from gpuplan.pricing.currency import ExchangeRates, default_rates
from gpuplan.pricing.market import median_per_gpu_hour, on_demand_per_gpu_hour
from gpuplan.pricing.offers import Offer

PLACEHOLDER_PRICES = frozenset(Decimal(value) for value in ("700", "9999", "99999", "999999"))
MAX_PER_GPU_HOUR_USD = Decimal(100)
UNIT_SLIP_MIN_GPUS = 4
DEFAULT_STALE_AFTER_DAYS = 180


class OfferValidationError(InputError):
    """An offer the validator rejects; the message names the offer and the rule."""


@dataclass(frozen=True)
class Finding:
    """One problem: ``level`` is ``error`` (rejected) or ``warning`` (kept, shown)."""

    level: str
    offer: str
    field: str
    message: str
    origin: str = ""
    """The file the offer was read from."""

    @property
    def where(self) -> str:
        """``FILE: offer 'ID': KEY``, the way file errors name their place."""
        origin = f"{self.origin}: " if self.origin else ""
        return f"{origin}offer {self.offer!r}: {self.field}"

    def __str__(self) -> str:
        return f"{self.level}: {self.where}: {self.message}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "origin": self.origin,
            "offer": self.offer,
            "field": self.field,
            "message": self.message,
        }


def finding(level: str, offer: Offer, key: str, message: str) -> Finding:
    """A finding about ``key`` of ``offer``, naming the file it came from."""
    return Finding(level, offer.id, key, message, offer.origin)


def _known_gpu_ids() -> set[str] | None:
    try:
        from gpuplan.catalog import gpu_ids

        return set(gpu_ids())
    except Exception:
        return None


def _plan_findings(offer: Offer, today: dt.date, stale_after_days: int) -> list[Finding]:
    findings = []
    metered = offer.plans_of_kind("metered")
    cheapest_metered = min((plan.per_gpu_hour(offer.gpus) for plan in metered), default=None)
    for index, plan in enumerate(offer.plans):
        price_key = f"plans[{index}].price"
        hourly = plan.kind in ("metered", "spot")
        if plan.price <= 0:
            findings.append(
                finding("error", offer, price_key, f"placeholder price {plan.price} ({plan.name})")
            )
        elif hourly and plan.price in PLACEHOLDER_PRICES:
            findings.append(
                finding(
                    "error",
                    offer,
                    price_key,
                    f"placeholder price {plan.price} ({plan.name}): a known sentinel for "
                    f"no price; sentinels: {', '.join(str(v) for v in sorted(PLACEHOLDER_PRICES))}",
                )
            )
        spot_price = plan.per_gpu_hour(offer.gpus)
        if plan.kind == "spot" and cheapest_metered is not None and spot_price >= cheapest_metered:
            findings.append(
                finding(
                    "error",
                    offer,
                    price_key,
                    f"spot {spot_price:.4f} per GPU-hour is not below "
                    f"on-demand {cheapest_metered:.4f}: no spot offer",
                )
            )
        provenance = plan.provenance
        age = provenance.age_days(today)
        observed_key = f"plans[{index}].observed"
        if provenance.date_quality == "undated":
            findings.append(
                finding("warning", offer, observed_key, f"undated source ({provenance.observed})")
            )
        elif age > stale_after_days:
            findings.append(
                finding(
                    "warning",
                    offer,
                    observed_key,
                    f"stale: observed {provenance.observed}, {age} days ago "
                    f"(limit {stale_after_days})",
                )
            )
        if provenance.is_estimate:
            findings.append(
                finding(
                    "warning",
                    offer,
                    f"plans[{index}].is_estimate",
                    "an estimate, not a published price",
                )
            )
    return findings


def _unit_findings(offer: Offer, market: dict[str, Decimal], rates: ExchangeRates) -> list[Finding]:
    price = on_demand_per_gpu_hour(offer, rates)
    if price is None:
        return []
    if price > MAX_PER_GPU_HOUR_USD:
        return [
            finding(
                "error",
                offer,
                "plans",
                f"{price:.2f} USD per GPU-hour is implausible: an instance price labelled per GPU?",
            )
        ]
    median = market.get(offer.gpu)
    if median is None or offer.gpus < UNIT_SLIP_MIN_GPUS:
        return []
    ratio = price / median
    if ratio >= Decimal(offer.gpus) * Decimal("0.6"):
        return [
            finding(
                "error",
                offer,
                "plans",
                f"{price:.2f} USD per GPU-hour is {ratio:.1f}x the catalog median {median:.2f} "
                f"for {offer.gpu}: an instance price labelled per GPU?",
            )
        ]
    if ratio <= Decimal("1.5") / offer.gpus:
        return [
            finding(
                "error",
                offer,
                "plans",
                f"{price:.2f} USD per GPU-hour is {ratio:.2f}x the catalog median {median:.2f} "
                f"for {offer.gpu}: a per-GPU price labelled per instance?",
            )
        ]
    return []


def validate_offers(
    offers: Sequence[Offer],
    today: dt.date | None = None,
    stale_after_days: int = DEFAULT_STALE_AFTER_DAYS,
    rates: ExchangeRates | None = None,
    reference: Sequence[Offer] | None = None,
) -> list[Finding]:
    """Every finding for ``offers``; medians come from ``reference`` (default: ``offers``)."""
    today = today or dt.date.today()
    rates = rates or default_rates()
    market = median_per_gpu_hour(reference if reference is not None else offers, rates)
    known_gpus = _known_gpu_ids()
    findings: list[Finding] = []
    counts = Counter(offer.id for offer in offers)
    for offer in offers:
        if counts[offer.id] > 1:
            origins = sorted({other.origin for other in offers if other.id == offer.id})
            findings.append(
                finding(
                    "error",
                    offer,
                    "id",
                    f"offer id appears {counts[offer.id]} times (in {', '.join(origins)})",
                )
            )
            counts[offer.id] = 0
    for offer in offers:
        findings.extend(_plan_findings(offer, today, stale_after_days))
        findings.extend(_unit_findings(offer, market, rates))
        if offer.topology is None:
            findings.append(
                finding(
                    "warning",
                    offer,
                    "topology",
                    "no topology: plans model the GPU's usual server and never join instances",
                )
            )
        if known_gpus is not None and offer.gpu not in known_gpus:
            findings.append(
                finding("warning", offer, "gpu", f"{offer.gpu!r} is not in the GPU catalog")
            )
    return findings


def raise_on_errors(findings: Sequence[Finding]) -> None:
    """Raise :class:`OfferValidationError` naming the first rejected offer (its file, id and
    key), if any."""
    errors = [finding for finding in findings if finding.level == "error"]
    if errors:
        first = {"where": errors[0].where, "problem": errors[0].message}
        if len(errors) > 1:
            raise OfferValidationError.of(
                "error.offer_rejected_more", **first, more=len(errors) - 1
            )
        raise OfferValidationError.of("error.offer_rejected", **first)
