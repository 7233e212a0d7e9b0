"""The catalog's tables are built once (``report.catalog``) and every face shows them."""

from __future__ import annotations

import html

from fastapi.testclient import TestClient
from typer.testing import CliRunner

from gpuplan.catalog import all_gpus, all_models
from gpuplan.cli.app import app
from gpuplan.jsonable import jsonable
from gpuplan.report.catalog import gpus_table, models_table, offers_table
from gpuplan.services import catalog
from gpuplan.web import services
from gpuplan.web.app import create_app


def run(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    return result.output


def test_listings_are_one_row_per_catalog_entry_with_exact_counts() -> None:
    models = models_table(jsonable(catalog.models()), "en")
    assert [row[0] for row in models.rows] == [model.name for model in all_models()]
    assert [row[2] for row in models.rows] == [f"{m.total_params:,}" for m in all_models()]
    gpus = gpus_table(jsonable(catalog.gpus()), "en")
    assert [row[0] for row in gpus.rows] == [gpu.id for gpu in all_gpus()]
    assert all(row[-1] == gpu.source for row, gpu in zip(gpus.rows, all_gpus(), strict=True))


def test_the_terminal_leaves_the_sources_out_first_and_wide_shows_them() -> None:
    narrow = run("gpus")
    assert "left out" in narrow and "https://" not in narrow
    wide = CliRunner().invoke(app, ["gpus", "--wide"], env={"COLUMNS": "80"}).output
    assert "https://" in wide


def test_the_web_catalog_and_the_terminal_show_the_same_offer_lines() -> None:
    entries = services.offers(gpu="rtx-4090-24gb")
    table = offers_table(entries, "en")
    page = html.unescape(TestClient(create_app()).get("/catalog").text)
    terminal = " ".join(run("offers", "--gpu", "rtx-4090-24gb", "--wide").split())
    for row in table.rows:
        for line in row[2].splitlines():
            assert line in page, line
            assert " ".join(line.split()) in terminal, line
