"""The one writer: atomic, never over an existing file unless asked, never through a link."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpuplan.writing import WriteError, write_atomically


def test_writes_and_refuses_to_replace_unless_asked(tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    write_atomically(target, "first")
    with pytest.raises(WriteError, match="already exists; pass --force"):
        write_atomically(target, "second")
    assert target.read_text() == "first"
    write_atomically(target, "second", overwrite=True)
    assert target.read_text() == "second"


def test_never_writes_through_a_symbolic_link(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("keep")
    link = tmp_path / "link.html"
    link.symlink_to(victim)
    with pytest.raises(WriteError, match="symbolic link"):
        write_atomically(link, "x", overwrite=True)
    assert victim.read_text() == "keep"


@pytest.mark.parametrize("where", ["missing/r.html", "."])
def test_a_missing_folder_or_a_folder_is_refused(tmp_path: Path, where: str) -> None:
    with pytest.raises(WriteError):
        write_atomically(tmp_path / where, "x")


def test_a_failed_write_leaves_the_old_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "r.md"
    target.write_text("old")

    def fail(source: str, destination: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(WriteError, match="No space left"):
        write_atomically(target, "new", overwrite=True)
    assert target.read_text() == "old"
    assert [path.name for path in tmp_path.iterdir()] == ["r.md"]


def test_an_interrupted_write_cleans_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupt(source: str, destination: str) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupt)
    with pytest.raises(KeyboardInterrupt):
        write_atomically(tmp_path / "r.md", "new")
    assert list(tmp_path.iterdir()) == []
