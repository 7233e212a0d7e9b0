"""End to end: start `gpuplan serve`'s app on a free port and drive the plan page in headless
Chromium (Debian's /usr/bin/chromium through Playwright)."""

from __future__ import annotations

import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not CHROMIUM.exists() and shutil.which("chromium") is None,
        reason="/usr/bin/chromium is absent (apt-get install -y chromium; .ci/run installs it)",
    ),
]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    uvicorn = pytest.importorskip("uvicorn")
    from gpuplan.web.app import create_app

    port = _free_port()
    config = uvicorn.Config(create_app(), host="127.0.0.1", port=port, log_level="warning")
    running = uvicorn.Server(config)
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not running.started:
        if time.monotonic() > deadline:
            pytest.fail("the server did not start")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    running.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def browser():
    playwright_api = pytest.importorskip("playwright.sync_api")
    with playwright_api.sync_playwright() as playwright:
        executable = str(CHROMIUM) if CHROMIUM.exists() else shutil.which("chromium")
        launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


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
