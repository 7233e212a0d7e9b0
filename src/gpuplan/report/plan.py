"""The plan report: the answer first, then the top plan's memory and step time, the cost-versus-
days scatter with the Pareto front, the billing modes of the chosen offer and buy versus rent."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from gpuplan.catalog import datacenter_defaults
from gpuplan.hardware.topology import machine_summary
from gpuplan.i18n import format_money, format_share, translate
from gpuplan.report import charts
from gpuplan.report.assumptions import assumptions_section
from gpuplan.report.common import generated_line, layout_text, warnings_section
from gpuplan.report.document import Chart, Paragraph, Report, Section, Table
from gpuplan.report.estimate import memory_section, step_section
from gpuplan.report.interval import (
    interval_line,
    money_range,
    run_length_range,
    run_length_text,
    with_range,
)
from gpuplan.report.quote import billing_section
from gpuplan.report.tco import tco_section
from gpuplan.scenario import STRATEGY_KEYS
from gpuplan.search.reasons import explanation
from gpuplan.terms import billing_text, term
from gpuplan.units import SECONDS_PER_DAY

TCO_YEARS = 3


def top_plan_scenario(
    scenario: Mapping[str, Any],
    plan: Mapping[str, Any],
    offers_file: str | Sequence[str] | None = None,
) -> dict[str, Any]:
    """The scenario with the top plan's hardware and layout filled in, for ``estimate``."""
    strategy = plan["strategy"]
    cost = plan.get("cost")
    hardware: dict[str, Any] = {"gpu": plan["gpu"], "count": plan["count"]}
    if cost:
        hardware = {
            "offer": cost["offer"],
            "count": plan["count"],
            "allow_unlisted_network": plan["machine"]["network_assumed"],
        }
        if offers_file:
            hardware["offers_file"] = (
                offers_file if isinstance(offers_file, str) else list(offers_file)
            )
    return {
        **scenario,
        "framework": strategy.get("framework", scenario.get("framework", "auto")),
        "hardware": hardware,
        "strategy": {key: strategy[key] for key in STRATEGY_KEYS if key in strategy},
    }


def collect_plan_details(
    result: Mapping[str, Any], scenario: Mapping[str, Any], options: Mapping[str, Any]
) -> dict[str, Any]:
    """What the report shows beyond the search result: the top plan's full estimate, the quote
    of its offer (billing modes) and a buy-versus-rent comparison where the GPU has a price.

    The offer is looked up in the same book the search priced it from: the catalog, the
    user's ``offers_file`` (one or several), its exchange rates (``fx``, ``fx_file``) and the
    negotiated ``discount_factors`` of ``options``."""
    from gpuplan.api import estimate

    details: dict[str, Any] = {"estimate": None, "quote": None, "tco": None}
    if not result["plans"]:
        return details
    top = result["plans"][0]
    details["estimate"] = estimate(top_plan_scenario(scenario, top, options.get("offers_file")))
    cost = top.get("cost")
    if cost:
        from gpuplan.pricing.currency import build_rates
        from gpuplan.pricing.offers import OfferBook
        from gpuplan.pricing.quote import quote

        rates = build_rates(options.get("fx", ()), options.get("fx_file"))
        book = OfferBook.build(
            options.get("offers_file"),
            discount_factors=options.get("discount_factors") or None,
            rates=rates,
        )
        offer = book.get(cost["offer"])
        chosen = quote(
            offer,
            top["duration"]["seconds"],
            instances=cost["instances"],
            tokens=details["estimate"]["duration"]["tokens"],
            rates=rates,
        )
        details["quote"] = chosen.to_dict(result["currency"], rates)
        details["tco"] = _buy_versus_rent(top, offer, cost["instances"], result["currency"], rates)
    return details


def _buy_versus_rent(
    top: Mapping[str, Any], offer: Any, instances: int, currency: str, rates: Any
) -> dict[str, Any] | None:
    """Owning the plan's GPUs at the catalog price against renting the offer all year."""
    from gpuplan.catalog import load_gpu
    from gpuplan.pricing.quote import quote
    from gpuplan.pricing.tco import PowerInputs, TCOInputs, compare
    from gpuplan.units import SECONDS_PER_MONTH

    gpu = load_gpu(top["gpu"])
    if not gpu.purchase_price_usd or not gpu.tdp_watts:
        return None
    count = offer.gpus * instances
    price = rates.convert(Decimal(str(gpu.purchase_price_usd)), "USD", currency)
    monthly = rates.convert(
        quote(offer, SECONDS_PER_MONTH, instances=instances, rates=rates).total,
        offer.currency,
        currency,
    )
    nodes = -(-count // gpu.gpus_per_node)
    datacenter = datacenter_defaults()
    pue = Decimal(str(datacenter["pue"]["value"]))
    price_per_kwh = rates.convert(
        Decimal(str(datacenter["electricity_usd_per_kwh"]["value"])), "USD", currency
    )
    host_watts = (
        Decimal(str(datacenter["host_watts_per_eight_gpu_node"]["value"])) * gpu.gpus_per_node / 8
    )
    inputs = TCOInputs(
        currency=currency,
        years=TCO_YEARS,
        utilization=Decimal(1),
        capex={"gpus": price * count},
        cost_of_capital=Decimal(0),
        depreciation_years=None,
        residual_share=Decimal(0),
        operations={},
        refresh_per_year=Decimal(0),
        power=PowerInputs(
            gpu_tdp_watts=Decimal(str(gpu.tdp_watts)),
            gpus_per_node=min(count, gpu.gpus_per_node),
            nodes=nodes,
            host_watts_per_node=host_watts,
            pue=pue,
            price_per_kwh=price_per_kwh,
        ),
        rent_monthly=monthly,
        rent_offer=None,
        rent_instances=instances,
        gpus=count,
        sources={},
    )
    result = compare(inputs)
    result["assumed"] = {
        "gpus": count,
        "price": price,
        "pue": pue,
        "price_per_kwh": price_per_kwh,
    }
    return result


def job_values(job: Mapping[str, Any], lang: str) -> dict[str, str]:
    """The job's fields as text in ``lang``: what the job line and the job table show."""
    from gpuplan.units import format_duration, format_tokens

    deadline = job.get("deadline_seconds")
    none = translate("plan.none", lang)
    return {
        "model": job["model"],
        "method": job["method"],
        "precision": job["precision"],
        "tokens": format_tokens(job["tokens"]),
        "seq_len": f"{job['seq_len']:,}",
        "global_batch": f"{job['global_batch']:,}",
        "global_batch_tokens": format_tokens(job["global_batch_tokens"]),
        "batch_rule": translate(f"batch.{job['batch_rule']}", lang),
        "budget": job.get("budget") or none,
        "deadline": format_duration(deadline) if deadline else none,
        "max_gpus": f"{job['max_gpus']:,}",
        "objective": job["objective"],
    }


def job_line(job: Mapping[str, Any], lang: str) -> str:
    """The job the plans answer, in one line: model, method, tokens, sequence, batch, limits."""
    values = job_values(job, lang)
    return translate(
        "plan.job",
        lang,
        **values,
        batch=values["global_batch"],
        batch_tokens=values["global_batch_tokens"],
    )


def job_section(job: Mapping[str, Any], lang: str) -> Section:
    """The job as the search read it: the batch it chose and the limits it kept."""
    values = job_values(job, lang)
    values["model"] = f"{job['model']} ({job['total_params']:,})"
    rows = [[translate(f"report.scenario.{key}", lang), value] for key, value in values.items()]
    headers = [translate("col.field", lang), translate("col.value", lang)]
    return Section(translate("report.job", lang), [Table(headers, rows)], anchor="job")


def plan_cells(row: Mapping[str, Any], lang: str) -> dict[str, str]:
    """Every text a plan row shows, in ``lang``: the table, the report and the web page render
    these same cells."""
    from gpuplan.notices import notice_text
    from gpuplan.units import format_tokens

    cost = row["cost"]
    seconds = row["duration"]["seconds"]
    memory = row["memory"]
    throughput = row["throughput"]
    return {
        "gpus": f"{row['count']}x {row['gpu']}",
        "offer": cost["offer"] if cost else translate("plan.no_offer", lang),
        "machine": machine_summary(row["machine"], lang),
        "layout": layout_text(row["strategy"], lang),
        "memory": f"{memory['peak_bytes'] / 2**30:.0f} GiB/GPU "
        f"({format_share(memory['headroom'])} {translate('plan.free', lang)})",
        "speed": f"{format_tokens(throughput['tokens_per_second'])} tok/s, "
        f"MFU {format_share(throughput['mfu'])}",
        "days": run_length(seconds, lang),
        "days_range": run_length_range(
            seconds, row["duration"]["seconds_low"], row["duration"]["seconds_high"]
        ),
        "cost": format_money(cost["total"], cost["currency"], lang, None)
        if cost
        else translate("plan.gpu_hours", lang, hours=f"{row['gpu_hours']:,.0f}"),
        "cost_range": money_range(cost["total_low"], cost["total_high"], cost["currency"], lang)
        if cost and "total_low" in cost
        else "",
        "per_m_tok": format_money(cost["per_million_tokens"], cost["currency"], lang)
        if cost and cost["per_million_tokens"]
        else "-",
        "billing": f"{cost['provider']}, {billing_text(cost['billing_mix'], lang)}, "
        f"{price_age_text(cost, lang)}"
        if cost
        else "",
        "billing_short": f"{cost['provider']}, {billing_text(cost['billing_mix'], lang)}"
        if cost
        else "",
        "price_age": short_price_age(cost, lang) if cost else "",
        "notes": translate("reason.separator", lang).join(
            notice_text(notice, lang) for notice in row.get("warnings", [])
        ),
        "other_notes": translate("reason.separator", lang).join(
            notice_text(notice, lang)
            for notice in row.get("warnings", [])
            if not _is_price_notice(notice)
        ),
    }


PRICE_NOTICE_CODES = frozenset({"stale_price", "undated_price"})
"""The notices that the price age of a row (``price 161 d``) already flags."""


def _is_price_notice(notice: Any) -> bool:
    return isinstance(notice, Mapping) and notice.get("code") in PRICE_NOTICE_CODES


def short_price_age(cost: Mapping[str, Any], lang: str) -> str:
    """``price 161 d``, ``price undated``, or empty without an age: the row's part of the
    price notices, which a table states in full once (:func:`price_age_footnotes`)."""
    if "price_age_days" not in cost:
        return ""
    if cost["price_date_quality"] == "undated":
        return translate("plan.price_undated_short", lang)
    return translate("plan.price_age_short", lang, days=cost["price_age_days"])


def price_age_footnotes(plans: Sequence[Mapping[str, Any]], lang: str) -> list[str]:
    """The price notices of ranked ``plans`` said once: which ranks pay a stale price, which an
    undated one."""
    from gpuplan.pricing.provenance import STALE_AFTER_DAYS

    ranks: dict[str, list[str]] = {code: [] for code in sorted(PRICE_NOTICE_CODES)}
    for rank, row in enumerate(plans, start=1):
        for notice in row.get("warnings", []):
            if _is_price_notice(notice):
                ranks[notice["code"]].append(str(rank))
    lines = []
    if ranks["stale_price"]:
        lines.append(
            translate(
                "plan.stale_prices",
                lang,
                ranks=", ".join(ranks["stale_price"]),
                limit=STALE_AFTER_DAYS,
            )
        )
    if ranks["undated_price"]:
        lines.append(
            translate("plan.undated_prices", lang, ranks=", ".join(ranks["undated_price"]))
        )
    return lines


def price_age_text(cost: Mapping[str, Any], lang: str) -> str:
    """``price 24 d old (2026-11-09)``, or that the price is undated; empty without an age."""
    if "price_age_days" not in cost:
        return ""
    if cost["price_date_quality"] == "undated":
        return translate("plan.price_undated", lang, observed=cost["price_observed"])
    return translate(
        "plan.price_age", lang, days=cost["price_age_days"], observed=cost["price_observed"]
    )


def run_length(seconds: float, lang: str) -> str:
    """``12.8 h`` under two days, ``3.4 days`` from there (``i18n.format_run_length``)."""
    from gpuplan.i18n import format_run_length

    return format_run_length(seconds, lang)


def plan_interval_line(cost: Mapping[str, Any] | None, cells: Mapping[str, str], lang: str) -> str:
    """``likely 11.5–16.7 days, $32.33M–$47.09M``: the run length's and cost's intervals."""
    from gpuplan.i18n import currency_label, format_amount_short

    if not cells["days_range"]:
        return ""
    days = f"{cells['days_range'].strip('()')} {cells['days'].split()[-1]}"
    if not cost or "total_low" not in cost:
        return translate("plan.interval", lang, days=days, cost="-")
    symbol = currency_label(cost["currency"])
    low, high = (format_amount_short(cost[key], lang) for key in ("total_low", "total_high"))
    return translate("plan.interval", lang, days=days, cost=f"{symbol}{low}–{symbol}{high}")


def plans_table(result: Mapping[str, Any], lang: str, narrow: bool = False) -> Table:
    """The ranked plans, from :func:`plan_cells`. Wide (the report, the web page, a terminal
    with ``--wide``): a column for each of rank, GPUs, offer, machine, layout, memory, speed,
    run length and cost with their intervals, cost per million tokens, billing and notes.
    Narrow (an 80-column terminal): the key columns (rank, GPUs, run length, cost and, while it
    fits, cost per million tokens, amounts in the currency its header names) and one wrapping
    cell that stacks the offer, its billing and price age, the intervals, the machine, the
    layout, memory and speed, and the other notes."""
    from gpuplan.i18n import currency_label

    row_cells = _narrow_plan_row if narrow else _wide_plan_row
    rows = [
        row_cells(rank, row, plan_cells(row, lang), lang)
        for rank, row in enumerate(result["plans"], start=1)
    ]
    if narrow:
        symbol = currency_label(result["currency"])
        headers = [
            translate("col.rank", lang),
            translate("col.gpus", lang),
            translate("col.duration", lang),
            translate("col.cost_in", lang, currency=symbol),
            translate("col.per_m_tok_in", lang, currency=symbol),
            translate("col.offer_and_plan", lang),
        ]
        numbers = frozenset({0, 2, 3, 4})
        return Table(headers, rows, numbers, key=numbers | {1}, drop={4: 1})
    headers = [
        translate(key, lang)
        for key in (
            "col.rank", "col.gpus", "col.offer", "col.machine", "col.layout", "col.gib_per_gpu",
            "col.tokens_per_s", "col.duration", "col.cost", "col.per_m_tok", "col.mode", "col.notes",
        )
    ]  # fmt: skip
    numbers = frozenset({0, 7, 8, 9})
    return Table(headers, rows, numbers, key=frozenset({0, 1, 7, 8, 9}))


def _wide_plan_row(
    rank: int, row: Mapping[str, Any], cells: Mapping[str, str], lang: str
) -> list[str]:
    """A plan's cells in the wide view, one per column, run length and cost with intervals."""
    return [
        str(rank),
        cells["gpus"],
        cells["offer"],
        cells["machine"],
        cells["layout"],
        cells["memory"],
        cells["speed"],
        with_range(cells, "days"),
        with_range(cells, "cost"),
        cells["per_m_tok"],
        cells["billing"],
        cells["notes"],
    ]


def _narrow_plan_row(
    rank: int, row: Mapping[str, Any], cells: Mapping[str, str], lang: str
) -> list[str]:
    """A plan's cells in the narrow view: the key columns (amounts without their currency,
    which the header names) and the stacked details."""
    from gpuplan.i18n import format_amount

    cost = row["cost"]
    details = [
        cells["offer"],
        f"{cells['billing_short']}, {cells['price_age']}".rstrip(", ")
        if cells["billing_short"]
        else "",
        plan_interval_line(cost, cells, lang),
        cells["machine"],
        cells["layout"],
        f"{cells['memory']} · {cells['speed']}",
        "! " + cells["other_notes"] if cells["other_notes"] else "",
    ]
    return [
        str(rank),
        cells["gpus"],
        cells["days"],
        format_amount(cost["total"]) if cost else cells["cost"],
        format_amount(cost["per_million_tokens"]) if cost and cost["per_million_tokens"] else "-",
        "\n".join(filter(None, details)),
    ]


def plans_title(result: Mapping[str, Any], lang: str) -> str:
    """``Plans by cost: 10 of 164,220 evaluated in 0.15 s``."""
    return translate(
        "plan.title",
        lang,
        objective=term("objective", result["objective"], lang),
        shown=len(result["plans"]),
        evaluated=f"{result['evaluated']:,}",
        seconds=f"{result['seconds']:.2f}",
    )


def plans_section(result: Mapping[str, Any], lang: str) -> Section:
    """The job, the ranked plans as a table, and the search's own explanation."""
    blocks: list[Any] = [
        Paragraph(job_line(result["job"], lang)),
        Paragraph(plans_title(result, lang)),
        plans_table(result, lang),
    ]
    blocks.append(Paragraph(explanation(result, lang)))
    blocks += [
        Paragraph(translate("plan.skipped", lang, reason=text))
        for text in result.get("skipped_gpus", [])
    ]
    if result.get("unoffered_gpus"):
        blocks.append(
            Paragraph(translate("plan.unoffered", lang, gpus=", ".join(result["unoffered_gpus"])))
        )
    return Section(translate("report.plans", lang), blocks, anchor="plans")


def pareto_section(result: Mapping[str, Any], lang: str) -> Section | None:
    """Cost against days for every priced plan shown, the Pareto front as a line."""
    points = [
        (row["duration"]["days"], float(row["cost"]["total"]))
        for row in result["plans"]
        if row["cost"]
    ]
    front = [
        (point["days"], float(point["cost"]))
        for point in result["pareto"]
        if point["cost"] is not None
    ]
    if not points and not front:
        return None
    top = result["plans"][0] if result["plans"] else None
    chosen = (top["duration"]["days"], float(top["cost"]["total"])) if top and top["cost"] else None
    svg = charts.scatter(
        translate("report.pareto", lang),
        points + front,
        front,
        translate("axis.days", lang),
        translate("axis.cost", lang, currency=result["currency"]),
        chosen=chosen,
        labels=(
            translate("chart.plans", lang),
            translate("chart.pareto", lang),
            translate("chart.chosen", lang),
        ),
    )
    rows = [
        [
            f"{point['count']}x {point['gpu']}",
            run_length(point["days"] * SECONDS_PER_DAY, lang),
            format_money(point["cost"], result["currency"], lang, None),
        ]
        for point in result["pareto"]
        if point["cost"] is not None
    ]
    headers = [
        translate("col.gpus", lang),
        translate("col.duration", lang),
        translate("col.cost", lang),
    ]
    return Section(
        translate("report.pareto", lang),
        [
            Chart(svg, translate("report.pareto_caption", lang)),
            Table(headers, rows, frozenset({1, 2})),
        ],
        anchor="pareto",
    )


def plan_answer(result: Mapping[str, Any], lang: str) -> list[str]:
    """The top plan in one sentence, then its layout."""
    if not result["plans"]:
        return [
            job_line(result["job"], lang),
            translate("report.no_plan", lang, reason=explanation(result, lang)),
        ]
    top = result["plans"][0]
    cost = top["cost"]
    days = run_length_text(top["duration"], lang)
    if cost:
        sentence = translate(
            "report.answer.plan",
            lang,
            count=top["count"],
            gpu=top["gpu"],
            days=days,
            cost=format_money(cost["total"], cost["currency"], lang, None)
            + " "
            + money_range(cost["total_low"], cost["total_high"], cost["currency"], lang),
            per_million=format_money(cost["per_million_tokens"], cost["currency"], lang)
            if cost["per_million_tokens"]
            else "-",
            provider=cost["provider"],
            mix=billing_text(cost["billing_mix"], lang),
            offer=cost["offer"],
            machine=machine_summary(top["machine"], lang),
        )
    else:
        sentence = translate(
            "report.answer.plan_unpriced", lang, count=top["count"], gpu=top["gpu"], days=days
        )
    return [
        job_line(result["job"], lang),
        sentence,
        layout_text(top["strategy"], lang),
        interval_line(top.get("interval"), lang),
    ]


def build_plan_report(
    result: Mapping[str, Any],
    scenario: Mapping[str, Any],
    details: Mapping[str, Any],
    lang: str,
    options: Mapping[str, Any] | None = None,
) -> Report:
    """The whole plan report from the search result and :func:`collect_plan_details`."""
    sections = [job_section(result["job"], lang), plans_section(result, lang)]
    estimate = details.get("estimate")
    if estimate:
        sections += [memory_section(estimate, lang), step_section(estimate, lang)]
    pareto = pareto_section(result, lang)
    if pareto:
        sections.append(pareto)
    quote = details.get("quote")
    if quote:
        sections.append(billing_section(quote, lang))
    tco = details.get("tco")
    if tco:
        assumed = tco["assumed"]
        note = translate(
            "report.tco_plan_note",
            lang,
            gpus=assumed["gpus"],
            price=format_money(assumed["price"], tco["currency"], lang, 0),
            kwh=format_money(assumed["price_per_kwh"], tco["currency"], lang, 3),
            pue=assumed["pue"],
        )
        sections.append(tco_section(tco, lang, note))
    warnings = [*result.get("warnings", []), *(estimate.get("warnings", []) if estimate else [])]
    if result["plans"]:
        warnings += result["plans"][0]["warnings"]
    if quote:
        warnings += quote.get("warnings", [])
    block = warnings_section(warnings, lang)
    if block:
        sections.append(block)
    gpus = [row["gpu"] for row in result["plans"]]
    currencies = [result["currency"]]
    if quote and "exchange_rate" in quote:
        currencies.append(quote["exchange_rate"]["from"])
    extra = []
    if tco:
        for key, entry in datacenter_defaults().items():
            extra.append(
                [
                    translate("assume.power", lang),
                    f"{key} = {entry['value']} {entry['unit']}",
                    entry["source"],
                    entry["observed"],
                ]
            )
    sections.append(
        assumptions_section(
            lang,
            gpus=gpus,
            quote=quote,
            currencies=[*currencies, "USD"] if tco else currencies,
            extra=extra,
        )
    )
    return Report(
        "plan",
        translate("report.title.plan", lang),
        lang,
        plan_answer(result, lang),
        sections,
        generated=generated_line(lang),
    )
