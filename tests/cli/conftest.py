"""Run the `gpuplan` entry point (gpuplan.cli.app:main) in-process, as the console script does."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable

import pytest

from gpuplan.cli.app import main

CliRunner = Callable[..., tuple[int, str, str]]


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> CliRunner:
    """``cli("plan", "--json")`` -> (exit code, stdout, stderr)."""

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


@pytest.fixture
def entry_point() -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run `gpuplan ARGS` in a fresh interpreter: the real exit code and streams."""

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", "from gpuplan.cli.app import main; main()", *args],
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, "COLUMNS": "200"},
        )

    return run
