"""The options every answering command shares: ``--report PATH`` and ``--format md``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from gpuplan.report.document import Report

ReportOption = Annotated[
    Path | None,
    typer.Option(
        "--report",
        help="Also write a self-contained report: HTML with charts, or Markdown for a .md path.",
        dir_okay=False,
    ),
]
ForceOption = Annotated[
    bool,
    typer.Option("--force", help="Replace a report or export file that already exists."),
]
FormatOption = Annotated[
    str,
    typer.Option("--format", help="Terminal output: table (default) or md (Markdown)."),
]


def wants_report(report_path: Path | None, output_format: str) -> bool:
    """Whether a report must be built; rejects unknown formats."""
    from gpuplan.errors import InputError

    if output_format not in ("table", "md"):
        raise InputError.of("error.report_format", value=repr(output_format))
    return report_path is not None or output_format == "md"


def emit_report(
    build: Callable[[str], Report],
    report_path: Path | None,
    output_format: str,
    overwrite: bool = False,
) -> None:
    """Build the report in the current language, write it to ``report_path`` and/or print it
    as Markdown."""
    from gpuplan.i18n import current_language
    from gpuplan.report import render, write_report

    report = build(current_language())
    if output_format == "md":
        print(render(report, "md"), end="")
    if report_path is not None:
        written = write_report(report, report_path, overwrite)
        typer.echo(f"wrote {written}", err=output_format == "md")
