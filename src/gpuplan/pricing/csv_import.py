"""What the catalog importers share: reading a CSV by column name, numbers that name their row
and column when they are wrong, the default date of an undated file, and the result."""

from __future__ import annotations

import csv
import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path

from gpuplan.errors import InputError, Verbatim
from gpuplan.limits import read_text_file, shown
from gpuplan.pricing.offers import Offer
from gpuplan.pricing.validate import Finding


class CsvImportError(InputError):
    """A catalog CSV that cannot be read; the message names the file, row and column."""


@dataclass
class ImportResult:
    """Offers read from one file, what was skipped or flagged on the way, and the rows that
    carry no GPU at all (CPU instances), counted rather than listed."""

    offers: list[Offer] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    rows: int = 0
    rows_without_gpu: int = 0

    def skip(self, label: str, column: str, reason: str, level: str = "warning") -> None:
        self.findings.append(Finding(level, label, column, reason))


@dataclass(frozen=True)
class CsvRow:
    """One data row: its cells by column name and where it is (``FILE: row N``)."""

    cells: dict[str, str]
    line: int
    path: str
    """The file's name as errors show it."""

    @property
    def where(self) -> str:
        return f"{self.path}: row {self.line}"

    def error(
        self, column: str, problem: InputError, error: type[InputError] = CsvImportError
    ) -> InputError:
        """``FILE: row N, column C: PROBLEM``, in the reader's language."""
        return error.of(
            "error.csv_cell", path=self.path, row=self.line, column=Verbatim(column), error=problem
        )

    def text(self, column: str) -> str:
        return (self.cells.get(column) or "").strip()

    def number(self, column: str, error: type[InputError] = CsvImportError) -> Decimal | None:
        """The cell as an exact number, ``None`` when empty; anything else names the row and
        column."""
        text = self.text(column)
        if not text:
            return None
        try:
            value = Decimal(text)
        except InvalidOperation:
            problem = InputError.of("error.cell_number", value=shown(text))
            raise self.error(column, problem, error) from None
        if not value.is_finite():
            problem = InputError.of("error.cell_finite", value=shown(text))
            raise self.error(column, problem, error)
        return value


def read_csv(
    path: Path, what: str, error: type[InputError] = CsvImportError
) -> tuple[list[str], Iterator[CsvRow]]:
    """The header and the data rows of a UTF-8 CSV (a leading byte-order mark is dropped); a
    row with more cells than the header has columns is an error naming the row."""
    text = read_text_file(path, what, error).removeprefix("\ufeff")
    reader = csv.DictReader(text.splitlines())
    header = [name.strip() for name in reader.fieldnames or []]
    reader.fieldnames = header

    def rows() -> Iterator[CsvRow]:
        for cells in reader:
            name = shown(str(path))
            if None in cells:
                raise error.of("error.csv_extra_cells", path=name, row=reader.line_num)
            yield CsvRow({key: value or "" for key, value in cells.items()}, reader.line_num, name)

    return header, rows()


def require_columns(
    path: Path, header: list[str], columns: tuple[str, ...], error: type[InputError]
) -> None:
    missing = [column for column in columns if column not in header]
    if missing:
        if header:
            raise error.of(
                "error.csv_missing_columns",
                path=shown(str(path)),
                missing=", ".join(missing),
                header=", ".join(header),
            )
        raise error.of("error.csv_no_header", path=shown(str(path)), missing=", ".join(missing))


def default_observed(path: Path) -> str:
    """A catalog file carries no date: its modification day as an upper bound,
    ``undated<=YYYY-MM-DD``."""
    modified = dt.datetime.fromtimestamp(path.stat().st_mtime, tz=dt.UTC).date()
    return f"undated<={modified.isoformat()}"


def slug(text: str) -> str:
    """An offer id from free text: lower case, anything but letters, digits, dots and dashes
    becomes a dash."""
    return "".join(
        character if character.isalnum() or character in ".-" else "-" for character in text.lower()
    ).strip("-")
