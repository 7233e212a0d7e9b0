"""The language of each answer and the translation of its messages, with number, money and
duration formatting per language.

``translate(key, lang, **values)`` takes the English text of ``key`` from
:data:`gpuplan.messages.ENGLISH`, looks it up (``msgctxt`` = key, ``msgid`` = English) in the
gettext catalog of ``lang`` (``gpuplan/locale/<lang>/LC_MESSAGES/gpuplan.mo``, read with the
standard library's :mod:`gettext` on first use) and fills ``{placeholders}`` with ``str.format``.
English is the fallback for an unknown language and for a message without a translation. The
CLI's language comes from ``--lang`` (on any command), ``GPUPLAN_LANG``, or the locale (``LC_ALL``, ``LC_MESSAGES``, ``LANG``); the
web app's from ``?lang=``, a cookie, or ``Accept-Language``.
"""

from __future__ import annotations

import gettext
import os
from collections.abc import Mapping
from decimal import Decimal
from functools import cache
from pathlib import Path

from gpuplan.messages import ENGLISH

LANGUAGES = ("en", "zh")
DEFAULT_LANGUAGE = "en"
CURRENCY_SYMBOLS = {"CNY": "¥", "USD": "$", "EUR": "€"}
DOMAIN = "gpuplan"
LOCALE_DIR = Path(__file__).parent / "locale"
LANGUAGE_VARIABLE = "GPUPLAN_LANG"

_current_language: str | None = None


def normalize_language(text: str | None) -> str | None:
    """``"zh"``, ``"zh-CN"``, ``"zh_CN.UTF-8"`` -> ``"zh"``; ``"en-US"`` -> ``"en"``; else None."""
    if not text:
        return None
    code = text.strip().lower().replace("_", "-").split(".")[0].split("-")[0]
    return code if code in LANGUAGES else None


def language_from_environment(environ: Mapping[str, str] | None = None) -> str:
    """``GPUPLAN_LANG``, else the language of the POSIX locale (``LC_ALL``, ``LC_MESSAGES``,
    ``LANG``); English by default."""
    environ = os.environ if environ is None else environ
    for name in (LANGUAGE_VARIABLE, "LC_ALL", "LC_MESSAGES", "LANG"):
        value = environ.get(name)
        if value:
            return normalize_language(value) or DEFAULT_LANGUAGE
    return DEFAULT_LANGUAGE


def language_from_accept_header(header: str | None) -> str | None:
    """The best supported language of an HTTP ``Accept-Language`` header, by quality."""
    if not header:
        return None
    ranked: list[tuple[float, int, str]] = []
    for position, part in enumerate(header.split(",")):
        tag, _, params = part.strip().partition(";")
        quality = 1.0
        if params.strip().startswith("q="):
            try:
                quality = float(params.strip()[2:])
            except ValueError:
                quality = 0.0
        language = normalize_language(tag)
        if language and quality > 0:
            ranked.append((-quality, position, language))
    return min(ranked)[2] if ranked else None


def set_language(language: str | None) -> None:
    """Fix the process-wide language (the CLI's ``--lang``); ``None`` returns to the locale."""
    global _current_language
    if language is not None and normalize_language(language) is None:
        from gpuplan.errors import InputError

        raise InputError.of("error.lang", accepted=", ".join(LANGUAGES), value=repr(language))
    _current_language = normalize_language(language)


def current_language() -> str:
    """``--lang`` when given, else the locale's language."""
    return _current_language or language_from_environment()


@cache
def translations(language: str) -> gettext.NullTranslations:
    """The compiled gettext catalog of ``language``; English (no catalog) translates to itself."""
    return gettext.translation(DOMAIN, LOCALE_DIR, languages=[language], fallback=True)


def translate(key: str, lang: str | None = None, /, **values: object) -> str:
    """The message ``key`` in ``lang`` (the current language by default), formatted with
    ``values``. A message without a translation falls back to English; an unknown key is
    returned as it is, so a slip shows on the page instead of crashing it."""
    english = ENGLISH.get(key)
    if english is None:
        return key
    language = (normalize_language(lang) if lang else current_language()) or DEFAULT_LANGUAGE
    template = english if language == "en" else translations(language).pgettext(key, english)
    return template.format(**values) if values else template


@cache
def _keys_by_english() -> dict[str, str]:
    return {english: key for key, english in ENGLISH.items() if "{" not in english}


def translate_text(text: str, lang: str | None = None) -> str:
    """``text`` in ``lang`` when it is the English of a message without placeholders (a default
    kept in a result as its words, such as an assumption's source); other text as it is."""
    key = _keys_by_english().get(text)
    return translate(key, lang) if key else text


def format_number(value: float | Decimal, digits: int = 0) -> str:
    """Thousands separators and fixed decimals: ``1,234.5``; the same in both languages."""
    return f"{Decimal(str(value)):,.{digits}f}" if digits >= 0 else f"{value:,}"


def format_large(value: float | Decimal, lang: str | None = None, digits: int = 2) -> str:
    """Chinese counts large numbers in 万 (10^4) and 亿 (10^8): ``9.84亿``; English uses
    thousands separators."""
    language = normalize_language(lang) if lang else current_language()
    number = float(value)
    if language == "zh" and abs(number) >= 1e8:
        return f"{number / 1e8:,.{digits}f}亿"
    if language == "zh" and abs(number) >= 1e4:
        return f"{number / 1e4:,.{digits}f}万"
    return f"{number:,.0f}" if abs(number) >= 1e4 else f"{number:,.{digits}f}"


CENTS_BELOW = 100
"""Amounts under this many currency units keep their cents in tables (``¥14.23``); larger ones
show whole units with thousands separators (``¥1,423``)."""


def money_digits(amount: float | Decimal) -> int:
    """Decimals a table shows for ``amount``: 2 below :data:`CENTS_BELOW` units, else (and
    for nothing at all) 0."""
    return 2 if 0 < abs(float(amount)) < CENTS_BELOW else 0


def format_amount(amount: float | Decimal, digits: int | None = None) -> str:
    """An amount without its currency, for a column whose header names it: ``14.23``,
    ``1,423``; ``digits=None`` picks them with :func:`money_digits`."""
    return format_number(amount, money_digits(amount) if digits is None else digits)


def format_amount_short(amount: float | Decimal, lang: str | None = None) -> str:
    """An amount in at most about six cells for an interval under a total: as
    :func:`format_amount` below 10,000, then ``32.33M`` (English) or ``3,233.2万`` (Chinese)."""
    from gpuplan.units import format_tokens

    if abs(float(amount)) < 1e4:
        return format_amount(amount)
    language = normalize_language(lang) if lang else current_language()
    return format_large(amount, language, 1) if language == "zh" else format_tokens(float(amount))


def currency_label(currency: str) -> str:
    """The symbol of ``currency`` (``¥``), or its code where it has none (``GBP``)."""
    return CURRENCY_SYMBOLS.get(currency, currency)


def format_money(
    amount: float | Decimal | None,
    currency: str,
    lang: str | None = None,
    digits: int | None = 2,
    compact: bool = False,
) -> str:
    """``¥1,100.00`` / ``$2.49``; ``digits=None``: cents below :data:`CENTS_BELOW` units, whole
    units above (``¥14.23``, ``¥1,423``). With ``compact`` in Chinese, yuan in 万 and 亿
    (``¥984.00万``), other currencies with thousands separators (``$389,300.00``, never
    ``$38.93万``): a Chinese reader counts yuan in 万, and a dollar sign before 万 reads as yuan."""
    if amount is None:
        return "-"
    if digits is None:
        digits = money_digits(amount)
    symbol = CURRENCY_SYMBOLS.get(currency)
    in_wan = compact and currency == "CNY"
    text = format_large(amount, lang, digits) if in_wan else format_number(amount, digits)
    if symbol:
        return f"-{symbol}{text[1:]}" if text.startswith("-") else f"{symbol}{text}"
    return f"{text} {currency}"


def format_days(days: float | None, lang: str | None = None, digits: int = 1) -> str:
    """``12.5 days`` / ``12.5 天``."""
    if days is None:
        return "-"
    key = "unit.day" if round(days, digits) == 1 else "unit.days"
    return translate(key, lang, value=f"{days:,.{digits}f}")


def format_hours(hours: float, lang: str | None = None, digits: int = 1) -> str:
    """``40.0 h`` / ``40.0 小时``."""
    return translate("unit.hours", lang, value=f"{hours:,.{digits}f}")


def format_run_length(seconds: float, lang: str | None = None) -> str:
    """A job's run length as fits: ``12.8 h`` under two days, ``3.4 days`` from there (never
    ``0.0 days`` for a job of hours)."""
    if seconds < 2 * 86400:
        return format_hours(seconds / 3600, lang)
    return format_days(seconds / 86400, lang)


def format_share(share: float | Decimal | None, digits: int = 0) -> str:
    """A share as a percentage: ``0.451`` -> ``45%``."""
    return "-" if share is None else f"{float(share):.{digits}%}"
