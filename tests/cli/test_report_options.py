"""`--report`: written atomically, replaced only with `--force`, bad paths in one line."""

from __future__ import annotations

from pathlib import Path

import pytest


def test_report_refuses_to_overwrite_without_force(cli, tmp_path: Path) -> None:
    target = tmp_path / "quote.md"
    arguments = ("quote", "--offer", "xingyu-a100-40gb-x4", "--duration", "1d", "--report")
    assert cli(*arguments, str(target))[0] == 0
    code, _, err = cli(*arguments, str(target))
    assert code == 2 and "--force" in err
    assert cli(*arguments, str(target), "--force")[0] == 0


@pytest.mark.parametrize("path", ["/nonexistent/r.html", "/proc"])
def test_report_to_an_impossible_path_is_one_line(cli, path: str) -> None:
    code, _, err = cli(
        "quote", "--offer", "xingyu-a100-40gb-x4", "--duration", "1d", "--report", path
    )
    assert code == 2 and "Traceback" not in err and ("report" in err.lower() or path in err)
