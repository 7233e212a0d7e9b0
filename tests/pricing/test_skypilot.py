"""Importing a SkyPilot vms.csv: merged zones, skipped rows, and the written TOML."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from gpuplan.pricing.offers import read_offers_text
from gpuplan.pricing.skypilot import SkyPilotImportError, import_vms_csv, offers_to_toml

SAMPLE = Path(__file__).parent / "data" / "skypilot_vms_sample.csv"


def test_import_sample_catalog():
    before = SAMPLE.read_bytes()
    result = import_vms_csv(SAMPLE, provider="aws", observed="2026-11-01")
    by_type = {offer.instance_type: offer for offer in result.offers}
    assert set(by_type) == {"p5.48xlarge", "p4d.24xlarge", "1x_A100-80GB_SECURE"}
    p5 = by_type["p5.48xlarge"]
    assert p5.gpu == "h100-sxm-80gb" and p5.gpus == 8
    assert p5.plan("hourly").price == Decimal("55.04")
    assert p5.plan("hourly").per == "instance"
    assert p5.plan("spot").price == Decimal("14.246")
    assert by_type["p4d.24xlarge"].gpu == "a100-sxm-40gb"
    messages = " | ".join(f"{f.level} {f.field} {f.message}" for f in result.findings)
    assert "GPU-only row" in messages
    assert "error Price placeholder price 700.0" in messages
    assert "80 MiB" in messages
    assert "spot at or above on-demand" in messages
    assert SAMPLE.read_bytes() == before


def test_written_toml_reads_back_with_provenance():
    result = import_vms_csv(SAMPLE, provider="aws", observed="2026-11-01")
    offers = read_offers_text(offers_to_toml(result.offers, "aws"), "imported")
    assert [offer.id for offer in offers] == [offer.id for offer in result.offers]
    assert all(plan.provenance.observed == "2026-11-01" for offer in offers for plan in offer.plans)


def test_default_observed_is_an_undated_upper_bound():
    result = import_vms_csv(SAMPLE)
    assert result.offers[0].plans[0].provenance.date_quality == "undated"


def test_malformed_row_names_row_and_column(tmp_path):
    path = tmp_path / "vms.csv"
    path.write_text(
        "InstanceType,AcceleratorName,AcceleratorCount,Price,SpotPrice,Region\n"
        "p5.48xlarge,H100,8,55.04,,us-east-1\n"
        "p4d.24xlarge,A100,8,cheap,,us-east-1\n"
    )
    with pytest.raises(SkyPilotImportError, match=r"row 3: Price 'cheap' is not a number"):
        import_vms_csv(path, observed="2026-11-01")


def test_missing_columns_are_named(tmp_path):
    path = tmp_path / "vms.csv"
    path.write_text("InstanceType,Price\nx,1\n")
    with pytest.raises(SkyPilotImportError, match="missing column"):
        import_vms_csv(path, observed="2026-11-01")
