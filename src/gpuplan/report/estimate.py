"""The estimate report: memory per GPU part by part and the step-time breakdown."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpuplan.i18n import format_share, translate
from gpuplan.report import charts
from gpuplan.report.assumptions import assumptions_section
from gpuplan.report.common import generated_line, layout_text, scenario_section, warnings_section
from gpuplan.report.document import Chart, Paragraph, Report, Section, Table
from gpuplan.report.interval import interval_line, run_length_text, throughput_text

MEMORY_TOTALS = (
    ("memory.allocated", "allocated_bytes"),
    ("memory.reserved", "reserved_bytes"),
    ("memory.peak", "peak_bytes"),
    ("memory.capacity", "capacity_bytes"),
)


def memory_table(result: Mapping[str, Any], lang: str, title: str = "") -> Table:
    """Each memory part per GPU, then the allocated, reserved and peak totals and the capacity,
    in GiB (2^30 bytes) and GB (1e9 bytes)."""
    memory = result["memory"]
    rows = [
        [translate(f"part.{name}", lang), f"{value / 2**30:.2f}", f"{value / 1e9:.2f}"]
        for name, value in memory["parts"].items()
    ]
    totals = len(rows)
    rows += [
        [translate(key, lang), f"{memory[field] / 2**30:.2f}", f"{memory[field] / 1e9:.2f}"]
        for key, field in MEMORY_TOTALS
    ]
    headers = [translate("col.part", lang), "GiB", "GB"]
    numbers = frozenset({1, 2})
    return Table(headers, rows, numbers, key=numbers, breaks=frozenset({totals}), title=title)


def memory_section(result: Mapping[str, Any], lang: str) -> Section:
    """Stacked bar of the memory parts against the usable capacity, and the same as a table."""
    memory = result["memory"]
    hardware = result["hardware"]
    usable = memory["capacity_bytes"] * (1 - memory.get("safety_margin", 0.0))
    parts = [
        (translate(f"part.{name}", lang), value / 2**30) for name, value in memory["parts"].items()
    ]
    title = translate(
        "memory.title",
        lang,
        model=result["model"]["name"],
        count=hardware["count"],
        gpu=hardware["gpu"],
    )
    svg = charts.stacked_bar(
        title,
        parts,
        translate("axis.memory_gib", lang),
        limit=usable / 2**30,
        limit_label=translate("chart.usable", lang, value=f"{usable / 2**30:.1f}"),
        value_format=lambda value: f"{value:.2f} GiB",
    )
    fits_key = "memory.fits" if memory["fits"] else "memory.does_not_fit"
    verdict = translate(
        fits_key,
        lang,
        peak=f"{memory['peak_bytes'] / 2**30:.1f}",
        usable=f"{usable / 2**30:.1f}",
        margin=format_share(memory.get("safety_margin", 0.0)),
        short=f"{(memory['peak_bytes'] - usable) / 2**30:.1f}",
    )
    return Section(
        translate("report.memory", lang),
        [
            Paragraph(verdict),
            Chart(svg, translate("report.memory_caption", lang)),
            memory_table(result, lang),
        ],
        anchor="memory",
    )


def step_parts(result: Mapping[str, Any], lang: str) -> list[tuple[str, float]]:
    """The step-time parts worth showing (over 0.05 % of the step), named in ``lang``."""
    throughput = result["throughput"]
    step = throughput["step_seconds"]
    return [
        (translate(f"step.{name}", lang), seconds)
        for name, seconds in throughput["breakdown"].items()
        if seconds > 0.0005 * step
    ]


def step_table(result: Mapping[str, Any], lang: str, title: str = "") -> Table:
    """Each step-time part in seconds and as a share of the step."""
    step = result["throughput"]["step_seconds"]
    rows = [
        [label, f"{seconds:.3f}", format_share(seconds / step, 1)]
        for label, seconds in step_parts(result, lang)
    ]
    headers = [
        translate("col.part", lang),
        translate("col.seconds", lang),
        translate("col.share", lang),
    ]
    numbers = frozenset({1, 2})
    return Table(headers, rows, numbers, key=numbers, title=title)


def step_section(result: Mapping[str, Any], lang: str) -> Section:
    """Horizontal bars of the step-time parts and the throughput line."""
    throughput = result["throughput"]
    step = throughput["step_seconds"]
    items = step_parts(result, lang)
    title = translate("step.title", lang, seconds=f"{step:.3f}")
    svg = charts.horizontal_bars(
        title, items, translate("axis.seconds", lang), value_format=lambda value: f"{value:.3f} s"
    )
    line = translate(
        "speed.throughput",
        lang,
        tokens=throughput_text(throughput),
        per_gpu=f"{throughput['tokens_per_second_per_gpu']:,.0f}",
        tflops=f"{throughput['model_flops_per_second_per_gpu'] / 1e12:.0f}",
        mfu=format_share(throughput["mfu"], 1),
        hfu=format_share(throughput["hfu"], 1),
        dtype=throughput["matmul_dtype"],
    )
    return Section(
        translate("report.step_time", lang),
        [
            Paragraph(line),
            Paragraph(interval_line(result.get("interval"), lang)),
            Chart(svg, translate("report.step_caption", lang)),
            step_table(result, lang),
        ],
        anchor="step-time",
    )


def estimate_answer(result: Mapping[str, Any], lang: str) -> str:
    """One sentence: fits or not, speed and days."""
    memory, hardware, throughput = result["memory"], result["hardware"], result["throughput"]
    days = result["duration"]["days"]
    values = {
        "model": result["model"]["name"],
        "count": hardware["count"],
        "gpu": hardware["gpu"],
        "fit_word": translate("word.fits" if memory["fits"] else "word.does_not_fit", lang),
        "peak": f"{memory['peak_bytes'] / 2**30:.1f}",
        "tokens_per_s": throughput_text(throughput),
        "mfu": format_share(throughput["mfu"], 1),
        "days": run_length_text(result["duration"], lang),
    }
    key = "report.answer.estimate" if days is not None else "report.answer.estimate_nodays"
    return translate(key, lang, **values)


def build_estimate_report(
    result: Mapping[str, Any], lang: str, scenario: Mapping[str, Any] | None = None
) -> Report:
    """The whole estimate report."""
    sections = []
    if scenario:
        sections.append(scenario_section(scenario, None, lang))
    sections += [memory_section(result, lang), step_section(result, lang)]
    warnings = warnings_section(list(result.get("warnings", [])), lang)
    if warnings:
        sections.append(warnings)
    sections.append(assumptions_section(lang, gpus=[result["hardware"]["gpu"]]))
    answer = [estimate_answer(result, lang), layout_text(result["strategy"], lang)]
    return Report(
        "estimate",
        translate("report.title.estimate", lang),
        lang,
        answer,
        sections,
        generated=generated_line(lang),
    )
