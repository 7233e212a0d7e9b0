"""Start-up: the wall time a rented run spends before its first training step.

Every run pays it, and it is billed like training time: provisioning the instances, pulling the
container image, loading the model's weights, compiling (``torch.compile``), and initialising
the communicators. It is what makes a short job on hundreds of GPUs cost more than it seems:
``startup x instances`` is paid whatever the job's length.

``startup = provisioning + image pull + weights / storage read bandwidth + compile (when the
job compiles) + communicator init (per node)``; each default below is stated with its source,
and a scenario's ``startup`` mapping overrides any of them (or gives the whole as a duration).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gpuplan.workload.job import TrainingJob

FloatArray = npt.NDArray[np.float64]
ArrayLike = float | int | npt.NDArray[np.float64] | npt.NDArray[np.int64]

DEFAULT_PROVISIONING_SECONDS = 300.0
"""Seconds from the rental request to a machine ready for the job."""

DEFAULT_IMAGE_PULL_SECONDS = 180.0
"""Seconds to pull and unpack a PyTorch training image."""

DEFAULT_COMPILE_SECONDS = 120.0
"""Seconds ``torch.compile`` spends before the first step of a compiled Llama-class model."""

DEFAULT_COMMUNICATOR_SECONDS_PER_NODE = 0.1
"""Seconds NCCL communicator initialisation adds per node."""

WEIGHT_LOAD_BYTES_PER_PARAM = 2.0
"""Bytes per parameter read at start: bf16 weights (QLoRA quantizes them after loading)."""


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
    storage_read_bandwidth: float,
    options: StartupOptions | None = None,
) -> FloatArray:
    """Seconds before the first step of ``job`` on ``nodes`` nodes (module docstring). The
    weights are read once per node from storage at ``storage_read_bandwidth`` (every node reads
    them in parallel from its own disk or a parallel file system)."""
    settings = options or StartupOptions()
    node_count = np.asarray(nodes, dtype=float)
    if settings.total_seconds is not None:
        return np.asarray(np.full_like(node_count, settings.total_seconds), dtype=float)
    weights = job.model.total_params * WEIGHT_LOAD_BYTES_PER_PARAM / storage_read_bandwidth
    compile_time = settings.compile_seconds if job.compile else 0.0
    total = (
        settings.provisioning_seconds
        + settings.image_pull_seconds
        + weights
        + compile_time
        + settings.communicator_seconds_per_node * node_count
    )
    return np.asarray(total, dtype=float)
