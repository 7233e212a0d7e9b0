"""Every valid parallel layout of a job on a set of cluster sizes, as NumPy arrays."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gpuplan.estimate.frameworks import zero_stages
from gpuplan.scenario import Scenario
from gpuplan.strategy import OFFLOAD, RECOMPUTE, Layout, parallel_rules

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

TENSOR_PARALLEL = (1, 2, 4, 8)
CONTEXT_PARALLEL = (1, 2, 4, 8)
MICRO_BATCHES = (1, 2, 4, 8, 16)
VIRTUAL_STAGES = (1, 2, 4)
LONG_SEQUENCE = 16384
"""Context parallelism is only searched from this sequence length on: below it the K/V exchange
costs more than the activation memory it saves (Megatron-LM's long-context guidance)."""


def pipeline_sizes(num_layers: int) -> list[int]:
    """Pipeline sizes to search: powers of two, 3 and 6, and the layer count's divisors, up to
    64 and at most the layers."""
    sizes = {2**power for power in range(7)} | {3, 6}
    sizes |= {size for size in range(1, 65) if num_layers % size == 0}
    return sorted(size for size in sizes if size <= min(64, num_layers))


# --- layouts ---------------------------------------------------------------------------------


@dataclass
class Candidates:
    """Layouts of one machine, as parallel arrays (one entry per layout)."""

    count: IntArray
    layout: Layout

    def __len__(self) -> int:
        return int(self.count.shape[0])

    def take(self, mask: npt.NDArray[np.bool_] | IntArray | slice) -> Candidates:
        fields = {
            name: getattr(self.layout, name)[mask] for name in self.layout.__dataclass_fields__
        }
        return Candidates(self.count[mask], Layout(**fields))


def _product(choices: dict[str, Sequence[int]]) -> dict[str, IntArray]:
    grids = np.meshgrid(
        *[np.asarray(values, dtype=np.int64) for values in choices.values()], indexing="ij"
    )
    return {name: grid.ravel() for name, grid in zip(choices, grids, strict=True)}


def _cross(left: dict[str, IntArray], right: dict[str, IntArray]) -> dict[str, IntArray]:
    """Every row of ``left`` with every row of ``right``."""
    rows = len(next(iter(left.values())))
    others = len(next(iter(right.values())))
    crossed = {name: np.repeat(values, others) for name, values in left.items()}
    crossed.update({name: np.tile(values, rows) for name, values in right.items()})
    return crossed


def enumerate_layouts(
    scenario: Scenario, node: int, counts: Sequence[int], offload: bool
) -> Candidates:
    """Every valid layout of ``scenario``'s job on ``counts`` GPUs in nodes of ``node`` (module
    docstring). Strategy fields the scenario fixes are held; ``offload`` adds optimizer (and
    parameter) offload to the candidates."""
    job, model = scenario.job, scenario.job.model
    fixed = {name: getattr(scenario.strategy, name) for name in scenario.strategy_given}
    batch = job.global_batch

    def options(name: str, default: Sequence[int]) -> Sequence[int]:
        if name in fixed:
            value = fixed[name]
            if name == "recompute":
                return (RECOMPUTE.index(value),)
            if name == "offload":
                return (OFFLOAD.index(value),)
            return (int(value),)
        return default

    experts = [
        e for e in (1, 2, 4, 8, 16, 32, 64) if model.is_moe and model.num_experts % e == 0
    ] or [1]
    sequence = [
        c
        for c in CONTEXT_PARALLEL
        if c == 1 or (job.seq_len >= LONG_SEQUENCE and job.seq_len % c == 0)
    ]
    shape = _product(
        {
            "count": counts,
            "tp": options("tp", [t for t in TENSOR_PARALLEL if t <= node]),
            "pp": options("pp", [1] if job.is_adapter else pipeline_sizes(model.num_layers)),
            "vpp": options("vpp", VIRTUAL_STAGES),
            "cp": options("cp", sequence),
            "ep": options("ep", experts),
        }
    )
    count, tp, pp, vpp, cp, ep = (shape[name] for name in ("count", "tp", "pp", "vpp", "cp", "ep"))
    model_parallel = tp * pp * cp
    dp = np.where(count % model_parallel == 0, count // model_parallel, 0)
    valid = (dp >= 1) & (tp <= node)
    for holds in parallel_rules(job, dp, tp, pp, vpp, cp, ep, 1).values():
        valid &= holds
    if "dp" in fixed and scenario.strategy.dp:
        valid &= dp == scenario.strategy.dp
    structure = {name: values[valid] for name, values in shape.items()}
    structure["dp"] = dp[valid]
    grid = _cross(
        structure,
        _product(
            {
                "zero": options("zero", zero_stages(job.framework)),
                "micro_batch": options("micro_batch", MICRO_BATCHES),
                "recompute": options("recompute", (0, 1, 2)),
                "offload": options("offload", (0, 1, 2) if offload else (0,)),
            }
        ),
    )
    dp, tp, pp, cp = grid["dp"], grid["tp"], grid["pp"], grid["cp"]
    zero, micro_batch, offload_code = grid["zero"], grid["micro_batch"], grid["offload"]
    valid = parallel_rules(job, dp, tp, pp, grid["vpp"], cp, grid["ep"], micro_batch)["batch"]
    valid &= (dp * cp > 1) | (zero == 0)
    valid &= (tp * pp == 1) | (zero <= 1) | ("zero" in fixed)
    valid &= (offload_code == 0) | ((zero >= 1) & ((offload_code == 1) | (zero == 3)))
    valid &= ~((pp > 1) & (micro_batch * dp * pp > batch))
    keep = np.flatnonzero(valid)
    dp, tp, cp, mb = dp[keep], tp[keep], cp[keep], micro_batch[keep]
    layout = Layout(
        dp=dp,
        tp=tp,
        pp=pp[keep],
        vpp=grid["vpp"][keep],
        cp=cp,
        ep=grid["ep"][keep],
        zero=zero[keep],
        micro_batch=mb,
        micro_batches=batch // (dp * mb),
        recompute=grid["recompute"][keep],
        offload=offload_code[keep],
        sequence_parallel=(tp > 1) & scenario.strategy.sequence_parallel,
        etp=tp,
        shard=dp * cp,
        dualpipe=np.zeros(dp.shape, dtype=bool),
    )
    return Candidates(grid["count"][keep], layout)


def concatenate(parts: Sequence[Candidates]) -> Candidates:
    """The layouts of several candidate sets, one after the other."""
    if len(parts) == 1:
        return parts[0]
    names = Layout.__dataclass_fields__
    return Candidates(
        np.concatenate([part.count for part in parts]),
        Layout(
            **{
                name: np.concatenate([getattr(part.layout, name) for part in parts])
                for name in names
            }
        ),
    )
