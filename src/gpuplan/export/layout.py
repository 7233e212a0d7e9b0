"""The facts every export needs, read once from a plan and its scenario and checked.

A plan (a dict from ``gpuplan.plan``) carries the GPU, the count, the node count and the
parallel layout; the scenario carries the model and the job. The step count is derived:
``steps = ceil(tokens / (global_batch * seq_len))``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpuplan.errors import InputError
from gpuplan.estimate.schedule import LearningRateSchedule, learning_rate_schedule
from gpuplan.hardware.gpu import GPUSpec
from gpuplan.scenario import Scenario
from gpuplan.workload.job import TrainingJob
from gpuplan.workload.model import ModelSpec


class ExportError(InputError):
    """A plan that a launch-config format cannot express; the message names one that can."""


@dataclass(frozen=True)
class ExportedFile:
    """A rendered launch config. ``notes`` lists what the user must know or fill in."""

    filename: str
    text: str
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class ExportLayout:
    """One plan, resolved: the cluster, the parallel layout and the job."""

    gpu: GPUSpec
    count: int
    nodes: int
    gpus_per_node: int
    dp: int
    tp: int
    pp: int
    vpp: int
    cp: int
    ep: int
    zero: int
    micro_batch: int
    recompute: str
    offload: str
    sequence_parallel: bool
    framework: str
    job: TrainingJob
    steps: int
    provider: str
    hf_repo: str
    schedule: LearningRateSchedule
    region: str = ""
    instance_type: str = ""
    """The offer's region and instance shape, as its provider names them ("" when not listed)."""

    @property
    def model(self) -> ModelSpec:
        return self.job.model

    @property
    def gradient_accumulation(self) -> int:
        return self.job.global_batch // (self.micro_batch * self.dp)

    @property
    def local_batch(self) -> int:
        """Sequences per data-parallel rank per optimizer step."""
        return self.job.global_batch // self.dp

    def data_notes(self) -> list[str]:
        """What every format's data pipeline must do for the plan's timing to hold."""
        documents = self.job.document_tokens
        if documents is None:
            return []
        return [
            f"document_tokens {documents}: timed with documents packed into each "
            f"{self.job.seq_len}-token sequence and attention masked per document "
            "(variable-length attention): pack the data so"
        ]

    def summary(self) -> str:
        return (
            f"{self.model.name} on {self.count} x {self.gpu.name} ({self.nodes} node(s) of "
            f"{self.gpus_per_node}): dp={self.dp} tp={self.tp} pp={self.pp} vpp={self.vpp} "
            f"cp={self.cp} ep={self.ep} zero={self.zero} micro_batch={self.micro_batch} "
            f"recompute={self.recompute} offload={self.offload} precision={self.job.precision}"
        )


def _integer(strategy: Mapping[str, Any], key: str, default: int) -> int:
    value = strategy.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or int(value) != value:
        raise ExportError.of("error.whole_number", field=f"plan.strategy.{key}", value=repr(value))
    return int(value)


def _hf_repo(model: ModelSpec) -> str:
    from gpuplan.catalog import model_entries

    entry = model_entries().get(model.name) or {}
    return str(entry.get("hf_repo") or "")


def read_layout(plan: Mapping[str, Any], scenario: Scenario) -> ExportLayout:
    """Check the plan's layout against its GPU count and batch, and derive the step count."""
    from gpuplan.catalog import load_gpu

    if not isinstance(plan, Mapping) or "gpu" not in plan or "strategy" not in plan:
        raise ExportError.of("error.export_plan")
    gpu = load_gpu(str(plan["gpu"]))
    count = int(plan.get("count") or (scenario.cluster.count if scenario.cluster else 1))
    strategy: Mapping[str, Any] = plan["strategy"]
    schedule = str(strategy.get("schedule", "1f1b"))
    if schedule != "1f1b":
        raise ExportError.of("error.export_schedule", value=schedule)
    tp = _integer(strategy, "tp", 1)
    pp = _integer(strategy, "pp", 1)
    cp = _integer(strategy, "cp", 1)
    model_parallel = tp * pp * cp
    dp = _integer(strategy, "dp", count // model_parallel if model_parallel else 0)
    if min(tp, pp, cp, dp) < 1 or dp * model_parallel != count:
        raise ExportError.of(
            "error.export_layout_count", layout=f"{dp}*{tp}*{pp}*{cp}", count=count
        )
    nodes = int(plan.get("nodes") or max(1, math.ceil(count / gpu.gpus_per_node)))
    if count % nodes:
        raise ExportError.of("error.export_nodes", nodes=nodes, count=count)
    job = scenario.job
    micro_batch = _integer(strategy, "micro_batch", scenario.strategy.micro_batch)
    if job.global_batch % (micro_batch * dp):
        raise ExportError.of(
            "error.export_batch", global_batch=job.global_batch, samples=f"{micro_batch}*{dp}"
        )
    if job.tokens <= 0:
        raise ExportError.of("error.export_tokens")
    cost = plan.get("cost") or {}
    steps = math.ceil(job.tokens / job.global_batch_tokens)
    return ExportLayout(
        gpu=gpu,
        count=count,
        nodes=nodes,
        gpus_per_node=count // nodes,
        dp=dp,
        tp=tp,
        pp=pp,
        vpp=_integer(strategy, "vpp", 1),
        cp=cp,
        ep=_integer(strategy, "ep", 1),
        zero=_integer(strategy, "zero", 1),
        micro_batch=micro_batch,
        recompute=str(strategy.get("recompute", "none")),
        offload=str(strategy.get("offload", "none")),
        sequence_parallel=bool(strategy.get("sequence_parallel", True)),
        framework=str(strategy.get("framework", job.framework)),
        job=job,
        steps=steps,
        provider=_cost_text(cost, "provider"),
        hf_repo=_hf_repo(job.model),
        schedule=learning_rate_schedule(job, scenario.training, steps),
        region=_cost_text(cost, "region"),
        instance_type=_cost_text(cost, "instance_type"),
    )


def _cost_text(cost: object, key: str) -> str:
    return str(cost.get(key) or "") if isinstance(cost, Mapping) else ""


def require_full_training(layout: ExportLayout, target: str, alternatives: str) -> None:
    """Raise unless the job trains every weight (no LoRA, QLoRA or frozen layers)."""
    if layout.job.method != "full":
        raise ExportError.of(
            "error.export_full_only",
            target=target,
            method=layout.job.method,
            alternatives=alternatives,
        )


def comment_block(lines: list[str] | tuple[str, ...], marker: str = "#") -> str:
    """Lines as a comment block, one marker per line."""
    return "".join(f"{marker} {line}".rstrip() + "\n" for line in lines)


def require_data_parallel_only(layout: ExportLayout, target: str, alternatives: str) -> None:
    """Refuse a layout with tensor, pipeline, context or expert parallelism for a target that
    shards over data parallelism only, naming the exports that can run it."""
    split = {"tp": layout.tp, "pp": layout.pp, "cp": layout.cp, "ep": layout.ep}
    beyond = [f"{name}={value}" for name, value in split.items() if value > 1]
    if beyond:
        raise ExportError.of(
            "error.export_data_parallel_only",
            target=target,
            split=", ".join(beyond),
            alternatives=alternatives,
        )
