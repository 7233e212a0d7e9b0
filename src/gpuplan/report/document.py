"""The report as data: a title, the answer, and sections of paragraphs, tables and charts.

Builders (``plan``, ``estimate``, ``quote``, ``tco``, ``bench``) fill a :class:`Report`;
renderers (``html``, ``markdown``) turn it into text. Text here is plain (not HTML): the
renderers escape it.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Paragraph:
    """A line of plain text."""

    text: str


@dataclass(frozen=True)
class Table:
    """Rows of plain-text cells under ``headers``; ``numeric`` columns align right."""

    headers: list[str]
    rows: list[list[str]]
    numeric: frozenset[int] = frozenset()


@dataclass(frozen=True)
class Chart:
    """An SVG chart (already built) and a caption that says what it shows."""

    svg: str
    caption: str


Block = Paragraph | Table | Chart


@dataclass
class Section:
    """A titled part of the report."""

    title: str
    blocks: list[Block] = field(default_factory=list)
    anchor: str = ""


@dataclass
class Report:
    """A whole report in one language."""

    kind: str
    title: str
    lang: str
    answer: list[str]
    sections: list[Section] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    generated: str = ""

    def charts(self) -> list[Chart]:
        return [
            block
            for section in self.sections
            for block in section.blocks
            if isinstance(block, Chart)
        ]
