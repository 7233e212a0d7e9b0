"""Checkpoints, failures and goodput."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuplan.catalog import load_model
from gpuplan.estimate.reliability import (
    LLAMA3_FAILURES_PER_GPU_HOUR,
    checkpoint_bytes,
    checkpoint_bytes_per_trained_param,
    checkpoint_stall_seconds,
    daly_interval,
    dataset_read_check,
    estimate_reliability,
    expected_wall_seconds,
    goodput,
    job_mean_time_between_failures,
    young_interval,
)
from gpuplan.workload.job import LoraConfig, TrainingJob

LLAMA_8B = load_model("llama-3.1-8b")


def test_llama3_failure_rate():
    """Dubey et al. 2024, section 3.3.4: 419 unexpected interruptions in 54 days on 16,384 GPUs."""
    assert math.isclose(LLAMA3_FAILURES_PER_GPU_HOUR, 1.9733e-5, rel_tol=1e-4)
    assert job_mean_time_between_failures(16384) / 3600 == pytest.approx(3.093, rel=1e-3)


def test_failures_scale_linearly_with_gpus():
    mtbf = job_mean_time_between_failures(np.array([1024, 2048]), 1e-5)
    assert mtbf[0] == pytest.approx(2 * mtbf[1])
    assert mtbf[0] == pytest.approx(3600 / (1024 * 1e-5))


@pytest.mark.parametrize(
    ("precision", "optimizer", "expected"),
    [
        ("bf16", "adamw", 14.0),
        ("fp8", "adamw", 14.0),
        ("bf16-pure", "adamw", 6.0),
        ("fp32", "adamw", 12.0),
        ("bf16", "sgd", 10.0),
        ("bf16", "adamw-8bit", 8.0 + 8.0 / 2048),
    ],
)
def test_checkpoint_bytes_per_parameter(precision, optimizer, expected):
    job = TrainingJob(model=LLAMA_8B, precision=precision, optimizer=optimizer)
    assert checkpoint_bytes_per_trained_param(job) == pytest.approx(expected)


def test_weights_only_checkpoint():
    job = TrainingJob(model=LLAMA_8B)
    assert checkpoint_bytes(job, weights_only=True) == 2 * LLAMA_8B.total_params
    assert checkpoint_bytes(job) == 14 * LLAMA_8B.total_params


def test_lora_checkpoint_holds_the_adapters():
    lora = LoraConfig(rank=8, targets=("q_proj", "v_proj"))
    job = TrainingJob(model=LLAMA_8B, method="lora", lora=lora)
    # q 4096 -> 4096 and v 4096 -> 1024, r * (d_in + d_out) each, 32 layers, fp32 + AdamW 8
    adapters = 32 * 8 * ((4096 + 4096) + (4096 + 1024))
    assert checkpoint_bytes(job) == pytest.approx(adapters * 12)


def test_freeze_checkpoint_keeps_frozen_weights_in_bf16():
    job = TrainingJob(model=LLAMA_8B, method="freeze", trainable_layers=2)
    trained = 2 * LLAMA_8B.layer_params(0)
    expected = trained * 14 + (LLAMA_8B.total_params - trained) * 2
    assert checkpoint_bytes(job) == pytest.approx(expected)


def test_asynchronous_checkpoint_stalls_only_for_the_host_copy():
    size = 14 * LLAMA_8B.total_params
    synchronous = checkpoint_stall_seconds(size, 64, storage_bandwidth=2e9)
    asynchronous = checkpoint_stall_seconds(size, 64, asynchronous=True, host_copy_bandwidth=25e9)
    assert synchronous == pytest.approx(size / 2e9)
    assert asynchronous == pytest.approx(size / (64 * 25e9))


def test_young_and_daly_intervals_by_hand():
    # C = 60 s, M = 10 h: sqrt(2 * 60 * 36000) = 2078.46; Daly adds
    # (1 + sqrt(60/72000)/3 + (60/72000)/9) and subtracts C: 2038.65
    assert young_interval(60, 36000) == pytest.approx(2078.461, rel=1e-6)
    assert daly_interval(60, 36000) == pytest.approx(2038.653, rel=1e-6)


def test_daly_interval_is_the_mtbf_when_checkpoints_cost_more_than_two_mtbf():
    assert daly_interval(np.array([100.0, 300.0]), 100.0).tolist()[1] == 100.0


@given(
    st.floats(min_value=1.0, max_value=600.0),
    st.floats(min_value=3600.0, max_value=1e7),
)
def test_daly_interval_is_close_to_the_best_goodput(checkpoint, mtbf):
    best = daly_interval(checkpoint, mtbf)
    at_best = goodput(best, checkpoint, mtbf, 0.0)
    for factor in (0.5, 0.8, 1.25, 2.0):
        assert at_best >= goodput(best * factor, checkpoint, mtbf, 0.0) - 1e-9


def test_goodput_first_order_terms():
    interval, checkpoint, mtbf, restart = 1800.0, 30.0, 360000.0, 600.0
    first_order = (
        interval / (interval + checkpoint) / (1 + (restart + (interval + checkpoint) / 2) / mtbf)
    )
    assert goodput(interval, checkpoint, mtbf, restart) == pytest.approx(first_order, rel=1e-4)
    assert expected_wall_seconds(100.0, interval, checkpoint, mtbf, restart) == pytest.approx(
        100.0 / goodput(interval, checkpoint, mtbf, restart)
    )


@given(
    st.integers(min_value=1, max_value=14),
    st.floats(min_value=1.0, max_value=3600.0),
    st.floats(min_value=0.0, max_value=3600.0),
)
def test_goodput_is_a_share_that_falls_with_gpu_count(log2_gpus, checkpoint, restart):
    gpus = np.array([2**log2_gpus, 2 ** (log2_gpus + 1)])
    mtbf = job_mean_time_between_failures(gpus)
    shares = goodput(daly_interval(checkpoint, mtbf), checkpoint, mtbf, restart)
    assert np.all((shares > 0) & (shares <= 1))
    assert shares[1] < shares[0]


def test_reliability_estimate_for_a_large_run():
    job = TrainingJob(model=load_model("llama-3.1-70b"))
    gpus = np.array([64, 1024, 16384])
    synchronous = estimate_reliability(job, gpus, storage_write_bandwidth=20e9)
    asynchronous = estimate_reliability(job, gpus, storage_write_bandwidth=20e9, asynchronous=True)
    assert np.all(np.diff(synchronous.goodput) < 0)
    assert np.all(asynchronous.goodput > synchronous.goodput)
    assert np.all(asynchronous.interval_seconds >= asynchronous.checkpoint_write_seconds)
    assert synchronous.checkpoint_bytes == pytest.approx(14 * job.model.total_params)
    assert math.isclose(synchronous.mtbf_seconds[2] / 3600, 3.093, rel_tol=1e-3)


def test_dataset_read_check():
    fine = dataset_read_check(1e6, storage_bandwidth=1e9)
    assert fine.required_bytes_per_second == pytest.approx(2e6)
    assert fine.ratio == pytest.approx(2e-3)
    assert fine.warning is None
    too_fast = dataset_read_check(np.array([1e6, 1e9]), storage_bandwidth=1e9, bytes_per_token=4)
    assert too_fast.ratio.tolist() == pytest.approx([4e-3, 4.0])
    assert too_fast.warning is not None and "4.00 GB/s" in too_fast.warning
