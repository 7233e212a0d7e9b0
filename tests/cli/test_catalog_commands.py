"""`gpuplan models|model|gpus|gpu`, run through the real entry point (gpuplan.cli.app:main)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpuplan.catalog import model_names
from gpuplan.cli.app import main

ENTRY_POINT = "import sys; from gpuplan.cli.app import main; sys.exit(main())"


def run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str, str]:
    """Call main() as the console script does; return (exit code, stdout, stderr)."""
    monkeypatch.setattr(sys, "argv", ["gpuplan", *args])
    try:
        main()
        code = 0
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else 1
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_models_json_holds_every_model(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(monkeypatch, capsys, "models", "--json")
    assert code == 0
    rows = json.loads(out)
    assert [row["name"] for row in rows] == model_names()
    assert all(isinstance(row["total_params"], int) and row["total_params"] > 0 for row in rows)


def test_model_json(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(monkeypatch, capsys, "model", "llama-3.1-8b", "--json")
    assert code == 0
    assert json.loads(out)["total_params"] == 8_030_261_248


def test_model_from_a_config_file(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "llama"}), encoding="utf-8")
    code, out, _ = run(monkeypatch, capsys, "model", str(path), "--json")
    assert code == 0
    assert json.loads(out)["total_params"] == 6_738_415_616


def test_gpu_json(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(monkeypatch, capsys, "gpu", "h100", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["id"] == "h100-sxm-80gb"
    assert data["memory_bytes"] == 85_899_345_920
    assert data["peak_flops"]["bf16"] == 989e12


def test_gpus_json_and_tables(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(monkeypatch, capsys, "gpus", "--json")
    assert code == 0
    assert len(json.loads(out)) == 24
    for args in (("gpus",), ("models",), ("model", "deepseek-v3"), ("gpu", "910B")):
        code, out, _ = run(monkeypatch, capsys, *args)
        assert code == 0
        assert out.strip()


def test_gpu_table_names_the_main_source_once(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(monkeypatch, capsys, "gpu", "h100")
    assert code == 0
    assert out.count("ml-engineering") == 1
    assert "Source: " in out
    assert "aiinframap" in out


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("model", "llama-3.1-8"), "did you mean"),
        (("gpu", "H100 SXMM"), "did you mean"),
        (("gpu", "rtx4009"), "did you mean"),
    ],
)
def test_unknown_names_exit_2_with_one_line(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: tuple[str, ...],
    expected: str,
) -> None:
    code, out, err = run(monkeypatch, capsys, *args)
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error: ")
    assert expected in lines[0]


def test_malformed_config_exits_2_with_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "bad.json"
    path.write_text("{not json", encoding="utf-8")
    code, _, err = run(monkeypatch, capsys, "model", str(path))
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1
    assert "not valid JSON" in lines[0]


def _subprocess(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", ENTRY_POINT, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_entry_point_exit_codes_in_a_fresh_process(tmp_path: Path) -> None:
    done = _subprocess("model", "no-such-model")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "did you mean" in done.stderr or "unknown model" in done.stderr
    assert "Traceback" not in done.stderr

    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2", encoding="utf-8")
    done = _subprocess("model", str(bad))
    assert done.returncode == 2
    assert done.stderr.startswith("error: ")
    assert "Traceback" not in done.stderr

    done = _subprocess("model", "llama-3.1-8b", "--json")
    assert done.returncode == 0
    assert json.loads(done.stdout)["total_params"] == 8_030_261_248
