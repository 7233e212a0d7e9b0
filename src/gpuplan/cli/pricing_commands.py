"""`gpuplan offers`, `gpuplan offers import`, `gpuplan quote`, `gpuplan tco`, `gpuplan audit`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from gpuplan.cli.checks import finite
from gpuplan.cli.tables import WideOption

if TYPE_CHECKING:
    from gpuplan.pricing.currency import ExchangeRates
    from gpuplan.pricing.offers import OfferBook

from gpuplan.cli.report_options import (
    ForceOption,
    FormatOption,
    ReportOption,
    emit_report,
    wants_report,
)

JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON in base units.")]
OffersFileOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--offers",
        help="Your own offers file (TOML, the catalog's schema: `gpuplan offers schema`); "
        "repeat to merge several, a later file's offer replacing an earlier one of the same id.",
        dir_okay=False,
    ),
]
DiscountOption = Annotated[
    list[str] | None,
    typer.Option("--discount", help="Negotiated price factor per provider, e.g. AWS=0.8 (repeat)."),
]
FxOption = Annotated[
    list[str] | None,
    typer.Option(
        "--fx",
        help="Exchange rate: CUR=RATE per US dollar (CNY=7.1) or A/B=RATE (one A costs RATE B: "
        "EUR/USD=1.08); repeat.",
    ),
]
FxFileOption = Annotated[
    Path | None,
    typer.Option(
        "--fx-file",
        help="Exchange rates file in currency.toml's form (base and a rates list); --fx wins over it.",
        dir_okay=False,
    ),
]

offers_app = typer.Typer(
    invoke_without_command=True,
    help="List rental offers with their plans, fees, sources and dates; check or import catalogs.",
)


def register(app: typer.Typer) -> None:
    app.add_typer(offers_app, name="offers")
    app.command(
        "quote",
        help="Itemized cost of running an offer for a duration: cheapest billing mix, fees, spot.",
    )(quote_command)
    app.command("tco", help="Buy versus rent over N years, from a TOML file of inputs.")(
        tco_command
    )
    app.command("audit", help="Recompute a bill from usage records under an offer's terms.")(
        audit_command
    )


def _rates(fx: list[str] | None, fx_file: Path | None = None) -> ExchangeRates:
    from gpuplan.pricing.currency import build_rates

    return build_rates(fx or (), fx_file)


def _book(
    offers_files: list[Path] | None, discounts: list[str] | None, rates: ExchangeRates
) -> OfferBook:
    """The catalog, the user's offers directory and ``--offers`` files merged (a rejected
    user offer is an error), then discounts; what the merge replaced is said on stderr."""
    from gpuplan.pricing.offers import OfferBook, parse_discount_factor

    factors = dict(parse_discount_factor(text) for text in discounts or ())
    book = OfferBook.build(offers_files, discount_factors=factors, rates=rates)
    print_notes(book.notes)
    return book


def print_notes(notes: tuple[str, ...] | list[str]) -> None:
    """Each note on stderr as ``note: ...``, so that stdout stays the command's output."""
    if notes:
        from gpuplan.cli.output import error_console
        from gpuplan.i18n import translate, translate_text

        for note in notes:
            text = translate("cli.note", note=translate_text(note))
            error_console.print(text, highlight=False, markup=False, soft_wrap=True)


def _money(amount: Any, currency: str) -> str:
    from gpuplan.units import format_money

    return format_money(amount, currency) if amount is not None else "-"


# --- offers ---------------------------------------------------------------------------------


@offers_app.callback()
def list_offers(
    context: typer.Context,
    gpu: Annotated[
        str | None, typer.Option("--gpu", help="GPU id or alias, e.g. H100 or a100-sxm-80gb.")
    ] = None,
    provider: Annotated[
        str | None, typer.Option("--provider", help="Provider name (case-insensitive).")
    ] = None,
    offers_file: OffersFileOption = None,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Validate the offers: placeholders, spot >= on-demand, unit slips, dates.",
        ),
    ] = False,
    stale_after: Annotated[
        str,
        typer.Option(
            "--stale-after", help="Flag prices observed longer ago than this (with --check)."
        ),
    ] = "180d",
    discount: DiscountOption = None,
    fx: FxOption = None,
    fx_file: FxFileOption = None,
    json_output: JsonOption = False,
    wide: WideOption = False,
) -> None:
    if context.invoked_subcommand is not None:
        return
    from gpuplan.jsonable import jsonable
    from gpuplan.services.pricing import offers as list_entries

    rates = _rates(fx, fx_file)
    if check:
        _check(offers_file, stale_after, rates, json_output)
        return
    book = _book(offers_file, discount, rates)
    entries = jsonable(list_entries(book, rates, gpu, provider))
    if json_output:
        from gpuplan.cli.output import print_json

        print_json(entries)
        return
    from rich.markup import escape

    from gpuplan.cli.output import console
    from gpuplan.cli.tables import print_table, rich_table
    from gpuplan.i18n import current_language, translate
    from gpuplan.report.catalog import offers_table

    print_table(rich_table(offers_table(entries, current_language()), leading=1))
    console.print(escape(translate("offers.footer", count=len(entries))))


def _check(
    offers_files: list[Path] | None, stale_after: str, rates: ExchangeRates, json_output: bool
) -> None:
    """Every finding for the ``--offers`` files (or, without one, the built-in catalog and the
    user's offers directory), each file read through the same schema as every command reads
    it; exit code 1 when an offer is rejected."""
    from gpuplan.pricing.offers import OfferBook, load_offers_file
    from gpuplan.pricing.validate import validate_offers
    from gpuplan.units import SECONDS_PER_DAY, parse_duration

    stale_days = int(parse_duration(stale_after) // SECONDS_PER_DAY)
    book = OfferBook.build(offers_files, rates=rates, check=False)
    print_notes(book.notes)
    if offers_files:
        findings = []
        checked = []
        for path in offers_files:
            offers = load_offers_file(path)
            checked.extend(offers)
            findings.extend(
                validate_offers(
                    offers, stale_after_days=stale_days, rates=rates, reference=book.offers
                )
            )
    else:
        checked = book.offers
        findings = validate_offers(
            checked, stale_after_days=stale_days, rates=rates, reference=book.offers
        )
    errors = sum(finding.level == "error" for finding in findings)
    if json_output:
        from gpuplan.cli.output import print_json
        from gpuplan.results import build

        print_json(
            build(
                "offers-check",
                {
                    "offers": len(checked),
                    "errors": errors,
                    "findings": [finding.to_dict() for finding in findings],
                },
            )
        )
    else:
        from gpuplan.cli.output import console

        for finding in findings:
            style = "red" if finding.level == "error" else "yellow"
            console.print(f"[{style}]{finding.level}[/{style}] ", end="")
            console.print(
                f"{finding.where}: {finding.message}", markup=False, highlight=False, soft_wrap=True
            )
        warnings = len(findings) - errors
        console.print(f"{len(checked)} offers checked: {errors} rejected, {warnings} warnings")
    if errors:
        from gpuplan.cli.exit_codes import negative_verdict

        negative_verdict()


@offers_app.command(
    "schema",
    help="Print the JSON Schema of the offers file (or another catalog file) for an editor.",
)
def print_schema(
    name: Annotated[
        str,
        typer.Option(
            "--file",
            help="offers | gpus | models | currency | datacenter | efficiency",
        ),
    ] = "offers",
) -> None:
    from gpuplan.catalog.schema import json_schema_text

    print(json_schema_text(name), end="")


@offers_app.command(
    "import",
    help=(
        "Import a SkyPilot catalog (vms.csv), a gpuhunt catalog (<provider>.csv) or a CSV of "
        "your own quotes into your offers directory; later commands use those offers."
    ),
)
def import_offers(
    file: Annotated[Path, typer.Argument(help="The CSV to import.", dir_okay=False)],
    file_format: Annotated[
        str | None,
        typer.Option("--format", help="skypilot | gpuhunt | csv (default: told by the header)."),
    ] = None,
    observed: Annotated[
        str | None,
        typer.Option(
            "--observed",
            help=(
                "When the catalog was fetched or the quote made (YYYY-MM-DD); default: "
                "undated<=file date for catalogs, each row's observed column for quotes."
            ),
        ),
    ] = None,
    provider: Annotated[
        str | None,
        typer.Option(
            "--provider",
            help="Provider name (default: the SkyPilot CSV's folder, the gpuhunt file's name).",
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="Write the offers file here instead of your offers directory.",
            dir_okay=False,
        ),
    ] = None,
    force: ForceOption = False,
    json_output: JsonOption = False,
) -> None:
    from gpuplan.errors import InputError
    from gpuplan.pricing.offers_import import FORMAT_LABELS, import_file, write_import

    if output is not None and output.resolve() == file.resolve():
        raise InputError.of("error.import_output_input")
    chosen, result = import_file(file, file_format, provider, observed)
    written = (
        write_import(result, chosen, file, output, overwrite=force or output is None)
        if result.offers
        else []
    )
    if json_output:
        from gpuplan.cli.output import print_json
        from gpuplan.results import build

        print_json(
            build(
                "offers-import",
                {
                    "format": chosen,
                    "rows": result.rows,
                    "rows_without_gpu": result.rows_without_gpu,
                    "imported": len(result.offers),
                    "files": [
                        {
                            "path": str(item.path),
                            "provider": item.provider,
                            "replaced": item.replaced,
                            "offers": [offer.id for offer in item.offers],
                        }
                        for item in written
                    ],
                    "findings": [finding.to_dict() for finding in result.findings],
                },
            )
        )
    else:
        _print_import(file, FORMAT_LABELS[chosen], result, written)
    if not result.offers:
        raise typer.Exit(1)


IMPORT_LISTED = 20
"""Imported offers listed one per line; the rest are counted."""


def _print_import(file: Path, label: str, result: Any, written: list[Any]) -> None:
    """What was imported, into which file, and what was skipped, one line per reason."""
    from gpuplan.cli.output import console
    from gpuplan.terms import billing_name

    for item in written:
        verb = "replaced" if item.replaced else "wrote"
        count = f"{len(item.offers)} offer{'s' if len(item.offers) != 1 else ''}"
        console.print(
            f"{verb} {item.path}: {count} of {item.provider} from {file.name} ({label})",
            highlight=False,
            soft_wrap=True,
        )
        for offer in item.offers[:IMPORT_LISTED]:
            plans = ", ".join(
                f"{billing_name(plan.mode)} {plan.price} {plan.currency}/{plan.per}"
                for plan in offer.plans
            )
            console.print(
                f"  {offer.id}: {offer.gpus} x {offer.gpu}; {plans}",
                highlight=False,
                soft_wrap=True,
            )
        if len(item.offers) > IMPORT_LISTED:
            console.print(
                f"  ... and {len(item.offers) - IMPORT_LISTED} more",
                highlight=False,
                soft_wrap=True,
            )
    reasons: dict[tuple[str, str, str], list[str]] = {}
    for finding in result.findings:
        reasons.setdefault((finding.level, finding.field, finding.message), []).append(
            finding.offer
        )
    for (level, column, message), labels in reasons.items():
        where = ", ".join(labels[:3]) + (f" and {len(labels) - 3} more" if len(labels) > 3 else "")
        console.print(f"{level}: {column}: {message} ({where})", highlight=False, soft_wrap=True)
    if result.rows_without_gpu:
        console.print(
            f"skipped {result.rows_without_gpu} rows without a GPU", highlight=False, soft_wrap=True
        )
    if not result.offers:
        console.print(
            f"no offers imported from {file.name}; nothing written", highlight=False, soft_wrap=True
        )


# --- quote ----------------------------------------------------------------------------------


def quote_command(
    offer: Annotated[str, typer.Option("--offer", help="Offer id (`gpuplan offers` lists them).")],
    scenario: Annotated[
        Path | None,
        typer.Argument(
            help="Scenario file: quote the duration, tokens and GPU count the models predict."
        ),
    ] = None,
    duration: Annotated[
        str | None,
        typer.Option("--duration", help="Wall-clock time: 40d, 720h, 6w, 3mo (30 days)."),
    ] = None,
    count: Annotated[int, typer.Option("--count", help="Number of instances.", min=1)] = 1,
    tokens: Annotated[str | None, typer.Option("--tokens", help="Trained tokens, e.g. 2B.")] = None,
    tokens_per_second: Annotated[
        float | None,
        typer.Option(
            "--tokens-per-second",
            help="Throughput of the whole job.",
            min=0,
            max=1e12,
            callback=finite,
        ),
    ] = None,
    storage: Annotated[
        str, typer.Option("--storage", help="Persistent storage per instance, e.g. 2TB.")
    ] = "0",
    idle: Annotated[
        str, typer.Option("--idle", help="Time stopped with storage kept, e.g. 7d.")
    ] = "0",
    egress: Annotated[
        str, typer.Option("--egress", help="Data sent out in total, e.g. 500GB.")
    ] = "0",
    ingress: Annotated[
        str, typer.Option("--ingress", help="Data brought in in total, e.g. 2TB.")
    ] = "0",
    public_ips: Annotated[
        int, typer.Option("--public-ips", help="Public IPs per instance.", min=0)
    ] = 1,
    interruptions_per_hour: Annotated[
        float | None,
        typer.Option(
            "--interruptions-per-hour",
            help=(
                "Spot reclaims per instance-hour (default: the offer's stated rate, else "
                "assumed one a day)."
            ),
            min=0,
            max=3600,
            callback=finite,
        ),
    ] = None,
    restart_overhead: Annotated[
        str | None,
        typer.Option(
            "--restart-overhead",
            help=(
                "Time lost per spot interruption (default: the reliability model's with a "
                "scenario, else assumed 30m)."
            ),
        ),
    ] = None,
    tax_rate: Annotated[
        float | None,
        typer.Option(
            "--tax-rate", help="Tax as a share, e.g. 0.06.", min=0, max=1, callback=finite
        ),
    ] = None,
    currency: Annotated[
        str | None, typer.Option("--currency", help="Show amounts in CNY, USD or EUR.")
    ] = None,
    offers_file: OffersFileOption = None,
    discount: DiscountOption = None,
    fx: FxOption = None,
    fx_file: FxFileOption = None,
    json_output: JsonOption = False,
    wide: WideOption = False,
    report: ReportOption = None,
    force: ForceOption = False,
    output_format: FormatOption = "table",
) -> None:
    from dataclasses import replace
    from decimal import Decimal

    from gpuplan.errors import InputError
    from gpuplan.jsonable import jsonable
    from gpuplan.pricing.fees import Usage
    from gpuplan.pricing.quote import SpotAssumptions
    from gpuplan.services.pricing import quote, quote_currency, quote_seconds
    from gpuplan.units import parse_bytes, parse_duration, parse_tokens

    rates = _rates(fx, fx_file)
    currency = quote_currency(rates, currency)
    chosen = _book(offers_file, discount, rates).get(offer)
    token_count = float(parse_tokens(tokens)) if tokens is not None else None
    predicted: dict[str, Any] = {}
    spot = SpotAssumptions(
        interruptions_per_hour,
        interruptions_source="--interruptions-per-hour"
        if interruptions_per_hour is not None
        else "",
    )
    if scenario is not None:
        predicted = _predicted_job(scenario, chosen)
        token_count = token_count or predicted["tokens"]
        tokens_per_second = tokens_per_second or predicted["tokens_per_second"]
        count = max(count, predicted["instances"])
        from gpuplan.search.spot import spot_assumptions

        spot = (
            spot_assumptions(
                predicted["scenario"],
                chosen,
                count * chosen.gpus,
                predicted["goodput"],
                predicted["startup_seconds"],
                predicted["seconds"],
                given=spot,
            )
            or spot
        )
        if duration is None:
            duration = f"{predicted['seconds']}s"
    if restart_overhead is not None:
        spot = replace(
            spot,
            restart_overhead_seconds=parse_duration(restart_overhead),
            restart_overhead_source="--restart-overhead",
        )
    if duration is not None:
        seconds = quote_seconds(duration, "--duration")
    elif token_count and tokens_per_second:
        seconds = token_count / tokens_per_second
    else:
        raise InputError.of("error.quote_duration_missing")
    usage = Usage(
        stopped_seconds=parse_duration(idle),
        storage_bytes=float(parse_bytes(storage)),
        egress_bytes=float(parse_bytes(egress)),
        ingress_bytes=float(parse_bytes(ingress)),
        public_ips=public_ips,
    )
    fits = predicted.get("fits", True)
    result = jsonable(
        quote(
            chosen,
            seconds,
            rates,
            currency,
            () if fits else (predicted["does_not_fit"],),
            instances=count,
            usage=usage,
            tokens=token_count,
            tokens_per_second=tokens_per_second,
            spot=spot,
            tax_rate=Decimal(repr(tax_rate)) if tax_rate is not None else None,
        )
    )
    if json_output:
        from gpuplan.cli.output import print_json

        print_json(result)
    elif wants_report(report, output_format):
        from gpuplan.report.quote import build_quote_report

        emit_report(lambda lang: build_quote_report(result, lang), report, output_format, force)
        if output_format != "md":
            _print_quote(result)
    else:
        _print_quote(result)
    if not fits:
        from gpuplan.cli.exit_codes import negative_verdict

        negative_verdict()


def _predicted_job(scenario: Path, offer: Any) -> dict[str, Any]:
    """Duration, tokens, throughput and instance count the models predict for a scenario run on
    ``offer``'s GPU, whether it fits there (else ``does_not_fit`` says by how much), and the
    parsed scenario, goodput and start-up that spot prices need (``search.spot``)."""
    from gpuplan.api import estimate
    from gpuplan.errors import InputError
    from gpuplan.scenario import parse_scenario, read_scenario_file
    from gpuplan.units import format_bytes

    data = read_scenario_file(scenario)
    hardware = dict(data.get("hardware") or {})
    hardware.setdefault("gpu", offer.gpu)
    hardware.setdefault("count", offer.gpus)
    data["hardware"] = hardware
    result = estimate(data)
    if result["hardware"]["gpu"] != offer.gpu:
        raise InputError.of(
            "error.quote_scenario_gpu", gpu=result["hardware"]["gpu"], offer_gpu=offer.gpu
        )
    if not result["duration"]["seconds"]:
        raise InputError.of("error.quote_scenario_tokens")
    memory = result["memory"]
    usable = memory["capacity_bytes"] * (1 - memory["safety_margin"])
    return {
        "seconds": result["duration"]["seconds"],
        "tokens": float(result["duration"]["tokens"]),
        "tokens_per_second": result["throughput"]["tokens_per_second"]
        * result["reliability"]["goodput"],
        "instances": -(-result["hardware"]["count"] // offer.gpus),
        "fits": memory["fits"],
        "does_not_fit": (
            f"the scenario does not fit on {offer.gpu}: {format_bytes(memory['peak_bytes'])} "
            f"per GPU against {format_bytes(usable)} usable"
        ),
        "goodput": result["reliability"]["goodput"],
        "startup_seconds": result["duration"]["startup_seconds"],
        "scenario": parse_scenario(data),
    }


def _print_quote(result: dict[str, Any]) -> None:
    """The offer, the billing mix, the charges as the report lists them
    (``report.quote.quote_lines_table``), the fees' share and each plan alone."""
    from rich.markup import escape

    from gpuplan.cli.output import console
    from gpuplan.cli.tables import print_table, rich_table
    from gpuplan.i18n import current_language, translate, translate_text
    from gpuplan.report.quote import is_free_fee, quote_lines_table
    from gpuplan.terms import billing_name, billing_text
    from gpuplan.units import format_duration

    currency = result["currency"]
    header = translate(
        "quote.header",
        offer=f"[bold]{escape(result['offer'])}[/bold]",
        provider=escape(result["provider"]),
        instances=result["instances"],
        gpus=result["gpus_per_instance"],
        gpu=result["gpu"],
        duration=format_duration(result["duration_seconds"]),
    )
    console.print(header)
    mix = billing_text(result["billing_mix"]["description"])
    console.print(translate("quote.mix", mix=f"[bold]{escape(mix)}[/bold]"))
    if result["billing_mix"]["unused_seconds"]:
        unused = format_duration(result["billing_mix"]["unused_seconds"])
        console.print("  " + translate("quote.unused", duration=unused))

    print_table(rich_table(quote_lines_table(result, current_language())))
    hidden = sum(1 for line in result["lines"] if is_free_fee(line))
    if hidden:
        console.print(escape(translate("quote.hidden", count=hidden)))
    fees = translate(
        "quote.fees_line",
        share=f"{float(result['hidden_fee_share']):.1%}",
        per_gpu_hour=_money(result["per_gpu_hour"], currency),
    )
    if result["per_million_tokens"] is not None:
        fees += translate(
            "quote.per_million", amount=_money(result["per_million_tokens"], currency)
        )
    console.print(fees)
    alone = ", ".join(
        f"{billing_name(entry['plan'])} {_money(entry['total_compute'], currency)}"
        for entry in result["plans_alone"]
    )
    console.print(translate("quote.plans_alone", plans=alone))
    spot = result["spot"]
    if spot:
        spot_line = translate(
            "quote.spot",
            expected=_money(spot["expected_compute"], currency),
            interruptions=f"{spot['expected_interruptions']:.1f}",
            rate=f"{spot['interruptions_per_hour']:.3g}",
            rate_source=translate_text(spot["interruptions_source"]),
            lost=format_duration(spot["restart_overhead_seconds"]),
            lost_source=translate_text(spot["restart_overhead_source"]),
            fallback=_money(spot["on_demand_fallback_compute"], currency),
        )
        console.print(spot_line, markup=False)
    if "exchange_rate" in result:
        rate = result["exchange_rate"]
        converted = translate(
            "quote.converted",
            source=rate["from"],
            target=rate["to"],
            rate=f"{float(rate['rate']):.6g}",
            origin=rate["source"][:60],
            observed=rate["observed"],
        )
        console.print(converted, markup=False)
    from gpuplan.cli.estimate_commands import show_warnings

    show_warnings(result["warnings"])


# --- tco --------------------------------------------------------------------------------------


def tco_command(
    file: Annotated[
        Path, typer.Argument(help="TCO inputs (TOML), e.g. examples/seed-tco.toml.", dir_okay=False)
    ],
    offers_file: OffersFileOption = None,
    fx: FxOption = None,
    fx_file: FxFileOption = None,
    json_output: JsonOption = False,
    currency: Annotated[
        str | None, typer.Option(help="Show amounts in CNY, USD or EUR (converted at dated rates).")
    ] = None,
    wide: WideOption = False,
    report: ReportOption = None,
    force: ForceOption = False,
    output_format: FormatOption = "table",
) -> None:
    from gpuplan.jsonable import jsonable
    from gpuplan.pricing.tco import load_tco_file
    from gpuplan.services.pricing import tco

    inputs = load_tco_file(file)
    rates = _rates(fx, fx_file)
    given_currency = inputs.currency
    if currency is not None:
        from gpuplan.pricing.tco import in_currency

        inputs = in_currency(inputs, currency.upper(), rates)
    book = _book(offers_file, None, rates) if inputs.rent_offer is not None else None
    result = jsonable(tco(inputs, rates, book))
    if json_output:
        from gpuplan.cli.output import print_json

        print_json(result)
        return
    if wants_report(report, output_format):
        from gpuplan.report.tco import build_tco_report

        emit_report(lambda lang: build_tco_report(result, lang), report, output_format, force)
        if output_format == "md":
            return

    from gpuplan.cli.conversion import conversion_line
    from gpuplan.cli.output import console
    from gpuplan.cli.tables import print_table, rich_table
    from gpuplan.i18n import current_language, translate
    from gpuplan.report.tco import tco_table

    currency = result["currency"]
    title = translate("tco.title", years=result["years"], currency=currency)
    print_table(rich_table(tco_table(result, current_language(), title)))

    converted = conversion_line(rates, currency, {given_currency}, current_language())
    if converted:
        console.print(converted, style="dim", markup=False)
    buy = result["buy"]
    console.print(
        translate(
            "tco.buy_line",
            capex=_money(buy["capex_total"], currency),
            financing=_money(buy["financing_interest"], currency),
            refresh=_money(buy["refresh_per_year"], currency),
            residual=_money(buy["residual_value"], currency),
        )
    )
    saving = result["rent_saving"]
    console.print(
        translate(
            "tco.total_line" if saving >= 0 else "tco.total_line_buy",
            buy=_money(result["buy_total"], currency),
            rent=_money(result["rent_total"], currency),
            saving=_money(abs(saving), currency),
        )
        + (
            f" ({abs(float(result['rent_saving_share'])):.0%})"
            if result["rent_saving_share"] is not None
            else ""
        )
    )
    month = result["break_even_month"]
    console.print(
        translate("tco.break_even_month", month=month) if month else translate("tco.never")
    )
    utilization = result["break_even_utilization"]
    console.print(
        translate("tco.pays_off", share=f"{float(utilization):.0%}")
        if utilization is not None
        else translate("tco.never_pays")
    )


# --- audit ------------------------------------------------------------------------------------


def audit_command(
    file: Annotated[
        Path,
        typer.Argument(
            help="Usage CSV: instance,start,stop,gpus,storage_gb,egress_gb.", dir_okay=False
        ),
    ],
    offer: Annotated[str, typer.Option("--offer", help="Offer id whose terms to apply.")],
    plan: Annotated[
        str | None, typer.Option("--plan", help="Plan name (default: the cheapest pay-as-you-go).")
    ] = None,
    invoiced: Annotated[
        str | None,
        typer.Option("--invoiced", help="The invoice's total, to compare (e.g. 230 or $230)."),
    ] = None,
    offers_file: OffersFileOption = None,
    discount: DiscountOption = None,
    fx: FxOption = None,
    fx_file: FxFileOption = None,
    json_output: JsonOption = False,
    wide: WideOption = False,
) -> None:
    from gpuplan.pricing.audit import audit, read_usage
    from gpuplan.pricing.offers import to_decimal

    rates = _rates(fx, fx_file)
    chosen = _book(offers_file, discount, rates).get(offer)
    invoiced_amount = None
    if invoiced is not None:
        invoiced_amount = to_decimal(invoiced.strip().lstrip("$¥€"), "--invoiced")
    result = audit(read_usage(file), chosen, plan, rates, invoiced_amount)
    if json_output:
        from gpuplan.cli.output import print_json
        from gpuplan.results import build

        print_json(build("audit", result))
        return
    from rich.markup import escape

    from gpuplan.cli.output import console
    from gpuplan.i18n import translate
    from gpuplan.terms import billing_name, term

    currency = result["currency"]
    from gpuplan.cli.tables import FitTable, print_table

    title = translate("audit.title", offer=result["offer"], plan=billing_name(result["plan"]))
    table = FitTable(title=escape(title))
    for column in ("kind", "item", "quantity", "amount"):
        table.add_column(
            translate(f"col.{column}"),
            justify="right" if column in ("quantity", "amount") else "left",
            key=column == "amount",
            drop=1 if column == "kind" else None,
        )
    for line in result["lines"]:
        if line["kind"] == "compute":
            usage = translate(
                "audit.row",
                row=line["row"],
                instance=line["instance"],
                start=line["start"],
                stop=line["stop"],
            )
            table.add_row(
                term("kind", "compute"),
                escape(usage),
                translate("audit.billed_seconds", seconds=f"{line['billed_seconds']:,}"),
                _money(line["amount"], currency),
            )
        else:
            amount = (
                _money(line["amount"], currency) if line["amount"] is not None else line["note"]
            )
            table.add_row(
                term("kind", "fee"),
                escape(line["item"]),
                f"{float(line['quantity']):,.4g} {line['unit']}",
                escape(amount),
            )
    total = f"[bold]{_money(result['total'], currency)}[/bold]"
    table.add_row("", f"[bold]{translate('word.total')}[/bold]", "", total)
    print_table(table)
    share = f"{float(result['hidden_fee_share']):.1%}"
    console.print(translate("audit.fees_line", share=share))
    if "invoiced" in result:
        difference = translate(
            "audit.invoice_line",
            invoiced=_money(result["invoiced"], currency),
            difference=_money(result["invoice_minus_recomputed"], currency),
        )
        console.print(difference)
