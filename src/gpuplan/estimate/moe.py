"""Expert-parallel token dispatch: what a mixture-of-experts layer sends, and how far.

Each MoE layer moves every token to its ``k`` routed experts and back: a dispatch and a combine
in the forward pass, their gradients in the backward pass, four all-to-alls over the expert-
parallel group of ``ep`` ranks (Megatron-Core ``MoEAlltoAllTokenDispatcher``; DeepSeek-V3
report, section 3.2.2). One rank sends ``tokens * k * h`` elements per pass (split by TP).

- ``all_to_all``: NCCL all-to-all of every routed copy; across nodes each copy crosses the
  network on its own.
- ``deepep`` (DeepSeek's DeepEP, ``deepseek-ai/DeepEP`` README: "kernels optimized for the
  asymmetric-domain bandwidth forwarding, such as forwarding data from NVLink domain to RDMA
  domain"): a token crosses the network once per destination node, then fans out to that
  node's experts over NVLink. With the ``k`` experts of a token on random nodes of the ``N``
  the group spans, it reaches ``(N - 1) (1 - (1 - 1/N)^k)`` other nodes instead of
  ``k (N - 1) / N``: the network volume shrinks by that ratio.
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


def network_share_after_deduplication(experts_per_token: int, nodes: npt.ArrayLike) -> FloatArray:
    """Network copies per token with per-node deduplication over those without:
    ``(N - 1) (1 - (1 - 1/N)^k) / (k (N - 1) / N)``; 1 inside one node."""
    spanned = np.maximum(np.asarray(nodes, dtype=float), 1.0)
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
        volume = volume * network_share_after_deduplication(
            model.num_experts_per_token, placement.domains
        )
    one_pass = collective_seconds(
        "all_to_all", volume / PASSES_PER_LAYER, group_size, stride, cluster, links
    )
    return np.asarray(PASSES_PER_LAYER * one_pass, dtype=float)
