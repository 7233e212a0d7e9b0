"""SkyPilot task (YAML), for ``sky launch -c NAME task.yaml``.

Fields follow SkyPilot's task YAML reference (docs.skypilot.co, "YAML Configuration";
source github.com/skypilot-org/skypilot ``sky/utils/schemas.py``) and its distributed-jobs
guide (``docs/source/running-jobs/distributed-jobs.rst``): ``resources.accelerators`` as
``NAME:COUNT`` per node, ``num_nodes``, and a ``run`` script that starts torchrun from
``SKYPILOT_NODE_RANK``, ``SKYPILOT_NUM_NODES``, ``SKYPILOT_NUM_GPUS_PER_NODE`` and the head
node's address, the first line of ``SKYPILOT_NODE_IPS``.

The training itself is the megatron export when the plan's framework is megatron, else the
torchtitan export; ``setup`` writes that file onto every node, so the task is one file.
"""

from __future__ import annotations

from typing import Any

from gpuplan.export.layout import ExportedFile, ExportError, ExportLayout, comment_block
from gpuplan.export.yaml_text import yaml_document

CLOUDS = {
    "aws": "aws",
    "gcp": "gcp",
    "azure": "azure",
    "lambda": "lambda",
    "runpod": "runpod",
    "nebius": "nebius",
    "vast.ai": "vast",
}
"""Offer providers (lower case) that SkyPilot provisions, to its cloud names."""
INSTANCE_CLOUDS = ("aws", "gcp", "azure")
"""Clouds whose offers name the region and instance shape as SkyPilot's catalog does (AWS, GCP
and Azure ids); the other providers' listings name a GPU count and no region SkyPilot knows
(the catalog's "global", "marketplace")."""
SKYPILOT_RELEASE = "0.14.1"
"""The SkyPilot release whose task loader reads the YAML in the tests (tests/export)."""
CONFIG_DIR = "~/gpuplan"
HEREDOC_END = "GPUPLAN_CONFIG_END"


def _training(layout: ExportLayout) -> tuple[ExportedFile, str, str]:
    """The training file, how to install its framework, and how to start it on one node."""
    if layout.framework == "megatron":
        from gpuplan.export.megatron import MEGATRON_RELEASE, render_megatron

        exported = render_megatron(layout)
        install = (
            f"git clone --depth 1 --branch {MEGATRON_RELEASE} "
            "https://github.com/NVIDIA/Megatron-LM.git ~/Megatron-LM || true\n"
            "pip install -e ~/Megatron-LM"
        )
        start = (
            "NNODES=$SKYPILOT_NUM_NODES NODE_RANK=$SKYPILOT_NODE_RANK "
            'MASTER_ADDR="$MASTER_ADDR" MEGATRON_LM=~/Megatron-LM '
            f"bash {CONFIG_DIR}/{exported.filename}"
        )
        return exported, install, start
    from gpuplan.export.torchtitan import TORCHTITAN_RELEASE, render_torchtitan

    exported = render_torchtitan(layout)
    install = (
        f"git clone --depth 1 --branch {TORCHTITAN_RELEASE} "
        "https://github.com/pytorch/torchtitan.git ~/torchtitan || true\n"
        "pip install -r ~/torchtitan/requirements.txt && pip install -e ~/torchtitan"
    )
    start = (
        "torchrun --nnodes=$SKYPILOT_NUM_NODES "
        "--nproc_per_node=$SKYPILOT_NUM_GPUS_PER_NODE "
        "--node_rank=$SKYPILOT_NODE_RANK "
        '--master_addr="$MASTER_ADDR" --master_port=29500 '
        f"-m torchtitan.train --job.config_file {CONFIG_DIR}/{exported.filename}"
    )
    return exported, install, start


def render_skypilot(layout: ExportLayout) -> ExportedFile:
    """The task; ``resources.accelerators`` is the GPU's first SkyPilot name (gpus.toml
    ``skypilot_names``)."""
    if not layout.gpu.skypilot_names:
        from gpuplan.catalog import all_gpus

        named = [gpu.id for gpu in all_gpus() if gpu.skypilot_names]
        raise ExportError.of(
            "error.export_skypilot_gpu", gpu=layout.gpu.id, accepted=", ".join(named)
        )
    accelerator = layout.gpu.skypilot_names[0]
    training, install, start = _training(layout)
    notes = [f"runs the {training.filename} that setup writes on every node", *training.notes]
    resources: dict[str, Any] = {"accelerators": f"{accelerator}:{layout.gpus_per_node}"}
    cloud = CLOUDS.get(layout.provider.lower())
    if cloud:
        resources["cloud"] = cloud
        if cloud in INSTANCE_CLOUDS and layout.region:
            resources["region"] = layout.region
        if cloud in INSTANCE_CLOUDS and layout.instance_type:
            resources["instance_type"] = layout.instance_type
    elif layout.provider:
        notes.append(f"SkyPilot does not provision {layout.provider}: no cloud is pinned")
    setup = (
        f"{install}\n"
        f"mkdir -p {CONFIG_DIR}\n"
        f"cat > {CONFIG_DIR}/{training.filename} <<'{HEREDOC_END}'\n"
        f"{training.text}"
        f"{HEREDOC_END}\n"
    )
    run = f'MASTER_ADDR=$(echo "$SKYPILOT_NODE_IPS" | head -n1)\n{start}\n'
    envs: dict[str, Any] = {}
    if layout.framework == "megatron":
        envs["DATA_PATH"] = None
        envs["LR"] = f"{layout.schedule.peak:.3g}"
        notes.append("pass --env DATA_PATH=... to sky launch; mount the data with file_mounts")
    if layout.hf_repo:
        envs["HF_TOKEN"] = None
    task: dict[str, Any] = {
        "name": f"gpuplan-{layout.model.name}".replace(".", "-").lower(),
        "resources": resources,
        "num_nodes": layout.nodes,
    }
    if envs:
        task["envs"] = envs
    task["setup"] = setup
    task["run"] = run
    required = " ".join(f"--env {name}=..." for name, value in envs.items() if value is None)
    launch = (
        f"sky launch -c train {required} THIS_FILE" if required else "sky launch -c train THIS_FILE"
    )
    header = comment_block(
        [
            f"SkyPilot task written by gpuplan, checked against SkyPilot {SKYPILOT_RELEASE}",
            layout.summary(),
            launch,
        ]
    )
    return ExportedFile("skypilot_task.yaml", yaml_document(task, header), tuple(notes))
