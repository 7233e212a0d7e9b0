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
]
"""Each command with ``--json`` and the result it prints: plain, spot, no plan, a predicted
quote, each branch that fills an optional part."""


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
