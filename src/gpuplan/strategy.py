"""Strategy: how a training job is split over a cluster.

``dp * tp * pp * cp == GPUs``; expert parallelism ``ep`` splits the experts inside the
``dp * cp`` group (Megatron-Core's rule), and expert tensor parallelism ``etp`` (``tp`` unless
given) splits each expert's FFN; an expert shard is replicated over the ``dp * cp * tp /
(ep * etp)`` expert data-parallel ranks. ``etp`` other than ``tp`` is estimate-only: the memory
model counts it, the step time and the plan search split experts by ``tp``. ZeRO stage 0-3
(FSDP full shard = 3) shards model states over the ``dp * cp`` ranks, or over groups of
``shard_group`` of them replicated across the rest (hybrid sharding); ``shard_group`` is
estimate-only, the plan search shards over all. The estimate formulas take a :class:`Layout`, a
bundle of NumPy arrays, so that one layout (0-d arrays) and a whole search space (1-d arrays)
run the same code.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np
import numpy.typing as npt

from gpuplan.errors import InputError
from gpuplan.estimate.frameworks import zero_stages
from gpuplan.hardware.cluster import Cluster
from gpuplan.workload.job import TrainingJob

RECOMPUTE = ("none", "selective", "full")
OFFLOAD = ("none", "optimizer", "optimizer+params")
ZERO_STAGES = (0, 1, 2, 3)
SCHEDULES = ("1f1b", "dualpipe")
"""Pipeline schedules: 1F1B, interleaved when ``vpp > 1`` (Narayanan et al. 2021), or
DeepSeek's DualPipe, which feeds micro-batches from both ends of the pipeline and runs one
micro-batch's forward under another's backward (DeepSeek-V3 report, section 3.2.1;
deepseek-ai/DualPipe). DualPipe is estimate-only: the plan search schedules 1F1B."""

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
    etp: int = 0
    """Expert tensor parallel size; 0 means ``tp`` (Megatron-Core's default)."""
    shard_group: int = 0
    """Data-parallel ranks (of ``dp * cp``) that ZeRO/FSDP shards the model states over, each
    group holding a whole replica: FSDP ``HYBRID_SHARD`` and FSDP2 HSDP (torchtitan
    ``data_parallel_shard_degree``), DeepSpeed ZeRO++ hpZ, InternEvo's ``zero1``. 0 means all
    ``dp * cp`` ranks, a single group."""
    recompute: str = "none"
    offload: str = "none"
    flash_attention: bool = True
    sequence_parallel: bool = True
    schedule: str = "1f1b"

    def resolved(self, job: TrainingJob, cluster: Cluster) -> Strategy:
        """Fill ``dp`` from the GPU count and check every rule; raise StrategyError naming the field."""
        if self.etp < 0:
            raise StrategyError.of("error.strategy_etp", value=self.etp)
        if self.shard_group < 0:
            raise StrategyError.of(
                "error.strategy_shard_group", value=self.shard_group, ranks="dp*cp"
            )
        for name in ("tp", "pp", "vpp", "cp", "ep", "micro_batch"):
            if getattr(self, name) < 1:
                raise StrategyError.of(
                    "error.positive_whole_number",
                    field=f"strategy.{name}",
                    value=getattr(self, name),
                )
        for name, value, accepted in (
            ("recompute", self.recompute, RECOMPUTE),
            ("offload", self.offload, OFFLOAD),
            ("zero", self.zero, ZERO_STAGES),
            ("schedule", self.schedule, SCHEDULES),
        ):
            if value not in accepted:
                raise StrategyError.of(
                    "error.not_one_of",
                    field=f"strategy.{name}",
                    value=repr(value),
                    accepted=", ".join(map(str, accepted)),
                )
        stages = zero_stages(job.framework)
        if self.zero not in stages:
            raise StrategyError.of(
                "error.strategy_zero_stages",
                framework=job.framework,
                stages=", ".join(map(str, stages)),
                value=self.zero,
            )
        model = job.model
        model_parallel = self.tp * self.pp * self.cp
        if cluster.count % model_parallel:
            raise StrategyError.of(
                "error.strategy_divide_count", model_parallel=model_parallel, count=cluster.count
            )
        dp = self.dp or cluster.count // model_parallel
        if dp * model_parallel != cluster.count:
            raise StrategyError.of(
                "error.strategy_dp", product=dp * model_parallel, count=cluster.count
            )
        if self.shard_group and (dp * self.cp) % self.shard_group:
            raise StrategyError.of(
                "error.strategy_shard_group", value=self.shard_group, ranks=dp * self.cp
            )
        if self.ep > 1 and not model.is_moe:
            raise StrategyError.of("error.strategy_ep_dense")
        if self.etp and self.etp != self.tp and not model.is_moe:
            raise StrategyError.of("error.strategy_etp_dense")
        rules = parallel_rules(
            job,
            dp,
            self.tp,
            self.pp,
            self.vpp,
            self.cp,
            self.ep,
            self.micro_batch,
            etp=self.expert_tensor_parallel,
        )
        for name, holds in rules.items():
            if not bool(holds):
                raise self._rule_error(name, job, dp, cluster)
        resolved = Strategy(**{**{f.name: getattr(self, f.name) for f in fields(self)}, "dp": dp})
        if resolved.schedule == "dualpipe":
            resolved._check_dualpipe(job)
        return resolved

    def _rule_error(self, rule: str, job: TrainingJob, dp: int, cluster: Cluster) -> StrategyError:
        model = job.model
        accepted = ", ".join(
            str(d) for d in divisors(model.num_attention_heads) if d <= cluster.gpus_per_node
        )
        values: dict[str, dict[str, object]] = {
            "tp_heads": {"tp": self.tp, "heads": model.num_attention_heads, "accepted": accepted},
            "tp_kv_heads": {"tp": self.tp, "kv_heads": model.num_kv_heads},
            "pp_layers": {"pp": self.pp, "layers": model.num_layers},
            "vpp_stages": {"stages": self.pp * self.vpp, "layers": model.num_layers},
            "ep_experts": {
                "ep": self.ep,
                "experts": model.num_experts,
                "ep_etp": self.ep * self.expert_tensor_parallel,
                "dp_cp_tp": dp * self.cp * self.tp,
            },
            "etp_width": {
                "etp": self.expert_tensor_parallel,
                "width": model.moe_intermediate_size if model.is_moe else 0,
            },
            "cp_sequence": {"cp": self.cp, "seq_len": job.seq_len},
            "batch": {"samples": dp * self.micro_batch, "global_batch": job.global_batch},
        }
        return StrategyError.of(f"error.strategy_{rule}", **values[rule])

    def _check_dualpipe(self, job: TrainingJob) -> None:
        """DualPipe's own rules (``deepseek-ai/DualPipe`` ``DualPipe.step``: ``num_ranks % 2 ==
        0``, ``num_chunks % 2 == 0 and num_chunks >= num_ranks * 2``): an even ``pp`` of at
        least 2, no interleaving, and an even number of micro-batches, at least ``2 pp``."""
        micro_batches = self.micro_batches(job)
        if (
            self.pp < 2
            or self.pp % 2
            or self.vpp != 1
            or micro_batches % 2
            or micro_batches < 2 * self.pp
        ):
            raise StrategyError.of(
                "error.strategy_dualpipe",
                pp=self.pp,
                vpp=self.vpp,
                micro_batches=micro_batches,
            )

    @property
    def expert_tensor_parallel(self) -> int:
        """``etp``, or ``tp`` when not given."""
        return self.etp or self.tp

    @property
    def shard_ranks(self) -> int:
        """``shard_group``, or all ``dp * cp`` ranks when not given."""
        return self.shard_group or max(self.dp, 1) * self.cp

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
            etp=np.asarray(self.expert_tensor_parallel),
            shard=np.asarray(self.shard_ranks),
            dualpipe=np.asarray(self.schedule == "dualpipe"),
        )

    def to_dict(self) -> dict[str, object]:
        values: dict[str, object] = {f.name: getattr(self, f.name) for f in fields(self)}
        values["etp"] = self.expert_tensor_parallel
        values["shard_group"] = self.shard_ranks
        return values


@dataclass(frozen=True)
class Layout:
    """Parallel layouts as integer arrays of one shape; codes index RECOMPUTE and OFFLOAD;
    ``etp`` is the expert tensor parallel size (``tp`` in every searched layout), ``shard``
    the ranks ZeRO shards the model states over (``dp * cp`` in every searched layout) and
    ``dualpipe`` whether the pipeline runs DeepSeek's DualPipe (never in a searched layout)."""

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
    etp: IntArray
    shard: IntArray
    dualpipe: npt.NDArray[np.bool_]


def parallel_rules(
    job: TrainingJob,
    dp: npt.ArrayLike,
    tp: npt.ArrayLike,
    pp: npt.ArrayLike,
    vpp: npt.ArrayLike,
    cp: npt.ArrayLike,
    ep: npt.ArrayLike,
    micro_batch: npt.ArrayLike,
    etp: npt.ArrayLike | None = None,
) -> dict[str, npt.NDArray[np.bool_]]:
    """Megatron-Core's rules for a layout of ``job``, each as a mask over the layouts (0-d for
    one): ``tp`` divides the attention heads and ``tp`` and the KV heads divide one another (not
    for MLA); ``pp`` at most the layers (uneven stages allowed); interleaving needs ``pp >= 2``
    and at least one layer per virtual stage, ``pp * vpp <= layers`` (uneven virtual stages run
    in torchtitan and NeMo AutoModel, DeepSeek-V3's 61 layers on pp 4 x vpp 8, and in
    Megatron-Core with uneven first and last stages); ``ep`` divides the experts and ``dp * cp``; ``cp``
    divides the sequence; ``dp * micro_batch`` divides the global batch. ``Strategy.resolved``
    and the plan search both check these, so that one layout is valid in both or in neither."""
    model = job.model
    dp, tp, pp, vpp, cp, ep, micro_batch = (
        np.asarray(value, dtype=np.int64) for value in (dp, tp, pp, vpp, cp, ep, micro_batch)
    )
    etp = tp if etp is None else np.asarray(etp, dtype=np.int64)
    if model.uses_mla:
        kv = np.ones(tp.shape, dtype=bool)
    else:
        kv = (model.num_kv_heads % tp == 0) | (tp % model.num_kv_heads == 0)
    experts = model.num_experts if model.is_moe else 1
    width = model.moe_intermediate_size if model.is_moe else 1
    return {
        "tp_heads": np.asarray(model.num_attention_heads % tp == 0),
        "tp_kv_heads": np.asarray(kv),
        "pp_layers": np.asarray(pp <= model.num_layers),
        "vpp_stages": np.asarray((vpp == 1) | ((pp >= 2) & (pp * vpp <= model.num_layers))),
        "ep_experts": np.asarray(
            ((ep == 1) & (etp == tp))
            | ((experts % ep == 0) & ((dp * cp * tp) % np.maximum(ep * etp, 1) == 0))
        ),
        "etp_width": np.asarray((etp == tp) | (width % np.maximum(etp, 1) == 0)),
        "cp_sequence": np.asarray(job.seq_len % cp == 0),
        "batch": np.asarray((dp >= 1) & (job.global_batch % np.maximum(dp * micro_batch, 1) == 0)),
    }


def divisors(number: int) -> list[int]:
    return [d for d in range(1, number + 1) if number % d == 0]
