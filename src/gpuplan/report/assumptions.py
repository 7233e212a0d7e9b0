"""The "assumptions and sources" section: every catalog number a report used, with its source
and the date it was observed."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from gpuplan.i18n import format_share, translate
from gpuplan.report.document import Section, Table


def gpu_rows(gpu_ids: Iterable[str], lang: str) -> list[list[str]]:
    """One row per GPU: dense bf16 peak, memory and bandwidth, with the catalog source."""
    from gpuplan.catalog import load_gpu

    rows = []
    for gpu_id in dict.fromkeys(gpu_ids):
        gpu = load_gpu(gpu_id)
        peak = gpu.peak_flops.get("bf16") or gpu.peak_flops.get("fp16")
        value = f"{gpu.memory_bytes / 2**30:.0f} GiB ({gpu.memory_quoted})"
        if peak:
            value += f", {peak / 1e12:,.0f} TFLOP/s bf16 dense"
        if gpu.memory_bandwidth:
            value += f", HBM {gpu.memory_bandwidth / 1e9:,.0f} GB/s"
        rows.append([translate("assume.gpu", lang, gpu=gpu.id), value, gpu.source, gpu.observed])
        if gpu.purchase_price_usd:
            rows.append(
                [
                    translate("assume.gpu", lang, gpu=gpu.id) + " $",
                    f"${gpu.purchase_price_usd:,.0f}",
                    gpu.purchase_price_source or "",
                    gpu.purchase_price_observed or "",
                ]
            )
    return rows


def offer_rows(quote: Mapping[str, Any] | None, lang: str) -> list[list[str]]:
    """One row per plan of the quoted offer: its price with source and date (the quote's
    ``price_list``, so that an offer from the user's own file is shown as priced)."""
    if not quote:
        return []
    return [
        [
            translate("assume.offer", lang, offer=quote["offer"], plan=plan["name"]),
            f"{plan['price']} {plan['currency']}/{plan['per']}/{plan['mode']}",
            plan["source"],
            plan["observed"],
        ]
        for plan in quote["price_list"]
    ]


def efficiency_rows(lang: str) -> list[list[str]]:
    """The fitted speed-model constants (catalog/data/efficiency.toml) and their provenance."""
    from gpuplan.estimate.efficiency import fitted_record

    record: dict[str, Any] = fitted_record() or {}
    fit = record.get("fit", {})
    if not fit:
        return []
    value = translate(
        "assume.efficiency_value",
        lang,
        rows=fit.get("row_count", "?"),
        sources=fit.get("sources", "?"),
        method=fit.get("method", ""),
    )
    error = fit.get("fit_mean_absolute_percentage_error")
    if error is not None:
        value += f"; MAPE {format_share(error, 1)}"
    return [
        [
            translate("assume.efficiency", lang),
            value,
            "src/gpuplan/catalog/data/efficiency.toml (" + str(fit.get("rows", "")) + ")",
            str(fit.get("date", "")),
        ]
    ]


def exchange_rows(currencies: Iterable[str], lang: str) -> list[list[str]]:
    """The dated exchange rate of every non-base currency the report converted."""
    from gpuplan.pricing.currency import default_rates

    rates = default_rates()
    rows = []
    for currency in dict.fromkeys(currencies):
        if currency == rates.base or currency not in rates.per_unit:
            continue
        described = rates.describe(currency)
        rows.append(
            [
                translate("assume.exchange", lang, currency=currency, base=rates.base),
                f"1 {currency} = {float(described['per_unit']):.4f} {rates.base}",
                described["source"],
                described["observed"],
            ]
        )
    return rows


def assumptions_section(
    lang: str,
    gpus: Iterable[str] = (),
    quote: Mapping[str, Any] | None = None,
    currencies: Iterable[str] = (),
    extra: Iterable[list[str]] = (),
    speed: bool = True,
) -> Section:
    """Everything the report's numbers rest on, as one table."""
    rows = [
        [translate("assume.dense", lang), "", "catalog/data/gpus.toml (peak_flops)", ""],
        [translate("assume.month", lang), "30 d", "units.SECONDS_PER_MONTH", ""],
        *gpu_rows(gpus, lang),
        *(efficiency_rows(lang) if speed else []),
        *offer_rows(quote, lang),
        *exchange_rows(currencies, lang),
        *extra,
    ]
    headers = [
        translate("col.assumption", lang),
        translate("col.value", lang),
        translate("col.source", lang),
        translate("col.observed", lang),
    ]
    return Section(
        translate("report.assumptions", lang), [Table(headers, rows)], anchor="assumptions"
    )
