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


def test_a_rate_per_dollar_in_the_short_form():
    rates = build_rates(["CNY=7.1"])
    assert rates.convert(Decimal(1), "USD", "CNY") == Decimal("7.1")
    assert rates.describe("USD")["source"] == "user override: CNY=7.1"
    rates = build_rates(["CNY=7", "EUR=0.5"])
    assert rates.convert(Decimal(1), "EUR", "CNY") == Decimal(14)
    rates = build_rates(["GBP=0.8"])
    assert rates.convert(Decimal(8), "GBP", "USD") == Decimal(10)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("USD=7", "CUR=RATE prices the dollar"),
        ("USD/CNY=abc", "'abc' is not a number"),
        ("USD/CNY=-1", "must be positive"),
        ("7.1", "expected A/B=RATE"),
        ("yuan=7.1", "expected A/B=RATE"),
        ("CNY/CNY=1", "expected A/B=RATE"),
    ],
)
def test_bad_overrides_are_input_errors(text: str, message: str):
    with pytest.raises(CurrencyError, match=message):
        build_rates([text])


RATES_FILE = """base = "USD"
[[rates]]
currency = "CNY"
per_unit = {per_unit}
source = "my bank"
observed = "{observed}"
"""


def test_a_rates_file_replaces_the_rates_it_gives_and_keeps_the_others(tmp_path):
    path = tmp_path / "rates.toml"
    path.write_text(RATES_FILE.format(per_unit=0.125, observed="2026-11-01"))
    rates = build_rates(rates_file=path)
    assert rates.convert(Decimal(1), "USD", "CNY") == Decimal(8)
    assert rates.describe("USD")["source"] == "my bank"
    assert rates.rate("EUR") == default_rates().rate("EUR")
    assert build_rates(["CNY=7"], path).convert(Decimal(1), "USD", "CNY") == Decimal(7)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("per_unit = 0.125", "per_unti = 0.125"), r"rate 'CNY': per_unti: unknown key"),
        (("per_unit = 0.125", 'per_unit = "0.125"'), r"rate 'CNY': per_unit: expected units"),
        (('observed = "2026-11-01"', 'observed = "2999-01-01"'), r"observed '2999-01-01' is in"),
        (('base = "USD"', 'base = "GBP"'), r"base: 'GBP' is not one of"),
    ],
)
def test_a_bad_rates_file_names_file_entry_and_key(tmp_path, change, message):
    path = tmp_path / "rates.toml"
    path.write_text(RATES_FILE.format(per_unit=0.125, observed="2026-11-01").replace(*change))
    with pytest.raises(CurrencyError, match=message) as error:
        build_rates(rates_file=path)
    assert str(error.value).startswith(str(path))


def test_quote_converted_total_says_its_currency_and_rate():
    offer = offer_from(['mode = "hourly", price = 10, per = "instance"'])
    rates = build_rates(["USD/CNY=7"])
    data = quote(offer, 3600, rates=rates).to_dict("CNY", rates)
    assert data["currency"] == "CNY"
    assert data["total"] == 70
    assert data["exchange_rate"]["rate"] == 7
    assert all(line["currency"] == "CNY" for line in data["lines"])
