"""Server-rendered pages: a form per question, and below it the same tables and charts as the
report, with downloads of the HTML report and the JSON."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from html import escape
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from gpuplan.errors import InputError
from gpuplan.i18n import translate
from gpuplan.report.document import Report
from gpuplan.report.html import render_body, render_html
from gpuplan.terms import billing_name
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
from gpuplan.web.layout import datalist, downloads, error_box, page, select_field, text_field

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


def _language(request: Request) -> str:
    return str(getattr(request.state, "lang", "en"))


def _respond(request: Request, html: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(html, status_code=status)


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


async def _answer(
    request: Request, compute: Callable[[dict[str, str], bytes | None, str], tuple[str, int]]
) -> HTMLResponse:
    """Read the form on the event loop, compute the page in a worker thread, respond."""
    import asyncio

    from starlette.concurrency import run_in_threadpool

    lang = _language(request)
    fields, upload = await _fields(request)
    try:
        html, status = await asyncio.wait_for(
            run_in_threadpool(compute, fields, upload, lang), ANSWER_SECONDS
        )
    except TimeoutError:
        return HTMLResponse("the answer took too long; narrow the search", status_code=503)
    return _respond(request, html, status)


def _model(fields: Mapping[str, str], upload: bytes | None, lang: str) -> str | dict[str, Any]:
    if upload is not None:
        config = parse_upload(upload, lang)
        config.setdefault("name", "uploaded config.json")
        return config
    return checked_model(fields.get("model", ""), lang)


def _result_block(
    result: Mapping[str, Any], build: Callable[[str], Report], kind: str, lang: str
) -> str:
    report = build(lang)
    return downloads(
        render_html(report), json.dumps(jsonable(result), ensure_ascii=False, indent=2), kind, lang
    ) + render_body(report)


def _model_fields(values: Mapping[str, str], lang: str, upload: bool = True) -> list[str]:
    from gpuplan.catalog import model_names

    parts = [
        text_field(
            "model", translate("web.form.model", lang), values.get("model", ""), list="models"
        ),
        datalist("models", model_names()),
    ]
    if upload:
        parts.append(
            f"<label>{escape(translate('web.form.config', lang))}"
            '<input type="file" name="config" id="config" accept=".json,application/json"></label>'
        )
    parts += [
        select_field("method", translate("web.form.method", lang), values.get("method", "full"),
                     [(method, method) for method in METHODS]),
        text_field("tokens", translate("web.form.tokens", lang), values.get("tokens", "")),
        text_field("seq_len", translate("web.form.seq_len", lang), values.get("seq_len", "")),
        text_field("global_batch", translate("web.form.global_batch", lang), values.get("global_batch", "")),
    ]  # fmt: skip
    return parts


def _form(action: str, fields: list[str], lang: str) -> str:
    return (
        f'<form class="query" method="post" action="{action}" enctype="multipart/form-data" id="query">'
        + "".join(fields)
        + f'<button type="submit" id="submit">{escape(translate("web.form.submit", lang))}</button></form>'
    )


def _heading(name: str, lang: str) -> str:
    return (
        f"<h1>{escape(translate(f'web.nav.{name}', lang))}</h1>"
        f'<p class="intro">{escape(translate(f"web.intro.{name}", lang))}</p>'
    )


# --- plan ----------------------------------------------------------------------------------


def _plan_form(values: Mapping[str, str], lang: str) -> str:
    fields = _model_fields(values, lang)
    fields += [
        text_field("budget", translate("web.form.budget", lang), values.get("budget", "")),
        text_field("deadline", translate("web.form.deadline", lang), values.get("deadline", "")),
        select_field("objective", translate("web.form.objective", lang), values.get("objective", "cost"),
                     [("cost", "cost"), ("time", "time"), ("pareto", "pareto")]),
        text_field("max_gpus", translate("web.form.max_gpus", lang), values.get("max_gpus", "")),
        text_field("gpus", translate("web.form.gpus", lang), values.get("gpus", "")),
        text_field("providers", translate("web.form.providers", lang), values.get("providers", "")),
        select_field("currency", translate("web.form.currency", lang), values.get("currency", ""),
                     [("", "-"), ("CNY", "CNY ¥"), ("USD", "USD $"), ("EUR", "EUR €")]),
    ]  # fmt: skip
    return _form("/plan", fields, lang)


@router.get("/", include_in_schema=False)
def home() -> RedirectResponse:
    return RedirectResponse("/plan")


@router.get("/plan", response_class=HTMLResponse, include_in_schema=False)
def plan_page(request: Request) -> HTMLResponse:
    lang = _language(request)
    body = _heading("plan", lang) + _plan_form(PLAN_DEFAULTS, lang)
    return _respond(request, page(translate("web.nav.plan", lang), lang, "plan", body, "/plan"))


@router.post("/plan", response_class=HTMLResponse, include_in_schema=False)
async def plan_submit(request: Request) -> HTMLResponse:
    return await _answer(request, _plan_answer)


def _plan_answer(fields: dict[str, str], upload: bytes | None, lang: str) -> tuple[str, int]:
    values = {**PLAN_DEFAULTS, **fields}
    body = _heading("plan", lang) + _plan_form(values, lang)
    try:
        scenario = plan_scenario(fields, _model(fields, upload, lang))
        result, build = services.plan(scenario, plan_options(fields, lang))
        body += _result_block(result, build, "plan", lang)
        status = 200
    except InputError as error:
        body += error_box(error.text(lang), lang)
        status = 400
    return page(translate("web.nav.plan", lang), lang, "plan", body, "/plan"), status


# --- estimate ------------------------------------------------------------------------------


def _estimate_form(values: Mapping[str, str], lang: str) -> str:
    from gpuplan.catalog import gpu_ids

    fields = _model_fields(values, lang)
    fields += [
        text_field("gpu", translate("web.form.gpu", lang), values.get("gpu", ""), list="gpu-ids"),
        datalist("gpu-ids", gpu_ids()),
        text_field("count", translate("web.form.count", lang), values.get("count", "1")),
        text_field("strategy", translate("web.form.strategy", lang), values.get("strategy", "")),
    ]
    return _form("/estimate", fields, lang)


@router.get("/estimate", response_class=HTMLResponse, include_in_schema=False)
def estimate_page(request: Request) -> HTMLResponse:
    lang = _language(request)
    body = _heading("estimate", lang) + _estimate_form(ESTIMATE_DEFAULTS, lang)
    return _respond(
        request, page(translate("web.nav.estimate", lang), lang, "estimate", body, "/estimate")
    )


@router.post("/estimate", response_class=HTMLResponse, include_in_schema=False)
async def estimate_submit(request: Request) -> HTMLResponse:
    return await _answer(request, _estimate_answer)


def _estimate_answer(fields: dict[str, str], upload: bytes | None, lang: str) -> tuple[str, int]:
    body = _heading("estimate", lang) + _estimate_form({**ESTIMATE_DEFAULTS, **fields}, lang)
    try:
        scenario = plan_scenario(fields, _model(fields, upload, lang))
        scenario["hardware"] = {
            "gpu": fields.get("gpu", "").strip(),
            "count": parse_integer(fields.get("count", "1"), "count", lang),
        }
        strategy = parse_strategy(fields.get("strategy", ""), lang)
        if strategy:
            scenario["strategy"] = strategy
        result, build = services.estimate(scenario)
        body += _result_block(result, build, "estimate", lang)
        status = 200
    except InputError as error:
        body += error_box(error.text(lang), lang)
        status = 400
    html = page(translate("web.nav.estimate", lang), lang, "estimate", body, "/estimate")
    return html, status


# --- quote ---------------------------------------------------------------------------------


def _quote_form(values: Mapping[str, str], lang: str) -> str:
    offers = [(offer["id"], f"{offer['id']} ({offer['provider']})") for offer in services.offers()]
    fields = [
        select_field("offer", translate("web.form.offer", lang), values.get("offer", ""), offers),
        text_field("duration", translate("web.form.duration", lang), values.get("duration", "")),
        text_field("instances", translate("web.form.instances", lang), values.get("instances", "1")),
        text_field("tokens", translate("web.form.tokens", lang), values.get("tokens", "")),
        select_field("currency", translate("web.form.currency", lang), values.get("currency", ""),
                     [("", "-"), ("CNY", "CNY ¥"), ("USD", "USD $"), ("EUR", "EUR €")]),
    ]  # fmt: skip
    return _form("/quote", fields, lang)


@router.get("/quote", response_class=HTMLResponse, include_in_schema=False)
def quote_page(request: Request) -> HTMLResponse:
    lang = _language(request)
    body = _heading("quote", lang) + _quote_form(QUOTE_DEFAULTS, lang)
    return _respond(request, page(translate("web.nav.quote", lang), lang, "quote", body, "/quote"))


@router.post("/quote", response_class=HTMLResponse, include_in_schema=False)
async def quote_submit(request: Request) -> HTMLResponse:
    return await _answer(request, _quote_answer)


def _quote_answer(fields: dict[str, str], _: bytes | None, lang: str) -> tuple[str, int]:
    body = _heading("quote", lang) + _quote_form({**QUOTE_DEFAULTS, **fields}, lang)
    try:
        result, build = services.quote(
            fields.get("offer", ""),
            fields.get("duration", ""),
            parse_integer(fields.get("instances", "1"), "instances", lang),
            fields.get("tokens") or None,
            fields.get("currency") or None,
        )
        body += _result_block(result, build, "quote", lang)
        status = 200
    except InputError as error:
        body += error_box(error.text(lang), lang)
        status = 400
    return page(translate("web.nav.quote", lang), lang, "quote", body, "/quote"), status


# --- tco -----------------------------------------------------------------------------------


def _tco_form(text: str, lang: str) -> str:
    field = (
        f'<label class="wide">{escape(translate("web.form.tco_file", lang))}'
        f'<textarea name="inputs" id="inputs">{escape(text)}</textarea></label>'
    )
    return _form("/tco", [field], lang)


@router.get("/tco", response_class=HTMLResponse, include_in_schema=False)
def tco_page(request: Request) -> HTMLResponse:
    lang = _language(request)
    body = _heading("tco", lang) + _tco_form(SEED_TCO, lang)
    return _respond(request, page(translate("web.nav.tco", lang), lang, "tco", body, "/tco"))


@router.post("/tco", response_class=HTMLResponse, include_in_schema=False)
async def tco_submit(request: Request) -> HTMLResponse:
    return await _answer(request, _tco_answer)


def _tco_answer(fields: dict[str, str], _: bytes | None, lang: str) -> tuple[str, int]:
    text = fields.get("inputs", "")
    body = _heading("tco", lang) + _tco_form(text, lang)
    try:
        result, build = services.tco(parse_toml_text(text, lang))
        body += _result_block(result, build, "tco", lang)
        status = 200
    except InputError as error:
        body += error_box(error.text(lang), lang)
        status = 400
    return page(translate("web.nav.tco", lang), lang, "tco", body, "/tco"), status


# --- catalog -------------------------------------------------------------------------------


def _table(headers: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{escape(text)}</th>" for text in headers)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in row) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


@router.get("/catalog", response_class=HTMLResponse, include_in_schema=False)
def catalog_page(request: Request) -> HTMLResponse:
    lang = _language(request)
    gpus = [
        [
            gpu["id"],
            f"{gpu['memory_bytes'] / 2**30:.0f} GiB ({gpu['memory_quoted']})",
            f"{(gpu['peak_flops'].get('bf16') or gpu['peak_flops'].get('fp16') or 0) / 1e12:,.0f} TFLOP/s",
            f"{gpu['source'][:90]}",
            gpu["observed"],
        ]
        for gpu in services.gpus()
    ]
    models = [[model["name"], f"{model['total_params']:,}"] for model in services.models()]
    offers = [
        [
            offer["id"],
            offer["provider"],
            f"{offer['gpus']} x {offer['gpu']}",
            "; ".join(
                f"{billing_name(plan['name'], lang)}: {plan['price']} {offer['currency']}/{plan['per']}"
                for plan in offer["plans"]
            ),
            offer["observed"],
        ]
        for offer in services.offers()
    ]
    t = lambda key: translate(key, lang)  # noqa: E731
    body = (
        f"<h1>{escape(t('web.nav.catalog'))}</h1>"
        f"<h2>{escape(t('web.catalog.gpus'))}</h2>"
        + _table(
            [
                t("col.name"),
                t("col.memory"),
                t("col.bf16_peak"),
                t("col.source"),
                t("col.observed"),
            ],
            gpus,
        )
        + f"<h2>{escape(t('web.catalog.models'))}</h2>"
        + _table([t("col.name"), t("col.params")], models)
        + f"<h2>{escape(t('web.catalog.offers'))}</h2>"
        + _table(
            [t("col.offer"), t("col.provider"), t("col.gpus"), t("col.price"), t("col.observed")],
            offers,
        )
    )
    return _respond(request, page(t("web.nav.catalog"), lang, "catalog", body, "/catalog"))
