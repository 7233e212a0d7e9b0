"""Feed exported files to the launchers' own loaders; run by the launcher environment's Python.

    .venv-launchers/bin/python tests/export/launchers/check_exports.py MANIFEST.json

MANIFEST is a JSON list of ``{"format", "path", "data_parallel"}``. Prints a JSON list of
``{"path", "ok", "detail"}``, one per file, in order; exits 0 when every file was checked (a
rejected file is a result, not a failure of this script). The loaders:

- SkyPilot: ``sky.Task.from_yaml_config`` (the task schema, the resources' cloud and
  accelerators), with a placeholder for each ``envs`` entry left null for ``--env``;
- torchtitan: ``torchtitan.config.ConfigManager().parse_args(["--job.config_file", path])``,
  the TOML merged into the job config dataclasses (an unknown key is an error);
- DeepSpeed: ``deepspeed.runtime.config.DeepSpeedConfig`` as one rank of ``data_parallel``
  ranks (its batch arithmetic checks ``train_batch_size`` against them);
- Accelerate: ``accelerate.commands.config.config_args.load_config_from_file`` (the
  ``ClusterConfig`` dataclass: unknown keys are errors);
- Megatron-LM: a script's ``--pipeline-model-parallel-layout``, where it has one, through
  megatron-core's ``PipelineParallelLayerLayout`` (stage count against the pipeline size, and
  every decoder layer placed once); the flags themselves are checked against the release's
  parser by tests/export/test_launchers.py.
"""

from __future__ import annotations

import json
import sys
import traceback
from typing import Any


def check_skypilot(path: str, data_parallel: int) -> str:
    import sky
    import yaml

    with open(path, encoding="utf-8") as handle:
        config = yaml.safe_load(handle)
    unset = [
        (name, "placeholder") for name, value in (config.get("envs") or {}).items() if value is None
    ]
    task = sky.Task.from_yaml_config(config, env_overrides=unset)
    return f"{task.name}: {task.num_nodes} node(s), {task.resources}"


def check_torchtitan(path: str, data_parallel: int) -> str:
    from torchtitan.config import ConfigManager

    config = ConfigManager().parse_args(["--job.config_file", path])
    parallel = config.parallelism
    return (
        f"{config.model.name} {config.model.flavor}: dp_shard {parallel.data_parallel_shard_degree}"
        f" tp {parallel.tensor_parallel_degree} pp {parallel.pipeline_parallel_degree}"
    )


def check_deepspeed(path: str, data_parallel: int) -> str:
    from deepspeed.runtime import config as deepspeed_config

    class DataParallelGroup:
        def get_data_parallel_world_size(self) -> int:
            return data_parallel

    deepspeed_config.dist.get_rank = lambda *args, **kwargs: 0
    with open(path, encoding="utf-8") as handle:
        loaded = deepspeed_config.DeepSpeedConfig(json.load(handle), mpu=DataParallelGroup())
    return (
        f"batch {loaded.train_batch_size} = {loaded.train_micro_batch_size_per_gpu} x "
        f"{loaded.gradient_accumulation_steps} x {data_parallel}, zero {loaded.zero_optimization_stage}"
    )


def check_accelerate(path: str, data_parallel: int) -> str:
    from accelerate.commands.config.config_args import load_config_from_file

    loaded = load_config_from_file(path)
    return f"{loaded.distributed_type} on {loaded.num_processes} process(es)"


def check_megatron(path: str, data_parallel: int) -> str:
    import re
    import shlex

    from megatron.core.transformer.pipeline_parallel_layer_layout import (
        PipelineParallelLayerLayout,
    )

    with open(path, encoding="utf-8") as handle:
        words = shlex.split(handle.read(), comments=True)

    def value(flag: str) -> str | None:
        return words[words.index(flag) + 1] if flag in words else None

    layout = value("--pipeline-model-parallel-layout")
    if layout is None:
        return "no custom pipeline layout"
    pipeline = int(value("--pipeline-model-parallel-size") or 1)
    layers = int(value("--num-layers") or 0)
    parsed = PipelineParallelLayerLayout(layout, pipeline)
    parsed.validate_layer_layout(num_layers=layers, mtp_num_layers=0)
    stages = PipelineParallelLayerLayout.get_num_stages_from_str(layout)
    placed = len(re.findall("t", layout))
    if placed != layers:
        raise ValueError(f"layout places {placed} decoder layers, --num-layers is {layers}")
    return f"layout of {stages} stages over pp {pipeline}, {layers} layers"


CHECKS = {
    "megatron": check_megatron,
    "skypilot": check_skypilot,
    "torchtitan": check_torchtitan,
    "deepspeed": check_deepspeed,
    "accelerate": check_accelerate,
}


def main(manifest_path: str) -> int:
    with open(manifest_path, encoding="utf-8") as handle:
        manifest: list[dict[str, Any]] = json.load(handle)
    results = []
    for entry in manifest:
        try:
            detail = CHECKS[entry["format"]](entry["path"], int(entry.get("data_parallel", 1)))
            results.append({"path": entry["path"], "ok": True, "detail": detail})
        except Exception as error:  # the loader's refusal is the result
            last = traceback.format_exception_only(type(error), error)[-1].strip()
            results.append({"path": entry["path"], "ok": False, "detail": last[:2000]})
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
