"""Buy versus rent: the seed article's table, financing, power, residual value, break-even."""

from __future__ import annotations

import tomllib
from decimal import Decimal
from pathlib import Path

import pytest

from gpuplan.pricing.tco import TCOError, compare, load_tco_file, parse_tco

SEED = Path(__file__).resolve().parents[2] / "examples" / "seed-tco.toml"


def test_seed_article_three_year_table_is_reproduced():
    result = compare(load_tco_file(SEED))
    assert result["currency"] == "CNY"
    assert result["buy_total"] == Decimal("9840000")
    assert result["rent_total"] == Decimal("3841200")
    assert round(result["buy_total"] / 10_000) == 984
    assert round(result["rent_total"] / 10_000) == 384
    assert [row["year"] for row in result["table"]] == [0, 1, 2, 3]
    assert result["table"][1]["buy_cumulative"] == Decimal("6480000")
    assert result["break_even_utilization"] is None


def _inputs(**changes: str) -> dict:
    text = """
[tco]
currency = "USD"
years = 3
utilization = 0.7
[buy]
gpus = 240000
servers = 85000
cost_of_capital = 0.0
residual_share = 0.3
[operations]
colocation = 24480
[power]
gpu_tdp_watts = 700
gpus_per_node = 8
nodes = 1
host_watts_per_node = 4600
pue = 1.2
price_per_kwh = 0.08
[rent]
monthly = 10000
"""
    document = tomllib.loads(text)
    for dotted, value in changes.items():
        table, key = dotted.split("__")
        document[table][key] = tomllib.loads(f"v = {value}")["v"]
    return document


def test_power_residual_and_break_even():
    result = compare(parse_tco(_inputs(), "t"))
    power = Decimal("10.2") * Decimal("1.2") * 8760 * Decimal("0.7") * Decimal("0.08")
    assert float(result["buy"]["operations_per_year"]["power"]) == pytest.approx(float(power))
    assert result["buy"]["residual_value"] == Decimal(325000) * Decimal("0.3")
    expected = Decimal(325000) + 3 * (Decimal(24480) + power) - Decimal(97500)
    assert float(result["buy_total"]) == pytest.approx(float(expected))
    assert result["rent_total"] == 360000
    assert result["break_even_month"] is not None
    assert 0 < result["break_even_utilization"] < 1


def test_cost_of_capital_adds_capital_recovery_interest():
    result = compare(parse_tco(_inputs(buy__cost_of_capital="0.1"), "t"))
    capex = Decimal(325000)
    growth = Decimal("1.1") ** 3
    interest = capex * Decimal("0.1") * growth / (growth - 1) * 3 - capex
    assert float(result["buy"]["financing_interest"]) == pytest.approx(float(interest))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"tco__years": "0"}, "tco.years"),
        ({"tco__currency": '"GBP"'}, "tco.currency"),
        ({"buy__gpus": "-5"}, "buy.gpus"),
        ({"buy__gpu": "5"}, "buy.gpu: unknown field"),
    ],
)
def test_bad_inputs_name_the_field(change, message):
    with pytest.raises(TCOError, match=message):
        parse_tco(_inputs(**change), "t")


def test_malformed_toml(tmp_path):
    path = tmp_path / "tco.toml"
    path.write_text("[tco\n")
    with pytest.raises(TCOError, match="malformed TOML"):
        load_tco_file(path)


def test_a_cost_of_capital_too_small_to_compound_adds_no_interest():
    from decimal import Decimal

    from gpuplan.pricing.tco import _capital_recovery_interest

    assert _capital_recovery_interest(Decimal(4_800_000), Decimal("1e-300"), 3) == 0
    assert _capital_recovery_interest(Decimal(100), Decimal("0.1"), 2) > 0
