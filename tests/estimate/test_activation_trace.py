"""The activation formula against a trace of real layers (benchmarks/trace_activations.py):
every tensor each layer saves for backward, class by class, within 1 %; and QLoRA's live bytes
through a bitsandbytes-style training loop (benchmarks/trace_qlora.py). Both run in a child
process: importing transformers and tracing would otherwise raise this process's peak memory,
which the fuzz tests bound."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOLERANCE = 0.01


def _run(script: str) -> object:
    environment = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), "--json"],
        capture_output=True,
        text=True,
        timeout=600,
        env=environment,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_formula_matches_every_traced_layer_per_tensor_class():
    pytest.importorskip("transformers")
    rows = _run("trace_activations.py")
    assert isinstance(rows, list)
    cases = {row["case"] for row in rows}
    assert len(cases) >= 15
    compared = [row for row in rows if not row["excluded"]]
    assert [row for row in compared if row["tensor_class"] == "other"] == []

    def error(row: dict) -> float:
        if row["traced"] == 0.0:
            return 0.0 if row["formula"] == 0.0 else float("inf")
        return abs(row["formula"] - row["traced"]) / row["traced"]

    wrong = [row for row in compared if error(row) > TOLERANCE]
    assert wrong == []
    for case in cases:
        assert any(row["case"] == case for row in compared)


def test_cases_cover_every_architecture_family_and_attention_kernel():
    source = (ROOT / "benchmarks" / "trace_activations.py").read_text()
    for model_type in (
        "llama",
        "qwen3",
        "gemma2",
        "phi3",
        "gpt2",
        "falcon",
        "mixtral",
        "qwen3_moe",
    ):
        assert f'"model_type": "{model_type}"' in source
    assert 'attention="eager"' in source and "dropout=True" in source


def test_tracer_classes_are_the_formula_classes():
    from gpuplan.estimate.memory import ACTIVATION_CLASSES

    source = (ROOT / "benchmarks" / "trace_activations.py").read_text()
    for name in ACTIVATION_CLASSES:
        assert f'"{name}"' in source


@pytest.mark.slow
def test_bitsandbytes_042_keeps_every_four_bit_input_into_the_next_step():
    """bitsandbytes up to 0.43.1 keeps each 4-bit layer's input on the autograd context: one
    step's worth at the first step's peak and, as litgpt's loop keeps the last logits (and with
    them the graph) until the next forward pass returns, two at every later step's. The peak
    also holds the head's weight dequantized to fp16 and cast to bf16."""
    report = _run("trace_qlora.py")
    assert isinstance(report, dict)
    old, fixed, formula = report["bnb-0.42"], report["bnb-0.43.2"], report["formula"]
    inputs = formula["four_bit_input_bytes"]
    first_step = old["first_step_peak_bytes"] - fixed["first_step_peak_bytes"]
    assert first_step == pytest.approx(inputs, rel=TOLERANCE)
    assert old["peak_bytes"] - fixed["peak_bytes"] == pytest.approx(2 * inputs, rel=0.03)
    at_peak = fixed["at_peak"]
    dequantized = at_peak["aten.empty.memory_format"] + at_peak["aten._to_copy.default"]
    assert dequantized >= formula["dequantized_head_bytes"]
