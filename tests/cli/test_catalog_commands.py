"""`gpuplan models|model|gpus|gpu`, run through the real entry point (gpuplan.cli.app:main)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpuplan.catalog import model_names

ENTRY_POINT = "import sys; from gpuplan.cli.app import main; sys.exit(main())"


def test_models_json_holds_every_model(cli, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli("models", "--json")
    assert code == 0
    rows = json.loads(out)
    assert [row["name"] for row in rows] == model_names()
    assert all(isinstance(row["total_params"], int) and row["total_params"] > 0 for row in rows)


def test_model_json(cli, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli("model", "llama-3.1-8b", "--json")
    assert code == 0
    assert json.loads(out)["total_params"] == 8_030_261_248


def test_model_from_a_config_file(cli, tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    sizes = {"model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096}
    path.write_text(json.dumps(sizes), encoding="utf-8")
    code, out, _ = cli("model", str(path), "--json")
    assert code == 0
    assert json.loads(out)["total_params"] == 6_738_415_616


@pytest.mark.parametrize("config", [{}, {"model_type": "llama"}, {"hidden_size": 4096}])
def test_a_config_without_its_sizes_is_refused(cli, tmp_path: Path, config) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    code, _, err = cli("model", str(path))
    assert code == 2 and "num_hidden_layers" in err and "hidden_size" in err


def test_gpu_json(cli) -> None:
    code, out, _ = cli("gpu", "h100", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["id"] == "h100-sxm-80gb"
    assert data["memory_bytes"] == 85_899_345_920
    assert data["peak_flops"]["bf16"] == 989e12


def test_gpus_json_and_tables(cli, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli("gpus", "--json")
    assert code == 0
    from gpuplan.catalog import gpu_ids

    assert [gpu["id"] for gpu in json.loads(out)] == gpu_ids()
    for args in (("gpus",), ("models",), ("model", "deepseek-v3"), ("gpu", "910B")):
        code, out, _ = cli(*args)
        assert code == 0
        assert out.strip()


def test_gpu_table_names_the_main_source_once(cli, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli("gpu", "h100")
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
    cli,
    args: tuple[str, ...],
    expected: str,
) -> None:
    code, out, err = cli(*args)
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error: ")
    assert expected in lines[0]


def test_malformed_config_exits_2_with_one_line(cli, tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text("{not json", encoding="utf-8")
    code, _, err = cli("model", str(path))
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
