"""The report as data: a title, the answer, and sections of paragraphs, tables and charts.

Builders (``plan``, ``estimate``, ``quote``, ``tco``, ``bench``) fill a :class:`Report`;
renderers (``html``, ``markdown``) turn it into text, and the terminal prints the same
:class:`Table` objects (``cli.tables.rich_table``): one table model for every face. Text here is
plain (not HTML, not Rich markup): the renderers escape it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Paragraph:
    """A line of plain text."""

    text: str


@dataclass(frozen=True)
class Table:
    """Rows of plain-text cells under ``headers``; ``numeric`` columns align right.

    What a narrow face (an 80-column terminal) needs to know: ``key`` columns (a GPU id, a
    count, a duration, an amount) are never cut or wrapped; ``drop`` ranks the columns that may
    be left out to fit, highest rank first; ``breaks`` are the rows that open a new group (a
    rule above them in the terminal). ``title`` heads the table where the face shows one."""

    headers: list[str]
    rows: list[list[str]]
    numeric: frozenset[int] = frozenset()
    key: frozenset[int] = frozenset()
    drop: Mapping[int, int] = field(default_factory=dict)
    breaks: frozenset[int] = frozenset()
    title: str = ""


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
