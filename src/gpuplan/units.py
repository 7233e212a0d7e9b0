"""Parse and format the quantities users type and read.

Internally gpuplan works in base units only: tokens, seconds, bytes, bytes per second,
FLOP/s, and money as ``decimal.Decimal`` with an ISO currency code. This module is the edge:
it turns "20B", "30d", "80GB", "400Gbps", "989 TFLOPS" and "¥1.86/h" into base units, and
base units back into text.

Decimal (SI) and binary (IEC) prefixes are kept apart: ``80GB`` is 80e9 bytes, ``80GiB`` is
80 * 2**30 bytes. Bandwidths in bits (``400Gbps``, ``400Gb/s``) are divided by 8.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from gpuplan.errors import InputError
from gpuplan.limits import shown
from gpuplan.messages import ENGLISH

SECONDS_PER_MINUTE = 60.0
SECONDS_PER_HOUR = 3600.0
SECONDS_PER_DAY = 86400.0
SECONDS_PER_WEEK = 7 * SECONDS_PER_DAY
SECONDS_PER_MONTH = 30 * SECONDS_PER_DAY
"""A month is 30 days: the length rental platforms sell as a monthly package."""
SECONDS_PER_YEAR = 365 * SECONDS_PER_DAY

GB = 10**9
GiB = 2**30

_DECIMAL_PREFIX = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}
_BINARY_PREFIX = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50}

_NUMBER = r"([-+]?(?:\d+(?:[.,_]\d+)*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)"


SMALLEST_AMOUNT = Decimal("1e-12")
LARGEST_AMOUNT = Decimal("1e15")
"""A price or a budget other than zero lies between these in size: a trillionth of a unit (per-second
prices run to 1e-6) and a quadrillion."""


class UnitError(InputError):
    """A quantity that could not be parsed; the message names the accepted forms."""


def _to_float(text: str) -> float:
    """The number in ``text`` ("1,000.5", "2_000"); a malformed one ("1.5.5") is a UnitError."""
    try:
        return float(text.replace(",", "").replace("_", ""))
    except ValueError:
        raise UnitError.of("error.unit_number", value=shown(text)) from None


def _fail(kind: str, value: object, accepted: str) -> UnitError:
    return UnitError.of("error.unit", value=shown(value), kind=kind, accepted=accepted)


def _match(pattern: str, value: str) -> re.Match[str] | None:
    return re.fullmatch(pattern, value.strip())


def _finite_non_negative(number: float, kind: str, value: object, accepted: str) -> float:
    if not math.isfinite(number) or number < 0:
        raise _fail(kind, value, accepted)
    return number


# --- token counts -----------------------------------------------------------------------

_TOKEN_FORMS = ENGLISH["unit_forms.tokens"]
_TOKEN_SUFFIX = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9, "G": 1e9, "T": 1e12}


def parse_tokens(value: str | float | int) -> int:
    """Parse a token count: ``20B`` -> 20_000_000_000, ``1.5T``, ``300M``, ``15e12``."""
    if isinstance(value, bool):
        raise _fail("a token count", value, _TOKEN_FORMS)
    if isinstance(value, int | float):
        return round(_finite_non_negative(float(value), "a token count", value, _TOKEN_FORMS))
    match = _match(_NUMBER + r"\s*([kKMBGT]?)(?:\s*tokens?)?", str(value))
    if match is None:
        raise _fail("a token count", value, _TOKEN_FORMS)
    number = _to_float(match.group(1)) * _TOKEN_SUFFIX[match.group(2)]
    return round(_finite_non_negative(number, "a token count", value, _TOKEN_FORMS))


def format_tokens(count: float) -> str:
    """Format a token count with the largest suffix that keeps it >= 1: ``1.5T``."""
    for suffix, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(count) >= scale:
            return f"{_trim(count / scale)}{suffix}"
    return _trim(count)


# --- durations ----------------------------------------------------------------------------

_DURATION_FORMS = ENGLISH["unit_forms.duration"]
_DURATION_UNIT = {
    "s": 1.0,
    "sec": 1.0,
    "second": 1.0,
    "seconds": 1.0,
    "m": SECONDS_PER_MINUTE,
    "min": SECONDS_PER_MINUTE,
    "minute": SECONDS_PER_MINUTE,
    "minutes": SECONDS_PER_MINUTE,
    "h": SECONDS_PER_HOUR,
    "hr": SECONDS_PER_HOUR,
    "hrs": SECONDS_PER_HOUR,
    "hour": SECONDS_PER_HOUR,
    "hours": SECONDS_PER_HOUR,
    "d": SECONDS_PER_DAY,
    "day": SECONDS_PER_DAY,
    "days": SECONDS_PER_DAY,
    "w": SECONDS_PER_WEEK,
    "wk": SECONDS_PER_WEEK,
    "week": SECONDS_PER_WEEK,
    "weeks": SECONDS_PER_WEEK,
    "mo": SECONDS_PER_MONTH,
    "month": SECONDS_PER_MONTH,
    "months": SECONDS_PER_MONTH,
    "y": SECONDS_PER_YEAR,
    "yr": SECONDS_PER_YEAR,
    "year": SECONDS_PER_YEAR,
    "years": SECONDS_PER_YEAR,
}
DURATION_FORMS = _DURATION_FORMS
DURATION_PATTERN = (
    r"^\s*(?:\d+(?:\.\d+)?\s*(?:"
    + "|".join(sorted(_DURATION_UNIT, key=len, reverse=True))
    + r")?\s*)+$"
)
"""The written durations :func:`parse_duration` reads (one or more number-and-unit parts, a
bare number is seconds), as one regular expression for the catalog schemas."""


def parse_duration(value: str | float | int) -> float:
    """Parse a duration to seconds: ``90m``, ``12h``, ``30d``, ``6w``, ``3mo`` (30 days), ``1y``.

    A bare number is seconds. Compound forms such as ``1d12h`` add up.
    """
    if isinstance(value, bool):
        raise _fail("a duration", value, _DURATION_FORMS)
    if isinstance(value, int | float):
        return _finite_non_negative(float(value), "a duration", value, _DURATION_FORMS)
    text = str(value).strip().lower()
    parts = re.findall(_NUMBER + r"\s*([a-z]*)", text)
    if not parts or re.sub(_NUMBER + r"\s*[a-z]*", "", text).strip():
        raise _fail("a duration", value, _DURATION_FORMS)
    seconds = 0.0
    for number, unit in parts:
        if unit not in _DURATION_UNIT and unit != "":
            raise _fail("a duration", value, _DURATION_FORMS)
        seconds += _to_float(number) * _DURATION_UNIT.get(unit, 1.0)
    return _finite_non_negative(seconds, "a duration", value, _DURATION_FORMS)


def format_duration(seconds: float) -> str:
    """Format seconds in the largest unit that keeps the value >= 1: ``3.5d``, ``12h``."""
    for suffix, scale in (
        ("y", SECONDS_PER_YEAR),
        ("d", SECONDS_PER_DAY),
        ("h", SECONDS_PER_HOUR),
        ("m", SECONDS_PER_MINUTE),
    ):
        if abs(seconds) >= scale:
            return f"{_trim(seconds / scale)}{suffix}"
    return f"{_trim(seconds)}s"


# --- bytes --------------------------------------------------------------------------------

_BYTES_FORMS = ENGLISH["unit_forms.bytes"]


def parse_bytes(value: str | float | int) -> int:
    """Parse a size: ``80GB`` -> 80e9 bytes, ``141GiB`` -> 141 * 2**30 bytes, ``512`` -> 512."""
    if isinstance(value, bool):
        raise _fail("a size in bytes", value, _BYTES_FORMS)
    if isinstance(value, int | float):
        return int(_finite_non_negative(float(value), "a size in bytes", value, _BYTES_FORMS))
    match = _match(_NUMBER + r"\s*(?:([kKMGTPE]i?)B?|B)?", str(value))
    if match is None:
        raise _fail("a size in bytes", value, _BYTES_FORMS)
    prefix = match.group(2) or ""
    scale = (
        _BINARY_PREFIX[prefix.upper()[0] + "i"] if prefix.endswith("i") else _DECIMAL_PREFIX[prefix]
    )
    number = _to_float(match.group(1)) * scale
    return round(_finite_non_negative(number, "a size in bytes", value, _BYTES_FORMS))


def format_bytes(count: float, binary: bool = True, digits: int = 1) -> str:
    """Format bytes as ``74.5 GiB`` (binary, default) or ``80.0 GB`` (decimal): always labelled."""
    if binary:
        units: tuple[tuple[str, float], ...] = (
            ("PiB", 2.0**50),
            ("TiB", 2.0**40),
            ("GiB", 2.0**30),
            ("MiB", 2.0**20),
            ("KiB", 2.0**10),
        )
    else:
        units = (("PB", 1e15), ("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3))
    for suffix, scale in units:
        if abs(count) >= scale:
            return f"{count / scale:.{digits}f} {suffix}"
    return f"{count:.0f} B"


# --- bandwidth ----------------------------------------------------------------------------

_BANDWIDTH_FORMS = ENGLISH["unit_forms.bandwidth"]


def parse_bandwidth(value: str | float | int) -> float:
    """Parse a bandwidth to bytes per second: ``400Gbps`` -> 50e9, ``50GB/s`` -> 50e9."""
    if isinstance(value, bool):
        raise _fail("a bandwidth", value, _BANDWIDTH_FORMS)
    if isinstance(value, int | float):
        return _finite_non_negative(float(value), "a bandwidth", value, _BANDWIDTH_FORMS)
    match = _match(_NUMBER + r"\s*([kKMGTP]i?)?(bps|b/s|Bps|B/s|bit/s|byte/s)", str(value))
    if match is None:
        raise _fail("a bandwidth", value, _BANDWIDTH_FORMS)
    prefix = match.group(2) or ""
    scale = (
        _BINARY_PREFIX[prefix.upper()[0] + "i"] if prefix.endswith("i") else _DECIMAL_PREFIX[prefix]
    )
    in_bits = match.group(3) in ("bps", "b/s", "bit/s")
    number = _to_float(match.group(1)) * scale / (8.0 if in_bits else 1.0)
    return _finite_non_negative(number, "a bandwidth", value, _BANDWIDTH_FORMS)


def format_bandwidth(bytes_per_second: float, bits: bool = False) -> str:
    """Format bytes per second as ``50.0 GB/s``, or in bits as ``400 Gb/s``."""
    value = bytes_per_second * 8 if bits else bytes_per_second
    unit = "b/s" if bits else "B/s"
    for prefix, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(value) >= scale:
            return f"{_trim(value / scale)} {prefix}{unit}"
    return f"{_trim(value)} {unit}"


# --- FLOP/s -------------------------------------------------------------------------------

_FLOPS_FORMS = ENGLISH["unit_forms.flops"]


def parse_flops(value: str | float | int) -> float:
    """Parse a compute rate to FLOP/s: ``989 TFLOPS`` -> 9.89e14, ``1.98PFLOP/s``."""
    if isinstance(value, bool):
        raise _fail("a FLOP/s rate", value, _FLOPS_FORMS)
    if isinstance(value, int | float):
        return _finite_non_negative(float(value), "a FLOP/s rate", value, _FLOPS_FORMS)
    match = _match(_NUMBER + r"\s*([kKMGTPE]?)\s*(?:FLOPS|FLOP/s|flops|flop/s)", str(value))
    if match is None:
        raise _fail("a FLOP/s rate", value, _FLOPS_FORMS)
    number = _to_float(match.group(1)) * _DECIMAL_PREFIX[match.group(2)]
    return _finite_non_negative(number, "a FLOP/s rate", value, _FLOPS_FORMS)


def format_flops(flops_per_second: float) -> str:
    """Format FLOP/s as ``989 TFLOP/s``."""
    for prefix, scale in (("E", 1e18), ("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6)):
        if abs(flops_per_second) >= scale:
            return f"{_trim(flops_per_second / scale)} {prefix}FLOP/s"
    return f"{_trim(flops_per_second)} FLOP/s"


# --- money --------------------------------------------------------------------------------

CURRENCY_SYMBOLS = {"¥": "CNY", "￥": "CNY", "$": "USD", "€": "EUR"}
CURRENCY_CODES = {
    "CNY": "CNY",
    "RMB": "CNY",
    "YUAN": "CNY",
    "元": "CNY",
    "USD": "USD",
    "EUR": "EUR",
}
_SYMBOL_FOR_CODE = {"CNY": "¥", "USD": "$", "EUR": "€"}
_MONEY_FORMS = ENGLISH["unit_forms.money"]


@dataclass(frozen=True)
class Money:
    """An amount of money in one currency: ``Decimal`` so that sums are exact."""

    amount: Decimal
    currency: str

    def __str__(self) -> str:
        return format_money(self.amount, self.currency, _digits_for(self.amount))


@dataclass(frozen=True)
class Rate:
    """A price per period, e.g. ¥1.86 per hour: ``amount`` per ``period_seconds``."""

    amount: Decimal
    currency: str
    period_seconds: float | None

    def per_second(self) -> Decimal:
        if self.period_seconds is None:
            raise UnitError.of("error.money_period", money=str(self))
        return self.amount / Decimal(repr(self.period_seconds))

    def __str__(self) -> str:
        text = format_money(self.amount, self.currency, _digits_for(self.amount))
        if self.period_seconds is None:
            return text
        return (
            f"{text}/{_PERIOD_NAME.get(self.period_seconds, format_duration(self.period_seconds))}"
        )


_PERIOD_NAME = {
    1.0: "s",
    SECONDS_PER_MINUTE: "min",
    SECONDS_PER_HOUR: "h",
    SECONDS_PER_DAY: "day",
    SECONDS_PER_WEEK: "week",
    SECONDS_PER_MONTH: "month",
    SECONDS_PER_YEAR: "year",
}


def parse_money(value: str) -> Rate:
    """Parse a price: ``¥1.86/h``, ``1.86 CNY/hour``, ``$2.49/hr``, ``27600 CNY/month``, ``$5``.

    Returns a :class:`Rate` whose ``period_seconds`` is ``None`` for a plain amount.
    """
    text = str(value).strip()
    match = re.fullmatch(
        r"(?P<pre>[¥￥$€])?\s*(?P<num>" + _NUMBER[1:-1] + r")\s*(?P<code>[A-Za-z]{3,4}|元)?"
        r"\s*(?:(?:/|\s+per\s+)\s*(?P<period>[A-Za-z]+))?",
        text,
    )
    if match is None:
        raise _fail("a price", value, _MONEY_FORMS)
    symbol_currency = CURRENCY_SYMBOLS.get(match.group("pre") or "")
    code = match.group("code")
    code_currency = CURRENCY_CODES.get(code.upper()) if code else None
    if code and code_currency is None:
        raise _fail("a price", value, _MONEY_FORMS)
    if symbol_currency and code_currency and symbol_currency != code_currency:
        raise _fail("a price", value, _MONEY_FORMS)
    currency = code_currency or symbol_currency
    if currency is None:
        raise _fail("a price", value, _MONEY_FORMS)
    try:
        amount = Decimal(match.group("num").replace(",", "").replace("_", ""))
    except InvalidOperation as error:
        raise _fail("a price", value, _MONEY_FORMS) from error
    if amount and not SMALLEST_AMOUNT <= abs(amount) <= LARGEST_AMOUNT:
        raise UnitError.of(
            "error.money_range",
            value=shown(value),
            low=f"{SMALLEST_AMOUNT:e}",
            high=f"{LARGEST_AMOUNT:e}",
        )
    period = match.group("period")
    period_seconds = None
    if period is not None:
        period_seconds = _DURATION_UNIT.get(period.lower())
        if period_seconds is None:
            raise _fail("a price", value, _MONEY_FORMS)
    return Rate(amount=amount, currency=currency, period_seconds=period_seconds)


def parse_amount(value: str) -> Money:
    """Parse a plain amount of money such as ``¥2000`` or ``5000 USD`` (no period allowed)."""
    rate = parse_money(value)
    if rate.period_seconds is not None:
        raise _fail("an amount of money", value, ENGLISH["unit_forms.amount"])
    return Money(rate.amount, rate.currency)


def format_money(amount: Decimal | float, currency: str, digits: int = 2) -> str:
    """Format ``amount`` with its currency symbol: ``¥1,100.00``, ``$2.49``."""
    symbol = _SYMBOL_FOR_CODE.get(currency)
    text = f"{Decimal(str(amount)):,.{digits}f}"
    return f"{symbol}{text}" if symbol else f"{text} {currency}"


def _digits_for(amount: Decimal) -> int:
    """Decimal places that show ``amount`` exactly, at least 2 and at most 12: per-second prices
    keep theirs."""
    exponent = amount.as_tuple().exponent
    return min(max(2, -exponent), 12) if isinstance(exponent, int) else 2


def _trim(number: float) -> str:
    """Shortest text that reads back to ``number`` within 4 significant digits: ``1.5``, ``20``."""
    text = f"{number:.4g}"
    if "e" in text:
        return f"{number:.6g}"
    return text
