"""Start-up: the wall time a rented run spends before its first training step.

Every run pays it, and it is billed like training time: provisioning the instances, pulling the
container image, loading the model's weights, compiling (``torch.compile``), and initialising
the communicators. It is what makes a short job on hundreds of GPUs cost more than it seems:
``startup x instances`` is paid whatever the job's length.

``startup = provisioning + image pull + weights / load bandwidth + compile (when the job
compiles) + communicator init (per node)``; each default below is stated with its source,
and a scenario's ``startup`` mapping overrides any of them (or gives the whole as a duration).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gpuplan.workload.job import TrainingJob

FloatArray = npt.NDArray[np.float64]
ArrayLike = float | int | npt.NDArray[np.float64] | npt.NDArray[np.int64]

DEFAULT_PROVISIONING_SECONDS = 160.0
"""Seconds from the request to a GPU machine ready for the job: SkyPilot's launch timings,
AWS GPU instances 2 min 27 s (skypilot-org/skypilot PR 4091, before its custom images; 1 min 41 s
after), GCP a median of 2 min 40 s (PR 1092), Azure A100 4 min (PR 4167; 2 min 40 s after); the
middle figure."""

IMAGE_BYTES = 20e9
"""A PyTorch training image: ``nvcr.io/nvidia/pytorch:23.03-py3`` is about 20 GB
(d4l3k/torchdrive PR 4)."""

IMAGE_DOWNLOAD_BANDWIDTH = 10e9 / 8
"""Bytes per second an image is pulled at: 10 Gb/s, the Ethernet port every rented server has at
least (``hardware.topology.UNLISTED_NETWORK_GBPS``). No measured pull time was found."""

DEFAULT_IMAGE_PULL_SECONDS = IMAGE_BYTES / IMAGE_DOWNLOAD_BANDWIDTH + IMAGE_BYTES / (1944 * 2**20)
"""Download at :data:`IMAGE_DOWNLOAD_BANDWIDTH` plus unpacking at one NVMe drive's write rate
(1,944 MiB/s, the reliability model's storage default): about 26 s."""

DEFAULT_COMPILE_SECONDS = 35.0
"""Seconds ``torch.compile`` spends before the first step: 35 s for Qwen3-8B fine-tuning in
torchtune with the transformer layers compiled one by one (pytorch/torchtune PR 2831; compiling
the whole model took 198 s, which the PR calls anomalous)."""

DEFAULT_COMMUNICATOR_SECONDS_PER_NODE = 150.0 / 512
"""Seconds NCCL communicator initialisation adds per node: "2.5-minute init time" at several
thousand GPUs (NVIDIA/nccl issue 1156), taken as 4,096 GPUs in 512 nodes; 4 ranks on one node
take 0.45 s (tinygrad/open-gpu-kernel-modules issue 17's NCCL init log)."""

WEIGHT_LOAD_BYTES_PER_PARAM = 2.0
"""Bytes per parameter read at start: bf16 weights (QLoRA quantizes them after loading)."""

WEIGHT_LOAD_BANDWIDTH_PER_GPU = 1.1e9
WEIGHT_LOAD_BANDWIDTH_PER_NODE = 4.3e9
"""Plain safetensors loading: 1.1 GB/s on one H200 and 4.3 GB/s on eight (vLLM's model loader
documentation, against 35-45 GB/s for its parallel loader); a node reads at ``min(1.1 GB/s x
GPUs, 4.3 GB/s)``."""


@dataclass(frozen=True)
class StartupOptions:
    """Start-up assumptions; ``total_seconds`` replaces the whole model when given."""

    provisioning_seconds: float = DEFAULT_PROVISIONING_SECONDS
    image_pull_seconds: float = DEFAULT_IMAGE_PULL_SECONDS
    compile_seconds: float = DEFAULT_COMPILE_SECONDS
    communicator_seconds_per_node: float = DEFAULT_COMMUNICATOR_SECONDS_PER_NODE
    total_seconds: float | None = None


def startup_seconds(
    job: TrainingJob,
    nodes: ArrayLike,
    gpus_per_node: ArrayLike,
    options: StartupOptions | None = None,
) -> FloatArray:
    """Seconds before the first step of ``job`` on ``nodes`` nodes of ``gpus_per_node`` GPUs
    (module docstring). Every node reads the bf16 weights once, in parallel with the others."""
    settings = options or StartupOptions()
    node_count = np.asarray(nodes, dtype=float)
    if settings.total_seconds is not None:
        return np.asarray(np.full_like(node_count, settings.total_seconds), dtype=float)
    bandwidth = np.minimum(
        WEIGHT_LOAD_BANDWIDTH_PER_GPU * np.asarray(gpus_per_node, dtype=float),
        WEIGHT_LOAD_BANDWIDTH_PER_NODE,
    )
    weights = job.model.total_params * WEIGHT_LOAD_BYTES_PER_PARAM / bandwidth
    compile_time = settings.compile_seconds if job.compile else 0.0
    total = (
        settings.provisioning_seconds
        + settings.image_pull_seconds
        + weights
        + compile_time
        + settings.communicator_seconds_per_node * node_count
    )
    return np.asarray(total, dtype=float)
