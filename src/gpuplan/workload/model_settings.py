"""The settings of a model that change no size but must travel with it to a training engine:
the rotary base and its long-context scaling, and the norm epsilon, read from config.json
under the names Hugging Face configs use (``rope_theta``; ``rms_norm_eps``, ``layer_norm_eps``,
``layer_norm_epsilon``, ``layernorm_epsilon``; ``rope_scaling``). Exports write them
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


class ModelSettingsError(InputError):
    """A rotary base, norm epsilon or RoPE scaling that no model uses."""


@dataclass(frozen=True)
class ModelSettings:
    """``rope_theta`` and ``norm_eps`` as the config gives them (``None``: not given, the
    engine's default applies); ``rope_scaling`` as ``(key, value)`` pairs, empty without."""

    rope_theta: float | None = None
    norm_eps: float | None = None
    rope_scaling: tuple[tuple[str, ScalingValue], ...] = ()

    def scaling(self) -> dict[str, ScalingValue]:
        return dict(self.rope_scaling)


NO_SETTINGS = ModelSettings()
"""A config that gives none of them."""


def _number(value: object, key: str, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ModelSettingsError(f"model.{key}: expected a number, got {shown(value)}")
    if not math.isfinite(value) or not low <= value <= high:
        raise ModelSettingsError(f"model.{key}: {shown(value)} is outside {low:g} to {high:g}")
    return float(value)


def _scaling_value(value: object, key: str) -> ScalingValue:
    if isinstance(value, str | bool):
        return value
    if isinstance(value, int | float):
        return _number(value, f"rope_scaling.{key}", -1e12, 1e12)
    if isinstance(value, list) and len(value) <= 1024:
        return tuple(_number(item, f"rope_scaling.{key}", -1e12, 1e12) for item in value)
    raise ModelSettingsError(
        f"model.rope_scaling.{key}: expected a name, a number or a list of numbers, "
        f"got {shown(value)}"
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
            raise ModelSettingsError(
                f"model.rope_scaling: expected a table of at most {MAX_SCALING_ENTRIES} "
                f"entries, got {shown(scaling)}"
            )
        for key in scaling:
            if not isinstance(key, str):
                raise ModelSettingsError(f"model.rope_scaling.{key_name(key)}: keys are names")
        pairs = tuple((key, _scaling_value(value, key)) for key, value in sorted(scaling.items()))
    return ModelSettings(rope_theta, norm_eps, pairs)
