"""Screenshots of every ``gpuplan serve`` page in English and Chinese, each checked for layout
faults, in headless Chromium (Debian's /usr/bin/chromium through Playwright; no browser is
downloaded).

    python scripts/web_screenshots.py                       # into docs/screenshots/
    python scripts/web_screenshots.py --out /tmp/shots --full-page

Each page is loaded, its form submitted with the values it opens with (the catalog's worked
example for that page), and then checked by :data:`LAYOUT_CHECK` in the page itself:

- every ``<text>`` of every SVG chart lies inside its SVG (the viewBox as drawn), and no two
  labels of one chart overlap;
- every table cell holding one date or amount (``2026-08-22``, ``¥1,234.00``, ``$38.93``) is
  on one line and not wider than its cell (``scrollWidth <= clientWidth``);
- in a desktop window (1000 px and wider) every cell citing a source (``td.source``) is whole
  inside its table's box, not hidden behind its scroll (a phone scrolls wide tables);
- the page itself is not wider than the window (wide tables scroll inside their box).

Exits 1 and prints each fault when any page has one. tests/web/test_browser.py runs the same
:func:`visit` on every page and language (into a temporary folder)."""

from __future__ import annotations

import argparse
import contextlib
import shutil
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
PAGES = ("plan", "estimate", "quote", "tco", "catalog")
LANGUAGES = ("en", "zh")
FORM_OVERRIDES = {"plan": {"#max_gpus": "4"}}
"""Fields changed from the form's own values before submitting (a smaller, quicker search)."""
DOCS_SHOTS = (
    ("plan", "en", "#answer"), ("plan", "zh", "#pareto"), ("estimate", "zh", "#step-time"),
    ("tco", "zh", "#tco"), ("catalog", "zh", ""),
)  # fmt: skip
"""The pages whose screenshots docs/screenshots/ keeps, each scrolled to a part of its answer
(one window, so each PNG stays small)."""

LAYOUT_CHECK = r"""
() => {
  const faults = [];
  const slack = 0.5;
  const inside = (r, box) => r.left >= box.left - slack && r.right <= box.right + slack
    && r.top >= box.top - slack && r.bottom <= box.bottom + slack;
  const overlap = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1
    && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1;
  document.querySelectorAll("svg.chart").forEach((svg, chart) => {
    const box = svg.getBoundingClientRect();
    const labels = [...svg.querySelectorAll("text")].filter(t => t.textContent.trim());
    const rects = labels.map(t => t.getBoundingClientRect());
    labels.forEach((text, i) => {
      if (!inside(rects[i], box)) {
        faults.push(`chart ${chart} (${svg.getAttribute("aria-label")}): label `
          + `"${text.textContent}" outside its box`);
      }
      for (let j = 0; j < i; j++) {
        if (overlap(rects[i], rects[j])) {
          faults.push(`chart ${chart}: labels "${labels[j].textContent}" and `
            + `"${text.textContent}" overlap`);
        }
      }
    });
  });
  const date = /^\d{4}-\d{2}-\d{2}$/;
  const amount = /^[-−]?[¥$€£]\s?\d[\d,.]*\s?(万|亿|[kMB])?$/;
  document.querySelectorAll("td, td .line").forEach(cell => {
    const text = cell.textContent.trim();
    if (!(date.test(text) || amount.test(text))) return;
    const range = document.createRange();
    range.selectNodeContents(cell);
    const tops = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
    if (tops.size > 1) faults.push(`cell "${text}" wraps over ${tops.size} lines`);
    if (cell.scrollWidth > cell.clientWidth + 1 && cell.tagName === "TD") {
      faults.push(`cell "${text}" overflows its cell`);
    }
  });
  const desktop = window.innerWidth >= 1000;
  document.querySelectorAll(desktop ? "td.source" : "none").forEach(cell => {
    const box = cell.closest(".table-scroll");
    if (box && cell.getBoundingClientRect().right > box.getBoundingClientRect().right + 1) {
      faults.push(`source "${cell.textContent.trim().slice(0, 40)}" runs past its table's box`);
    }
  });
  const page = document.documentElement;
  if (page.scrollWidth > window.innerWidth + 1) {
    faults.push(`page is ${page.scrollWidth}px wide in a ${window.innerWidth}px window`);
  }
  return {faults, charts: document.querySelectorAll("svg.chart").length,
          labels: document.querySelectorAll("svg.chart text").length,
          cells: document.querySelectorAll("td").length};
}
"""


def chromium() -> str | None:
    """Debian's Chromium, or one on the PATH; None when there is none."""
    return str(CHROMIUM) if CHROMIUM.exists() else shutil.which("chromium")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def served() -> Iterator[str]:
    """``gpuplan serve``'s app on a free loopback port, in a thread; yields its base address."""
    import uvicorn

    from gpuplan.web.app import create_app

    port = _free_port()
    config = uvicorn.Config(create_app(), host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the server did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@contextlib.contextmanager
def browser() -> Iterator[Any]:
    """Headless Chromium through Playwright."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


def visit(
    chrome: Any,
    base: str,
    name: str,
    lang: str,
    screenshot: Path,
    width: int = 1280,
    full_page: bool = True,
    scroll_to: str = "",
) -> dict[str, Any]:
    """Load page ``name`` in ``lang`` in a ``width`` px window, submit its form as it opens
    (with :data:`FORM_OVERRIDES`), save a screenshot (the whole page, or the window scrolled
    to the ``scroll_to`` selector), and return :data:`LAYOUT_CHECK`'s findings plus
    ``status`` (the answer's HTTP status) and ``answer`` (its text)."""
    page = chrome.new_page(viewport={"width": width, "height": 900})
    try:
        page.goto(f"{base}/{name}?lang={lang}")
        status, answer = 200, ""
        if page.locator("#submit").count():
            for selector, value in FORM_OVERRIDES.get(name, {}).items():
                page.fill(selector, value)
            with page.expect_response(lambda response: response.request.method == "POST") as sent:
                page.click("#submit")
            status = sent.value.status
            page.wait_for_selector("#answer, .error")
            if page.locator("#answer").count():
                answer = page.inner_text("#answer")
        page.wait_for_load_state("load")
        page.evaluate("document.fonts.ready")
        if scroll_to:
            page.evaluate(f"document.querySelector({scroll_to!r}).scrollIntoView()")
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(screenshot), full_page=full_page)
        findings: dict[str, Any] = page.evaluate(LAYOUT_CHECK)
        return {**findings, "status": status, "answer": answer}
    finally:
        page.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=Path("docs/screenshots"))
    parser.add_argument("--all", action="store_true", help="every page, not only DOCS_SHOTS")
    parser.add_argument("--full-page", action="store_true", help="the whole page, not the window")
    parser.add_argument("--width", type=int, default=1280)
    args = parser.parse_args(argv)
    if chromium() is None:
        print("no Chromium: apt-get install -y chromium", file=sys.stderr)
        return 2
    every = [(name, lang, "") for name in PAGES for lang in LANGUAGES]
    failed = False
    with served() as base, browser() as chrome:
        for name, lang, part in every if args.all else DOCS_SHOTS:
            path = args.out / f"{name}-{lang}.png"
            found = visit(chrome, base, name, lang, path, args.width, args.full_page, part)
            size = path.stat().st_size
            print(
                f"{path}: HTTP {found['status']}, {found['charts']} charts, "
                f"{found['labels']} labels, {found['cells']} cells, {size / 1024:.0f} KiB"
            )
            for fault in found["faults"]:
                print(f"  {fault}")
            failed = failed or bool(found["faults"]) or found["status"] != 200
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
