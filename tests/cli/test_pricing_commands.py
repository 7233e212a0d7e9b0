"""`gpuplan offers|quote|tco|audit`, run through the real entry point (gpuplan.cli.app:main)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SEED_TCO = ROOT / "examples" / "seed-tco.toml"
USAGE = ROOT / "examples" / "usage-sample.csv"
SKYPILOT_SAMPLE = ROOT / "tests" / "pricing" / "data" / "skypilot_vms_sample.csv"


def test_offers_json_lists_sources_and_medians(cli):
    code, out, _ = cli("offers", "--gpu", "H100 SXM", "--json")
    assert code == 0
    offers = json.loads(out)
    assert offers and all(offer["gpu"] == "h100-sxm-80gb" for offer in offers)
    for key in ("id", "provider", "gpu", "gpus", "plans", "fees", "source", "observed"):
        assert key in offers[0]
    assert offers[0]["catalog_median_per_gpu_hour"] > 0
    assert "vs_catalog_median" in offers[0]["plans"][0]


def test_offers_table_and_provider_filter(cli):
    code, out, _ = cli("offers", "--provider", "星宇智算")
    assert code == 0
    assert "xingyu-h100-x8" in out


def test_offers_check_passes_on_the_catalog(cli):
    code, out, _ = cli("offers", "--check", "--json")
    assert code == 0
    assert json.loads(out)["errors"] == 0


def test_offers_check_rejects_a_bad_user_file(cli, tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text(
        'provider = "Mine"\ncurrency = "USD"\n[[offers]]\nid = "bad"\ngpu = "h100-sxm-80gb"\ngpus = 1\n'
        'plans = [ { mode = "hourly", price = 2, per = "gpu", source = "s", observed = "2026-11-01" },'
        ' { mode = "spot", price = 3, per = "gpu", source = "s", observed = "2026-11-01" } ]\n'
    )
    code, out, _ = cli("offers", "--check", "--offers", str(path))
    assert code == 1
    assert f"error {path}: offer 'bad': plans[1].price: spot" in out
    assert "not below on-demand" in out
    code, _, err = cli("quote", "--offer", "bad", "--duration", "1d", "--offers", str(path))
    assert code == 2
    assert err.startswith(f"error: {path}: offer 'bad': plans[1].price: spot")
    assert "rejected" in err


def test_quote_json_contract(cli):
    code, out, _ = cli(
        "quote",
        "--offer",
        "xingyu-rtx-4090-x1",
        "--duration",
        "40d",
        "--tokens",
        "2B",
        "--tokens-per-second",
        "3000",
        "--json",
    )
    assert code == 0
    quote = json.loads(out)
    assert quote["currency"] == "CNY"
    assert quote["duration_seconds"] == 40 * 86400
    assert quote["total"] == pytest.approx(1100 + 1.86 * 240)
    assert quote["billing_mix"]["description"].startswith("1 x monthly")
    assert quote["lines"][0]["kind"] == "compute"
    assert quote["per_million_tokens"] == pytest.approx(quote["total"] / 2000)


def test_quote_in_another_currency_and_table(cli):
    code, out, _ = cli(
        "quote",
        "--offer",
        "aws-p5.48xlarge-us-east-1",
        "--duration",
        "3d",
        "--count",
        "2",
        "--storage",
        "2TB",
        "--egress",
        "500GB",
        "--currency",
        "cny",
        "--fx",
        "USD/CNY=7",
    )
    assert code == 0
    assert "Cheapest billing mix" in out and "Spot: expected" in out and "USD to CNY at 7" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("quote", "--offer", "no-such-offer", "--duration", "1d"),
            "unknown offer 'no-such-offer'",
        ),
        (("quote", "--offer", "lambda-h100-sxm-x8", "--duration", "-3d"), "must not be negative"),
        (
            ("quote", "--offer", "lambda-h100-sxm-x8", "--duration", "soon"),
            "cannot read 'soon' as a duration",
        ),
        (("quote", "--offer", "lambda-h100-sxm-x8"), "give --duration"),
        (
            ("quote", "--offer", "lambda-h100-sxm-x8", "--duration", "1d", "--currency", "GBP"),
            "no exchange rate",
        ),
    ],
)
def test_quote_bad_input_is_one_line(cli, args, message):
    code, _, err = cli(*args)
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def test_tco_reproduces_the_seed_article(cli):
    code, out, _ = cli("tco", str(SEED_TCO), "--json")
    assert code == 0
    result = json.loads(out)
    assert result["currency"] == "CNY"
    assert result["buy_total"] == 9_840_000
    assert result["rent_total"] == 3_841_200
    code, out, _ = cli("tco", str(SEED_TCO))
    assert "¥9,840,000.00" in out and "¥3,841,200.00" in out


def test_tco_with_a_rented_offer(cli, tmp_path):
    path = tmp_path / "tco.toml"
    path.write_text(
        '[tco]\ncurrency = "USD"\nyears = 1\nutilization = 0.5\ngpus = 8\n[buy]\ngpus = 240000\n'
        '[operations]\nstaff = 10000\n[rent]\noffer = "lambda-h100-sxm-x8"\n'
    )
    code, out, err = cli("tco", str(path), "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["rent_total"] == pytest.approx(3.99 * 8 * 24 * 365 * 0.5)


def test_tco_malformed_file(cli, tmp_path):
    path = tmp_path / "tco.toml"
    path.write_text("[tco\n")
    code, _, err = cli("tco", str(path))
    assert code == 2
    assert "malformed TOML" in err


def test_audit_sample_usage(cli):
    code, out, _ = cli("audit", str(USAGE), "--offer", "runpod-secure-h100-sxm-x1", "--json")
    assert code == 0
    result = json.loads(out)
    assert result["currency"] == "USD"
    assert len([line for line in result["lines"] if line["kind"] == "compute"]) == 4
    assert result["total"] > result["compute"] > 0
    code, out, _ = cli(
        "audit",
        str(USAGE),
        "--offer",
        "runpod-secure-h100-sxm-x1",
        "--invoiced",
        "$240",
    )
    assert code == 0
    assert "Invoice $240.00 minus recomputed" in out


def test_audit_malformed_row(cli, tmp_path):
    path = tmp_path / "usage.csv"
    path.write_text("instance,start,stop,gpus\na,2026-11-02T08:00:00Z,not-a-time,1\n")
    code, _, err = cli("audit", str(path), "--offer", "runpod-secure-h100-sxm-x1")
    assert code == 2
    assert "row 2: stop" in err


def test_import_writes_a_valid_offers_file(cli, tmp_path):
    output = tmp_path / "aws.toml"
    code, out, err = cli(
        "offers",
        "import",
        str(SKYPILOT_SAMPLE),
        "--provider",
        "aws-imported",
        "--observed",
        "2026-11-01",
        "--output",
        str(output),
    )
    assert code == 0, err
    assert f"wrote {output}: 3 offers of aws-imported" in out.replace("\n", "")
    assert "placeholder price 700.0" in out
    code, out, _ = cli(
        "offers",
        "--offers",
        str(output),
        "--provider",
        "aws-imported",
        "--json",
    )
    assert code == 0
    assert {offer["id"] for offer in json.loads(out)} >= {"aws-imported-p5.48xlarge-us-east-1"}


OWN = """provider = "Mine"
currency = "USD"
[[offers]]
id = "{offer_id}"
gpu = "H100 SXM"
gpus = 8
topology = {{ intra_node = "nvlink4", p2p = true, network = "none", source = "s", observed = "2026-11-01" }}
plans = [ {{ mode = "hourly", price = {price}, per = "gpu", source = "my quote", observed = "2026-11-01" }} ]
"""


def own_offers(folder: Path, name: str, offer_id: str, price: float) -> Path:
    path = folder / name
    path.write_text(OWN.format(offer_id=offer_id, price=price))
    return path


def test_offers_schema_prints_the_shipped_json_schema(cli):
    from gpuplan.catalog.schema import shipped_schema_text

    code, out, _ = cli("offers", "schema")
    assert code == 0 and out == shipped_schema_text("offers")
    code, out, _ = cli("offers", "schema", "--file", "gpus")
    assert code == 0 and json.loads(out)["title"] == "gpuplan gpus file"


def test_several_offers_files_merge_and_a_duplicate_is_reported(cli, tmp_path):
    first = own_offers(tmp_path, "first.toml", "mine-a", 2.5)
    second = own_offers(tmp_path, "second.toml", "mine-b", 2.4)
    again = own_offers(tmp_path, "again.toml", "mine-a", 2.3)
    code, out, err = cli(
        "offers", "--provider", "Mine", "--json",
        "--offers", str(first), "--offers", str(second), "--offers", str(again),
    )  # fmt: skip
    assert code == 0
    offers = {offer["id"]: offer for offer in json.loads(out)}
    assert set(offers) == {"mine-a", "mine-b"}
    assert offers["mine-a"]["plans"][0]["price"] == 2.3
    assert offers["mine-a"]["origin"] == str(again)
    assert f"note: offer 'mine-a' of {again} replaces the one of {first}" in err


def test_a_misspelled_key_in_a_users_file_is_refused_by_check_and_by_every_command(cli, tmp_path):
    path = own_offers(tmp_path, "mine.toml", "mine-a", 2.5)
    path.write_text(path.read_text().replace("gpus = 8", 'gpus = 8\nregoin = "us"'))
    for args in (("offers", "--check"), ("quote", "--offer", "mine-a", "--duration", "1d")):
        code, _, err = cli(*args, "--offers", str(path))
        assert code == 2
        assert err.startswith(f"error: {path}: offer 'mine-a': regoin: unknown key")
        assert "did you mean region?" in err and len(err.strip().splitlines()) == 1


def test_quote_converts_with_fx_per_dollar_and_a_rates_file(cli, tmp_path):
    args = ("quote", "--offer", "aws-p5.48xlarge-us-east-1", "--duration", "1h", "--json")
    code, out, _ = cli(*args, "--currency", "CNY", "--fx", "CNY=7.1")
    assert code == 0
    assert json.loads(out)["exchange_rate"]["rate"] == pytest.approx(7.1)
    rates = tmp_path / "rates.toml"
    rates.write_text(
        'base = "USD"\n[[rates]]\ncurrency = "CNY"\nper_unit = 0.125\n'
        'source = "my bank"\nobserved = "2026-11-01"\n'
    )
    code, out, _ = cli(*args, "--currency", "CNY", "--fx-file", str(rates))
    assert code == 0
    assert json.loads(out)["exchange_rate"]["rate"] == pytest.approx(8)
    rates.write_text(rates.read_text().replace("per_unit", "per_unti"))
    code, _, err = cli(*args, "--fx-file", str(rates))
    assert code == 2 and f"{rates}: rate 'CNY': per_unti: unknown key" in err


def test_plan_merges_offers_files_and_converts_with_fx(cli, tmp_path):
    first = own_offers(tmp_path, "first.toml", "mine-a", 0.95)
    again = own_offers(tmp_path, "again.toml", "mine-a", 0.9)
    code, out, err = cli(
        "plan", "--model", "llama-3.1-8b", "--tokens", "1B", "--provider", "Mine",
        "--offers", str(first), "--offers", str(again), "--currency", "CNY", "--fx", "CNY=8",
        "--json",
    )  # fmt: skip
    assert code == 0, err
    result = json.loads(out)
    assert result["offer_notes"] and str(again) in result["offer_notes"][0]
    top = result["plans"][0]["cost"]
    assert top["offer"] == "mine-a"
    assert "note: offer 'mine-a'" in err


def test_import_goes_to_the_user_offers_directory(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("GPUPLAN_DATA_DIR", str(tmp_path))
    code, out, err = cli("offers", "import", str(SKYPILOT_SAMPLE), "--provider", "aws", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["format"] == "skypilot" and result["imported"] == 3
    (written,) = result["files"]
    assert written["path"] == str(tmp_path / "catalog" / "offers" / "skypilot-aws.toml")
    assert any(finding["field"] == "InstanceType" for finding in result["findings"])


def test_import_of_a_file_with_nothing_to_import_fails(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("GPUPLAN_DATA_DIR", str(tmp_path))
    path = tmp_path / "vms.csv"
    path.write_text("InstanceType,AcceleratorName,AcceleratorCount,Price,Region\nm5,,,0.1,r\n")
    code, out, _ = cli("offers", "import", str(path))
    assert code == 1
    assert "nothing written" in out
    assert not (tmp_path / "catalog").exists()


def test_import_bad_row_is_one_line(cli, tmp_path):
    path = tmp_path / "quotes.csv"
    path.write_text("provider,gpu,price,currency,per,observed\nA,H100,cheap,USD,gpu,2026-11-01\n")
    code, _, err = cli("offers", "import", str(path), "--output", str(tmp_path / "o.toml"))
    assert code == 2
    assert "row 2, column price" in err
    assert len(err.strip().splitlines()) == 1
