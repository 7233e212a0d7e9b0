"""The message catalog: every key in both languages with the same placeholders; language
detection from the locale and from Accept-Language; money and number formatting."""

from __future__ import annotations

import string
from decimal import Decimal

import pytest

from gpuplan import i18n


def _placeholders(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def test_every_key_exists_in_both_languages():
    assert set(i18n.EN) == set(i18n.ZH)


@pytest.mark.parametrize("key", sorted(i18n.EN))
def test_both_languages_take_the_same_placeholders(key):
    assert _placeholders(i18n.EN[key]) == _placeholders(i18n.ZH[key]), key


def test_translate_fills_values_and_falls_back():
    assert i18n.translate("unit.days", "en", value="3.0") == "3.0 days"
    assert i18n.translate("unit.days", "zh", value="3.0") == "3.0 天"
    assert i18n.translate("unit.days", "fr", value="3.0") == "3.0 days"
    assert i18n.translate("no.such.key", "zh") == "no.such.key"


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({}, "en"),
        ({"LANG": "zh_CN.UTF-8"}, "zh"),
        ({"LANG": "C.UTF-8"}, "en"),
        ({"LC_ALL": "en_US.UTF-8", "LANG": "zh_CN.UTF-8"}, "en"),
        ({"LC_ALL": "zh_TW.UTF-8"}, "zh"),
    ],
)
def test_language_from_the_locale(environ, expected):
    assert i18n.language_from_environment(environ) == expected


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("zh-CN,zh;q=0.9,en;q=0.8", "zh"),
        ("en-US,en;q=0.9,zh;q=0.8", "en"),
        ("fr-FR,zh;q=0.5", "zh"),
        ("fr-FR", None),
        ("", None),
        ("en;q=0.2,zh;q=0.7", "zh"),
    ],
)
def test_language_from_accept_language(header, expected):
    assert i18n.language_from_accept_header(header) == expected


def test_set_language_rejects_unknown_codes():
    from gpuplan.errors import InputError

    with pytest.raises(InputError, match="--lang"):
        i18n.set_language("klingon")
    i18n.set_language("zh")
    try:
        assert i18n.current_language() == "zh"
    finally:
        i18n.set_language(None)


def test_money_has_symbol_separators_and_chinese_units():
    assert i18n.format_money(Decimal("1234567.891"), "CNY", "en") == "¥1,234,567.89"
    assert i18n.format_money(-2.5, "USD", "en") == "-$2.50"
    assert i18n.format_money(9_840_000, "CNY", "zh", compact=True) == "¥984.00万"
    assert i18n.format_money(3.2e8, "CNY", "zh", compact=True) == "¥3.20亿"
    assert i18n.format_money(9_840_000, "CNY", "en", compact=True) == "¥9,840,000"
    assert i18n.format_money(None, "CNY") == "-"
    assert i18n.format_money(5, "GBP", "en") == "5.00 GBP"


def test_days_and_hours_words():
    assert i18n.format_days(12.46, "en") == "12.5 days"
    assert i18n.format_days(12.46, "zh") == "12.5 天"
    assert i18n.format_days(1.0, "en") == "1.0 day"
    assert i18n.format_hours(40, "zh") == "40.0 小时"
