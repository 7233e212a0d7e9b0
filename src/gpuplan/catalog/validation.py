"""Validation tables: published memory and throughput measurements, with their configurations.

The rows are copied from the calibration sources (see ``data/validation/README.md``), each with
``source`` and ``source_ref``, values converted to base units (bytes, tokens per second, fractions).
``use`` says what a row is for: ``fit`` (throughput only: constants may be fitted on it), ``test``
(held out: predictions are checked against it) or ``sanity`` (estimates, capacity rows and
under-specified configurations: plausibility checks only; ``notes`` says why).

``row.scenario()`` turns a row into the scenario mapping of the estimate API (precision
``bf16-pure`` marks runs whose weights, gradients and optimizer states are all bf16);
``row.model_spec()`` builds its :class:`~gpuplan.workload.model.ModelSpec`.
"""

from __future__ import annotations

import csv
import difflib
import io
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from functools import cache
from typing import Any, TypeVar

from gpuplan.errors import InputError
from gpuplan.workload.model import ModelSpec

USES = ("fit", "test", "sanity")
MEMORY_USES = ("test", "sanity")

# Optimizers a few sources name that the scenario contract folds into its own names: paging
# moves optimizer states to host memory only under pressure, so the steady footprint is the same.
_OPTIMIZER_ALIASES = {"paged-adamw": "adamw", "paged-adamw-8bit": "adamw-8bit"}


@dataclass(frozen=True)
class ValidationRow:
    """Identification and configuration columns shared by both tables."""

    id: str
    source: str
    source_ref: str
    table: str
    model: str | None
    arch: dict[str, Any] | None
    method: str
    lora_rank: int | None
    lora_alpha: int | None
    lora_targets: str | None
    lora_dropout: float | None
    double_quant: bool | None
    precision: str | None
    optimizer: str | None
    framework: str | None
    framework_detail: str | None
    gpu: str | None
    capacity_bytes: int | None
    num_gpus: int | None
    dp: int | None
    tp: int | None
    pp: int | None
    vpp: int | None
    cp: int | None
    ep: int | None
    zero: int | None
    micro_batch: int | None
    seq_len: int | None
    global_batch: int | None
    recompute: str | None
    offload: str | None
    flash_attention: bool | None
    fused_loss: bool
    compile: bool
    use: str
    notes: str

    def model_spec(self) -> ModelSpec:
        """The row's architecture: the catalog model, or the inline config.json mapping."""
        if self.model:
            from gpuplan.catalog import load_model

            return load_model(self.model)
        if self.arch is None:
            raise ValueError(f"validation row {self.id!r} pins no architecture ({self.notes})")
        return ModelSpec.from_hf_config(self.arch, name=self.id)

    def one_micro_batch_per_step(self) -> int | None:
        """The global batch when the source states none: one micro-batch per data-parallel rank
        (no gradient accumulation), the setting of a single measured step."""
        if self.micro_batch is None or self.num_gpus is None:
            return None
        model_parallel = (self.tp or 1) * (self.pp or 1) * (self.cp or 1)
        return self.micro_batch * max(1, self.num_gpus // model_parallel)

    def _framework(self) -> str | dict[str, Any] | None:
        """The row's framework preset, with the parts its stack sets differently: torchtune's
        recipe configs build ``torch.optim.AdamW`` with ``fused: True`` (``recipes/configs``
        at ``1814feb17``, e.g. ``llama3_2/3B_full.yaml``), whose step allocates no temporaries."""
        if self.framework and "torchtune" in (self.framework_detail or "").lower():
            return {"base": self.framework, "optimizer_step_temporaries": 0}
        return self.framework

    def scenario(self) -> dict[str, Any]:
        """The row as a scenario mapping (the README's "Scenarios"); unstated parts are left out."""
        model: str | dict[str, Any]
        if self.model:
            model = self.model
        elif self.arch is not None:
            model = dict(self.arch)
        else:
            raise ValueError(f"validation row {self.id!r} pins no architecture ({self.notes})")
        scenario: dict[str, Any] = {"model": model, "method": self.method}
        if self.method in ("lora", "qlora"):
            lora = {
                "rank": self.lora_rank,
                "alpha": self.lora_alpha,
                "targets": self.lora_targets,
                "dropout": self.lora_dropout,
                "double_quant": self.double_quant,
            }
            if self.method == "qlora" and "litgpt" in (self.framework_detail or "").lower():
                lora["quantizer"] = "bitsandbytes-0.42"  # litgpt 0.4 pins bitsandbytes==0.42.0
            scenario["lora"] = {k: v for k, v in lora.items() if v is not None}
        optimizer = _OPTIMIZER_ALIASES.get(self.optimizer or "", self.optimizer)
        for key, value in (
            ("precision", self.precision),
            ("optimizer", optimizer),
            ("framework", self._framework()),
            ("seq_len", self.seq_len),
            ("global_batch", self.global_batch or self.one_micro_batch_per_step()),
            ("micro_batch", self.micro_batch),
        ):
            if value is not None:
                scenario[key] = value
        hardware: dict[str, Any] = {}
        if self.gpu:
            hardware["gpu"] = self.gpu
        if self.num_gpus is not None:
            hardware["count"] = self.num_gpus
        if self.fused_loss:
            scenario["fused_loss"] = True
        if self.compile:
            scenario["compile"] = True
        detail = (self.framework_detail or "").lower()
        moe = {
            **({"dispatch": "deepep"} if "deepep" in detail else {}),
            **({"routing": "round_robin"} if "fake balanced gate" in detail else {}),
            **({"dispatch_dtype": "fp8"} if "fp8 dispatch" in detail else {}),
            **({"a2a_overlap": True} if "dualpipe" in detail or "ep a2a overlap" in detail else {}),
        }
        if moe:
            scenario["moe"] = moe
        if "fused" in detail:
            scenario["fused_kernels"] = True
        if "cudnn" in detail:
            scenario["attention_kernel"] = "cudnn"
        if "tp-comm-overlap" in detail or "async tp" in detail or "asynctp" in detail:
            scenario["tp_comm_overlap"] = True
        if hardware:
            scenario["hardware"] = hardware
        strategy = {
            "tp": self.tp,
            "pp": self.pp,
            "vpp": self.vpp,
            "cp": self.cp,
            "ep": self.ep,
            "zero": self.zero,
            "recompute": self.recompute,
            "offload": self.offload,
            "flash_attention": self.flash_attention,
        }
        strategy = {k: v for k, v in strategy.items() if v is not None}
        if "dualpipe" in detail:
            strategy["schedule"] = "dualpipe"
        if strategy:
            scenario["strategy"] = strategy
        return scenario


@dataclass(frozen=True)
class MemoryRow(ValidationRow):
    """A per-GPU peak memory measurement (or an out-of-memory report)."""

    measured_bytes: int | None = None
    metric: str = "unknown"  # allocated | reserved | active | nvidia-smi | unknown
    oom: bool = False


@dataclass(frozen=True)
class ThroughputRow(ValidationRow):
    """A throughput measurement; ``mfu``/``hfu`` are fractions, FLOP counts per the source."""

    tokens_per_second_per_gpu: float | None = None
    tflops_per_gpu: float | None = None
    mfu: float | None = None
    hfu: float | None = None
    flops_definition: str | None = None
    peak_flops_assumed: float | None = None
    power_limit_watts: float | None = None
    fp8_recipe: str | None = None
    inter_node: str | None = None
    nics_per_node: int | None = None
    shard_group: int | None = None
    document_tokens: int | None = None

    def scenario(self) -> dict[str, Any]:
        """The row's scenario, with the GPUs' power limit, the cluster network, the fp8
        scaling recipe, a hybrid ZeRO shard group and the length of packed documents where the
        source states them."""
        scenario = super().scenario()
        if self.document_tokens:
            scenario["document_tokens"] = self.document_tokens
        if self.shard_group:
            scenario.setdefault("strategy", {})["shard_group"] = self.shard_group
        if self.inter_node:
            scenario.setdefault("hardware", {})["inter_node"] = self.inter_node
        if self.nics_per_node:
            scenario.setdefault("hardware", {})["nics_per_node"] = self.nics_per_node
        if self.fp8_recipe:
            scenario["fp8_recipe"] = self.fp8_recipe
        if self.power_limit_watts is not None:
            scenario.setdefault("hardware", {})["power_limit_watts"] = self.power_limit_watts
        return scenario


RowT = TypeVar("RowT", bound=ValidationRow)

_INT_FIELDS = {
    "lora_rank", "lora_alpha", "capacity_bytes", "num_gpus", "dp", "tp", "pp", "vpp", "cp", "ep",
    "zero", "micro_batch", "seq_len", "global_batch", "measured_bytes", "nics_per_node",
    "shard_group", "document_tokens",
}  # fmt: skip
_FLOAT_FIELDS = {
    "lora_dropout", "tokens_per_second_per_gpu", "tflops_per_gpu", "mfu", "hfu", "peak_flops_assumed",
    "power_limit_watts",
}  # fmt: skip
_BOOL_FIELDS = {"fused_loss", "compile", "oom"}
_OPTIONAL_BOOL_FIELDS = {"double_quant", "flash_attention"}
_REQUIRED_TEXT = {"id", "source", "source_ref", "table", "method", "use", "notes", "metric"}


def _convert(name: str, text: str) -> Any:
    text = text.strip()
    if name in _BOOL_FIELDS:
        return text.lower() == "true"
    if name in _REQUIRED_TEXT:
        return text
    if not text:
        return None
    if name in _OPTIONAL_BOOL_FIELDS:
        return text.lower() == "true"
    if name in _INT_FIELDS:
        return int(text)
    if name in _FLOAT_FIELDS:
        return float(text)
    if name == "arch":
        value = json.loads(text)
        if not isinstance(value, dict):
            raise ValueError(f"arch must be a JSON object, got {text!r}")
        return value
    return text


@cache
def _read(filename: str, columns: tuple[str, ...]) -> tuple[dict[str, str], ...]:
    """The rows of ``validation/<filename>``; its header names only ``columns``, and every
    column a row cannot do without."""
    from gpuplan.catalog import CatalogError, read_catalog_text

    reader = csv.DictReader(io.StringIO(read_catalog_text("validation", filename)))
    check_columns(
        reader.fieldnames or [], columns, f"validation/{filename}", CatalogError, _REQUIRED_TEXT
    )
    return tuple(reader)


def check_columns(
    header: Sequence[str],
    accepted: tuple[str, ...],
    origin: str,
    error: type[InputError],
    required: Iterable[str] = (),
) -> None:
    """A CSV header names only ``accepted`` columns (in any order), ``required`` among them: an
    unknown column names the closest accepted one; a column left out reads as empty."""
    for column in header:
        if column not in accepted:
            close = difflib.get_close_matches(column, accepted, n=1)
            where = {"origin": origin, "column": repr(column), "accepted": ", ".join(accepted)}
            if close:
                raise error.of("error.column_unknown_hint", **where, close=close[0])
            raise error.of("error.column_unknown", **where)
    missing = [name for name in accepted if name in set(required) and name not in header]
    if missing:
        raise error.of(
            "error.column_missing",
            origin=origin,
            column=repr(missing[0]),
            accepted=", ".join(accepted),
        )


def _rows(filename: str, cls: type[RowT], use: str | None) -> list[RowT]:
    if use is not None and use not in USES:
        raise ValueError(f"use must be one of {', '.join(USES)}, got {use!r}")
    names = [f.name for f in fields(cls)]
    rows = []
    for raw in _read(filename, tuple(names)):
        if use is not None and raw["use"] != use:
            continue
        rows.append(cls(**{name: _convert(name, raw.get(name, "")) for name in names}))
    return rows


def memory_rows(use: str | None = None) -> list[MemoryRow]:
    """Rows of ``memory.csv``, optionally only those with this ``use`` (test | sanity)."""
    return _rows("memory.csv", MemoryRow, use)


def throughput_rows(use: str | None = None) -> list[ThroughputRow]:
    """Rows of ``throughput.csv``, optionally only those with this ``use`` (fit | test | sanity)."""
    return _rows("throughput.csv", ThroughputRow, use)
