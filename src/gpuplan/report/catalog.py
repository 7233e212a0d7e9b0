"""The catalog's tables: models, GPUs and offers, built once from the listings
(``services.catalog``, ``services.pricing.offers``) for the terminal and the web page."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gpuplan.i18n import translate
from gpuplan.report.document import Table


def models_table(models: Sequence[Mapping[str, Any]], lang: str) -> Table:
    """Name, family, exact parameter count, active parameters of a mixture of experts, then
    layers, hidden size, heads/KV heads, vocabulary and context; at 80 columns the family goes
    first, then heads/KV, layers, hidden, context and vocabulary."""
    from gpuplan.units import format_tokens

    columns = (
        *("name", "family", "params", "active", "layers", "hidden", "heads_kv", "vocab"),
        "context",
    )
    rows = [
        [
            model["name"],
            model["family"],
            f"{model['total_params']:,}",
            format_tokens(model["active_params"]) if model["is_moe"] else "",
            str(model["num_layers"]),
            str(model["hidden_size"]),
            f"{model['num_attention_heads']}/{model['num_kv_heads']}",
            str(model["vocab_size"]),
            str(model["max_position_embeddings"] or ""),
        ]
        for model in models
    ]
    return Table(
        [translate(f"catalog.model.{column}", lang) for column in columns],
        rows,
        frozenset(range(2, 9)),
        key=frozenset({0, 2, 3}),
        drop={1: 1, 6: 2, 4: 3, 5: 4, 8: 5, 7: 6},
        title=translate("catalog.models_title", lang),
    )


def _tflops(gpu: Mapping[str, Any], dtype: str) -> str:
    peak = gpu["peak_flops"].get(dtype)
    return f"{peak / 1e12:g}" if peak is not None else "-"


def gpus_table(gpus: Sequence[Mapping[str, Any]], lang: str) -> Table:
    """Id, memory (GiB and as sold), memory bandwidth, dense bf16/fp8/tf32 TFLOP/s, the link
    between GPUs of a node (one way), the date observed, TDP and the source; at 80 columns the
    source goes first, then the date, tf32, the link, the bandwidth, fp8 and TDP."""
    from gpuplan.units import format_bandwidth, format_bytes

    rows = [
        [
            gpu["id"],
            f"{format_bytes(gpu['memory_bytes'])} ({gpu['memory_quoted']})",
            format_bandwidth(gpu["memory_bandwidth_bytes_per_second"])
            if gpu["memory_bandwidth_bytes_per_second"]
            else "-",
            _tflops(gpu, "bf16"),
            _tflops(gpu, "fp8"),
            _tflops(gpu, "tf32"),
            f"{gpu['intra_node_link']} "
            f"{format_bandwidth(gpu['intra_node_bandwidth_bytes_per_second'])}",
            gpu["observed"],
            f"{gpu['tdp_watts']:g} W" if gpu["tdp_watts"] else "-",
            gpu["source"],
        ]
        for gpu in gpus
    ]
    headers = [
        "id",
        translate("col.memory", lang),
        "HBM/GDDR",
        "bf16",
        "fp8",
        "tf32",
        translate("catalog.gpu.link", lang),
        translate("col.observed", lang),
        "TDP",
        translate("col.source", lang),
    ]
    return Table(
        headers,
        rows,
        frozenset({1, 2, 3, 4, 5, 8}),
        key=frozenset({0, 3}),
        drop={8: 1, 4: 2, 2: 3, 6: 4, 5: 5, 7: 6, 9: 7},
        title=translate("catalog.gpus_title", lang),
    )


def offer_plan_text(offer: Mapping[str, Any], plan: Mapping[str, Any], lang: str) -> str:
    """``hourly: $2.71/GPU/1h ($2.71/GPU-h, 0.68x median)``: a plan's price as listed, its price
    per GPU-hour in USD, its ratio to the catalog's median for the GPU, and whether it is an
    estimate."""
    from gpuplan.i18n import format_money
    from gpuplan.terms import billing_name, term
    from gpuplan.units import format_duration

    notes = [f"${plan['per_gpu_hour_usd']:.2f}/GPU-h"]
    if plan["vs_catalog_median"] is not None:
        notes.append(translate("offers.vs_median", lang, ratio=f"{plan['vs_catalog_median']:.2f}"))
    if plan["is_estimate"]:
        notes.append(translate("offers.estimate", lang))
    separator = translate("machine.separator", lang)
    price = format_money(plan["price"], offer["currency"], lang)
    period = format_duration(plan["price_period_seconds"])
    return (
        f"{billing_name(plan['name'], lang)}: {price}/{term('per', plan['per'], lang)}/{period} "
        f"({separator.join(notes)})"
    )


def offer_machine_text(offer: Mapping[str, Any], lang: str) -> str:
    """What the offer's instance is, and from how many instances a cluster offer sells."""
    from gpuplan.hardware.topology import machine_summary

    text = (
        machine_summary(offer["topology"], lang)
        if offer["topology"]
        else translate("offers.no_topology", lang)
    )
    if offer["min_instances"] > 1:
        text += translate("offers.min_instances", lang, count=offer["min_instances"])
    return text


def offers_table(offers: Sequence[Mapping[str, Any]], lang: str) -> Table:
    """Each offer: its id, its GPUs, the provider and machine with one line per billing plan,
    and the dates its prices were observed (left out first at 80 columns)."""
    rows = [
        [
            offer["id"],
            f"{offer['gpus']} x {offer['gpu']}",
            "\n".join(
                [
                    f"{offer['provider']}: {offer_machine_text(offer, lang)}",
                    *(offer_plan_text(offer, plan, lang) for plan in offer["plans"]),
                ]
            ),
            "\n".join(sorted({plan["observed"] for plan in offer["plans"]})),
        ]
        for offer in offers
    ]
    headers = [
        "id",
        translate("col.gpus", lang),
        translate("offers.provider_machine_plans", lang),
        translate("col.observed", lang),
    ]
    return Table(
        headers,
        rows,
        key=frozenset({0, 1}),
        drop={3: 1},
        title=translate("offers.title", lang),
    )
