"""Launch configs for a chosen plan: the files a user takes to a real cluster.

``export_plan(plan, scenario, fmt)`` renders one plan (a dict from ``gpuplan.plan``) for one
target: a torchtitan train TOML, a Megatron-LM launch script, a DeepSpeed JSON config, an
Accelerate FSDP YAML, or a SkyPilot task YAML. A layout the target cannot express raises
:class:`ExportError` naming a format that can; a setting that the target approximates is kept
and explained in ``ExportedFile.notes`` (and, where the format allows comments, in the file).
``write_export`` writes the result atomically and never overwrites unless asked.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from gpuplan.export.layout import ExportedFile, ExportError, read_layout
from gpuplan.scenario import Scenario

FORMATS = ("torchtitan", "megatron", "deepspeed", "accelerate", "skypilot")

__all__ = ["FORMATS", "ExportError", "ExportedFile", "export_plan", "write_export"]


def _renderer(fmt: str) -> Callable[..., ExportedFile]:
    if fmt == "torchtitan":
        from gpuplan.export.torchtitan import render_torchtitan

        return render_torchtitan
    if fmt == "megatron":
        from gpuplan.export.megatron import render_megatron

        return render_megatron
    if fmt == "deepspeed":
        from gpuplan.export.deepspeed import render_deepspeed

        return render_deepspeed
    if fmt == "accelerate":
        from gpuplan.export.accelerate import render_accelerate

        return render_accelerate
    from gpuplan.export.skypilot import render_skypilot

    return render_skypilot


def export_plan(plan: Mapping[str, Any], scenario: Scenario, fmt: str) -> ExportedFile:
    """Render ``plan`` for ``scenario`` in format ``fmt`` (one of :data:`FORMATS`)."""
    name = str(fmt).strip().lower()
    if name not in FORMATS:
        raise ExportError.of(
            "error.not_one_of", field="format", value=repr(fmt), accepted=", ".join(FORMATS)
        )
    return _renderer(name)(read_layout(plan, scenario))


def write_export(
    exported: ExportedFile, directory_or_path: str | Path, overwrite: bool = False
) -> Path:
    """Write ``exported`` into a directory (under its own filename) or to a file path.

    The text goes to a temporary file in the same directory, which is then renamed over the
    target, so a reader never sees half a file. An existing target is an error unless
    ``overwrite`` is true. The Megatron script is made executable.
    """
    from gpuplan.writing import WriteError, write_atomically

    target = Path(directory_or_path)
    if target.is_dir() and not target.is_symlink():
        target = target / exported.filename
    try:
        return write_atomically(
            target, exported.text, overwrite=overwrite, executable=exported.filename.endswith(".sh")
        )
    except WriteError as refused:
        raise (
            ExportError.of(refused.key, **refused.values)
            if refused.key
            else ExportError(str(refused))
        ) from None
