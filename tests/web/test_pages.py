"""The pages' Jinja2 templates: every page in both languages, escaping, the catalog's full
sources, the error page, and the templates shipped as package data."""

from __future__ import annotations

import fnmatch
import re
import tomllib
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient

from gpuplan.web import layout, services
from gpuplan.web.app import create_app

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def client():
    return TestClient(create_app())


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name", layout.PAGES)
def test_every_page_renders_in_both_languages_with_its_navigation(client, name, lang):
    html = client.get(f"/{name}", params={"lang": lang}).text
    assert html.startswith("<!DOCTYPE html>")
    assert f'<html lang="{"zh-CN" if lang == "zh" else "en"}">' in html
    active = re.findall(r'<a href="/(\w+)" class="active">', html)
    assert active == [name]
    assert f'href="/{name}?lang=zh"' in html and f'href="/{name}?lang=en"' in html
    assert html.count("<main>") == 1 and html.rstrip().endswith("</html>")
    assert ("<form" in html) == (name != "catalog")
    assert "{{" not in html and "{%" not in html


def test_chinese_pages_carry_no_english_form_labels(client):
    english = client.get("/plan", params={"lang": "en"}).text
    chinese = client.get("/plan", params={"lang": "zh"}).text
    labels = re.findall(r"<label>([^<]+)<", english)
    assert len(labels) >= 8
    assert not [label for label in labels if f"<label>{label}<" in chinese]


def test_the_tco_text_is_escaped_inside_its_textarea(client):
    response = client.post("/tco", data={"inputs": "</textarea><script>alert(1)</script>"})
    assert response.status_code == 400
    assert "<script>alert(1)" not in response.text
    assert "&lt;/textarea&gt;&lt;script&gt;" in response.text


def test_form_values_come_back_in_the_form(client):
    response = client.post("/quote", data={"offer": "xingyu-a100-40gb-x4", "duration": "9d"})
    assert response.status_code == 200
    assert 'id="duration" value="9d"' in response.text
    assert '<option value="xingyu-a100-40gb-x4" selected>' in response.text


def test_the_catalog_shows_each_source_whole(client):
    import html as html_text

    page = client.get("/catalog").text
    shown = html_text.unescape(page)
    for gpu in services.gpus():
        assert gpu["source"] in shown, gpu["id"]
        assert f'<td class="nowrap">{gpu["observed"]}</td>' in page, gpu["id"]


def test_an_answer_past_the_time_limit_is_a_503_page_in_the_language(monkeypatch):
    import time

    from gpuplan.web import pages

    def slow(fields, upload, lang):
        time.sleep(0.5)
        return {}

    monkeypatch.setattr(pages, "_plan_answer", slow)
    monkeypatch.setattr(pages, "ANSWER_SECONDS", 0.05)
    response = TestClient(create_app()).post("/plan", params={"lang": "zh"}, data={})
    assert response.status_code == 503
    assert '<html lang="zh-CN">' in response.text and 'role="alert"' in response.text
    assert pages.TOO_LONG in response.text


def test_every_template_is_package_data():
    """pyproject's package-data globs cover each file in web/templates (so a wheel has them)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    globs = config["tool"]["setuptools"]["package-data"]["gpuplan"]
    package = ROOT / "src" / "gpuplan"
    templates = sorted(layout.TEMPLATES.iterdir())
    assert {path.suffix for path in templates} >= {".html", ".css"}
    for path in templates:
        relative = path.relative_to(package).as_posix()
        assert any(fnmatch.fnmatch(relative, glob) for glob in globs), relative


def test_autoescape_is_on_for_every_template():
    environment = layout.environment()
    rendered = environment.from_string("{{ value }}").render(value='<b a="1">')
    assert rendered == "&lt;b a=&#34;1&#34;&gt;"
    assert environment.get_template("fields.html").module.text("x", "<i>", '"').strip() == (
        '<label>&lt;i&gt;<input name="x" id="x" value="&#34;"></label>'
    )
