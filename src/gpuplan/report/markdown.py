"""Render a :class:`Report` as Markdown for issues and wikis: the tables carry the charts' data.

A report's text is plain text, and some of it is the user's (a model's name, an offer's notes),
so every string is escaped: CommonMark lets any ASCII punctuation be backslash-escaped
(spec 0.31, section 2.4), which keeps ``<script>`` a literal, not an HTML block, and a ``[link]``
or ``*emphasis*`` in a name as typed."""

from __future__ import annotations

import re

from gpuplan.i18n import translate
from gpuplan.report.document import Block, Chart, Paragraph, Report, Table

INLINE_MARKUP = re.compile(r"([\\`*_\[\]<>|&~])")
"""Characters that start inline markup, raw HTML or an entity, or end a table cell."""
LINE_START_MARKUP = re.compile(r"^(\s*)(#|>|[-+=](?=\s|$)|\d+[.)](?=\s|$))")
"""A heading, quote, list item or setext underline when it opens a line."""


def _inline(text: str) -> str:
    """``text`` on one line with every inline-markup character escaped (a table cell)."""
    return INLINE_MARKUP.sub(r"\\\1", " ".join(text.splitlines()))


def plain_markdown(text: str) -> str:
    """``text`` as a Markdown line that renders as the same characters."""

    def escaped(match: re.Match[str]) -> str:
        marker = match[2]
        return match[1] + marker[:-1] + "\\" + marker[-1]

    return LINE_START_MARKUP.sub(escaped, _inline(text), count=1)


def markdown_table(table: Table, markup: bool = False) -> str:
    """A GitHub-flavoured pipe table; numeric columns right-aligned. Cells are plain text
    unless ``markup`` says they are Markdown written by gpuplan itself (then only ``|`` and
    line breaks are escaped)."""
    cell = (lambda text: text.replace("|", "\\|").replace("\n", " ")) if markup else _inline
    head = "| " + " | ".join(cell(text) for text in table.headers) + " |"
    rule = (
        "|"
        + "|".join(
            "---:" if index in table.numeric else "---" for index in range(len(table.headers))
        )
        + "|"
    )
    rows = ["| " + " | ".join(cell(text) for text in row) + " |" for row in table.rows]
    return "\n".join([head, rule, *rows])


def _block(block: Block, lang: str) -> str:
    if isinstance(block, Paragraph):
        return plain_markdown(block.text)
    if isinstance(block, Table):
        return markdown_table(block)
    if isinstance(block, Chart):
        return f"*{plain_markdown(block.caption)} {translate('report.markdown_chart_note', lang)}*"
    raise TypeError(f"unknown block {type(block).__name__}")


def render_markdown(report: Report) -> str:
    """The whole report as Markdown text."""
    parts = [f"# {plain_markdown(report.title)}", f"_{plain_markdown(report.generated)}_", ""]
    parts += [f"> {plain_markdown(line)}  " for line in report.answer]
    parts += [f"\n⚠ {plain_markdown(text)}" for text in dict.fromkeys(report.warnings)]
    for section in report.sections:
        parts.append(f"\n## {plain_markdown(section.title)}\n")
        parts.append("\n\n".join(_block(block, report.lang) for block in section.blocks))
    return "\n".join(parts) + "\n"
