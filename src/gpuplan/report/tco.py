"""The buy-versus-rent report: cumulative cost lines with the break-even point."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

from gpuplan.i18n import format_money, format_share, translate
from gpuplan.report import charts
from gpuplan.report.assumptions import assumptions_section
from gpuplan.report.common import generated_line
from gpuplan.report.document import Chart, Paragraph, Report, Section, Table


def break_even_point(result: Mapping[str, Any]) -> tuple[float, float] | None:
    """``(years, cumulative cost)`` where the cumulative rent line crosses the buy line,
    interpolated between the yearly rows; None when they never cross."""
    table = result["table"]
    for before, after in itertools.pairwise(table):
        gap_before = float(before["buy_minus_rent"])
        gap_after = float(after["buy_minus_rent"])
        if gap_before > 0 >= gap_after:
            share = gap_before / (gap_before - gap_after)
            year = before["year"] + share * (after["year"] - before["year"])
            rent = float(before["rent_cumulative"]) + share * (
                float(after["rent_cumulative"]) - float(before["rent_cumulative"])
            )
            return year, rent
    month = result.get("break_even_month")
    if month:
        year = month / 12
        for before, after in itertools.pairwise(table):
            if before["year"] <= year <= after["year"]:
                share = year - before["year"]
                rent = float(before["rent_cumulative"]) + share * (
                    float(after["rent_cumulative"]) - float(before["rent_cumulative"])
                )
                return year, rent
    return None


def tco_table(result: Mapping[str, Any], lang: str, title: str = "") -> Table:
    """Year by year: what buying and renting have cost so far, and buying minus renting; whole
    units from 100 up, yuan in 万 to two decimals in Chinese."""
    currency = result["currency"]
    in_wan = lang == "zh" and currency == "CNY"
    rows = [
        [str(row["year"])]
        + [
            format_money(row[key], currency, lang, 2 if in_wan else None, compact=in_wan)
            for key in ("buy_cumulative", "rent_cumulative", "buy_minus_rent")
        ]
        for row in result["table"]
    ]
    headers = [
        translate(key, lang) for key in ("col.year", "col.buy", "col.rent", "col.buy_minus_rent")
    ]
    numbers = frozenset({0, 1, 2, 3})
    return Table(headers, rows, numbers, key=numbers, title=title)


def tco_section(result: Mapping[str, Any], lang: str, note: str | None = None) -> Section:
    """Cumulative buy and rent lines, the yearly table and the break-even sentence."""
    currency = result["currency"]
    buy = [(float(row["year"]), float(row["buy_cumulative"])) for row in result["table"]]
    rent = [(float(row["year"]), float(row["rent_cumulative"])) for row in result["table"]]
    point = break_even_point(result)
    marker = (point[0], point[1], translate("chart.break_even", lang)) if point else None
    svg = charts.lines(
        translate("tco.title", lang, years=result["years"], currency=currency),
        [
            charts.Series(translate("col.buy", lang), buy),
            charts.Series(translate("col.rent", lang), rent),
        ],
        translate("axis.year", lang),
        translate("axis.cumulative", lang, currency=currency),
        marker=marker,
    )
    month = result.get("break_even_month")
    sentences = [
        translate("report.break_even", lang, month=month)
        if month
        else translate("report.no_break_even", lang)
    ]
    utilization = result.get("break_even_utilization")
    sentences.append(
        translate("tco.pays_off", lang, share=format_share(utilization))
        if utilization is not None
        else translate("tco.never_pays", lang)
    )
    blocks: list[Any] = []
    if note:
        blocks.append(Paragraph(note))
    blocks += [
        Chart(svg, translate("report.tco_caption", lang)),
        tco_table(result, lang),
        Paragraph(" ".join(sentences)),
    ]
    return Section(translate("report.tco", lang), blocks, anchor="tco")


def tco_answer(result: Mapping[str, Any], lang: str) -> str:
    currency = result["currency"]
    saving = float(result["rent_saving"])
    return translate(
        "report.answer.tco" if saving >= 0 else "report.answer.tco_buy",
        lang,
        years=result["years"],
        buy=format_money(result["buy_total"], currency, lang, compact=lang == "zh"),
        rent=format_money(result["rent_total"], currency, lang, compact=lang == "zh"),
        saving=format_money(abs(saving), currency, lang, compact=lang == "zh")
        + (
            f" ({format_share(abs(float(result['rent_saving_share'])))})"
            if result.get("rent_saving_share")
            else ""
        ),
    )


def build_tco_report(result: Mapping[str, Any], lang: str) -> Report:
    """The whole TCO report; the inputs' own sources are the assumptions."""
    extra = [
        [translate("assume.tco", lang, field=field), "", source, ""]
        for field, source in result.get("sources", {}).items()
    ]
    sections = [
        tco_section(result, lang),
        assumptions_section(lang, currencies=[result["currency"]], extra=extra, speed=False),
    ]
    return Report(
        "tco",
        translate("report.title.tco", lang),
        lang,
        [tco_answer(result, lang)],
        sections,
        generated=generated_line(lang),
    )
