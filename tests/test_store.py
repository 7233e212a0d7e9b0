"""The SQLite store: whole runs in, whole runs out, in the directory GPUPLAN_DATA_DIR names."""

from __future__ import annotations

import pytest

from gpuplan import store


def sample_run(verdict: str = "PASS") -> dict:
    return {
        "method_version": 1,
        "gpu_id": "h100-sxm-80gb",
        "worst_verdict": verdict,
        "provenance": {
            "date": "2026-01-02T03:04:05+00:00",
            "hostname": "node-1",
            "device": "cuda",
            "command": "gpuplan bench --quick",
            "gpus": [],
        },
        "figures": [],
        "measurements": {"nan": float("nan")},
    }


def test_runs_are_stored_in_the_data_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUPLAN_DATA_DIR", str(tmp_path))
    first = store.save_bench_run(sample_run())
    second = store.save_bench_run(sample_run("FAIL"))
    assert (tmp_path / store.DATABASE_NAME).exists()
    assert second > first
    history = store.list_bench_runs()
    assert [run.id for run in history] == [second, first]
    assert history[0].worst_verdict == "FAIL"
    assert history[0].to_dict()["gpu_id"] == "h100-sxm-80gb"
    loaded = store.load_bench_run(first)
    assert loaded["id"] == first
    assert loaded["provenance"]["hostname"] == "node-1"
    assert loaded["measurements"]["nan"] is None


def test_unknown_run_is_a_one_line_input_error(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUPLAN_DATA_DIR", str(tmp_path))
    with pytest.raises(store.StoreError, match="no stored benchmark run 42"):
        store.load_bench_run(42)


def test_a_failed_write_leaves_no_half_row(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUPLAN_DATA_DIR", str(tmp_path))
    broken = sample_run()
    broken["measurements"] = {"unserialisable": object()}
    broken["provenance"]["date"] = None
    with pytest.raises(Exception):  # noqa: B017
        store.save_bench_run(broken)
    assert store.list_bench_runs() == []


def test_default_directory_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv("GPUPLAN_DATA_DIR", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert store.database_path() == tmp_path / "gpuplan" / store.DATABASE_NAME


def test_reading_never_creates_the_database(tmp_path):
    from gpuplan.store import StoreError, list_bench_runs, load_bench_run

    missing = tmp_path / "none" / "gpuplan.sqlite"
    assert list_bench_runs(path=missing) == []
    with pytest.raises(StoreError, match="no stored benchmark run 1"):
        load_bench_run(1, path=missing)
    assert not missing.parent.exists()


def test_a_file_that_is_not_a_database_is_one_line(tmp_path):
    from gpuplan.store import StoreError, list_bench_runs

    garbage = tmp_path / "gpuplan.sqlite"
    garbage.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="cannot be used") as caught:
        list_bench_runs(path=garbage)
    assert "\n" not in str(caught.value)
