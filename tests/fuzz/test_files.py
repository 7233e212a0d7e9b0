"""Fuzzed TCO, offers and usage files: each is read into checked inputs whose answers are
finite, or refused with one line naming the file, entry and key."""

from __future__ import annotations

import math
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given

from gpuplan.errors import InputError

from .bounds import bounded, fuzz_settings
from .strategies import offers_documents, rates_documents, tco_documents, usage_files

pytestmark = pytest.mark.fuzz


def _finite_numbers(value: object) -> bool:
    if isinstance(value, dict):
        return all(_finite_numbers(item) for item in value.values())
    if isinstance(value, list | tuple):
        return all(_finite_numbers(item) for item in value)
    if isinstance(value, Decimal):
        return value.is_finite()
    if isinstance(value, float):
        return math.isfinite(value)
    return True


@fuzz_settings()
@given(document=tco_documents)
def test_a_fuzzed_tco_file_compares_or_is_refused(document):
    from gpuplan.pricing.tco import compare, parse_tco

    inputs = bounded(lambda: parse_tco(document, "fuzz.toml"))
    if isinstance(inputs, InputError):
        return
    result = bounded(lambda: compare(inputs))
    if not isinstance(result, InputError):
        assert _finite_numbers(result)


@fuzz_settings()
@given(document=offers_documents)
def test_a_fuzzed_offers_file_quotes_or_is_refused(document):
    from gpuplan.pricing.offers import parse_provider
    from gpuplan.pricing.quote import quote

    offers = bounded(lambda: parse_provider(document, "fuzz.toml"))
    if isinstance(offers, InputError):
        return
    for offer in offers:
        result = bounded(lambda offer=offer: quote(offer, 86_400).to_dict())
        if not isinstance(result, InputError):
            assert _finite_numbers(result)


@fuzz_settings()
@given(text=usage_files)
def test_a_fuzzed_usage_file_audits_or_is_refused(text, tmp_path_factory):
    from gpuplan.pricing.audit import audit, read_usage
    from gpuplan.pricing.offers import OfferBook

    path = Path(tmp_path_factory.mktemp("usage")) / "usage.csv"
    path.write_text(text, "utf-8")
    records = bounded(lambda: read_usage(path))
    if isinstance(records, InputError):
        return
    offer = OfferBook.build().get("lambda-h100-sxm-x8")
    result = bounded(lambda: audit(records, offer))
    if not isinstance(result, InputError):
        assert _finite_numbers(result)


@fuzz_settings()
@given(document=rates_documents)
def test_a_fuzzed_rates_file_converts_or_is_refused(document):
    from gpuplan.pricing.currency import default_rates, parse_rates

    rates = bounded(lambda: parse_rates(document, "fuzz.toml"))
    if isinstance(rates, InputError):
        return
    merged = bounded(lambda: default_rates().merged(rates, "fuzz.toml"))
    if isinstance(merged, InputError):
        return
    for currency in merged.currencies:
        converted = merged.convert(Decimal(100), currency, "USD")
        assert converted.is_finite() and converted > 0
