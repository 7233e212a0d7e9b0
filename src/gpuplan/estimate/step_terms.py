"""The terms of the step-time model that depend on the job and the layout alone.

:func:`~gpuplan.estimate.time.estimate_step_time` turns FLOPs, bytes and communication volumes
into seconds on one GPU and cluster. The FLOPs per rank, the HBM bytes of the memory-bound
ops, the kernel counts, the parallel groups and the message sizes come from the job and the
layout only (:func:`layout_terms`), so the plan search computes them once for a set of layouts
and shares them between every GPU type that runs those layouts (:class:`PackedTerms`).
Each is computed exactly as the step model writes it, so the seconds do not change.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields

import numpy as np
import numpy.typing as npt

from gpuplan.estimate.comm import ParallelGroup, parallel_groups
from gpuplan.estimate.flops import (
    RECOMPUTE_FULL,
    RECOMPUTE_SELECTIVE,
    training_flops_per_token,
)
from gpuplan.estimate.frameworks import (
    FRAMEWORK_CODES,
    job_profiles,
    profile_values,
    resolve_framework_codes,
)
from gpuplan.estimate.kernels import (
    EAGER_KERNELS_PER_LAYER,
    FUSED_KERNELS_PER_LAYER,
    KERNEL_GAP_SECONDS,
)
from gpuplan.estimate.memory import BF16, lora_params_per_layer
from gpuplan.estimate.traffic import (
    layer_traffic_bytes_per_token,
    loss_traffic_bytes_per_token,
    optimizer_step_bytes_per_param,
)
from gpuplan.strategy import Layout
from gpuplan.workload.job import TrainingJob
from gpuplan.workload.model import ModelSpec

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class LayoutTerms:
    """Per layout (arrays that broadcast like a :class:`~gpuplan.strategy.Layout`): the
    framework code, ``tp pp cp vpp`` as floats, the micro-batch's ``tokens`` per rank, the
    layers on the loaded stage and their share of the model; FLOPs of one micro-batch on one
    rank (the layers' linears, the head, the attention core, before dividing by a rate); the
    HBM bytes of its memory-bound ops; kernels per layer and their floor (``gaps``); the
    parallel groups and the bytes each collective moves; the trained parameters on the stage,
    the ZeRO shard and the gradient bytes per parameter; the schedule's micro-batches; and the
    model and hardware FLOPs per token (MFU and HFU numerators)."""

    codes: IntArray
    tp: FloatArray
    pp: FloatArray
    cp: FloatArray
    vpp: FloatArray
    tokens: FloatArray
    layers_on_stage: FloatArray
    layer_share: FloatArray
    layer_matmul_flops: FloatArray
    head_matmul_flops: FloatArray
    attention_core_flops: FloatArray
    memory_bound_bytes: FloatArray
    forward_passes: FloatArray
    kernels: FloatArray
    gaps: FloatArray
    groups: dict[str, ParallelGroup]
    activation_bytes: FloatArray
    tp_collectives: FloatArray
    kv_bytes: FloatArray
    send_bytes: FloatArray
    overlapped_sends: npt.NDArray[np.bool_]
    stage_params: FloatArray
    shard: FloatArray
    reduce_bytes_per_param: FloatArray
    optimizer_bytes_per_param: FloatArray
    forward_share: FloatArray
    micro_batches: FloatArray
    bubble_micro_batches: FloatArray
    overlaps_parameter_gather: npt.NDArray[np.bool_]
    syncs_by_broadcast: npt.NDArray[np.bool_]
    pipelines_summed_gradient_scatter: npt.NDArray[np.bool_]
    moe_layers: FloatArray
    model_flops: FloatArray
    hardware_flops: FloatArray


GROUPS = ("tp", "cp", "dp", "dp_cp", "ep", "expert_dp", "pp")
"""The parallel groups of :func:`~gpuplan.estimate.comm.parallel_groups`, in that order; the
hybrid-sharding groups follow from ``dp_cp`` and ``shard`` (:func:`~gpuplan.estimate.comm.
hybrid_shard_groups`)."""
FLAG_FIELDS = (
    "overlapped_sends",
    "overlaps_parameter_gather",
    "syncs_by_broadcast",
    "pipelines_summed_gradient_scatter",
)
FLOAT_FIELDS = tuple(
    field.name
    for field in fields(LayoutTerms)
    if field.name not in ("codes", "groups", *FLAG_FIELDS)
)


@dataclass(frozen=True)
class PackedTerms:
    """The :class:`LayoutTerms` of many layouts as three matrices with one row per field
    (:data:`FLOAT_FIELDS`; the framework codes and each group's size and stride;
    :data:`FLAG_FIELDS`) and one column per layout, so that selecting or joining layouts costs
    one operation per matrix whatever the number of fields."""

    floats: FloatArray
    integers: IntArray
    flags: npt.NDArray[np.bool_]

    def __len__(self) -> int:
        return int(self.floats.shape[1])

    def take(self, rows: npt.NDArray[np.bool_] | IntArray | slice) -> PackedTerms:
        """The terms of the layouts ``rows`` selects."""
        return PackedTerms(self.floats[:, rows], self.integers[:, rows], self.flags[:, rows])

    @staticmethod
    def concatenate(parts: Sequence[PackedTerms]) -> PackedTerms:
        """The terms of several sets of layouts, one after the other."""
        if len(parts) == 1:
            return parts[0]
        return PackedTerms(
            np.concatenate([part.floats for part in parts], axis=1),
            np.concatenate([part.integers for part in parts], axis=1),
            np.concatenate([part.flags for part in parts], axis=1),
        )

    def unpack(self) -> LayoutTerms:
        """The terms as :class:`LayoutTerms`, each field a row of the matrices."""
        groups = {
            name: ParallelGroup(
                size=self.integers[1 + 2 * index], stride=self.integers[2 + 2 * index]
            )
            for index, name in enumerate(GROUPS)
        }
        return LayoutTerms(
            codes=self.integers[0],
            groups=groups,
            **{name: self.floats[index] for index, name in enumerate(FLOAT_FIELDS)},
            **{name: self.flags[index] for index, name in enumerate(FLAG_FIELDS)},
        )


def pack(terms: LayoutTerms) -> PackedTerms:
    """:class:`PackedTerms` of one-dimensional ``terms`` (every field over the same layouts)."""
    if set(terms.groups) != set(GROUPS):
        raise ValueError(f"layout terms: expected the groups {', '.join(GROUPS)}")
    integers = [terms.codes]
    for name in GROUPS:
        integers += [terms.groups[name].size, terms.groups[name].stride]
    floats = [getattr(terms, name) for name in FLOAT_FIELDS]
    flags = [getattr(terms, name) for name in FLAG_FIELDS]
    for values, dtype in ((floats, np.float64), (integers, np.int64), (flags, np.bool_)):
        if any(np.asarray(value).dtype != dtype for value in values):
            raise TypeError(f"layout terms: expected {np.dtype(dtype).name} fields")
    return PackedTerms(np.stack(floats), np.stack(integers), np.stack(flags))


def layout_terms(job: TrainingJob, layout: Layout) -> LayoutTerms:
    """:class:`LayoutTerms` of ``job`` on ``layout`` (``time`` module docstring for each)."""
    model = job.model
    codes = resolve_framework_codes(job.framework, layout.tp, layout.pp, layout.zero)
    profiles = job_profiles(job)
    tp, pp, cp = layout.tp.astype(float), layout.pp.astype(float), layout.cp.astype(float)
    vpp = layout.vpp.astype(float)
    tokens = (job.seq_len * layout.micro_batch / cp).astype(float)
    layers_on_stage = np.ceil(model.num_layers / pp)
    layer_share = layers_on_stage / model.num_layers

    flops = training_flops_per_token(job, recompute=layout.recompute)
    hardware_parts = {name: flops.parts[name] + flops.recompute_parts[name] for name in flops.parts}
    per_op_policy = (layout.recompute == RECOMPUTE_SELECTIVE) & (
        profile_values(codes, "selective_every_other_matmul", profiles) > 0
    )
    hardware_parts["attention_core"] = np.where(
        per_op_policy, flops.parts["attention_core"], hardware_parts["attention_core"]
    )
    hardware_parts["attention_projections"] = hardware_parts["attention_projections"] + np.where(
        per_op_policy, per_op_recompute_flops_per_token(model), 0.0
    )
    linear_per_token = (
        hardware_parts["attention_projections"]
        + hardware_parts["dense_mlp"]
        + hardware_parts["experts"] * job.moe.load_imbalance
        + hardware_parts["adapters"]
    )

    every_code = np.arange(len(FRAMEWORK_CODES))
    fused_by_code = (profile_values(every_code, "fused_kernels", profiles) > 0) | (
        job.compile or job.fused_kernels
    )
    fused = fused_by_code[codes]
    forward_traffic, backward_traffic = layer_traffic_bytes_per_token(
        model, fused, tp, layout.sequence_parallel
    )
    forward_passes = np.where(layout.recompute == RECOMPUTE_FULL, 2.0, 1.0)
    loss_by_code = loss_traffic_bytes_per_token(
        model,
        fused_by_code,
        1.0,
        profile_values(every_code, "megatron_vocab_parallel_loss", profiles) > 0,
        job.fused_loss,
    )
    loss_traffic = loss_by_code[codes] / tp
    kernels = np.where(fused, FUSED_KERNELS_PER_LAYER, EAGER_KERNELS_PER_LAYER) * (
        1.0 + (forward_passes - 1.0) / 3.0
    )
    activation_bytes = tokens * model.hidden_size * BF16
    forward_share = np.where(layout.recompute == RECOMPUTE_FULL, 0.25, 1.0 / 3.0)
    return LayoutTerms(
        codes=codes,
        tp=tp,
        pp=pp,
        cp=cp,
        vpp=vpp,
        tokens=tokens,
        layers_on_stage=layers_on_stage,
        layer_share=layer_share,
        layer_matmul_flops=tokens * linear_per_token * layer_share / tp,
        head_matmul_flops=tokens * hardware_parts["head"] / tp,
        attention_core_flops=tokens * hardware_parts["attention_core"] * layer_share / tp,
        memory_bound_bytes=(
            tokens * layers_on_stage * (forward_passes * forward_traffic + backward_traffic)
            + tokens * loss_traffic
        ),
        forward_passes=forward_passes,
        kernels=kernels,
        gaps=layers_on_stage * kernels * KERNEL_GAP_SECONDS,
        groups={name: group for name, group in parallel_groups(layout).items() if name in GROUPS},
        activation_bytes=activation_bytes,
        tp_collectives=tensor_parallel_collectives(layout, per_op_policy),
        kv_bytes=tokens * 2 * model.kv_width * BF16 / tp,
        send_bytes=activation_bytes / np.where(layout.sequence_parallel, tp, 1.0),
        overlapped_sends=(
            (profile_values(codes, "overlaps_pipeline_sends", profiles) > 0) & (layout.vpp > 1)
        )
        | layout.dualpipe,
        stage_params=stage_trained_params(job, layout),
        shard=layout.shard.astype(float),
        reduce_bytes_per_param=profile_values(codes, "gradient_reduce_bytes", profiles),
        optimizer_bytes_per_param=np.array(
            [optimizer_step_bytes_per_param(job, profile) for profile in profiles]
        )[codes],
        forward_share=forward_share,
        micro_batches=layout.micro_batches.astype(float),
        bubble_micro_batches=bubble_micro_batches(layout, forward_share),
        overlaps_parameter_gather=profile_values(codes, "overlaps_parameter_gather", profiles) > 0,
        syncs_by_broadcast=profile_values(codes, "syncs_by_broadcast", profiles) > 0,
        pipelines_summed_gradient_scatter=(
            profile_values(codes, "pipelines_summed_gradient_scatter", profiles) > 0
        ),
        moe_layers=layers_on_stage * (model.num_moe_layers / model.num_layers),
        model_flops=flops.model,
        hardware_flops=flops.hardware,
    )


def tensor_parallel_collectives(layout: Layout, per_op_policy: npt.NDArray[np.bool_]) -> FloatArray:
    """Tensor-parallel all-reduces (or all-gather + reduce-scatter pairs under sequence
    parallelism, the same bytes) per layer and micro-batch: two in the forward pass and two in
    the backward (Megatron's ``f``/``g`` pairs; Korthikanti et al. 2022, section 4.2.2); six
    with full recompute, whose forward runs again. torchtitan's per-op selective checkpointing
    saves the reduce-scatter outputs but not the all-gathers (``_op_sac_save_list`` in
    ``torchtitan/models/llama3/infra/parallelize.py`` lists ``reduce_scatter_tensor``, no
    all-gather), so its backward gathers the attention and MLP inputs again to recompute their
    matmuls: one all-reduce's bytes more, five; without sequence parallelism the replicated
    outputs are all-reduced again, six."""
    per_op = np.where(layout.sequence_parallel, 5.0, 6.0)
    return np.asarray(
        np.where(layout.recompute == RECOMPUTE_FULL, 6.0, np.where(per_op_policy, per_op, 4.0)),
        dtype=float,
    )


def per_op_recompute_flops_per_token(model: ModelSpec) -> float:
    """FLOPs torchtitan's per-op selective recompute runs again: it keeps every other matmul's
    output (wq, wv, w1, w2) and recomputes the forward of the others (wk, wo, w3) in backward
    (``torchtitan/models/llama3/infra/parallelize.py``, ``_save_list``)."""
    width = (
        model.moe_intermediate_size * model.num_experts_per_token
        if model.is_moe
        else model.intermediate_size
    )
    recomputed = model.hidden_size * (
        model.kv_width + model.q_width + (width if model.gated_mlp else 0)
    )
    return 2.0 * model.num_layers * recomputed


def bubble_micro_batches(layout: Layout, forward_share: FloatArray) -> FloatArray:
    """The pipeline bubble in micro-batches of one stage's compute ``t = F + B``: 1F1B's
    ``(pp - 1)``, interleaved ``(pp - 1) / vpp`` (Narayanan et al. 2021, section 2.2); DualPipe's
    ``(pp/2 - 1)(F&B + B - 3W)`` (DeepSeek-V3 report, Table 2; deepseek-ai/DualPipe README)
    with the two overlapped chunks ``F&B = t``, the full backward ``B = (1 - f) t`` and the
    weight-gradient backward ``W = f t``, as many GEMM FLOPs as the forward ``F = f t``:
    ``(pp/2 - 1)(2 - 4 f)``: with 16 stages and ``f = 1/3``, 4.7 micro-batches against 1F1B's
    15."""
    pp, vpp = layout.pp.astype(float), layout.vpp.astype(float)
    one_f_one_b = (pp - 1.0) / vpp
    dualpipe = (pp / 2.0 - 1.0) * (2.0 - 4.0 * forward_share)
    if np.any(layout.dualpipe):
        one_f_one_b = np.where(layout.dualpipe, dualpipe, one_f_one_b)
    return np.asarray(np.where(layout.pp > 1, one_f_one_b, 0.0), dtype=float)


def stage_trained_params(job: TrainingJob, layout: Layout) -> FloatArray:
    """Trained parameters on one rank of a pipeline stage: what its gradients hold (twice a
    stage's under DualPipe, whose ranks each hold two stages, ``i`` and ``pp - 1 - i``)."""
    model = job.model
    layer_share = np.ceil(model.num_layers / layout.pp) / model.num_layers
    stages_held = np.where(layout.dualpipe, 2.0, 1.0) if np.any(layout.dualpipe) else 1.0
    if job.is_adapter:
        adapters = model.num_layers * lora_params_per_layer(model, job.lora.rank, job.lora.targets)
        return np.asarray(adapters * layer_share / layout.tp * stages_held, dtype=float)
    breakdown = model.parameter_breakdown()
    dense = (breakdown["attention"] + breakdown["mlp"] + breakdown["norms"]) / layout.tp
    experts = breakdown["experts"] / (layout.tp * layout.ep)
    edge = (breakdown["embeddings"] + breakdown["head"]) / layout.tp / layout.pp
    trained = (dense + experts) * layer_share + edge
    if job.method == "freeze":
        assert job.trainable_layers is not None
        trained = trained * job.trainable_layers / model.num_layers
    return np.asarray(trained * stages_held, dtype=float)
