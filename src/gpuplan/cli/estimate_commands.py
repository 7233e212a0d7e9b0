"""`gpuplan estimate SCENARIO` and `gpuplan memory` (the memory half, with flags instead of a file)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from gpuplan.cli.catalog_commands import JsonOption
from gpuplan.cli.report_options import (
    ForceOption,
    FormatOption,
    ReportOption,
    emit_report,
    wants_report,
)
from gpuplan.cli.tables import WideOption

ProfileOption = Annotated[
    int | None,
    typer.Option(
        "--profile",
        help="A stored `gpuplan bench` run: its measured efficiencies replace the built-in ones for its GPU.",
    ),
]


def register(app: typer.Typer) -> None:
    app.command(
        "estimate", help="Memory per GPU (and, as the models land, speed) of one scenario."
    )(estimate)
    app.command(
        "memory",
        help=(
            "Will it fit? Per-GPU memory from flags, e.g. "
            "gpuplan memory --model llama-3.1-8b --method qlora --gpu rtx-4090-24gb --seq-len 4096 "
            "--recompute full"
        ),
    )(memory)


def estimate(
    scenario: Annotated[Path, typer.Argument(help="Scenario file (YAML or JSON), see examples/.")],
    profile: ProfileOption = None,
    json_output: JsonOption = False,
    wide: WideOption = False,
    report: ReportOption = None,
    force: ForceOption = False,
    output_format: FormatOption = "table",
) -> None:
    from gpuplan.jsonable import jsonable
    from gpuplan.services.estimate import estimate as run_estimate

    result = jsonable(run_estimate(scenario, profile=profile))
    shown_as_markdown = False
    if not json_output and wants_report(report, output_format):
        from gpuplan.report.estimate import build_estimate_report
        from gpuplan.scenario import read_scenario_file

        asked = read_scenario_file(scenario)
        emit_report(
            lambda lang: build_estimate_report(result, lang, asked), report, output_format, force
        )
        shown_as_markdown = output_format == "md"
    if not shown_as_markdown:
        show_result(result, json_output)
    exit_on_verdict(result["memory"])


def exit_on_verdict(memory: dict[str, Any]) -> None:
    """Exit 1 once the answer is out when the job does not fit (``cli/exit_codes.py``)."""
    if not memory["fits"]:
        from gpuplan.cli.exit_codes import negative_verdict

        negative_verdict()


def memory(
    model: Annotated[str, typer.Option(help="Catalog name, config.json path or Hugging Face id.")],
    gpu: Annotated[str, typer.Option(help="GPU id or alias.")],
    method: Annotated[str, typer.Option(help="full | lora | qlora | freeze")] = "full",
    seq_len: Annotated[int, typer.Option("--seq-len", help="Tokens per sequence.")] = 4096,
    micro_batch: Annotated[
        int, typer.Option("--micro-batch", help="Sequences per micro-batch per GPU.")
    ] = 1,
    count: Annotated[int, typer.Option(help="Number of GPUs.")] = 1,
    precision: Annotated[str, typer.Option(help="bf16 | fp16 | fp8 | fp32 | bf16-pure")] = "bf16",
    optimizer: Annotated[str, typer.Option(help="adamw | adamw-8bit | sgd | adafactor")] = "adamw",
    framework: Annotated[
        str,
        typer.Option(
            help="auto | megatron | fsdp | deepspeed | hf | megatron-deepspeed | torchtitan | internevo"
        ),
    ] = "auto",
    tp: Annotated[int, typer.Option(help="Tensor-parallel size.")] = 1,
    pp: Annotated[int, typer.Option(help="Pipeline-parallel size.")] = 1,
    zero: Annotated[int | None, typer.Option(help="ZeRO stage 0-3 (FSDP full shard = 3).")] = None,
    shard_group: Annotated[
        int,
        typer.Option(
            "--shard-group",
            help="Data-parallel ranks ZeRO shards over, the rest holding replicas (HSDP); "
            "0 for all.",
        ),
    ] = 0,
    recompute: Annotated[str, typer.Option(help="none | selective | full")] = "none",
    offload: Annotated[str, typer.Option(help="none | optimizer | optimizer+params")] = "none",
    lora_rank: Annotated[int, typer.Option("--lora-rank", help="LoRA rank.")] = 16,
    lora_targets: Annotated[
        str, typer.Option("--lora-targets", help="attention | all-linear | q,v")
    ] = "all-linear",
    trainable_layers: Annotated[
        int | None, typer.Option("--trainable-layers", help="Layers trained by method freeze.")
    ] = None,
    json_output: JsonOption = False,
    wide: WideOption = False,
) -> None:
    from gpuplan.jsonable import jsonable
    from gpuplan.services.estimate import memory as memory_estimate

    scenario: dict[str, Any] = {
        "model": model,
        "method": method,
        "precision": precision,
        "optimizer": optimizer,
        "framework": framework,
        "seq_len": seq_len,
        "micro_batch": micro_batch,
        "lora": {"rank": lora_rank, "targets": lora_targets},
        "hardware": {"gpu": gpu, "count": count},
        "strategy": {"tp": tp, "pp": pp, "recompute": recompute, "offload": offload},
    }
    if zero is not None:
        scenario["strategy"]["zero"] = zero
    if shard_group:
        scenario["strategy"]["shard_group"] = shard_group
    if trainable_layers is not None:
        scenario["trainable_layers"] = trainable_layers
    result = jsonable(memory_estimate(scenario))
    if json_output:
        from gpuplan.cli.output import print_json

        print_json(result["memory"])
    else:
        show_memory(result)
        show_warnings(result["warnings"])
    exit_on_verdict(result["memory"])


def show_result(result: dict[str, Any], json_output: bool) -> None:
    if json_output:
        from gpuplan.cli.output import print_json

        print_json(result)
        return
    show_memory(result)
    show_speed(result)
    show_warnings(result["warnings"])


def show_warnings(warnings: list[Any]) -> None:
    """Each warning (a notice or a sentence) on its own line, in the current language."""
    from rich.markup import escape

    from gpuplan.cli.output import console
    from gpuplan.i18n import current_language, translate
    from gpuplan.notices import notice_text

    label = translate("cli.warning")
    for warning in warnings:
        text = notice_text(warning, current_language())
        console.print(f"[yellow]{label}[/yellow] {escape(text)}")


def show_memory(result: dict[str, Any]) -> None:
    """The memory parts per GPU as the report shows them (``report.estimate.memory_table``),
    under the model, the cluster and the layout, then whether it fits."""
    from rich.markup import escape

    from gpuplan.cli.output import console
    from gpuplan.cli.tables import print_table, rich_table
    from gpuplan.i18n import current_language, translate
    from gpuplan.report.common import hybrid_shard_group
    from gpuplan.report.estimate import memory_table

    memory = result["memory"]
    strategy = result["strategy"]
    hardware = result["hardware"]
    keys = ["dp", "tp", "pp", "cp", "ep", "zero", "micro_batch", "recompute"]
    if hybrid_shard_group(strategy) is not None:
        keys.insert(keys.index("zero") + 1, "shard_group")
    if strategy.get("vpp", 1) > 1:
        keys.insert(keys.index("pp") + 1, "vpp")
    if strategy.get("schedule", "1f1b") != "1f1b":
        keys.insert(keys.index("pp") + 1, "schedule")
    layout = ", ".join(f"{key}={strategy[key]}" for key in keys if key in strategy)
    heading = translate(
        "memory.title", model=result["model"]["name"], count=hardware["count"], gpu=hardware["gpu"]
    )
    table = rich_table(
        memory_table(result, current_language()),
        title=f"{escape(heading)}\n[dim]{layout}, framework {strategy['framework']}[/dim]",
    )
    print_table(table)
    usable = memory["capacity_bytes"] * (1 - memory["safety_margin"])
    values = {
        "peak": f"{memory['peak_bytes'] / 2**30:.1f}",
        "usable": f"{usable / 2**30:.1f}",
        "margin": f"{memory['safety_margin']:.0%}",
        "short": f"{(memory['peak_bytes'] - usable) / 2**30:.1f}",
    }
    if memory["fits"]:
        console.print(f"[green]{translate('memory.fits', **values)}[/green]")
    else:
        console.print(f"[red]{translate('memory.does_not_fit', **values)}[/red]")
    host = memory.get("host") or {}
    if host.get("bytes_per_node"):
        from gpuplan.units import format_bytes

        capacity = host.get("capacity_bytes_per_node")
        line = translate(
            "memory.host",
            need=format_bytes(host["bytes_per_node"], binary=False),
            pinned=format_bytes(host["pinned_bytes_per_node"], binary=False),
            capacity=format_bytes(capacity, binary=False) if capacity else "?",
        )
        console.print(f"[{'red' if host.get('fits') is False else 'default'}]{line}[/]")
    if "framework" in result:
        show_framework(result["framework"])


def show_framework(framework: dict[str, Any]) -> None:
    """The profile the estimate used: its name, the scenario's base and overrides, and every
    part's settings, one row per part."""
    from gpuplan.cli.output import console
    from gpuplan.cli.tables import FitTable as Table
    from gpuplan.cli.tables import print_table
    from gpuplan.i18n import translate

    name = framework["name"] + (f" {framework['version']}" if framework.get("version") else "")
    table = Table(title=translate("framework.title", name=name, base=framework["base"]))
    table.add_column(translate("col.part"))
    table.add_column("")
    for part, settings in framework["parts"].items():
        text = ", ".join(f"{key}={value}" for key, value in settings.items())
        table.add_row(translate(f"framework.part.{part}"), text)
    print_table(table)
    if framework.get("overrides"):
        overrides = ", ".join(f"{key}={value}" for key, value in framework["overrides"].items())
        console.print(translate("framework.overrides", overrides=overrides))


def show_speed(result: dict[str, Any]) -> None:
    """The step-time parts as the report shows them (``report.estimate.step_table``), then the
    throughput, its interval, the goodput and the run length."""
    from gpuplan.cli.output import console
    from gpuplan.cli.tables import print_table, rich_table
    from gpuplan.i18n import current_language, translate
    from gpuplan.report.estimate import step_table
    from gpuplan.report.interval import interval_line, run_length_text, throughput_text
    from gpuplan.units import format_bytes, format_duration, format_tokens

    throughput = result["throughput"]
    step = throughput["step_seconds"]
    title = translate("step.title", seconds=f"{step:.3f}")
    print_table(rich_table(step_table(result, current_language(), title)))
    dtype_note = translate("speed.fp8_note") if throughput["matmul_dtype"] == "fp8" else ""
    console.print(
        translate(
            "speed.throughput",
            tokens=throughput_text(throughput),
            per_gpu=f"{throughput['tokens_per_second_per_gpu']:,.0f}",
            tflops=f"{throughput['model_flops_per_second_per_gpu'] / 1e12:.0f}",
            mfu=f"{throughput['mfu']:.1%}",
            hfu=f"{throughput['hfu']:.1%}",
            dtype=throughput["matmul_dtype"],
        )
        + dtype_note
    )
    console.print(interval_line(result.get("interval"), current_language()))
    reliability = result["reliability"]
    console.print(
        translate(
            "speed.goodput",
            goodput=f"{reliability['goodput']:.1%}",
            size=format_bytes(reliability["checkpoint_bytes"]),
            interval=format_duration(reliability["checkpoint_interval_seconds"]),
            stall=format_duration(reliability["checkpoint_stall_seconds"]),
            mtbf=format_duration(reliability["mean_time_between_failures_seconds"]),
        )
    )
    duration = result["duration"]
    if duration["seconds"] is not None:
        console.print(
            "[bold]"
            + translate(
                "speed.run_length",
                duration=run_length_text(duration, current_language()),
                tokens=format_tokens(duration["tokens"]),
            )
            + "[/bold]"
        )
