"""Tables that fit the terminal: key columns are never cut, optional columns give way.

A :class:`FitTable` is a Rich table whose columns are of three kinds:

- *key* columns (a GPU id, a count, a duration, an amount, an offer or model id) are never
  wrapped or cut: their width is fixed at their widest cell or their header, measured in
  terminal cells (``rich.cells.cell_len``, two per CJK character);
- *optional* columns carry a drop rank; while the table's narrowest rendering is wider than the
  console, the column of the highest rank goes first, and a line under the table names what
  was left out;
- the other columns wrap at spaces, each at least as wide as its longest word, sharing the
  spare width in proportion to how much wider they would like to be. Every column folds
  rather than ellipsizes: Rich 15 puts "…" on a wrapped line of CJK text that ends exactly at
  the column's edge (its trailing space is counted in characters, not cells), where folding
  only drops that space.

:func:`rich_table` makes one from a report's :class:`gpuplan.report.document.Table`, so that the
terminal shows the cells the report and the web page show. ``print_table(table, wide)`` prints it at the console's width (80 cells when piped, or
``COLUMNS``), or, with ``--wide``, with every column at its natural width whatever the terminal.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.measure import Measurement
from rich.table import Column, Table
from rich.text import Text

if TYPE_CHECKING:
    from gpuplan.report.document import Table as DocumentTable

_wide = False


def set_wide(value: bool) -> bool:
    """The ``--wide`` option's callback: every table the command prints is shown at full width."""
    global _wide
    _wide = bool(value)
    return value


WideOption = Annotated[
    bool,
    typer.Option(
        "--wide",
        help="Show every column at full width, however wide the terminal.",
        callback=set_wide,
    ),
]


class FitTable(Table):
    """A Rich table with key and optional columns (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if kwargs.get("show_header", True):
            kwargs.setdefault("box", box.SIMPLE_HEAD)
            kwargs.setdefault("show_edge", False)
            kwargs.setdefault("padding", (0, 1, 0, 0))
        super().__init__(*args, **kwargs)
        self.key_columns: set[int] = set()
        self.drop_ranks: dict[int, int] = {}

    def add_column(  # type: ignore[override]
        self, header: str = "", *, key: bool = False, drop: int | None = None, **kwargs: Any
    ) -> None:
        """A column; ``key``: never cut; ``drop``: left out to fit, highest rank first."""
        index = len(self.columns)
        kwargs.setdefault("overflow", "fold")
        if key:
            kwargs.setdefault("no_wrap", True)
            self.key_columns.add(index)
        if drop is not None:
            self.drop_ranks[index] = drop
        super().add_column(header, **kwargs)

    def fitted(self, console: Console, width: int) -> tuple[Table, list[str]]:
        """This table with key columns at their widest cell, optional columns dropped until it
        fits ``width``, and the wrapping columns' widths shared out (see :func:`_share_widths`);
        also the headers of the dropped columns."""
        columns = list(self.columns)
        for index in self.key_columns:
            column = columns[index]
            column.width = max(
                _header_width(column.header),
                max((_widest_line(cell) for cell in column.cells), default=0),
            )
        dropped: list[str] = []
        ranked = sorted(self.drop_ranks, key=lambda index: -self.drop_ranks[index])
        kept = list(range(len(columns)))
        table = self._with_columns(columns, kept)
        for index in ranked:
            if _required_width(console, table) <= width:
                break
            kept.remove(index)
            dropped.append(str(columns[index].header))
            table = self._with_columns(columns, kept)
        _share_widths(console, table, width)
        return table, dropped

    def _with_columns(self, columns: list[Column], kept: list[int]) -> Table:
        """A shallow copy of this table holding only the columns ``kept``."""
        table = Table.__new__(Table)
        table.__dict__.update(self.__dict__)
        table.columns = [columns[index] for index in kept]
        for position, column in enumerate(table.columns):
            column._index = position
        return table


def rich_table(
    table: DocumentTable,
    styles: Mapping[int, Callable[[str], str]] | None = None,
    **options: Any,
) -> FitTable:
    """``table`` (plain text, the report's) as a :class:`FitTable`: its numeric columns right-
    aligned, its key columns never cut, its drop ranks kept, a rule above each of its breaks and
    its title on top. ``styles`` gives a column's cells a Rich style by their text (a verdict in
    its colour); ``options`` are Rich's (``leading``, ``title_justify``, ...)."""
    from rich.markup import escape

    styles = styles or {}

    def cell(index: int, text: str) -> Text | str:
        style = styles[index](text) if index in styles else ""
        return Text(text, style=style) if style else escape(text)

    if table.title:
        options.setdefault("title", escape(table.title))
    rich = FitTable(**options)
    for index, header in enumerate(table.headers):
        rich.add_column(
            escape(header),
            justify="right" if index in table.numeric else "left",
            key=index in table.key,
            drop=table.drop.get(index),
        )
    for position, row in enumerate(table.rows):
        if position in table.breaks:
            rich.add_section()
        rich.add_row(*(cell(index, text) for index, text in enumerate(row)))
    return rich


def _header_width(header: Any) -> int:
    """A key column's header in cells: it stays on one line, as its cells do."""
    return cell_len(Text.from_markup(str(header)).plain)


def _widest_line(cell: Any) -> int:
    """The widest line of a cell in terminal cells (markup and styles not counted)."""
    text = cell.plain if isinstance(cell, Text) else Text.from_markup(str(cell)).plain
    return max((cell_len(line) for line in text.splitlines()), default=0)


UNBOUNDED = 10_000
"""A width no table reaches: Rich clamps a measurement to the width it is measured at."""


def _measure(console: Console, table: Table) -> Measurement:
    return Measurement.get(console, console.options.update_width(UNBOUNDED), table)


def _column_ranges(console: Console, table: Table) -> list[tuple[int, int, bool]]:
    """(least, natural width, whether it wraps) of each column, padding included."""
    options = console.options.update_width(UNBOUNDED)
    ranges = []
    for column in table.columns:
        measured = table._measure_column(console, options, column)
        wraps = column.width is None and not column.no_wrap
        ranges.append((measured.minimum, measured.maximum, wraps))
    return ranges


def _required_width(console: Console, table: Table) -> int:
    """The least width at which ``table`` shows every word whole: the columns that do not wrap
    at their natural width, the others at their longest word."""
    ranges = _column_ranges(console, table)
    return table._extra_width + sum(least if wraps else most for least, most, wraps in ranges)


def _share_widths(console: Console, table: Table, width: int) -> None:
    """Fix the width of each wrapping column of a table too wide for ``width``: its longest
    word plus a share of the spare width in proportion to how much wider it would like to be.

    Rich's own collapse narrows the widest wrapping column first, below its longest word when
    several wrap; this never does."""
    ranges = _column_ranges(console, table)
    if table._extra_width + sum(most for _, most, _ in ranges) <= width:
        return
    spare = width - _required_width(console, table)
    wrapping = [index for index, (_, _, wraps) in enumerate(ranges) if wraps]
    if spare < 0 or not wrapping:
        return
    growth = {index: ranges[index][1] - ranges[index][0] for index in wrapping}
    total = sum(growth.values()) or 1
    shares = {index: spare * growth[index] // total for index in wrapping}
    shares[wrapping[-1]] += spare - sum(shares.values())
    for index in wrapping:
        padding = table._get_padding_width(index)
        table.columns[index].width = ranges[index][0] + shares[index] - padding


def natural_width(console: Console, table: Table) -> int:
    """The width at which ``table`` shows every cell on as few lines as its content allows."""
    return _measure(console, table).maximum


def print_table(table: Table, wide: bool | None = None, console: Console | None = None) -> None:
    """Print ``table`` to fit the console (see the module docstring), or at full width with
    ``wide`` (by default: whether the command was given ``--wide``)."""
    from gpuplan.cli.output import console as default_console
    from gpuplan.i18n import translate

    console = console or default_console
    if wide is None:
        wide = _wide
    if wide:
        width = max(console.width, natural_width(console, table))
        _at_width(console, width).print(table, crop=False)
        return
    dropped: list[str] = []
    if isinstance(table, FitTable):
        table, dropped = table.fitted(console, console.width)
    console.print(table)
    if dropped:
        console.print(
            translate("table.dropped", columns=", ".join(dropped)),
            markup=False,
            style="dim",
        )


def _at_width(console: Console, width: int) -> Console:
    """A console writing where ``console`` writes, as it does, but ``width`` cells wide
    (``Console.print`` never renders wider than its console)."""
    return Console(
        file=console.file,
        width=width,
        color_system=console.color_system,  # type: ignore[arg-type]
        force_terminal=console.is_terminal,
        no_color=console.no_color,
        highlight=False,
    )
