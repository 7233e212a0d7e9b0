"""The learning-rate schedule an export writes: the scenario's ``training`` section, else a
default that depends on the training stage, each default taken from published practice.

- **Pre-training** (``stage: pretrain``, the default for ``method: full``): the peak of
  DeepSeek LLM's learning-rate law, ``eta_opt = 0.3118 * C^-0.1250`` for the compute budget
  ``C = M * D`` (DeepSeek-AI 2024, arXiv 2401.02954, section 3.1, eq. 1; the same ``C`` as the
  batch rule of ``estimate/batch.py``), with 2,000 warm-up steps and a cosine decay to 10 % of
  the peak (Llama 2, Touvron et al. 2023, arXiv 2307.09288, section 2.2).
- **Continued pre-training** (``stage: continued``): a peak of 3e-4 up to 20B parameters and
  1.5e-4 above, re-warmed and decayed as in pre-training: Code Llama continued Llama 2 at 3e-4
  (7B, 13B) and 1.5e-4 (34B) (Roziere et al. 2023, arXiv 2308.12950, section 2.5), and
  re-warming to the pre-training maximum matches re-training from scratch (Ibrahim et al. 2024,
  arXiv 2403.08763). DeepSeek's law describes a run from scratch, not the continuation of one.
- **Fine-tuning** (``stage: finetune``, the default for LoRA, QLoRA and freeze-tuning): 2e-5
  for full fine-tuning (Stanford Alpaca's recipe; torchtune's full fine-tune recipes), 2e-4 for
  adapters up to 20B parameters and 1e-4 above (QLoRA, Dettmers et al. 2023, Table 9: 7B-13B
  and 33B-65B), with warm-up over 3 % of the steps (Alpaca's ``warmup_ratio``) and a cosine
  decay to zero.

Warm-up never takes more than a tenth of the run (gpuplan's rule, so that a short run still
decays).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from gpuplan.errors import InputError
from gpuplan.estimate.batch import training_compute_budget
from gpuplan.limits import check_known_keys, shown
from gpuplan.workload.job import TrainingJob

STAGES = ("pretrain", "continued", "finetune")
TRAINING_KEYS = ("stage", "learning_rate", "warmup_steps", "min_learning_rate")
DEEPSEEK_LR_COEFFICIENT = 0.3118
DEEPSEEK_LR_EXPONENT = -0.1250
PRETRAIN_WARMUP_STEPS = 2000
PRETRAIN_MIN_LR_SHARE = 0.1
FULL_FINETUNE_LR = 2e-5
ADAPTER_LR = 2e-4
LARGE_ADAPTER_LR = 1e-4
LARGE_MODEL_PARAMETERS = 20e9
CONTINUED_LR = 3e-4
LARGE_CONTINUED_LR = 1.5e-4
FINETUNE_WARMUP_SHARE = 0.03
MAX_WARMUP_SHARE = 0.1
LEARNING_RATE_RANGE = (1e-9, 1.0)


class TrainingError(InputError):
    """A ``training`` section that names no stage gpuplan knows, or an impossible rate."""


@dataclass(frozen=True)
class TrainingSettings:
    """What the scenario's ``training`` section fixes (``None``: the stage's default)."""

    stage: str | None = None
    learning_rate: float | None = None
    warmup_steps: int | None = None
    min_learning_rate: float | None = None


@dataclass(frozen=True)
class LearningRateSchedule:
    """Peak and final learning rate, warm-up steps, decay shape, and where each came from."""

    stage: str
    peak: float
    minimum: float
    warmup_steps: int
    decay: str
    source: str

    def comment(self) -> str:
        return (
            f"learning rate {self.peak:.3g} -> {self.minimum:.3g} ({self.decay}), "
            f"{self.warmup_steps} warm-up steps; {self.source} (scenario training.stage: "
            f"{self.stage}; pretrain, continued or finetune)"
        )


def _rate(value: object, key: str) -> float:
    low, high = LEARNING_RATE_RANGE
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TrainingError.of("error.number", field=f"training.{key}", value=shown(value))
    if not math.isfinite(value) or not low <= value <= high:
        raise TrainingError.of(
            "error.out_of_range",
            field=f"training.{key}",
            value=shown(value),
            low=f"{low:g}",
            high=f"{high:g}",
        )
    return float(value)


def parse_training(value: Any) -> TrainingSettings:
    """The scenario's ``training`` mapping (absent: every default)."""
    if value is None:
        return TrainingSettings()
    value = check_known_keys(value, TRAINING_KEYS, "training.", TrainingError)
    stage = value.get("stage")
    if stage is not None and stage not in STAGES:
        raise TrainingError.of(
            "error.not_one_of",
            field="training.stage",
            value=shown(stage),
            accepted=", ".join(STAGES),
        )
    warmup = value.get("warmup_steps")
    if warmup is not None and (
        isinstance(warmup, bool) or not isinstance(warmup, int) or not 0 <= warmup <= 10**9
    ):
        raise TrainingError.of("error.training_warmup", value=shown(warmup))
    return TrainingSettings(
        stage=stage,
        learning_rate=None
        if value.get("learning_rate") is None
        else _rate(value["learning_rate"], "learning_rate"),
        warmup_steps=warmup,
        min_learning_rate=None
        if value.get("min_learning_rate") is None
        else _rate(value["min_learning_rate"], "min_learning_rate"),
    )


def compute_optimal_learning_rate(job: TrainingJob) -> float:
    """DeepSeek LLM's ``0.3118 * C^-0.1250`` with ``C`` the batch rule's compute budget."""
    return DEEPSEEK_LR_COEFFICIENT * training_compute_budget(job) ** DEEPSEEK_LR_EXPONENT


def learning_rate_schedule(
    job: TrainingJob, settings: TrainingSettings, steps: int
) -> LearningRateSchedule:
    """The schedule of ``steps`` optimizer steps (module docstring for the defaults)."""
    stage = settings.stage or ("pretrain" if job.method == "full" else "finetune")
    if stage == "finetune":
        if job.method == "full":
            peak, source = FULL_FINETUNE_LR, "full fine-tuning (Alpaca; torchtune recipes)"
        elif job.model.total_params > LARGE_MODEL_PARAMETERS:
            peak, source = LARGE_ADAPTER_LR, "adapters above 20B parameters (QLoRA, Table 9)"
        else:
            peak, source = ADAPTER_LR, "adapters up to 20B parameters (QLoRA, Table 9)"
        warmup = math.ceil(FINETUNE_WARMUP_SHARE * steps)
        minimum_share = 0.0
    else:
        if stage == "continued":
            large = job.model.total_params > LARGE_MODEL_PARAMETERS
            peak = LARGE_CONTINUED_LR if large else CONTINUED_LR
            source = "continued pre-training (Code Llama's rates), Llama 2's warm-up and decay"
        else:
            peak = compute_optimal_learning_rate(job)
            source = "pre-training: DeepSeek LLM's compute-optimal rate, Llama 2's warm-up, decay"
        warmup = PRETRAIN_WARMUP_STEPS
        minimum_share = PRETRAIN_MIN_LR_SHARE
    if settings.learning_rate is not None:
        peak, source = settings.learning_rate, "the scenario's training.learning_rate"
    warmup = min(warmup, math.floor(MAX_WARMUP_SHARE * steps))
    if settings.warmup_steps is not None:
        warmup = min(settings.warmup_steps, steps)
    minimum = (
        settings.min_learning_rate
        if settings.min_learning_rate is not None
        else peak * minimum_share
    )
    if minimum > peak:
        raise TrainingError.of("error.training_min_rate", minimum=f"{minimum:g}", peak=f"{peak:g}")
    return LearningRateSchedule(stage, peak, minimum, warmup, "cosine", source)
