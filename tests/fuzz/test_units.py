"""Fuzzed unit strings: every parser returns a finite value in its range or raises a UnitError
naming what it expected; a huge exponent never becomes a huge message."""

from __future__ import annotations

import math
from decimal import Decimal

import pytest
from hypothesis import given

from gpuplan import units
from gpuplan.errors import InputError

from .bounds import bounded, fuzz_settings
from .strategies import unit_strings

pytestmark = pytest.mark.fuzz

PARSERS = {
    "tokens": units.parse_tokens,
    "duration": units.parse_duration,
    "bytes": units.parse_bytes,
    "bandwidth": units.parse_bandwidth,
    "flops": units.parse_flops,
}


@pytest.mark.parametrize("kind", list(PARSERS))
@fuzz_settings(share=0.5)
@given(text=unit_strings)
def test_a_fuzzed_quantity_is_finite_or_refused(kind, text):
    value = bounded(lambda: PARSERS[kind](text))
    if not isinstance(value, InputError):
        assert math.isfinite(value) and value >= 0


@fuzz_settings()
@given(text=unit_strings)
def test_a_fuzzed_amount_of_money_is_finite_or_refused(text):
    money = bounded(lambda: units.parse_amount(text))
    if not isinstance(money, InputError):
        assert money.amount.is_finite() and abs(money.amount) <= Decimal(10) ** 15
        assert units.format_money(money.amount, money.currency)
