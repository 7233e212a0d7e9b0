"""Exports checked by the tools that read them: the top plans of the presets and of an MoE, an
fp8 and a LoRA job, in every format their layout can be written in, go through SkyPilot's,
torchtitan's, DeepSpeed's and Accelerate's own loaders (tests/export/launchers), and every
flag of a Megatron-LM script is one that the named Megatron-LM release's parser defines.

The loaders live in their own environment (``scripts/launchers-venv.sh`` builds
``.venv-launchers``; ``$GPUPLAN_LAUNCHERS_PYTHON`` points elsewhere); without it these tests
skip, unless ``$GPUPLAN_REQUIRE_LAUNCHERS`` is set, as CI sets it."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest

from gpuplan.export import FORMATS, ExportError, export_plan
from gpuplan.export.megatron import MEGATRON_RELEASE
from gpuplan.scenario import parse_scenario

ROOT = Path(__file__).resolve().parents[2]
CHECKER = Path(__file__).parent / "launchers" / "check_exports.py"
MEGATRON_FLAGS = Path(__file__).parent / "data" / f"megatron_flags_{MEGATRON_RELEASE}.txt"
JOBS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "moe": (
        {"model": "qwen3-30b-a3b", "tokens": "20B", "seq_len": 4096, "global_batch": 256},
        {"gpus": ("h100",), "max_gpus": 64},
    ),
    "fp8": (
        {"model": "llama-3.1-8b", "tokens": "50B", "precision": "fp8", "global_batch": 256},
        {"gpus": ("h100",), "max_gpus": 64},
    ),
    "lora": (
        {"model": "llama-3.1-8b", "method": "lora", "tokens": "200M", "seq_len": 2048},
        {"max_gpus": 8},
    ),
    "aws": (
        {"model": "llama-3.1-70b", "tokens": "20B"},
        {"providers": ("AWS",), "gpus": ("h100",)},
    ),
}
SKYPILOT_CATALOG = ROOT / "tests" / "pricing" / "data" / "skypilot_vms_sample.csv"
"""Rows of SkyPilot's own AWS catalog (p5.48xlarge in us-east-1 among them), placed where
SkyPilot looks for its catalog, so that it checks an instance type without a network."""
LOADED_FORMATS = ("skypilot", "torchtitan", "deepspeed", "accelerate", "megatron")


def _launchers_python() -> Path:
    configured = os.environ.get("GPUPLAN_LAUNCHERS_PYTHON")
    python = Path(configured) if configured else ROOT / ".venv-launchers" / "bin" / "python"
    if not python.exists():
        if os.environ.get("GPUPLAN_REQUIRE_LAUNCHERS"):
            pytest.fail(f"no launcher environment at {python}: run scripts/launchers-venv.sh")
        pytest.skip("no launcher environment: run scripts/launchers-venv.sh")
    return python


def _jobs() -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    from gpuplan.presets import PRESETS

    presets = {
        name: (dict(preset["scenario"]), dict(preset["options"]))
        for name, preset in PRESETS.items()
    }
    return {**presets, **JOBS}


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """Every (job, format) the job's top plan can be exported to, written to disk."""
    from gpuplan.api import plan_search

    folder = tmp_path_factory.mktemp("exports")
    written = []
    for job, (scenario, options) in _jobs().items():
        parsed = parse_scenario(scenario)
        plan = plan_search(parsed, **options, limit=1)["plans"][0]
        for fmt in FORMATS:
            try:
                exported = export_plan(plan, parsed, fmt)
            except ExportError as refused:
                assert any(other in str(refused) for other in FORMATS if other != fmt)
                continue
            path = folder / f"{job}-{exported.filename}"
            path.write_text(exported.text, "utf-8")
            written.append(
                {
                    "job": job,
                    "format": fmt,
                    "path": str(path),
                    "data_parallel": plan["strategy"]["dp"],
                }
            )
    return written


def _check(entries: list[dict[str, Any]], folder: Path) -> list[dict[str, Any]]:
    manifest = folder / "manifest.json"
    manifest.write_text(json.dumps(entries), "utf-8")
    home = folder / "home"
    catalog = home / ".sky" / "catalogs" / "v8" / "aws" / "vms.csv"
    catalog.parent.mkdir(parents=True, exist_ok=True)
    catalog.write_bytes(SKYPILOT_CATALOG.read_bytes())
    completed = subprocess.run(
        [str(_launchers_python()), str(CHECKER), str(manifest)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env={
            **os.environ,
            "HOME": str(home),
            "SKYPILOT_DISABLE_USAGE_COLLECTION": "1",
            "PYTHONWARNINGS": "ignore",
        },
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    return json.loads(completed.stdout.strip().splitlines()[-1])


def test_every_export_is_accepted_by_its_launcher(exports, tmp_path) -> None:
    loaded = [entry for entry in exports if entry["format"] in LOADED_FORMATS]
    assert {entry["format"] for entry in loaded} == set(LOADED_FORMATS)
    assert {entry["job"] for entry in loaded} >= {"moe", "fp8", "lora", "aws"}
    aws_task = next(e for e in loaded if e["job"] == "aws" and e["format"] == "skypilot")
    assert "instance_type: p5.48xlarge" in Path(aws_task["path"]).read_text("utf-8")
    results = _check(loaded, tmp_path)
    refused = [
        f"{entry['job']} {entry['format']}: {result['detail']}"
        for entry, result in zip(loaded, results, strict=True)
        if not result["ok"]
    ]
    assert not refused, "\n".join(refused)


BROKEN = {
    "skypilot": (
        "task.yaml",
        "name: x\nresources:\n  cloud: aws\n  instance_type: p9.bogus\n  accelerators: H100:8\n",
    ),
    "torchtitan": ("train.toml", "[training]\nseq_len = 4096\nlocal_batch_sise = 8\n"),
    "deepspeed": (
        "ds.json",
        '{"train_batch_size": 256, "train_micro_batch_size_per_gpu": 1, '
        '"gradient_accumulation_steps": 16}',
    ),
    "accelerate": ("acc.yaml", "distributed_type: FSDP\nnum_processes: 8\nnum_procesess: 8\n"),
    "megatron": (
        "train.sh",
        "torchrun pretrain_gpt.py --num-layers 6 --pipeline-model-parallel-size 2 "
        "--pipeline-model-parallel-layout 'Et|tt|tt|ttL'\n",
    ),
}
"""One bad file per launcher: an instance type no AWS catalog lists, a misspelled key, a batch
that 8 ranks cannot make, or a pipeline layout that places 7 of 6 layers."""


def test_the_launchers_refuse_a_broken_file(tmp_path) -> None:
    entries = []
    for fmt, (name, text) in BROKEN.items():
        path = tmp_path / name
        path.write_text(text, "utf-8")
        entries.append({"format": fmt, "path": str(path), "data_parallel": 8})
    results = _check(entries, tmp_path)
    accepted = [e["format"] for e, result in zip(entries, results, strict=True) if result["ok"]]
    assert not accepted, f"accepted a broken file: {accepted}"


ARGUMENT = re.compile(r"^\s+(--[a-z0-9][a-z0-9-]*)", re.MULTILINE)


def _script_flags(text: str) -> set[str]:
    """The Megatron-LM flags of an exported script: every ``--flag`` inside the argument
    arrays, except torchrun's own (``DISTRIBUTED_ARGS``)."""
    flags = set()
    for block in re.findall(r"^(\w+)_ARGS=\(\n(.*?)^\)", text, re.MULTILINE | re.DOTALL):
        if block[0] != "DISTRIBUTED":
            flags |= set(ARGUMENT.findall(block[1]))
    return flags


def test_every_megatron_flag_exists_in_the_named_release(exports) -> None:
    known = {
        line.strip()
        for line in MEGATRON_FLAGS.read_text("utf-8").splitlines()
        if line.startswith("--")
    }
    scripts = [entry for entry in exports if entry["format"] == "megatron"]
    assert len(scripts) >= 3
    for entry in scripts:
        text = Path(entry["path"]).read_text("utf-8")
        assert MEGATRON_RELEASE in text
        flags = _script_flags(text)
        assert len(flags) > 20
        unknown = sorted(flags - known)
        assert not unknown, f"{entry['job']}: {unknown} not in Megatron-LM {MEGATRON_RELEASE}"


CPU_TRAINER = Path(__file__).parent / "launchers" / "train_deepspeed_cpu.py"
CPU_JOB = (
    {"model": "llama-3.1-8b", "tokens": "200M", "seq_len": 2048, "global_batch": 32},
    {"gpus": ("h100",), "max_gpus": 2},
)
"""A job whose cheapest plan is ZeRO data parallelism over two GPUs: its DeepSpeed file is
launched as exported, on two CPU ranks."""
CPU_STEPS = 3


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.slow
def test_a_deepspeed_export_trains_on_two_cpu_ranks(tmp_path) -> None:
    """DeepSpeed runs on the CPU (its CPU accelerator, gloo); Accelerate's FSDP and torchtitan
    do not (docs/export.md says why), so DeepSpeed is the launcher that runs an export here."""
    from gpuplan.api import plan_search

    scenario, options = CPU_JOB
    parsed = parse_scenario(scenario)
    plan = plan_search(parsed, **options, limit=1)["plans"][0]
    strategy = plan["strategy"]
    assert strategy["dp"] == 2 and strategy["zero"] >= 1, strategy
    exported = export_plan(plan, parsed, "deepspeed")
    config_path = tmp_path / exported.filename
    config_path.write_text(exported.text, "utf-8")
    config = json.loads(exported.text)
    python = _launchers_python()
    completed = subprocess.run(
        [str(python), "-m", "torch.distributed.run", "--nproc_per_node", "2",
         "--master_port", str(_free_port()), str(CPU_TRAINER), str(config_path), str(CPU_STEPS)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env={
            **os.environ,
            "DS_ACCELERATOR": "cpu",
            "TORCH_EXTENSIONS_DIR": str(python.parents[1] / "torch-extensions"),
            "PYTHONWARNINGS": "ignore",
            "OMP_NUM_THREADS": "1",
        },
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr[-3000:]
    report = json.loads(completed.stdout.strip().splitlines()[-1])
    assert report["world_size"] == strategy["dp"]
    assert report["zero_stage"] == config["zero_optimization"]["stage"] == strategy["zero"]
    assert report["optimizer_steps"] == CPU_STEPS
    assert report["losses_finite"]
    assert len(report["losses"]) == CPU_STEPS * config["gradient_accumulation_steps"]
    rates = report["learning_rates"]
    assert len(rates) == CPU_STEPS
    assert config["scheduler"]["params"]["warmup_num_steps"] > CPU_STEPS
    assert rates == sorted(rates) and 0 < rates[-1] <= config["optimizer"]["params"]["lr"], rates
