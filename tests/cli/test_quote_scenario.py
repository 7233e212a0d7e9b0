"""`gpuplan quote --offer ID SCENARIO` quotes the duration the speed model predicts."""

from __future__ import annotations

import json
from pathlib import Path

import gpuplan

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "llama-8b-fsdp-8xh100.yaml"


def test_quote_of_a_scenario_uses_the_predicted_duration_and_tokens(entry_point):
    result = entry_point("quote", "--offer", "lambda-h100-sxm-x8", str(EXAMPLE), "--json")
    assert result.returncode == 0, result.stderr
    quote = json.loads(result.stdout)
    predicted = gpuplan.estimate(EXAMPLE)
    assert quote["duration_seconds"] == predicted["duration"]["seconds"]
    assert quote["tokens"] == predicted["duration"]["tokens"]
    assert quote["per_million_tokens"] > 0


def test_quote_of_a_scenario_on_another_gpu_is_a_one_line_error(entry_point):
    result = entry_point("quote", "--offer", "coreweave-a100-sxm-80gb-x8", str(EXAMPLE))
    assert result.returncode == 2
    assert "differs from the offer's GPU" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
