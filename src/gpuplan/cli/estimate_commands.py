"""`gpuplan estimate SCENARIO` and `gpuplan memory` (the memory half, with flags instead of a file)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from gpuplan.cli.catalog_commands import JsonOption

PART_LABELS = {
    "weights": "weights",
    "gradients": "gradients",
    "optimizer": "optimizer states (+ fp32 master)",
    "activations": "activations",
    "logits": "logits and loss",
    "buffers": "framework buffers",
    "fragmentation": "allocator fragmentation",
    "context": "CUDA context + NCCL",
}


def register(app: typer.Typer) -> None:
    app.command(
        "estimate", help="Memory per GPU (and, as the models land, speed) of one scenario."
    )(estimate)
    app.command(
        "memory",
        help=(
            "Will it fit? Per-GPU memory from flags, e.g. "
            "gpuplan memory --model llama-3.1-8b --method qlora --gpu rtx-4090-24gb --seq-len 4096"
        ),
    )(memory)


def estimate(
    scenario: Annotated[Path, typer.Argument(help="Scenario file (YAML or JSON), see examples/.")],
    json_output: JsonOption = False,
) -> None:
    from gpuplan.api import estimate as run_estimate

    result = run_estimate(scenario)
    show_result(result, json_output)


def memory(
    model: Annotated[str, typer.Option(help="Catalog name or config.json path.")],
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
        str, typer.Option(help="auto | megatron | fsdp | deepspeed | hf")
    ] = "auto",
    tp: Annotated[int, typer.Option(help="Tensor-parallel size.")] = 1,
    pp: Annotated[int, typer.Option(help="Pipeline-parallel size.")] = 1,
    zero: Annotated[int | None, typer.Option(help="ZeRO stage 0-3 (FSDP full shard = 3).")] = None,
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
) -> None:
    from gpuplan.api import estimate as run_estimate

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
    if trainable_layers is not None:
        scenario["trainable_layers"] = trainable_layers
    result = run_estimate(scenario)
    if json_output:
        from gpuplan.cli.output import print_json

        print_json(result["memory"])
        return
    show_memory(result)


def show_result(result: dict[str, Any], json_output: bool) -> None:
    if json_output:
        from gpuplan.cli.output import print_json

        print_json(result)
        return
    show_memory(result)
    from gpuplan.cli.output import console

    for warning in result["warnings"]:
        console.print(f"[yellow]warning:[/yellow] {warning}")


def show_memory(result: dict[str, Any]) -> None:
    from rich.table import Table

    from gpuplan.cli.output import console

    memory = result["memory"]
    strategy = result["strategy"]
    hardware = result["hardware"]
    layout = ", ".join(
        f"{key}={strategy[key]}"
        for key in ("dp", "tp", "pp", "cp", "ep", "zero", "micro_batch", "recompute")
        if key in strategy
    )
    table = Table(
        title=(
            f"Memory per GPU: {result['model']['name']} on {hardware['count']} x {hardware['gpu']}\n"
            f"[dim]{layout}, framework {strategy['framework']}[/dim]"
        )
    )
    table.add_column("part")
    table.add_column("GiB", justify="right")
    table.add_column("GB", justify="right")
    for name, value in memory["parts"].items():
        table.add_row(PART_LABELS.get(name, name), f"{value / 2**30:.2f}", f"{value / 1e9:.2f}")
    table.add_section()
    for label, key in (
        ("allocated (max_memory_allocated)", "allocated_bytes"),
        ("reserved (max_memory_reserved)", "reserved_bytes"),
        ("peak (nvidia-smi)", "peak_bytes"),
        ("GPU capacity", "capacity_bytes"),
    ):
        table.add_row(label, f"{memory[key] / 2**30:.2f}", f"{memory[key] / 1e9:.2f}")
    console.print(table)
    usable = memory["capacity_bytes"] * (1 - memory["safety_margin"])
    if memory["fits"]:
        console.print(
            f"[green]fits[/green]: peak {memory['peak_bytes'] / 2**30:.1f} GiB of {usable / 2**30:.1f} GiB usable "
            f"({memory['safety_margin']:.0%} safety margin)"
        )
    else:
        console.print(
            f"[red]does not fit[/red]: peak {memory['peak_bytes'] / 2**30:.1f} GiB exceeds {usable / 2**30:.1f} GiB usable "
            f"({memory['safety_margin']:.0%} safety margin) by {(memory['peak_bytes'] - usable) / 2**30:.1f} GiB"
        )
