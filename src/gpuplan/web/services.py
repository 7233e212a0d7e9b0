"""The use cases (``gpuplan.services``) as the pages and the API need them: each returns the
result as JSON values and a function that builds its report in a language."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from gpuplan.errors import InputError
from gpuplan.report.document import Report

Built = tuple[dict[str, Any], Callable[[str], Report]]
PLAN_LIMIT = 15
MAX_LAYOUTS_PER_REQUEST = 3_000_000
"""A plan request searching more layouts is refused (HTTP 422): about 2 s of one core, 1.6
times the largest search of the catalog's models (qwen3-235b-a22b, 2^15 sequences a step, up to
2^20 GPUs: 1.84M layouts)."""


def plan(scenario: Mapping[str, Any], options: Mapping[str, Any]) -> Built:
    """Search; the top plan's estimate, quote and buy-versus-rent that only the report shows
    are gathered when a report is first built (the JSON API never builds one)."""
    from functools import cache

    from gpuplan.jsonable import jsonable
    from gpuplan.report.plan import build_plan_report, collect_plan_details
    from gpuplan.services.plan import plan as search

    search_options = {"limit": PLAN_LIMIT, **options, "max_layouts": MAX_LAYOUTS_PER_REQUEST}
    result = jsonable(search(dict(scenario), **search_options))
    details = cache(lambda: collect_plan_details(result, scenario, search_options))
    return result, lambda lang: build_plan_report(result, scenario, details(), lang, options)


def estimate(scenario: Mapping[str, Any]) -> Built:
    from gpuplan.jsonable import jsonable
    from gpuplan.report.estimate import build_estimate_report
    from gpuplan.services.estimate import estimate as run_estimate

    result = jsonable(run_estimate(dict(scenario)))
    return result, lambda lang: build_estimate_report(result, lang, scenario)


def quote(
    offer_id: str,
    duration: str,
    instances: int = 1,
    tokens: str | None = None,
    currency: str | None = None,
) -> Built:
    from gpuplan.jsonable import jsonable
    from gpuplan.pricing.currency import default_rates
    from gpuplan.pricing.offers import OfferBook
    from gpuplan.report.quote import build_quote_report
    from gpuplan.services.pricing import quote as run_quote
    from gpuplan.services.pricing import quote_currency, quote_seconds
    from gpuplan.units import parse_tokens

    if instances < 1:
        raise InputError.of("error.instances", value=instances)
    seconds = quote_seconds(duration, "duration")
    rates = default_rates()
    currency = quote_currency(rates, currency)
    offer = OfferBook.build().get(offer_id)
    result = jsonable(
        run_quote(
            offer,
            seconds,
            rates,
            currency,
            instances=instances,
            tokens=float(parse_tokens(tokens)) if tokens else None,
        )
    )
    return result, lambda lang: build_quote_report(result, lang)


def tco(document: Mapping[str, Any]) -> Built:
    """Buy versus rent from a parsed TOML document (``examples/seed-tco.toml``'s shape)."""
    from gpuplan.jsonable import jsonable
    from gpuplan.pricing.currency import default_rates
    from gpuplan.pricing.tco import parse_tco
    from gpuplan.report.tco import build_tco_report
    from gpuplan.services.pricing import tco as compare

    result = jsonable(compare(parse_tco(document, "inputs"), default_rates()))
    return result, lambda lang: build_tco_report(result, lang)


def models() -> list[dict[str, Any]]:
    """The model catalog (``gpuplan models --json``)."""
    from gpuplan.jsonable import jsonable
    from gpuplan.services import catalog

    return list(jsonable(catalog.models()))


def gpus() -> list[dict[str, Any]]:
    """The GPU catalog (``gpuplan gpus --json``): dense peaks, memory, links and sources."""
    from gpuplan.jsonable import jsonable
    from gpuplan.services import catalog

    return list(jsonable(catalog.gpus()))


def offers(gpu: str | None = None, provider: str | None = None) -> list[dict[str, Any]]:
    """Catalog offers, optionally for one GPU or provider (``gpuplan offers --json``)."""
    from gpuplan.jsonable import jsonable
    from gpuplan.pricing.currency import default_rates
    from gpuplan.pricing.offers import OfferBook
    from gpuplan.services.pricing import offers as list_entries

    rates = default_rates()
    return list(jsonable(list_entries(OfferBook.build(rates=rates), rates, gpu, provider)))
