"""`gpuplan plan`: search GPU types, cluster sizes and layouts for the best plan."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from gpuplan.cli.catalog_commands import JsonOption
from gpuplan.cli.checks import finite
from gpuplan.cli.estimate_commands import ProfileOption
from gpuplan.cli.pricing_commands import FxFileOption, FxOption, OffersFileOption, print_notes
from gpuplan.cli.report_options import (
    ForceOption,
    FormatOption,
    ReportOption,
    emit_report,
    wants_report,
)
from gpuplan.cli.tables import WideOption

PLAN_HELP = """Search every GPU type, cluster size and parallel layout for the cheapest, fastest, or best
plan under a budget and a deadline. Give a scenario file, flags, or both (flags win).

[bold]Examples[/bold] (the seed article's three users):

  [dim]# a student with ¥2,000 a month: QLoRA on Llama 3.1 8B[/dim]
  gpuplan plan --preset student

  [dim]# a start-up with ¥100,000 a month: full fine-tune of Llama 3.1 70B on 2B tokens[/dim]
  gpuplan plan --preset startup

  [dim]# an enterprise pre-training Llama 3.1 405B on 2T tokens, fastest first[/dim]
  gpuplan plan --preset enterprise

  gpuplan plan --model llama-3.1-70b --method full --tokens 10B --budget '$50000' --deadline 30d
"""


def register(app: typer.Typer) -> None:
    app.command("plan", help=PLAN_HELP)(plan)


def plan(
    scenario_file: Annotated[
        Path | None, typer.Argument(help="Scenario file (YAML or JSON); optional.")
    ] = None,
    preset: Annotated[str | None, typer.Option(help="student | startup | enterprise")] = None,
    model: Annotated[
        str | None, typer.Option(help="Catalog name, config.json path or Hugging Face id.")
    ] = None,
    method: Annotated[str | None, typer.Option(help="full | lora | qlora | freeze")] = None,
    tokens: Annotated[str | None, typer.Option(help="Training tokens: 20B, 1.5T.")] = None,
    seq_len: Annotated[int | None, typer.Option("--seq-len", help="Tokens per sequence.")] = None,
    global_batch: Annotated[
        int | None, typer.Option("--global-batch", help="Sequences per step.")
    ] = None,
    precision: Annotated[
        str | None, typer.Option(help="bf16 | fp16 | fp8 | fp32 | bf16-pure")
    ] = None,
    optimizer: Annotated[
        str | None, typer.Option(help="adamw | adamw-8bit | sgd | adafactor")
    ] = None,
    framework: Annotated[
        str | None,
        typer.Option(
            help="auto | megatron | fsdp | deepspeed | hf | megatron-deepspeed | torchtitan | internevo"
        ),
    ] = None,
    lora_rank: Annotated[int | None, typer.Option("--lora-rank", help="LoRA rank.")] = None,
    objective: Annotated[str | None, typer.Option(help="cost | time | pareto")] = None,
    budget: Annotated[
        str | None, typer.Option(help="Total budget with currency: '¥2000', '5000 USD'.")
    ] = None,
    deadline: Annotated[str | None, typer.Option(help="Latest finish: 30d, 6w, 3mo.")] = None,
    max_gpus: Annotated[
        int | None, typer.Option("--max-gpus", help="Largest cluster to consider.")
    ] = None,
    gpu: Annotated[
        list[str] | None, typer.Option("--gpu", help="Only these GPUs (repeatable).")
    ] = None,
    exclude_gpu: Annotated[
        list[str] | None, typer.Option("--exclude-gpu", help="Never these GPUs.")
    ] = None,
    provider: Annotated[
        list[str] | None, typer.Option("--provider", help="Only these providers.")
    ] = None,
    billing: Annotated[
        list[str] | None,
        typer.Option("--billing", help="Only these billing modes (hourly, monthly, spot...)."),
    ] = None,
    headroom: Annotated[
        float | None,
        typer.Option(
            help="Memory left free on each GPU (default 0.10).", min=0, max=0.99, callback=finite
        ),
    ] = None,
    currency: Annotated[
        str | None, typer.Option(help="Currency of the costs: CNY, USD, EUR.")
    ] = None,
    limit: Annotated[int, typer.Option(help="Plans to show.")] = 10,
    offers: OffersFileOption = None,
    fx: FxOption = None,
    fx_file: FxFileOption = None,
    allow_unlisted_network: Annotated[
        bool,
        typer.Option(
            "--allow-unlisted-network",
            help="Join instances of offers that list no network between them (modelled on "
            "their public Ethernet; every plan on them says so).",
        ),
    ] = False,
    export: Annotated[
        str | None,
        typer.Option(
            help="Write the top plan as torchtitan | megatron | deepspeed | accelerate | skypilot."
        ),
    ] = None,
    export_path: Annotated[
        Path, typer.Option("--export-path", help="Where to write the export.")
    ] = Path("."),
    profile: ProfileOption = None,
    json_output: JsonOption = False,
    report: ReportOption = None,
    force: ForceOption = False,
    output_format: FormatOption = "table",
    wide: WideOption = False,
) -> None:
    from gpuplan.jsonable import jsonable
    from gpuplan.presets import PRESETS
    from gpuplan.scenario import ScenarioError, parse_scenario, read_scenario_file
    from gpuplan.services.plan import plan as search

    scenario: dict[str, Any] = {}
    options: dict[str, Any] = {}
    if preset is not None:
        if preset not in PRESETS:
            raise ScenarioError.of(
                "error.not_one_of", field="preset", value=repr(preset), accepted=", ".join(PRESETS)
            )
        scenario.update(PRESETS[preset]["scenario"])
        options.update(PRESETS[preset]["options"])
    if scenario_file is not None:
        scenario.update(read_scenario_file(scenario_file))
    overrides = {
        "model": model, "method": method, "tokens": tokens, "seq_len": seq_len, "global_batch": global_batch,
        "precision": precision, "optimizer": optimizer, "framework": framework,
    }  # fmt: skip
    scenario.update({key: value for key, value in overrides.items() if value is not None})
    if lora_rank is not None:
        scenario["lora"] = {**scenario.get("lora", {}), "rank": lora_rank}
    if "model" not in scenario:
        raise ScenarioError.of("error.plan_model_missing", presets=", ".join(PRESETS))
    flags = {
        "objective": objective, "budget": budget, "deadline": deadline, "max_gpus": max_gpus,
        "headroom": headroom, "currency": currency,
    }  # fmt: skip
    options.update({key: value for key, value in flags.items() if value is not None})
    for key, values in (
        ("gpus", gpu),
        ("exclude_gpus", exclude_gpu),
        ("providers", provider),
        ("billing", billing),
    ):
        if values:
            options[key] = tuple(values)
    if offers:
        options["offers_file"] = tuple(str(path) for path in offers)
    if fx:
        options["fx"] = tuple(fx)
    if fx_file is not None:
        options["fx_file"] = str(fx_file)
    if allow_unlisted_network:
        options["allow_unlisted_network"] = True
    options["limit"] = limit
    if profile is not None:
        options["profile"] = profile
    parsed = parse_scenario(scenario)
    result = jsonable(search(parsed, **options))
    print_notes(result["offer_notes"])
    if not result["plans"]:
        show_no_plan(result, json_output)
    exported = None
    if export is not None:
        from gpuplan.export import export_plan, write_export

        exported = write_export(
            export_plan(result["plans"][0], parsed, export), export_path, overwrite=force
        )
        result["export"] = str(exported)
    if json_output:
        from gpuplan.cli.output import print_json

        print_json(result)
        return
    if wants_report(report, output_format):
        from gpuplan.report.plan import build_plan_report, collect_plan_details

        details = collect_plan_details(result, scenario, options)
        emit_report(
            lambda lang: build_plan_report(result, scenario, details, lang, options),
            report,
            output_format,
            force,
        )
        if output_format == "md":
            return
    show_plans(result, wide, options)
    if exported is not None:
        from gpuplan.cli.output import console

        console.print(f"wrote {exported}", markup=False)


def show_conversion(result: dict[str, Any], options: dict[str, Any]) -> None:
    """The exchange rates that put the shown plans' prices into the plan's currency, once."""
    from gpuplan.cli.conversion import conversion_line
    from gpuplan.cli.output import console
    from gpuplan.i18n import current_language
    from gpuplan.pricing.currency import build_rates
    from gpuplan.pricing.offers import OfferBook

    rates = build_rates(options.get("fx", ()), options.get("fx_file"))
    book = OfferBook.build(options.get("offers_file"), rates=rates)
    currencies = {book.get(row["cost"]["offer"]).currency for row in result["plans"] if row["cost"]}
    line = conversion_line(rates, result["currency"], currencies, current_language())
    if line:
        console.print(line, style="dim", markup=False)


def show_no_plan(result: dict[str, Any], json_output: bool) -> None:
    """A search that found no plan is a negative verdict: the result (``--json``) or the job
    and why nothing qualifies, then exit 1 (``cli/exit_codes.py``)."""
    from gpuplan.cli.exit_codes import negative_verdict

    if json_output:
        from gpuplan.cli.output import print_json

        print_json(result)
    else:
        from gpuplan.cli.estimate_commands import show_warnings
        from gpuplan.cli.output import console
        from gpuplan.i18n import current_language, translate
        from gpuplan.report.plan import job_line
        from gpuplan.search.reasons import explanation

        lang = current_language()
        console.print(job_line(result["job"], lang), soft_wrap=False, markup=False)
        show_warnings(result["warnings"])
        console.print(
            translate("plan.no_plan", lang, reason=explanation(result, lang)), markup=False
        )
    negative_verdict()


def show_plans(
    result: dict[str, Any], wide: bool = False, options: dict[str, Any] | None = None
) -> None:
    """The job, then the report's plans table (``report.plan.plans_table``): its narrow view at
    the terminal's width (GPUs, run length and cost never cut; offer, billing, machine and
    layout in one wrapping cell), its wide view with ``--wide``; the price age's notice once
    under the table, then the exchange rates used."""
    from rich.markup import escape

    from gpuplan.cli.estimate_commands import show_warnings
    from gpuplan.cli.output import console
    from gpuplan.cli.tables import print_table, rich_table
    from gpuplan.i18n import current_language, translate
    from gpuplan.report.plan import job_line, plans_table, plans_title, price_age_footnotes
    from gpuplan.search.reasons import explanation

    lang = current_language()
    console.print(job_line(result["job"], lang), soft_wrap=False, markup=False)
    show_warnings(result.get("warnings", []))
    plans = result["plans"]
    table = rich_table(
        plans_table(result, lang, narrow=not wide),
        title=escape(plans_title(result, lang)),
        leading=1,
        title_justify="left",
    )
    print_table(table, wide)
    for line in price_age_footnotes(plans, lang):
        console.print(line, style="dim", markup=False)
    show_conversion(result, options or {})
    if result["pareto"] and result["objective"] != "pareto":
        from gpuplan.i18n import format_money
        from gpuplan.report.plan import run_length

        front = ", ".join(
            f"{point['count']}x {point['gpu']} {run_length(point['days'] * 86400, lang)} "
            f"{format_money(point['cost'], result['currency'], lang, None)}"
            for point in result["pareto"][:6]
        )
        console.print(f"{translate('plan.pareto_line', lang)} {front}", style="dim", markup=False)
    console.print(explanation(result, lang), markup=False)
    for skipped in result.get("skipped_gpus", []):
        console.print(f"[dim]{escape(translate('plan.skipped', lang, reason=skipped))}[/dim]")
    if result.get("unoffered_gpus"):
        gpus = ", ".join(result["unoffered_gpus"])
        console.print(f"[dim]{translate('plan.unoffered', lang, gpus=gpus)}[/dim]")
