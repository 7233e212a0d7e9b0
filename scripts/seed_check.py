"""Regenerate docs/seed-check.md and docs/seed-check.zh.md: the seed article's figures beside
gpuplan's answers (see gpuplan.report.seed_check)."""

from pathlib import Path

from gpuplan.report.seed_check import main

if __name__ == "__main__":
    main(["--output", str(Path(__file__).resolve().parents[1] / "docs")])
