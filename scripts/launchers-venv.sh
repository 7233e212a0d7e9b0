#!/usr/bin/env bash
# Build .venv-launchers: the launchers that read gpuplan's exports (SkyPilot, torchtitan,
# DeepSpeed, Accelerate) at the versions the export tests check against, beside the CPU torch
# from local disk (installed first, so that no launcher pulls a CUDA build). Idempotent: an
# environment that already holds these versions is kept.
set -euo pipefail
cd "$(dirname "$0")/.."
requirements=tests/export/launchers/requirements.txt
stamp=.venv-launchers/requirements.txt
if [ -x .venv-launchers/bin/python ] && cmp -s "$requirements" "$stamp"; then
  exit 0
fi
python3 -m venv .venv-launchers
.venv-launchers/bin/pip install -q --no-compile torch==2.13.0
.venv-launchers/bin/pip install -q --no-compile -r "$requirements"
cp "$requirements" "$stamp"
