"""Currency conversion with a dated rate table the user can override.

Rates are stored as the price in the base currency (CNY) of one unit of each other currency,
each with its source and date (``catalog/data/currency.toml``). Converting ``amount`` from ``a``
to ``b`` is ``amount x rate[a] / rate[b]``. Every converted total says its currency and the rate
used, because a quote is only as current as its exchange rate.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any

from gpuplan.errors import InputError
from gpuplan.limits import read_toml_file
from gpuplan.pricing.provenance import Provenance

DOLLAR = "USD"
"""The currency ``--fx CUR=RATE`` prices: RATE units of CUR per US dollar."""


class CurrencyError(InputError):
    """An unknown currency or an unreadable exchange rate."""


@dataclass(frozen=True)
class ExchangeRates:
    """Price in ``base`` of one unit of each currency, with the provenance of each rate."""

    base: str
    per_unit: Mapping[str, Decimal]
    provenance: Mapping[str, Provenance] = field(default_factory=dict)

    @property
    def currencies(self) -> tuple[str, ...]:
        return (self.base, *sorted(self.per_unit))

    def rate(self, currency: str) -> Decimal:
        """Units of the base currency per one unit of ``currency``."""
        if currency == self.base:
            return Decimal(1)
        if currency not in self.per_unit:
            raise CurrencyError.of(
                "error.fx_unknown",
                currency=repr(currency),
                known=", ".join(self.currencies),
                pair=f"{currency}/{self.base}",
                code=currency,
            )
        return self.per_unit[currency]

    def convert(self, amount: Decimal, from_currency: str, to_currency: str) -> Decimal:
        """``amount x rate[from] / rate[to]``; the identity when the currencies agree."""
        if from_currency == to_currency:
            return amount
        return amount * self.rate(from_currency) / self.rate(to_currency)

    def with_override(self, text: str) -> ExchangeRates:
        """Apply ``A/B=X`` (one A costs X B: ``USD/CNY=7.1``, ``EUR/USD=1.08``) or the short
        ``CUR=X`` (one US dollar costs X CUR, the way markets quote the dollar: ``CNY=7.1`` is
        ``USD/CNY=7.1``, ``EUR=0.92`` is ``USD/EUR=0.92``). A new currency is added."""
        pair, sep, value = text.partition("=")
        first, slash, second = pair.strip().upper().partition("/")
        codes = [first, second] if slash else [first]
        if not sep or not all(re.fullmatch(r"[A-Z]{3}", code) for code in codes):
            raise CurrencyError.of("error.fx_form", text=repr(text), dollar=DOLLAR)
        if not slash and first == DOLLAR:
            raise CurrencyError.of("error.fx_dollar", text=repr(text), dollar=DOLLAR)
        try:
            number = Decimal(value.strip())
        except ArithmeticError:
            raise CurrencyError.of(
                "error.fx_number", text=repr(text), value=repr(value.strip())
            ) from None
        if not number.is_finite() or number <= 0:
            raise CurrencyError.of("error.fx_positive", text=repr(text))
        if not slash:
            if first == self.base:
                first, second = DOLLAR, first
            else:
                first, second, number = first, DOLLAR, 1 / number
        if first == second:
            raise CurrencyError.of("error.fx_form", text=repr(text), dollar=DOLLAR)
        today = dt.date.today().isoformat()
        return self.with_pair(
            first, second, number, Provenance("user override: " + text.strip(), today, "exact")
        )

    def with_pair(
        self, currency: str, other: str, price: Decimal, provenance: Provenance
    ) -> ExchangeRates:
        """The table with one ``currency`` costing ``price`` units of ``other`` (one of them
        may be new, the other must be known)."""
        if currency == self.base:
            currency, other, price = other, currency, 1 / price
        per_unit = dict(self.per_unit)
        per_unit[currency] = price * self.rate(other)
        sources = dict(self.provenance)
        sources[currency] = provenance
        return replace(self, per_unit=per_unit, provenance=sources)

    def merged(self, other: ExchangeRates, origin: str) -> ExchangeRates:
        """This table with every rate of ``other`` (a user's rates file) replacing its own;
        ``other``'s base must be a currency this table knows."""
        if other.base not in self.currencies:
            raise CurrencyError.of(
                "error.fx_base",
                origin=origin,
                base=repr(other.base),
                accepted=", ".join(self.currencies),
            )
        rates = self
        for currency, price in other.per_unit.items():
            rates = rates.with_pair(currency, other.base, price, other.provenance[currency])
        return rates

    def with_overrides(self, texts: Iterable[str]) -> ExchangeRates:
        rates = self
        for text in texts:
            rates = rates.with_override(text)
        return rates

    def describe(self, currency: str) -> dict[str, Any]:
        """The rate for ``currency`` with its source and date, for quotes to print."""
        provenance = self.provenance.get(currency)
        return {
            "currency": currency,
            "base": self.base,
            "per_unit": self.rate(currency),
            "source": provenance.source if provenance else "",
            "observed": provenance.observed if provenance else "",
        }


def parse_rates(document: Mapping[str, Any], origin: str) -> ExchangeRates:
    """Exchange rates from a parsed TOML document: ``base`` and ``[[rates]]`` entries, checked
    against the currency schema (``catalog/schema/tables.py``)."""
    from msgspec import UnsetType

    from gpuplan.catalog.schema import decode
    from gpuplan.catalog.schema.tables import CurrencyFile

    table: CurrencyFile = decode(document, "currency", origin, CurrencyError)
    per_unit: dict[str, Decimal] = {}
    provenance: dict[str, Provenance] = {}
    for entry in table.rates:
        where = f"{origin}: rate {entry.currency!r}"
        if entry.currency in per_unit or entry.currency == table.base:
            raise CurrencyError.of("error.fx_twice", field=where)
        if not math.isfinite(entry.per_unit) or entry.per_unit <= 0:
            raise CurrencyError.of("error.fx_finite", field=where, value=repr(entry.per_unit))
        per_unit[entry.currency] = Decimal(repr(entry.per_unit))
        provenance[entry.currency] = Provenance.read(
            entry.source,
            entry.observed,
            where,
            date_quality=None if isinstance(entry.date_quality, UnsetType) else entry.date_quality,
            is_estimate=entry.is_estimate,
        )
    return ExchangeRates(base=table.base, per_unit=per_unit, provenance=provenance)


@cache
def default_rates() -> ExchangeRates:
    """The built-in dated rate table (``catalog/data/currency.toml``)."""
    from gpuplan.catalog import read_catalog_toml

    return parse_rates(read_catalog_toml("currency.toml"), "currency.toml")


def load_rates_file(path: str | Path) -> ExchangeRates:
    """A user's rate table in the same form as ``currency.toml``."""
    return parse_rates(read_toml_file(path, "rates", CurrencyError), str(path))


def build_rates(
    overrides: Iterable[str] = (), rates_file: str | Path | None = None
) -> ExchangeRates:
    """The built-in table, then the rates of a user's file (``--fx-file``, in
    ``currency.toml``'s form), then ``--fx`` overrides (``A/B=X`` or ``CUR=X``), later ones
    winning."""
    rates = default_rates()
    if rates_file is not None:
        rates = rates.merged(load_rates_file(rates_file), str(rates_file))
    return rates.with_overrides(overrides)
