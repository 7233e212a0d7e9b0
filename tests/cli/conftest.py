"""Run the `gpuplan` entry point in a fresh interpreter (the `cli` fixture, in-process, is in
tests/conftest.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable

import pytest


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
