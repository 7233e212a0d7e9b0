"""The settings of a model that change no size but must travel with it to a training engine:
the rotary base and its long-context scaling, the norm epsilon and a mixture-of-experts
router's scoring and balancing, read from config.json under the names Hugging Face configs use
(``rope_theta``; ``rms_norm_eps``, ``layer_norm_eps``, ``layer_norm_epsilon``,
``layernorm_epsilon``; ``rope_scaling``; :func:`read_router_settings`). Exports write them
(``gpuplan.export``); the memory and speed models do not need them."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpuplan.errors import InputError
from gpuplan.limits import key_name, shown

NORM_EPSILON_KEYS = ("rms_norm_eps", "layer_norm_eps", "layer_norm_epsilon", "layernorm_epsilon")
ROPE_THETA_RANGE = (1.0, 1e12)
NORM_EPSILON_RANGE = (1e-12, 0.1)
MAX_SCALING_ENTRIES = 16
ScalingValue = str | int | float | bool | tuple[float, ...]
SCORE_FUNCTIONS = ("softmax", "sigmoid")
ROUTER_SCALING_RANGE = (1e-3, 1e3)
AUX_LOSS_RANGE = (0.0, 10.0)


class ModelSettingsError(InputError):
    """A rotary base, norm epsilon, RoPE scaling or router setting that no model uses."""


@dataclass(frozen=True)
class RouterSettings:
    """How a mixture-of-experts router picks and weighs its ``k`` experts, and how training
    keeps the experts balanced.

    ``score_function`` turns logits into scores (``softmax``; ``sigmoid``, DeepSeek-V3);
    ``normalizes_top_k``: the ``k`` chosen weights are renormalised to sum to one (Mixtral;
    ``norm_topk_prob``); ``num_groups`` / ``group_top_k``: experts fall in groups and a token
    picks among the best ``group_top_k`` groups only (``n_group``, ``topk_group``;
    DeepSeek-V2 section 2.1.2 device-limited, DeepSeek-V3 node-limited routing);
    ``scaling_factor`` multiplies the routed weights (``routed_scaling_factor``);
    ``expert_bias``: auxiliary-loss-free balancing by a per-expert bias added to the scores
    for the choice only (``topk_method = "noaux_tc"``; DeepSeek-V3, arXiv:2412.19437 section
    2.1.2); ``aux_loss_coeff``: the balance loss weight (``router_aux_loss_coef``,
    ``aux_loss_alpha``; ``None``: the config gives none), over each sequence when
    ``aux_loss_per_sequence`` (``seq_aux``, DeepSeek-V2) else over the batch (Switch
    Transformer, arXiv:2101.03961 eq. 4)."""

    score_function: str = "softmax"
    normalizes_top_k: bool = True
    num_groups: int | None = None
    group_top_k: int | None = None
    scaling_factor: float | None = None
    expert_bias: bool = False
    aux_loss_coeff: float | None = None
    aux_loss_per_sequence: bool = False


@dataclass(frozen=True)
class ModelSettings:
    """``rope_theta`` and ``norm_eps`` as the config gives them (``None``: not given, the
    engine's default applies); ``rope_scaling`` as ``(key, value)`` pairs, empty without;
    ``router`` for a mixture-of-experts model, else ``None``."""

    rope_theta: float | None = None
    norm_eps: float | None = None
    rope_scaling: tuple[tuple[str, ScalingValue], ...] = ()
    router: RouterSettings | None = None

    def scaling(self) -> dict[str, ScalingValue]:
        return dict(self.rope_scaling)


NO_SETTINGS = ModelSettings()
"""A config that gives none of them."""


def _number(value: object, key: str, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ModelSettingsError.of("error.number", field=f"model.{key}", value=shown(value))
    if not math.isfinite(value) or not low <= value <= high:
        raise ModelSettingsError.of(
            "error.out_of_range",
            field=f"model.{key}",
            value=shown(value),
            low=f"{low:g}",
            high=f"{high:g}",
        )
    return float(value)


def _scaling_value(value: object, key: str) -> ScalingValue:
    if isinstance(value, str | bool):
        return value
    if isinstance(value, int | float):
        return _number(value, f"rope_scaling.{key}", -1e12, 1e12)
    if isinstance(value, list) and len(value) <= 1024:
        return tuple(_number(item, f"rope_scaling.{key}", -1e12, 1e12) for item in value)
    raise ModelSettingsError.of(
        "error.rope_scaling_value", field=f"model.rope_scaling.{key}", value=shown(value)
    )


def read_model_settings(values: Mapping[str, Any]) -> ModelSettings:
    """The settings of a config.json mapping, each checked (finite, in range, the right type)."""
    theta = values.get("rope_theta")
    rope_theta = None if theta is None else _number(theta, "rope_theta", *ROPE_THETA_RANGE)
    norm_eps = None
    for key in NORM_EPSILON_KEYS:
        if values.get(key) is not None:
            norm_eps = _number(values[key], key, *NORM_EPSILON_RANGE)
            break
    scaling = values.get("rope_scaling")
    pairs: tuple[tuple[str, ScalingValue], ...] = ()
    if scaling is not None:
        if not isinstance(scaling, Mapping) or len(scaling) > MAX_SCALING_ENTRIES:
            raise ModelSettingsError.of(
                "error.rope_scaling_size", most=MAX_SCALING_ENTRIES, value=shown(scaling)
            )
        for key in scaling:
            if not isinstance(key, str):
                raise ModelSettingsError.of(
                    "error.keys_are_names", field=f"model.rope_scaling.{key_name(key)}"
                )
        pairs = tuple((key, _scaling_value(value, key)) for key, value in sorted(scaling.items()))
    return ModelSettings(rope_theta, norm_eps, pairs)


def _whole(value: object, key: str, low: int, high: int) -> int:
    number = _number(value, key, low, high)
    if not number.is_integer():
        raise ModelSettingsError.of("error.whole_number", field=f"model.{key}", value=shown(value))
    return int(number)


def _switch(values: Mapping[str, Any], key: str, default: bool) -> bool:
    value = values.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ModelSettingsError.of("error.true_or_false", field=f"model.{key}", value=shown(value))
    return value


def read_router_settings(
    values: Mapping[str, Any],
    num_experts: int,
    default_score_function: str = "softmax",
    always_normalizes: bool = False,
) -> RouterSettings:
    """The router of a config.json mapping with ``num_experts`` routed experts.

    ``scoring_func`` (``default_score_function`` when absent: the family's code fixes it);
    ``norm_topk_prob`` (``always_normalizes``: the family's code renormalises whatever the
    config says, as Mixtral's does); ``n_group`` and ``topk_group``, which must divide and fit
    the experts; ``routed_scaling_factor``; ``topk_method`` (``noaux_tc``: expert bias);
    ``router_aux_loss_coef`` or ``aux_loss_alpha`` with ``seq_aux``.
    """
    score = values.get("scoring_func") or default_score_function
    if score not in SCORE_FUNCTIONS:
        raise ModelSettingsError.of(
            "error.not_one_of",
            field="model.scoring_func",
            value=shown(score),
            accepted=", ".join(SCORE_FUNCTIONS),
        )
    normalizes = always_normalizes or _switch(values, "norm_topk_prob", False)
    groups = group_top_k = None
    if values.get("n_group") is not None:
        groups = _whole(values["n_group"], "n_group", 1, num_experts)
        if num_experts % groups:
            raise ModelSettingsError.of("error.router_groups", groups=groups, experts=num_experts)
        group_top_k = _whole(values.get("topk_group", groups), "topk_group", 1, groups)
    scaling = values.get("routed_scaling_factor")
    aux_key = "router_aux_loss_coef" if "router_aux_loss_coef" in values else "aux_loss_alpha"
    aux = values.get(aux_key)
    return RouterSettings(
        score_function=str(score),
        normalizes_top_k=normalizes,
        num_groups=groups if groups and groups > 1 else None,
        group_top_k=group_top_k if groups and groups > 1 else None,
        scaling_factor=None
        if scaling is None
        else _number(scaling, "routed_scaling_factor", *ROUTER_SCALING_RANGE),
        expert_bias=str(values.get("topk_method", "")) == "noaux_tc",
        aux_loss_coeff=None if aux is None else _number(aux, aux_key, *AUX_LOSS_RANGE),
        aux_loss_per_sequence=_switch(values, "seq_aux", False),
    )
