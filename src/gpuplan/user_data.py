"""Where gpuplan keeps what a user saves: the bench database and the user's own catalog.

``$GPUPLAN_DATA_DIR`` when set, else the platform's user data directory
(``platformdirs.user_data_dir("gpuplan")``: ``$XDG_DATA_HOME/gpuplan`` or
``~/.local/share/gpuplan`` on Linux, ``~/Library/Application Support/gpuplan`` on macOS).
Nothing is created here; writers create what they write.
"""

from __future__ import annotations

import os
from pathlib import Path

DATA_DIR_VARIABLE = "GPUPLAN_DATA_DIR"


def data_directory() -> Path:
    """The user's gpuplan data directory."""
    configured = os.environ.get(DATA_DIR_VARIABLE)
    if configured:
        return Path(configured).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir("gpuplan", appauthor=False))


def user_offers_dir() -> Path:
    """The user's offers files (``gpuplan offers import`` writes one TOML file per import, in
    the built-in offers format); later commands merge them with the built-in catalog."""
    return data_directory() / "catalog" / "offers"
