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
  destination node, then fans out over NVLink. With the ``k`` experts of a token on random
  ones of ``D`` destinations (the nodes the group spans, or its ranks inside one node), it
  reaches ``(D - 1) (1 - (1 - 1/D)^k)`` other destinations instead of ``k (D - 1) / D``: the
  volume on the slowest link shrinks by that ratio.
- ``dispatch_dtype = fp8``: the forward dispatch sends fp8 with one fp32 scale per 128 values
  (DeepEP's FP8 dispatch; DeepSeek-V3 report, section 3.3.2, keeps the combine in bf16): that
  pass moves ``1 + 4/128`` bytes per element instead of 2.

``load_imbalance``: the busiest expert's load over the mean; the ranks wait for it, so the
expert GEMMs and the dispatch to that rank take that much longer.
"""

from __future__ import annotations

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


def deduplicated_share(experts_per_token: int, destinations: npt.ArrayLike) -> FloatArray:
    """Copies per token sent once per destination over those sent once per expert:
    ``(D - 1) (1 - (1 - 1/D)^k) / (k (D - 1) / D)``; 1 for a single destination."""
    spanned = np.maximum(np.asarray(destinations, dtype=float), 1.0)
    k = float(experts_per_token)
    deduplicated = (spanned - 1.0) * (1.0 - (1.0 - 1.0 / spanned) ** k)
    plain = k * (spanned - 1.0) / spanned
    return np.asarray(np.where(spanned > 1.0, deduplicated / np.maximum(plain, 1e-12), 1.0))


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
        volume = volume * deduplicated_share(model.num_experts_per_token, destinations)
    one_pass = collective_seconds(
        "all_to_all", volume / PASSES_PER_LAYER, group_size, stride, cluster, links
    )
    return np.asarray(PASSES_PER_LAYER * one_pass, dtype=float)
