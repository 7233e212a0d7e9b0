"""Every table command at 80 columns, piped, in English and Chinese: no line is wider than the
terminal (CJK counted as two cells) and the key cells (GPU, count, run length, cost, offer id,
model id) show whole, as the command's own ``--json`` gives them; ``--wide`` shows every column
at any width."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.cells import cell_len
from typer.testing import CliRunner

from gpuplan.cli.app import app
from gpuplan.i18n import format_amount, set_language
from gpuplan.report.plan import run_length

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
WIDTH = 80
LANGUAGES = ("en", "zh")


@pytest.fixture(autouse=True)
def language_reset() -> Iterator[None]:
    yield
    set_language(None)


def run(*args: str, lang: str = "en", width: int = WIDTH) -> str:
    """``gpuplan --lang LANG ARGS`` piped into a terminal ``width`` cells wide."""
    result = CliRunner().invoke(
        app,
        ["--lang", lang, *args],
        env={"COLUMNS": str(width)},
        terminal_width=width,
        catch_exceptions=False,
    )
    assert result.exit_code in (0, 1), result.output
    return result.stdout


def json_of(*args: str) -> object:
    return json.loads(run(*args, "--json"))


def assert_fits(text: str, keys: list[str]) -> None:
    """No line wider than ``WIDTH`` cells, no cut cell, every key whole on one line."""
    lines = text.splitlines()
    too_wide = [line for line in lines if cell_len(line) > WIDTH]
    assert not too_wide, f"{len(too_wide)} lines over {WIDTH} cells: {too_wide[:3]}"
    assert "…" not in text
    missing = [key for key in keys if not any(key in line for line in lines)]
    assert not missing, f"cut or missing: {missing[:5]}"


def plan_keys(plans: list[dict], lang: str) -> list[str]:
    """GPUs with their count, offer id, total without its symbol, run length in h or days."""
    keys = []
    for plan in plans:
        keys += [f"{plan['count']}x {plan['gpu']}", plan["cost"]["offer"]]
        keys.append(format_amount(plan["cost"]["total"]))
        keys.append(run_length(plan["duration"]["seconds"], lang))
    return keys


PLAN_JOBS = [
    ("plan", "--preset", "student"),
    ("plan", "--preset", "startup", "--limit", "5"),
    ("plan", "--preset", "enterprise", "--limit", "3"),
    ("plan", "--model", "llama-3.1-8b", "--method", "lora", "--tokens", "20M", "--currency", "USD"),
]


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("args", PLAN_JOBS, ids=lambda args: " ".join(args[1:3]))
def test_plan_table_fits_with_gpus_offer_and_cost_whole(args: tuple[str, ...], lang: str) -> None:
    plans = json_of(*args)["plans"]  # type: ignore[index]
    assert plans
    text = run(*args, lang=lang)
    assert_fits(text, plan_keys(plans, lang))
    assert not re.search(r"(?<![\d.])0\.0 d", text) and "0.00" not in text.split("\n")[-1]


def test_plan_price_age_is_short_in_rows_and_said_once_under_the_table() -> None:
    text = run("plan", "--preset", "student")
    plans = json_of("plan", "--preset", "student")["plans"]  # type: ignore[index]
    stale = [plan for plan in plans if plan["cost"].get("price_date_quality") != "undated"]
    assert stale, "the student preset has dated prices"
    days = stale[0]["cost"]["price_age_days"]
    assert f"price {days} d" in " ".join(text.split())
    assert text.count("older than 90 days") == 1
    assert "the price used was observed" not in text
    assert "per_second" not in text and "per_minute" not in text


@pytest.mark.parametrize("lang", LANGUAGES)
def test_catalog_tables_fit_with_ids_whole(lang: str) -> None:
    models = json_of("models")
    assert_fits(
        run("models", lang=lang),
        [model["name"] for model in models] + [f"{model['total_params']:,}" for model in models],  # type: ignore[union-attr]
    )
    gpus = json_of("gpus")
    assert_fits(run("gpus", lang=lang), [gpu["id"] for gpu in gpus])  # type: ignore[union-attr]
    assert_fits(run("gpu", "h100-sxm-80gb", lang=lang), ["989 TFLOP/s", "$30,000"])
    assert_fits(run("model", "llama-3.1-8b", lang=lang), ["8,030,261,248"])


@pytest.mark.parametrize("lang", LANGUAGES)
def test_offers_table_fits_with_offer_ids_and_gpus_whole(lang: str) -> None:
    offers = json_of("offers")
    keys = [offer["id"] for offer in offers]  # type: ignore[union-attr]
    keys += [f"{offer['gpus']} x {offer['gpu']}" for offer in offers]  # type: ignore[union-attr]
    assert_fits(run("offers", lang=lang), keys)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_quote_tco_and_audit_tables_fit_with_amounts_whole(lang: str) -> None:
    quote = (
        "quote",
        "--offer",
        "aws-p5.48xlarge-us-east-1",
        "--duration",
        "40d",
        "--egress",
        "2TB",
    )
    total = json_of(*quote)["total"]  # type: ignore[index]
    text = run(*quote, lang=lang)
    assert_fits(text, [f"{float(total):,.2f}"])
    from gpuplan.report.tco import tco_table

    tco = json_of("tco", str(EXAMPLES / "seed-tco.toml"))
    text = run("tco", str(EXAMPLES / "seed-tco.toml"), lang=lang)
    assert_fits(text, [row[1] for row in tco_table(tco, lang).rows])  # type: ignore[arg-type]
    audit = ("audit", str(EXAMPLES / "usage-sample.csv"), "--offer", "runpod-secure-h100-sxm-x1")
    total = json_of(*audit)["total"]  # type: ignore[index]
    assert_fits(run(*audit, lang=lang), [f"{float(total):,.2f}"])


@pytest.mark.parametrize("lang", LANGUAGES)
def test_estimate_and_memory_tables_fit(lang: str) -> None:
    assert_fits(run("estimate", str(EXAMPLES / "llama-8b-fsdp-8xh100.yaml"), lang=lang), [])
    memory = ("memory", "--model", "llama-3.1-70b", "--gpu", "h100", "--count", "8", "--zero", "3")
    assert_fits(run(*memory, lang=lang), ["80.00"])


@pytest.mark.parametrize("lang", LANGUAGES)
def test_bench_tables_fit(lang: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GPUPLAN_DATA_DIR", str(tmp_path))
    from test_bench_commands import stored_run

    run_id = str(stored_run())
    assert_fits(run("bench", "history", lang=lang), [run_id, "h100-sxm-80gb", "WARN"])
    assert_fits(run("bench", "show", run_id, lang=lang), ["WARN"])
    compare = ("bench", "compare", run_id, "azure-nd96isr-h100-v5-eastus")
    assert_fits(run(*compare, lang=lang), ["WARN"])


@pytest.mark.parametrize(
    ("args", "hidden"),
    [
        (("models",), "vocab"),
        (("gpus",), "observed"),
        (("plan", "--preset", "enterprise", "--limit", "2"), "per M tok"),
    ],
)
def test_wide_shows_every_column_at_any_width(args: tuple[str, ...], hidden: str) -> None:
    narrow = run(*args)
    assert "--wide" in narrow and hidden not in narrow.split("\n\n")[-1].split("left out")[0]
    wide = run(*args, "--wide")
    assert hidden in wide and "left out" not in wide
    assert max(cell_len(line) for line in wide.splitlines()) > WIDTH
    assert "…" not in wide


def test_plan_amounts_are_in_the_asked_currency_with_the_rate_said_once() -> None:
    args = ("plan", "--model", "llama-3.1-8b", "--method", "qlora", "--tokens", "100M")
    plans = json_of(*args, "--currency", "USD")["plans"]  # type: ignore[index]
    assert {plan["cost"]["currency"] for plan in plans} == {"USD"}
    text = run(*args, "--currency", "USD")
    assert "cost $" in text and "¥" not in text.split("amounts in")[0]
    assert text.count("1 USD = ") == 1, "the CNY offers' rate is printed once"
    assert "CNY" in " ".join(text.split("amounts in USD")[1].split())


def test_tco_in_another_currency_converts_every_amount_and_names_the_rate() -> None:
    tco_file = str(EXAMPLES / "seed-tco.toml")
    own = json_of("tco", tco_file)
    dollars = json_of("tco", tco_file, "--currency", "USD")
    assert own["currency"] == "CNY" and dollars["currency"] == "USD"  # type: ignore[index]
    rate = float(own["buy_total"]) / float(dollars["buy_total"])  # type: ignore[index]
    assert 5 < rate < 9, "a CNY per USD rate"
    assert abs(float(own["rent_total"]) / float(dollars["rent_total"]) - rate) < 1e-6 * rate  # type: ignore[index]
    text = run("tco", tco_file, "--currency", "USD")
    assert text.count("1 USD = ") == 1 and "(USD" in text
    assert_fits(text, [format_amount(row["buy_cumulative"]) for row in dollars["table"]])  # type: ignore[index]


def test_plan_tables_are_the_reports_table_in_both_views() -> None:
    """The terminal prints the report's plans table: with ``--wide`` every one of its columns
    under the report's headers; at 80 columns its narrow view, naming what it left out."""
    from gpuplan.report.plan import plans_table

    args = ("plan", "--preset", "enterprise", "--limit", "2")
    result = json.loads(run(*args, "--json"))
    wide = run(*args, "--wide")
    for header in plans_table(result, "en").headers:
        assert header in wide, header
    narrow = run(*args)
    view = plans_table(result, "en", narrow=True)
    assert f"left out to fit the terminal: {view.headers[4]}" in " ".join(narrow.split())
    for row in view.rows:
        assert row[1] in narrow and row[3] in narrow
