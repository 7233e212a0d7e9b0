"""torchtitan train config (TOML), for ``torchrun -m torchtitan.train --job.config_file``.

Keys follow torchtitan's job config (github.com/pytorch/torchtitan,
``torchtitan/config/job_config.py``) and its TOML presets
(``torchtitan/models/llama3/train_configs/llama3_70b.toml``) as of the v0.2 line:
``[training] local_batch_size/global_batch_size``, ``[checkpoint] enable``, ``[compile]
enable/components`` and fp8 through ``converters = ["quantize.linear.float8"]`` with a
``[quantize.linear.float8]`` table (``recipe_name``, the FSDP fp8 all-gather), or
``quantize.linear.mx`` for MXFP8.

Mapping of the plan: ``dp`` is FSDP sharding (``data_parallel_shard_degree``) when ZeRO >= 1,
plain replication (``data_parallel_replicate_degree``) when ZeRO is 0; ZeRO 1 and 2 keep the
parameters gathered after the forward pass (``fsdp_reshard_after_forward = "never"``), ZeRO 3
reshards them. Without pipelining, ``local_batch_size`` is the micro batch and torchtitan
accumulates gradients up to ``global_batch_size``; with pipelining, ``local_batch_size`` is the
rank's share of the global batch, cut into ``pipeline_parallel_microbatch_size`` pieces.
"""

from __future__ import annotations

from gpuplan.estimate.frameworks import PRESETS
from gpuplan.export.layout import (
    ExportedFile,
    ExportError,
    ExportLayout,
    comment_block,
    require_full_training,
)
from gpuplan.export.toml_text import TomlValue, toml_document
from gpuplan.workload.job import TrainingJob
from gpuplan.workload.model import ModelSpec

TORCHTITAN_RELEASE = "v0.2.2"
"""The torchtitan release the TOML is written for and checked against (its job config loader,
tests/export/test_launchers.py): the last to read ``--job.config_file`` TOML; 0.3.0 builds
configs from Python registries (``--module``/``--config``)."""

FLAVORS: dict[tuple[str, int, int, int, int, int], tuple[str, str]] = {
    ("llama", 32, 4096, 32, 8, 14336): ("llama3", "8B"),
    ("llama", 80, 8192, 64, 8, 28672): ("llama3", "70B"),
    ("llama", 126, 16384, 128, 8, 53248): ("llama3", "405B"),
    ("qwen3", 28, 1024, 16, 8, 3072): ("qwen3", "0.6B"),
    ("qwen3", 28, 2048, 16, 8, 6144): ("qwen3", "1.7B"),
    ("qwen3", 36, 2560, 32, 8, 9728): ("qwen3", "4B"),
    ("qwen3", 36, 4096, 32, 8, 12288): ("qwen3", "8B"),
    ("qwen3", 40, 5120, 40, 8, 17408): ("qwen3", "14B"),
    ("qwen3", 64, 5120, 64, 8, 25600): ("qwen3", "32B"),
}
"""(family, layers, hidden, heads, kv heads, intermediate) -> torchtitan (name, flavor), from
``torchtitan/models/llama3/__init__.py`` (``llama3_configs``) and
``torchtitan/models/qwen3/__init__.py``. Llama 3, 3.1 and 3.3 share these shapes; the llama3
entries also need the 128,256-token vocabulary."""

LLAMA3_VOCAB = 128256


def torchtitan_flavor(model: ModelSpec) -> tuple[str, str] | None:
    """The torchtitan (model name, flavor) whose shapes equal ``model``'s, if any."""
    key = (
        model.family,
        model.num_layers,
        model.hidden_size,
        model.num_attention_heads,
        model.num_kv_heads,
        model.intermediate_size,
    )
    match = FLAVORS.get(key)
    if match and match[0] == "llama3" and model.vocab_size != LLAMA3_VOCAB:
        return None
    return match


def _check(layout: ExportLayout) -> None:
    require_full_training(layout, "torchtitan", "the accelerate or deepspeed export with PEFT")
    if layout.job.precision == "fp16":
        raise ExportError.of("error.export_torchtitan_fp16")
    if layout.ep > 1 and not layout.model.is_moe:
        raise ExportError.of("error.export_ep_dense", ep=layout.ep)


def _parallelism(layout: ExportLayout) -> dict[str, TomlValue]:
    sharded = layout.zero >= 1
    table: dict[str, TomlValue] = {
        "data_parallel_replicate_degree": 1 if sharded else layout.dp,
        "data_parallel_shard_degree": layout.dp if sharded else 1,
        "fsdp_reshard_after_forward": "default" if layout.zero >= 3 else "never",
        "tensor_parallel_degree": layout.tp,
        "pipeline_parallel_degree": layout.pp,
        "context_parallel_degree": layout.cp,
    }
    if layout.pp > 1:
        table["pipeline_parallel_schedule"] = "Interleaved1F1B" if layout.vpp > 1 else "1F1B"
        table["pipeline_parallel_microbatch_size"] = layout.micro_batch
        stages = layout.pp * layout.vpp
        if layout.model.num_layers % stages == 0:
            table["pipeline_parallel_layers_per_stage"] = layout.model.num_layers // stages
    if layout.model.is_moe:
        table["expert_parallel_degree"] = layout.ep
    return table


def _float8_tables(
    job: TrainingJob, layout: ExportLayout, recipe: str, notes: list[str]
) -> dict[str, dict[str, TomlValue]]:
    """The ``[quantize.linear.*]`` table of the job's fp8 recipe: torchao's float8 linears with
    ``recipe_name`` tensorwise or rowwise and the FSDP fp8 all-gather the job asks for, or its
    MX linears; torchtitan has no delayed or blockwise scaling and runs tensorwise instead."""
    if recipe == "mx":
        return {"quantize.linear.mx": {"recipe_name": "mxfp8_cublas", "filter_fqns": ["output"]}}
    if recipe not in ("tensorwise", "rowwise"):
        notes.append(f"fp8_recipe {recipe}: torchtitan has none; the config runs tensorwise")
        recipe = "tensorwise"
    gather = job.fp8_all_gather and layout.zero >= 1 and recipe == "tensorwise"
    if job.fp8_all_gather and not gather:
        notes.append("fp8_all_gather: torchao gathers fp8 weights under tensorwise FSDP only")
    return {
        "quantize.linear.float8": {
            "recipe_name": recipe,
            "enable_fsdp_float8_all_gather": gather,
            "precompute_float8_dynamic_scale_for_fsdp": gather,
            "filter_fqns": ["output"],
        }
    }


def render_torchtitan(layout: ExportLayout) -> ExportedFile:
    _check(layout)
    job = layout.job
    notes: list[str] = layout.data_notes()
    flavor = torchtitan_flavor(layout.model)
    model_table: dict[str, TomlValue] = {}
    if flavor:
        model_table.update(name=flavor[0], flavor=flavor[1])
    else:
        model_table.update(name="", flavor="")
        notes.append(
            f"no built-in torchtitan flavor has {layout.model.name}'s shapes "
            f"(layers={layout.model.num_layers}, dim={layout.model.hidden_size}, "
            f"heads={layout.model.num_attention_heads}, kv_heads={layout.model.num_kv_heads}, "
            f"ffn={layout.model.intermediate_size}, vocab={layout.model.vocab_size}): "
            "register one and set [model] name and flavor"
        )
    if layout.hf_repo:
        model_table["hf_assets_path"] = f"./assets/hf/{layout.hf_repo.split('/')[-1]}"
        notes.append(
            "download the tokenizer: python scripts/download_hf_assets.py "
            f"--repo_id {layout.hf_repo} --assets tokenizer"
        )
    else:
        model_table["hf_assets_path"] = "./assets/hf/MODEL"
        notes.append("set [model] hf_assets_path to the folder holding the tokenizer")
    recipe = PRESETS["torchtitan"].fp8_recipe_for(job.fp8_recipe)
    if job.precision == "fp8":
        model_table["converters"] = [
            "quantize.linear.mx" if recipe == "mx" else "quantize.linear.float8"
        ]

    training: dict[str, TomlValue] = {
        "local_batch_size": layout.local_batch if layout.pp > 1 else layout.micro_batch,
        "global_batch_size": job.global_batch,
        "seq_len": job.seq_len,
        "steps": layout.steps,
        "max_norm": 1.0,
        "dataset": "c4",
        "mixed_precision_param": "float32" if job.precision == "fp32" else "bfloat16",
    }
    notes.append("[training] dataset is torchtitan's c4 example: set dataset and dataset_path")
    if layout.offload != "none":
        training["enable_cpu_offload"] = True
        if layout.offload == "optimizer":
            notes.append(
                "torchtitan's FSDP CPU offload moves parameters and gradients too, "
                "not only optimizer states"
            )
    if job.precision == "bf16-pure":
        notes.append("torchtitan keeps fp32 sharded parameters (FSDP mixed precision)")

    tables: dict[str, dict[str, TomlValue]] = {
        "job": {"dump_folder": "./outputs", "description": layout.summary()},
        "model": model_table,
        "training": training,
        "parallelism": _parallelism(layout),
        "checkpoint": {"enable": True, "folder": "checkpoint", "interval": 500},
        "activation_checkpoint": {"mode": layout.recompute},
        "compile": {"enable": job.compile, "components": ["model", "loss"]},
    }
    if layout.recompute == "selective":
        tables["activation_checkpoint"]["selective_ac_option"] = "op"
    schedule = layout.schedule
    if job.optimizer == "adamw":
        tables["optimizer"] = {"name": "AdamW", "lr": float(f"{schedule.peak:.3g}")}
    else:
        notes.append(f"optimizer {job.optimizer}: set [optimizer] name to a torchtitan one")
    tables["lr_scheduler"] = {
        "warmup_steps": schedule.warmup_steps,
        "decay_type": schedule.decay,
        "min_lr_factor": round(schedule.minimum / schedule.peak, 6),
    }
    notes.append(schedule.comment())
    if job.precision == "fp8":
        tables.update(_float8_tables(job, layout, recipe, notes))
        if not job.compile:
            notes.append("float8 is fast only with [compile] enable = true")
    header = comment_block(
        [
            "torchtitan train config written by gpuplan",
            layout.summary(),
            f"steps = ceil({job.tokens} tokens / ({job.global_batch} x {job.seq_len}))",
            f"launch on each of {layout.nodes} node(s): torchrun --nnodes {layout.nodes} "
            f"--nproc_per_node {layout.gpus_per_node} -m torchtitan.train "
            "--job.config_file THIS_FILE",
            *notes,
        ]
    )
    return ExportedFile("torchtitan.toml", toml_document(tables, header), tuple(notes))
