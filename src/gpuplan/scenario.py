"""Scenario: the YAML/JSON contract (the README's "Scenarios") turned into a job, a cluster and
a strategy.

A scenario is a file (``.yaml``, ``.yml`` or ``.json``) or the same mapping in Python. Every
error names the field and the accepted values, on one line.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from gpuplan.errors import InputError
from gpuplan.estimate.batch import default_global_batch
from gpuplan.estimate.frameworks import parse_framework
from gpuplan.estimate.reliability import (
    DEFAULT_RESTART_SECONDS,
    DEFAULT_STORAGE_READ_BANDWIDTH,
    DEFAULT_STORAGE_WRITE_BANDWIDTH,
    LLAMA3_FAILURES_PER_GPU_HOUR,
    ReliabilityEstimate,
    estimate_reliability,
)
from gpuplan.estimate.schedule import TrainingSettings, parse_training
from gpuplan.estimate.startup import StartupOptions
from gpuplan.hardware.cluster import Cluster
from gpuplan.limits import (
    JOB_RANGES,
    check_known_keys,
    in_range,
    parse_json,
    parse_yaml,
    read_text_file,
    shown,
)
from gpuplan.strategy import OFFLOAD, RECOMPUTE, SCHEDULES, Strategy
from gpuplan.units import parse_bandwidth, parse_bytes, parse_duration, parse_tokens
from gpuplan.workload.job import QUANTIZERS, LoraConfig, MoEOptions, TrainingJob
from gpuplan.workload.model import ModelSpec

TOP_LEVEL_KEYS = (
    "name",
    "model",
    "method",
    "lora",
    "precision",
    "optimizer",
    "framework",
    "seq_len",
    "document_tokens",
    "global_batch",
    "global_batch_tokens",
    "micro_batch",
    "tokens",
    "hardware",
    "strategy",
    "trainable_layers",
    "fused_loss",
    "compile",
    "moe",
    "fp8_recipe",
    "fp8_all_gather",
    "tp_comm_overlap",
    "fused_kernels",
    "attention_kernel",
    "reliability",
    "startup",
    "training",
)
MOE_KEYS = ("dispatch", "dispatch_dtype", "load_imbalance", "routing", "a2a_overlap")
STARTUP_KEYS = ("provisioning", "image_pull", "compile", "communicator_per_node")
RELIABILITY_KEYS = (
    "failures_per_gpu_hour",
    "restart",
    "storage_write_bandwidth",
    "storage_read_bandwidth",
    "asynchronous_checkpoints",
)
HARDWARE_KEYS = (
    "gpu",
    "count",
    "gpus_per_node",
    "inter_node",
    "nics_per_node",
    "p2p",
    "offer",
    "offers_file",
    "allow_unlisted_network",
    "power_limit_watts",
    "host_memory",
)
STRATEGY_KEYS = (
    "dp",
    "tp",
    "pp",
    "vpp",
    "cp",
    "ep",
    "etp",
    "zero",
    "shard_group",
    "micro_batch",
    "recompute",
    "offload",
    "flash_attention",
    "sequence_parallel",
    "schedule",
)
LORA_KEYS = ("rank", "alpha", "targets", "dropout", "double_quant", "quantizer")


class ScenarioError(InputError):
    """A scenario file or mapping that gpuplan cannot read."""


@dataclass(frozen=True)
class ReliabilityOptions:
    """Failure and storage assumptions; defaults in ``estimate/reliability.py`` with their sources."""

    failures_per_gpu_hour: float = LLAMA3_FAILURES_PER_GPU_HOUR
    restart_seconds: float = DEFAULT_RESTART_SECONDS
    storage_write_bandwidth: float = DEFAULT_STORAGE_WRITE_BANDWIDTH
    storage_read_bandwidth: float = DEFAULT_STORAGE_READ_BANDWIDTH
    asynchronous_checkpoints: bool = False

    def estimate(
        self, job: TrainingJob, num_gpus: Any, reclaims_per_hour: Any = 0.0
    ) -> ReliabilityEstimate:
        """Checkpoints, failures and goodput of ``job`` on ``num_gpus`` (an int or an array);
        ``reclaims_per_hour``: spot reclaims of the whole job, which shorten the interval."""
        return estimate_reliability(
            job,
            num_gpus,
            failures_per_gpu_hour=self.failures_per_gpu_hour,
            asynchronous=self.asynchronous_checkpoints,
            storage_write_bandwidth=self.storage_write_bandwidth,
            storage_read_bandwidth=self.storage_read_bandwidth,
            restart_seconds=self.restart_seconds,
            reclaims_per_hour=reclaims_per_hour,
        )


@dataclass(frozen=True)
class Scenario:
    """A parsed scenario. ``strategy_given`` lists the strategy keys the user fixed."""

    job: TrainingJob
    cluster: Cluster | None
    strategy: Strategy
    strategy_given: tuple[str, ...]
    name: str = ""
    reliability: ReliabilityOptions = field(default_factory=ReliabilityOptions)
    startup: StartupOptions = field(default_factory=StartupOptions)
    batch_rule: str = "scenario"
    """``scenario`` when the scenario gives the batch, else the rule that chose it
    (``estimate/batch.py``: ``compute-optimal`` or ``fine-tuning``)."""
    training: TrainingSettings = field(default_factory=TrainingSettings)
    """The ``training`` section: stage and learning-rate schedule for exports
    (``estimate/schedule.py``)."""


def read_scenario_file(path: str | Path) -> dict[str, Any]:
    """Read a YAML or JSON scenario file into a mapping."""
    file = Path(path)
    text = read_text_file(file, "scenario", ScenarioError)
    origin = f"scenario {shown(str(file))}"
    if file.suffix.lower() == ".json":
        data = parse_json(text, origin, ScenarioError)
    else:
        data = parse_yaml(text, origin, ScenarioError)
    if not isinstance(data, dict):
        raise ScenarioError.of("error.scenario_mapping", path=shown(str(file)))
    return data


WHOLE_NUMBER_RANGE = (0, 1 << 40)
"""Any whole number a scenario gives without a range of its own (parallel sizes, counts)."""


def _check_keys(mapping: Mapping[str, Any], accepted: tuple[str, ...], where: str) -> None:
    check_known_keys(mapping, accepted, where, ScenarioError)


def _integer(
    mapping: Mapping[str, Any],
    key: str,
    where: str,
    default: int | None = None,
    bounds: tuple[float, float] = WHOLE_NUMBER_RANGE,
) -> int | None:
    """``mapping[key]`` as a whole number within ``bounds`` (``default`` when absent; an explicit
    null where a default exists is an error, not a silent default)."""
    value = mapping.get(key, default)
    if value is None:
        if key in mapping and default is not None:
            raise ScenarioError.of("error.whole_number_null", field=f"{where}{key}")
        return None

    def not_whole() -> ScenarioError:
        return ScenarioError.of("error.whole_number", field=f"{where}{key}", value=shown(value))

    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise not_whole()
    try:
        number = float(str(value).replace("_", "").replace(",", ""))
    except ValueError as error:
        raise not_whole() from error
    if not number.is_integer():
        raise not_whole()
    return int(in_range(int(number), f"{where}{key}", *bounds, ScenarioError))


def _number(
    mapping: Mapping[str, Any], key: str, where: str, default: float, bounds: tuple[float, float]
) -> float:
    """``mapping[key]`` as a finite number within ``bounds`` (``default`` when absent)."""
    value = mapping.get(key, default)
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            value = float(value)
    return float(in_range(value, f"{where}{key}", *bounds, ScenarioError))


def _choice(mapping: Mapping[str, Any], key: str, where: str, accepted: tuple[str, ...]) -> str:
    """``mapping[key]`` (default: the first accepted value), one of ``accepted``."""
    value = str(mapping.get(key, accepted[0])).lower()
    if value not in accepted:
        raise ScenarioError.of(
            "error.not_one_of",
            field=f"{where}{key}",
            value=shown(value),
            accepted=", ".join(accepted),
        )
    return value


def _boolean(mapping: Mapping[str, Any], key: str, where: str, default: bool) -> bool:
    value = mapping.get(key, default)
    if isinstance(value, bool):
        return value
    raise ScenarioError.of("error.true_or_false", field=f"{where}{key}", value=repr(value))


def _is_file(text: str) -> bool:
    """Whether ``text`` names an existing file (a name too long for a path names none)."""
    try:
        return Path(text).is_file()
    except (OSError, ValueError):
        return False


def resolve_model(value: Any) -> ModelSpec:
    """A catalog name, a path to a config.json, a Hugging Face id (``workload.hf_cache``), or a
    mapping of config.json keys. A catalog name wins over a file of the same name, so a name
    never opens a file by accident, and a file wins over a Hugging Face id."""
    from gpuplan.catalog import load_model, model_entries

    if isinstance(value, Mapping):
        return ModelSpec.from_hf_config(
            value, name=str(value.get("name") or value.get("_name_or_path") or "custom")
        )
    if isinstance(value, str) and value.strip():
        text = value.strip()
        if text.lower() in model_entries():
            return load_model(text)
        if text.endswith(".json") or _is_file(text):
            return ModelSpec.from_hf_config(Path(text), name=Path(text).stem)
        from gpuplan.workload import hf_cache

        if hf_cache.is_repo_id(text):
            catalog_name = hf_cache.catalog_name_for(text)
            if catalog_name is not None:
                return load_model(catalog_name)
            cached = hf_cache.cached_config(text)
            if cached is None:
                raise ScenarioError.of("error.hf_not_cached", **hf_cache.not_cached_values(text))
            return ModelSpec.from_hf_config(cached, name=text)
        return load_model(text)
    raise ScenarioError.of("error.scenario_model")


def parse_scenario(source: Mapping[str, Any] | str | Path) -> Scenario:
    """Parse a scenario mapping or file (the README's "Scenarios")."""
    data = dict(source) if isinstance(source, Mapping) else read_scenario_file(source)
    _check_keys(data, TOP_LEVEL_KEYS, "")
    if "model" not in data:
        raise ScenarioError.of("error.scenario_model_missing")
    model = resolve_model(data["model"])

    seq_len = _integer(data, "seq_len", "", 4096, JOB_RANGES["seq_len"]) or 0
    if "global_batch" in data and "global_batch_tokens" in data:
        raise ScenarioError.of("error.scenario_batch_both")
    if "global_batch_tokens" in data:
        batch_tokens = parse_tokens(data["global_batch_tokens"])
        in_range(batch_tokens, "global_batch_tokens", *JOB_RANGES["global_batch_tokens"])
        global_batch = max(1, round(batch_tokens / seq_len))
    else:
        global_batch = _integer(data, "global_batch", "", None, JOB_RANGES["global_batch"]) or 0
    tokens = parse_tokens(data.get("tokens", 0) or 0)
    if tokens:
        in_range(tokens, "tokens", *JOB_RANGES["tokens"], ScenarioError)

    lora_data = data.get("lora") or {}
    if not isinstance(lora_data, Mapping):
        raise ScenarioError.of("error.scenario_lora")
    _check_keys(lora_data, LORA_KEYS, "lora.")
    lora = LoraConfig(
        rank=_integer(lora_data, "rank", "lora.", 16, (1, 65_536)) or 0,
        alpha=_number(lora_data, "alpha", "lora.", 32, (0, 1e6)),
        targets=LoraConfig.parse_targets(lora_data.get("targets", "all-linear")),
        dropout=_number(lora_data, "dropout", "lora.", 0.0, (0, 0.99)),
        double_quant=_boolean(lora_data, "double_quant", "lora.", True),
        quantizer=_choice(lora_data, "quantizer", "lora.", QUANTIZERS),
    )

    hardware = data.get("hardware") or {}
    if not isinstance(hardware, Mapping):
        raise ScenarioError.of("error.scenario_hardware")
    _check_keys(hardware, HARDWARE_KEYS, "hardware.")
    cluster = _parse_cluster(hardware)

    strategy_data = data.get("strategy") or {}
    if not isinstance(strategy_data, Mapping):
        raise ScenarioError.of("error.scenario_strategy")
    _check_keys(strategy_data, STRATEGY_KEYS, "strategy.")
    micro_batch = _integer(
        strategy_data, "micro_batch", "strategy.", None, JOB_RANGES["micro_batch"]
    ) or _integer(data, "micro_batch", "", 1, JOB_RANGES["micro_batch"])
    count = cluster.count if cluster else 1
    strategy = Strategy(
        dp=_integer(strategy_data, "dp", "strategy.", 0) or 0,
        tp=_integer(strategy_data, "tp", "strategy.", 1) or 0,
        pp=_integer(strategy_data, "pp", "strategy.", 1) or 0,
        vpp=_integer(strategy_data, "vpp", "strategy.", 1) or 0,
        cp=_integer(strategy_data, "cp", "strategy.", 1) or 0,
        ep=_integer(strategy_data, "ep", "strategy.", 1) or 0,
        etp=_integer(strategy_data, "etp", "strategy.", 0) or 0,
        zero=_integer(strategy_data, "zero", "strategy.", 1 if count > 1 else 0) or 0,
        shard_group=_integer(strategy_data, "shard_group", "strategy.", 0) or 0,
        micro_batch=micro_batch or 0,
        recompute=_choice(strategy_data, "recompute", "strategy.", RECOMPUTE),
        offload=_choice(strategy_data, "offload", "strategy.", OFFLOAD),
        flash_attention=_boolean(strategy_data, "flash_attention", "strategy.", True),
        sequence_parallel=_boolean(strategy_data, "sequence_parallel", "strategy.", True),
        schedule=_choice(strategy_data, "schedule", "strategy.", SCHEDULES),
    )
    framework, framework_parts = parse_framework(data.get("framework", "auto"))
    job = TrainingJob(
        model=model,
        method=str(data.get("method", "full")),
        precision=str(data.get("precision", "bf16")),
        optimizer=str(data.get("optimizer", "adamw")),
        framework=framework,
        framework_parts=framework_parts,
        seq_len=seq_len,
        document_tokens=_integer(data, "document_tokens", "", None, JOB_RANGES["document_tokens"]),
        global_batch=global_batch or 1,
        tokens=tokens,
        lora=lora,
        trainable_layers=_integer(data, "trainable_layers", "", None, (0, 1 << 20)),
        fused_loss=_boolean(data, "fused_loss", "", False),
        compile=_boolean(data, "compile", "", False),
        moe=_parse_moe(data.get("moe") or {}),
        fp8_recipe=str(data.get("fp8_recipe", "auto")),
        fp8_all_gather=_boolean(data, "fp8_all_gather", "", False),
        tp_comm_overlap=_boolean(data, "tp_comm_overlap", "", False),
        fused_kernels=_boolean(data, "fused_kernels", "", False),
        attention_kernel=str(data["attention_kernel"]) if data.get("attention_kernel") else None,
    )
    batch_rule = "scenario"
    if not global_batch:
        chosen, batch_rule = default_global_batch(job)
        job = replace(job, global_batch=chosen)
    reliability = _parse_reliability(data.get("reliability") or {})
    given = tuple(key for key in STRATEGY_KEYS if key in strategy_data) + (
        ("micro_batch",) if "micro_batch" in data and "micro_batch" not in strategy_data else ()
    )
    return Scenario(
        job=job,
        cluster=cluster,
        strategy=strategy,
        strategy_given=given,
        name=str(data.get("name", "")),
        reliability=reliability,
        startup=_parse_startup(data.get("startup")),
        training=parse_training(data.get("training")),
        batch_rule=batch_rule,
    )


def _parse_cluster(hardware: Mapping[str, Any]) -> Cluster | None:
    """``hardware``: a GPU in its usual servers (``gpus_per_node``, ``inter_node``,
    ``nics_per_node``, ``p2p`` override them), or ``offer``: the machine an offer sells,
    ``count`` GPUs of it; the offer is the catalog's or, with ``offers_file`` (a path or a list
    of paths, merged in order), one of the user's own offers files."""
    from gpuplan.catalog import load_gpu

    count = _integer(hardware, "count", "hardware.", 1, JOB_RANGES["count"]) or 0
    if hardware.get("offer"):
        from gpuplan.hardware.topology import assumed_topology
        from gpuplan.pricing.offers import OfferBook

        offers_file = hardware.get("offers_file")
        if offers_file is not None and not (
            isinstance(offers_file, str)
            or (isinstance(offers_file, list) and all(isinstance(p, str) for p in offers_file))
        ):
            raise ScenarioError.of("error.scenario_offers_file", value=shown(offers_file))
        offer = OfferBook.build(offers_file).get(str(hardware["offer"]))
        gpu = load_gpu(offer.gpu)
        if hardware.get("gpu") and load_gpu(str(hardware["gpu"])).id != gpu.id:
            raise ScenarioError.of("error.scenario_offer_gpu", offer=offer.id, gpu=gpu.id)
        if count < 1 or count % offer.gpus:
            raise ScenarioError.of(
                "error.scenario_offer_count", offer=offer.id, gpus=offer.gpus, count=count
            )
        topology = offer.topology or assumed_topology(gpu, offer.gpus, "GPU catalog")
        cluster = Cluster.of_instances(
            gpu,
            topology,
            count // offer.gpus,
            allow_unlisted_network=_boolean(hardware, "allow_unlisted_network", "hardware.", False),
        )
        ram = _host_memory(hardware)
        if ram is None and offer.ram_gb is not None:
            ram = offer.ram_gb * 1e9
        return replace(cluster, power_limit_watts=_power_limit(hardware), host_memory_bytes=ram)
    if not hardware.get("gpu"):
        return None
    p2p = hardware.get("p2p")
    if p2p is not None and not isinstance(p2p, bool):
        raise ScenarioError.of("error.true_or_false", field="hardware.p2p", value=repr(p2p))
    return Cluster(
        gpu=load_gpu(str(hardware["gpu"])),
        count=count,
        gpus_per_node=_integer(hardware, "gpus_per_node", "hardware.", 0) or 0,
        inter_node=str(hardware.get("inter_node") or ""),
        nics_per_node=_integer(hardware, "nics_per_node", "hardware.", 0) or 0,
        peer_to_peer=p2p,
        power_limit_watts=_power_limit(hardware),
        host_memory_bytes=_host_memory(hardware),
    )


def _host_memory(hardware: Mapping[str, Any]) -> float | None:
    """``hardware.host_memory``: RAM per node ("2TB", "1.5TiB" or bytes), or None."""
    value = hardware.get("host_memory")
    if value is None:
        return None
    try:
        size = parse_bytes(value)
    except InputError as error:
        raise ScenarioError.of(
            "error.in_field", field="hardware.host_memory", error=error
        ) from error
    if size <= 0:
        raise ScenarioError.of("error.scenario_host_memory", value=shown(value))
    return float(size)


def _power_limit(hardware: Mapping[str, Any]) -> float | None:
    value = hardware.get("power_limit_watts")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ScenarioError.of("error.scenario_power_limit", value=repr(value))
    return float(value)


def _parse_startup(value: Any) -> StartupOptions:
    """``startup: 20m`` (the whole start-up) or a mapping of :data:`STARTUP_KEYS` durations."""
    if value is None:
        return StartupOptions()
    if not isinstance(value, Mapping):
        return StartupOptions(total_seconds=parse_duration(value))
    _check_keys(value, STARTUP_KEYS, "startup.")
    defaults = StartupOptions()
    fields = {
        "provisioning": "provisioning_seconds",
        "image_pull": "image_pull_seconds",
        "compile": "compile_seconds",
        "communicator_per_node": "communicator_seconds_per_node",
    }
    return StartupOptions(
        **{
            attribute: parse_duration(value.get(key, getattr(defaults, attribute)))
            for key, attribute in fields.items()
        }
    )


def _section(value: Any, name: str, keys: tuple[str, ...]) -> Mapping[str, Any]:
    """A scenario section: a mapping of ``keys`` only."""
    if not isinstance(value, Mapping):
        raise ScenarioError.of("error.section", field=name, accepted=", ".join(keys))
    _check_keys(value, keys, f"{name}.")
    return value


def _parse_moe(value: Any) -> MoEOptions:
    value = _section(value, "moe", MOE_KEYS)
    defaults = MoEOptions()
    imbalance = value.get("load_imbalance", defaults.load_imbalance)
    if isinstance(imbalance, bool) or not isinstance(imbalance, int | float):
        raise ScenarioError.of("error.scenario_load_imbalance", value=repr(imbalance))
    return MoEOptions(
        dispatch=str(value.get("dispatch", defaults.dispatch)),
        dispatch_dtype=str(value.get("dispatch_dtype", defaults.dispatch_dtype)),
        load_imbalance=float(imbalance),
        routing=str(value.get("routing", defaults.routing)),
        a2a_overlap=value.get("a2a_overlap", defaults.a2a_overlap),
    )


def _parse_reliability(value: Any) -> ReliabilityOptions:
    value = _section(value, "reliability", RELIABILITY_KEYS)
    defaults = ReliabilityOptions()
    rate = value.get("failures_per_gpu_hour", defaults.failures_per_gpu_hour)
    if isinstance(rate, bool) or not isinstance(rate, int | float) or rate < 0:
        raise ScenarioError.of("error.scenario_failure_rate", value=repr(rate))
    bandwidths = {
        key: parse_bandwidth(value.get(key, getattr(defaults, key)))
        for key in ("storage_write_bandwidth", "storage_read_bandwidth")
    }
    for key, bandwidth in bandwidths.items():
        if bandwidth <= 0:
            raise ScenarioError.of(
                "error.above_zero", field=f"reliability.{key}", value=shown(value[key])
            )
    return ReliabilityOptions(
        failures_per_gpu_hour=float(rate),
        restart_seconds=parse_duration(value.get("restart", defaults.restart_seconds)),
        storage_write_bandwidth=bandwidths["storage_write_bandwidth"],
        storage_read_bandwidth=bandwidths["storage_read_bandwidth"],
        asynchronous_checkpoints=_boolean(value, "asynchronous_checkpoints", "reliability.", False),
    )
