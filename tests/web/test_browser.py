"""End to end: start `gpuplan serve`'s app on a free port and drive every page in both
languages in headless Chromium (Debian's /usr/bin/chromium through Playwright), with the
server, browser and in-page layout check of scripts/web_screenshots.py."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "web_screenshots.py"


def _load_script() -> Any:
    spec = importlib.util.spec_from_file_location("web_screenshots", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


shots = _load_script()

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        shots.chromium() is None,
        reason="/usr/bin/chromium is absent (apt-get install -y chromium; .ci/run installs it)",
    ),
]


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    pytest.importorskip("uvicorn")
    with shots.served() as base:
        yield base


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    pytest.importorskip("playwright.sync_api")
    with shots.browser() as launched:
        yield launched


ANSWER_WORDS = {
    ("plan", "en"): "Rent", ("plan", "zh"): "租用",
    ("tco", "en"): "buy", ("tco", "zh"): "自建",
}  # fmt: skip
CHARTS = {"plan": 4, "estimate": 2, "quote": 1, "tco": 1, "catalog": 0}
"""Charts each page's answer has at least (the plan's buy-versus-rent chart needs a budget
over the break-even, so it is not counted)."""


@pytest.mark.parametrize("lang", shots.LANGUAGES)
@pytest.mark.parametrize("name", shots.PAGES)
@pytest.mark.parametrize("width", [1280, 390])
def test_every_page_answers_and_no_label_or_cell_overflows(
    server, browser, tmp_path, name, lang, width
):
    """The page's example submitted, a full-page screenshot taken, and in the page: every
    chart label inside its SVG and clear of the others, dates and amounts on one line, the
    page no wider than a desktop or a phone window."""
    screenshot = tmp_path / f"{name}-{lang}-{width}.png"
    found = shots.visit(browser, server, name, lang, screenshot, width=width)
    assert found["status"] == 200
    assert found["faults"] == []
    assert found["charts"] >= CHARTS[name]
    assert found["labels"] >= 5 * CHARTS[name]
    assert screenshot.stat().st_size > 10_000
    word = ANSWER_WORDS.get((name, lang))
    if word:
        assert word.lower() in found["answer"].lower()


def test_the_check_finds_a_clipped_label_and_a_wrapped_date(server, browser):
    """The in-page check itself: a label past its SVG's edge, two labels on top of each other
    and a date squeezed into a narrow cell are each reported."""
    page = browser.new_page()
    page.set_content(
        '<svg class="chart" viewBox="0 0 200 100" width="200" aria-label="c">'
        '<text x="190" y="50" font-size="12">计算：访存受限算子</text>'
        '<text x="10" y="80" font-size="12">one</text><text x="12" y="80" font-size="12">two</text>'
        '</svg><table><tr><td style="width:2em;max-width:2em;white-space:normal;'
        'word-break:break-all">2026-08-22</td></tr></table>'
    )
    faults = page.evaluate(shots.LAYOUT_CHECK)["faults"]
    page.close()
    assert any("计算：访存受限算子" in fault and "outside" in fault for fault in faults)
    assert any("overlap" in fault for fault in faults)
    assert any("2026-08-22" in fault and "lines" in fault for fault in faults)


@pytest.mark.parametrize(("lang", "answer_word"), [("en", "Rent"), ("zh", "租用")])
def test_plan_form_submits_and_renders_table_and_charts(server, browser, lang, answer_word):
    page = browser.new_page()
    page.goto(f"{server}/plan?lang={lang}")
    page.fill("#model", "llama-3.1-8b")
    page.select_option("#method", "qlora")
    page.fill("#tokens", "100M")
    page.fill("#seq_len", "2048")
    page.fill("#global_batch", "32")
    page.fill("#budget", "¥2000")
    page.fill("#max_gpus", "4")
    page.click("#submit")
    page.wait_for_selector("#answer")
    assert answer_word in page.inner_text("#answer")
    rows = page.locator("#plans table tbody tr")
    assert rows.count() >= 1
    assert page.locator("#memory svg").count() == 1
    assert page.locator("#pareto svg circle").count() >= 1
    box = page.locator("#memory svg").bounding_box()
    assert box is not None and box["width"] > 300 and box["height"] > 100
    page.close()


def test_a_path_as_model_shows_the_message(server, browser):
    page = browser.new_page()
    page.goto(f"{server}/plan?lang=en")
    page.fill("#model", "/etc/passwd")
    page.click("#submit")
    page.wait_for_selector(".error")
    assert "paths on the server are not opened" in page.inner_text(".error")
    page.close()
