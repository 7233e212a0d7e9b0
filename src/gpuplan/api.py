"""The Python API (the contract in ``gpuplan``'s package docstring): what ``gpuplan.estimate``
and ``gpuplan.plan`` compute, and the whole plan search the CLI and the web app render.

``estimate``, ``memory_estimate`` and ``plan_search`` compute Python values (money as
``Decimal``); the use cases (``gpuplan.services``) make typed results of them
(``gpuplan.results``), and the public functions ``gpuplan.estimate`` and ``gpuplan.plan``
encode those with :func:`gpuplan.jsonable.jsonable`, so their results are JSON as they are
(``json.dumps`` needs no encoder).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from gpuplan.errors import InputError
from gpuplan.estimate.efficiency import MachineMeasurements
from gpuplan.estimate.frameworks import (
    FRAMEWORK_CODES,
    describe_framework,
    resolve_framework_codes,
)
from gpuplan.estimate.interval import duration_bounds, speed_interval
from gpuplan.estimate.memory import estimate_memory
from gpuplan.estimate.reliability import dataset_read_check
from gpuplan.estimate.startup import startup_seconds
from gpuplan.estimate.time import estimate_step_time
from gpuplan.jsonable import jsonable
from gpuplan.notices import config_defaults_notices
from gpuplan.scenario import Scenario, parse_scenario
from gpuplan.units import SECONDS_PER_DAY


def _scalar(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value


def machine_measurements(profile_id: int | None) -> MachineMeasurements | None:
    """The calibration profile of stored bench run ``profile_id`` as the speed model's input."""
    if profile_id is None:
        return None
    from gpuplan.bench.profile import load_profile

    profile = load_profile(profile_id)
    if not profile.gpu_id:
        raise InputError.of("error.profile_no_gpu", run=profile_id)
    return MachineMeasurements(
        gpu_id=profile.gpu_id,
        matmul_ceiling=dict(profile.matmul_efficiency),
        hbm_efficiency=profile.hbm_efficiency,
        intra_node_link_efficiency=profile.intra_node_bus_bandwidth_efficiency,
        network_efficiency=profile.inter_node_bus_bandwidth_efficiency,
        source=f"gpuplan bench run {profile.source_run_id} ({profile.source_date})",
    )


def estimate(
    scenario: Mapping[str, Any] | str | Path | Scenario, profile: int | None = None
) -> dict[str, Any]:
    """Memory, throughput, goodput and duration of one training layout on one cluster, in base
    units (the JSON contract in ``gpuplan``'s docstring, with the step-time breakdown and
    reliability). ``warnings`` holds sentences and notices (``{"code", "values", "text"}``).

    ``scenario`` is a mapping, a YAML/JSON path, or a parsed :class:`Scenario`; its
    ``hardware.gpu`` is required (``plan`` searches hardware instead). ``profile`` is a stored
    ``gpuplan bench`` run whose measurements replace the built-in efficiencies for its GPU.
    """
    measured = machine_measurements(profile)
    parsed, strategy, layout, memory, framework = _resolved_layout(scenario)
    job, cluster = parsed.job, parsed.cluster
    assert cluster is not None
    warnings: list[Any] = [
        *config_defaults_notices(job.model),
        *layout_warnings(parsed, strategy),
        *host_memory_warnings(memory),
    ]
    step = estimate_step_time(
        job, cluster, layout, flash_attention=strategy.flash_attention, measured=measured
    )
    if measured is not None:
        if measured.applies_to(cluster.gpu.id):
            warnings.append(f"calibrated with {measured.source}")
        else:
            warnings.append(
                f"profile is for {measured.gpu_id}, not {cluster.gpu.id}: built-in efficiencies used"
            )
    options = parsed.reliability
    reliability = options.estimate(job, cluster.count)
    goodput = float(reliability.goodput)
    effective_tokens_per_second = float(step.tokens_per_second) * goodput
    startup = float(startup_seconds(job, cluster.nodes, cluster.gpus_per_node, parsed.startup))
    training = job.tokens / effective_tokens_per_second if job.tokens else None
    seconds = startup + training if training is not None else None
    interval = speed_interval(
        cluster.gpu.architecture, step.matmul_dtype, job.model.is_moe, cluster.count
    )
    low_factor, high_factor = (interval.low, interval.high) if interval else (1.0, 1.0)
    shortest, longest = (
        duration_bounds(startup, training, interval) if training is not None else (None, None)
    )
    if not job.tokens:
        warnings.append("no tokens given: add tokens (e.g. 20B) to get the training duration")
    data_check = dataset_read_check(float(step.tokens_per_second), options.storage_read_bandwidth)
    if data_check.warning:
        warnings.append(data_check.warning)
    bubble_share = float(step.breakdown["bubble"] / step.step_seconds)
    if bubble_share > 0.2:
        warnings.append(
            f"the pipeline bubble is {bubble_share:.0%} of the step: raise the micro-batch count "
            "(global_batch / (dp * micro_batch)) or interleave stages (vpp)"
        )
    if step.matmul_dtype != ("fp8" if job.precision == "fp8" else step.matmul_dtype):
        warnings.append(
            f"{cluster.gpu.id} has no fp8 tensor cores: matmuls run in {step.matmul_dtype}"
        )
    return {
        "memory": _memory_dict(memory),
        "throughput": {
            "step_seconds": _scalar(step.step_seconds),
            "tokens_per_second": _scalar(step.tokens_per_second),
            "tokens_per_second_low": _scalar(step.tokens_per_second) * low_factor,
            "tokens_per_second_high": _scalar(step.tokens_per_second) * high_factor,
            "tokens_per_second_per_gpu": _scalar(step.tokens_per_second_per_gpu),
            "model_flops_per_second_per_gpu": _scalar(step.model_flops_per_second_per_gpu),
            "mfu": _scalar(step.mfu),
            "hfu": _scalar(step.hfu),
            "matmul_dtype": step.matmul_dtype,
            "breakdown": {name: _scalar(value) for name, value in step.breakdown.items()},
        },
        "reliability": {
            "goodput": goodput,
            "checkpoint_bytes": _scalar(reliability.checkpoint_bytes),
            "checkpoint_stall_seconds": _scalar(reliability.checkpoint_stall_seconds),
            "checkpoint_interval_seconds": _scalar(reliability.interval_seconds),
            "mean_time_between_failures_seconds": _scalar(reliability.mtbf_seconds),
            "restart_seconds": _scalar(reliability.restart_seconds),
            "lost_seconds_per_interruption": _scalar(reliability.lost_seconds_per_interruption),
            "dataset_read_bytes_per_second": _scalar(data_check.required_bytes_per_second),
        },
        "duration": {
            "seconds": seconds,
            "days": seconds / SECONDS_PER_DAY if seconds is not None else None,
            "seconds_low": shortest,
            "seconds_high": longest,
            "days_low": shortest / SECONDS_PER_DAY if shortest is not None else None,
            "days_high": longest / SECONDS_PER_DAY if longest is not None else None,
            "startup_seconds": startup,
            "training_seconds": training,
            "tokens": job.tokens,
        },
        "interval": interval.to_dict() if interval else None,
        **_layout_dict(parsed, strategy, framework),
        "warnings": warnings,
    }


def memory_estimate(scenario: Mapping[str, Any] | str | Path | Scenario) -> dict[str, Any]:
    """The ``memory``, ``strategy``, ``model``, ``hardware`` and ``job`` parts of
    :func:`estimate`, without the speed model: it needs no bandwidth or peak FLOP/s, so a GPU
    the speed model cannot time (no sourced HBM bandwidth, or a ``speed_model_gap``) still gets
    its memory answer; ``warnings`` names the model's assumed config keys, if any."""
    parsed, strategy, _, memory, framework = _resolved_layout(scenario)
    return {
        "memory": _memory_dict(memory),
        **_layout_dict(parsed, strategy, framework),
        "warnings": config_defaults_notices(parsed.job.model),
    }


def _resolved_layout(
    scenario: Mapping[str, Any] | str | Path | Scenario,
) -> tuple[Scenario, Any, Any, Any, str]:
    """The parsed scenario (its chosen batch rounded to the layout), its resolved strategy,
    that strategy's layout, the layout's memory and its framework; a scenario without hardware
    is an error."""
    parsed = scenario if isinstance(scenario, Scenario) else parse_scenario(scenario)
    if parsed.cluster is None:
        raise InputError.of("error.estimate_no_gpu")
    cluster = parsed.cluster
    if parsed.batch_rule != "scenario":
        parsed = replace(parsed, job=batch_for_layout(parsed, cluster))
    strategy = parsed.strategy.resolved(parsed.job, cluster)
    layout = strategy.layout(parsed.job)
    memory = estimate_memory(
        parsed.job,
        layout,
        cluster.capacity_bytes,
        flash_attention=strategy.flash_attention,
        gpus_per_node=min(cluster.gpus_per_node, cluster.count),
        host_capacity_bytes=cluster.host_memory_bytes,
    )
    framework = FRAMEWORK_CODES[
        int(resolve_framework_codes(parsed.job.framework, layout.tp, layout.pp, layout.zero))
    ]
    return parsed, strategy, layout, memory, framework


def _memory_dict(memory: Any) -> dict[str, Any]:
    capacity = _scalar(memory.host_capacity_bytes)
    known = capacity == capacity
    return {
        "allocated_bytes": _scalar(memory.allocated_bytes),
        "reserved_bytes": _scalar(memory.reserved_bytes),
        "peak_bytes": _scalar(memory.peak_bytes),
        "parts": {name: _scalar(value) for name, value in memory.parts.items()},
        "fits": bool(memory.fits),
        "capacity_bytes": memory.capacity_bytes,
        "safety_margin": memory.safety_margin,
        "host": {
            "bytes_per_node": _scalar(memory.host_bytes),
            "pinned_bytes_per_node": _scalar(memory.host_pinned_bytes),
            "capacity_bytes_per_node": capacity if known else None,
            "fits": bool(memory.host_fits) if known else None,
        },
    }


def _layout_dict(parsed: Scenario, strategy: Any, framework: str) -> dict[str, Any]:
    job, cluster = parsed.job, parsed.cluster
    assert cluster is not None
    return {
        "strategy": {**strategy.to_dict(), "framework": framework},
        "framework": describe_framework(job, FRAMEWORK_CODES.index(framework)),
        "model": {
            "name": job.model.name,
            "total_params": job.model.total_params,
            "active_params": job.model.active_params,
        },
        "hardware": cluster.describe(),
        "job": {
            "global_batch": job.global_batch,
            "global_batch_tokens": job.global_batch_tokens,
            "batch_rule": parsed.batch_rule,
        },
    }


def batch_for_layout(scenario: Scenario, cluster: Any) -> Any:
    """The job with a batch gpuplan chose rounded up to a multiple of ``dp * micro_batch``, so
    that every data-parallel rank gets whole micro-batches."""
    strategy = scenario.strategy
    model_parallel = max(strategy.tp * strategy.pp * strategy.cp, 1)
    dp = strategy.dp or max(cluster.count // model_parallel, 1)
    step = dp * max(strategy.micro_batch, 1)
    batch = -(-scenario.job.global_batch // step) * step
    return replace(scenario.job, global_batch=batch)


def host_memory_warnings(memory: Any) -> list[str]:
    """What CPU offload asks of each node's RAM, when it does not fit or the RAM is unknown."""
    from gpuplan.estimate.memory import HOST_MEMORY_MARGIN
    from gpuplan.units import format_bytes

    need = float(memory.host_bytes)
    if need <= 0:
        return []
    capacity = float(memory.host_capacity_bytes)
    pinned = format_bytes(float(memory.host_pinned_bytes), binary=False)
    if capacity != capacity:
        return [
            f"offload keeps {format_bytes(need, binary=False)} per node in host memory "
            f"({pinned} pinned); the node's RAM is unknown: give hardware.host_memory"
        ]
    if bool(memory.host_fits):
        return []
    return [
        f"offload needs {format_bytes(need, binary=False)} of host memory per node ({pinned} "
        f"pinned), more than {1 - HOST_MEMORY_MARGIN:.0%} of its "
        f"{format_bytes(capacity, binary=False)} RAM"
    ]


def layout_warnings(scenario: Scenario, strategy: Any) -> list[str]:
    """Layouts a practitioner would avoid, said in words."""
    warnings: list[str] = []
    cluster = scenario.cluster
    assert cluster is not None
    if strategy.tp > cluster.gpus_per_node:
        warnings.append(
            f"tp={strategy.tp} spans nodes ({cluster.gpus_per_node} GPUs per node): tensor-parallel "
            "all-reduces would cross the network on every layer"
        )
    if strategy.expert_tensor_parallel != strategy.tp:
        warnings.append(
            f"etp={strategy.expert_tensor_parallel} is estimate-only: the memory counts it, the "
            f"step time splits the experts by tp={strategy.tp}"
        )
    micro_batches = strategy.micro_batches(scenario.job)
    if strategy.pp > 1 and micro_batches < strategy.pp:
        warnings.append(
            f"{micro_batches} micro-batches per step with pp={strategy.pp}: the pipeline never fills; "
            "raise global_batch or lower micro_batch"
        )
    return warnings


def plan(
    scenario: Mapping[str, Any] | str | Path | Scenario,
    objective: str = "cost",
    budget: str | None = None,
    deadline: str | float | None = None,
    **options: Any,
) -> list[dict[str, Any]]:
    """Feasible plans for ``scenario``, best first, as JSON values (``gpuplan``'s docstring):
    base units, and money as numbers in the currency each ``cost`` names.

    ``hardware`` and ``strategy`` may be left out of the scenario: the search chooses them.
    ``budget`` is an amount with a currency (``"¥2000"``, ``"5000 USD"``), ``deadline`` a
    duration (``"30d"``) or seconds; other options are :class:`gpuplan.search.PlanRequest`
    fields (``max_gpus``, ``gpus``, ``exclude_gpus``, ``providers``, ``billing``, ``headroom``,
    ``currency``, ``limit``). ``plan_search`` returns the whole result with ``evaluated`` and
    the job's ``warnings``.
    """
    from gpuplan.services.plan import plan as search

    return list(jsonable(search(scenario, objective, budget, deadline, **options).plans))


def plan_search(
    scenario: Mapping[str, Any] | str | Path | Scenario,
    objective: str = "cost",
    budget: str | None = None,
    deadline: str | float | None = None,
    **options: Any,
) -> dict[str, Any]:
    """The whole search result: ``{"plans", "pareto", "evaluated", "seconds", "explanation",
    "warnings", ...}``; ``warnings`` holds what applies to every plan (the model's assumed
    config keys), each row's own ``warnings`` the rest."""
    from gpuplan.search import PlanRequest
    from gpuplan.search import plan as run_search
    from gpuplan.units import parse_amount, parse_duration

    parsed = scenario if isinstance(scenario, Scenario) else parse_scenario(scenario)
    profile = options.pop("profile", None)
    request = PlanRequest(
        scenario=parsed,
        measured=machine_measurements(profile),
        objective=objective,
        budget=parse_amount(budget) if budget else None,
        deadline_seconds=parse_duration(deadline) if deadline is not None else None,
        **options,
    )
    return {**run_search(request), "warnings": config_defaults_notices(parsed.job.model)}
