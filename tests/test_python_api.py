"""The public Python API (``gpuplan.__all__``): JSON values as returned, the README's example."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import gpuplan
from gpuplan.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
STUDENT = {"model": "llama-3.1-8b", "method": "qlora", "tokens": "100M"}
EXAMPLE = ROOT / "examples" / "llama-8b-fsdp-8xh100.yaml"

CALLS: dict[str, Callable[[], Any]] = {
    "estimate": lambda: gpuplan.estimate(EXAMPLE),
    "plan": lambda: gpuplan.plan(STUDENT, objective="cost", budget="¥2000", deadline="30d"),
}
"""One call of every public function; a function exported without one here fails the test."""


def _plain(value: Any) -> bool:
    """Whether ``value`` is made of JSON's own types only (and finite numbers)."""
    if isinstance(value, dict):
        return all(isinstance(key, str) and _plain(item) for key, item in value.items())
    if isinstance(value, list):
        return all(_plain(item) for item in value)
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, str | int | bool)


def test_every_public_function_has_a_call_here():
    exported = {name for name in gpuplan.__all__ if callable(getattr(gpuplan, name))}
    assert exported == set(CALLS)
    assert isinstance(gpuplan.__version__, str)


@pytest.mark.parametrize("name", list(CALLS))
def test_every_public_result_is_json_as_it_is(name):
    result = CALLS[name]()
    text = json.dumps(result, allow_nan=False)
    assert _plain(result)
    assert json.loads(text) == result


def test_plan_money_is_a_number_in_the_named_currency():
    plans = CALLS["plan"]()
    assert plans
    for row in plans:
        cost = row["cost"]
        assert isinstance(cost["total"], float) and cost["total"] > 0
        assert cost["currency"] in {"CNY", "USD", "EUR"}


def test_the_estimate_takes_the_calibration_profile_argument(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUPLAN_DATA_DIR", str(tmp_path))
    with pytest.raises(InputError, match="123"):
        gpuplan.estimate(EXAMPLE, profile=123)


def _readme_python() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", readme, re.DOTALL)
    (block,) = [block for block in blocks if "gpuplan.estimate(" in block]
    return block


def test_the_readme_example_runs_and_its_job_fits(monkeypatch):
    monkeypatch.chdir(ROOT)
    names: dict[str, Any] = {}
    exec(_readme_python(), names)
    assert names["result"]["memory"]["fits"] is True
    assert names["result"]["duration"]["days"] > 0
    assert names["plans"] and json.dumps(names["plans"])


@pytest.mark.parametrize("path", sorted((ROOT / "examples").glob("*.yaml")), ids=lambda p: p.name)
def test_every_example_scenario_fits(path):
    assert gpuplan.estimate(path)["memory"]["fits"] is True


def test_no_shipped_docstring_sends_the_reader_to_an_unshipped_file():
    """DESIGN.md is not in the package: the API's docs are its docstrings and the README."""
    package = Path(gpuplan.__file__).parent
    for source in package.rglob("*.py"):
        assert "DESIGN.md" not in source.read_text(encoding="utf-8"), source
