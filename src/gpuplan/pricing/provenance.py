"""Where a price comes from and how sure we are of its date.

Sources often carry no exact date. ``observed`` keeps what the source says, in one of the forms
used by the catalog research (shared/references/pricing-and-catalogs.md, "How to read the dates"):

=========================  =================  ==============================================
``observed``               ``date_quality``   meaning
=========================  =================  ==============================================
``2026-11-09``             ``exact``          the source states the day the price was read
``2026-07``                ``month``          only the month is known
``2024-Q4``                ``quarter``        only the quarter is known
``2026 (mid)``             ``year``           only the year (or "mid-2026") is known
``2024-12/2025-06``        ``inferred-range`` a range inferred from known price events
``undated<=2026-11-30``    ``undated``        a copy with no date; only the upper bound is known
=========================  =================  ==============================================

Staleness is judged on the latest date the observation could have: if even that is older than
the limit, the price is stale whatever the true date was. A plan shows the age of the oldest
price it pays (:func:`oldest_price`) and is flagged past :data:`STALE_AFTER_DAYS`; an undated
price's age is only a lower bound (days since the copy's date), so it is flagged as undated.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal, get_args

from gpuplan.errors import InputError

DateQuality = Literal["exact", "month", "quarter", "year", "inferred-range", "undated"]
DATE_QUALITIES: tuple[str, ...] = get_args(DateQuality)

_DAY = r"\d{4}-\d{2}-\d{2}"
_MONTH = r"\d{4}-\d{2}"
_QUARTER = r"\d{4}-Q[1-4]"
_YEAR = r"\d{4}(?:\s*\((?:early|mid|late)\))?"
_POINT = f"(?:{_DAY}|{_MONTH}|{_QUARTER}|{_YEAR})"
OBSERVED_PATTERN = rf"^\s*(?:{_POINT}|{_POINT}/{_POINT}|undated<={_POINT})\s*$"
"""Every accepted ``observed`` form (the table above), as one regular expression: the catalog
schemas publish it so that an editor flags an unreadable date."""
OBSERVED_FORMS = (
    "YYYY-MM-DD, YYYY-MM, YYYY-QN, 'YYYY (mid)', YYYY-MM/YYYY-MM or undated<=YYYY-MM-DD"
)
FUTURE_SLACK_DAYS = 1
"""An observation may be dated up to one day after the local date: a price read in UTC+8 is
dated a day ahead of a clock in the Americas."""
STALE_AFTER_DAYS = 90
"""A plan whose price is older than this many days says so (notice ``stale_price``)."""


class ProvenanceError(InputError):
    """A price whose source or observed date is missing or unreadable."""


def _month_end(year: int, month: int) -> dt.date:
    return dt.date(year, month, calendar.monthrange(year, month)[1])


def _span_of_point(text: str) -> tuple[dt.date, dt.date, str] | None:
    """The earliest and latest day a single date form can mean, and the form's quality."""
    text = text.strip()
    if re.fullmatch(_DAY, text):
        day = dt.date.fromisoformat(text)
        return day, day, "exact"
    match = re.fullmatch(r"(\d{4})-(\d{2})", text)
    if match:
        year, month = int(match.group(1)), int(match.group(2))
        return dt.date(year, month, 1), _month_end(year, month), "month"
    match = re.fullmatch(r"(\d{4})-Q([1-4])", text)
    if match:
        year, quarter = int(match.group(1)), int(match.group(2))
        return dt.date(year, 3 * quarter - 2, 1), _month_end(year, 3 * quarter), "quarter"
    match = re.fullmatch(r"(\d{4})(?:\s*\((?:early|mid|late)\))?", text)
    if match:
        year = int(match.group(1))
        return dt.date(year, 1, 1), dt.date(year, 12, 31), "year"
    return None


@lru_cache(maxsize=4096)
def observed_span(observed: str) -> tuple[dt.date | None, dt.date, str]:
    """``(earliest possible date, latest possible date, date quality)`` of an ``observed``
    string; the earliest is None for an undated copy (only its upper bound is known).

    Raises :class:`ProvenanceError` when the text is none of the accepted forms.
    """
    text = str(observed).strip()
    try:
        if text.startswith("undated<="):
            point = _span_of_point(text.removeprefix("undated<="))
            if point is not None:
                return None, point[1], "undated"
        elif "/" in text:
            lower_text, _, upper_text = text.partition("/")
            lower, upper = _span_of_point(lower_text), _span_of_point(upper_text)
            if lower is not None and upper is not None:
                return lower[0], upper[1], "inferred-range"
        else:
            point = _span_of_point(text)
            if point is not None:
                return point
    except ValueError:
        pass
    raise ProvenanceError.of("error.observed_form", value=repr(observed), accepted=OBSERVED_FORMS)


def parse_observed(observed: str) -> tuple[dt.date, str]:
    """Return ``(latest possible date, date quality)`` for an ``observed`` string.

    Raises :class:`ProvenanceError` when the text is none of the accepted forms.
    """
    _, latest, quality = observed_span(observed)
    return latest, quality


def check_not_future(observed: str, where: object, today: dt.date | None = None) -> None:
    """Refuse an observation whose earliest possible date is after ``today`` (plus
    :data:`FUTURE_SLACK_DAYS`): nobody has read that price yet. ``where`` names the field
    (a string, or a phrase in the reader's language)."""
    earliest, _, _ = observed_span(observed)
    today = today or dt.date.today()
    if earliest is not None and (earliest - today).days > FUTURE_SLACK_DAYS:
        raise ProvenanceError.of(
            "error.observed_future", field=where, value=repr(observed), today=today.isoformat()
        )


@dataclass(frozen=True)
class Provenance:
    """The source of one price and when it was observed."""

    source: str
    observed: str
    date_quality: str
    is_estimate: bool = False

    @classmethod
    def from_fields(cls, fields: Mapping[str, object], where: str) -> Provenance:
        """Read ``source``, ``observed``, optional ``date_quality`` and ``is_estimate``."""
        is_estimate = fields.get("is_estimate", False)
        if not isinstance(is_estimate, bool):
            raise ProvenanceError.of("error.is_estimate", field=where)
        stated = fields.get("date_quality")
        return cls.read(
            str(fields.get("source") or ""),
            str(fields.get("observed") or ""),
            where,
            date_quality=None if stated is None else str(stated),
            is_estimate=is_estimate,
        )

    @classmethod
    def read(
        cls,
        source: str,
        observed: str,
        where: str,
        date_quality: str | None = None,
        is_estimate: bool = False,
    ) -> Provenance:
        """A provenance whose ``observed`` date is readable, not in the future, and of the
        ``date_quality`` stated (when stated); ``where`` names the entry in errors."""
        source, observed = source.strip(), observed.strip()
        if not source:
            raise ProvenanceError.of("error.missing_source", field=where)
        if not observed:
            raise ProvenanceError.of("error.missing_observed", field=where)
        try:
            _, quality = parse_observed(observed)
        except ProvenanceError as error:
            raise ProvenanceError.of(
                "error.in_field", field=f"{where}.observed", error=error
            ) from None
        check_not_future(observed, f"{where}.observed")
        if date_quality is not None and date_quality != quality:
            raise ProvenanceError.of(
                "error.date_quality",
                field=where,
                value=repr(date_quality),
                observed=repr(observed),
                quality=quality,
            )
        return cls(source=source, observed=observed, date_quality=quality, is_estimate=is_estimate)

    @property
    def latest_date(self) -> dt.date:
        return parse_observed(self.observed)[0]

    def age_days(self, today: dt.date) -> int:
        """Days from the latest possible observation date to ``today``."""
        return (today - self.latest_date).days

    def to_dict(self) -> dict[str, object]:
        return {
            "source": self.source,
            "observed": self.observed,
            "date_quality": self.date_quality,
            "is_estimate": self.is_estimate,
        }


@dataclass(frozen=True)
class PriceAge:
    """How old the price behind a plan is: ``days`` from the latest possible observation date of
    its oldest price to today, and that price's provenance."""

    days: int
    provenance: Provenance

    @property
    def stale(self) -> bool:
        return self.days > STALE_AFTER_DAYS

    @property
    def undated(self) -> bool:
        return self.provenance.date_quality == "undated"

    def to_dict(self) -> dict[str, object]:
        return {
            "price_age_days": self.days,
            "price_observed": self.provenance.observed,
            "price_date_quality": self.provenance.date_quality,
            "price_source": self.provenance.source,
        }


def oldest_price(provenances: Iterable[Provenance], today: dt.date) -> PriceAge | None:
    """The oldest of ``provenances`` as of ``today`` (``None`` for none): a plan is as fresh as
    the stalest price it pays."""
    ages = [PriceAge(provenance.age_days(today), provenance) for provenance in provenances]
    return max(ages, key=lambda age: age.days, default=None)
