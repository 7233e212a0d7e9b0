"""The JSON API answers the same results as the CLI: each validates against its shipped schema."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient

from gpuplan.results.schema import shipped_schema_text
from gpuplan.web.app import create_app

jsonschema = pytest.importorskip("jsonschema")

STUDENT = {"model": "llama-3.1-8b", "method": "qlora", "tokens": "100M", "seq_len": 2048}
SEED_TCO = {
    "tco": {"currency": "CNY", "years": 3, "gpus": 8},
    "buy": {"gpus": 4_800_000},
    "rent": {"monthly": 106_700},
}

REQUESTS = [
    ("plan", "post", "/api/plan", {**STUDENT, "max_gpus": 4, "budget": "¥2000"}),
    ("estimate", "post", "/api/estimate", {**STUDENT, "gpu": "rtx-4090-24gb"}),
    ("quote", "post", "/api/quote", {"offer": "xingyu-a100-40gb-x4", "duration": "40d"}),
    ("tco", "post", "/api/tco", {"inputs": SEED_TCO}),
    ("offers", "get", "/api/offers?gpu=h100", None),
    ("models", "get", "/api/models", None),
    ("gpus", "get", "/api/gpus", None),
]


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app())


@pytest.mark.parametrize(("name", "method", "path", "body"), REQUESTS, ids=[r[2] for r in REQUESTS])
def test_every_json_api_answer_validates_against_its_schema(client, name, method, path, body):
    response = client.post(path, json=body) if method == "post" else client.get(path)
    assert response.status_code == 200, response.text
    schema = json.loads(shipped_schema_text(name))
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(response.json()))
    assert not errors, [error.message for error in errors[:3]]


@pytest.mark.parametrize("name", ["models", "gpus"])
def test_the_catalog_answers_are_what_the_cli_prints(client, cli, name):
    code, out, err = cli(name, "--json")
    assert code == 0, err
    assert client.get(f"/api/{name}").json() == json.loads(out)
