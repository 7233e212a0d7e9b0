"""Typed results: every ``--json`` output, the Python API and the web API validate against the
shipped JSON Schema of their result; the shipped schemas are the ones the types generate; a
result keeps every key the computation gave it; and the schemas reject what breaks them."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

import gpuplan
from gpuplan.jsonable import jsonable
from gpuplan.results import RESULT_TYPES, build
from gpuplan.results.schema import json_schema_text, shipped_schema_text

jsonschema = pytest.importorskip("jsonschema")

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "llama-8b-fsdp-8xh100.yaml"
SEED_TCO = ROOT / "examples" / "seed-tco.toml"
STUDENT = ("--model", "llama-3.1-8b", "--method", "qlora", "--tokens", "100M")
NO_TOKENS = {"model": "llama-3.1-8b", "hardware": {"gpu": "h100-sxm-80gb", "count": 8}}
USAGE = ROOT / "examples" / "usage-sample.csv"
AUDITED = ("--offer", "runpod-secure-h100-sxm-x1")
SKYPILOT_SAMPLE = ROOT / "tests" / "pricing" / "data" / "skypilot_vms_sample.csv"

COMMANDS: list[tuple[str, tuple[str, ...]]] = [
    ("estimate", ("estimate", str(EXAMPLE))),
    (
        "memory",
        ("memory", "--model", "llama-3.1-8b", "--gpu", "rtx-4090-24gb", "--method", "qlora"),
    ),
    ("plan", ("plan", *STUDENT, "--limit", "3")),
    ("plan", ("plan", *STUDENT, "--billing", "spot", "--limit", "2")),
    ("plan", ("plan", "--model", "llama-3.1-70b", "--tokens", "10B", "--deadline", "1h")),
    ("quote", ("quote", "--offer", "xingyu-rtx-4090-x1", "--duration", "40d")),
    (
        "quote",
        ("quote", "--offer", "aws-p5.48xlarge-us-east-1", "--duration", "3d", "--count", "2"),
    ),
    (
        "quote",
        (
            "quote",
            str(ROOT / "examples" / "qlora-8b-rtx4090.yaml"),
            "--offer",
            "xingyu-rtx-4090-x1",
        ),
    ),
    ("quote", ("quote", "--offer", "xingyu-rtx-4090-x1", "--duration", "2d", "--currency", "USD")),
    ("tco", ("tco", str(SEED_TCO))),
    ("offers", ("offers",)),
    ("offers", ("offers", "--gpu", "h100")),
    ("offers-check", ("offers", "--check")),
    ("audit", ("audit", str(USAGE), *AUDITED)),
    ("audit", ("audit", str(USAGE), *AUDITED, "--invoiced", "230")),
    ("models", ("models",)),
    ("model", ("model", "llama-3.1-8b")),
    ("model", ("model", "deepseek-v3")),
    ("model", ("model", "gpt-oss-120b")),
    ("gpus", ("gpus",)),
    ("gpu", ("gpu", "h100")),
    ("gpu", ("gpu", "910B")),
    ("bench-launch", ("bench", "--collectives", "--nodes", "4", "--network", "ib-ndr-400g")),
]
"""Each command with ``--json`` and the result it prints: plain, spot, no plan, a predicted
quote, each branch that fills an optional part (an invoice to compare, a mixture of experts
with its router, a GPU the speed model does not predict and no offer prices)."""

TESTED_APART = {
    "memory-estimate": "the Python API's memory result (gpuplan.services.estimate.memory)",
    "plans": "test_the_python_api_is_json_and_validates",
    "bench-run": "test_bench_show_and_history_validate",
    "bench-history": "test_bench_show_and_history_validate",
    "bench-compare": "test_bench_show_and_history_validate",
    "offers-import": "test_an_import_validates",
}
"""Results whose output needs a stored run or a file written: validated by their own test."""


def validator(name: str) -> Any:
    schema = json.loads(shipped_schema_text(name))
    return jsonschema.Draft202012Validator(schema)


def assert_valid(name: str, value: Any) -> None:
    errors = sorted(validator(name).iter_errors(value), key=lambda error: list(error.path))
    assert not errors, f"{name}: " + "; ".join(
        f"{'/'.join(map(str, error.path))}: {error.message}" for error in errors[:5]
    )


@pytest.mark.parametrize("name", list(RESULT_TYPES))
def test_the_shipped_result_schema_is_the_generated_one(name: str) -> None:
    assert shipped_schema_text(name) == json_schema_text(name), (
        f"{name}.schema.json is out of date: run `python -m gpuplan.results.schema`"
    )


def test_every_result_has_a_json_output_that_is_validated() -> None:
    assert set(RESULT_TYPES) == {name for name, _ in COMMANDS} | set(TESTED_APART)


@pytest.mark.parametrize(("name", "args"), COMMANDS, ids=[" ".join(a)[:60] for _, a in COMMANDS])
def test_every_json_output_validates_against_its_schema(cli, name, args) -> None:
    code, out, err = cli(*args, "--json")
    assert code in (0, 1), err
    assert_valid(name, json.loads(out))


def test_tco_with_a_rented_offer_validates(cli, tmp_path) -> None:
    path = tmp_path / "tco.toml"
    path.write_text(
        '[tco]\ncurrency = "USD"\nyears = 1\nutilization = 0.5\ngpus = 8\n[buy]\ngpus = 240000\n'
        '[rent]\noffer = "lambda-h100-sxm-x8"\n'
    )
    code, out, err = cli("tco", str(path), "--json")
    assert code == 0, err
    result = json.loads(out)
    assert_valid("tco", result)
    assert result["rent"]["offer"] == "lambda-h100-sxm-x8" and result["rent"]["total"] > 0


def test_bench_show_and_history_validate(cli, tmp_path, monkeypatch) -> None:
    from gpuplan.store import save_bench_run

    monkeypatch.setenv("GPUPLAN_DATA_DIR", str(tmp_path))
    figure = {
        "key": "hbm", "label": "HBM read", "category": "hbm", "unit": "bytes/s",
        "measured": 3.0e12, "spec": 3.35e12, "spec_source": "datasheet", "spec_ratio": 0.9,
        "reference": None, "reference_source": "", "reference_ratio": None, "verdict": "PASS",
        "threshold": "", "reason": "", "details": {"buffer_bytes": 2**30},
    }  # fmt: skip
    run_id = save_bench_run(
        {
            "method_version": 1,
            "gpu_id": None,
            "worst_verdict": "PASS",
            "provenance": {
                "date": "2026-01-02T03:04:05+00:00",
                "hostname": "n",
                "device": "cpu",
                "command": "gpuplan bench --device cpu",
            },
            "figures": [figure],
            "measurements": {},
        }
    )
    code, out, err = cli("bench", "show", str(run_id), "--json")
    assert code == 0, err
    run = json.loads(out)
    assert_valid("bench-run", run)
    assert run["id"] == run_id and run["figures"][0]["details"] == {"buffer_bytes": 2**30}
    code, out, err = cli("bench", "history", "--json")
    assert code == 0, err
    assert_valid("bench-history", json.loads(out))
    code, out, err = cli("bench", "compare", str(run_id), "lambda-h100-sxm-x8", "--json")
    assert code in (0, 1), err
    comparison = json.loads(out)
    assert_valid("bench-compare", comparison)
    assert comparison["run_id"] == run_id and comparison["gpu"] == "h100-sxm-80gb"
    assert [check["measured"] for check in comparison["checks"]] == [None, 0]


def test_an_import_validates(cli, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("GPUPLAN_DATA_DIR", str(tmp_path))
    code, out, err = cli("offers", "import", str(SKYPILOT_SAMPLE), "--provider", "aws", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert_valid("offers-import", result)
    assert result["imported"] == 3 and result["findings"]


def test_a_model_config_with_list_valued_rope_scaling_validates(cli, tmp_path) -> None:
    config = {
        "model_type": "phi3",
        "num_hidden_layers": 2,
        "hidden_size": 256,
        "num_attention_heads": 4,
        "intermediate_size": 512,
        "vocab_size": 1000,
        "rope_scaling": {"type": "longrope", "short_factor": [1.0] * 32, "long_factor": [2.0] * 32},
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    code, out, err = cli("model", str(path), "--json")
    assert code == 0, err
    model = json.loads(out)
    assert_valid("model", model)
    assert model["settings"]["rope_scaling"]["short_factor"] == [1.0] * 32


def test_the_python_api_is_json_and_validates() -> None:
    estimate = gpuplan.estimate(EXAMPLE)
    assert_valid("estimate", json.loads(json.dumps(estimate)))
    plans = gpuplan.plan({"model": "llama-3.1-8b", "method": "qlora", "tokens": "100M"})
    assert plans
    assert_valid("plans", json.loads(json.dumps(plans)))


def test_an_estimate_without_tokens_has_null_durations_and_validates() -> None:
    estimate = gpuplan.estimate(NO_TOKENS)
    assert estimate["duration"]["seconds"] is None and estimate["duration"]["startup_seconds"] > 0
    assert_valid("estimate", estimate)


def test_a_result_keeps_every_key_the_computation_gave_and_no_other() -> None:
    from gpuplan.api import estimate, plan_search
    from gpuplan.pricing.currency import default_rates
    from gpuplan.pricing.offers import OfferBook
    from gpuplan.pricing.quote import quote

    rates = default_rates()
    offer = OfferBook.build().get("xingyu-rtx-4090-x1")
    student = {"model": "llama-3.1-8b", "method": "qlora", "tokens": "1B"}
    for name, values in (
        ("estimate", estimate(EXAMPLE)),
        ("estimate", estimate(NO_TOKENS)),
        ("plan", plan_search(student)),
        ("quote", quote(offer, 86400.0, rates=rates).to_dict("USD", rates)),
        ("quote", quote(offer, 86400.0, rates=rates).to_dict(None, rates)),
    ):
        assert jsonable(build(name, values)) == jsonable(values)


def test_the_catalog_results_keep_every_key_of_the_specs() -> None:
    from gpuplan.catalog import all_gpus, all_models
    from gpuplan.services import catalog

    assert jsonable(catalog.gpus()) == jsonable([gpu.to_dict() for gpu in all_gpus()])
    for spec in all_models():
        values = jsonable(spec.to_dict())
        result = jsonable(catalog.model(spec))
        assert result["settings"].pop("rope_scaling") == dict(
            values["settings"].pop("rope_scaling")
        )
        assert result == values, spec.name


def test_the_pricing_and_bench_results_keep_every_key() -> None:
    from decimal import Decimal

    from gpuplan.bench.collectives import launch_commands
    from gpuplan.pricing.audit import audit, read_usage
    from gpuplan.pricing.offers import OfferBook

    offer = OfferBook.build().get(AUDITED[1])
    for invoiced in (None, Decimal(230)):
        values = audit(read_usage(USAGE), offer, invoiced=invoiced)
        assert jsonable(build("audit", values)) == jsonable(values)
    commands = launch_commands(2, 8)
    assert jsonable(build("bench-launch", commands)) == commands


def test_results_are_frozen_and_their_fields_name_units() -> None:
    from gpuplan.services.estimate import estimate

    result = estimate(EXAMPLE)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.memory.peak_bytes = 0.0  # type: ignore[misc]
    assert result.throughput.step_seconds > 0 and result.memory.peak_bytes > 0


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("throughput", "step_seconds"), "10 s"),
        (("memory", "fits"), "yes"),
        (("warnings",), [{"code": "bubble"}]),
    ],
)
def test_the_schema_rejects_a_wrong_type_or_a_missing_part(path, value) -> None:
    estimate = gpuplan.estimate(EXAMPLE)
    target = estimate
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    assert list(validator("estimate").iter_errors(estimate))
    del estimate["duration"]
    assert any("duration" in error.message for error in validator("estimate").iter_errors(estimate))


def test_a_wrong_value_is_refused_when_the_result_is_built() -> None:
    import msgspec

    from gpuplan.api import estimate

    values = estimate(EXAMPLE)
    values["memory"]["peak_bytes"] = "a lot"
    with pytest.raises(msgspec.ValidationError, match=r"memory\.peak_bytes"):
        build("estimate", values)
