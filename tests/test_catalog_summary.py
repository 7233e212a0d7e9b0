"""benchmarks/catalog_summary.py counts the catalog it reads."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from gpuplan.catalog import all_gpus
from gpuplan.pricing.offers import catalog_offers

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "catalog_summary.py"


def test_the_summary_agrees_with_the_catalog() -> None:
    run = subprocess.run(
        [sys.executable, str(SCRIPT), "--today", "2026-12-03", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    summary = json.loads(run.stdout)
    offers = catalog_offers()
    assert summary["offers"] == len(offers)
    assert summary["prices"] == sum(len(offer.plans) for offer in offers)
    assert summary["providers"] == len({offer.provider for offer in offers})
    assert set(summary["gpus_without_offer"]) == {g.id for g in all_gpus() if g.no_public_offer}
    assert summary["oldest_price"]["days"] >= summary["median_price_age_days"] >= 0
    assert summary["prices_older_than_90_days"] >= summary["prices_older_than_180_days"]
