"""The plan search: offers x instance counts x parallel layouts, evaluated on NumPy arrays.

A plan is a machine someone sells. The search walks the catalog's offers, not GPU types: offers
that sell the same machine (GPU, GPUs per instance, link inside the instance, network between
instances) form one :class:`Machine`, modelled once with that topology and priced offer by
offer. An offer whose seller lists no network between instances gives single-instance plans
only, unless the request allows them (``allow_unlisted_network``): they are then modelled on the
instances' public Ethernet and every plan on them says so. A cluster product (``min_instances``)
is only sold from its minimum size up.

For each machine the search builds every layout of every instance count at once as one
:class:`~gpuplan.strategy.Layout` of 1-d arrays: the structural rules are checked on the small
grid of (count, tp, pp, vpp, cp, ep) first and only its valid rows are crossed with the ZeRO
stage, micro-batch, recompute and offload choices. It runs the memory model
(``estimate/memory.py``) on all of them, keeps those that fit with the requested headroom, and
runs the speed, reliability and start-up models on the survivors. The formulas are the ones
``gpuplan.estimate`` runs on 0-d arrays: there is no second copy.

Instance counts are every count up to 16 instances, then every ``m * 2^k`` instances
(``m = 8..15``), up to ``max_gpus``: spaced at most 12.5 % apart, and holding every size whose
layouts can divide a batch of ``2^a`` or ``3 * 2^a`` sequences with the pipeline sizes below.
Pipeline sizes are the powers of two, 3 and 6, and the divisors of the layer count, up to 64.

Per machine and count, the fastest feasible layout is the one to rent (for a given offer a
shorter job never costs more); each offer of the machine that sells that count prices it with
its own billing rules, the start-up time included. Plans are then filtered by budget and
deadline and ranked by cost, by time, or reduced to the Pareto front of cost against days.

Layout rules (Megatron-Core's, as ``Strategy.resolved`` checks them one at a time): ``dp * tp *
pp * cp = GPUs``; ``tp`` within a node (or NVLink domain) and dividing the attention heads, with
the KV heads and ``tp`` dividing one another; ``pp`` at most the layers (uneven stages allowed)
and ``pp * vpp`` at most the layers when interleaved; ``cp`` dividing the sequence; ``ep`` dividing
the experts and ``dp * cp``; ``dp * micro_batch`` dividing the global batch; LoRA and QLoRA
without a pipeline.
"""

from gpuplan.search.evaluate import (
    Evaluated,
    Shortfall,
    best_per_cluster_size,
    evaluate_machine,
    evaluate_machines,
    strategy_at,
)
from gpuplan.search.layouts import Candidates, enumerate_layouts, pipeline_sizes
from gpuplan.search.machines import Machine, group_machines, instance_counts, machine_gpu_counts
from gpuplan.search.plan import explain, plan
from gpuplan.search.ranking import PlanCandidate, pareto_front, select_rows, sort_key, within_limits
from gpuplan.search.request import (
    DEFAULT_HEADROOM,
    DEFAULT_MAX_GPUS,
    OBJECTIVES,
    LayoutLimitError,
    PlanError,
    PlanRequest,
)

__all__ = [
    "DEFAULT_HEADROOM",
    "DEFAULT_MAX_GPUS",
    "OBJECTIVES",
    "Candidates",
    "Evaluated",
    "LayoutLimitError",
    "Machine",
    "PlanCandidate",
    "PlanError",
    "PlanRequest",
    "Shortfall",
    "best_per_cluster_size",
    "enumerate_layouts",
    "evaluate_machine",
    "evaluate_machines",
    "explain",
    "group_machines",
    "instance_counts",
    "machine_gpu_counts",
    "pareto_front",
    "pipeline_sizes",
    "plan",
    "select_rows",
    "sort_key",
    "strategy_at",
    "within_limits",
]
