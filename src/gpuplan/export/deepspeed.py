"""DeepSpeed config (JSON), for ``deepspeed --hostfile ... train.py --deepspeed ds_config.json``.

Keys follow DeepSpeed's configuration reference (deepspeed.ai/docs/config-json, source
github.com/deepspeedai/DeepSpeed ``deepspeed/runtime/config.py`` and
``deepspeed/runtime/zero/config.py``). DeepSpeed's engine shards only over data parallelism:
tensor, pipeline, context and expert parallelism live in model code (Megatron-DeepSpeed,
``PipelineModule``, ``deepspeed.moe``), so a plan with tp, pp, cp or ep above 1 is refused with
a pointer to the megatron or torchtitan export. JSON has no comments; what the user must add
is in ``ExportedFile.notes``.
"""

from __future__ import annotations

import json
from typing import Any

from gpuplan.export.layout import (
    ExportedFile,
    ExportError,
    ExportLayout,
    require_data_parallel_only,
)


def _check(layout: ExportLayout) -> None:
    require_data_parallel_only(layout, "a DeepSpeed config", "megatron or torchtitan")
    if layout.offload != "none" and layout.zero == 0:
        raise ExportError.of("error.export_deepspeed_offload")
    if layout.offload == "optimizer+params" and layout.zero < 3:
        raise ExportError.of("error.export_param_offload", zero=layout.zero)


def _zero(layout: ExportLayout) -> dict[str, Any]:
    section: dict[str, Any] = {
        "stage": layout.zero,
        "overlap_comm": True,
        "contiguous_gradients": True,
    }
    if layout.offload != "none":
        section["offload_optimizer"] = {"device": "cpu", "pin_memory": True}
    if layout.offload == "optimizer+params":
        section["offload_param"] = {"device": "cpu", "pin_memory": True}
    if layout.zero >= 3:
        section["stage3_gather_16bit_weights_on_model_save"] = True
    return section


def render_deepspeed(layout: ExportLayout) -> ExportedFile:
    _check(layout)
    job = layout.job
    notes = [
        layout.summary(),
        *layout.data_notes(),
        f"gradient_accumulation_steps = {job.global_batch} / ({layout.micro_batch} x {layout.dp})",
        f"train for ceil({job.tokens} / ({job.global_batch} x {job.seq_len})) = "
        f"{layout.steps} optimizer steps (the training script sets this)",
        f"launch: deepspeed --num_nodes {layout.nodes} --num_gpus {layout.gpus_per_node} "
        "--hostfile HOSTFILE train.py --deepspeed ds_config.json",
        "the training script supplies the model, tokenizer, dataset and checkpoint directory",
    ]
    config: dict[str, Any] = {
        "train_batch_size": job.global_batch,
        "train_micro_batch_size_per_gpu": layout.micro_batch,
        "gradient_accumulation_steps": layout.gradient_accumulation,
        "gradient_clipping": 1.0,
        "steps_per_print": 10,
        "zero_optimization": _zero(layout),
        "bf16": {"enabled": job.precision in ("bf16", "bf16-pure", "fp8")},
        "fp16": {"enabled": job.precision == "fp16"},
        "scheduler": {
            "type": "WarmupCosineLR",
            "params": {
                "total_num_steps": layout.steps,
                "warmup_num_steps": layout.schedule.warmup_steps,
                "cos_min_ratio": round(layout.schedule.minimum / layout.schedule.peak, 6),
            },
        },
    }
    if job.optimizer == "adamw":
        config["optimizer"] = {
            "type": "AdamW",
            "params": {"lr": float(f"{layout.schedule.peak:.3g}"), "weight_decay": 0.1},
        }
    notes.append(layout.schedule.comment())
    if job.precision == "fp16":
        config["fp16"].update(loss_scale=0, initial_scale_power=16)
    if job.precision == "fp8":
        notes.append("DeepSpeed has no fp8 switch: wrap linear layers with Transformer Engine")
    if job.precision == "bf16-pure":
        notes.append("DeepSpeed keeps fp32 master weights in its bf16 mode")
    if layout.recompute != "none":
        config["activation_checkpointing"] = {
            "partition_activations": False,
            "contiguous_memory_optimization": False,
            "cpu_checkpointing": False,
        }
        notes.append(
            "turn recompute on in the model (model.gradient_checkpointing_enable() or "
            "deepspeed.checkpointing.checkpoint); DeepSpeed recomputes whole layers"
            + (
                ", more than the selective recompute planned"
                if layout.recompute == "selective"
                else ""
            )
        )
    if job.method in ("lora", "qlora"):
        notes.append(
            f"{job.method}: add the adapters with PEFT (rank {job.lora.rank}, "
            f"alpha {job.lora.alpha:g}, targets {','.join(job.lora.targets)})"
        )
    elif job.method == "freeze":
        notes.append(f"freeze: train only the last {job.trainable_layers} layers")
    return ExportedFile("ds_config.json", json.dumps(config, indent=2) + "\n", tuple(notes))
