"""The JSON API and the pages through FastAPI's TestClient: answers, validation, safety."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient

from gpuplan.web.app import create_app

STUDENT = {"model": "llama-3.1-8b", "method": "qlora", "tokens": "100M", "seq_len": 2048}


@pytest.fixture(scope="module")
def client():
    return TestClient(create_app())


def test_plan_api_mirrors_the_cli_contract(client):
    response = client.post("/api/plan", json={**STUDENT, "max_gpus": 4, "budget": "¥2000"})
    assert response.status_code == 200, response.text
    data = response.json()
    assert {"job", "plans", "pareto", "evaluated", "explanation", "currency"} <= set(data)
    assert data["plans"][0]["cost"]["currency"] == "CNY"
    assert data["job"]["global_batch"] == 32 and data["job"]["batch_rule"] == "fine-tuning"
    assert data["plans"][0]["machine"]["summary"]


def test_estimate_quote_tco_and_catalog_apis(client):
    estimate = client.post(
        "/api/estimate", json={**STUDENT, "gpu": "rtx-4090-24gb", "strategy": "zero=0"}
    )
    assert estimate.status_code == 200, estimate.text
    assert estimate.json()["hardware"]["gpu"] == "rtx-4090-24gb"
    quote = client.post("/api/quote", json={"offer": "xingyu-a100-40gb-x4", "duration": "40d"})
    assert quote.json()["total"] == 55200.0
    tco = client.post(
        "/api/tco",
        json={
            "inputs": {
                "tco": {"currency": "CNY", "years": 3},
                "buy": {"gpus": 4_800_000},
                "operations": {
                    "staff": 360_000,
                    "colocation": 80_000,
                    "power": 40_000,
                    "refresh": 1_200_000,
                },
                "rent": {"monthly": 106_700},
            }
        },
    )
    assert tco.json()["buy_total"] == 9_840_000
    assert len(client.get("/api/models").json()) > 50
    assert any(gpu["id"] == "h100-sxm-80gb" for gpu in client.get("/api/gpus").json())
    offers = client.get("/api/offers", params={"gpu": "H100"}).json()
    assert offers and all(offer["gpu"] == "h100-sxm-80gb" for offer in offers)


def test_openapi_schema_lists_every_endpoint(client):
    schema = client.get("/openapi.json").json()
    for path in (
        "/api/plan",
        "/api/estimate",
        "/api/quote",
        "/api/tco",
        "/api/models",
        "/api/gpus",
        "/api/offers",
    ):
        assert path in schema["paths"]
    assert "PlanBody" in schema["components"]["schemas"]


@pytest.mark.parametrize("model", ["/etc/passwd", "../config.json", "config.json", "~/x", "C:\\a"])
def test_paths_are_refused_not_opened(client, model):
    response = client.post("/api/plan", json={"model": model})
    assert response.status_code == 422
    assert "paths on the server are not opened" in response.json()["detail"]


def test_bad_input_is_422_with_the_message(client):
    response = client.post("/api/plan", json={**STUDENT, "budget": "lots"})
    assert response.status_code == 422 and response.json()["detail"]
    response = client.post("/api/quote", json={"offer": "no-such-offer", "duration": "1d"})
    assert response.status_code == 422 and "unknown offer" in response.json()["detail"]
    response = client.post("/api/plan", json={"model": "llama-3.1-8b", "method": "dance"})
    assert response.status_code == 422


def test_plan_page_renders_the_report_with_charts_and_downloads(client):
    form = {
        **{key: str(value) for key, value in STUDENT.items()},
        "max_gpus": "4",
        "budget": "¥2000",
    }
    response = client.post("/plan", data=form)
    assert response.status_code == 200
    assert 'id="answer"' in response.text and response.text.count("<svg") >= 3
    assert "global batch 32 sequences" in response.text
    assert 'id="job"' in response.text
    assert 'download="gpuplan-plan.html"' in response.text
    assert 'download="gpuplan-plan.json"' in response.text


def test_uploaded_config_is_parsed_as_json(client):
    config = {"model_type": "llama", "num_hidden_layers": 8, "hidden_size": 1024,
              "num_attention_heads": 8, "num_key_value_heads": 8, "intermediate_size": 2816,
              "vocab_size": 32000}  # fmt: skip
    files = {"config": ("config.json", json.dumps(config).encode(), "application/json")}
    response = client.post(
        "/plan", data={"method": "full", "tokens": "1B", "max_gpus": "2"}, files=files
    )
    assert response.status_code == 200, response.text
    assert "uploaded config.json" in response.text


def test_a_config_pasted_into_the_model_field_is_parsed_as_json(client):
    """The estimate form takes the JSON of a config.json in its model field; the keys it leaves
    to the family's defaults are named on the page."""
    config = {"model_type": "llama", "num_hidden_layers": 4, "hidden_size": 512}
    fields = {"model": json.dumps(config, indent=2), "gpu": "h100-sxm-80gb", "count": "1",
              "method": "full", "tokens": "10M", "seq_len": "512"}  # fmt: skip
    response = client.post("/estimate", data=fields)
    assert response.status_code == 200, response.text
    assert "leaves out vocab_size" in response.text
    broken = client.post("/estimate", data={**fields, "model": '{"hidden_size": [1'})
    assert broken.status_code == 400 and "pasted config.json" in broken.text
    listed = client.post("/estimate", data={**fields, "model": "{}"})
    assert listed.status_code == 400 and "num_hidden_layers" in listed.text


def test_uploads_are_size_limited_and_json_only(client):
    big = {"config": ("config.json", b"{" + b" " * 70_000 + b"}", "application/json")}
    response = client.post("/plan", data={"method": "full"}, files=big)
    assert response.status_code == 400 and "64 KiB" in response.text
    bad = {"config": ("config.json", b"import os", "application/json")}
    response = client.post("/plan", data={"method": "full"}, files=bad)
    assert response.status_code == 400 and "not a JSON object" in response.text
    huge = client.post("/plan", content=b"x" * 300_000, headers={"content-type": "text/plain"})
    assert huge.status_code == 413


def test_user_text_is_escaped_on_the_page(client):
    response = client.post("/plan", data={"model": "<script>alert(1)</script>"})
    assert response.status_code == 400
    assert "<script>alert(1)</script>" not in response.text
    assert "&lt;script&gt;" in response.text


def test_language_from_query_cookie_and_accept_language():
    remembering = TestClient(create_app())
    response = remembering.get("/plan", params={"lang": "zh"})
    assert "方案" in response.text and response.cookies.get("gpuplan_lang") == "zh"
    assert "训练方式" in remembering.get("/estimate").text
    fresh = TestClient(create_app())
    assert "训练方式" in fresh.get("/plan", headers={"Accept-Language": "zh-CN,zh;q=0.9"}).text
    assert "Method" in fresh.get("/plan", headers={"Accept-Language": "en-US"}).text
    fresh.cookies.set("gpuplan_lang", "zh")
    assert "训练方式" in fresh.get("/estimate", headers={"Accept-Language": "en-US"}).text


@pytest.mark.parametrize("path", ["/estimate", "/quote", "/tco", "/catalog"])
def test_every_page_renders(client, path):
    response = client.get(path)
    assert (response.status_code == 200 and "<form" in response.text) or path == "/catalog"


def test_tco_and_quote_pages_compute(client):
    response = client.get("/tco")
    assert "106_700" in response.text
    from gpuplan.web.pages import SEED_TCO

    result = client.post("/tco", data={"inputs": SEED_TCO})
    assert result.status_code == 200 and "<svg" in result.text and "9,840,000" in result.text
    quote = client.post(
        "/quote", data={"offer": "xingyu-a100-40gb-x4", "duration": "400d", "instances": "1"}
    )
    assert quote.status_code == 200 and "<svg" in quote.text
    broken = client.post("/tco", data={"inputs": "[tco\n"})
    assert broken.status_code == 400 and "TOML" in broken.text


def test_import_gpuplan_does_not_load_fastapi():
    import subprocess
    import sys

    code = "import sys, gpuplan, gpuplan.cli.app; print('fastapi' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert result.stdout.strip() == "False", result.stderr


def test_the_plan_api_does_not_gather_the_report_extras(client, monkeypatch):
    """Only a page builds the report; the API answers from the search alone."""
    import gpuplan.report.plan

    def refuse(*args, **kwargs):
        raise AssertionError("the JSON API gathered the report's estimate, quote and TCO")

    monkeypatch.setattr(gpuplan.report.plan, "collect_plan_details", refuse)
    response = client.post("/api/plan", json={**STUDENT, "max_gpus": 2})
    assert response.status_code == 200, response.text


def test_a_report_gathers_the_extras_once_for_every_language(monkeypatch):
    import gpuplan.report.plan
    from gpuplan.web import services

    calls = []
    original = gpuplan.report.plan.collect_plan_details

    def counted(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(gpuplan.report.plan, "collect_plan_details", counted)
    _, build = services.plan(STUDENT, {"max_gpus": 2})
    assert not calls
    build("en")
    build("zh")
    assert len(calls) == 1


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e400"])
@pytest.mark.parametrize("field", ["max_gpus", "limit", "seq_len", "global_batch"])
def test_non_finite_numbers_are_422_naming_the_field(client, number, field):
    body = '{"model": "llama-3.1-8b", "method": "qlora", "tokens": "100M", "%s": %s}'
    response = client.post(
        "/api/plan", content=body % (field, number), headers={"content-type": "application/json"}
    )
    assert response.status_code == 422, response.text
    assert field in response.text


def test_a_chunked_body_past_the_limit_is_413(client):
    def chunks():
        for _ in range(300):
            yield b"x" * 1024

    response = client.post("/api/plan", content=chunks())
    assert response.status_code == 413


def test_a_foreign_host_header_is_refused(client):
    assert client.get("/api/gpus", headers={"host": "attacker.example"}).status_code == 400
    assert client.get("/api/gpus", headers={"host": "127.0.0.1:8000"}).status_code == 200


def test_every_response_carries_the_safety_headers(client):
    response = client.get("/plan")
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["x-frame-options"] == "DENY"
    assert "default-src 'self'" in response.headers["content-security-policy"]
    assert response.headers["referrer-policy"] == "no-referrer"


def test_a_form_plan_runs_off_the_event_loop(monkeypatch):
    """While a form's plan computes, the event loop still answers other requests."""
    import asyncio
    import time

    import httpx

    from gpuplan.web import pages

    def slow(fields, upload, lang):
        time.sleep(1.0)
        return {}

    monkeypatch.setattr(pages, "_plan_answer", slow)

    async def scenario():
        transport = httpx.ASGITransport(app=create_app())
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            plan = asyncio.create_task(http.post("/plan", data={"model": "llama-3.1-8b"}))
            await asyncio.sleep(0.05)
            started = time.perf_counter()
            health = await http.get("/api/gpus")
            waited = time.perf_counter() - started
            assert health.status_code == 200 and waited < 0.5
            assert (await plan).status_code == 200

    asyncio.run(scenario())


def test_a_huge_model_or_a_tiny_budget_is_refused_at_once(client):
    """A 10^12-layer config is refused before any per-layer work, and a budget of
    $1e-999999999 gets a short message, not a gigabyte of digits."""
    import time

    started = time.perf_counter()
    config = {"model_type": "llama", "num_hidden_layers": 10**12, "hidden_size": 4096}
    response = client.post("/api/estimate", json={"model": config, "gpu": "h100"})
    assert response.status_code == 422 and "num_hidden_layers" in response.text
    response = client.post("/api/plan", json={**STUDENT, "budget": "$1e-999999999"})
    assert response.status_code == 422 and len(response.content) < 2000
    assert time.perf_counter() - started < 5


def test_an_input_error_answers_in_the_requests_language():
    """The detail follows the request's language (?lang=, else Accept-Language), as pages do;
    a fresh client, so that no language cookie from another test is sent."""
    fresh = TestClient(create_app())
    body = {**STUDENT, "gpu": "rtx-4090-24gb", "strategy": "tq=2"}
    english = fresh.post("/api/estimate", json=body)
    assert english.status_code == 422
    assert english.json()["detail"].startswith(
        "strategy: 'tq=2': expected KEY=VALUE with KEY one of dp"
    )
    by_header = fresh.post(
        "/api/estimate", json=body, headers={"Accept-Language": "zh-CN,zh;q=0.9"}
    )
    assert by_header.status_code == 422
    assert by_header.json()["detail"].startswith("strategy：'tq=2'：应写作 键=值，键为 dp")
    by_query = TestClient(create_app()).post(
        "/api/quote?lang=zh", json={"offer": "xingyu-a100-40gb-x4", "duration": "-5d"}
    )
    assert by_query.status_code == 422
    assert by_query.json()["detail"] == "duration 不能为负数，实际为 '-5d'"
