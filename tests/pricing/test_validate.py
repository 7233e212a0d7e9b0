"""The catalog validator's rejections and warnings."""

from __future__ import annotations

import datetime as dt

import pytest

from gpuplan.pricing.offers import OfferError, catalog_offers, read_offers_text
from gpuplan.pricing.validate import OfferValidationError, raise_on_errors, validate_offers

TODAY = dt.date(2026, 11, 30)


def _offer(plans: str, gpus: int = 1, offer_id: str = "x", observed: str = "2026-11-01"):
    text = f"""
provider = "Test"
currency = "USD"
[[offers]]
id = "{offer_id}"
gpu = "h100-sxm-80gb"
gpus = {gpus}
plans = [ {plans.replace("OBS", f'source = "t", observed = "{observed}"')} ]
"""
    return read_offers_text(text, "test")


def _errors(offers, reference=None):
    findings = validate_offers(offers, today=TODAY, reference=reference)
    return [finding for finding in findings if finding.level == "error"]


def test_built_in_catalog_has_no_rejected_offer():
    assert _errors(catalog_offers()) == []


@pytest.mark.parametrize("price", ["0", "700.0", "9999"])
def test_placeholder_prices_are_rejected_naming_file_offer_and_key(price: str):
    offers = _offer(f'{{ mode = "hourly", price = {price}, per = "instance", OBS }}')
    (error,) = [error for error in _errors(offers) if "placeholder" in error.message]
    assert error.where == "test: offer 'x': plans[0].price"
    with pytest.raises(
        OfferValidationError, match=r"^test: offer 'x': plans\[0\].price: placeholder"
    ):
        raise_on_errors([error])


def test_a_negative_price_is_refused_when_the_file_is_read():
    with pytest.raises(OfferError, match=r"test: offer 'x': plans\[0\].price: expected a price"):
        _offer('{ mode = "hourly", price = -1, per = "instance", OBS }')


def test_spot_at_or_above_on_demand_is_rejected():
    offers = _offer(
        '{ mode = "hourly", price = 3, per = "gpu", OBS }, { mode = "spot", price = 3, per = "gpu", OBS }'
    )
    (error,) = _errors(offers)
    assert "not below on-demand" in error.message
    with pytest.raises(OfferValidationError, match=r"offer 'x': plans\[1\].price: spot"):
        raise_on_errors(_errors(offers))


def test_instance_price_labelled_per_gpu_is_rejected():
    mislabeled = _offer('{ mode = "hourly", price = 31.92, per = "gpu", OBS }', gpus=8)
    errors = _errors(mislabeled, reference=catalog_offers() + mislabeled)
    assert any("instance price labelled per GPU" in error.message for error in errors)


def test_gpu_price_labelled_per_instance_is_rejected():
    mislabeled = _offer('{ mode = "hourly", price = 3.99, per = "instance", OBS }', gpus=8)
    errors = _errors(mislabeled, reference=catalog_offers() + mislabeled)
    assert any("per-GPU price labelled per instance" in error.message for error in errors)


def test_implausible_price_per_gpu_hour_is_rejected():
    offers = _offer('{ mode = "hourly", price = 440, per = "gpu", OBS }')
    assert any("implausible" in error.message for error in _errors(offers))


def test_stale_undated_and_estimated_prices_are_flagged_not_rejected():
    stale = _offer('{ mode = "hourly", price = 3, per = "gpu", OBS }', observed="2025-01")
    undated = _offer(
        '{ mode = "hourly", price = 3, per = "gpu", is_estimate = true, OBS }',
        offer_id="y",
        observed="undated<=2026-11-30",
    )
    findings = validate_offers(stale + undated, today=TODAY, stale_after_days=180)
    messages = [finding.message for finding in findings if finding.level == "warning"]
    assert any(message.startswith("stale") for message in messages)
    assert any(message.startswith("undated") for message in messages)
    assert any("estimate" in message for message in messages)
    assert not [finding for finding in findings if finding.level == "error"]


def test_duplicate_ids_are_rejected():
    one = _offer('{ mode = "hourly", price = 3, per = "gpu", OBS }')
    assert any("appears 2 times" in error.message for error in _errors(one + one))
