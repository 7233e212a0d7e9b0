"""Render a :class:`Report` as Markdown for issues and wikis: the tables carry the charts' data."""

from __future__ import annotations

from gpuplan.i18n import translate
from gpuplan.report.document import Block, Chart, Paragraph, Report, Table


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_table(table: Table) -> str:
    """A GitHub-flavoured pipe table; numeric columns right-aligned."""
    head = "| " + " | ".join(_cell(text) for text in table.headers) + " |"
    rule = (
        "|"
        + "|".join(
            "---:" if index in table.numeric else "---" for index in range(len(table.headers))
        )
        + "|"
    )
    rows = ["| " + " | ".join(_cell(text) for text in row) + " |" for row in table.rows]
    return "\n".join([head, rule, *rows])


def _block(block: Block, lang: str) -> str:
    if isinstance(block, Paragraph):
        return block.text
    if isinstance(block, Table):
        return markdown_table(block)
    if isinstance(block, Chart):
        return f"*{block.caption} {translate('report.markdown_chart_note', lang)}*"
    raise TypeError(f"unknown block {type(block).__name__}")


def render_markdown(report: Report) -> str:
    """The whole report as Markdown text."""
    parts = [f"# {report.title}", f"_{report.generated}_", ""]
    parts += [f"> {line}  " for line in report.answer]
    parts += [f"\n⚠ {text}" for text in dict.fromkeys(report.warnings)]
    for section in report.sections:
        parts.append(f"\n## {section.title}\n")
        parts.append("\n\n".join(_block(block, report.lang) for block in section.blocks))
    return "\n".join(parts) + "\n"
