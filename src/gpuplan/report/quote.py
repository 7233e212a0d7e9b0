"""The quote report: the itemized bill and each billing mode alone for the same job."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpuplan.i18n import format_money, format_share, translate, translate_text
from gpuplan.notices import notice_text
from gpuplan.report import charts
from gpuplan.report.assumptions import assumptions_section
from gpuplan.report.common import generated_line
from gpuplan.report.document import Chart, Paragraph, Report, Section, Table
from gpuplan.terms import billing_name, billing_text, term


def _duration(seconds: float) -> str:
    from gpuplan.units import format_duration

    return format_duration(seconds)


def billing_section(quote: Mapping[str, Any], lang: str) -> Section:
    """Bars of the offer's compute cost under each plan alone; the cheapest mix highlighted."""
    currency = quote["currency"]
    items = [
        (billing_name(entry["plan"], lang), float(entry["total_compute"]))
        for entry in quote["plans_alone"]
    ]
    mix = billing_text(quote["billing_mix"]["description"], lang)
    mix_label = translate("chart.chosen", lang) + ": " + mix
    items.append((mix_label[:48], float(quote["billing_mix"]["per_instance"]) * quote["instances"]))
    svg = charts.horizontal_bars(
        translate("report.billing", lang) + f" ({quote['offer']})",
        items,
        translate("axis.cost", lang, currency=currency),
        value_format=lambda value: format_money(value, currency, lang, 0),
        highlight=len(items) - 1,
    )
    rows = [
        [
            billing_name(entry["plan"], lang),
            billing_name(entry["mode"], lang),
            format_money(entry["total_compute"], currency, lang),
        ]
        for entry in quote["plans_alone"]
    ]
    headers = [
        translate("col.plan", lang),
        translate("col.mode", lang),
        translate("col.compute_cost", lang),
    ]
    blocks: list[Any] = [
        Paragraph(translate("quote.mix", lang, mix=mix)),
        Chart(svg, translate("report.billing_caption", lang)),
        Table(headers, rows, frozenset({2})),
    ]
    spot = quote.get("spot")
    if spot:
        blocks.append(
            Paragraph(
                translate(
                    "quote.spot",
                    lang,
                    expected=format_money(spot["expected_compute"], currency, lang),
                    interruptions=f"{spot['expected_interruptions']:.1f}",
                    rate=f"{spot['interruptions_per_hour']:.3g}",
                    rate_source=translate_text(spot["interruptions_source"], lang),
                    lost=_duration(spot["restart_overhead_seconds"]),
                    lost_source=translate_text(spot["restart_overhead_source"], lang),
                    fallback=format_money(spot["on_demand_fallback_compute"], currency, lang)
                    if spot["on_demand_fallback_compute"] is not None
                    else "-",
                )
            )
        )
    return Section(translate("report.billing", lang), blocks, anchor="billing")


def _unit(unit: str, quantity: Any) -> str:
    """A quantity's unit in the singular for one: ``1 block``, ``2 blocks``."""
    return unit[:-1] if unit.endswith("s") and float(quantity) == 1 else unit


def is_free_fee(line: Mapping[str, Any]) -> bool:
    """A fee item that costs nothing here or has no public price: left out of the table."""
    return line["kind"] == "fee" and not line.get("amount")


def quote_lines_table(quote: Mapping[str, Any], lang: str) -> Table:
    """Every charge (kind, item, quantity, amount, the date its price was observed), fee items
    that cost nothing left out, then the total. At 80 columns the observed date goes first,
    then the kind."""
    currency = quote["currency"]
    rows = []
    for line in quote["lines"]:
        if is_free_fee(line):
            continue
        quantity = line.get("quantity")
        if line["kind"] == "compute" and line.get("unit") != "blocks":
            quantity_text = translate("quote.billed", lang, duration=_duration(float(quantity)))
        elif quantity is not None:
            quantity_text = f"{float(quantity):,.4g} {_unit(line.get('unit', ''), quantity)}"
        else:
            quantity_text = ""
        rows.append(
            [
                term("kind", line["kind"], lang),
                billing_name(str(line["item"]), lang)
                if line["kind"] == "compute"
                else str(line["item"]),
                quantity_text,
                format_money(line.get("amount"), currency, lang),
                str(line.get("observed", "")),
            ]
        )
    total = len(rows)
    rows.append(
        ["", translate("word.total", lang), "", format_money(quote["total"], currency, lang), ""]
    )
    headers = [
        translate(key, lang)
        for key in ("col.kind", "col.item", "col.quantity", "col.amount", "col.observed")
    ]
    return Table(
        headers,
        rows,
        frozenset({2, 3}),
        key=frozenset({3, 4}),
        drop={0: 1, 4: 2},
        breaks=frozenset({total}),
    )


def lines_section(quote: Mapping[str, Any], lang: str) -> Section:
    """Every charge with its source date (:func:`quote_lines_table`) and the fees' share."""
    currency = quote["currency"]
    summary = translate(
        "quote.fees_line",
        lang,
        share=format_share(quote["hidden_fee_share"], 1),
        per_gpu_hour=format_money(quote.get("per_gpu_hour"), currency, lang),
    )
    if quote.get("per_million_tokens") is not None:
        summary += translate(
            "quote.per_million",
            lang,
            amount=format_money(quote["per_million_tokens"], currency, lang),
        )
    return Section(
        translate("report.quote_lines", lang),
        [quote_lines_table(quote, lang), Paragraph(summary)],
        anchor="lines",
    )


def quote_answer(quote: Mapping[str, Any], lang: str) -> str:
    currency = quote["currency"]
    return translate(
        "report.answer.quote",
        lang,
        instances=quote["instances"],
        offer=quote["offer"],
        duration=_duration(quote["duration_seconds"]),
        total=format_money(quote["total"], currency, lang),
        per_gpu_hour=format_money(quote.get("per_gpu_hour"), currency, lang),
        fees_share=format_share(quote["hidden_fee_share"], 1),
    )


def build_quote_report(quote: Mapping[str, Any], lang: str) -> Report:
    """The whole quote report."""
    currencies = [quote["currency"]]
    if "exchange_rate" in quote:
        currencies.append(quote["exchange_rate"]["from"])
    sections = [
        lines_section(quote, lang),
        billing_section(quote, lang),
        assumptions_section(
            lang, gpus=[quote["gpu"]], quote=quote, currencies=currencies, speed=False
        ),
    ]
    return Report(
        "quote",
        translate("report.title.quote", lang),
        lang,
        [quote_answer(quote, lang)],
        sections,
        warnings=[notice_text(warning, lang) for warning in quote.get("warnings", [])],
        generated=generated_line(lang),
    )
