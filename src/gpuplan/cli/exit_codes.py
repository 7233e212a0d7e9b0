"""What ``gpuplan``'s exit status says, one rule for every command.

0: an answer (the plans, the estimate that fits, the quote, the stored run); 1: the answer is a
negative verdict, printed like any answer (the job does not fit, no plan meets the limits, a
benchmark or a comparison FAILs, an offers file has rejected entries); 2: bad input, one line on
stderr (``gpuplan.errors.InputError``, or a usage error from Click, which exits 2 too).
"""

from __future__ import annotations

from typing import NoReturn

import typer

ANSWER = 0
NEGATIVE_VERDICT = 1
BAD_INPUT = 2

EXIT_CODES_HELP = (
    "Exit status: 0 an answer; 1 a negative verdict (does not fit, no plan within the limits, "
    "a bench or compare FAIL, rejected offers); 2 bad input (one line on stderr)."
)


def negative_verdict() -> NoReturn:
    """End the command with :data:`NEGATIVE_VERDICT` after its answer is printed."""
    raise typer.Exit(NEGATIVE_VERDICT)
