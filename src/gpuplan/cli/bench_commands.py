"""`gpuplan bench`: measure the rented machine; `history`, `show ID`, `compare ID OFFER`.

PyTorch and NVML are imported only when a measurement runs, never for ``--help``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from gpuplan.cli.catalog_commands import JsonOption
from gpuplan.cli.checks import finite
from gpuplan.cli.report_options import (
    ForceOption,
    FormatOption,
    ReportOption,
    emit_report,
    wants_report,
)
from gpuplan.cli.tables import WideOption
from gpuplan.i18n import translate

BENCH_INSTALL_HELP = (
    r"pip install 'gpuplan\[bench]' from a package index, pip install -e '.\[bench]' in a clone"
)
"""Both install commands, markup-escaped (``\\[``: Rich would take ``[bench]`` for a style);
the error a missing PyTorch raises names the one that applies (``gpuplan.extras``)."""

VERDICT_STYLES = {
    "PASS": "green",
    "WARN": "yellow",
    "FAIL": "red",
    "SKIPPED": "dim",
    "ERROR": "bold red",
}


def register(app: typer.Typer) -> None:
    bench_app = typer.Typer(
        help=(
            "Does the machine deliver what was sold? Matmul FLOP/s, memory and PCIe bandwidth, "
            "collectives, storage, sustained load, and a probe of the planned job. "
            f"Needs the bench extra: {BENCH_INSTALL_HELP}."
        ),
        invoke_without_command=True,
        no_args_is_help=False,
    )
    bench_app.callback()(bench)
    bench_app.command("history", help="Stored benchmark runs, newest first.")(history)
    bench_app.command("show", help="One stored run with its verdicts.")(show)
    bench_app.command("compare", help="Hold a stored run against an offer's advertised hardware.")(
        compare
    )
    app.add_typer(bench_app, name="bench")


def _parts(only: str | None, skip: str | None, probe: Path | None) -> tuple[str, ...]:
    from gpuplan.bench.runner import PARTS
    from gpuplan.errors import InputError

    default = ["matmul", "memory", "collectives", "storage", "burn"]
    chosen = default if only is None else [part.strip() for part in only.split(",") if part.strip()]
    skipped = [part.strip() for part in (skip or "").split(",") if part.strip()]
    for part in [*chosen, *skipped]:
        if part not in PARTS:
            raise InputError.of("error.bench_part", part=repr(part), accepted=", ".join(PARTS))
    if probe is not None and "probe" not in chosen:
        chosen.append("probe")
    return tuple(part for part in chosen if part not in skipped)


def bench(
    context: typer.Context,
    device: Annotated[
        str, typer.Option(help="cuda | cpu (cpu runs the pipeline at toy sizes).")
    ] = "cuda",
    quick: Annotated[bool, typer.Option(help="Fewer shapes, sizes and a 1-minute burn.")] = False,
    only: Annotated[
        str | None,
        typer.Option(help="Comma list of parts: matmul,memory,collectives,storage,burn,probe."),
    ] = None,
    skip: Annotated[str | None, typer.Option(help="Comma list of parts to leave out.")] = None,
    shapes: Annotated[
        Path | None,
        typer.Option(help="Scenario whose per-layer GEMMs (after TP) are measured too."),
    ] = None,
    probe: Annotated[
        Path | None, typer.Option(help="Scenario to probe: train its model for a few steps.")
    ] = None,
    storage_dir: Annotated[
        Path | None,
        typer.Option(
            "--storage-dir",
            help="Directory to test (default: the working directory; /tmp is often RAM).",
        ),
    ] = None,
    storage_size: Annotated[
        str | None,
        typer.Option(
            "--storage-size",
            help="Bytes to write and read (default 16GiB, quick 2GiB; at most a tenth of the free space).",
        ),
    ] = None,
    storage_claim: Annotated[
        str | None,
        typer.Option(
            "--storage-claim",
            help="Advertised throughput, e.g. 3GB/s (without it: measured, no verdict).",
        ),
    ] = None,
    burn_minutes: Annotated[
        float | None,
        typer.Option(
            "--burn-minutes",
            help="Sustained burn length (default 5, quick 1).",
            min=0,
            max=1440,
            callback=finite,
        ),
    ] = None,
    gpu: Annotated[
        str | None, typer.Option(help="Catalog GPU id when the driver's name is not recognised.")
    ] = None,
    threshold: Annotated[
        list[str] | None,
        typer.Option(help="Override a threshold: CATEGORY=PASS:WARN, e.g. fluctuation=0.03:0.06."),
    ] = None,
    collectives: Annotated[
        bool,
        typer.Option("--collectives", help="Print torchrun and Slurm lines for a multi-node run."),
    ] = False,
    nodes: Annotated[int, typer.Option(help="Nodes, for --collectives.")] = 2,
    gpus_per_node: Annotated[int, typer.Option("--gpus-per-node", help="For --collectives.")] = 8,
    network: Annotated[
        str | None,
        typer.Option(
            help="For --collectives: the network the NIC rate is held to, a name "
            "(e.g. ib-ndr-400g) or a rate per GPU (e.g. 400Gbps); without it, measured only."
        ),
    ] = None,
    store: Annotated[bool, typer.Option(help="Store the run in the local database.")] = True,
    exit_zero: Annotated[
        bool, typer.Option("--exit-zero", help="Exit 0 even when a figure FAILs.")
    ] = False,
    json_output: JsonOption = False,
    wide: WideOption = False,
) -> None:
    if context.invoked_subcommand is not None:
        return
    import shlex
    import sys

    from gpuplan.errors import InputError

    if collectives:
        _print_launch_commands(nodes, gpus_per_node, network, json_output)
        return
    if device not in ("cuda", "cpu"):
        raise InputError.of("error.bench_device", value=repr(device))
    from gpuplan.bench.environment import require_torch

    require_torch()
    from gpuplan.bench.report import DEFAULT_THRESHOLDS, parse_threshold_override
    from gpuplan.bench.runner import BenchOptions, run_bench
    from gpuplan.units import parse_bandwidth, parse_bytes

    thresholds = dict(DEFAULT_THRESHOLDS)
    for text in threshold or []:
        name, value = parse_threshold_override(text, DEFAULT_THRESHOLDS)
        thresholds[name] = value
    if burn_minutes is not None and burn_minutes <= 0:
        raise InputError.of("error.positive", field="--burn-minutes", value=burn_minutes)
    if storage_dir is not None and not storage_dir.is_dir():
        raise InputError.of("error.bench_storage_dir", path=repr(str(storage_dir)))
    options = BenchOptions(
        device=device,
        quick=quick,
        parts=_parts(only, skip, probe),
        storage_directory=storage_dir,
        storage_bytes=parse_bytes(storage_size) if storage_size else None,
        storage_claim=parse_bandwidth(storage_claim) if storage_claim else None,
        burn_seconds=burn_minutes * 60 if burn_minutes is not None else None,
        shapes_scenario=shapes,
        probe_scenario=probe,
        gpu=gpu,
        thresholds=thresholds,
        command=shlex.join(["gpuplan", *sys.argv[1:]]),
    )
    from rich.markup import escape

    from gpuplan.cli.output import error_console

    def progress(message: str) -> None:
        if not json_output:
            error_console.print(f"[dim]… {escape(message)}[/dim]")

    from gpuplan.bench.report import FAILING
    from gpuplan.bench.runner import RunRecorder

    result = run_bench(options, progress, RunRecorder() if store else None)
    _show_result(result, json_output)
    if result["worst_verdict"] in FAILING and not exit_zero:
        raise typer.Exit(1)


def _print_launch_commands(
    nodes: int, gpus_per_node: int, network: str | None, json_output: bool
) -> None:
    from gpuplan.bench.collectives import launch_commands, network_rate
    from gpuplan.errors import InputError

    if nodes < 1 or gpus_per_node < 1:
        raise InputError.of("error.bench_nodes")
    if network is not None:
        network_rate(network)
    commands = launch_commands(nodes, gpus_per_node, network=network)
    if json_output:
        from gpuplan.cli.output import print_json
        from gpuplan.results import build

        print_json(build("bench-launch", commands))
        return
    print("# Run on every node (MASTER_ADDR = the first node); rank 0 writes collectives.json")
    print("# and stores the run (gpuplan bench history).")
    print(commands["torchrun"])
    print("# Or, under Slurm, once from the login node:")
    print(commands["slurm"])


def _show_result(result: dict[str, Any], json_output: bool) -> None:
    if json_output:
        from gpuplan.cli.output import print_json
        from gpuplan.results import build

        print_json(build("bench-run", result))
        return
    from rich.markup import escape

    from gpuplan.cli.output import console
    from gpuplan.cli.tables import print_table, rich_table
    from gpuplan.i18n import current_language
    from gpuplan.report.bench import figures_table

    header = result["provenance"]
    gpus = ", ".join(f"{gpu['name']} ({gpu['uuid']})" for gpu in header["gpus"]) or header["device"]
    run_id = result.get("id")
    console.print(
        f"[bold]gpuplan bench[/bold]{f' run {run_id}' if run_id else ''} · {header['date']} · "
        f"{escape(header['hostname'])} · method v{result['method_version']}",
        highlight=False,
    )
    console.print(
        f"GPUs: {gpus} · driver {header['driver_version'] or '—'} · CUDA "
        f"{header['cuda_version'] or '—'} · torch {header['torch_version']} · catalog "
        f"{result.get('gpu_id') or '—'}",
        highlight=False,
        markup=False,
    )
    console.print(f"command: {header['command']}", highlight=False, markup=False)
    verdict_style = {6: lambda verdict: VERDICT_STYLES.get(verdict, "")}
    print_table(rich_table(figures_table(result, current_language()), styles=verdict_style))
    for figure in result["figures"]:
        if figure["verdict"] in ("WARN", "FAIL", "SKIPPED", "ERROR"):
            style = VERDICT_STYLES[figure["verdict"]]
            console.print(
                f"[{style}]{figure['verdict']}[/{style}] "
                f"{escape(figure['label'])}: {escape(figure['reason'])}"
                + (
                    f" [dim]({escape(figure['threshold'])})[/dim]"
                    if figure["verdict"] in ("PASS", "WARN", "FAIL")
                    else ""
                ),
                highlight=False,
            )
    console.print(
        f"overall: [{VERDICT_STYLES[result['worst_verdict']]}]{result['worst_verdict']}[/]"
    )


def history(
    limit: Annotated[int, typer.Option(help="How many runs to list.")] = 50,
    json_output: JsonOption = False,
    wide: WideOption = False,
) -> None:
    from gpuplan.store import list_bench_runs

    runs = list_bench_runs(limit)
    if json_output:
        from gpuplan.cli.output import print_json

        print_json(runs)
        return
    from gpuplan.cli.tables import FitTable, print_table

    table = FitTable()
    drop_ranks = {"host": 3, "device": 2, "method": 4, "command": 1}
    for column in ("id", "date", "host", "device", "gpu", "method", "verdict", "command"):
        table.add_column(
            translate(f"bench.col.{column}"),
            key=column in ("id", "gpu", "verdict"),
            drop=drop_ranks.get(column),
        )
    for run in runs:
        style = VERDICT_STYLES.get(run.worst_verdict, "")
        table.add_row(
            str(run.id),
            run.created_at,
            run.hostname,
            run.device,
            run.gpu_id or "—",
            f"v{run.method_version}",
            f"[{style}]{run.worst_verdict}[/{style}]",
            run.command,
        )
    print_table(table)


def show(
    run_id: Annotated[int, typer.Argument(help="Run id from `gpuplan bench history`.")],
    json_output: JsonOption = False,
    wide: WideOption = False,
    report: ReportOption = None,
    force: ForceOption = False,
    output_format: FormatOption = "table",
) -> None:
    from gpuplan.store import load_bench_run

    run = load_bench_run(run_id)
    if not json_output and wants_report(report, output_format):
        from gpuplan.report.bench import build_bench_report

        emit_report(lambda lang: build_bench_report(run, lang), report, output_format, force)
        if output_format == "md":
            return
    _show_result(run, json_output)


def compare(
    run_id: Annotated[int, typer.Argument(help="Run id from `gpuplan bench history`.")],
    offer: Annotated[str, typer.Argument(help="Offer id (`gpuplan offers` lists them).")],
    offers_file: Annotated[
        Path | None,
        typer.Option("--offers-file", help="Your own offers TOML, added to the catalog."),
    ] = None,
    json_output: JsonOption = False,
    wide: WideOption = False,
) -> None:
    from gpuplan.bench.compare import compare_run_to_offer
    from gpuplan.pricing.offers import OfferBook
    from gpuplan.store import load_bench_run

    run = load_bench_run(run_id)
    chosen = OfferBook.build(offers_file).get(offer)
    result = compare_run_to_offer(run, chosen)
    if json_output:
        from gpuplan.cli.output import print_json
        from gpuplan.results import build

        print_json(build("bench-compare", result))
    else:
        _print_comparison(result, run_id, chosen)
    from gpuplan.bench.report import FAILING

    verdicts = [item["verdict"] for item in (*result["checks"], *result["figures"])]
    if any(verdict in FAILING for verdict in verdicts):
        from gpuplan.cli.exit_codes import negative_verdict

        negative_verdict()


def _print_comparison(result: dict[str, Any], run_id: int, chosen: Any) -> None:
    from gpuplan.cli.output import console
    from gpuplan.cli.tables import FitTable, print_table
    from gpuplan.report.bench import format_figure, format_ratio

    console.print(
        f"run {run_id} against offer {chosen.id} ({chosen.gpus} x {result['gpu']})", markup=False
    )
    table = FitTable()
    for column in ("item", "advertised", "measured", "ratio", "reference_ratio", "verdict"):
        table.add_column(
            translate(f"bench.col.{column}"),
            key=column in ("measured", "verdict"),
            drop=1 if column == "reference_ratio" else None,
        )
    for check in result["checks"]:
        style = VERDICT_STYLES[check["verdict"]]
        table.add_row(
            check["item"],
            str(check["advertised"]),
            str(check["measured"] or "—"),
            "",
            "",
            f"[{style}]{check['verdict']}[/{style}]",
        )
    for figure in result["figures"]:
        style = VERDICT_STYLES[figure["verdict"]]
        table.add_row(
            figure["label"],
            format_figure(figure["spec"], figure["unit"]),
            format_figure(figure["measured"], figure["unit"]),
            format_ratio(figure["spec_ratio"]),
            format_ratio(figure["reference_ratio"]),
            f"[{style}]{figure['verdict']}[/{style}]",
        )
    print_table(table)
