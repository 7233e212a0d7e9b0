"""Test-session settings shared by every test folder."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable

import pytest

CliRunner = Callable[..., tuple[int, str, str]]


def pytest_configure(config: pytest.Config) -> None:
    """Parsed-catalog cache and user data (bench store, the user's own offers) in fresh
    folders: tests neither read nor leave the user's. Set in the environment, so that the CLI
    processes tests start use them too."""
    os.environ["GPUPLAN_CACHE_DIR"] = tempfile.mkdtemp(prefix="gpuplan-cache-")
    os.environ["GPUPLAN_DATA_DIR"] = tempfile.mkdtemp(prefix="gpuplan-data-")


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> CliRunner:
    """``cli("plan", "--json")`` -> (exit code, stdout, stderr): the entry point
    (gpuplan.cli.app:main) in-process, as the console script runs it."""
    from gpuplan.cli.app import main

    def run(*args: str) -> tuple[int, str, str]:
        monkeypatch.setattr(sys, "argv", ["gpuplan", *args])
        try:
            main()
            code = 0
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else 1
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run
