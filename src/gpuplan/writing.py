"""Every file gpuplan writes (reports, exports, imported catalogs) goes through one writer: the
text goes to a temporary file in the target's directory, is flushed to disk, then renamed over
the target, so a reader (or a kill mid-write) never leaves half a file; the temporary file is
removed on any failure. An existing target is kept unless ``overwrite`` is given, and a
symbolic link is never written through."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from gpuplan.errors import InputError
from gpuplan.limits import shown


class WriteError(InputError):
    """A file that cannot or may not be written; the message names it and says why."""


def write_atomically(
    path: str | Path, text: str, *, overwrite: bool = False, executable: bool = False
) -> Path:
    """Write ``text`` (UTF-8, ``\\n`` line ends) to ``path`` atomically; returns the path."""
    target = Path(path)
    name = shown(str(target))
    if target.is_symlink():
        raise WriteError.of("error.write_symlink", path=name)
    if target.is_dir():
        raise WriteError.of("error.write_directory", path=name)
    if target.exists() and not overwrite:
        raise WriteError.of("error.write_exists", path=name)
    if not target.parent.is_dir():
        raise WriteError.of(
            "error.write_no_directory", path=name, directory=shown(str(target.parent))
        )
    try:
        descriptor, temporary = tempfile.mkstemp(
            prefix=f".{target.name}.", suffix=".tmp", dir=target.parent
        )
    except OSError as failure:
        raise WriteError.of("error.write_failed", path=name, reason=failure.strerror) from None
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, 0o755 if executable else 0o644)
        os.replace(temporary, target)
    except OSError as failure:
        Path(temporary).unlink(missing_ok=True)
        raise WriteError.of("error.write_failed", path=name, reason=failure.strerror) from None
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return target
