"""The computations behind both the pages and the API: each returns the JSON-able result and
a function that builds its report in a language."""

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

    from gpuplan.api import plan_search
    from gpuplan.report.plan import build_plan_report, collect_plan_details

    search_options = {"limit": PLAN_LIMIT, **options, "max_layouts": MAX_LAYOUTS_PER_REQUEST}
    result = plan_search(dict(scenario), **search_options)
    details = cache(lambda: collect_plan_details(result, scenario, search_options))
    return result, lambda lang: build_plan_report(result, scenario, details(), lang, options)


def estimate(scenario: Mapping[str, Any]) -> Built:
    from gpuplan.api import estimate as run_estimate
    from gpuplan.report.estimate import build_estimate_report

    result = run_estimate(dict(scenario))
    return result, lambda lang: build_estimate_report(result, lang, scenario)


def quote(
    offer_id: str,
    duration: str,
    instances: int = 1,
    tokens: str | None = None,
    currency: str | None = None,
) -> Built:
    from gpuplan.pricing.currency import default_rates
    from gpuplan.pricing.offers import OfferBook
    from gpuplan.pricing.quote import quote as run_quote
    from gpuplan.report.quote import build_quote_report
    from gpuplan.units import parse_duration, parse_tokens

    if instances < 1:
        raise InputError(f"instances must be at least 1, got {instances}")
    if duration.strip().startswith("-"):
        raise InputError(f"duration must not be negative, got {duration!r}")
    rates = default_rates()
    if currency:
        currency = currency.upper()
        rates.rate(currency)
    offer = OfferBook.build().get(offer_id)
    result = run_quote(
        offer,
        parse_duration(duration),
        instances=instances,
        tokens=float(parse_tokens(tokens)) if tokens else None,
        rates=rates,
    ).to_dict(currency or None, rates)
    return result, lambda lang: build_quote_report(result, lang)


def tco(document: Mapping[str, Any]) -> Built:
    """Buy versus rent from a parsed TOML document (``examples/seed-tco.toml``'s shape)."""
    from decimal import Decimal

    from gpuplan.pricing.currency import default_rates
    from gpuplan.pricing.offers import OfferBook
    from gpuplan.pricing.quote import quote as run_quote
    from gpuplan.pricing.tco import compare, parse_tco
    from gpuplan.report.tco import build_tco_report
    from gpuplan.units import SECONDS_PER_DAY

    inputs = parse_tco(document, "inputs")
    rent_cost = None
    if inputs.rent_offer is not None:
        rates = default_rates()
        offer = OfferBook.build().get(inputs.rent_offer)

        def rent_cost(years: Decimal, utilization: Decimal) -> Decimal:
            seconds = float(years * utilization) * 365 * SECONDS_PER_DAY
            total = run_quote(offer, seconds, instances=inputs.rent_instances, rates=rates).total
            return rates.convert(total, offer.currency, inputs.currency)

    result = compare(inputs, rent_cost)
    return result, lambda lang: build_tco_report(result, lang)


def models() -> list[dict[str, Any]]:
    """The model catalog: name, family and exact parameter counts."""
    from gpuplan.catalog import all_models

    return [
        {
            "name": model.name,
            "total_params": model.total_params,
            "active_params": model.active_params,
        }
        for model in all_models()
    ]


def gpus() -> list[dict[str, Any]]:
    """The GPU catalog with dense peaks, memory, and sources."""
    from gpuplan.catalog import all_gpus

    return [
        {
            "id": gpu.id,
            "name": gpu.name,
            "memory_bytes": gpu.memory_bytes,
            "memory_quoted": gpu.memory_quoted,
            "peak_flops": dict(gpu.peak_flops),
            "memory_bandwidth": gpu.memory_bandwidth,
            "intra_node_link": gpu.intra_node_link,
            "gpus_per_node": gpu.gpus_per_node,
            "tdp_watts": gpu.tdp_watts,
            "source": gpu.source,
            "observed": gpu.observed,
        }
        for gpu in all_gpus()
    ]


def offers(gpu: str | None = None, provider: str | None = None) -> list[dict[str, Any]]:
    """Catalog offers, optionally for one GPU or provider."""
    from gpuplan.pricing.offers import OfferBook

    chosen = OfferBook.build().offers
    if gpu:
        from gpuplan.catalog import resolve_gpu_id

        gpu_id = resolve_gpu_id(gpu)
        chosen = [offer for offer in chosen if offer.gpu == gpu_id]
    if provider:
        chosen = [offer for offer in chosen if offer.provider.lower() == provider.lower()]
    return [offer.to_dict() for offer in chosen]
