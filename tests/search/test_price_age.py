"""Every plan carries the age of the price it pays and is flagged past STALE_AFTER_DAYS (or
when the price is undated), in JSON, in the plan table and in both languages."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuplan.api import plan_search
from gpuplan.pricing.provenance import STALE_AFTER_DAYS, Provenance, oldest_price
from gpuplan.report.plan import plan_cells

TODAY = dt.date(2026, 12, 3)
OLD = TODAY - dt.timedelta(days=STALE_AFTER_DAYS + 34)
FRESH = TODAY - dt.timedelta(days=3)
PROVIDER = "Example Age Cloud"
JOB = {
    "model": "llama-3.1-8b",
    "method": "qlora",
    "seq_len": 2048,
    "global_batch": 32,
    "tokens": "100M",
}


def _offer(offer_id: str, price: float, plans: str) -> str:
    return f"""
[[offers]]
id = "{offer_id}"
gpu = "rtx-4090-24gb"
gpus = 1
topology = {{ intra_node = "none", p2p = false, network = "none", source = "test", observed = "{FRESH}" }}
plans = [ {plans} ]
"""


def _plan(mode: str, price: float, observed: str) -> str:
    return f'{{ mode = "{mode}", price = {price}, per = "gpu", observed = "{observed}", source = "test" }}'


@pytest.fixture(scope="module")
def offers_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("offers") / "age.toml"
    body = f'provider = "{PROVIDER}"\ncurrency = "USD"\n'
    body += _offer("age-old", 0.2, _plan("per_second", 0.2, OLD.isoformat()))
    body += _offer("age-fresh", 0.3, _plan("per_second", 0.3, FRESH.isoformat()))
    body += _offer("age-undated", 0.25, _plan("per_second", 0.25, f"undated<={FRESH}"))
    # A fresh metered price beside an old monthly package the short job never buys.
    body += _offer(
        "age-unused-package",
        0.35,
        _plan("per_second", 0.35, FRESH.isoformat()) + ", " + _plan("monthly", 50, OLD.isoformat()),
    )
    path.write_text(body, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def rows(offers_file: Path) -> dict[str, dict]:
    result = plan_search(
        JOB, offers_file=str(offers_file), providers=(PROVIDER,), today=TODAY, limit=50
    )
    by_offer: dict[str, dict] = {}
    for row in result["plans"]:
        by_offer.setdefault(row["cost"]["offer"], row)
    assert set(by_offer) == {"age-old", "age-fresh", "age-undated", "age-unused-package"}
    return by_offer


def _codes(row: dict) -> set[str]:
    return {notice["code"] for notice in row["warnings"]}


def test_a_price_older_than_the_limit_is_flagged(rows: dict[str, dict]) -> None:
    cost = rows["age-old"]["cost"]
    assert cost["price_age_days"] == (TODAY - OLD).days > STALE_AFTER_DAYS
    assert cost["price_observed"] == OLD.isoformat() and cost["price_source"] == "test"
    assert "stale_price" in _codes(rows["age-old"])
    notice = next(n for n in rows["age-old"]["warnings"] if n["code"] == "stale_price")
    assert str((TODAY - OLD).days) in notice["text"] and str(STALE_AFTER_DAYS) in notice["text"]


def test_a_fresh_price_is_shown_but_not_flagged(rows: dict[str, dict]) -> None:
    cost = rows["age-fresh"]["cost"]
    assert cost["price_age_days"] == (TODAY - FRESH).days
    assert not _codes(rows["age-fresh"]) & {"stale_price", "undated_price"}


def test_only_the_prices_a_plan_pays_count(rows: dict[str, dict]) -> None:
    row = rows["age-unused-package"]
    assert "monthly" not in row["cost"]["billing_mix"]
    assert row["cost"]["price_age_days"] == (TODAY - FRESH).days
    assert "stale_price" not in _codes(row)


def test_an_undated_price_is_flagged_as_undated(rows: dict[str, dict]) -> None:
    row = rows["age-undated"]
    assert row["cost"]["price_date_quality"] == "undated"
    assert "undated_price" in _codes(row) and "stale_price" not in _codes(row)


def test_the_plan_table_shows_the_age_in_both_languages(rows: dict[str, dict]) -> None:
    days = str((TODAY - OLD).days)
    english = plan_cells(rows["age-old"], "en")
    chinese = plan_cells(rows["age-old"], "zh")
    assert f"price {days} d old" in english["billing"] and days in english["notes"]
    assert f"{days} 天" in chinese["billing"] and f"{days} 天" in chinese["notes"]
    assert "undated" in plan_cells(rows["age-undated"], "en")["billing"]


def test_the_cli_plan_prints_the_age_and_the_warning(offers_file: Path) -> None:
    from gpuplan.cli.app import app

    runner = CliRunner()
    args = ["plan", "--model", "llama-3.1-8b", "--method", "qlora", "--tokens", "100M"]
    args += ["--seq-len", "2048", "--global-batch", "32", "--offers", str(offers_file)]
    args += ["--provider", PROVIDER]
    shown = runner.invoke(app, [*args, "--json"], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    plans = json.loads(shown.output)["plans"]
    old = next(plan for plan in plans if plan["cost"]["offer"] == "age-old")
    assert old["cost"]["price_age_days"] > STALE_AFTER_DAYS
    assert "stale_price" in {notice["code"] for notice in old["warnings"]}
    table = runner.invoke(app, args, env={"COLUMNS": "250"})
    assert table.exit_code == 0, table.output
    assert f"price {old['cost']['price_age_days']} d" in table.output
    assert table.output.count("older than") == 1, "the notice is said once, under the table"


def test_the_oldest_price_decides_and_the_limit_is_exclusive() -> None:
    def provenance(observed: str) -> Provenance:
        return Provenance.from_fields({"source": "test", "observed": observed}, "test")

    limit = TODAY - dt.timedelta(days=STALE_AFTER_DAYS)
    at_limit = oldest_price([provenance(FRESH.isoformat()), provenance(limit.isoformat())], TODAY)
    assert at_limit is not None and at_limit.days == STALE_AFTER_DAYS and not at_limit.stale
    past = oldest_price([provenance((limit - dt.timedelta(days=1)).isoformat())], TODAY)
    assert past is not None and past.stale
    assert oldest_price([], TODAY) is None
