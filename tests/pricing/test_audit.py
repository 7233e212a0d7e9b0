"""Recomputing a bill from usage records."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from gpuplan.pricing.audit import UsageFileError, audit, read_usage
from gpuplan.pricing.offers import OfferBook

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "usage-sample.csv"


def test_sample_usage_on_runpod_secure_h100():
    offer = OfferBook.build().get("runpod-secure-h100-sxm-x1")
    result = audit(read_usage(SAMPLE), offer, invoiced=Decimal("240"))
    compute = [line for line in result["lines"] if line["kind"] == "compute"]
    assert [line["billed_seconds"] for line in compute] == [45000, 86400, 40, 65730]
    assert result["compute"] == Decimal("3.99") * (45000 + 86400 + 40 + 65730) / 3600
    fees = {line["item"]: line for line in result["lines"] if line["kind"] == "fee"}
    stopped = fees["Volume disk while the pod is stopped (double the running rate)"]
    # pod-a is stopped 12.5 h and then 48 h with 500 GB attached
    assert float(stopped["quantity"]) == pytest.approx(500 * (12.5 + 48) / 720)
    assert float(stopped["amount"]) == pytest.approx(0.2 * 500 * 60.5 / 720)
    assert result["total"] == result["compute"] + result["fees"]
    assert result["invoice_minus_recomputed"] == Decimal("240") - result["total"]


def test_hourly_granularity_rounds_each_run():
    offer = OfferBook.build().get("azure-nc24ads-a100-v4-eastus")
    result = audit(read_usage(SAMPLE), offer)
    compute = [line for line in result["lines"] if line["kind"] == "compute"]
    assert [line["billed_seconds"] for line in compute] == [46800, 86400, 3600, 68400]


def test_per_instance_offer_needs_whole_instances():
    offer = OfferBook.build().get("aws-p5.48xlarge-us-east-1")
    with pytest.raises(UsageFileError, match="whole number of 8-GPU instances"):
        audit(read_usage(SAMPLE), offer)


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("a,2026-11-02T08:00:00Z,2026-11-02T07:00:00Z,1,0,0", "row 2: stop"),
        ("a,yesterday,2026-11-02T07:00:00Z,1,0,0", "row 2: start"),
        ("a,2026-11-02T08:00:00Z,2026-11-02T09:00:00Z,zero,0,0", "row 2: gpus"),
        ("a,2026-11-02T08:00:00Z,2026-11-02T09:00:00Z,1,-5,0", "row 2: storage_gb"),
    ],
)
def test_malformed_rows_name_row_and_column(tmp_path, row, message):
    path = tmp_path / "usage.csv"
    path.write_text("instance,start,stop,gpus,storage_gb,egress_gb\n" + row + "\n")
    with pytest.raises(UsageFileError, match=message):
        read_usage(path)
