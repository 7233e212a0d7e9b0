"""An accelerator with no published matmul or attention efficiency measurements gets its memory
answer and a plain statement of what is not predicted, never a guessed speed."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from gpuplan.api import estimate, memory_estimate, plan_search
from gpuplan.catalog import all_gpus
from gpuplan.errors import InputError

GAPS = [gpu for gpu in all_gpus() if gpu.speed_model_gap]


def _job(gpu_id: str) -> dict:
    return {
        "model": "llama-3.1-8b",
        "method": "qlora",
        "seq_len": 2048,
        "global_batch": 8,
        "tokens": "100M",
        "hardware": {"gpu": gpu_id, "count": 1},
    }


@pytest.mark.parametrize("gpu", GAPS, ids=[gpu.id for gpu in GAPS])
def test_memory_is_answered_and_speed_is_refused_with_the_reason(gpu) -> None:
    memory = memory_estimate(_job(gpu.id))["memory"]
    assert memory["peak_bytes"] > 0 and memory["capacity_bytes"] == gpu.memory_bytes
    with pytest.raises(InputError) as raised:
        estimate(_job(gpu.id))
    assert gpu.speed_model_gap in str(raised.value)


@pytest.mark.parametrize("gpu", GAPS, ids=[gpu.id for gpu in GAPS])
def test_a_plan_says_what_is_not_predicted(gpu) -> None:
    result = plan_search(_job(gpu.id))
    assert not result["plans"]
    assert any(gpu.speed_model_gap in reason for reason in result["skipped_gpus"])
    assert gpu.speed_model_gap in result["explanation"]


def test_gpu_command_states_the_gap() -> None:
    from gpuplan.cli.app import app

    gpu = GAPS[0]
    shown = CliRunner().invoke(app, ["gpu", gpu.id], env={"COLUMNS": "400"})
    assert shown.exit_code == 0, shown.output
    assert "Speed not predicted" in shown.output
    assert gpu.speed_model_gap.split(":")[0] in " ".join(shown.output.split())
