"""`gpuplan serve`: one worker runs the app object; several run the factory by import string;
every worker's BLAS runs one thread."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("fastapi")
uvicorn = pytest.importorskip("uvicorn")


@pytest.fixture
def runs(monkeypatch):
    calls = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: calls.append((app, options)))
    for variable in (
        "OPENBLAS_NUM_THREADS",
        "OMP_NUM_THREADS",
        "MKL_NUM_THREADS",
        "GPUPLAN_SERVE_HOSTS",
    ):
        monkeypatch.setenv(variable, "")  # recorded, so that teardown restores the original
        monkeypatch.delenv(variable)
    return calls


def test_one_worker_serves_the_app_on_loopback(cli, runs):
    code, out, _ = cli("serve", "--port", "8123")
    assert code == 0 and "127.0.0.1:8123" in out
    app, options = runs[0]
    assert not isinstance(app, str)
    assert options["host"] == "127.0.0.1" and options["port"] == 8123
    assert os.environ["OPENBLAS_NUM_THREADS"] == "1" and os.environ["OMP_NUM_THREADS"] == "1"


def test_several_workers_run_the_factory(cli, runs):
    code, _, _ = cli("serve", "--workers", "4")
    assert code == 0
    app, options = runs[0]
    assert app == "gpuplan.web.app:create_app"
    assert options["factory"] is True and options["workers"] == 4


def test_a_blas_setting_the_user_chose_is_kept(cli, runs, monkeypatch):
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "3")
    cli("serve")
    assert os.environ["OPENBLAS_NUM_THREADS"] == "3"


@pytest.mark.parametrize("workers", ["0", "-1", "x"])
def test_bad_worker_counts_are_refused(cli, runs, workers):
    code, _, err = cli("serve", "--workers", workers)
    assert code == 2 and "--workers" in err and not runs


def test_a_network_address_needs_allow_remote(cli, runs, monkeypatch):
    code, _, err = cli("serve", "--host", "0.0.0.0")
    assert code == 2 and "--allow-remote" in err and not runs
    code, _, err = cli("serve", "--host", "10.0.0.5", "--allow-remote")
    assert code == 0 and "warning" in err
    assert os.environ["GPUPLAN_SERVE_HOSTS"] == "10.0.0.5,127.0.0.1,localhost"
