"""The page around every view: navigation, language switch, styles (the report's plus forms).
Plain string templates; every piece of user text goes through ``html.escape``."""

from __future__ import annotations

import base64
from html import escape

from gpuplan.i18n import translate
from gpuplan.report.html import STYLE as REPORT_STYLE

PAGES = ("plan", "estimate", "quote", "tco", "catalog")

FORM_STYLE = """
header.site { background: #1d2330; color: #fff; }
header.site .bar { max-width: 1080px; margin: 0 auto; padding: 10px 28px; display: flex;
  gap: 18px; align-items: center; flex-wrap: wrap; }
header.site a { color: #dfe6f3; text-decoration: none; }
header.site a.active { color: #fff; font-weight: 700; border-bottom: 2px solid #7fb0ea; }
header.site .brand { font-weight: 800; font-size: 1.1rem; color: #fff; margin-right: 8px; }
header.site .lang { margin-left: auto; font-size: 0.9rem; }
form.query { display: grid; grid-template-columns: repeat(auto-fill, minmax(230px, 1fr));
  gap: 10px 16px; background: #f4f6fa; padding: 14px 16px; border-radius: 6px; margin: 12px 0; }
form.query label { display: flex; flex-direction: column; font-size: 0.85rem; gap: 3px; }
form.query input, form.query select, form.query textarea { font: inherit; padding: 5px 7px;
  border: 1px solid #b9c2d0; border-radius: 4px; background: #fff; }
form.query textarea { min-height: 260px; font-family: ui-monospace, monospace; font-size: 0.8rem; }
form.query .wide { grid-column: 1 / -1; }
form.query button { grid-column: 1 / -1; justify-self: start; padding: 8px 22px; font: inherit;
  font-weight: 600; background: #3b6ea8; color: #fff; border: 0; border-radius: 4px; cursor: pointer; }
.error { background: #fdecea; border-left: 5px solid #c44e52; padding: 10px 14px; color: #7d1f1f; }
.downloads { display: flex; gap: 16px; margin: 14px 0; }
.downloads a { padding: 6px 14px; border: 1px solid #3b6ea8; border-radius: 4px; text-decoration: none; }
.intro { color: #5b6475; }
"""


def page(title: str, lang: str, active: str, body: str, path: str = "") -> str:
    """A whole HTML page."""
    links = "".join(
        f'<a href="/{name}"{" class=active" if name == active else ""}>'
        f"{escape(translate(f'web.nav.{name}', lang))}</a>"
        for name in PAGES
    )
    links += f'<a href="/openapi.json">{escape(translate("web.nav.api", lang))}</a>'
    switch = " · ".join(
        f'<a href="{escape(path)}?lang={code}">{escape(translate(f"lang.{code}", lang))}</a>'
        for code in ("en", "zh")
    )
    html_lang = "zh-CN" if lang == "zh" else "en"
    return (
        f'<!DOCTYPE html>\n<html lang="{html_lang}">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)} · gpuplan</title>\n<style>{REPORT_STYLE}{FORM_STYLE}</style>\n"
        "</head>\n<body>\n"
        f'<header class="site no-print"><nav class="bar"><span class="brand">gpuplan</span>{links}'
        f'<span class="lang">{escape(translate("web.language", lang))}: {switch}</span></nav></header>\n'
        f"<main>\n{body}\n</main>\n</body>\n</html>\n"
    )


def error_box(message: str, lang: str) -> str:
    return (
        f'<p class="error" role="alert">{escape(translate("web.error", lang, message=message))}</p>'
    )


def downloads(report_html: str, result_json: str, kind: str, lang: str) -> str:
    """Links that download the report and the JSON; the files travel inside the page."""
    html_data = base64.b64encode(report_html.encode("utf-8")).decode("ascii")
    json_data = base64.b64encode(result_json.encode("utf-8")).decode("ascii")
    return (
        '<div class="downloads no-print">'
        f'<a download="gpuplan-{kind}.html" href="data:text/html;charset=utf-8;base64,{html_data}">'
        f"{escape(translate('web.download.html', lang))}</a>"
        f'<a download="gpuplan-{kind}.json" href="data:application/json;base64,{json_data}">'
        f"{escape(translate('web.download.json', lang))}</a></div>"
    )


def text_field(name: str, label: str, value: str, **attributes: str) -> str:
    extra = "".join(
        f' {key.replace("_", "-")}="{escape(item)}"' for key, item in attributes.items()
    )
    return f'<label>{escape(label)}<input name="{name}" id="{name}" value="{escape(value)}"{extra}></label>'


def select_field(name: str, label: str, value: str, choices: list[tuple[str, str]]) -> str:
    options = "".join(
        f'<option value="{escape(code)}"{" selected" if code == value else ""}>{escape(text)}</option>'
        for code, text in choices
    )
    return f'<label>{escape(label)}<select name="{name}" id="{name}">{options}</select></label>'


def datalist(identifier: str, values: list[str]) -> str:
    options = "".join(f'<option value="{escape(value)}"></option>' for value in values)
    return f'<datalist id="{identifier}">{options}</datalist>'
