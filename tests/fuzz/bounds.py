"""What every fuzzed case must respect: an answer or an ``InputError`` within
``CASE_SECONDS``, and a process peak no more than ``CASE_BYTES`` above its peak when the
suite began."""

from __future__ import annotations

import os
import resource
import signal
import time
from collections.abc import Callable
from typing import TypeVar

from hypothesis import HealthCheck, event, settings

from gpuplan.errors import InputError

CASE_SECONDS = 5.0
CASE_BYTES = 500 * 2**20
BASELINE_BYTES = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
DEFAULT_EXAMPLES = 40
LONG_EXAMPLES = 500
Result = TypeVar("Result")
SEEN = {"cases": 0, "refused": 0, "slowest_seconds": 0.0, "peak_growth_bytes": 0}
"""What the session's cases did, for the summary line (conftest.pytest_terminal_summary)."""


def examples() -> int:
    return int(os.environ.get("GPUPLAN_FUZZ_EXAMPLES", str(DEFAULT_EXAMPLES)))


def fuzz_settings(share: float = 1.0) -> settings:
    """Hypothesis settings for one fuzz test: ``share`` of the suite's per-test budget."""
    return settings(
        max_examples=max(1, round(examples() * share)),
        deadline=None,
        suppress_health_check=list(HealthCheck),
        database=None,
    )


class CaseTooSlow(AssertionError):
    """A case that ran past ``CASE_SECONDS``: a hang, reported as a failure."""


def bounded(call: Callable[[], Result]) -> Result | InputError:
    """``call()``'s result or the ``InputError`` it raised (one line); any other exception
    propagates. Fails past ``CASE_SECONDS`` (by a timer signal, so a hang ends) or when the
    process's peak memory passes ``CASE_BYTES`` above its peak at the start."""

    def too_slow(signum: int, frame: object) -> None:
        raise CaseTooSlow(f"case ran past {CASE_SECONDS} s")

    previous = signal.signal(signal.SIGALRM, too_slow)
    signal.setitimer(signal.ITIMER_REAL, CASE_SECONDS)
    started = time.perf_counter()
    try:
        outcome: Result | InputError = call()
    except InputError as error:
        message = str(error)
        assert "\n" not in message and 0 < len(message) < 1000, message[:2000]
        outcome = error
        event(f"refused: {type(error).__name__}")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    elapsed = time.perf_counter() - started
    growth = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - BASELINE_BYTES
    SEEN["cases"] += 1
    SEEN["refused"] += isinstance(outcome, InputError)
    SEEN["slowest_seconds"] = max(SEEN["slowest_seconds"], elapsed)
    SEEN["peak_growth_bytes"] = max(SEEN["peak_growth_bytes"], growth)
    assert elapsed < CASE_SECONDS
    assert growth < CASE_BYTES, f"peak memory {growth / 2**20:.0f} MiB above the start"
    return outcome
