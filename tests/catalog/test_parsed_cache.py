"""The parsed-catalog cache returns what tomllib returns, and never a stale or broken copy."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from gpuplan.catalog import read_catalog_toml
from gpuplan.catalog.parsed_cache import cache_directory, parse_catalog_toml

DOCUMENT = b'[gpu]\nname = "H100"\nflops = 989.4e12\ncount = 8\nlinks = [1, 2.5, "x"]\n'


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GPUPLAN_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_first_read_parses_and_writes_the_cache(cache: Path) -> None:
    assert parse_catalog_toml(DOCUMENT, "offers/x.toml") == tomllib.loads(DOCUMENT.decode())
    assert [path.name for path in cache.iterdir()] == ["offers__x.toml.json"]


def test_second_read_comes_from_the_cache(cache: Path) -> None:
    parse_catalog_toml(DOCUMENT, "x.toml")
    cached = cache / "x.toml.json"
    digest, body = cached.read_bytes()[:16], cached.read_bytes()[16:]
    cached.write_bytes(digest + body.replace(b"H100", b"H200"))
    assert parse_catalog_toml(DOCUMENT, "x.toml")["gpu"]["name"] == "H200"


def test_an_edited_file_is_parsed_again(cache: Path) -> None:
    parse_catalog_toml(DOCUMENT, "x.toml")
    edited = DOCUMENT.replace(b"count = 8", b"count = 4")
    assert parse_catalog_toml(edited, "x.toml")["gpu"]["count"] == 4


@pytest.mark.parametrize("garbage", [b"", b"short", b"0" * 16 + b"{not json", b"0" * 40])
def test_a_broken_cache_file_is_replaced(cache: Path, garbage: bytes) -> None:
    cache.mkdir()
    (cache / "x.toml.json").write_bytes(garbage)
    assert parse_catalog_toml(DOCUMENT, "x.toml") == tomllib.loads(DOCUMENT.decode())
    assert (cache / "x.toml.json").read_bytes() != garbage


def test_an_unwritable_cache_changes_nothing_but_speed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("GPUPLAN_CACHE_DIR", str(blocker / "cache"))
    assert parse_catalog_toml(DOCUMENT, "x.toml") == tomllib.loads(DOCUMENT.decode())
    assert blocker.read_text() == "not a folder"


def test_dates_are_parsed_but_not_cached(cache: Path) -> None:
    dated = b"observed = 2025-06-01\n"
    assert parse_catalog_toml(dated, "d.toml") == tomllib.loads(dated.decode())
    assert not (cache / "d.toml.json").exists()
    assert not list(cache.glob(".*.tmp"))


def test_off_disables_the_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUPLAN_CACHE_DIR", "off")
    assert cache_directory() is None


def test_default_location_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("GPUPLAN_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_directory() == tmp_path / "gpuplan"


def test_every_built_in_file_reads_the_same_through_the_cache(cache: Path) -> None:
    data = Path(__file__).parents[2] / "src" / "gpuplan" / "catalog" / "data"
    for path in sorted(data.rglob("*.toml")):
        parts = path.relative_to(data).parts
        expected = tomllib.loads(path.read_text("utf-8"))
        assert read_catalog_toml(*parts) == expected
        assert read_catalog_toml(*parts) == expected, f"{path.name} differs when read back"
