"""The benchmark report: each measured figure against the spec sheet and a reference."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from gpuplan.i18n import translate
from gpuplan.report import charts
from gpuplan.report.assumptions import assumptions_section
from gpuplan.report.common import generated_line
from gpuplan.report.document import Chart, Paragraph, Report, Section, Table


def format_figure(value: float | None, unit: str) -> str:
    """A measured, spec or reference value in its unit (``989 TFLOP/s``, ``3.35 TB/s``)."""
    from gpuplan.units import format_bandwidth, format_bytes, format_flops

    if value is None:
        return "—"
    formatters: dict[str, Callable[[float], str]] = {
        "FLOP/s": format_flops,
        "bytes/s": format_bandwidth,
        "bytes": format_bytes,
        "ratio": lambda number: f"{number:.2%}",
        "tokens/s": lambda number: f"{number:,.0f} tok/s",
    }
    return formatters.get(unit, lambda number: f"{number:g}")(value)


def format_ratio(value: float | None) -> str:
    """A share of the spec or the reference, ``93.1%``."""
    return "—" if value is None else f"{value:.1%}"


def figures_table(run: Mapping[str, Any], lang: str) -> Table:
    """Each figure: measured, the spec sheet's value and the share of it, the reference and the
    share of it, and the verdict. At 80 columns the reference's share goes first, then the
    reference."""
    rows = [
        [
            figure["label"],
            format_figure(figure.get("measured"), figure["unit"]),
            format_figure(figure.get("spec"), figure["unit"]),
            format_ratio(figure.get("spec_ratio")),
            format_figure(figure.get("reference"), figure["unit"]),
            format_ratio(figure.get("reference_ratio")),
            figure["verdict"],
        ]
        for figure in run.get("figures", [])
    ]
    columns = ("figure", "measured", "spec", "ratio", "reference", "ratio_reference", "verdict")
    headers = [translate(f"bench.col.{column}", lang) for column in columns]
    return Table(
        headers,
        rows,
        frozenset({1, 2, 3, 4, 5}),
        key=frozenset({1, 6}),
        drop={4: 2, 5: 1},
    )


def measurements_section(run: Mapping[str, Any], lang: str) -> Section:
    """Measured against spec, as bars (share of spec) and as a table with verdicts."""
    figures = run.get("figures", [])
    ratios = [
        (figure["label"], 100 * figure["spec_ratio"])
        for figure in figures
        if figure.get("spec_ratio")
    ]
    blocks: list[Any] = []
    if ratios:
        svg = charts.horizontal_bars(
            translate("report.measurements", lang),
            ratios,
            "% " + translate("col.reference", lang) + " (spec = 100)",
            value_format=lambda value: f"{value:.0f}%",
        )
        blocks.append(Chart(svg, translate("report.measurements", lang)))
    blocks.append(figures_table(run, lang))
    blocks += [
        Paragraph(f"{figure['verdict']} {figure['label']}: {figure.get('reason', '')}")
        for figure in figures
        if figure["verdict"] in ("WARN", "FAIL", "SKIPPED")
    ]
    return Section(translate("report.measurements", lang), blocks, anchor="measurements")


def build_bench_report(run: Mapping[str, Any], lang: str) -> Report:
    """The whole benchmark report for one stored run."""
    header = run.get("provenance", {})
    figures = run.get("figures", [])
    answer = translate(
        "report.answer.bench",
        lang,
        id=run.get("id", "-"),
        host=header.get("hostname", "-"),
        passed=sum(figure["verdict"] == "PASS" for figure in figures),
        total=len(figures),
    )
    gpus = [run["gpu_id"]] if run.get("gpu_id") else []
    environment = Table(
        [translate("col.field", lang), translate("col.value", lang)],
        [
            [key, str(header.get(key, ""))]
            for key in (
                "date",
                "hostname",
                "device",
                "driver_version",
                "cuda_version",
                "torch_version",
                "command",
            )
        ],
    )
    sections = [
        Section(translate("report.scenario", lang), [environment], anchor="environment"),
        measurements_section(run, lang),
        assumptions_section(lang, gpus=gpus, speed=False),
    ]
    return Report(
        "bench",
        translate("report.title.bench", lang),
        lang,
        [answer, f"overall: {run.get('worst_verdict', '-')}"],
        sections,
        generated=generated_line(lang),
    )
