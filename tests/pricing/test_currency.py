"""Dated exchange rates, conversion both ways, and user overrides."""

from __future__ import annotations

from decimal import Decimal

import pytest

from gpuplan.pricing.currency import CurrencyError, build_rates, default_rates
from gpuplan.pricing.quote import quote

from .helpers import offer_from


def test_default_table_is_dated_and_sourced():
    rates = default_rates()
    assert rates.base == "CNY"
    for currency in ("USD", "EUR"):
        described = rates.describe(currency)
        assert described["source"] and described["observed"]


def test_conversion_round_trips():
    rates = default_rates()
    amount = Decimal("123.45")
    there = rates.convert(amount, "USD", "EUR")
    assert float(rates.convert(there, "EUR", "USD")) == pytest.approx(float(amount))
    assert rates.convert(Decimal(1), "USD", "CNY") == rates.rate("USD")


def test_overrides_in_either_direction():
    rates = build_rates(["USD/CNY=7.2"])
    assert rates.convert(Decimal(1), "USD", "CNY") == Decimal("7.2")
    rates = build_rates(["CNY/USD=0.125"])
    assert rates.convert(Decimal(1), "USD", "CNY") == Decimal(8)
    rates = build_rates(["USD/CNY=7", "EUR/USD=1.5"])
    assert rates.convert(Decimal(1), "EUR", "CNY") == Decimal("10.5")


@pytest.mark.parametrize("text", ["USD=7", "USD/CNY=abc", "USD/CNY=-1"])
def test_bad_overrides_are_input_errors(text: str):
    with pytest.raises(CurrencyError):
        build_rates([text])


def test_quote_converted_total_says_its_currency_and_rate():
    offer = offer_from(['mode = "hourly", price = 10, per = "instance"'])
    rates = build_rates(["USD/CNY=7"])
    data = quote(offer, 3600, rates=rates).to_dict("CNY", rates)
    assert data["currency"] == "CNY"
    assert data["total"] == 70
    assert data["exchange_rate"]["rate"] == 7
    assert all(line["currency"] == "CNY" for line in data["lines"])
