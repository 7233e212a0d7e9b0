"""Render a :class:`Report` as one self-contained HTML file: inline CSS and SVG, no scripts,
no links to the network; ``@media print`` keeps "Print to PDF" clean."""

from __future__ import annotations

import re
from html import escape

from gpuplan.i18n import translate
from gpuplan.report.document import Block, Chart, Paragraph, Report, Section, Table

STYLE = """
:root { --ink: #1d2330; --muted: #5b6475; --line: #d9dee7; --accent: #3b6ea8; --soft: #f4f6fa; }
* { box-sizing: border-box; }
body { font-family: system-ui, -apple-system, "Segoe UI", "Noto Sans CJK SC", "PingFang SC",
       "Microsoft YaHei", sans-serif; color: var(--ink); margin: 0; line-height: 1.5; }
main { max-width: 1080px; margin: 0 auto; padding: 24px 28px 48px; }
h1 { font-size: 1.7rem; margin: 0.2rem 0 0.4rem; }
h2 { font-size: 1.2rem; margin: 2rem 0 0.6rem; padding-bottom: 4px; border-bottom: 2px solid var(--line); }
.generated { color: var(--muted); font-size: 0.85rem; }
.answer { background: var(--soft); border-left: 5px solid var(--accent); padding: 12px 16px;
          margin: 12px 0 8px; font-size: 1.05rem; }
.answer p { margin: 4px 0; }
.answer h2.answer-title { border: none; margin: 0 0 4px; padding: 0; font-size: 0.8rem;
  text-transform: uppercase; letter-spacing: 0.06em; color: var(--muted); }
.answer h2 + p { font-weight: 600; }
table { border-collapse: collapse; width: 100%; margin: 10px 0; font-size: 0.88rem; }
th, td { border-bottom: 1px solid var(--line); padding: 5px 8px; text-align: left; vertical-align: top; }
th { background: var(--soft); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.nowrap, td.date, td.amount, td.id, td .line { white-space: nowrap; }
td .line { display: block; }
td.source { overflow-wrap: anywhere; min-width: 9em; }
.table-scroll { overflow-x: auto; max-width: 100%; margin: 10px 0; }
.table-scroll > table { margin: 0; }
figure { margin: 12px 0; }
figcaption { color: var(--muted); font-size: 0.85rem; }
svg.chart { max-width: 760px; height: auto; display: block; border: 1px solid var(--line); }
.warning { color: #8a5300; }
td { overflow-wrap: break-word; }
td:not([class]) { min-width: 6.5em; }
@media print {
  @page { size: A4; margin: 14mm; }
  body { font-size: 10pt; }
  main { max-width: none; padding: 0; }
  nav, form, .no-print, .downloads { display: none !important; }
  h2 { break-after: avoid; }
  figure, table, .answer { break-inside: avoid; }
  .answer { background: none; border: 1px solid #999; }
  th { background: none; }
  a { color: inherit; text-decoration: none; }
}
"""


UNBREAKABLE = re.compile(
    r"[-+−~≈]?\s?[¥$€£]?\s?\d[\d,.:/\-]*\s?(万|亿|[kMBT%×x])?"
    r"(\s?(s|h|d|GiB|GB|TB|CNY|USD|EUR))?"
)
"""A cell that is one date, amount or quantity (``2026-08-22``, ``$38.93``, ``¥1.2万``,
``12.5 h``): such a cell never wraps inside (a narrow column would split it mid-number)."""
IDENTIFIER = re.compile(r"(\d+\s?[x×]\s?)?[A-Za-z0-9][\w.\-/+:]{0,39}", re.ASCII)
"""A catalog id, optionally counted (``autodl-h800-80gb-x1``, ``8x h100-sxm-80gb``): never
split at its hyphens."""


SOURCE = re.compile(r"https?://|github:")
"""A cell that cites where a figure comes from (a URL, a repository path): it may break
anywhere, so that a long source never widens the table past the page."""


def cell_class(text: str, numeric: bool) -> str:
    """CSS class of a table cell: ``num`` (right-aligned, no wrap) for numeric columns,
    ``nowrap`` for a cell whose text :data:`UNBREAKABLE` or :data:`IDENTIFIER` matches,
    ``source`` for one that :data:`SOURCE` finds, else none."""
    if numeric:
        return "num"
    whole = text.strip()
    if UNBREAKABLE.fullmatch(whole) or IDENTIFIER.fullmatch(whole):
        return "nowrap"
    return "source" if SOURCE.search(whole) else ""


def _table(table: Table) -> str:
    def cell(tag: str, index: int, text: str) -> str:
        css = cell_class(text, index in table.numeric)
        attribute = f' class="{css}"' if css else ""
        return f"<{tag}{attribute}>{escape(text).replace(chr(10), '<br>')}</{tag}>"

    head = "".join(cell("th", index, text) for index, text in enumerate(table.headers))
    body = "\n".join(
        "<tr>" + "".join(cell("td", index, text) for index, text in enumerate(row)) + "</tr>"
        for row in table.rows
    )
    return (
        f'<div class="table-scroll"><table>\n<thead><tr>{head}</tr></thead>\n'
        f"<tbody>\n{body}\n</tbody>\n</table></div>"
    )


def render_block(block: Block) -> str:
    """One block as HTML. Chart SVG is built by :mod:`gpuplan.report.charts`, which escapes
    its text; everything else is escaped here."""
    if isinstance(block, Paragraph):
        css = ' class="warning"' if block.text.startswith(("warning:", "警告:")) else ""
        return f"<p{css}>{escape(block.text)}</p>"
    if isinstance(block, Table):
        return _table(block)
    if isinstance(block, Chart):
        return f"<figure>\n{block.svg}\n<figcaption>{escape(block.caption)}</figcaption>\n</figure>"
    raise TypeError(f"unknown block {type(block).__name__}")


def render_section(section: Section) -> str:
    anchor = f' id="{escape(section.anchor)}"' if section.anchor else ""
    blocks = "\n".join(render_block(block) for block in section.blocks)
    return f"<section{anchor}>\n<h2>{escape(section.title)}</h2>\n{blocks}\n</section>"


def render_body(report: Report) -> str:
    """The report's content without the page around it (the web app embeds it)."""
    answer = "".join(f"<p>{escape(line)}</p>" for line in report.answer)
    parts = [
        f'<article class="report" data-kind="{escape(report.kind)}">',
        f"<h1>{escape(report.title)}</h1>",
        f'<p class="generated">{escape(report.generated)}</p>',
        f'<div class="answer" id="answer"><h2 class="answer-title">'
        f"{escape(translate('report.answer', report.lang))}</h2>{answer}</div>",
    ]
    parts += [f'<p class="warning">⚠ {escape(text)}</p>' for text in dict.fromkeys(report.warnings)]
    parts += [render_section(section) for section in report.sections]
    parts.append("</article>")
    return "\n".join(parts)


def render_html(report: Report) -> str:
    """A complete, self-contained HTML document."""
    lang = "zh-CN" if report.lang == "zh" else "en"
    return (
        f'<!DOCTYPE html>\n<html lang="{lang}">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(report.title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n"
        f"{render_body(report)}\n</main>\n</body>\n</html>\n"
    )
