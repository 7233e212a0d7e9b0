"""Test-session settings shared by every test folder."""

from __future__ import annotations

import os
import tempfile

import pytest


def pytest_configure(config: pytest.Config) -> None:
    """Parsed-catalog cache in a fresh folder: tests neither read nor leave the user's cache.
    Set in the environment, so that the CLI processes tests start use it too."""
    os.environ["GPUPLAN_CACHE_DIR"] = tempfile.mkdtemp(prefix="gpuplan-cache-")
