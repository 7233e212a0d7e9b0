"""Expert-parallel token dispatch: what a mixture-of-experts layer sends, and how far.

Each MoE layer moves every token to its ``k`` routed experts and back: a dispatch and a combine
in the forward pass, their gradients in the backward pass, four all-to-alls over the expert-
parallel group of ``ep`` ranks (Megatron-Core ``MoEAlltoAllTokenDispatcher``; DeepSeek-V3
report, section 3.2.2). One rank sends ``tokens * k * h`` elements per pass (split by TP).

- ``all_to_all``: NCCL all-to-all of every routed copy; across nodes each copy crosses the
  network on its own.
- ``deepep`` (DeepSeek's DeepEP, ``deepseek-ai/DeepEP`` README: "kernels optimized for the
  asymmetric-domain bandwidth forwarding, such as forwarding data from NVLink domain to RDMA
  domain"): a token is sent once to each rank that holds any of its experts
  (``Buffer.get_dispatch_layout``: ``is_token_in_rank``, "whether a token be sent to a rank";
  the combine sums a rank's experts before sending back), and across nodes once per
  destination node, then fans out over NVLink. A token whose ``k`` experts lie on ``R`` of
  the ``D`` destinations (the nodes the group spans, or its ranks inside one node) sends
  ``R (D - 1) / D`` remote copies on average over the origin ranks instead of
  ``k (D - 1) / D``: the volume on the slowest link shrinks by ``E[R] / k``
  (:func:`destinations_per_token`).
- ``dispatch_dtype = fp8``: the forward dispatch sends fp8 with one fp32 scale per 128 values
  (DeepEP's FP8 dispatch; DeepSeek-V3 report, section 3.3.2, keeps the combine in bf16): that
  pass moves ``1 + 4/128`` bytes per element instead of 2.

``load_imbalance``: the busiest expert's load over the mean; the ranks wait for it, so the
expert GEMMs and the dispatch to that rank take that much longer.

``a2a_overlap`` (:func:`overlapped_dispatch_seconds`): a schedule that runs one micro-batch's
all-to-alls under another micro-batch's compute, layer by layer (DeepSeek-V3's DualPipe,
report section 3.2.1; Megatron-Core's ``--overlap-moe-expert-parallel-comm``, which merges the
forward of one micro-batch with the backward of another). The communication kernels occupy
some of the GPU's SMs meanwhile, so the compute under them runs slower.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from gpuplan.estimate.comm import (
    ArrayLike,
    ClusterRows,
    LinkModel,
    collective_seconds,
    group_placement,
)
from gpuplan.estimate.memory import BF16
from gpuplan.hardware.cluster import Cluster
from gpuplan.workload.job import MoEOptions
from gpuplan.workload.model import ModelSpec

FloatArray = npt.NDArray[np.float64]

FP8_DISPATCH_BYTES = 1.0 + 4.0 / 128.0
"""Bytes per element of an fp8 dispatch with one fp32 scale per 128 values."""

PASSES_PER_LAYER = 4

COMMUNICATION_SM_SHARE = 20.0 / 132.0
"""Share of the GPU's SMs the all-to-all kernels hold while they run under compute: DeepSeek-V3
dedicates 20 of the H800's 132 SMs to communication ("only 20 SMs are sufficient to fully
utilize the bandwidths of IB and NVLink", report section 3.2.2); DeepEP's normal kernels default
to the same 20 (``Buffer.num_sms = 20``, deepseek-ai/DeepEP ``deep_ep/buffer.py``)."""


def _reach_probability(pool: int, held: int, k: int) -> float:
    """Chance that ``k`` distinct experts drawn from ``pool`` include one of ``held`` of them."""
    if held <= 0:
        return 0.0
    return 1.0 - math.comb(pool - held, k) / math.comb(pool, k)


def _learned_destinations(model: ModelSpec, destinations: int) -> float:
    """Expected destinations of a token routed by a trained, balanced router: its ``k`` experts
    are distinct and uniform over the experts it may pick. With ``G`` expert groups of which it
    keeps ``g`` (``n_group`` / ``topk_group``: DeepSeek-V3 report, section 2.1.2, node-limited
    routing, "each token will be sent to at most M nodes"), the pool is the ``g`` chosen groups,
    and a destination holding ``G / D`` whole groups holds ``C ~ Hypergeometric(G, G / D, g)`` of
    them; a group spanning ``D / G`` destinations puts them all in the pool or none. Groups that
    do not align with the destinations are treated as no limit."""
    experts, k, spread = model.num_experts, model.num_experts_per_token, destinations
    router = model.settings.router
    groups = router.num_groups if router is not None else None
    kept = router.group_top_k if router is not None else None
    if experts % spread:
        return spread * (1.0 - (1.0 - 1.0 / spread) ** k)
    if groups and kept and kept < groups and experts % groups == 0:
        pool = kept * experts // groups
        if groups % spread == 0:
            per_destination = groups // spread
            return spread * sum(
                math.comb(per_destination, held)
                * math.comb(groups - per_destination, kept - held)
                / math.comb(groups, kept)
                * _reach_probability(pool, held * experts // groups, k)
                for held in range(min(per_destination, kept) + 1)
            )
        if spread % groups == 0:
            pooled = kept * spread // groups
            return pooled * _reach_probability(pool, experts // spread, k)
    return spread * _reach_probability(experts, experts // spread, k)


def _round_robin_destinations(model: ModelSpec, destinations: int) -> float:
    """Destinations of token ``t`` sent to experts ``t k ... t k + k - 1`` (mod ``E``; experts
    laid out contiguously, ``E / D`` per destination), averaged over a period of ``t``."""
    experts, k = model.num_experts, model.num_experts_per_token
    per_destination = max(experts // destinations, 1)
    period = experts // math.gcd(experts, k)
    reached = [
        len({((t * k + j) % experts) // per_destination for j in range(k)}) for t in range(period)
    ]
    return sum(reached) / period


def destinations_per_token(
    model: ModelSpec, routing: str, destinations: npt.ArrayLike
) -> FloatArray:
    """Expected distinct destinations among ``D`` that one token's ``k`` experts lie on, for a
    ``learned`` router or a ``round_robin`` benchmark gate (:class:`MoEOptions`)."""
    spans = np.maximum(np.asarray(destinations, dtype=np.int64), 1)
    count = _round_robin_destinations if routing == "round_robin" else _learned_destinations
    values = {int(span): count(model, int(span)) for span in np.unique(spans)}
    return np.asarray(np.vectorize(values.__getitem__, otypes=[float])(spans), dtype=float)


def deduplicated_share(model: ModelSpec, routing: str, destinations: npt.ArrayLike) -> FloatArray:
    """Copies per token sent once per destination over those sent once per expert,
    ``E[R] / k`` (module docstring); 1 for a single destination."""
    spans = np.asarray(destinations, dtype=float)
    share = destinations_per_token(model, routing, destinations) / model.num_experts_per_token
    return np.asarray(np.where(spans > 1.0, share, 1.0), dtype=float)


def expert_dispatch_seconds(
    model: ModelSpec,
    options: MoEOptions,
    tokens: FloatArray,
    tp: FloatArray,
    group_size: ArrayLike,
    stride: ArrayLike,
    cluster: Cluster | ClusterRows,
    links: dict[str, LinkModel],
) -> FloatArray:
    """Seconds of one MoE layer's four all-to-alls for one micro-batch on one rank (module
    docstring)."""
    elements = tokens * model.num_experts_per_token * model.hidden_size / tp
    forward_bytes = FP8_DISPATCH_BYTES if options.dispatch_dtype == "fp8" else BF16
    per_layer_bytes = elements * (forward_bytes + (PASSES_PER_LAYER - 1) * BF16)
    volume = per_layer_bytes * options.load_imbalance
    if options.dispatch == "deepep":
        placement = group_placement(group_size, stride, cluster)
        destinations = np.where(placement.domains > 1, placement.domains, group_size)
        volume = volume * deduplicated_share(model, options.routing, destinations)
    one_pass = collective_seconds(
        "all_to_all", volume / PASSES_PER_LAYER, group_size, stride, cluster, links
    )
    return np.asarray(PASSES_PER_LAYER * one_pass, dtype=float)


def overlapped_dispatch_seconds(dispatch: FloatArray, layer_compute: FloatArray) -> FloatArray:
    """Seconds one MoE layer's all-to-alls add to a micro-batch when they run under the compute
    ``c`` of another micro-batch's layer: the pair takes ``max(d, c + s min(d, c))``, ``s`` the
    SM share the communication kernels hold (:data:`COMMUNICATION_SM_SHARE`), of which ``c`` is
    already counted: ``max(d, c + s min(d, c)) - c``."""
    shared = np.minimum(dispatch, layer_compute)
    paired = np.maximum(dispatch, layer_compute + COMMUNICATION_SM_SHARE * shared)
    return np.asarray(paired - layer_compute, dtype=float)
