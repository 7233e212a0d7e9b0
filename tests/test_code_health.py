"""The habits that keep the codebase healthy, run with the test suite: ruff and mypy."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)


@pytest.mark.skipif(
    shutil.which("ruff") is None, reason="ruff is not installed (pip install -e '.[test]')"
)
def test_ruff_lint_passes():
    result = _run("ruff", "check", "src", "tests", "benchmarks")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.skipif(
    shutil.which("ruff") is None, reason="ruff is not installed (pip install -e '.[test]')"
)
def test_ruff_format_is_clean():
    result = _run("ruff", "format", "--check", "src", "tests", "benchmarks")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow
def test_mypy_passes_on_the_package():
    pytest.importorskip("mypy")
    result = _run(sys.executable, "-m", "mypy")
    assert result.returncode == 0, result.stdout + result.stderr


def test_import_does_not_load_heavy_modules():
    code = "import sys, gpuplan; heavy = [m for m in ('numpy', 'typer', 'rich', 'yaml', 'msgspec') if m in sys.modules]; print(heavy)"
    result = _run(sys.executable, "-c", code)
    assert result.stdout.strip() == "[]", result.stdout + result.stderr


def test_generated_plan_table_is_current():
    """docs/plan.md is generated from the catalog and the models; a change to either reruns
    ``python scripts/plan_table.py``."""
    result = _run(sys.executable, "scripts/plan_table.py", "--check")
    assert result.returncode == 0, result.stderr


def test_only_the_catalog_package_opens_package_data():
    """Every catalog file is read (and checked against its schema) by ``gpuplan.catalog``."""
    package = ROOT / "src" / "gpuplan"
    readers = sorted(
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if "resources.files" in path.read_text("utf-8")
        or "importlib.resources" in path.read_text("utf-8")
    )
    assert readers and all(path.startswith("catalog/") for path in readers), readers
