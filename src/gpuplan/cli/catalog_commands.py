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


def list_models(json_output: JsonOption = False, wide: WideOption = False) -> None:
    """Every built-in model (``services.catalog.models``), as JSON or as the catalog's models
    table (``report.catalog.models_table``)."""
    from gpuplan.jsonable import jsonable
    from gpuplan.services.catalog import models

    listing = jsonable(models())
    if json_output:
        from gpuplan.cli.output import print_json

        print_json(listing)
        return
    from gpuplan.cli.tables import print_table, rich_table
    from gpuplan.i18n import current_language
    from gpuplan.report.catalog import models_table

    print_table(rich_table(models_table(listing, current_language())))


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
        from gpuplan.services.catalog import model

        print_json(model(spec))
        return
    from rich.markup import escape

    from gpuplan.cli.output import console
    from gpuplan.cli.tables import FitTable as Table
    from gpuplan.cli.tables import print_table
    from gpuplan.i18n import translate

    t = translate
    console.print(
        t("catalog.model_header", name=f"[bold]{escape(spec.name)}[/bold]", family=spec.family)
    )
    architecture = Table(show_header=False, box=None)
    rows = [
        (t("catalog.arch.layers"), spec.num_layers),
        (t("catalog.arch.hidden"), spec.hidden_size),
        (t("catalog.arch.heads"), f"{spec.num_attention_heads} / {spec.num_kv_heads}"),
        (t("catalog.arch.head_dim"), spec.head_dim),
        (t("catalog.arch.ffn"), spec.intermediate_size),
        ("MLP", t("catalog.arch.gated") if spec.gated_mlp else t("catalog.arch.plain")),
        (t("catalog.arch.vocab"), spec.vocab_size),
        (
            t("catalog.arch.embeddings"),
            t("catalog.arch.tied") if spec.tie_word_embeddings else t("catalog.arch.untied"),
        ),
        (t("catalog.arch.positions"), spec.position_embedding),
        (
            t("catalog.arch.norm"),
            t("catalog.arch.norm_value", norm=spec.norm, count=spec.norms_per_layer),
        ),
    ]
    if spec.is_moe:
        experts = t(
            "catalog.arch.experts_value",
            experts=spec.num_experts,
            per_token=spec.num_experts_per_token,
            width=spec.moe_intermediate_size,
            layers=spec.num_moe_layers,
        )
        rows.append((t("catalog.arch.experts"), experts))
    if spec.uses_mla:
        latent = t(
            "catalog.arch.mla_value",
            kv_rank=spec.kv_lora_rank,
            q_rank=spec.q_lora_rank or t("word.none"),
        )
        rows.append((t("catalog.arch.attention"), latent))
    for label, value in rows:
        architecture.add_row(label, str(value))
    print_table(architecture)
    breakdown = Table(title=t("catalog.parameters_title"))
    breakdown.add_column(t("col.part"))
    breakdown.add_column(t("col.params"), justify="right", key=True)
    breakdown.add_column(t("col.share"), justify="right", key=True)
    total = spec.total_params
    for part, count in spec.parameter_breakdown().items():
        if count:
            breakdown.add_row(
                t(f"params.{part}"),
                f"{count:,}",
                f"{100 * count / total:.1f}%",
            )
    breakdown.add_row(f"[bold]{t('word.total')}[/bold]", f"[bold]{total:,}[/bold]", "100%")
    if spec.is_moe:
        breakdown.add_row(
            t("catalog.active_per_token"),
            f"{spec.active_params:,}",
            f"{100 * spec.active_params / total:.1f}%",
        )
    print_table(breakdown)
    from gpuplan.cli.estimate_commands import show_warnings
    from gpuplan.notices import config_defaults_notices

    show_warnings(config_defaults_notices(spec))


def list_gpus(json_output: JsonOption = False, wide: WideOption = False) -> None:
    """Every built-in GPU (``services.catalog.gpus``), as JSON or as the catalog's GPU table
    (``report.catalog.gpus_table``)."""
    from gpuplan.jsonable import jsonable
    from gpuplan.services.catalog import gpus

    listing = jsonable(gpus())
    if json_output:
        from gpuplan.cli.output import print_json

        print_json(listing)
        return
    from gpuplan.cli.tables import print_table, rich_table
    from gpuplan.i18n import current_language
    from gpuplan.report.catalog import gpus_table

    print_table(rich_table(gpus_table(listing, current_language())))


def _gpu_rows(gpu: GPUSpec) -> list[tuple[str, str, str]]:
    """(label, value, field) for each spec the terminal view shows; ``field`` keys provenance."""
    from gpuplan.i18n import translate as t
    from gpuplan.units import format_bandwidth, format_bytes, format_flops

    memory = t(
        "gpu.memory_value",
        binary=format_bytes(gpu.memory_bytes),
        decimal=format_bytes(gpu.memory_bytes, binary=False),
        quoted=f"{gpu.memory_quoted} {gpu.memory_type}",
    )
    rows = [(t("col.memory"), memory, "memory_bytes")]
    bandwidth = format_bandwidth(gpu.memory_bandwidth) if gpu.memory_bandwidth else t("gpu.unknown")
    rows.append((t("gpu.memory_bandwidth"), bandwidth, "memory_bandwidth"))
    for dtype, peak in gpu.peak_flops.items():
        rows.append((t("gpu.dense_peak", dtype=dtype), format_flops(peak), f"peak_flops.{dtype}"))
    link = f"{gpu.intra_node_link} {format_bandwidth(gpu.intra_node_bandwidth)}"
    if gpu.intra_node_bandwidth_vendor_bidirectional:
        vendor = format_bandwidth(gpu.intra_node_bandwidth_vendor_bidirectional)
        link += t("gpu.vendor_bidirectional", bandwidth=vendor)
    rows.append((t("gpu.intra_node_link"), link, "intra_node_bandwidth"))
    domain = t("gpu.count", count=gpu.nvlink_domain_size)
    rows.append((t("gpu.nvlink_domain"), domain, "nvlink_domain_size"))
    rows.append((t("gpu.pcie_generation"), str(gpu.pcie_generation), "pcie_generation"))
    rows.append((t("gpu.per_node"), str(gpu.gpus_per_node), "gpus_per_node"))
    if gpu.tdp_watts:
        rows.append(("TDP", f"{gpu.tdp_watts:g} W", "tdp_watts"))
    if gpu.purchase_price_usd:
        price = f"${gpu.purchase_price_usd:,.0f}"
        rows.append((t("gpu.purchase_price"), price, "purchase_price_usd"))
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
        from gpuplan.services.catalog import gpu as gpu_entry

        print_json(gpu_entry(gpu))
        return
    from gpuplan.cli.output import console
    from gpuplan.cli.tables import FitTable as Table
    from gpuplan.cli.tables import print_table
    from gpuplan.i18n import translate

    table = Table(title=f"{gpu.name} ({gpu.id})")
    table.add_column(translate("gpu.spec"))
    table.add_column(translate("col.value"), justify="right")
    table.add_column(translate("gpu.other_source"))
    for label, value, field_name in _gpu_rows(gpu):
        source, observed = gpu.source_of(field_name)
        own = "" if source == gpu.source else f"{source}, {observed}"
        table.add_row(label, value, own)
    print_table(table)
    console.print(
        translate("gpu.source_line", source=gpu.source, observed=gpu.observed), markup=False
    )
    if not gpu.vendor_datasheet:
        console.print(f"[yellow]{translate('gpu.no_datasheet')}[/yellow]")
    if gpu.notes:
        console.print(gpu.notes, markup=False)
    if gpu.speed_model_gap:
        from rich.markup import escape

        console.print(
            f"[yellow]{translate('gpu.speed_not_predicted')}[/yellow] "
            + escape(gpu.speed_model_gap)
        )
    if gpu.no_public_offer:
        gap = gpu.no_public_offer
        console.print(
            translate(
                "gpu.no_offer", reason=gap["reason"], source=gap["source"], observed=gap["observed"]
            ),
            markup=False,
        )
