"""The page around every view, rendered from the Jinja2 templates in ``templates/``
(autoescaped: every value from the user or the catalog is escaped unless marked ``Markup``).

Each page template extends ``base.html`` (navigation, language switch, the report's styles plus
``site.css``); ``fields.html`` holds the form controls."""

from __future__ import annotations

import base64
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from gpuplan.i18n import translate
from gpuplan.report.html import STYLE as REPORT_STYLE

PAGES = ("plan", "estimate", "quote", "tco", "catalog")
TEMPLATES = Path(__file__).with_name("templates")


@cache
def environment() -> Environment:
    """The template environment: autoescape on for every template, unknown names an error."""
    return Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def render(template: str, lang: str, active: str = "", path: str = "", **context: Any) -> str:
    """A whole page from ``template`` in ``lang``; ``active`` is the navigation entry shown as
    current, ``path`` the address the language switch links back to."""
    return (
        environment()
        .get_template(template)
        .render(
            t=lambda key, **values: translate(key, lang, **values),
            lang=lang,
            html_lang="zh-CN" if lang == "zh" else "en",
            pages=PAGES,
            active=active,
            path=path,
            report_style=Markup(REPORT_STYLE),
            **context,
        )
    )


def data_url(text: str, media_type: str) -> str:
    """``text`` as a base64 ``data:`` address, so a download travels inside the page."""
    encoded = base64.b64encode(text.encode("utf-8")).decode("ascii")
    return f"data:{media_type};base64,{encoded}"


def downloads(report_html: str, result_json: str, kind: str) -> dict[str, str]:
    """What the download links of a result need: file stem and the two ``data:`` addresses."""
    return {
        "kind": kind,
        "html": data_url(report_html, "text/html;charset=utf-8"),
        "json": data_url(result_json, "application/json"),
    }
