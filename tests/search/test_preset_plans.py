"""The presets' plans, whole (every row, the Pareto front, the explanation), equal a stored
snapshot: a change meant only to make the search faster must leave every answer as it was.

When a change is meant to alter plans (a model, a price), rewrite the snapshot and review its
diff with the change:

    python tests/search/test_preset_plans.py --write
"""

from __future__ import annotations

import datetime as dt
import json
import math
import sys
from pathlib import Path
from typing import Any

SNAPSHOT = Path(__file__).with_name("preset_plans.json")
VOLATILE = {"seconds"}
"""Result keys that vary run to run: the search's own wall time."""
AS_OF = dt.date(2026, 12, 2)
"""The day the plans are asked on, so that a price's age ("observed ..., N days ago") is the
snapshot's on any later day."""


def preset_results() -> dict[str, Any]:
    from gpuplan.api import plan_search
    from gpuplan.jsonable import jsonable
    from gpuplan.presets import PRESETS

    results = {}
    for name, preset in PRESETS.items():
        result = plan_search(preset["scenario"], today=AS_OF, **preset["options"])
        results[name] = jsonable({k: v for k, v in result.items() if k not in VOLATILE})
    return json.loads(json.dumps(results))


def differences(expected: Any, actual: Any, where: str = "") -> list[str]:
    """Where two JSON values differ; floats equal within one part in 10^9."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        found = [f"{where}.{key}: only one side" for key in set(expected) ^ set(actual)]
        for key in expected.keys() & actual.keys():
            found += differences(expected[key], actual[key], f"{where}.{key}")
        return found
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return [f"{where}: {len(expected)} items, now {len(actual)}"]
        return [
            problem
            for index, (left, right) in enumerate(zip(expected, actual, strict=True))
            for problem in differences(left, right, f"{where}[{index}]")
        ]
    numbers = isinstance(expected, int | float) and isinstance(actual, int | float)
    if isinstance(expected, float) or isinstance(actual, float):
        if numbers and math.isclose(expected, actual, rel_tol=1e-9, abs_tol=1e-12):
            return []
    elif expected == actual:
        return []
    return [f"{where}: {expected!r} -> {actual!r}"]


def test_preset_plans_equal_the_snapshot():
    stored = json.loads(SNAPSHOT.read_text("utf-8"))
    found = differences(stored, preset_results())
    assert not found, "\n".join(found[:20])


def test_the_comparison_sees_a_changed_plan():
    stored = json.loads(SNAPSHOT.read_text("utf-8"))
    changed = json.loads(json.dumps(stored))
    changed["startup"]["plans"][0]["duration"]["seconds"] *= 1 + 1e-6
    changed["student"]["plans"][0]["gpu"] += "-x"
    assert len(differences(stored, changed)) == 2


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit(__doc__)
    SNAPSHOT.write_text(json.dumps(preset_results(), indent=1, sort_keys=True) + "\n", "utf-8")
    print(f"wrote {SNAPSHOT}")
