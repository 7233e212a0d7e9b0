"""Quote an offer, compare buying with renting, list offers: typed pricing results."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from gpuplan.results import build
from gpuplan.results.pricing import OfferEntry, Quote, Tco

if TYPE_CHECKING:
    from gpuplan.pricing.currency import ExchangeRates
    from gpuplan.pricing.offers import Offer, OfferBook
    from gpuplan.pricing.tco import TCOInputs


def quote_currency(rates: ExchangeRates, currency: str | None) -> str | None:
    """``currency`` as a code the rates know (upper case), or ``None`` for the offer's own; an
    unknown code is an :class:`~gpuplan.errors.InputError` naming the known ones."""
    if not currency:
        return None
    rates.rate(currency.upper())
    return currency.upper()


def quote_seconds(duration: str, field: str) -> float:
    """The wall-clock seconds of ``duration`` (``40d``, ``720h``); a negative one is an
    :class:`~gpuplan.errors.InputError` naming ``field``."""
    from gpuplan.errors import InputError, Verbatim
    from gpuplan.units import parse_duration

    if duration.strip().startswith("-"):
        raise InputError.of("error.negative_duration", field=Verbatim(field), value=repr(duration))
    return parse_duration(duration)


def quote(
    offer: Offer,
    seconds: float,
    rates: ExchangeRates,
    currency: str | None = None,
    warnings: tuple[str, ...] = (),
    **options: Any,
) -> Quote:
    """The itemized quote of ``offer`` for ``seconds`` (``options``: the keywords of
    :func:`gpuplan.pricing.quote.quote`: ``instances``, ``usage``, ``tokens``, ...), in
    ``currency`` (default the offer's), with ``warnings`` added to the quote's own."""
    from gpuplan.pricing.quote import quote as price

    values = price(offer, seconds, rates=rates, **options).to_dict(currency, rates)
    values["warnings"] = [*values["warnings"], *warnings]
    result: Quote = build("quote", values)
    return result


def rent_cost(
    inputs: TCOInputs, offer: Offer, rates: ExchangeRates
) -> Callable[[Decimal, Decimal], Decimal]:
    """The cost of renting ``inputs.rent_instances`` of ``offer`` for ``years`` at
    ``utilization``: the cheapest billing mix for ``years * utilization * 365`` days, in the
    inputs' currency."""
    from gpuplan.pricing.quote import quote as price
    from gpuplan.units import SECONDS_PER_DAY

    def cost(years: Decimal, utilization: Decimal) -> Decimal:
        seconds = float(years * utilization) * 365 * SECONDS_PER_DAY
        total = price(offer, seconds, instances=inputs.rent_instances, rates=rates).total
        return rates.convert(total, offer.currency, inputs.currency)

    return cost


def tco(inputs: TCOInputs, rates: ExchangeRates, book: OfferBook | None = None) -> Tco:
    """Buy versus rent for ``inputs``; renting is priced from its offer in ``book`` (default
    the catalog) when the inputs name one (:func:`rent_cost`), else from their monthly rent."""
    from gpuplan.pricing.offers import OfferBook
    from gpuplan.pricing.tco import compare

    cost = None
    if inputs.rent_offer is not None:
        offer = (book or OfferBook.build(rates=rates)).get(inputs.rent_offer)
        cost = rent_cost(inputs, offer, rates)
    result: Tco = build("tco", compare(inputs, cost))
    return result


def offers(
    book: OfferBook, rates: ExchangeRates, gpu: str | None = None, provider: str | None = None
) -> list[OfferEntry]:
    """The offers of ``book`` (only ``gpu``'s or ``provider``'s when given), each plan with its
    price per GPU-hour in USD and its ratio to the catalog's median for that GPU."""
    from gpuplan.pricing.market import MARKET_CURRENCY, median_per_gpu_hour, on_demand_per_gpu_hour

    market = median_per_gpu_hour(book.offers, rates)
    chosen = book.offers
    if gpu:
        from gpuplan.catalog import resolve_gpu_id

        gpu_id = resolve_gpu_id(gpu)
        chosen = [offer for offer in chosen if offer.gpu == gpu_id]
    if provider:
        chosen = [offer for offer in chosen if offer.provider.lower() == provider.lower()]
    entries = []
    for offer in chosen:
        entry = offer.to_dict()
        median = market.get(offer.gpu)
        entry["catalog_median_per_gpu_hour"] = median
        entry["catalog_median_currency"] = MARKET_CURRENCY
        for plan_entry, plan in zip(entry["plans"], offer.plans, strict=True):
            in_market = rates.convert(
                plan.per_gpu_hour(offer.gpus), offer.currency, MARKET_CURRENCY
            )
            plan_entry["per_gpu_hour_usd"] = in_market
            plan_entry["vs_catalog_median"] = in_market / median if median else None
        entry["on_demand_per_gpu_hour_usd"] = on_demand_per_gpu_hour(offer, rates)
        entries.append(entry)
    result: list[OfferEntry] = build("offers", entries)
    return result
