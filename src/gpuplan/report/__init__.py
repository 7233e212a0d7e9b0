"""Reports: the same answers as the terminal, as self-contained HTML (inline SVG charts) and
Markdown, in English or Chinese.

``build_report(kind, ...)`` returns a :class:`~gpuplan.report.document.Report`;
:func:`~gpuplan.report.html.render_html` and :func:`~gpuplan.report.markdown.render_markdown`
turn it into text; :func:`write_report` picks by the file's suffix.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpuplan.report.document import Report


def render(report: Report, form: str) -> str:
    """``form`` is ``html`` or ``md``."""
    if form == "md":
        from gpuplan.report.markdown import render_markdown

        return render_markdown(report)
    from gpuplan.report.html import render_html

    return render_html(report)


def write_report(report: Report, path: str | Path, overwrite: bool = False) -> Path:
    """Write HTML, or Markdown when the path ends in ``.md`` (atomically, ``writing.py``)."""
    from gpuplan.writing import write_atomically

    target = Path(path)
    form = "md" if target.suffix.lower() in (".md", ".markdown") else "html"
    return write_atomically(target, render(report, form), overwrite=overwrite)
