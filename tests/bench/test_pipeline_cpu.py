"""The whole bench pipeline on the CPU: matmul, memory, 2-process gloo collectives, storage,
burn and the probe of a tiny model, end to end."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from gpuplan.bench.runner import BenchOptions, run_bench  # noqa: E402
from gpuplan.bench.storage import measure_with_python  # noqa: E402

SCENARIO = {
    "model": "llama-3.1-8b",
    "precision": "bf16",
    "seq_len": 2048,
    "micro_batch": 1,
    "hardware": {"gpu": "h100-sxm-80gb", "count": 8},
    "strategy": {"tp": 2, "recompute": "full"},
}


@pytest.mark.slow
def test_cpu_quick_run_covers_every_part(tmp_path):
    options = BenchOptions(
        device="cpu",
        quick=True,
        parts=("matmul", "memory", "collectives", "storage", "burn", "probe"),
        storage_directory=tmp_path,
        storage_bytes=32 * 2**20,
        burn_seconds=1.0,
        probe_scenario=SCENARIO,
        command="pytest",
    )
    result = run_bench(options)
    figures = {figure["key"]: figure for figure in result["figures"]}
    assert result["provenance"]["device"] == "cpu"
    assert result["provenance"]["torch_version"] == torch.__version__
    assert figures["matmul.fp32"]["measured"] > 0
    assert figures["matmul.fp8"]["verdict"] == "SKIPPED"
    assert figures["memory.device_copy"]["measured"] > 0
    assert figures["pcie.host_to_device_pinned"]["reason"].startswith("no GPU")
    for name in ("all_reduce", "all_gather", "reduce_scatter", "all_to_all"):
        assert figures[f"collectives.{name}"]["measured"] > 0
    rows = result["measurements"]["collectives"]["results"]
    assert {row["collective"] for row in rows} == {
        "all_reduce",
        "all_gather",
        "reduce_scatter",
        "all_to_all",
    }
    assert result["measurements"]["collectives"]["ranks"] == 2
    assert figures["storage.sequential_read"]["measured"] > 0
    assert figures["storage.sequential_read"]["reference"] is None
    assert "measured only" in figures["storage.sequential_read"]["reason"]
    assert figures["burn.fluctuation.cpu"]["measured"] >= 0
    probe = result["measurements"]["probe"]
    assert probe["measured"]["loss_is_finite"]
    assert figures["probe.tokens_per_second"]["measured"] > 0
    assert probe["prediction_for_probe"]["memory"]["allocated_bytes"] > 0
    assert result["parts"] == dict.fromkeys(options.parts, "done")
    assert result["worst_verdict"] == "PASS"
    judged = [f for f in result["figures"] if f["verdict"] in ("PASS", "WARN", "FAIL")]
    assert judged == []
    assert figures["burn.fluctuation.cpu"]["reason"] == "CPU self-test: no reference"


def test_model_shapes_are_measured_against_this_machines_sweep():
    options = BenchOptions(
        device="cpu",
        quick=True,
        parts=("matmul",),
        shapes_scenario={**SCENARIO, "seq_len": 64, "model": _tiny_model()},
    )
    result = run_bench(options)
    model_figures = [f for f in result["figures"] if f["category"] == "matmul_model_shapes"]
    assert model_figures
    assert all(f["reference_source"].startswith("this run's best") for f in model_figures)


def _tiny_model() -> dict:
    return {
        "hidden_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "intermediate_size": 256,
        "vocab_size": 512,
    }


def test_probe_recompute_variants_train_on_the_cpu():
    from gpuplan.bench.probe import TINY_CPU_CONFIG, train_steps

    for recompute in ("none", "selective", "full"):
        config = TINY_CPU_CONFIG.__class__(**{**TINY_CPU_CONFIG.__dict__, "recompute": recompute})
        result = train_steps(torch, "cpu", config, warmup_steps=0, steps=1)
        assert result["loss_is_finite"] and result["tokens_per_second"] > 0


def test_python_storage_fallback_reads_what_it_wrote(tmp_path):
    result = measure_with_python(tmp_path, 20 * 2**20)
    assert result["size_bytes"] == 32 * 2**20
    assert result["read_bytes_per_second"] > 0 and result["write_bytes_per_second"] > 0
    assert not list(tmp_path.iterdir())
