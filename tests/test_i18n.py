"""The message catalogs: every message marked in the source has a Chinese translation with the
same placeholders, and the shipped .mo is compiled from the .po; language detection from the
locale and from Accept-Language; money and number formatting."""

from __future__ import annotations

import fnmatch
import gettext
import string
import tomllib
from decimal import Decimal
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_keywords, parse_mapping_cfg
from babel.messages.pofile import read_po

from gpuplan import i18n
from gpuplan.cli.localized_help import HELP_CONTEXT
from gpuplan.messages import ENGLISH

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "gpuplan"
# the same keyword and mapping as the pybabel extract command in CONTRIBUTING.md
KEYWORDS = parse_keywords(["message:1c,2"])
TRANSLATED = [language for language in i18n.LANGUAGES if language != i18n.DEFAULT_LANGUAGE]


def _placeholders(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def _extraction() -> tuple[dict[str, str], set[str]]:
    """Every message marked in src/gpuplan and every help text of every command, by Babel's
    extractor with babel.cfg's methods: (key (msgctxt) -> English, help texts)."""
    with (ROOT / "babel.cfg").open(encoding="utf-8") as mapping:
        method_map, options_map = parse_mapping_cfg(mapping)
    found: dict[str, str] = {}
    help_texts: set[str] = set()
    for _, _, msgid, _, context in extract_from_dir(
        PACKAGE, method_map, options_map, keywords=KEYWORDS, comment_tags=()
    ):
        assert context, f"message {msgid!r} is marked without a key"
        if context == HELP_CONTEXT:
            help_texts.add(msgid)
            continue
        assert found.setdefault(context, msgid) == msgid, f"key {context} has two texts"
    return found, help_texts


def _extracted() -> dict[str, str]:
    return _extraction()[0]


def _extracted_help() -> set[str]:
    return _extraction()[1]


def _po_path(language: str) -> Path:
    return i18n.LOCALE_DIR / language / "LC_MESSAGES" / f"{i18n.DOMAIN}.po"


def _catalog(language: str):
    with _po_path(language).open("rb") as po:
        return read_po(po, locale=language)


def _entries(language: str) -> dict[str, tuple[str, str]]:
    """key -> (English, translation) of every message in the language's .po file, help texts
    aside."""
    return {
        m.context: (m.id, m.string)
        for m in _catalog(language)
        if m.id and m.context != HELP_CONTEXT
    }


def _help_entries(language: str) -> dict[str, str]:
    """English help text -> translation, from the language's .po file."""
    return {m.id: m.string for m in _catalog(language) if m.id and m.context == HELP_CONTEXT}


def test_the_extractor_finds_every_message():
    assert _extracted() == ENGLISH


@pytest.mark.parametrize("language", TRANSLATED)
def test_every_extracted_message_is_translated(language):
    entries = _entries(language)
    untranslated = [
        key
        for key, english in _extracted().items()
        if key not in entries or entries[key][0] != english or not entries[key][1]
    ]
    fuzzy = [m.context for m in _catalog(language) if m.id and m.fuzzy]
    assert not untranslated, f"{language}: no translation of {untranslated}"
    help_entries = _help_entries(language)
    help_untranslated = sorted(text for text in _extracted_help() if not help_entries.get(text))
    assert not help_untranslated, f"{language}: help without a translation: {help_untranslated}"
    assert not fuzzy, f"{language}: fuzzy (unchecked) translations of {fuzzy}"


@pytest.mark.parametrize("language", TRANSLATED)
def test_the_catalog_holds_no_stale_message(language):
    stale = sorted(set(_entries(language)) - set(ENGLISH))
    assert not stale, f"{language}: messages no longer in the source: {stale}"
    stale_help = sorted(set(_help_entries(language)) - _extracted_help())
    assert not stale_help, f"{language}: help texts no longer in the source: {stale_help}"


@pytest.mark.parametrize("language", TRANSLATED)
def test_translations_take_the_same_placeholders(language):
    mismatched = [
        key
        for key, (english, translation) in _entries(language).items()
        if translation and _placeholders(english) != _placeholders(translation)
    ]
    assert not mismatched, f"{language}: placeholders differ in {mismatched}"
    errors = [
        (m.context, str(error)) for m, problems in _catalog(language).check() for error in problems
    ]
    assert not errors, errors


@pytest.mark.parametrize("language", TRANSLATED)
def test_the_shipped_mo_is_compiled_from_the_po(language):
    with (_po_path(language).with_suffix(".mo")).open("rb") as mo:
        compiled = dict(gettext.GNUTranslations(mo)._catalog)  # type: ignore[attr-defined]
    compiled.pop("", None)
    expected = {f"{key}\x04{english}": text for key, (english, text) in _entries(language).items()}
    expected |= {
        f"{HELP_CONTEXT}\x04{english}": text for english, text in _help_entries(language).items()
    }
    assert compiled == expected, "run: pybabel compile -d src/gpuplan/locale -D gpuplan"


@pytest.mark.parametrize("language", TRANSLATED)
def test_translate_reads_the_catalog(language):
    entries = _entries(language)
    assert all(i18n.translate(key, language) == entries[key][1] for key in ENGLISH)


def test_the_compiled_catalogs_are_package_data():
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
        "setuptools"
    ]["package-data"]["gpuplan"]
    for language in TRANSLATED:
        path = _po_path(language).with_suffix(".mo").relative_to(PACKAGE).as_posix()
        assert any(fnmatch.fnmatch(path, pattern) for pattern in patterns), path


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
    assert i18n.format_money(389_300, "USD", "zh", compact=True) == "$389,300.00"
    assert i18n.format_money(3.2e8, "EUR", "zh", compact=True, digits=0) == "€320,000,000"
    assert i18n.format_money(None, "CNY") == "-"
    assert i18n.format_money(5, "GBP", "en") == "5.00 GBP"


def test_days_and_hours_words():
    assert i18n.format_days(12.46, "en") == "12.5 days"
    assert i18n.format_days(12.46, "zh") == "12.5 天"
    assert i18n.format_days(1.0, "en") == "1.0 day"
    assert i18n.format_hours(40, "zh") == "40.0 小时"


def _visible_text(html: str) -> str:
    """The words a reader sees: tags, styles, entities and the contents of form fields (the
    user's input, such as an example TOML file) removed, spaces collapsed."""
    import html as entities
    import re

    body = re.sub(r"<(style|script|textarea)\b.*?</\1>", " ", html, flags=re.S | re.I)
    return " ".join(entities.unescape(re.sub(r"<[^>]+>", " ", body)).split())


def _english_only_messages() -> dict[str, str]:
    """The messages of two or more words, without placeholders, whose Chinese differs: any of
    them shown verbatim on a Chinese page was rendered in the wrong language."""
    return {
        key: english
        for key, english in ENGLISH.items()
        if "{" not in english and len(english.split()) >= 2 and i18n.translate(key, "zh") != english
    }


def _shows(text: str, message: str) -> bool:
    """Whether ``message`` stands in ``text`` as words of its own (not ``21 GPU`` for ``1 GPU``)."""
    import re

    return re.search(rf"(?<![\w.-]){re.escape(message.strip())}(?!\w)", text) is not None


def test_chinese_pages_show_no_message_in_english():
    from fastapi.testclient import TestClient

    from gpuplan.web.app import create_app

    job = {"model": "llama-3.1-8b", "method": "qlora", "seq_len": "2048", "global_batch": "32"}
    client = TestClient(create_app())
    client.cookies.set("gpuplan_lang", "zh")
    pages = {
        path: client.get(path, params={"lang": "zh"})
        for path in ("/plan", "/estimate", "/quote", "/tco", "/catalog")
    }
    pages["plan report"] = client.post(
        "/plan", data={**job, "tokens": "100M", "max_gpus": "4", "budget": "¥2000"}
    )
    english = _english_only_messages()
    for name, response in pages.items():
        assert response.status_code == 200, name
        text = _visible_text(response.text)
        assert "训练" in text or "方案" in text or "报价" in text, name
        shown = sorted(key for key, message in english.items() if _shows(text, message))
        assert not shown, f"{name}: English messages on the Chinese page: {shown}"
