"""The market level of a GPU: the median on-demand price per GPU-hour across the catalog.

For each GPU id, the median over every offer's cheapest metered plan, normalized to one GPU-hour
and converted to US dollars at the dated rates. It puts a price in context (``gpuplan offers``
prints each price beside it) and catches unit slips (``validate``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from decimal import Decimal
from statistics import median

from gpuplan.pricing.currency import ExchangeRates
from gpuplan.pricing.offers import Offer

MARKET_CURRENCY = "USD"


def on_demand_per_gpu_hour(offer: Offer, rates: ExchangeRates) -> Decimal | None:
    """The offer's cheapest metered price per GPU-hour in US dollars (``None`` without one)."""
    metered = offer.plans_of_kind("metered")
    if not metered:
        return None
    cheapest = min(plan.per_gpu_hour(offer.gpus) for plan in metered)
    return rates.convert(cheapest, offer.currency, MARKET_CURRENCY)


def median_per_gpu_hour(offers: Iterable[Offer], rates: ExchangeRates) -> dict[str, Decimal]:
    """Median on-demand US dollars per GPU-hour by GPU id."""
    by_gpu: dict[str, list[Decimal]] = defaultdict(list)
    for offer in offers:
        price = on_demand_per_gpu_hour(offer, rates)
        if price is not None:
            by_gpu[offer.gpu].append(price)
    return {gpu: Decimal(median(prices)) for gpu, prices in by_gpu.items()}
