"""Currency conversion with a dated rate table the user can override.

Rates are stored as the price in the base currency (CNY) of one unit of each other currency,
each with its source and date (``catalog/data/currency.toml``). Converting ``amount`` from ``a``
to ``b`` is ``amount x rate[a] / rate[b]``. Every converted total says its currency and the rate
used, because a quote is only as current as its exchange rate.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any

from gpuplan.errors import InputError
from gpuplan.limits import read_toml_file
from gpuplan.pricing.provenance import Provenance


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
            raise CurrencyError(
                f"no exchange rate for {currency!r}; known: {', '.join(self.currencies)} "
                f"(add one with --fx {currency}/{self.base}=RATE)"
            )
        return self.per_unit[currency]

    def convert(self, amount: Decimal, from_currency: str, to_currency: str) -> Decimal:
        """``amount x rate[from] / rate[to]``; the identity when the currencies agree."""
        if from_currency == to_currency:
            return amount
        return amount * self.rate(from_currency) / self.rate(to_currency)

    def with_override(self, text: str) -> ExchangeRates:
        """Apply ``A/B=X`` (one A costs X B), e.g. ``USD/CNY=7.1`` or ``EUR/USD=1.08``."""
        pair, sep, value = text.partition("=")
        first, slash, second = pair.strip().upper().partition("/")
        if not sep or not slash or not first or not second:
            raise CurrencyError(f"exchange rate {text!r}: expected A/B=RATE, e.g. USD/CNY=7.1")
        try:
            number = Decimal(value.strip())
        except ArithmeticError:
            raise CurrencyError(
                f"exchange rate {text!r}: {value.strip()!r} is not a number"
            ) from None
        if not number.is_finite() or number <= 0:
            raise CurrencyError(f"exchange rate {text!r}: the rate must be positive")
        if first == self.base:
            first, second, number = second, first, 1 / number
        per_unit = dict(self.per_unit)
        per_unit[first] = number * self.rate(second)
        provenance = dict(self.provenance)
        today = dt.date.today().isoformat()
        provenance[first] = Provenance("user override: " + text.strip(), today, "exact")
        return replace(self, per_unit=per_unit, provenance=provenance)

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
    """Exchange rates from a parsed TOML document: ``base`` and ``[[rates]]`` entries."""
    base = str(document.get("base", "")).upper()
    if not base:
        raise CurrencyError(f"{origin}: missing 'base'")
    per_unit: dict[str, Decimal] = {}
    provenance: dict[str, Provenance] = {}
    for index, entry in enumerate(document.get("rates", [])):
        where = f"{origin}: rates[{index}]"
        currency = str(entry.get("currency", "")).upper()
        if not currency:
            raise CurrencyError(f"{where}: missing 'currency'")
        try:
            value = Decimal(str(entry["per_unit"]))
        except (KeyError, ArithmeticError):
            raise CurrencyError(f"{where}: 'per_unit' must be a number") from None
        if not value.is_finite() or value <= 0:
            raise CurrencyError(f"{where}: 'per_unit' must be positive")
        per_unit[currency] = value
        provenance[currency] = Provenance.from_fields(dict(entry), where)
    return ExchangeRates(base=base, per_unit=per_unit, provenance=provenance)


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
    """The built-in table (or a user's file), then ``A/B=X`` overrides."""
    rates = load_rates_file(rates_file) if rates_file is not None else default_rates()
    return rates.with_overrides(overrides)
