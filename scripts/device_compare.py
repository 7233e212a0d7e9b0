"""Set `gpuplan bench` figures beside the independent referee's (shared/device/gpu_facts.py).

    python scripts/device_compare.py BENCH.json [BENCH.json ...] RAW.json [--output FILE]

Each row is one fact both measured: matmul bf16 (the bench's best over its search, the referee's
best over the same quick shapes and mamf-finder's published ones), HBM copy traffic and read at
the referee's size closest to the bench buffer, and PCIe host-device copies pinned and pageable.
A row differing by more than ``DISAGREEMENT`` is marked: one of the two measures the wrong thing.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

DISAGREEMENT = 0.05
"""Relative difference past which the two measurements are said to disagree."""


def bench_figures(paths: list[Path]) -> dict[str, dict[str, Any]]:
    """The figures of every bench result that could be read, later files first."""
    figures: dict[str, dict[str, Any]] = {}
    for path in paths:
        try:
            result = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        for figure in result.get("figures", []):
            if figure.get("measured") is not None:
                figures.setdefault(figure["key"], figure)
    return figures


def _closest_size(sizes: dict[str, Any], buffer_bytes: float | None) -> dict[str, Any]:
    rows = {int(key.removesuffix("MiB")) * 2**20: value for key, value in sizes.items()}
    target = buffer_bytes or max(rows)
    return rows[min(rows, key=lambda size: abs(size - target))] if rows else {}


def referee_pairs(
    figures: dict[str, dict[str, Any]], raw: dict[str, Any]
) -> Iterator[tuple[str, float, float]]:
    """(fact, bench value, referee value) in SI units for each fact both have."""
    shapes = raw.get("bf16_shapes_vs_mamf") or {}
    if "matmul.bf16" in figures and "best_gpuplan_quick_shapes" in shapes:
        best = max(shapes["best_gpuplan_quick_shapes"], shapes.get("best_extra", 0.0))
        yield "matmul bf16 FLOP/s", figures["matmul.bf16"]["measured"], best * 1e12
    sizes = raw.get("events_vs_wall_and_hbm") or {}
    if isinstance(sizes, dict) and "error" not in sizes and sizes:
        for key, name in (
            ("memory.device_copy", "copy_traffic_TBps_events"),
            ("memory.device_read", "read_TBps"),
        ):
            if key in figures:
                buffer = figures[key].get("details", {}).get("buffer_bytes")
                row = _closest_size(sizes, buffer)
                if name in row:
                    yield f"{key} bytes/s", figures[key]["measured"], row[name] * 1e12
    pcie = raw.get("pcie") or {}
    for direction, short in (("host_to_device", "h2d"), ("device_to_host", "d2h")):
        for kind in ("pinned", "pageable"):
            key, name = f"pcie.{direction}_{kind}", f"{short}_{kind}_GBps"
            if key in figures and name in pcie:
                yield f"{key} bytes/s", figures[key]["measured"], pcie[name] * 1e9


def comparison_lines(figures: dict[str, dict[str, Any]], raw: dict[str, Any]) -> list[str]:
    lines = [f"{'fact':<36} {'bench':>12} {'referee':>12} {'difference':>11}"]
    for fact, bench, referee in referee_pairs(figures, raw):
        difference = bench / referee - 1.0 if referee else float("nan")
        mark = "  DISAGREE" if abs(difference) > DISAGREEMENT else ""
        lines.append(f"{fact:<36} {bench:>12.4g} {referee:>12.4g} {difference:>+10.1%}{mark}")
    if len(lines) == 1:
        lines.append("no fact measured by both (see log.txt for the steps that failed)")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path, help="bench JSON files, then raw.json")
    parser.add_argument("--output", type=Path)
    arguments = parser.parse_args()
    *bench, raw_path = arguments.files
    try:
        raw = json.loads(raw_path.read_text())
    except (OSError, ValueError) as error:
        raw = {}
        print(f"referee results unreadable: {raw_path}: {error}")
    text = "\n".join(comparison_lines(bench_figures(bench), raw)) + "\n"
    if arguments.output:
        arguments.output.write_text(text)
    print(text, end="")


if __name__ == "__main__":
    main()
