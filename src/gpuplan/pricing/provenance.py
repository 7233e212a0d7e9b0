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
from collections.abc import Iterable
from dataclasses import dataclass

from gpuplan.errors import InputError

DATE_QUALITIES = ("exact", "month", "quarter", "year", "inferred-range", "undated")
STALE_AFTER_DAYS = 90
"""A plan whose price is older than this many days says so (notice ``stale_price``)."""


class ProvenanceError(InputError):
    """A price whose source or observed date is missing or unreadable."""


def _month_end(year: int, month: int) -> dt.date:
    return dt.date(year, month, calendar.monthrange(year, month)[1])


def _latest_of_point(text: str) -> tuple[dt.date, str] | None:
    """The latest day a single date form can mean, and the form's quality."""
    text = text.strip()
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        return dt.date.fromisoformat(text), "exact"
    match = re.fullmatch(r"(\d{4})-(\d{2})", text)
    if match:
        return _month_end(int(match.group(1)), int(match.group(2))), "month"
    match = re.fullmatch(r"(\d{4})-Q([1-4])", text)
    if match:
        return _month_end(int(match.group(1)), 3 * int(match.group(2))), "quarter"
    match = re.fullmatch(r"(\d{4})(?:\s*\((?:early|mid|late)\))?", text)
    if match:
        return dt.date(int(match.group(1)), 12, 31), "year"
    return None


def parse_observed(observed: str) -> tuple[dt.date, str]:
    """Return ``(latest possible date, date quality)`` for an ``observed`` string.

    Raises :class:`ProvenanceError` when the text is none of the accepted forms.
    """
    text = str(observed).strip()
    accepted = "YYYY-MM-DD, YYYY-MM, YYYY-QN, 'YYYY (mid)', YYYY-MM/YYYY-MM or undated<=YYYY-MM-DD"
    try:
        if text.startswith("undated<="):
            point = _latest_of_point(text.removeprefix("undated<="))
            if point is not None:
                return point[0], "undated"
        elif "/" in text:
            _, _, upper = text.partition("/")
            point = _latest_of_point(upper)
            if point is not None and _latest_of_point(text.partition("/")[0]) is not None:
                return point[0], "inferred-range"
        else:
            point = _latest_of_point(text)
            if point is not None:
                return point
    except ValueError:
        pass
    raise ProvenanceError(f"cannot read observed date {observed!r}; accepted forms: {accepted}")


@dataclass(frozen=True)
class Provenance:
    """The source of one price and when it was observed."""

    source: str
    observed: str
    date_quality: str
    is_estimate: bool = False

    @classmethod
    def from_fields(cls, fields: dict[str, object], where: str) -> Provenance:
        """Read ``source``, ``observed``, optional ``date_quality`` and ``is_estimate``."""
        source = str(fields.get("source") or "").strip()
        observed = str(fields.get("observed") or "").strip()
        if not source:
            raise ProvenanceError(f"{where}: missing 'source'")
        if not observed:
            raise ProvenanceError(f"{where}: missing 'observed' date")
        try:
            _, quality = parse_observed(observed)
        except ProvenanceError as error:
            raise ProvenanceError(f"{where}: {error}") from None
        stated = fields.get("date_quality")
        if stated is not None and stated != quality:
            raise ProvenanceError(
                f"{where}: date_quality {stated!r} does not match observed {observed!r} ({quality})"
            )
        is_estimate = fields.get("is_estimate", False)
        if not isinstance(is_estimate, bool):
            raise ProvenanceError(f"{where}: 'is_estimate' must be true or false")
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
