"""Strategy: how a training job is split over a cluster.

``dp * tp * pp * cp == GPUs``; expert parallelism ``ep`` splits the experts inside the
``dp * cp`` group (Megatron-Core's rule). ZeRO stage 0-3 (FSDP full shard = 3) shards model
states over the ``dp * cp`` ranks. The estimate formulas take a :class:`Layout`, a bundle of
NumPy arrays, so that one layout (0-d arrays) and a whole search space (1-d arrays) run the
same code.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np
import numpy.typing as npt

from gpuplan.errors import InputError
from gpuplan.hardware.cluster import Cluster
from gpuplan.workload.job import TrainingJob

RECOMPUTE = ("none", "selective", "full")
OFFLOAD = ("none", "optimizer", "optimizer+params")
ZERO_STAGES = (0, 1, 2, 3)

IntArray = npt.NDArray[np.int64]


class StrategyError(InputError):
    """A parallel layout that cannot run this job on this cluster."""


@dataclass(frozen=True)
class Strategy:
    """One parallel layout. ``dp = 0`` means "whatever the GPU count leaves"."""

    dp: int = 0
    tp: int = 1
    pp: int = 1
    vpp: int = 1
    cp: int = 1
    ep: int = 1
    zero: int = 1
    micro_batch: int = 1
    recompute: str = "none"
    offload: str = "none"
    flash_attention: bool = True
    sequence_parallel: bool = True

    def resolved(self, job: TrainingJob, cluster: Cluster) -> Strategy:
        """Fill ``dp`` from the GPU count and check every rule; raise StrategyError naming the field."""
        for name in ("tp", "pp", "vpp", "cp", "ep", "micro_batch"):
            if getattr(self, name) < 1:
                raise StrategyError(
                    f"strategy.{name}: must be a positive whole number, got {getattr(self, name)}"
                )
        if self.recompute not in RECOMPUTE:
            raise StrategyError(
                f"strategy.recompute: {self.recompute!r} is not one of {', '.join(RECOMPUTE)}"
            )
        if self.offload not in OFFLOAD:
            raise StrategyError(
                f"strategy.offload: {self.offload!r} is not one of {', '.join(OFFLOAD)}"
            )
        if self.zero not in ZERO_STAGES:
            raise StrategyError(f"strategy.zero: {self.zero!r} is not one of 0, 1, 2, 3")
        model = job.model
        model_parallel = self.tp * self.pp * self.cp
        if cluster.count % model_parallel:
            raise StrategyError(
                f"strategy: tp*pp*cp = {model_parallel} does not divide hardware.count = {cluster.count}"
            )
        dp = self.dp or cluster.count // model_parallel
        if dp * model_parallel != cluster.count:
            raise StrategyError(
                f"strategy.dp: dp*tp*pp*cp = {dp * model_parallel} must equal hardware.count = {cluster.count}"
            )
        if model.num_attention_heads % self.tp:
            raise StrategyError(
                f"strategy.tp: {self.tp} does not divide the {model.num_attention_heads} attention heads; "
                f"accepted: {', '.join(str(d) for d in divisors(model.num_attention_heads) if d <= cluster.gpus_per_node)}"
            )
        if not model.uses_mla and model.num_kv_heads % self.tp and self.tp % model.num_kv_heads:
            raise StrategyError(
                f"strategy.tp: {self.tp} and the {model.num_kv_heads} KV heads must divide one another"
            )
        if self.pp > model.num_layers:
            raise StrategyError(
                f"strategy.pp: {self.pp} is more than the model's {model.num_layers} layers"
            )
        if self.vpp > 1 and (self.pp < 2 or self.pp * self.vpp > model.num_layers):
            raise StrategyError(
                f"strategy.vpp: interleaving needs pp >= 2 and at least one layer per virtual stage "
                f"(pp*vpp = {self.pp * self.vpp}, {model.num_layers} layers)"
            )
        if self.ep > 1:
            if not model.is_moe:
                raise StrategyError(
                    "strategy.ep: expert parallelism needs a mixture-of-experts model; use ep: 1"
                )
            if model.num_experts % self.ep or (dp * self.cp) % self.ep:
                raise StrategyError(
                    f"strategy.ep: {self.ep} must divide the {model.num_experts} experts and dp*cp = {dp * self.cp}"
                )
        if job.seq_len % self.cp:
            raise StrategyError(f"strategy.cp: {self.cp} does not divide seq_len = {job.seq_len}")
        if job.global_batch % (dp * self.micro_batch):
            raise StrategyError(
                f"strategy.micro_batch: dp*micro_batch = {dp * self.micro_batch} does not divide "
                f"global_batch = {job.global_batch}"
            )
        return Strategy(**{**{f.name: getattr(self, f.name) for f in fields(self)}, "dp": dp})

    def micro_batches(self, job: TrainingJob) -> int:
        """Micro-batches per optimizer step on each data-parallel rank (gradient accumulation)."""
        return job.global_batch // (max(self.dp, 1) * self.micro_batch)

    def layout(self, job: TrainingJob) -> Layout:
        """This strategy as 0-d arrays for the estimate formulas."""
        return Layout(
            dp=np.asarray(self.dp),
            tp=np.asarray(self.tp),
            pp=np.asarray(self.pp),
            vpp=np.asarray(self.vpp),
            cp=np.asarray(self.cp),
            ep=np.asarray(self.ep),
            zero=np.asarray(self.zero),
            micro_batch=np.asarray(self.micro_batch),
            micro_batches=np.asarray(self.micro_batches(job)),
            recompute=np.asarray(RECOMPUTE.index(self.recompute)),
            offload=np.asarray(OFFLOAD.index(self.offload)),
            sequence_parallel=np.asarray(self.sequence_parallel and self.tp > 1),
        )

    def to_dict(self) -> dict[str, object]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class Layout:
    """Parallel layouts as integer arrays of one shape; codes index RECOMPUTE and OFFLOAD."""

    dp: IntArray
    tp: IntArray
    pp: IntArray
    vpp: IntArray
    cp: IntArray
    ep: IntArray
    zero: IntArray
    micro_batch: IntArray
    micro_batches: IntArray
    recompute: IntArray
    offload: IntArray
    sequence_parallel: npt.NDArray[np.bool_]


def divisors(number: int) -> list[int]:
    return [d for d in range(1, number + 1) if number % d == 0]
