"""Parsing and formatting of the quantities users type: tokens, durations, sizes, rates, money."""

from __future__ import annotations

import math
from collections.abc import Callable
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuplan.errors import InputError
from gpuplan.units import (
    GB,
    SECONDS_PER_DAY,
    SECONDS_PER_HOUR,
    SECONDS_PER_MONTH,
    GiB,
    Rate,
    UnitError,
    format_bandwidth,
    format_bytes,
    format_duration,
    format_flops,
    format_money,
    format_tokens,
    parse_amount,
    parse_bandwidth,
    parse_bytes,
    parse_duration,
    parse_flops,
    parse_money,
    parse_tokens,
)

FOUR_DIGITS = 5e-4
"""Formatting keeps 4 significant digits, so a round trip is exact to half a unit in the 4th."""


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("20B", 20_000_000_000),
        ("1.5T", 1_500_000_000_000),
        ("300M", 300_000_000),
        ("15e12", 15_000_000_000_000),
        ("4096", 4096),
        ("4K", 4000),
        ("2,048", 2048),
        ("20B tokens", 20_000_000_000),
    ],
)
def test_parse_tokens(text: str, tokens: int) -> None:
    assert parse_tokens(text) == tokens


def test_format_tokens_uses_the_largest_suffix() -> None:
    assert format_tokens(1.5e12) == "1.5T"
    assert format_tokens(20e9) == "20B"
    assert format_tokens(999) == "999"


@given(st.integers(min_value=0, max_value=10**16))
def test_tokens_round_trip(count: int) -> None:
    assert parse_tokens(format_tokens(count)) == pytest.approx(count, rel=FOUR_DIGITS, abs=0.5)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90m", 5400.0),
        ("12h", 12 * SECONDS_PER_HOUR),
        ("30d", 30 * SECONDS_PER_DAY),
        ("6w", 42 * SECONDS_PER_DAY),
        ("3mo", 3 * SECONDS_PER_MONTH),
        ("1y", 365 * SECONDS_PER_DAY),
        ("1d12h", 36 * SECONDS_PER_HOUR),
        ("45", 45.0),
    ],
)
def test_parse_duration(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


def test_a_month_is_thirty_days() -> None:
    assert parse_duration("1mo") == 30 * SECONDS_PER_DAY


@given(st.floats(min_value=0.001, max_value=1e10, allow_nan=False))
def test_duration_round_trip(seconds: float) -> None:
    assert parse_duration(format_duration(seconds)) == pytest.approx(seconds, rel=FOUR_DIGITS)


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("80GB", 80 * GB),
        ("80GiB", 80 * GiB),
        ("80 GiB", 85_899_345_920),
        ("141GiB", 141 * 2**30),
        ("1.5TiB", int(1.5 * 2**40)),
        ("512", 512),
        ("512B", 512),
        ("24G", 24 * GB),
    ],
)
def test_parse_bytes_keeps_gb_and_gib_apart(text: str, size: int) -> None:
    assert parse_bytes(text) == size


def test_format_bytes_is_always_labelled() -> None:
    assert format_bytes(80 * GiB) == "80.0 GiB"
    assert format_bytes(80 * GiB, binary=False) == "85.9 GB"
    assert format_bytes(512) == "512 B"


@given(
    st.integers(min_value=1024, max_value=2**60),
    st.booleans(),
)
def test_bytes_round_trip(size: int, binary: bool) -> None:
    text = format_bytes(size, binary=binary, digits=3)
    assert parse_bytes(text) == pytest.approx(size, rel=1e-3)


@pytest.mark.parametrize(
    ("text", "bytes_per_second"),
    [
        ("400Gbps", 50e9),
        ("400Gb/s", 50e9),
        ("400 Gbit/s", 50e9),
        ("50GB/s", 50e9),
        ("50 GBps", 50e9),
        ("25GiB/s", 25 * 2**30),
    ],
)
def test_parse_bandwidth_divides_bits_by_eight(text: str, bytes_per_second: float) -> None:
    assert parse_bandwidth(text) == bytes_per_second


def test_format_bandwidth_in_bytes_or_bits() -> None:
    assert format_bandwidth(50e9) == "50 GB/s"
    assert format_bandwidth(50e9, bits=True) == "400 Gb/s"


@given(st.floats(min_value=1.0, max_value=1e15), st.booleans())
def test_bandwidth_round_trip(rate: float, bits: bool) -> None:
    text = format_bandwidth(rate, bits=bits)
    assert parse_bandwidth(text) == pytest.approx(rate, rel=FOUR_DIGITS)


@pytest.mark.parametrize(
    ("text", "flops"),
    [
        ("989 TFLOPS", 989e12),
        ("989TFLOP/s", 989e12),
        ("1.98 PFLOP/s", 1.98e15),
        ("312e12 FLOPS", 312e12),
    ],
)
def test_parse_flops(text: str, flops: float) -> None:
    assert parse_flops(text) == pytest.approx(flops)


def test_format_flops() -> None:
    assert format_flops(989e12) == "989 TFLOP/s"


@given(st.floats(min_value=1.0, max_value=1e20))
def test_flops_round_trip(flops: float) -> None:
    assert parse_flops(format_flops(flops)) == pytest.approx(flops, rel=FOUR_DIGITS)


@pytest.mark.parametrize(
    ("text", "amount", "currency", "period"),
    [
        ("¥1.86/h", "1.86", "CNY", SECONDS_PER_HOUR),
        ("￥1.86/h", "1.86", "CNY", SECONDS_PER_HOUR),
        ("1.86 CNY/hour", "1.86", "CNY", SECONDS_PER_HOUR),
        ("$2.49/hr", "2.49", "USD", SECONDS_PER_HOUR),
        ("2.49 USD per hour", "2.49", "USD", SECONDS_PER_HOUR),
        ("27600 CNY/month", "27600", "CNY", SECONDS_PER_MONTH),
        ("¥27,600/month", "27600", "CNY", SECONDS_PER_MONTH),
        ("€3/day", "3", "EUR", SECONDS_PER_DAY),
        ("$5", "5", "USD", None),
    ],
)
def test_parse_money(text: str, amount: str, currency: str, period: float | None) -> None:
    rate = parse_money(text)
    assert rate == Rate(Decimal(amount), currency, period)


def test_money_amounts_are_exact_decimals() -> None:
    rate = parse_money("¥1.86/h")
    assert isinstance(rate.amount, Decimal)
    assert rate.per_second() == Decimal("1.86") / Decimal("3600.0")
    assert parse_amount("¥2000").amount == Decimal("2000")


def test_format_money() -> None:
    assert format_money(Decimal("1100"), "CNY") == "¥1,100.00"
    assert format_money(Decimal("2.49"), "USD") == "$2.49"
    assert str(parse_money("27600 CNY/month")) == "¥27,600.00/month"


def test_per_second_prices_keep_their_digits() -> None:
    assert str(parse_money("$0.000694/s")) == "$0.000694/s"


@given(
    st.decimals(min_value=0, max_value=10**7, places=6, allow_nan=False, allow_infinity=False),
    st.sampled_from(["CNY", "USD", "EUR"]),
    st.sampled_from(["s", "min", "h", "day", "week", "month", "year", None]),
)
def test_money_round_trip(amount: Decimal, currency: str, period: str | None) -> None:
    text = format_money(amount, currency, digits=6) + (f"/{period}" if period else "")
    rate = parse_money(text)
    assert rate.amount == amount
    assert rate.currency == currency
    assert parse_money(str(rate)) == rate


REJECTED = [
    (parse_tokens, "20X"),
    (parse_tokens, "-5B"),
    (parse_tokens, "many"),
    (parse_duration, "3 fortnights"),
    (parse_duration, "soon"),
    (parse_bytes, "80 GBs"),
    (parse_bytes, "-1GB"),
    (parse_bandwidth, "400"),
    (parse_bandwidth, "400 Gfoo"),
    (parse_flops, "989 TOPS"),
    (parse_money, "1.86/h"),
    (parse_money, "¥1.86 USD/h"),
    (parse_money, "$5/fortnight"),
    (parse_money, "5 GBP"),
    (parse_amount, "¥1.86/h"),
]


@pytest.mark.parametrize(("parse", "text"), REJECTED)
def test_rejections_name_the_accepted_forms(parse: Callable[[str], object], text: str) -> None:
    with pytest.raises(UnitError, match="accepted forms") as caught:
        parse(text)
    assert isinstance(caught.value, InputError)
    assert repr(text) in str(caught.value)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("value", [math.inf, math.nan, -1.0, True])
def test_numbers_must_be_finite_and_non_negative(value: float) -> None:
    for parse in (parse_tokens, parse_duration, parse_bytes, parse_bandwidth, parse_flops):
        with pytest.raises(UnitError):
            parse(value)
