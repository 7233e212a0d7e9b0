"""`gpuplan models`, `gpuplan model NAME`, `gpuplan gpus`, `gpuplan gpu NAME`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON in base units.")]


def register(app: typer.Typer) -> None:
    app.command("models", help="List the built-in models with their exact parameter counts.")(
        list_models
    )
    app.command("model", help="Architecture and parameter breakdown of a model.")(show_model)
    app.command("gpus", help="List the built-in GPUs with dense peak FLOP/s and memory.")(
        list_gpus
    )
    app.command("gpu", help="Specs of one GPU, each with its source and date.")(show_gpu)


def _params(count: int) -> str:
    from gpuplan.units import format_tokens

    return format_tokens(count)


def list_models(json_output: JsonOption = False) -> None:
    from gpuplan.catalog import all_models, model_entries

    models = all_models()
    if json_output:
        from gpuplan.cli.output import print_json

        entries = model_entries()
        print_json(
            [
                {
                    "name": m.name,
                    "family": m.family,
                    "hf_repo": entries[m.name].get("hf_repo"),
                    "total_params": m.total_params,
                    "active_params": m.active_params,
                    "num_layers": m.num_layers,
                    "hidden_size": m.hidden_size,
                    "vocab_size": m.vocab_size,
                    "max_position_embeddings": m.max_position_embeddings,
                }
                for m in models
            ]
        )
        return
    from rich.table import Table

    from gpuplan.cli.output import console

    table = Table(title="Built-in models (parameters counted from the architecture)")
    for column in ("name", "family", "params", "active", "layers", "hidden", "heads/kv", "vocab", "context"):
        table.add_column(column, justify="left" if column in ("name", "family") else "right")
    for m in models:
        table.add_row(
            m.name,
            m.family,
            f"{m.total_params:,}",
            _params(m.active_params) if m.is_moe else "",
            str(m.num_layers),
            str(m.hidden_size),
            f"{m.num_attention_heads}/{m.num_kv_heads}",
            str(m.vocab_size),
            str(m.max_position_embeddings or ""),
        )
    console.print(table)


def _resolve_model(name: str):  # type: ignore[no-untyped-def]
    from gpuplan.catalog import load_model
    from gpuplan.workload.model import ModelSpec

    if name.endswith(".json") or Path(name).is_file():
        return ModelSpec.from_hf_config(Path(name), name=Path(name).stem)
    return load_model(name)


def show_model(
    name: Annotated[str, typer.Argument(help="Catalog name (llama-3.1-8b) or a config.json path.")],
    json_output: JsonOption = False,
) -> None:
    spec = _resolve_model(name)
    if json_output:
        from gpuplan.cli.output import print_json

        print_json(spec.to_dict())
        return
    from rich.table import Table

    from gpuplan.cli.output import console

    console.print(f"[bold]{spec.name}[/bold]  family {spec.family}")
    architecture = Table(show_header=False, box=None)
    rows = [
        ("layers", spec.num_layers),
        ("hidden size", spec.hidden_size),
        ("attention heads / KV heads", f"{spec.num_attention_heads} / {spec.num_kv_heads}"),
        ("head dim", spec.head_dim),
        ("FFN width", spec.intermediate_size),
        ("MLP", "gated (SwiGLU/GeGLU)" if spec.gated_mlp else "plain"),
        ("vocabulary", spec.vocab_size),
        ("embeddings", "tied" if spec.tie_word_embeddings else "untied"),
        ("positions", spec.position_embedding),
        ("norm", f"{spec.norm}, {spec.norms_per_layer} per layer"),
    ]
    if spec.is_moe:
        rows.append(
            (
                "experts",
                f"{spec.num_experts} routed, {spec.num_experts_per_token} per token, "
                f"width {spec.moe_intermediate_size}, {spec.num_moe_layers} MoE layers",
            )
        )
    if spec.uses_mla:
        rows.append(("attention", f"multi-head latent (kv rank {spec.kv_lora_rank}, q rank {spec.q_lora_rank or 'none'})"))
    for label, value in rows:
        architecture.add_row(label, str(value))
    console.print(architecture)
    breakdown = Table(title="Parameters")
    breakdown.add_column("part")
    breakdown.add_column("parameters", justify="right")
    breakdown.add_column("share", justify="right")
    total = spec.total_params
    for part, count in spec.parameter_breakdown().items():
        if count:
            breakdown.add_row(part, f"{count:,}", f"{100 * count / total:.1f}%")
    breakdown.add_row("[bold]total[/bold]", f"[bold]{total:,}[/bold]", "100%")
    if spec.is_moe:
        breakdown.add_row("active per token", f"{spec.active_params:,}", f"{100 * spec.active_params / total:.1f}%")
    console.print(breakdown)


def list_gpus(json_output: JsonOption = False) -> None:
    from gpuplan.catalog import all_gpus

    gpus = all_gpus()
    if json_output:
        from gpuplan.cli.output import print_json

        print_json([gpu.to_dict() for gpu in gpus])
        return
    from rich.table import Table

    from gpuplan.cli.output import console
    from gpuplan.units import format_bandwidth, format_bytes

    table = Table(title="Built-in GPUs (dense peak TFLOP/s; memory in GiB and as the vendor labels it)")
    for column in ("id", "memory", "HBM/GDDR", "bf16", "fp8", "tf32", "link (one way)", "TDP", "observed"):
        table.add_column(column, justify="left" if column in ("id", "link (one way)", "observed") else "right")
    for gpu in gpus:
        table.add_row(
            gpu.id,
            f"{format_bytes(gpu.memory_bytes)} ({gpu.memory_quoted})",
            format_bandwidth(gpu.memory_bandwidth),
            f"{gpu.peak('bf16') / 1e12:g}",
            f"{gpu.peak_flops['fp8'] / 1e12:g}" if gpu.has_fp8 else "-",
            f"{gpu.peak_flops['tf32'] / 1e12:g}" if "tf32" in gpu.peak_flops else "-",
            f"{gpu.intra_node_link} {format_bandwidth(gpu.intra_node_bandwidth)}",
            f"{gpu.tdp_watts:g} W" if gpu.tdp_watts else "-",
            gpu.observed,
        )
    console.print(table)


def show_gpu(
    name: Annotated[str, typer.Argument(help="GPU id or alias: h100-sxm-80gb, 'H100 SXM', RTX4090.")],
    json_output: JsonOption = False,
) -> None:
    from gpuplan.catalog import load_gpu

    gpu = load_gpu(name)
    if json_output:
        from gpuplan.cli.output import print_json

        print_json(gpu.to_dict())
        return
    from rich.table import Table

    from gpuplan.cli.output import console
    from gpuplan.units import format_bandwidth, format_bytes, format_flops

    table = Table(title=f"{gpu.name} ({gpu.id})")
    table.add_column("spec")
    table.add_column("value", justify="right")
    table.add_column("source, observed")

    def row(label: str, value: str, field: str) -> None:
        source, observed = gpu.source_of(field)
        table.add_row(label, value, f"{source[:70]}…, {observed}" if len(source) > 70 else f"{source}, {observed}")

    row("memory", f"{format_bytes(gpu.memory_bytes)} = {format_bytes(gpu.memory_bytes, binary=False)} (vendor: {gpu.memory_quoted})", "memory_bytes")
    row("memory bandwidth", format_bandwidth(gpu.memory_bandwidth), "memory_bandwidth")
    for dtype, peak in gpu.peak_flops.items():
        row(f"dense {dtype} peak", format_flops(peak), "peak_flops")
    row(
        "intra-node link (one way)",
        f"{gpu.intra_node_link} {format_bandwidth(gpu.intra_node_bandwidth)}",
        "intra_node_bandwidth",
    )
    row("GPUs per node", str(gpu.gpus_per_node), "gpus_per_node")
    if gpu.tdp_watts:
        row("TDP", f"{gpu.tdp_watts:g} W", "tdp_watts")
    if gpu.purchase_price_usd:
        row("purchase price (indicative)", f"${gpu.purchase_price_usd:,.0f}", "purchase_price_usd")
    console.print(table)
    if not gpu.vendor_datasheet:
        console.print("[yellow]No vendor datasheet behind these dense figures; treat as indicative.[/yellow]")
    if gpu.notes:
        console.print(gpu.notes)
