"""Server-rendered pages: a form per question, and below it the same tables and charts as the
report, with downloads of the HTML report and the JSON."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from markupsafe import Markup

from gpuplan.errors import InputError
from gpuplan.report.document import Report
from gpuplan.report.html import render_body, render_html
from gpuplan.web import services
from gpuplan.web.encoding import jsonable
from gpuplan.web.inputs import (
    checked_model,
    parse_integer,
    parse_strategy,
    parse_toml_text,
    parse_upload,
    plan_options,
    plan_scenario,
)
from gpuplan.web.layout import downloads, render

router = APIRouter()

PLAN_DEFAULTS = {
    "model": "llama-3.1-8b", "method": "qlora", "tokens": "100M", "seq_len": "2048",
    "global_batch": "32", "budget": "¥2000", "deadline": "30d", "objective": "cost",
    "max_gpus": "8", "gpus": "", "providers": "", "currency": "",
}  # fmt: skip
ESTIMATE_DEFAULTS = {
    "model": "llama-3.1-8b", "method": "qlora", "tokens": "100M", "seq_len": "2048",
    "global_batch": "32", "gpu": "rtx-4090-24gb", "count": "1", "strategy": "",
}  # fmt: skip
QUOTE_DEFAULTS = {
    "offer": "xingyu-a100-40gb-x4", "duration": "40d", "instances": "1", "tokens": "",
    "currency": "",
}  # fmt: skip
SEED_TCO = """# The seed article's 3-year comparison for an 8 x A100 cluster (its §一.1 cost table).
[tco]
currency = "CNY"
years = 3
utilization = 1.0
gpus = 8

[buy]
gpus = 4_800_000
cost_of_capital = 0.0
residual_share = 0.0

[operations]
staff = 360_000
colocation = 80_000
power = 40_000
refresh = 1_200_000

[rent]
monthly = 106_700
"""
METHODS = ("full", "lora", "qlora", "freeze")
OBJECTIVES = ("cost", "time", "pareto")
CURRENCIES = [("", "-"), ("CNY", "CNY ¥"), ("USD", "USD $"), ("EUR", "EUR €")]


def _language(request: Request) -> str:
    return str(getattr(request.state, "lang", "en"))


async def _fields(request: Request) -> tuple[dict[str, str], bytes | None]:
    """Text fields of a posted form and the uploaded config.json bytes (read up to the limit)."""
    from gpuplan.web.inputs import UPLOAD_LIMIT_BYTES

    form = await request.form(max_files=1, max_fields=40)
    fields: dict[str, str] = {}
    upload: bytes | None = None
    for key, value in form.multi_items():
        if isinstance(value, str):
            fields[key] = value
        elif key == "config":
            data = await value.read(UPLOAD_LIMIT_BYTES + 1)
            if data:
                upload = data
    return fields, upload


ANSWER_SECONDS = 30.0
"""A form's answer is computed off the event loop and given up after this long (HTTP 503), so
one request never blocks the others; the API's handlers run in the same thread pool."""
TOO_LONG = "the answer took too long; narrow the search"

Compute = Callable[[dict[str, str], bytes | None, str], Mapping[str, Any]]
"""Reads a form (fields, uploaded bytes, language) and returns the page's ``result`` and
``report`` context; raises InputError for bad input."""


async def _answer(
    request: Request, name: str, defaults: Mapping[str, str], compute: Compute
) -> HTMLResponse:
    """Read the form on the event loop, compute the answer in a worker thread, and render the
    page ``name`` with the form as sent and the answer or the error below it."""
    import asyncio

    from starlette.concurrency import run_in_threadpool

    lang = _language(request)
    fields, upload = await _fields(request)

    def page() -> tuple[str, int]:
        context: dict[str, Any] = {"values": {**defaults, **fields}}
        status = 200
        try:
            context.update(compute(fields, upload, lang))
        except InputError as error:
            context["error"], status = error.text(lang), 400
        return _render(name, lang, **context), status

    try:
        html, status = await asyncio.wait_for(run_in_threadpool(page), ANSWER_SECONDS)
    except TimeoutError:
        html, status = render("error.html", lang, path=f"/{name}", message=TOO_LONG), 503
    return HTMLResponse(html, status_code=status)


def _form_choices(name: str) -> dict[str, Any]:
    """The lists a page's form offers (catalog names, GPU ids, offers, fixed choices)."""
    from gpuplan.catalog import gpu_ids, model_names

    choices: dict[str, Any] = {"methods": [(method, method) for method in METHODS]}
    if name in ("plan", "estimate"):
        choices["model_names"] = model_names()
    if name == "plan":
        choices["objectives"] = [(objective, objective) for objective in OBJECTIVES]
        choices["currencies"] = CURRENCIES
    if name == "estimate":
        choices["gpu_ids"] = gpu_ids()
    if name == "quote":
        choices["offers"] = [
            (offer["id"], f"{offer['id']} ({offer['provider']})") for offer in services.offers()
        ]
        choices["currencies"] = CURRENCIES
    return choices


def _render(name: str, lang: str, **context: Any) -> str:
    """Page ``name``'s template with its form's choices; no answer and no error unless given."""
    context.setdefault("error", "")
    context.setdefault("result", None)
    return render(f"{name}.html", lang, name, f"/{name}", **_form_choices(name), **context)


def _form_page(request: Request, name: str, defaults: Mapping[str, str]) -> HTMLResponse:
    return HTMLResponse(_render(name, _language(request), values=dict(defaults)))


def _result(
    result: Mapping[str, Any], build: Callable[[str], Report], kind: str, lang: str
) -> dict[str, Any]:
    """The template context of an answer: its report (already HTML) and the two downloads."""
    report = build(lang)
    result_json = json.dumps(jsonable(result), ensure_ascii=False, indent=2)
    return {
        "result": downloads(render_html(report), result_json, kind),
        "report": Markup(render_body(report)),
    }


def _model(fields: Mapping[str, str], upload: bytes | None) -> str | dict[str, Any]:
    if upload is not None:
        config = parse_upload(upload)
        config.setdefault("name", "uploaded config.json")
        return config
    return checked_model(fields.get("model", ""))


@router.get("/", include_in_schema=False)
def home() -> RedirectResponse:
    return RedirectResponse("/plan")


# --- plan ----------------------------------------------------------------------------------


@router.get("/plan", response_class=HTMLResponse, include_in_schema=False)
def plan_page(request: Request) -> HTMLResponse:
    return _form_page(request, "plan", PLAN_DEFAULTS)


@router.post("/plan", response_class=HTMLResponse, include_in_schema=False)
async def plan_submit(request: Request) -> HTMLResponse:
    return await _answer(request, "plan", PLAN_DEFAULTS, _plan_answer)


def _plan_answer(fields: dict[str, str], upload: bytes | None, lang: str) -> dict[str, Any]:
    scenario = plan_scenario(fields, _model(fields, upload))
    result, build = services.plan(scenario, plan_options(fields))
    return _result(result, build, "plan", lang)


# --- estimate ------------------------------------------------------------------------------


@router.get("/estimate", response_class=HTMLResponse, include_in_schema=False)
def estimate_page(request: Request) -> HTMLResponse:
    return _form_page(request, "estimate", ESTIMATE_DEFAULTS)


@router.post("/estimate", response_class=HTMLResponse, include_in_schema=False)
async def estimate_submit(request: Request) -> HTMLResponse:
    return await _answer(request, "estimate", ESTIMATE_DEFAULTS, _estimate_answer)


def _estimate_answer(fields: dict[str, str], upload: bytes | None, lang: str) -> dict[str, Any]:
    scenario = plan_scenario(fields, _model(fields, upload))
    scenario["hardware"] = {
        "gpu": fields.get("gpu", "").strip(),
        "count": parse_integer(fields.get("count", "1"), "count"),
    }
    strategy = parse_strategy(fields.get("strategy", ""))
    if strategy:
        scenario["strategy"] = strategy
    result, build = services.estimate(scenario)
    return _result(result, build, "estimate", lang)


# --- quote ---------------------------------------------------------------------------------


@router.get("/quote", response_class=HTMLResponse, include_in_schema=False)
def quote_page(request: Request) -> HTMLResponse:
    return _form_page(request, "quote", QUOTE_DEFAULTS)


@router.post("/quote", response_class=HTMLResponse, include_in_schema=False)
async def quote_submit(request: Request) -> HTMLResponse:
    return await _answer(request, "quote", QUOTE_DEFAULTS, _quote_answer)


def _quote_answer(fields: dict[str, str], _: bytes | None, lang: str) -> dict[str, Any]:
    result, build = services.quote(
        fields.get("offer", ""),
        fields.get("duration", ""),
        parse_integer(fields.get("instances", "1"), "instances"),
        fields.get("tokens") or None,
        fields.get("currency") or None,
    )
    return _result(result, build, "quote", lang)


# --- tco -----------------------------------------------------------------------------------


@router.get("/tco", response_class=HTMLResponse, include_in_schema=False)
def tco_page(request: Request) -> HTMLResponse:
    return _form_page(request, "tco", {"inputs": SEED_TCO})


@router.post("/tco", response_class=HTMLResponse, include_in_schema=False)
async def tco_submit(request: Request) -> HTMLResponse:
    return await _answer(request, "tco", {"inputs": ""}, _tco_answer)


def _tco_answer(fields: dict[str, str], _: bytes | None, lang: str) -> dict[str, Any]:
    result, build = services.tco(parse_toml_text(fields.get("inputs", "")))
    return _result(result, build, "tco", lang)


# --- catalog -------------------------------------------------------------------------------


@router.get("/catalog", response_class=HTMLResponse, include_in_schema=False)
def catalog_page(request: Request) -> HTMLResponse:
    """The catalog's tables as the terminal prints them (``report.catalog``): every GPU with its
    source, every model, every offer with one line per billing plan."""
    from gpuplan.report.catalog import gpus_table, models_table, offers_table
    from gpuplan.report.html import render_block

    lang = _language(request)
    gpus = Markup(render_block(gpus_table(services.gpus(), lang)))
    models = Markup(render_block(models_table(services.models(), lang)))
    offers = Markup(render_block(offers_table(services.offers(), lang)))
    html = render(
        "catalog.html",
        lang,
        "catalog",
        "/catalog",
        gpus=gpus,
        models=models,
        offers=offers,
    )
    return HTMLResponse(html)
