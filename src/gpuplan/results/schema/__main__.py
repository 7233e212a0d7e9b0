"""Rewrite the shipped result schemas from the types: ``python -m gpuplan.results.schema``."""

from __future__ import annotations

from pathlib import Path

from gpuplan.results.schema import RESULT_TYPES, json_schema_text
from gpuplan.writing import write_atomically

if __name__ == "__main__":
    folder = Path(__file__).resolve().parent
    for name in RESULT_TYPES:
        write_atomically(folder / f"{name}.schema.json", json_schema_text(name), overwrite=True)
        print(f"wrote {folder / f'{name}.schema.json'}")
