"""Hostile input through the real entry point: each case ends in one line on stderr naming the
field (exit 2), never a traceback, a hang or a flood of output."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import pytest

SCENARIO = "model: llama-3.1-8b\nmethod: full\ntokens: 1B\nseq_len: 2048\nglobal_batch: 32\n"
LEVELS = "abcdefg"
BOMB = '_a: &a ["x", "x", "x", "x", "x", "x", "x", "x", "x"]\n' + "".join(
    f"_{name}: &{name} [{', '.join([f'*{previous}'] * 9)}]\n"
    for previous, name in itertools.pairwise(LEVELS)
)
"""A "billion laughs" document: seven levels of nine aliases, 9^7 values once expanded."""
HEAD = {"model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096}

FILES: dict[str, bytes] = {
    "not-utf8.yaml": b"\xff\xfe model: x\n",
    "bomb.yaml": (BOMB + SCENARIO + "name: *g\n").encode(),
    "deep.yaml": ("model: " + "[" * 2000 + "]" * 2000 + "\n").encode(),
    "deep.json": ('{"model": ' + "[" * 5000 + "]" * 5000 + "}").encode(),
    "nan.json": b'{"model": "llama-3.1-8b", "seq_len": NaN}',
    "seq-null.yaml": (SCENARIO.replace("seq_len: 2048", "seq_len: null")).encode(),
    "alpha.yaml": (SCENARIO.replace("full", "lora") + "lora: {alpha: abc}\n").encode(),
    "dropout.yaml": (SCENARIO.replace("full", "lora") + "lora: {dropout: 5}\n").encode(),
    "recompute.yaml": (SCENARIO + "strategy: {recompute: bogus}\n").encode(),
    "bandwidth.yaml": (
        SCENARIO
        + "hardware: {gpu: h100-sxm-80gb, count: 8}\nreliability: {storage_write_bandwidth: 0}\n"
    ).encode(),
    "huge-layers.json": json.dumps({**HEAD, "num_hidden_layers": 10**9}).encode(),
    "kv5.json": json.dumps({**HEAD, "num_attention_heads": 32, "num_key_value_heads": 5}).encode(),
    "thin.json": json.dumps({**HEAD, "hidden_size": 16, "num_attention_heads": 32}).encode(),
    "empty.json": b"{}",
    "not-utf8.json": b"\xff{}",
    "not-utf8.toml": b"\xff\xfe[tco]\n",
    "not-utf8.csv": b"\xff\xfeinstance,start\n",
    "offers-five.toml": b"offers = 5\n",
    "usage-superscript.csv": (
        "instance,start,stop,gpus\npod,2026-11-02T08:00:00Z,2026-11-02T09:00:00Z,\u00b2\n"
    ).encode(),
    "usage-huge.csv": (
        b"instance,start,stop,gpus,storage_gb\npod,2026-11-02T08:00:00Z,2026-11-02T09:00:00Z,1,1e400\n"
    ),
    "offers-binary.toml": b"\xff\xfe\x00",
    "tco-power.toml": (
        b'[tco]\ncurrency = "CNY"\nyears = 3\ngpus = 8\n[buy]\ngpus = 100\n[operations]\n'
        b'power = "x"\n[rent]\nmonthly = 5\n'
    ),
    "tco-negative.toml": (
        b'[tco]\ncurrency = "CNY"\nyears = 3\ngpus = -8\n[buy]\ngpus = 100\n[rent]\nmonthly = 5\n'
    ),
    "tco-pue.toml": (
        b'[tco]\ncurrency = "CNY"\nyears = 3\ngpus = 8\n[buy]\ngpus = 100\n[rent]\nmonthly = 5\n'
        b"[power]\npue = 0\ngpu_tdp_watts = 700\nprice_per_kwh = 1\n"
    ),
}

CASES = [
    (["estimate", "{not-utf8.yaml}"], "UTF-8"),
    (["estimate", "{bomb.yaml}"], "aliases"),
    (["estimate", "{deep.yaml}"], "nested"),
    (["estimate", "{deep.json}"], "nested"),
    (["estimate", "{nan.json}"], "NaN"),
    (["estimate", "{seq-null.yaml}"], "seq_len"),
    (["estimate", "{alpha.yaml}"], "lora.alpha"),
    (["estimate", "{dropout.yaml}"], "lora.dropout"),
    (["plan", "{recompute.yaml}"], "strategy.recompute"),
    (["estimate", "{bandwidth.yaml}"], "storage_write_bandwidth"),
    (["model", "{huge-layers.json}"], "num_hidden_layers"),
    (["memory", "--model", "{huge-layers.json}", "--gpu", "h100"], "num_hidden_layers"),
    (["plan", "--model", "{huge-layers.json}", "--tokens", "1B"], "num_hidden_layers"),
    (["model", "{kv5.json}"], "num_key_value_heads"),
    (["model", "{thin.json}"], "num_attention_heads"),
    (["model", "{empty.json}"], "num_hidden_layers"),
    (["model", "{not-utf8.json}"], "UTF-8"),
    (["model", "x" * 300], "unknown model"),
    (["offers", "--offers", "{offers-five.toml}"], "offers: expected a list"),
    (["offers", "--offers", "{offers-binary.toml}"], "UTF-8"),
    (["tco", "{not-utf8.toml}"], "UTF-8"),
    (["audit", "{not-utf8.csv}", "--offer", "xingyu-a100-40gb-x4"], "UTF-8"),
    (
        [
            "plan",
            "--model",
            "llama-3.1-8b",
            "--tokens",
            "1B",
            "--export",
            "torchtitan",
            "--export-path",
            "/proc",
        ],
        "/proc",
    ),
    (["audit", "{usage-superscript.csv}", "--offer", "xingyu-a100-40gb-x4"], "gpus"),
    (["audit", "{usage-huge.csv}", "--offer", "xingyu-a100-40gb-x4"], "storage_gb"),
    (["tco", "{tco-power.toml}"], "operations.power"),
    (["tco", "{tco-negative.toml}"], "tco.gpus"),
    (["tco", "{tco-pue.toml}"], "power.pue"),
    (["plan", "--model", "llama-3.1-8b", "--tokens", "1.5.5B"], "1.5.5"),
    (["plan", "--model", "llama-3.1-8b", "--tokens", "1B", "--seq-len", "1" + "0" * 19], "seq_len"),
    (["plan", "--model", "llama-3.1-8b", "--tokens", "1B", "--budget", "$1e-999999999"], "money"),
    (["plan", "--model", "llama-3.1-8b", "--tokens", "1B", "--headroom", "nan"], "--headroom"),
    (["quote", "--offer", "xingyu-a100-40gb-x4", "--duration", "40d", "--tax-rate", "inf"], "tax"),
    (["quote", "--offer", "xingyu-a100-40gb-x4", "--duration", "40d", "--tax-rate", "nan"], "tax"),
    (
        ["quote", "--offer", "xingyu-a100-40gb-x4", "--tokens", "1B", "--tokens-per-second", "inf"],
        "tokens-per-second",
    ),
]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("hostile")
    for name, content in FILES.items():
        (folder / name).write_bytes(content)
    return folder


@pytest.mark.parametrize(("arguments", "named"), CASES, ids=[" ".join(c[0])[:60] for c in CASES])
def test_hostile_input_is_one_line_naming_the_field(files: Path, arguments, named) -> None:
    resolved = [
        str(files / item[1:-1]) if item.startswith("{") and item.endswith("}") else item
        for item in arguments
    ]
    result = subprocess.run(
        [sys.executable, "-c", "from gpuplan.cli.app import main; main()", *resolved],
        capture_output=True,
        text=True,
        timeout=20,
        check=False,
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin", "GPUPLAN_CACHE_DIR": "off"},
    )
    assert result.returncode == 2, result.stderr[-500:]
    assert "Traceback" not in result.stderr
    assert named.lower() in result.stderr.lower(), result.stderr[-500:]
    assert len(result.stderr) < 2000 and len(result.stdout) < 2000


def test_memory_needs_no_bandwidth() -> None:
    """A GPU the speed model does not time (no published efficiency measurements) still gets
    its memory answer."""
    from gpuplan.api import memory_estimate

    result = memory_estimate(
        {"model": "llama-3.1-8b", "method": "qlora", "hardware": {"gpu": "910B", "count": 1}}
    )
    assert result["memory"]["peak_bytes"] > 0 and "910" in result["hardware"]["gpu"]
