"""Local SQLite store for benchmark runs (and, later, calibration profiles and saved plans).

The database lives in the user's data directory (:func:`gpuplan.user_data.data_directory`).
Every write is one transaction: a run is stored whole (:func:`save_bench_run`), or created first and rewritten after each part
(:func:`create_bench_run`, :func:`update_bench_run`), so a crash keeps the parts already done.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuplan.errors import InputError
from gpuplan.jsonable import to_json
from gpuplan.user_data import DATA_DIR_VARIABLE, data_directory

DATABASE_NAME = "gpuplan.sqlite3"
SCHEMA_VERSION = 1

SCHEMA = """
CREATE TABLE IF NOT EXISTS bench_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at TEXT NOT NULL,
    hostname TEXT NOT NULL,
    device TEXT NOT NULL,
    gpu_id TEXT,
    method_version INTEGER NOT NULL,
    command TEXT NOT NULL,
    worst_verdict TEXT NOT NULL,
    result_json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS bench_runs_created_at ON bench_runs (created_at);
"""


class StoreError(InputError):
    """A run id the store does not hold, or a database that cannot be opened."""


@dataclass(frozen=True)
class StoredRunSummary:
    """One row of ``gpuplan bench history``."""

    id: int
    created_at: str
    hostname: str
    device: str
    gpu_id: str | None
    method_version: int
    command: str
    worst_verdict: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "created_at": self.created_at,
            "hostname": self.hostname,
            "device": self.device,
            "gpu_id": self.gpu_id,
            "method_version": self.method_version,
            "command": self.command,
            "worst_verdict": self.worst_verdict,
        }


def database_path() -> Path:
    return data_directory() / DATABASE_NAME


@contextmanager
def connect(path: Path | None = None, create: bool = True) -> Iterator[sqlite3.Connection]:
    """An open connection with the schema in place; committed on success, rolled back on error.
    ``create=False`` (readers) never creates the database: a missing one is a StoreError. A
    file that is not a gpuplan database, or one locked past 5 s, is a one-line StoreError."""
    target = path or database_path()
    if not create and not target.is_file():
        raise StoreError.of("error.store_empty", path=repr(str(target)))
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(target, timeout=5)
    except (OSError, sqlite3.Error) as error:
        raise StoreError.of(
            "error.store_open", variable=DATA_DIR_VARIABLE, path=repr(str(target)), reason=error
        ) from error
    try:
        with connection:
            connection.executescript(SCHEMA)
            connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        with connection:
            yield connection
    except sqlite3.Error as error:
        raise StoreError.of(
            "error.store_unusable", variable=DATA_DIR_VARIABLE, path=repr(str(target)), reason=error
        ) from None
    finally:
        connection.close()


def _run_row(result: dict[str, Any]) -> tuple[Any, ...]:
    provenance = result["provenance"]
    return (
        provenance["date"],
        provenance["hostname"],
        provenance["device"],
        result.get("gpu_id"),
        int(result["method_version"]),
        provenance["command"],
        result["worst_verdict"],
        to_json(result, indent=None),
    )


def save_bench_run(result: dict[str, Any], path: Path | None = None) -> int:
    """Store one benchmark result (the JSON of ``gpuplan bench --json``); return its id."""
    row = _run_row(result)
    with connect(path) as connection:
        cursor = connection.execute(
            "INSERT INTO bench_runs (created_at, hostname, device, gpu_id, method_version,"
            " command, worst_verdict, result_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            row,
        )
        run_id = cursor.lastrowid
    assert run_id is not None
    return int(run_id)


def create_bench_run(result: dict[str, Any], path: Path | None = None) -> int:
    """Store the first state of a run that is still measuring (no parts yet); return its id."""
    return save_bench_run(result, path)


def update_bench_run(run_id: int, result: dict[str, Any], path: Path | None = None) -> None:
    """Replace run ``run_id``'s stored result with ``result``, in one transaction."""
    row = _run_row(result)
    with connect(path) as connection:
        cursor = connection.execute(
            "UPDATE bench_runs SET created_at = ?, hostname = ?, device = ?, gpu_id = ?,"
            " method_version = ?, command = ?, worst_verdict = ?, result_json = ?"
            " WHERE id = ?",
            (*row, run_id),
        )
        if cursor.rowcount != 1:
            raise StoreError.of("error.store_no_run_update", run=run_id)


def list_bench_runs(limit: int = 50, path: Path | None = None) -> list[StoredRunSummary]:
    """The most recent runs first (none when nothing was ever stored)."""
    target = path or database_path()
    if not target.is_file():
        return []
    with connect(target, create=False) as connection:
        rows = connection.execute(
            "SELECT id, created_at, hostname, device, gpu_id, method_version, command,"
            " worst_verdict FROM bench_runs ORDER BY id DESC LIMIT ?",
            (limit,),
        ).fetchall()
    return [StoredRunSummary(*row) for row in rows]


def load_bench_run(run_id: int, path: Path | None = None) -> dict[str, Any]:
    """The full stored result of run ``run_id``, with its ``id`` added."""
    target = path or database_path()
    row = None
    if target.is_file():
        with connect(target, create=False) as connection:
            row = connection.execute(
                "SELECT result_json FROM bench_runs WHERE id = ?", (run_id,)
            ).fetchone()
    if row is None:
        raise StoreError.of("error.store_no_run", run=run_id)
    result: dict[str, Any] = json.loads(row[0])
    result["id"] = run_id
    return result
