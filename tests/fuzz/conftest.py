"""The fuzz suite's budget: ``bounds.examples()`` cases per test, a few dozen by default (a few
hundred in all), ``LONG_EXAMPLES`` under ``pytest -m fuzz`` (thousands in all), or
``$GPUPLAN_FUZZ_EXAMPLES`` each. Every module here sets ``pytestmark = pytest.mark.fuzz``."""

from __future__ import annotations

import os

import pytest

from .bounds import LONG_EXAMPLES, SEEN


def pytest_configure(config: pytest.Config) -> None:
    if "fuzz" in (config.option.markexpr or ""):
        os.environ.setdefault("GPUPLAN_FUZZ_EXAMPLES", str(LONG_EXAMPLES))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if SEEN["cases"]:
        terminalreporter.write_line(
            f"fuzz: {SEEN['cases']:,} bounded calls ({SEEN['refused']:,} refused with an "
            f"InputError), slowest {SEEN['slowest_seconds']:.2f} s, peak memory "
            f"{SEEN['peak_growth_bytes'] / 2**20:.0f} MiB above the start"
        )
