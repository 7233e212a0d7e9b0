"""`gpuplan models`, `gpuplan model NAME`, `gpuplan gpus`, `gpuplan gpu NAME`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from gpuplan.hardware.gpu import GPUSpec

from gpuplan.cli.tables import WideOption

JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON in base units.")]


def register(app: typer.Typer) -> None:
    app.command("models", help="List the built-in models with their exact parameter counts.")(
        list_models
    )
    app.command("model", help="Architecture and parameter breakdown of a model.")(show_model)
    app.command("gpus", help="List the built-in GPUs with dense peak FLOP/s and memory.")(list_gpus)
    app.command("gpu", help="Specs of one GPU, each with its source and date.")(show_gpu)


def _params(count: int) -> str:
    from gpuplan.units import format_tokens

    return format_tokens(count)


def list_models(json_output: JsonOption = False, wide: WideOption = False) -> None:
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
    from gpuplan.cli.tables import FitTable as Table
    from gpuplan.cli.tables import print_table

    table = Table(title="Built-in models (parameters counted from the architecture)")
    drop_ranks = {"family": 1, "layers": 3, "hidden": 4, "heads/kv": 2, "vocab": 6, "context": 5}
    for column in (
        "name",
        "family",
        "params",
        "active",
        "layers",
        "hidden",
        "heads/kv",
        "vocab",
        "context",
    ):
        table.add_column(
            column,
            justify="left" if column in ("name", "family") else "right",
            key=column in ("name", "params", "active"),
            drop=drop_ranks.get(column),
        )
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
    print_table(table)


def show_model(
    name: Annotated[
        str,
        typer.Argument(
            help="Catalog name (llama-3.1-8b), config.json path, or Hugging Face id "
            "(meta-llama/Llama-3.1-8B, read from the local Hugging Face cache)."
        ),
    ],
    json_output: JsonOption = False,
    wide: WideOption = False,
) -> None:
    from gpuplan.scenario import resolve_model

    spec = resolve_model(name)
    if json_output:
        from gpuplan.cli.output import print_json

        print_json(spec.to_dict())
        return
    from rich.markup import escape

    from gpuplan.cli.output import console
    from gpuplan.cli.tables import FitTable as Table
    from gpuplan.cli.tables import print_table

    console.print(f"[bold]{escape(spec.name)}[/bold]  family {spec.family}")
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
        rows.append(
            (
                "attention",
                f"multi-head latent (kv rank {spec.kv_lora_rank}, "
                f"q rank {spec.q_lora_rank or 'none'})",
            )
        )
    for label, value in rows:
        architecture.add_row(label, str(value))
    print_table(architecture)
    breakdown = Table(title="Parameters")
    breakdown.add_column("part")
    breakdown.add_column("parameters", justify="right", key=True)
    breakdown.add_column("share", justify="right", key=True)
    total = spec.total_params
    for part, count in spec.parameter_breakdown().items():
        if count:
            breakdown.add_row(part, f"{count:,}", f"{100 * count / total:.1f}%")
    breakdown.add_row("[bold]total[/bold]", f"[bold]{total:,}[/bold]", "100%")
    if spec.is_moe:
        breakdown.add_row(
            "active per token",
            f"{spec.active_params:,}",
            f"{100 * spec.active_params / total:.1f}%",
        )
    print_table(breakdown)
    from gpuplan.cli.estimate_commands import show_warnings
    from gpuplan.notices import config_defaults_notices

    show_warnings(config_defaults_notices(spec))


def _tflops(gpu: GPUSpec, dtype: str) -> str:
    peak = gpu.peak_flops.get(dtype)
    return f"{peak / 1e12:g}" if peak is not None else "-"


def list_gpus(json_output: JsonOption = False, wide: WideOption = False) -> None:
    from gpuplan.catalog import all_gpus

    gpus = all_gpus()
    if json_output:
        from gpuplan.cli.output import print_json

        print_json([gpu.to_dict() for gpu in gpus])
        return
    from gpuplan.cli.tables import FitTable as Table
    from gpuplan.cli.tables import print_table
    from gpuplan.units import format_bandwidth, format_bytes

    table = Table(
        title="Built-in GPUs (dense peak TFLOP/s; memory in GiB and as the vendor labels it)"
    )
    left = ("id", "link (one way)", "observed")
    drop_ranks = {"HBM/GDDR": 3, "fp8": 2, "tf32": 5, "link (one way)": 4, "observed": 6, "TDP": 1}
    for column in ("id", "memory", "HBM/GDDR", "bf16", "fp8", "tf32", *left[1:], "TDP"):
        table.add_column(
            column,
            justify="left" if column in left else "right",
            key=column in ("id", "bf16"),
            drop=drop_ranks.get(column),
        )
    for gpu in gpus:
        table.add_row(
            gpu.id,
            f"{format_bytes(gpu.memory_bytes)} ({gpu.memory_quoted})",
            format_bandwidth(gpu.memory_bandwidth) if gpu.memory_bandwidth else "-",
            _tflops(gpu, "bf16"),
            _tflops(gpu, "fp8"),
            _tflops(gpu, "tf32"),
            f"{gpu.intra_node_link} {format_bandwidth(gpu.intra_node_bandwidth)}",
            gpu.observed,
            f"{gpu.tdp_watts:g} W" if gpu.tdp_watts else "-",
        )
    print_table(table)


def _gpu_rows(gpu: GPUSpec) -> list[tuple[str, str, str]]:
    """(label, value, field) for each spec the terminal view shows; ``field`` keys provenance."""
    from gpuplan.units import format_bandwidth, format_bytes, format_flops

    memory = (
        f"{format_bytes(gpu.memory_bytes)} = {format_bytes(gpu.memory_bytes, binary=False)} "
        f"(vendor: {gpu.memory_quoted} {gpu.memory_type})"
    )
    rows = [("memory", memory, "memory_bytes")]
    bandwidth = format_bandwidth(gpu.memory_bandwidth) if gpu.memory_bandwidth else "unknown"
    rows.append(("memory bandwidth", bandwidth, "memory_bandwidth"))
    for dtype, peak in gpu.peak_flops.items():
        rows.append((f"dense {dtype} peak", format_flops(peak), f"peak_flops.{dtype}"))
    link = f"{gpu.intra_node_link} {format_bandwidth(gpu.intra_node_bandwidth)}"
    if gpu.intra_node_bandwidth_vendor_bidirectional:
        vendor = format_bandwidth(gpu.intra_node_bandwidth_vendor_bidirectional)
        link += f" (vendor: {vendor} bidirectional)"
    rows.append(("intra-node link (one way)", link, "intra_node_bandwidth"))
    rows.append(("NVLink/fabric domain", f"{gpu.nvlink_domain_size} GPUs", "nvlink_domain_size"))
    rows.append(("PCIe generation", str(gpu.pcie_generation), "pcie_generation"))
    rows.append(("GPUs per node", str(gpu.gpus_per_node), "gpus_per_node"))
    if gpu.tdp_watts:
        rows.append(("TDP", f"{gpu.tdp_watts:g} W", "tdp_watts"))
    if gpu.purchase_price_usd:
        price = f"${gpu.purchase_price_usd:,.0f}"
        rows.append(("purchase price (indicative)", price, "purchase_price_usd"))
    return rows


def show_gpu(
    name: Annotated[
        str, typer.Argument(help="GPU id or alias: h100-sxm-80gb, 'H100 SXM', RTX4090.")
    ],
    json_output: JsonOption = False,
    wide: WideOption = False,
) -> None:
    from gpuplan.catalog import load_gpu

    gpu = load_gpu(name)
    if json_output:
        from gpuplan.cli.output import print_json

        print_json(gpu.to_dict())
        return
    from gpuplan.cli.output import console
    from gpuplan.cli.tables import FitTable as Table
    from gpuplan.cli.tables import print_table

    table = Table(title=f"{gpu.name} ({gpu.id})")
    table.add_column("spec")
    table.add_column("value", justify="right")
    table.add_column("source (where not the main one)")
    for label, value, field_name in _gpu_rows(gpu):
        source, observed = gpu.source_of(field_name)
        own = "" if source == gpu.source else f"{source}, {observed}"
        table.add_row(label, value, own)
    print_table(table)
    console.print(f"Source: {gpu.source}, observed {gpu.observed}", markup=False)
    if not gpu.vendor_datasheet:
        console.print(
            "[yellow]No vendor datasheet behind these dense figures; treat as indicative.[/yellow]"
        )
    if gpu.notes:
        console.print(gpu.notes, markup=False)
    if gpu.speed_model_gap:
        from rich.markup import escape

        console.print("[yellow]Speed not predicted:[/yellow] " + escape(gpu.speed_model_gap))
    if gpu.no_public_offer:
        gap = gpu.no_public_offer
        console.print(
            f"No built-in offer: {gap['reason']} ({gap['source']}, {gap['observed']})",
            markup=False,
        )
