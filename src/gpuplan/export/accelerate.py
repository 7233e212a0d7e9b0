"""Accelerate config (YAML) for FSDP, for ``accelerate launch --config_file ... train.py``.

Keys follow the file ``accelerate config`` writes (github.com/huggingface/accelerate,
``src/accelerate/commands/config/cluster.py`` and ``config_args.py``; the FSDP guide
``docs/source/usage_guides/fsdp.md``). The plan's ZeRO stage picks the FSDP (version 1)
sharding strategy: 3 -> FULL_SHARD, 1 and 2 -> SHARD_GRAD_OP (FSDP has no optimizer-only
sharding, so stage 1 also shards gradients), 0 -> NO_SHARD. FSDP shards over data parallelism
only: a plan with tp, pp, cp or ep above 1 is refused with a pointer to the torchtitan or
megatron export. Micro batch and gradient accumulation belong to the training script; the
header comments carry them. FSDP wraps each decoder layer: the ``transformers`` class its
family names (``Family.hf_decoder_layer``).
"""

from __future__ import annotations

from typing import Any

from gpuplan.export.layout import (
    ExportedFile,
    ExportLayout,
    comment_block,
    require_data_parallel_only,
)
from gpuplan.export.yaml_text import yaml_document
from gpuplan.workload.families import family_named

SHARDING = {0: "NO_SHARD", 1: "SHARD_GRAD_OP", 2: "SHARD_GRAD_OP", 3: "FULL_SHARD"}
MIXED_PRECISION = {"bf16": "bf16", "bf16-pure": "bf16", "fp16": "fp16", "fp8": "fp8", "fp32": "no"}


def render_accelerate(layout: ExportLayout) -> ExportedFile:
    require_data_parallel_only(layout, "an Accelerate FSDP config", "torchtitan or megatron")
    job = layout.job
    notes = [
        f"per-device batch {layout.micro_batch}, gradient accumulation "
        f"{layout.gradient_accumulation} (global batch {job.global_batch}): set them in the script",
        f"train for {layout.steps} optimizer steps = ceil({job.tokens} / "
        f"({job.global_batch} x {job.seq_len}))",
        f"{layout.schedule.comment()} (set them in the script)",
        "on each node set machine_rank (0..num_machines-1) and main_process_ip to node 0",
        *layout.data_notes(),
        "the training script supplies the model, tokenizer, dataset and checkpoint directory",
    ]
    fsdp: dict[str, Any] = {
        "fsdp_version": 1,
        "fsdp_sharding_strategy": SHARDING[layout.zero],
        "fsdp_auto_wrap_policy": "TRANSFORMER_BASED_WRAP",
        "fsdp_backward_prefetch": "BACKWARD_PRE",
        "fsdp_forward_prefetch": False,
        "fsdp_offload_params": layout.offload != "none",
        "fsdp_activation_checkpointing": layout.recompute != "none",
        "fsdp_state_dict_type": "SHARDED_STATE_DICT",
        "fsdp_cpu_ram_efficient_loading": True,
        "fsdp_sync_module_states": True,
        "fsdp_use_orig_params": True,
    }
    layer = family_named(layout.model.family).hf_decoder_layer
    if layer:
        fsdp["fsdp_transformer_layer_cls_to_wrap"] = layer
    else:
        notes.append(f"set fsdp_transformer_layer_cls_to_wrap to {layout.model.family}'s layer")
    if layout.zero == 1:
        notes.append("FSDP SHARD_GRAD_OP shards gradients too (ZeRO-2), more than zero=1")
    if layout.offload == "optimizer":
        notes.append("FSDP CPU offload moves parameters and gradients too, not only optimizer")
    if layout.recompute == "selective":
        notes.append("FSDP activation checkpointing recomputes whole layers (full, not selective)")
    if job.precision == "bf16-pure":
        notes.append("mixed_precision bf16 keeps fp32 weights: load the model in bf16 instead")
    if job.method in ("lora", "qlora"):
        notes.append(
            f"{job.method}: add the adapters with PEFT (rank {job.lora.rank}, "
            f"alpha {job.lora.alpha:g}, targets {','.join(job.lora.targets)})"
        )
    elif job.method == "freeze":
        notes.append(f"freeze: train only the last {job.trainable_layers} layers")
    config: dict[str, Any] = {
        "compute_environment": "LOCAL_MACHINE",
        "debug": False,
        "distributed_type": "FSDP",
        "downcast_bf16": "no",
        "fsdp_config": fsdp,
        "machine_rank": 0,
        "main_process_ip": "NODE0_IP" if layout.nodes > 1 else "127.0.0.1",
        "main_process_port": 29500,
        "main_training_function": "main",
        "mixed_precision": MIXED_PRECISION[job.precision],
        "num_machines": layout.nodes,
        "num_processes": layout.count,
        "rdzv_backend": "static",
        "same_network": True,
        "tpu_env": [],
        "tpu_use_cluster": False,
        "tpu_use_sudo": False,
        "use_cpu": False,
    }
    if job.compile:
        config["dynamo_config"] = {"dynamo_backend": "INDUCTOR"}
    header = comment_block(["Accelerate FSDP config written by gpuplan", layout.summary(), *notes])
    return ExportedFile("accelerate_fsdp.yaml", yaml_document(config, header), tuple(notes))
