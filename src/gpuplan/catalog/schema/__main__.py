"""Rewrite the shipped JSON Schemas from the types: ``python -m gpuplan.catalog.schema``."""

from __future__ import annotations

from pathlib import Path

from gpuplan.catalog.schema import SCHEMA_TYPES, json_schema_text
from gpuplan.writing import write_atomically


def main() -> None:
    folder = Path(__file__).resolve().parent
    for name in SCHEMA_TYPES:
        path = folder / f"{name}.schema.json"
        write_atomically(path, json_schema_text(name), overwrite=True)
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
