"""Write the command-line flags of a Megatron-LM release, for the export tests.

    .venv-launchers/bin/pip install six regex
    git clone --branch core_v0.16.1 https://github.com/NVIDIA/Megatron-LM /tmp/Megatron-LM
    .venv-launchers/bin/python scripts/megatron_flags.py /tmp/Megatron-LM

builds the release's own parser (``megatron.training.arguments.add_megatron_arguments``, which
needs torch and Megatron's imports, not a GPU) and writes every option string to
tests/export/data/megatron_flags_<release>.txt, with the release and commit in its header.
The release is ``gpuplan.export.megatron.MEGATRON_RELEASE``; the checkout must be at it.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("checkout", type=Path, help="a Megatron-LM checkout at the release")
    arguments = parser.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    from gpuplan.export.megatron import MEGATRON_RELEASE

    def git(*command: str) -> str:
        return subprocess.run(
            ["git", "-C", str(arguments.checkout), *command],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip

    commit = git("rev-parse", "HEAD")
    tagged = git("rev-parse", f"{MEGATRON_RELEASE}^{{commit}}")
    if commit != tagged:
        raise SystemExit(f"{arguments.checkout} is at {commit}, not {MEGATRON_RELEASE} ({tagged})")
    sys.path.insert(0, str(arguments.checkout))
    from megatron.training.arguments import add_megatron_arguments

    megatron = add_megatron_arguments(argparse.ArgumentParser(allow_abbrev=False))
    flags = sorted({option for action in megatron._actions for option in action.option_strings})
    target = ROOT / "tests" / "export" / "data" / f"megatron_flags_{MEGATRON_RELEASE}.txt"
    target.parent.mkdir(parents=True, exist_ok=True)
    header = [
        f"# Megatron-LM {MEGATRON_RELEASE} ({commit}): every option of",
        "# megatron.training.arguments.add_megatron_arguments; written by scripts/megatron_flags.py",
    ]
    target.write_text("\n".join([*header, *flags]) + "\n", "utf-8")
    print(f"wrote {len(flags)} flags to {target}")


if __name__ == "__main__":
    main()
