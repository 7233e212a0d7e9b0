"""Start-up time: paid by every run, in time and in money."""

from __future__ import annotations

import numpy as np
import pytest

from gpuplan.catalog import load_model
from gpuplan.estimate.startup import (
    DEFAULT_COMMUNICATOR_SECONDS_PER_NODE,
    StartupOptions,
    startup_seconds,
)
from gpuplan.scenario import parse_scenario
from gpuplan.workload.job import TrainingJob


def test_startup_grows_with_the_model_and_the_nodes():
    small = TrainingJob(load_model("llama-3.1-8b"))
    large = TrainingJob(load_model("llama-3.1-405b"))
    assert startup_seconds(large, 1, 8) > startup_seconds(small, 1, 8)
    nodes = startup_seconds(small, np.array([1, 101]), 8)
    assert nodes[1] - nodes[0] == pytest.approx(100 * DEFAULT_COMMUNICATOR_SECONDS_PER_NODE)
    assert 60 < float(startup_seconds(small, 1, 8)) < 900


def test_compiling_adds_its_warm_up():
    eager = TrainingJob(load_model("llama-3.1-8b"))
    compiled = TrainingJob(load_model("llama-3.1-8b"), compile=True)
    difference = float(startup_seconds(compiled, 1, 8) - startup_seconds(eager, 1, 8))
    assert difference == pytest.approx(StartupOptions().compile_seconds)


def test_a_scenario_overrides_the_startup():
    total = parse_scenario({"model": "llama-3.1-8b", "startup": "20m"})
    assert float(startup_seconds(total.job, 4, 8, total.startup)) == 1200
    parts = parse_scenario({"model": "llama-3.1-8b", "startup": {"provisioning": "10m"}})
    assert parts.startup.provisioning_seconds == 600
    from gpuplan.errors import InputError

    with pytest.raises(InputError, match=r"startup\.boot"):
        parse_scenario({"model": "llama-3.1-8b", "startup": {"boot": "1m"}})
