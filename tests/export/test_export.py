"""Launch-config exports: each file parses and carries the plan's layout."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import tomllib

import pytest
import yaml

from gpuplan.catalog import read_catalog_toml
from gpuplan.errors import InputError
from gpuplan.export import FORMATS, ExportError, export_plan, write_export
from gpuplan.scenario import parse_scenario


def _plan(**strategy):
    layout = {
        "dp": 2,
        "tp": 8,
        "pp": 4,
        "vpp": 2,
        "cp": 1,
        "ep": 1,
        "zero": 1,
        "micro_batch": 1,
        "recompute": "selective",
        "offload": "none",
        "flash_attention": True,
        "sequence_parallel": True,
        "framework": "megatron",
    }
    layout.update(strategy)
    count = layout["dp"] * layout["tp"] * layout["pp"] * layout["cp"]
    return {
        "gpu": "h100-sxm-80gb",
        "count": count,
        "nodes": max(1, count // 8),
        "strategy": layout,
        "cost": {"offer": "lambda-8xh100-sxm", "provider": "Lambda"},
    }


def _data_parallel_plan(**strategy):
    return _plan(dp=16, tp=1, pp=1, vpp=1, zero=3, micro_batch=2, framework="fsdp", **strategy)


@pytest.fixture(scope="module")
def scenario():
    return parse_scenario(
        {"model": "llama-3.1-70b", "seq_len": 8192, "global_batch": 512, "tokens": "1T"}
    )


STEPS = -(-1_000_000_000_000 // (512 * 8192))


def test_torchtitan_toml_carries_the_layout(scenario):
    exported = export_plan(_plan(), scenario, "torchtitan")
    config = tomllib.loads(exported.text)
    assert exported.filename.endswith(".toml")
    assert config["model"] == {
        "name": "llama3",
        "flavor": "70B",
        "hf_assets_path": "./assets/hf/Llama-3.1-70B",
    }
    parallelism = config["parallelism"]
    assert parallelism["tensor_parallel_degree"] == 8
    assert parallelism["pipeline_parallel_degree"] == 4
    assert parallelism["data_parallel_shard_degree"] == 2
    assert parallelism["pipeline_parallel_schedule"] == "Interleaved1F1B"
    assert parallelism["pipeline_parallel_microbatch_size"] == 1
    assert parallelism["pipeline_parallel_layers_per_stage"] == 10
    training = config["training"]
    assert training["global_batch_size"] == 512
    assert training["local_batch_size"] == 256
    assert training["seq_len"] == 8192
    assert training["steps"] == STEPS
    assert config["activation_checkpoint"]["mode"] == "selective"
    assert "8 node(s)" in exported.text


def test_torchtitan_fp8_replication_and_compile(scenario):
    fp8 = parse_scenario(
        {"model": "llama-3.1-8b", "tokens": "10B", "global_batch": 64, "precision": "fp8"}
    )
    plan = _plan(dp=8, tp=1, pp=1, vpp=1, zero=0, recompute="full")
    config = tomllib.loads(export_plan(plan, fp8, "torchtitan").text)
    assert config["model"]["flavor"] == "8B"
    assert config["model"]["converters"] == ["quantize.linear.float8"]
    assert "quantize" in config and "float8" in config["quantize"]["linear"]
    assert config["parallelism"]["data_parallel_replicate_degree"] == 8
    assert config["parallelism"]["data_parallel_shard_degree"] == 1
    assert config["training"]["local_batch_size"] == 1
    assert config["activation_checkpoint"]["mode"] == "full"
    assert config["compile"]["enable"] is False


def test_torchtitan_unknown_shape_leaves_flavor_for_the_user():
    mistral = parse_scenario({"model": "mistral-7b-v0.3", "tokens": "1B", "global_batch": 64})
    exported = export_plan(_plan(dp=8, tp=1, pp=1, vpp=1), mistral, "torchtitan")
    assert tomllib.loads(exported.text)["model"]["flavor"] == ""
    assert any("flavor" in note for note in exported.notes)


def test_megatron_script_carries_the_layout(scenario):
    exported = export_plan(_plan(), scenario, "megatron")
    text = exported.text
    for expected in (
        "--tensor-model-parallel-size 8",
        "--pipeline-model-parallel-size 4",
        "--num-layers-per-virtual-pipeline-stage 10",
        "--context-parallel-size 1",
        "--sequence-parallel",
        "--use-distributed-optimizer",
        "--recompute-granularity selective",
        "--micro-batch-size 1",
        "--global-batch-size 512",
        "--seq-length 8192",
        f"--train-iters {STEPS}",
        "--num-layers 80",
        "--hidden-size 8192",
        "--ffn-hidden-size 28672",
        "--num-attention-heads 64",
        "--group-query-attention",
        "--num-query-groups 8",
        "--swiglu",
        "--normalization RMSNorm",
        "--position-embedding-type rope",
        "--bf16",
        "NNODES=${NNODES:-8}",
        "GPUS_PER_NODE=8",
        "pretrain_gpt.py",
    ):
        assert expected in text, expected
    assert text.startswith("#!/usr/bin/env bash\n")


def test_exported_fp8_runs_the_recipe_and_gather_the_plan_was_timed_with():
    job = {"model": "llama-3.1-8b", "tokens": "10B", "global_batch": 64, "precision": "fp8"}
    sharded = _plan(dp=8, tp=1, pp=1, vpp=1, zero=3, recompute="full")
    auto = export_plan(_plan(), parse_scenario(job), "megatron").text
    assert "--fp8-recipe delayed" in auto and "--fp8-param-gather" not in auto
    mx = parse_scenario({**job, "fp8_recipe": "mx", "fp8_all_gather": True})
    assert "--fp8-recipe mxfp8" in export_plan(_plan(), mx, "megatron").text
    assert "--fp8-param-gather" in export_plan(_plan(), mx, "megatron").text

    def float8(scenario: dict) -> dict:
        config = tomllib.loads(export_plan(sharded, parse_scenario(scenario), "torchtitan").text)
        return config["quantize"]["linear"]

    assert float8(job)["float8"]["recipe_name"] == "tensorwise"
    assert float8(job)["float8"]["enable_fsdp_float8_all_gather"] is False
    assert float8({**job, "fp8_all_gather": True})["float8"]["enable_fsdp_float8_all_gather"]
    assert float8({**job, "fp8_recipe": "rowwise"})["float8"]["recipe_name"] == "rowwise"
    assert float8({**job, "fp8_recipe": "mx"})["mx"]["recipe_name"] == "mxfp8_cublas"


@pytest.mark.parametrize("fmt", ["torchtitan", "megatron", "deepspeed", "accelerate"])
def test_every_export_says_the_plan_was_timed_with_packed_documents(fmt):
    job = {"model": "llama-3.1-8b", "tokens": "10B", "global_batch": 64, "seq_len": 4096}
    plan = _plan(dp=64, tp=1, pp=1, vpp=1, zero=3, recompute="full")
    packed = export_plan(plan, parse_scenario({**job, "document_tokens": 384}), fmt)
    plain = export_plan(plan, parse_scenario(job), fmt)
    assert any("document_tokens 384" in note for note in packed.notes)
    assert not any("document_tokens" in note for note in plain.notes)


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_megatron_script_is_valid_bash(scenario, tmp_path):
    path = write_export(export_plan(_plan(recompute="full"), scenario, "megatron"), tmp_path)
    result = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "--recompute-method uniform" in path.read_text()


def test_megatron_refuses_what_it_cannot_run(scenario):
    with pytest.raises(ExportError, match="torchtitan"):
        export_plan(_plan(zero=3), scenario, "megatron")
    with pytest.raises(ExportError, match="deepspeed"):
        export_plan(_plan(offload="optimizer+params"), scenario, "megatron")
    lora = parse_scenario(
        {"model": "llama-3.1-8b", "method": "lora", "tokens": "1B", "global_batch": 64}
    )
    with pytest.raises(ExportError, match="accelerate"):
        export_plan(_plan(dp=8, tp=1, pp=1, vpp=1), lora, "megatron")


def test_deepspeed_json_carries_the_layout(scenario):
    exported = export_plan(_data_parallel_plan(offload="optimizer+params"), scenario, "deepspeed")
    config = json.loads(exported.text)
    assert config["train_batch_size"] == 512
    assert config["train_micro_batch_size_per_gpu"] == 2
    assert config["gradient_accumulation_steps"] == 512 // (2 * 16)
    assert config["zero_optimization"]["stage"] == 3
    assert config["zero_optimization"]["offload_optimizer"]["device"] == "cpu"
    assert config["zero_optimization"]["offload_param"]["device"] == "cpu"
    assert config["bf16"]["enabled"] is True and config["fp16"]["enabled"] is False
    assert "activation_checkpointing" in config
    assert any("--num_nodes 2" in note for note in exported.notes)


def test_deepspeed_refuses_model_parallelism(scenario):
    with pytest.raises(ExportError, match="megatron or torchtitan"):
        export_plan(_plan(), scenario, "deepspeed")


def test_accelerate_yaml_carries_the_layout(scenario):
    exported = export_plan(_data_parallel_plan(), scenario, "accelerate")
    config = yaml.safe_load(exported.text)
    assert config["distributed_type"] == "FSDP"
    assert config["num_machines"] == 2
    assert config["num_processes"] == 16
    assert config["mixed_precision"] == "bf16"
    fsdp = config["fsdp_config"]
    assert fsdp["fsdp_sharding_strategy"] == "FULL_SHARD"
    assert fsdp["fsdp_activation_checkpointing"] is True
    assert fsdp["fsdp_offload_params"] is False
    assert fsdp["fsdp_transformer_layer_cls_to_wrap"] == "LlamaDecoderLayer"
    assert "per-device batch 2, gradient accumulation 16" in exported.text


@pytest.mark.parametrize(("zero", "strategy"), [(0, "NO_SHARD"), (2, "SHARD_GRAD_OP")])
def test_accelerate_sharding_follows_zero(scenario, zero, strategy):
    plan = _data_parallel_plan()
    plan["strategy"]["zero"] = zero
    config = yaml.safe_load(export_plan(plan, scenario, "accelerate").text)
    assert config["fsdp_config"]["fsdp_sharding_strategy"] == strategy


def test_accelerate_refuses_pipeline_parallelism(scenario):
    with pytest.raises(ExportError, match="torchtitan or megatron"):
        export_plan(_plan(), scenario, "accelerate")


@pytest.mark.parametrize(
    ("framework", "launcher"), [("megatron", "pretrain_gpt.py"), ("fsdp", "torchtitan.train")]
)
def test_skypilot_task_carries_the_layout(scenario, framework, launcher):
    exported = export_plan(_plan(framework=framework), scenario, "skypilot")
    task = yaml.safe_load(exported.text)
    assert task["resources"]["accelerators"] == "H100:8"
    assert task["resources"]["cloud"] == "lambda"
    assert task["num_nodes"] == 8
    assert "SKYPILOT_NODE_RANK" in task["run"]
    assert "SKYPILOT_NODE_IPS" in task["run"]
    assert launcher in task["setup"] + task["run"]


def test_skypilot_refuses_a_gpu_it_cannot_provision():
    chinese = parse_scenario({"model": "llama-3.1-8b", "tokens": "1B", "global_batch": 64})
    plan = _plan(dp=8, tp=1, pp=1, vpp=1)
    plan["gpu"] = "h20-96gb"
    with pytest.raises(ExportError, match="SkyPilot has no accelerator"):
        export_plan(plan, chinese, "skypilot")


def test_unknown_format_names_the_accepted_ones(scenario):
    with pytest.raises(InputError) as error:
        export_plan(_plan(), scenario, "slurm")
    message = str(error.value)
    assert "\n" not in message
    assert all(fmt in message for fmt in FORMATS)


def test_layout_that_does_not_cover_the_gpus_is_refused(scenario):
    plan = _plan()
    plan["count"] = 128
    with pytest.raises(ExportError, match="must equal the GPU count"):
        export_plan(plan, scenario, "torchtitan")


def test_scenario_without_tokens_is_refused():
    no_tokens = parse_scenario({"model": "llama-3.1-70b", "global_batch": 512})
    with pytest.raises(ExportError, match="tokens"):
        export_plan(_plan(), no_tokens, "megatron")


def test_write_is_atomic_and_does_not_overwrite(scenario, tmp_path):
    exported = export_plan(_plan(), scenario, "torchtitan")
    path = write_export(exported, tmp_path)
    assert path == tmp_path / exported.filename
    assert path.read_text() == exported.text
    assert [entry.name for entry in tmp_path.iterdir()] == [exported.filename]
    with pytest.raises(ExportError, match="already exists"):
        write_export(exported, tmp_path)
    assert path.read_text() == exported.text
    other = export_plan(_plan(recompute="full"), scenario, "torchtitan")
    write_export(other, path, overwrite=True)
    assert path.read_text() == other.text
    assert [entry.name for entry in tmp_path.iterdir()] == [exported.filename]


def test_write_to_a_missing_directory_is_refused(scenario, tmp_path):
    exported = export_plan(_plan(), scenario, "torchtitan")
    with pytest.raises(ExportError, match="no such directory"):
        write_export(exported, tmp_path / "absent" / "train.toml")


def test_toml_strings_are_escaped():
    from gpuplan.export.toml_text import toml_document

    text = 'a "quoted" \\ path\nwith\ttabs and \x01 control'
    document = toml_document({"job": {"description": text, "dotted.key": 1}})
    assert tomllib.loads(document) == {"job": {"description": text, "dotted.key": 1}}


def test_megatron_uneven_layers_get_a_pipeline_layout():
    """126 layers on 16 x 4 virtual stages: 62 stages of two layers, and the first and last,
    which also hold the embedding and the loss, of one; no uniform per-stage count is given."""
    from gpuplan.export.layout import read_layout
    from gpuplan.export.megatron import pipeline_layout

    scenario = parse_scenario({"model": "llama-3.1-405b", "tokens": "1T", "global_batch": 1024})
    plan = _plan(dp=2, tp=8, pp=16, vpp=4)
    layout = pipeline_layout(read_layout(plan, scenario))
    stages = layout.split("|")
    assert len(stages) == 64 and stages[0] == "Et" and stages[-1] == "tL"
    assert [stage.count("t") for stage in stages[1:-1]] == [2] * 62
    text = export_plan(plan, scenario, "megatron").text
    assert f"--pipeline-model-parallel-layout '{layout}'" in text
    assert "--num-layers-per-virtual-pipeline-stage" not in text


def _megatron_flags(text: str) -> dict[str, str]:
    words = shlex.split(text, comments=True)
    return {
        word: (words[index + 1] if index + 1 < len(words) else "")
        for index, word in enumerate(words)
        if word.startswith("--")
    }


@pytest.mark.parametrize("name", sorted(read_catalog_toml("models.toml")["models"]))
def test_megatron_carries_each_catalog_models_rope_and_norm_settings(name):
    """The exported rotary base, norm epsilon and Llama 3 scaling equal the model's config."""
    from gpuplan.catalog import load_model

    model = load_model(name)
    scenario = parse_scenario({"model": name, "tokens": "1B", "global_batch": 64, "seq_len": 2048})
    plan = _plan(dp=8, tp=1, pp=1, vpp=1, zero=1)
    try:
        text = export_plan(plan, scenario, "megatron").text
    except ExportError:
        pytest.skip(f"{name}: no Megatron export of this layout")
    flags = _megatron_flags(text)
    settings = model.settings
    if model.position_embedding == "rope" and settings.rope_theta is not None:
        assert float(flags["--rotary-base"]) == settings.rope_theta
    else:
        assert "--rotary-base" not in flags
    if settings.norm_eps is not None:
        assert float(flags["--norm-epsilon"]) == settings.norm_eps
    if settings.scaling().get("rope_type") == "llama3":
        assert float(flags["--rope-scaling-factor"]) == settings.scaling()["factor"]
        assert "--use-rope-scaling" in flags


def test_a_pasted_configs_rope_settings_reach_the_megatron_script():
    config = {
        "model_type": "llama", "num_hidden_layers": 16, "hidden_size": 2048,
        "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 8192,
        "vocab_size": 128256, "rope_theta": 500000.0, "rms_norm_eps": 1e-05,
        "rope_scaling": {"rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0,
                         "high_freq_factor": 4.0, "original_max_position_embeddings": 8192},
    }  # fmt: skip
    scenario = parse_scenario({"model": config, "tokens": "1B", "global_batch": 64})
    exported = export_plan(_plan(dp=8, tp=1, pp=1, vpp=1), scenario, "megatron")
    flags = _megatron_flags(exported.text)
    assert flags["--rotary-base"] == "500000" and flags["--norm-epsilon"] == "1e-05"
    assert flags["--rope-scaling-factor"] == "32" and "--use-rope-scaling" in flags
    yarn = {**config, "rope_scaling": {"rope_type": "yarn", "factor": 4.0}}
    exported = export_plan(
        _plan(dp=8, tp=1, pp=1, vpp=1),
        parse_scenario({"model": yarn, "tokens": "1B", "global_batch": 64}),
        "megatron",
    )
    assert "--use-rope-scaling" not in exported.text
    assert any("yarn" in note for note in exported.notes)


def test_every_format_carries_the_learning_rate_schedule():
    """The peak, the final rate and the warm-up reach each file (scenario training section)."""
    scenario = parse_scenario(
        {"model": "llama-3.1-8b", "tokens": "100B", "global_batch": 64,
         "training": {"learning_rate": 1e-4, "warmup_steps": 20, "min_learning_rate": 1e-6}}
    )  # fmt: skip
    plan = _data_parallel_plan()
    titan = tomllib.loads(export_plan(plan, scenario, "torchtitan").text)
    assert titan["optimizer"]["lr"] == 1e-4
    assert titan["lr_scheduler"] == {
        "warmup_steps": 20,
        "decay_type": "cosine",
        "min_lr_factor": 0.01,
    }
    megatron = _megatron_flags(
        export_plan(_plan(dp=8, tp=1, pp=1, vpp=1), scenario, "megatron").text
    )
    assert megatron["--min-lr"] == "1e-06" and megatron["--lr-warmup-iters"] == "20"
    assert (
        "LR=${LR:-0.0001}" in export_plan(_plan(dp=8, tp=1, pp=1, vpp=1), scenario, "megatron").text
    )
    deepspeed = json.loads(export_plan(plan, scenario, "deepspeed").text)
    assert deepspeed["optimizer"]["params"]["lr"] == 1e-4
    assert deepspeed["scheduler"]["params"]["warmup_num_steps"] == 20
    assert "learning rate 0.0001" in export_plan(plan, scenario, "accelerate").text


def test_skypilot_names_the_region_and_shape_only_where_the_cloud_has_them(scenario):
    aws = {**_plan(), "cost": {"offer": "aws-p5.48xlarge-us-east-1", "provider": "AWS",
                               "region": "us-east-1", "instance_type": "p5.48xlarge"}}  # fmt: skip
    resources = yaml.safe_load(export_plan(aws, scenario, "skypilot").text)["resources"]
    assert resources["region"] == "us-east-1" and resources["instance_type"] == "p5.48xlarge"
    lambda_plan = {**_plan(), "cost": {"offer": "lambda-8xh100-sxm", "provider": "Lambda",
                                       "region": "global", "instance_type": ""}}  # fmt: skip
    resources = yaml.safe_load(export_plan(lambda_plan, scenario, "skypilot").text)["resources"]
    assert resources["cloud"] == "lambda" and "region" not in resources


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_dualpipe_estimate_has_no_launch_config(scenario, fmt):
    with pytest.raises(ExportError, match=r"^plan\.strategy\.schedule: dualpipe"):
        export_plan(_plan(vpp=1, schedule="dualpipe"), scenario, fmt)
