"""Loading offers: the built-in catalog, a user's file, and the errors that name the field."""

from __future__ import annotations

from decimal import Decimal

import pytest

from gpuplan.pricing.offers import (
    OfferBook,
    OfferError,
    catalog_offers,
    load_offers_file,
    read_offers_text,
)
from gpuplan.pricing.provenance import ProvenanceError, parse_observed

from .helpers import offer_from


def test_catalog_covers_hyperscalers_gpu_clouds_chinese_platforms_and_the_seed():
    providers = {offer.provider for offer in catalog_offers()}
    for name in (
        "AWS",
        "Azure",
        "GCP",
        "Lambda",
        "RunPod",
        "CoreWeave",
        "Nebius",
        "Crusoe",
        "算家云",
        "星宇智算",
    ):
        assert name in providers


def test_every_catalog_price_has_source_date_and_quality():
    for offer in catalog_offers():
        for plan in offer.plans:
            assert plan.provenance.source and plan.provenance.observed
            assert plan.provenance.date_quality in (
                "exact",
                "month",
                "quarter",
                "year",
                "inferred-range",
                "undated",
            )
        for fee in offer.fees:
            assert fee.provenance.source and fee.provenance.observed


def test_seed_platform_tiers_as_stated():
    book = OfferBook.build()
    rtx = book.get("xingyu-rtx-4090-x1")
    assert rtx.claims == "seed article"
    assert rtx.plan("hourly (per second)").price == Decimal("1.86")
    assert rtx.plan("monthly").price == Decimal("1100")
    assert rtx.plan("monthly").term_seconds == 30 * 86400
    assert book.get("xingyu-a100-40gb-x4").plan("monthly").price == Decimal("27600")
    assert book.get("xingyu-h100-x8").plan("monthly").price == Decimal("192000")
    assert book.get("xingyu-h100-x8").plan("yearly").price == Decimal("192000") * 12 * Decimal(
        "0.65"
    )
    assert rtx.tax_included is True


def test_undated_rows_keep_their_upper_bound_as_quality():
    assert parse_observed("undated<=2026-11-30")[1] == "undated"
    assert parse_observed("2024-12/2025-06")[1] == "inferred-range"
    assert parse_observed("2024-Q4")[0].isoformat() == "2024-12-31"
    assert parse_observed("2026 (mid)")[1] == "year"
    with pytest.raises(ProvenanceError):
        parse_observed("last spring")


def test_price_units_are_kept_per_gpu_and_per_instance():
    per_gpu = offer_from(['mode = "hourly", price = 2, per = "gpu"'], gpus=8)
    per_instance = offer_from(['mode = "hourly", price = 16, per = "instance"'], gpus=8)
    assert per_gpu.plans[0].per_gpu_hour(8) == per_instance.plans[0].per_gpu_hour(8) == 2
    assert per_gpu.plans[0].run_cost(3600, 8) == per_instance.plans[0].run_cost(3600, 8) == 16


@pytest.mark.parametrize(
    ("plan", "message"),
    [
        ('mode = "hourly", price = 2', r"plans\[0\]: missing key 'per' \(one of gpu, instance\)"),
        (
            'mode = "fortnightly", price = 2, per = "gpu"',
            r"plans\[0\].mode: 'fortnightly' is not one",
        ),
        ('mode = "hourly", price = "two", per = "gpu"', r"plans\[0\].price: expected a price"),
        ('mode = "reserved", price = 2, per = "gpu"', r"plans\[0\]: missing key 'term'"),
    ],
)
def test_bad_plans_name_the_field(plan: str, message: str):
    with pytest.raises(OfferError, match=message):
        offer_from([plan])


def test_missing_date_is_rejected():
    text = """
provider = "Test"
currency = "USD"
[[offers]]
id = "x"
gpu = "h100-sxm-80gb"
gpus = 1
plans = [ { mode = "hourly", price = 2, per = "gpu", source = "somewhere" } ]
"""
    with pytest.raises(OfferError, match=r"test: offer 'x': plans\[0\]: missing key 'observed'"):
        read_offers_text(text, "test")


def test_malformed_toml_is_one_input_error(tmp_path):
    path = tmp_path / "offers.toml"
    path.write_text("provider = \n")
    with pytest.raises(OfferError, match="malformed TOML"):
        load_offers_file(path)


def test_user_file_adds_offers_and_discounts_scale_prices(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text(
        """
provider = "Lambda"
currency = "USD"
[[offers]]
id = "my-negotiated-h100"
gpu = "h100-sxm-80gb"
gpus = 8
plans = [ { mode = "hourly", price = 3.0, per = "gpu", source = "our contract", observed = "2026-11-01" } ]
"""
    )
    before = path.read_text()
    book = OfferBook.build(path, discount_factors={"lambda": Decimal("0.5")})
    assert book.get("my-negotiated-h100").plans[0].price == Decimal("1.5")
    assert book.get("lambda-h100-sxm-x8").plans[0].price == Decimal("1.995")
    assert path.read_text() == before
    with pytest.raises(OfferError, match="unknown offer"):
        book.get("no-such-offer")
    with pytest.raises(OfferError, match="unknown provider"):
        OfferBook.build(discount_factors={"Nobody": Decimal("0.9")})
