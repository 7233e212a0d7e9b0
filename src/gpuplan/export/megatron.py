"""Megatron-LM launch script: ``torchrun ... pretrain_gpt.py`` with the plan's arguments.

Argument names follow Megatron-LM's ``megatron/training/arguments.py``
(github.com/NVIDIA/Megatron-LM) and its Llama example
(``examples/llama/train_llama3_8b_h100_fp8.sh``). ZeRO maps to Megatron's own sharding:
stage 1 and 2 to the distributed optimizer (optimizer states sharded, gradients
reduce-scattered), stage 3 to Megatron-FSDP (``--use-megatron-fsdp
--data-parallel-sharding-strategy optim_grads_params``), which does not combine with pipeline
parallelism. Optimizer offload is ``--optimizer-cpu-offload``; Megatron cannot offload
parameters.

The script reads ``NNODES``, ``NODE_RANK``, ``MASTER_ADDR`` and ``MASTER_PORT`` from the
environment (defaults: the plan's node count, 0, localhost, 6000), so the same file runs on
every node, under SkyPilot or Slurm.
"""

from __future__ import annotations

import shlex

from gpuplan.estimate.frameworks import PRESETS
from gpuplan.export.layout import (
    ExportedFile,
    ExportError,
    ExportLayout,
    comment_block,
    require_full_training,
)
from gpuplan.export.megatron_model import Arguments, model_arguments

MEGATRON_RELEASE = "core_v0.16.1"
"""The Megatron-LM release whose argument parser every flag of the script is checked against
(tests/export/data/megatron_flags_core_v0.16.1.txt, written by scripts/megatron_flags.py)."""


MEGATRON_FP8_RECIPES = {
    "delayed": "delayed",
    "tensorwise": "tensorwise",
    "mx": "mxfp8",
    "blockwise": "blockwise",
}
"""gpuplan's fp8 recipes as Megatron-Core's ``fp8_recipe`` names them
(``megatron/core/transformer/transformer_config.py``); rowwise scaling has none."""


def _check(layout: ExportLayout) -> None:
    require_full_training(layout, "megatron", "the accelerate or deepspeed export with PEFT")
    if layout.zero >= 3 and layout.pp > 1:
        raise ExportError.of("error.export_megatron_fsdp_pp")
    if layout.offload == "optimizer+params":
        raise ExportError.of("error.export_megatron_offload")


def pipeline_layout(layout: ExportLayout) -> str:
    """Megatron-LM's ``--pipeline-model-parallel-layout`` for layers that do not split evenly
    over the ``pp * vpp`` (virtual) stages: ``E`` (embedding) opens the first stage, ``L`` (the
    output layer and loss) closes the last, each ``t`` is a decoder layer and ``|`` ends a
    stage. ``L mod stages`` stages hold one layer more than the others; the lighter ones are
    the first and the last, which also carry the embedding and the loss (Megatron-LM's
    ``PipelineParallelLayerLayout``, ``--account-for-embedding-in-pipeline-split``)."""
    stages = layout.pp * layout.vpp
    base, extra = divmod(layout.model.num_layers, stages)
    light = stages - extra
    light_first = (light + 1) // 2
    counts = [base] * light_first + [base + 1] * extra + [base] * (light - light_first)
    cells = ["t" * count for count in counts]
    cells[0] = "E" + cells[0]
    cells[-1] = cells[-1] + "L"
    return "|".join(cells)


def _parallel_arguments(layout: ExportLayout) -> Arguments:
    arguments: Arguments = [
        ("--tensor-model-parallel-size", str(layout.tp)),
        ("--pipeline-model-parallel-size", str(layout.pp)),
        ("--context-parallel-size", str(layout.cp)),
        ("--expert-model-parallel-size", str(layout.ep)),
    ]
    stages = layout.pp * layout.vpp
    if layout.model.num_layers % stages:
        arguments.append(("--pipeline-model-parallel-layout", pipeline_layout(layout)))
    elif layout.vpp > 1:
        per_stage = layout.model.num_layers // stages
        arguments.append(("--num-layers-per-virtual-pipeline-stage", str(per_stage)))
    if layout.tp > 1 and layout.sequence_parallel:
        arguments.append(("--sequence-parallel",))
    if layout.zero >= 1:
        arguments += [
            ("--use-distributed-optimizer",),
            ("--overlap-grad-reduce",),
            ("--overlap-param-gather",),
        ]
    if layout.zero >= 3:
        arguments += [
            ("--use-megatron-fsdp",),
            ("--data-parallel-sharding-strategy", "optim_grads_params"),
            ("--ckpt-format", "fsdp_dtensor"),
        ]
    if layout.offload == "optimizer":
        arguments += [
            ("--optimizer-cpu-offload",),
            ("--optimizer-offload-fraction", "1.0"),
            ("--use-precision-aware-optimizer",),
        ]
    return arguments


def _training_arguments(layout: ExportLayout) -> tuple[Arguments, list[str]]:
    job = layout.job
    notes: list[str] = []
    arguments: Arguments = [
        ("--micro-batch-size", str(layout.micro_batch)),
        ("--global-batch-size", str(job.global_batch)),
        ("--train-iters", str(layout.steps)),
        ("--lr", "${LR}"),
        ("--min-lr", f"{layout.schedule.minimum:.3g}"),
        ("--lr-warmup-iters", str(layout.schedule.warmup_steps)),
        ("--lr-decay-style", layout.schedule.decay),
        ("--clip-grad", "1.0"),
        ("--weight-decay", "0.1"),
    ]
    if layout.recompute == "selective":
        arguments.append(("--recompute-granularity", "selective"))
    elif layout.recompute == "full":
        arguments += [
            ("--recompute-granularity", "full"),
            ("--recompute-method", "uniform"),
            ("--recompute-num-layers", "1"),
        ]
    if job.precision in ("bf16", "bf16-pure", "fp8"):
        arguments.append(("--bf16",))
    elif job.precision == "fp16":
        arguments.append(("--fp16",))
    if job.precision == "fp8":
        arguments += [("--fp8-format", "hybrid"), ("--transformer-impl", "transformer_engine")]
        recipe = PRESETS["megatron"].fp8_recipe_for(job.fp8_recipe)
        if recipe in MEGATRON_FP8_RECIPES:
            arguments.append(("--fp8-recipe", MEGATRON_FP8_RECIPES[recipe]))
        else:
            notes.append(f"fp8_recipe {recipe}: Megatron-LM has no such recipe; set --fp8-recipe")
        if job.fp8_all_gather and layout.zero >= 1:
            arguments.append(("--fp8-param-gather",))
    if job.precision == "bf16-pure":
        notes.append("Megatron-LM keeps fp32 main weights; bf16-pure is trained as bf16 mixed")
    if job.optimizer == "sgd":
        arguments.append(("--optimizer", "sgd"))
    else:
        arguments.append(("--optimizer", "adam"))
        if job.optimizer != "adamw":
            notes.append(f"optimizer {job.optimizer}: Megatron-LM runs AdamW (--optimizer adam)")
    if job.fused_loss:
        arguments.append(("--cross-entropy-loss-fusion",))
    return arguments, notes


def _array(name: str, arguments: Arguments) -> str:
    lines = []
    for argument in arguments:
        flag, *values = argument
        rendered = [value if value.startswith("${") else shlex.quote(value) for value in values]
        rendered = [f'"{value}"' if value.startswith("${") else value for value in rendered]
        lines.append("    " + " ".join([flag, *rendered]))
    return f"{name}=(\n" + "\n".join(lines) + "\n)\n"


def render_megatron(layout: ExportLayout) -> ExportedFile:
    _check(layout)
    model_flags, model_notes = model_arguments(layout.model, layout.job.seq_len, layout.tp)
    training_arguments, training_notes = _training_arguments(layout)
    notes = [
        *model_notes,
        *training_notes,
        "set DATA_PATH (Megatron .bin/.idx prefix), MEGATRON_LM (checkout), LR, CHECKPOINT_DIR",
        *layout.data_notes(),
    ]
    tokenizer = layout.hf_repo or "PATH_OR_HF_REPO_OF_TOKENIZER"
    data_arguments: Arguments = [
        ("--data-path", "${DATA_PATH}"),
        ("--split", "99,1,0"),
        ("--tokenizer-type", "HuggingFaceTokenizer"),
        ("--tokenizer-model", "${TOKENIZER_MODEL}"),
        ("--save", "${CHECKPOINT_DIR}"),
        ("--load", "${CHECKPOINT_DIR}"),
        ("--save-interval", "500"),
        ("--log-interval", "10"),
        ("--eval-interval", "1000"),
        ("--eval-iters", "10"),
    ]
    header = comment_block(
        [
            f"Megatron-LM launch script written by gpuplan, for Megatron-LM {MEGATRON_RELEASE}",
            layout.summary(),
            f"--train-iters = ceil({layout.job.tokens} tokens / "
            f"({layout.job.global_batch} x {layout.job.seq_len}))",
            f"run on each of the {layout.nodes} node(s) with NODE_RANK and MASTER_ADDR set",
            layout.schedule.comment(),
            *notes,
        ]
    )
    environment = "\n".join(
        [
            f"NNODES=${{NNODES:-{layout.nodes}}}",
            "NODE_RANK=${NODE_RANK:-0}",
            "MASTER_ADDR=${MASTER_ADDR:-localhost}",
            "MASTER_PORT=${MASTER_PORT:-6000}",
            f"GPUS_PER_NODE={layout.gpus_per_node}",
            f'MEGATRON_LM=${{MEGATRON_LM:?"set MEGATRON_LM to a Megatron-LM {MEGATRON_RELEASE} checkout"}}',
            'DATA_PATH=${DATA_PATH:?"set DATA_PATH to a preprocessed dataset prefix"}',
            f"TOKENIZER_MODEL=${{TOKENIZER_MODEL:-{shlex.quote(tokenizer)}}}",
            "CHECKPOINT_DIR=${CHECKPOINT_DIR:-./checkpoints}",
            f"LR=${{LR:-{layout.schedule.peak:.3g}}}",
            "export CUDA_DEVICE_MAX_CONNECTIONS=1",
        ]
    )
    distributed: Arguments = [
        ("--nnodes", "${NNODES}"),
        ("--nproc-per-node", "${GPUS_PER_NODE}"),
        ("--node-rank", "${NODE_RANK}"),
        ("--master-addr", "${MASTER_ADDR}"),
        ("--master-port", "${MASTER_PORT}"),
    ]
    text = (
        "#!/usr/bin/env bash\n"
        + header
        + "set -euo pipefail\n\n"
        + environment
        + "\n\n"
        + _array("DISTRIBUTED_ARGS", distributed)
        + _array("MODEL_ARGS", model_flags)
        + _array("PARALLEL_ARGS", _parallel_arguments(layout))
        + _array("TRAINING_ARGS", training_arguments)
        + _array("DATA_ARGS", data_arguments)
        + '\ntorchrun "${DISTRIBUTED_ARGS[@]}" "${MEGATRON_LM}/pretrain_gpt.py" \\\n'
        + '    "${MODEL_ARGS[@]}" "${PARALLEL_ARGS[@]}" "${TRAINING_ARGS[@]}" "${DATA_ARGS[@]}"\n'
    )
    return ExportedFile("megatron_pretrain_gpt.sh", text, tuple(notes))
