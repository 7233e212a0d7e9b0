"""Step time of a training layout: each kernel from published measurements, communication on
the real topology, the pipeline bubble and the optimizer step.

For one rank of the slowest pipeline stage (``ceil(L / pp)`` layers and the output head), one
micro-batch of ``b * s / cp`` tokens costs:

- **matmuls**: each of a layer's GEMMs (QKV, output, gate-and-up, down; the head) at
  :func:`kernels.gemm_seconds`: the dtype's dense peak (fp8 speeds up the matmuls only) at the
  GPU's measured MAMF ceiling, HBM traffic, tiles and alignment, so that the thin matmuls left
  after tensor parallelism and the grouped GEMMs of experts run below peak. Hardware FLOPs
  include recompute (``flops.py``).
- **attention core** at the measured forward + backward rate of the stack's kernel
  (:func:`kernels.attention_share_of_peak`: FlashAttention-2, cuDNN or the eager path).
- **memory-bound ops** (norms, RoPE, SwiGLU, residual adds, MoE permutation, the loss, fp8
  casts, QLoRA dequantization): their bytes (``traffic.py``), fused or eager, at the
  achievable HBM bandwidth.
- **kernel floors**: the shortest kernel's GPU time per kernel, and the host's launch time
  where a layer's kernels finish sooner than it can launch them.
- all of it divided by the stack's fitted residual (``efficiency.py``), and the compute-bound
  kernels slowed to the clock the board sustains and by a power limit (``Cluster.clock_share``).

Communication (``comm.py``, on the cluster's own links: NVLink, PCIe with or without
peer-to-peer, an RDMA network or TCP Ethernet): tensor parallel all-reduces (or all-gather +
reduce-scatter under sequence parallelism, the same volume; the all-gathers in fp8 where the
fp8 recipe casts token shards, :func:`fp8_gathered_tensor_parallel_seconds`) four per layer and
micro-batch, six with full recompute, five under torchtitan's per-op checkpointing
(``step_terms.tensor_parallel_collectives``), exposed, or pipelined with their GEMMs under
``tp_comm_overlap`` (:func:`tensor_parallel_overlap_exposed`; PyTorch's async TP leaves the
backward's reduce-scatters of summed input gradients whole, :data:`SUMMED_GRADIENT_SCATTERS`);
context-parallel K/V exchange
hidden behind attention; expert all-to-alls four per MoE layer, exposed, with the dispatch's
own deduplication and dtype (``moe.py``); pipeline sends at each stage boundary, exposed, except
under Megatron's interleaved schedule, which sends one model chunk's activations while the next
chunk computes (``overlap_p2p_comm``), so only what outlasts a chunk's forward or backward
shows. Data-parallel traffic hides only behind the compute it can overlap with, layer by layer
(:func:`zero3_exposed_seconds`, :func:`overlapped_seconds`): ZeRO-3/FSDP gathers each layer's
parameters under the previous layer's forward and backward and reduce-scatters its gradients
under the next layer's backward, every micro-batch; ZeRO-0/1/2 reduce the gradients bucket by
bucket under the last micro-batch's backward, and the sharded optimizer's parameter all-gather
runs under the next forward where the framework overlaps it (``frameworks.py``), exposed
otherwise; a framework that syncs by broadcast (InternEvo) all-reduces the gradients over
every data-parallel rank and then broadcasts each shard owner's parameters in turn, exposed.
The first and last layer's share is never hidden. Under hybrid sharding
(``strategy.shard_group``) the gathers and reduce-scatters stay inside the shard group and each
reduced shard is then all-reduced across the groups holding the same shard (PyTorch HSDP).

The step is ``(m + (pp - 1)/vpp) * t_microbatch`` (1F1B and interleaved schedules; Narayanan et
al. 2021, section 2.2) plus the exposed gradient synchronisation and the optimizer step.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from gpuplan.estimate.comm import (
    DEFAULT_LINKS,
    ClusterRows,
    LinkModel,
    PlacedGroup,
    collective_seconds,
    hybrid_shard_groups,
)
from gpuplan.estimate.efficiency import (
    Efficiency,
    MachineMeasurements,
    default_efficiency,
    matmul_ceiling,
)
from gpuplan.estimate.flops import RECOMPUTE_FULL, attention_head_widths
from gpuplan.estimate.frameworks import FrameworkProfile, job_profiles
from gpuplan.estimate.kernels import (
    HBM_EFFICIENCY,
    HOST_LAUNCH_SECONDS,
    MATMUL_ELEMENT_BYTES,
    GemmRates,
    attention_share_of_peak,
    gemm_share_of_peak,
)
from gpuplan.estimate.memory import BF16
from gpuplan.estimate.moe import expert_dispatch_seconds, overlapped_dispatch_seconds
from gpuplan.estimate.step_terms import LayoutTerms, layout_terms
from gpuplan.estimate.traffic import (
    FP8_CAST_BYTES,
    fp8_cast_bytes_per_layer,
    fp8_gathered_bytes_per_param,
)
from gpuplan.hardware.cluster import Cluster
from gpuplan.hardware.topology import PCIE_X16_BANDWIDTH
from gpuplan.strategy import Layout
from gpuplan.workload.job import TrainingJob
from gpuplan.workload.model import ModelSpec

FloatArray = npt.NDArray[np.float64]

HOST_OPTIMIZER_PARAMS_PER_SECOND = 1.0e9
"""Parameters per second a CPU Adam step updates for one GPU's shard when the optimizer is
offloaded: DeepSpeed reports its CPU-Adam at 1-2 billion parameters per second per node
(Ren et al. 2021, ZeRO-Offload, section 5.2); the lower end, per GPU."""

BREAKDOWN = (
    "matmul",
    "attention",
    "memory_bound",
    "overhead",
    "tensor_parallel",
    "context_parallel",
    "expert_parallel",
    "pipeline_send",
    "zero3_gather",
    "bubble",
    "data_parallel",
    "optimizer",
)
"""Keys of :attr:`StepTime.breakdown`, seconds per step; they add up to ``step_seconds``."""

COMMUNICATION_PARTS = (
    "tensor_parallel",
    "context_parallel",
    "expert_parallel",
    "pipeline_send",
    "zero3_gather",
    "data_parallel",
)
"""The breakdown's exposed communication: what no compute hides."""


@dataclass(frozen=True)
class StepTime:
    """Step time and throughput over the layouts (0-d arrays for one layout)."""

    step_seconds: FloatArray
    tokens_per_second: FloatArray
    tokens_per_second_per_gpu: FloatArray
    model_flops_per_second_per_gpu: FloatArray
    mfu: FloatArray
    hfu: FloatArray
    breakdown: dict[str, FloatArray]
    matmul_dtype: str


def matmul_dtype(job: TrainingJob, cluster: Cluster | ClusterRows) -> str:
    """The dtype the matmuls run in: fp8 only for fp8 training on a GPU with fp8 tensor cores;
    fp32 training runs its matmuls in tf32 where the GPU has it; GPUs without bf16 (V100) run
    half precision in fp16."""
    if job.precision == "fp8" and cluster.gpu.has_fp8:
        return "fp8"
    if job.precision == "fp32":
        return "tf32" if "tf32" in cluster.gpu.peak_flops else "fp32"
    return "bf16" if "bf16" in cluster.gpu.peak_flops else "fp16"


def layer_matmul_efficiency(
    model: ModelSpec,
    layout: Layout,
    tokens: FloatArray,
    rates: GemmRates,
) -> FloatArray:
    """FLOP-weighted share of ``peak`` that one layer's GEMMs reach (:func:`matmul_efficiencies`)."""
    return matmul_efficiencies(model, layout, tokens, rates)[0]


def matmul_efficiencies(
    model: ModelSpec,
    layout: Layout,
    tokens: FloatArray,
    rates: GemmRates,
) -> tuple[FloatArray, FloatArray]:
    """Shares of ``peak`` that one layer's GEMMs and the output head's reach.

    A layer's: FLOP-weighted over its GEMMs, each ``M x K -> N`` at
    :func:`kernels.gemm_share_of_peak` (its forward and both backward GEMMs have the same three
    dimensions); weighted harmonically by FLOPs, since the times add. Routed experts run
    grouped GEMMs of the tokens each expert receives. The head's: ``tokens x hidden ->
    vocab / tp``. The shapes depend on the micro-batch's tokens, TP and EP only, so each
    distinct triple is computed once, all five GEMMs in one call."""
    shape = np.broadcast(tokens, layout.tp, layout.ep).shape

    def rows(values: npt.ArrayLike) -> npt.NDArray[Any]:
        array = np.asarray(values)
        return (array if array.shape == shape else np.broadcast_to(array, shape)).ravel()

    token_rows = rows(tokens)
    tp_rows = rows(layout.tp).astype(float)
    ep_rows = rows(layout.ep).astype(float)
    key = token_rows * 1e6 + tp_rows * 1e3 + ep_rows
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    tp, ep, m = tp_rows[first], ep_rows[first], token_rows[first]
    h = float(model.hidden_size)
    width = float(model.moe_intermediate_size if model.is_moe else model.intermediate_size)
    gate = 2.0 if model.gated_mlp else 1.0
    expert_m = m * (model.num_experts_per_token / model.num_experts * ep if model.is_moe else 1.0)
    hidden = np.full_like(m, h)
    gemms = [
        (m, hidden, (model.q_width + 2 * model.kv_width) / tp),
        (m, model.q_width / tp, hidden),
        (expert_m, hidden, gate * width / tp),
        (expert_m, width / tp, hidden),
        (m, hidden, model.vocab_size / tp),
    ]
    sizes = [np.stack([gemm[axis] for gemm in gemms]) for axis in range(3)]
    shares = gemm_share_of_peak(sizes[0], sizes[2], sizes[1], rates)
    weights = np.zeros_like(m)
    times = np.zeros_like(m)
    for (_, k_size, n_size), share in zip(gemms[:4], shares[:4], strict=True):
        flops = k_size * n_size
        weights = weights + flops
        times = times + flops / share
    layer = np.asarray((weights / times)[inverse].reshape(shape), dtype=float)
    return layer, np.asarray(shares[4][inverse].reshape(shape), dtype=float)


def estimate_step_time(
    job: TrainingJob,
    cluster: Cluster | ClusterRows,
    layout: Layout,
    efficiency: Efficiency | None = None,
    flash_attention: bool = True,
    measured: MachineMeasurements | None = None,
    terms: LayoutTerms | None = None,
) -> StepTime:
    """Seconds per optimizer step and the throughput they give (module docstring). ``measured``
    (a calibration profile of the rented machine) replaces the built-in ceilings for its GPU.
    ``terms``: :func:`~gpuplan.estimate.step_terms.layout_terms` of ``job`` on ``layout``,
    when the caller keeps them for several clusters."""
    constants = efficiency or default_efficiency()
    model, gpu = job.model, cluster.gpu
    gpu.require_speed_model()
    links = measured_links(measured, gpu.id)
    terms = terms or layout_terms(job, layout)
    codes, profiles = terms.codes, job_profiles(job)
    tp, cp, vpp = terms.tp, terms.cp, terms.vpp
    tokens, layers_on_stage = terms.tokens, terms.layers_on_stage

    dtype = matmul_dtype(job, cluster)
    peak = gpu.peak(dtype)
    ceiling = matmul_ceiling(gpu, dtype, measured) * cluster.clock_share
    bandwidth = gpu.hbm_bandwidth() * hbm_efficiency(measured, gpu.id)
    rates = GemmRates(peak, ceiling, bandwidth, MATMUL_ELEMENT_BYTES[dtype])
    layer_efficiency, head_efficiency = matmul_efficiencies(model, layout, tokens, rates)
    layer_matmul = terms.layer_matmul_flops / (peak * layer_efficiency)
    head_matmul = terms.head_matmul_flops / (peak * head_efficiency)
    matmul = layer_matmul + head_matmul

    attention_peak = gpu.half_precision_peak()
    kernels_by_code = [
        profile.attention_kernel if flash_attention else "eager" for profile in profiles
    ]
    query_key_width = attention_head_widths(model)[0]
    attended_length = min(job.seq_len, job.document_tokens or job.seq_len)
    attention_shares = np.array(
        [
            attention_share_of_peak(gpu.architecture, kernel, attended_length, query_key_width)
            for kernel in kernels_by_code
        ]
    )
    attention = terms.attention_core_flops / (
        attention_peak * attention_shares[codes] * cluster.clock_share
    )

    memory_bound = terms.memory_bound_bytes / bandwidth
    gathers_fp8_weights = job.fp8_all_gather & (layout.zero >= 1) & (dtype == "fp8")
    if dtype == "fp8":
        memory_bound = (
            memory_bound
            + layers_on_stage
            * fp8_cast_bytes(job, terms, profiles, gathers_fp8_weights, layout.sequence_parallel)
            / bandwidth
        )
    if job.method == "qlora":
        memory_bound = memory_bound + qlora_dequantization_seconds(job, layout, bandwidth)
    kernels, gaps = terms.kernels, terms.gaps
    device_per_layer = (matmul + attention + memory_bound + gaps) / layers_on_stage
    host_wait = np.maximum(kernels * HOST_LAUNCH_SECONDS - device_per_layer, 0.0)
    overhead = gaps + layers_on_stage * host_wait
    stack_share = constants.stack_shares(codes)
    matmul, attention, memory_bound, overhead = (
        part / stack_share for part in (matmul, attention, memory_bound, overhead)
    )
    compute = matmul + attention + memory_bound + overhead

    groups = terms.groups
    tp_collectives = terms.tp_collectives
    tp_collective = collective_seconds(
        "all_reduce", terms.activation_bytes, groups["tp"].size, groups["tp"].stride, cluster, links
    )
    if dtype == "fp8":
        tp_collective = fp8_gathered_tensor_parallel_seconds(
            tp_collective, job, terms, profiles, layout, cluster, links
        )
    tensor_parallel = layers_on_stage * tp_collectives * tp_collective
    if job.tp_comm_overlap:
        paired_gemm = layer_matmul / np.maximum(layers_on_stage, 1.0) / tp_collectives
        pipelined = tensor_parallel_overlap_exposed(tp_collective, paired_gemm, tp)
        unpipelined = np.where(
            terms.pipelines_summed_gradient_scatter, 0.0, SUMMED_GRADIENT_SCATTERS
        )
        tensor_parallel = layers_on_stage * (
            (tp_collectives - unpipelined) * pipelined + unpipelined * tp_collective
        )
    ring = (
        3.0
        * (cp - 1.0)
        * collective_seconds(
            "p2p", terms.kv_bytes, groups["cp"].size, groups["cp"].stride, cluster, links
        )
    )
    attention_per_layer = attention / np.maximum(layers_on_stage, 1.0)
    context_parallel = layers_on_stage * np.maximum(ring - attention_per_layer, 0.0)
    if model.is_moe:
        dispatch = expert_dispatch_seconds(
            model, job.moe, tokens, tp, groups["ep"].size, groups["ep"].stride, cluster, links
        )
        if job.moe.a2a_overlap:
            dispatch = overlapped_dispatch_seconds(
                dispatch, compute / np.maximum(layers_on_stage, 1.0)
            )
        expert_parallel = terms.moe_layers * dispatch
    else:
        expert_parallel = np.zeros_like(compute)
    send = collective_seconds(
        "p2p", terms.send_bytes, groups["pp"].size, groups["pp"].stride, cluster, links
    )
    chunk_compute = compute / (2.0 * vpp)
    pipeline_send = np.where(
        layout.pp > 1,
        2.0 * vpp * np.where(terms.overlapped_sends, np.maximum(send - chunk_compute, 0.0), send),
        0.0,
    )

    stage_params = terms.stage_params
    dp_group = groups["dp_cp"]
    shard = terms.shard
    reduce_bytes_per_param = terms.reduce_bytes_per_param
    forward_share = terms.forward_share
    forward, backward = compute * forward_share, compute * (1.0 - forward_share)

    placed_dp = PlacedGroup.of(dp_group.size, dp_group.stride, cluster, links)
    shard_group, replicas = hybrid_shard_groups(dp_group, shard)
    placed_shard = (
        placed_dp
        if np.array_equal(shard_group.size, dp_group.size)
        else PlacedGroup.of(shard_group.size, shard_group.stride, cluster, links)
    )
    placed_replicas = PlacedGroup.of(replicas.size, replicas.stride, cluster, links)

    def gathered(size: FloatArray) -> FloatArray:
        return placed_shard.collective_seconds("all_gather", size)

    def reduced(size: FloatArray) -> FloatArray:
        scatter = placed_shard.collective_seconds("reduce_scatter", size)
        if placed_replicas.placement is None:
            return scatter
        return scatter + placed_replicas.collective_seconds("all_reduce", size / shard)

    gathered_bytes = (
        np.where(gathers_fp8_weights, fp8_gathered_bytes_per_param(model), BF16)
        if np.any(gathers_fp8_weights)
        else BF16
    )
    gather = gathered(stage_params * gathered_bytes)
    if np.any(terms.syncs_by_broadcast):
        broadcasts = shard * placed_shard.collective_seconds(
            "broadcast", stage_params * BF16 / shard
        )
        gather = np.where(terms.syncs_by_broadcast, broadcasts, gather)
    scatter = reduced(stage_params * reduce_bytes_per_param)
    layer_gather = gathered(stage_params * gathered_bytes / layers_on_stage)
    layer_scatter = reduced(stage_params * reduce_bytes_per_param / layers_on_stage)
    zero3_exposed = np.where(
        layout.zero == 3,
        zero3_exposed_seconds(layer_gather, layer_scatter, forward, backward, layers_on_stage),
        0.0,
    )

    per_micro_batch = (
        compute
        + tensor_parallel
        + context_parallel
        + expert_parallel
        + pipeline_send
        + zero3_exposed
    )
    micro_batches = terms.micro_batches
    bubble_micro_batches = terms.bubble_micro_batches

    all_reduce = placed_dp.collective_seconds("all_reduce", stage_params * reduce_bytes_per_param)
    gradient_reduce = np.where((layout.zero == 0) | terms.syncs_by_broadcast, all_reduce, scatter)
    parameter_gather = np.where(
        terms.overlaps_parameter_gather,
        overlapped_seconds(gather, forward, layers_on_stage),
        gather,
    )
    data_parallel = np.where(
        layout.zero == 3,
        0.0,
        overlapped_seconds(gradient_reduce, backward, layers_on_stage)
        + np.where(layout.zero >= 1, parameter_gather, 0.0),
    )

    optimizer = _optimizer_seconds(cluster, layout, terms, bandwidth)

    breakdown = {
        "matmul": micro_batches * matmul,
        "attention": micro_batches * attention,
        "memory_bound": micro_batches * memory_bound,
        "overhead": micro_batches * overhead,
        "tensor_parallel": micro_batches * tensor_parallel,
        "context_parallel": micro_batches * context_parallel,
        "expert_parallel": micro_batches * expert_parallel,
        "pipeline_send": micro_batches * pipeline_send,
        "zero3_gather": micro_batches * zero3_exposed,
        "bubble": bubble_micro_batches * per_micro_batch,
        "data_parallel": data_parallel,
        "optimizer": optimizer,
    }
    step = np.asarray(sum(breakdown.values()), dtype=float)
    tokens_per_step = float(job.global_batch * job.seq_len)
    tokens_per_second = tokens_per_step / step
    per_gpu = tokens_per_second / (layout.dp * layout.tp * layout.pp * layout.cp)
    model_flops = per_gpu * terms.model_flops
    reference_peak = gpu.half_precision_peak()
    return StepTime(
        step_seconds=step,
        tokens_per_second=np.asarray(tokens_per_second, dtype=float),
        tokens_per_second_per_gpu=np.asarray(per_gpu, dtype=float),
        model_flops_per_second_per_gpu=np.asarray(model_flops, dtype=float),
        mfu=np.asarray(model_flops / reference_peak, dtype=float),
        hfu=np.asarray(per_gpu * terms.hardware_flops / reference_peak, dtype=float),
        breakdown={name: np.asarray(value, dtype=float) for name, value in breakdown.items()},
        matmul_dtype=dtype,
    )


SUMMED_GRADIENT_SCATTERS = 1.0
"""All-reduces' bytes per layer that PyTorch's async TP leaves exposed: the backward pass's two
reduce-scatters of the attention and MLP input gradients (one all-reduce's bytes). Inductor's
``micro_pipeline_tp`` pass fuses an all-gather into the matmuls that consume it and a matmul into
the reduce-scatter it feeds (``fuse_all_gather_matmul``, ``fuse_matmul_reduce_scatter``), but
only where the reduce-scatter's input is one matmul (``rs_input.target == aten.mm``): the input
gradient of the separate ``wq``/``wk``/``wv`` (and ``w1``/``w3``) linears of torchtitan's and
Hugging Face's models is the sum of three (two) matmuls, so its reduce-scatter runs whole.
Transformer Engine's userbuffers overlap that reduce-scatter with the weight-gradient GEMM
(``FrameworkProfile.pipelines_summed_gradient_scatter``)."""


def tensor_parallel_overlap_exposed(
    collective: FloatArray, paired_gemm: FloatArray, tp: FloatArray
) -> FloatArray:
    """Exposed seconds of one tensor-parallel collective split into ``tp`` chunks and pipelined
    with the GEMM it feeds or follows (Transformer Engine's userbuffer all-gather/reduce-scatter
    overlap, ``tp_comm_overlap`` in Megatron-Core; torchtitan's async TP, which decomposes the
    collective matmul the same way, Wang et al. 2022): the first chunk waits, the rest hides
    behind the GEMM until the link is the slower, ``c / tp + max(0, c (tp - 1) / tp - g)``."""
    chunks = np.maximum(tp, 1.0)
    rest = collective * (chunks - 1.0) / chunks
    return np.asarray(collective / chunks + np.maximum(rest - paired_gemm, 0.0), dtype=float)


def overlapped_seconds(
    communication: FloatArray, compute: FloatArray, layers: FloatArray
) -> FloatArray:
    """Exposed seconds of a bucketed collective that runs under ``compute`` layer by layer
    (DDP's and Megatron-Core's gradient buckets under backward, the sharded optimizer's
    parameter buckets under the next forward): a bucket can only start once its layer is done,
    so the last layer's share is never hidden, and the rest hides only behind the compute of
    the other layers: ``max(c / L, c - t (L - 1) / L)``."""
    share = communication / np.maximum(layers, 1.0)
    remaining = compute * (layers - 1.0) / np.maximum(layers, 1.0)
    return np.asarray(np.maximum(share, communication - remaining), dtype=float)


def zero3_exposed_seconds(
    layer_gather: FloatArray,
    layer_scatter: FloatArray,
    forward: FloatArray,
    backward: FloatArray,
    layers: FloatArray,
) -> FloatArray:
    """Exposed ZeRO-3/FSDP communication of one micro-batch, layer by layer (FSDP's prefetch
    schedule, PyTorch ``FullyShardedDataParallel`` and FSDP2 ``fully_shard``): in the forward
    pass layer ``l + 1``'s all-gather ``a`` runs under layer ``l``'s forward ``f``; in the
    backward pass layer ``l - 1``'s all-gather and layer ``l + 1``'s reduce-scatter ``r`` share
    the link under layer ``l``'s backward ``b``. The first gather and the last reduce-scatter
    have nothing to hide behind:
    ``a + r + (L - 1) (max(0, a - f) + max(0, a + r - b))`` with ``f``, ``b`` per layer."""
    per_layer_forward = forward / np.maximum(layers, 1.0)
    per_layer_backward = backward / np.maximum(layers, 1.0)
    hidden_layers = np.maximum(layers - 1.0, 0.0)
    exposed = (
        layer_gather
        + layer_scatter
        + hidden_layers * np.maximum(layer_gather - per_layer_forward, 0.0)
        + hidden_layers * np.maximum(layer_gather + layer_scatter - per_layer_backward, 0.0)
    )
    return np.asarray(exposed, dtype=float)


def fp8_cast_bytes(
    job: TrainingJob,
    terms: LayoutTerms,
    profiles: tuple[FrameworkProfile, ...],
    gathers_fp8_weights: npt.ArrayLike,
    sequence_parallel: npt.ArrayLike = False,
) -> FloatArray:
    """HBM bytes of one layer's fp8 casts per micro-batch on a rank
    (:func:`traffic.fp8_cast_bytes_per_layer`), under the job's recipe or, for ``auto``, the
    recipe of each layout's stack (``KernelsPart.fp8_recipe``), with the stack's weight cache
    and, where ``gathers_fp8_weights`` (``fp8_all_gather`` under ZeRO), weights gathered in
    fp8; ``sequence_parallel`` per layout."""
    keys = [
        (profile.fp8_recipe_for(job.fp8_recipe), profile.kernels.caches_fp8_weights)
        for profile in profiles
    ]
    by_key = {
        key: fp8_cast_bytes_per_layer(
            job.model,
            key[0],
            terms.tokens,
            terms.tp,
            terms.groups["ep"].size,
            terms.forward_passes,
            terms.micro_batches,
            caches_weights=key[1],
            gathers_fp8_weights=gathers_fp8_weights,
            sequence_parallel=sequence_parallel,
        )
        for key in set(keys)
    }
    return np.asarray(np.choose(terms.codes, [by_key[key] for key in keys]), dtype=float)


def fp8_gathered_tensor_parallel_seconds(
    tp_collective: FloatArray,
    job: TrainingJob,
    terms: LayoutTerms,
    profiles: tuple[FrameworkProfile, ...],
    layout: Layout,
    cluster: Cluster | ClusterRows,
    links: dict[str, LinkModel],
) -> FloatArray:
    """One tensor-parallel all-reduce's worth of collectives where the fp8 recipe casts each
    rank's token shard before the sequence-parallel all-gather (``Fp8CastBytes.
    casts_token_shards``): the all-gather of the column-parallel inputs, forward, and of the
    row-parallel output gradients, backward, moves fp8, the reduce-scatters stay bf16, so the
    pair costs ``all_gather(S / 2) + reduce_scatter(S)``. Transformer Engine quantizes the
    norm's output and gathers the fp8 data (``LayerNormLinear``: "All-gather is not supported
    with FP8 column-wise data", so only the row-wise fp8 copy travels); torchao's
    ``Float8ColwiseParallel`` casts the input before ``redistribute`` and
    ``Float8RowwiseParallel`` casts the output gradient before the backward's gather
    (``_NoopFwToFloat8BwDynamic``). Elsewhere ``tp_collective`` unchanged."""
    shards = np.array(
        [
            FP8_CAST_BYTES[profile.fp8_recipe_for(job.fp8_recipe)].casts_token_shards
            for profile in profiles
        ]
    )[terms.codes] & np.asarray(layout.sequence_parallel, dtype=bool)
    if not np.any(shards):
        return tp_collective
    size, stride = terms.groups["tp"].size, terms.groups["tp"].stride
    fp8_pair = collective_seconds(
        "all_gather", terms.activation_bytes / 2.0, size, stride, cluster, links
    ) + collective_seconds("reduce_scatter", terms.activation_bytes, size, stride, cluster, links)
    return np.asarray(np.where(shards, fp8_pair, tp_collective), dtype=float)


def hbm_efficiency(measured: MachineMeasurements | None, gpu_id: str) -> float:
    """Achievable share of the HBM bandwidth: the machine's measurement, else
    :data:`kernels.HBM_EFFICIENCY`."""
    if measured is not None and measured.applies_to(gpu_id) and measured.hbm_efficiency:
        return measured.hbm_efficiency
    return HBM_EFFICIENCY


def measured_links(measured: MachineMeasurements | None, gpu_id: str) -> dict[str, LinkModel]:
    """The link models with a machine's measured peak bus-bandwidth efficiencies."""
    links = dict(DEFAULT_LINKS)
    if measured is None or not measured.applies_to(gpu_id):
        return links
    if measured.intra_node_link_efficiency:
        for kind in ("nvlink", "pcie", "host"):
            links[kind] = replace(links[kind], peak_efficiency=measured.intra_node_link_efficiency)
    if measured.network_efficiency:
        for kind in ("network", "ethernet"):
            links[kind] = replace(links[kind], peak_efficiency=measured.network_efficiency)
    return links


def qlora_dequantization_seconds(job: TrainingJob, layout: Layout, bandwidth: float) -> FloatArray:
    """QLoRA dequantizes every 4-bit linear weight to bf16 before each matmul, in the forward
    pass and again for the input gradient (bitsandbytes ``MatMul4Bit``; Dettmers et al. 2023):
    per pass it reads about half a byte per weight and writes and re-reads two, memory-bound
    traffic on top of the matmuls (one more pass under full recompute)."""
    model = job.model
    breakdown = model.parameter_breakdown()
    linear = (breakdown["attention"] + breakdown["mlp"] + breakdown["experts"]) / layout.tp
    layer_share = np.ceil(model.num_layers / layout.pp) / model.num_layers
    passes = np.where(layout.recompute == RECOMPUTE_FULL, 3.0, 2.0)
    return np.asarray(linear * layer_share * passes * (0.5 + 2.0 * BF16) / bandwidth, dtype=float)


def _optimizer_seconds(
    cluster: Cluster | ClusterRows,
    layout: Layout,
    terms: LayoutTerms,
    bandwidth: float,
) -> FloatArray:
    """The optimizer step, memory-bound: the bytes it moves per parameter of the rank's shard
    (``traffic.optimizer_step_bytes_per_param``: foreach or fused, in the stack's dtypes) at
    the achievable HBM bandwidth. Offloaded, the shard's gradients go to the host and its
    weights come back over PCIe, and the host updates ``HOST_OPTIMIZER_PARAMS_PER_SECOND``."""
    local = terms.stage_params / np.where(layout.zero >= 1, terms.shard, 1.0)
    on_gpu = local * terms.optimizer_bytes_per_param / bandwidth
    pcie = PCIE_X16_BANDWIDTH[cluster.gpu.pcie_generation]
    offloaded = local * (4.0 + BF16) / pcie + local / HOST_OPTIMIZER_PARAMS_PER_SECOND
    return np.asarray(np.where(layout.offload >= 1, offloaded, on_gpu), dtype=float)
