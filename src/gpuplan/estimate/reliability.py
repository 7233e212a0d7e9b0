"""Failures, checkpoints and restarts: how much of the rented time trains the model (goodput).

- Checkpoint size from the precision and optimizer (:func:`checkpoint_bytes`), its write time
  at a storage bandwidth, or with asynchronous checkpointing the stall of copying it to host
  memory (:func:`checkpoint_stall_seconds`).
- Failure rate per GPU-hour from the Llama 3 training run, scaled linearly with the GPU count
  (:func:`job_mean_time_between_failures`).
- The checkpoint interval that balances checkpoint stalls against lost work: Young (1974) and
  Daly (2006) (:func:`young_interval`, :func:`daly_interval`), and the goodput it leaves under
  Daly's model of Poisson failures (:func:`goodput`).
- Whether storage can feed the training data fast enough (:func:`dataset_read_check`).

All times in seconds, sizes in bytes, bandwidths in bytes per second; functions broadcast.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gpuplan.estimate.frameworks import BF16
from gpuplan.estimate.identity_cache import cached_by_identity
from gpuplan.estimate.memory import (
    lora_params_per_layer,
    parameter_bytes,
    single_rank_profile,
)
from gpuplan.workload.job import TrainingJob

FloatArray = npt.NDArray[np.float64]
ArrayLike = float | int | npt.NDArray[np.float64] | npt.NDArray[np.int64]

LLAMA3_UNEXPECTED_INTERRUPTIONS = 419
LLAMA3_SNAPSHOT_DAYS = 54
LLAMA3_GPUS = 16384
LLAMA3_FAILURES_PER_GPU_HOUR = LLAMA3_UNEXPECTED_INTERRUPTIONS / (
    LLAMA3_SNAPSHOT_DAYS * 24 * LLAMA3_GPUS
)
"""Unexpected job interruptions per GPU-hour, about 1.97e-5: the Llama 3 pre-training run had
466 interruptions in a 54-day snapshot on up to 16,384 H100 GPUs, 419 of them unexpected
(Dubey et al. 2024, "The Llama 3 Herd of Models", section 3.3.4, Table 5). The 47 planned ones
(maintenance, configuration) are left out. At 16,384 GPUs this is one failure every 3.1 hours."""

DEFAULT_RESTART_SECONDS = 600.0
"""Fixed cost of a restart, before the checkpoint is read back: detecting the failure,
rescheduling or replacing the node, starting the processes and initialising NCCL. An assumption
of 10 minutes: no source gives one figure, and it varies with the scheduler (Huawei's MindCluster
guide splits it the same way: rescheduling, communication setup, checkpoint load, compilation).
Pass a measured value."""

DEFAULT_STORAGE_WRITE_BANDWIDTH = 1944 * 2**20
"""Aggregate checkpoint write bandwidth: one local NVMe drive, ml-engineering's fio reference run
(Samsung 980 PRO, PCIe 4: 1,944 MiB/s for 1 GiB writes; shared/references/
verification-and-style.md 1.1.3), a conservative floor for a rented node writing its own disk.
Parallel file systems and object stores written by every node reach far more: pass the
measured aggregate."""

DEFAULT_STORAGE_READ_BANDWIDTH = 2762 * 2**20
"""Aggregate read bandwidth for checkpoint loads and training data: the same drive, 2,762 MiB/s
for 1 GiB reads (ml-engineering fio reference run)."""

DEFAULT_HOST_COPY_BANDWIDTH = 55.06e9
"""Device-to-host copy per GPU for asynchronous checkpoints: nvbandwidth on an 8xH200 node,
PCIe 5.0 x16, 55.06 GB/s (88 % of 63; ml-engineering, verification-and-style.md 1.1.2). PCIe 4.0
GPUs reach about half."""

TOKEN_ID_BYTES = 2
"""Bytes per token of a pre-tokenized dataset stored as uint16 ids (vocabularies up to 65,536,
Megatron-LM's and nanoGPT's ``.bin`` files); 4 for larger vocabularies (uint32)."""


# --- checkpoint size and time ----------------------------------------------------------------


def checkpoint_bytes_per_trained_param(job: TrainingJob, weights_only: bool = False) -> float:
    """Bytes one trained parameter takes in a resumable checkpoint, in the layout of
    ``torch.distributed.checkpoint`` and Megatron-Core's distributed checkpointing: every tensor
    saved once (no copy per data-parallel replica), in the dtype it has in training: the
    persistent weights, the master copy and the optimizer states of the job's framework as one
    rank runs it (``memory.parameter_bytes``). Mixed precision under Megatron-LM or DeepSpeed
    (``auto``): bf16 weights 2 + fp32 master 4 + AdamW 8 = 14 bytes; FSDP keeps only the fp32
    sharded parameters, 4 + 8; ``bf16-pure``: 2 + states in bf16; ``fp32``: 4 + states. LoRA
    adapters train without a master copy. ``weights_only``: the training-dtype weights alone (an
    export, not a resumable checkpoint).
    """
    sizes = parameter_bytes(job, single_rank_profile(job))
    if weights_only:
        return sizes.param_element
    return sizes.persistent


def trained_params(job: TrainingJob) -> int:
    """Parameters the job trains: all of them (full), the adapters (LoRA, QLoRA), or the last
    ``trainable_layers`` layers (freeze)."""
    model = job.model
    if job.is_adapter:
        return model.num_layers * lora_params_per_layer(model, job.lora.rank, job.lora.targets)
    if job.method == "freeze":
        assert job.trainable_layers is not None
        first = model.num_layers - job.trainable_layers
        return sum(model.layer_params(index) for index in range(first, model.num_layers))
    return model.total_params


@cached_by_identity(maxsize=64)
def checkpoint_bytes(job: TrainingJob, weights_only: bool = False) -> float:
    """Size of one checkpoint: trained parameters at
    :func:`checkpoint_bytes_per_trained_param`, plus, for freeze tuning, the frozen weights in
    bf16 (a full model state dict). Adapter checkpoints hold the adapters only (PEFT's
    ``save_pretrained``); the frozen base model is not written again. Cached per job: the
    search asks once for every GPU type."""
    trained = trained_params(job)
    size = trained * checkpoint_bytes_per_trained_param(job, weights_only)
    if job.method == "freeze":
        size += (job.model.total_params - trained) * BF16
    return float(size)


def checkpoint_write_seconds(
    size_bytes: ArrayLike, storage_bandwidth: ArrayLike = DEFAULT_STORAGE_WRITE_BANDWIDTH
) -> FloatArray:
    """Seconds to write a checkpoint at an aggregate storage bandwidth: ``size / bandwidth``."""
    return np.asarray(size_bytes, dtype=float) / storage_bandwidth


def checkpoint_stall_seconds(
    size_bytes: ArrayLike,
    num_gpus: ArrayLike,
    asynchronous: bool = False,
    storage_bandwidth: ArrayLike = DEFAULT_STORAGE_WRITE_BANDWIDTH,
    host_copy_bandwidth: ArrayLike = DEFAULT_HOST_COPY_BANDWIDTH,
) -> FloatArray:
    """Seconds training stops for one checkpoint.

    Synchronous: the whole write (:func:`checkpoint_write_seconds`). Asynchronous (PyTorch DCP
    ``async_save``, Megatron-Core ``--async-save``): only the copy of each GPU's shard to host
    memory, ``size / (GPUs * host_copy_bandwidth)``, every GPU copying its share at once; the
    write to storage then runs in the background and must finish before the next checkpoint.
    """
    if not asynchronous:
        return checkpoint_write_seconds(size_bytes, storage_bandwidth)
    gpus = np.asarray(num_gpus, dtype=float)
    return np.asarray(size_bytes, dtype=float) / (gpus * host_copy_bandwidth)


# --- failures and the checkpoint interval ----------------------------------------------------


def job_mean_time_between_failures(
    num_gpus: ArrayLike, failures_per_gpu_hour: ArrayLike = LLAMA3_FAILURES_PER_GPU_HOUR
) -> FloatArray:
    """Mean seconds between failures of a job on ``num_gpus`` GPUs: failures are independent
    and add up, so the job's rate is ``rate_per_gpu_hour * GPUs`` per hour."""
    gpus = np.asarray(num_gpus, dtype=float)
    return 3600.0 / (gpus * np.asarray(failures_per_gpu_hour, dtype=float))


def young_interval(checkpoint_seconds: ArrayLike, mtbf_seconds: ArrayLike) -> FloatArray:
    """Young (1974), "A first order approximation to the optimum checkpoint interval":
    ``sqrt(2 * C * M)`` seconds of work between checkpoints, for a checkpoint costing ``C`` and a
    mean time between failures ``M``."""
    return np.sqrt(2.0 * np.asarray(checkpoint_seconds, dtype=float) * mtbf_seconds)


def daly_interval(checkpoint_seconds: ArrayLike, mtbf_seconds: ArrayLike) -> FloatArray:
    """Daly (2006), "A higher order estimate of the optimum checkpoint interval for restart
    dumps", the higher-order estimate: for ``C < 2M``, ``sqrt(2CM) * (1 + sqrt(C/(2M))/3 + (C/(2M))/9) - C``;
    otherwise ``M``."""
    cost = np.asarray(checkpoint_seconds, dtype=float)
    mtbf = np.asarray(mtbf_seconds, dtype=float)
    ratio = cost / (2.0 * mtbf)
    series = np.sqrt(2.0 * cost * mtbf) * (1.0 + np.sqrt(ratio) / 3.0 + ratio / 9.0) - cost
    return np.where(cost < 2.0 * mtbf, series, mtbf)


def expected_wall_seconds(
    work_seconds: ArrayLike,
    interval_seconds: ArrayLike,
    checkpoint_seconds: ArrayLike,
    mtbf_seconds: ArrayLike,
    restart_seconds: ArrayLike = DEFAULT_RESTART_SECONDS,
) -> FloatArray:
    """Expected wall-clock time to finish ``work_seconds`` of training with a checkpoint every
    ``interval`` seconds of work, under Poisson failures (the exponential model from which
    Daly 2006 derives his estimate): ``M * exp(R/M) * (exp((τ + C)/M) - 1) * work / τ``. To first order this
    is ``work * (τ + C)/τ * (1 + (R + (τ + C)/2) / M)``: the checkpoint stalls, half an interval
    of lost work and one restart per failure."""
    interval = np.asarray(interval_seconds, dtype=float)
    mtbf = np.asarray(mtbf_seconds, dtype=float)
    segment = interval + np.asarray(checkpoint_seconds, dtype=float)
    return (
        mtbf
        * np.exp(np.asarray(restart_seconds, dtype=float) / mtbf)
        * np.expm1(segment / mtbf)
        * np.asarray(work_seconds, dtype=float)
        / interval
    )


def goodput(
    interval_seconds: ArrayLike,
    checkpoint_seconds: ArrayLike,
    mtbf_seconds: ArrayLike,
    restart_seconds: ArrayLike = DEFAULT_RESTART_SECONDS,
) -> FloatArray:
    """Share of wall-clock time that trains the model, in (0, 1]: work over
    :func:`expected_wall_seconds`."""
    return 1.0 / expected_wall_seconds(
        1.0, interval_seconds, checkpoint_seconds, mtbf_seconds, restart_seconds
    )


def lost_seconds_per_interruption(
    restart_seconds: ArrayLike, interval_seconds: ArrayLike, checkpoint_seconds: ArrayLike
) -> FloatArray:
    """Wall-clock seconds one interruption costs a job, on average: the restart ``R``
    (rescheduling, start-up, reading the checkpoint back) plus half a checkpoint segment of
    lost work, ``(τ + C) / 2``, the per-failure term of :func:`expected_wall_seconds` to first
    order. A spot reclaim costs the same, at the interval chosen for hardware failures."""
    return (
        np.asarray(restart_seconds, dtype=float)
        + (np.asarray(interval_seconds, dtype=float) + np.asarray(checkpoint_seconds, dtype=float))
        / 2.0
    )


@dataclass(frozen=True)
class ReliabilityEstimate:
    """Checkpointing and failures for one job on ``num_gpus`` GPUs; times in seconds."""

    checkpoint_bytes: float
    checkpoint_stall_seconds: FloatArray
    checkpoint_write_seconds: FloatArray
    mtbf_seconds: FloatArray
    restart_seconds: FloatArray
    interval_seconds: FloatArray
    goodput: FloatArray

    @property
    def lost_seconds_per_interruption(self) -> FloatArray:
        """:func:`lost_seconds_per_interruption` of this estimate."""
        return lost_seconds_per_interruption(
            self.restart_seconds, self.interval_seconds, self.checkpoint_stall_seconds
        )


def estimate_reliability(
    job: TrainingJob,
    num_gpus: ArrayLike,
    failures_per_gpu_hour: ArrayLike = LLAMA3_FAILURES_PER_GPU_HOUR,
    asynchronous: bool = False,
    storage_write_bandwidth: ArrayLike = DEFAULT_STORAGE_WRITE_BANDWIDTH,
    storage_read_bandwidth: ArrayLike = DEFAULT_STORAGE_READ_BANDWIDTH,
    host_copy_bandwidth: ArrayLike = DEFAULT_HOST_COPY_BANDWIDTH,
    restart_seconds: ArrayLike = DEFAULT_RESTART_SECONDS,
    interval_seconds: ArrayLike | None = None,
    reclaims_per_hour: ArrayLike = 0.0,
) -> ReliabilityEstimate:
    """Checkpoint size and stall, failure rate, Daly's interval (unless ``interval_seconds`` is
    given; asynchronous writes must finish before the next checkpoint, so the interval is at least
    one write) and the goodput. A restart costs ``restart_seconds`` plus reading the checkpoint back
    at ``storage_read_bandwidth``.

    ``reclaims_per_hour`` are interruptions of the whole job besides hardware failures (spot
    capacity taken back): Daly's interval is then chosen for both together, mean time between
    interruptions ``1 / (1/M + reclaims)``, while the goodput counts hardware failures only;
    what the reclaims cost is priced with the spot plan (``pricing.quote``), each losing
    :attr:`ReliabilityEstimate.lost_seconds_per_interruption`."""
    size = checkpoint_bytes(job)
    stall = checkpoint_stall_seconds(
        size, num_gpus, asynchronous, storage_write_bandwidth, host_copy_bandwidth
    )
    mtbf = job_mean_time_between_failures(num_gpus, failures_per_gpu_hour)
    restart = np.asarray(restart_seconds, dtype=float) + size / np.asarray(
        storage_read_bandwidth, dtype=float
    )
    write = checkpoint_write_seconds(size, storage_write_bandwidth)
    if interval_seconds is None:
        reclaims = np.asarray(reclaims_per_hour, dtype=float) / 3600.0
        interval = daly_interval(stall, mtbf / (1.0 + mtbf * reclaims))
    else:
        interval = np.asarray(interval_seconds, dtype=float)
    if asynchronous:
        interval = np.maximum(interval, write)
    return ReliabilityEstimate(
        checkpoint_bytes=size,
        checkpoint_stall_seconds=stall,
        checkpoint_write_seconds=write,
        mtbf_seconds=mtbf,
        restart_seconds=restart,
        interval_seconds=interval,
        goodput=goodput(interval, stall, mtbf, restart),
    )


# --- training data ---------------------------------------------------------------------------


@dataclass(frozen=True)
class DatasetReadCheck:
    """Read bandwidth the training data needs, and its share of what storage delivers."""

    required_bytes_per_second: FloatArray
    storage_bandwidth: float
    ratio: FloatArray

    @property
    def warning(self) -> str | None:
        """A sentence when the data needs more than storage delivers (anywhere in the arrays)."""
        if not np.any(self.ratio > 1.0):
            return None
        worst = float(np.max(self.required_bytes_per_second))
        return (
            f"training data needs {worst / 1e9:.2f} GB/s of reads, more than the "
            f"{self.storage_bandwidth / 1e9:.2f} GB/s storage delivers "
            f"({float(np.max(self.ratio)):.1f}x); stage the dataset on local disks or faster storage"
        )


def dataset_read_check(
    tokens_per_second: ArrayLike,
    storage_bandwidth: float = DEFAULT_STORAGE_READ_BANDWIDTH,
    bytes_per_token: float = TOKEN_ID_BYTES,
) -> DatasetReadCheck:
    """Read bandwidth for pre-tokenized data: ``tokens/s * bytes_per_token`` (2 for uint16 ids,
    4 for uint32), against the storage's aggregate read bandwidth."""
    required = np.asarray(tokens_per_second, dtype=float) * bytes_per_token
    return DatasetReadCheck(
        required_bytes_per_second=required,
        storage_bandwidth=float(storage_bandwidth),
        ratio=required / storage_bandwidth,
    )
