#!/usr/bin/env bash
# Exercise every GPU path of `gpuplan bench` once on a one-GPU machine, in about 12 minutes,
# next to an independent referee (gpu_facts.py, plain torch), and write everything under $OUT.
#
#   OUT=/tmp/out scripts/device-check.sh            # on the GPU machine, from the repository root
#   DEVICE=cpu OUT=/tmp/out scripts/device-check.sh # dry run of the plumbing on a CPU
#
# Each step runs under its own timeout, so one hang loses nothing else; every step's output is in
# $OUT/log.txt and its JSON beside it. The referee is found at $GPU_FACTS, else
# shared/device/gpu_facts.py, else ../shared/device/gpu_facts.py. gpuplan runs from src/; a
# machine without numpy, typer, rich and pyyaml installs them from $WHEELS (a folder of wheels made
# with `pip download`) when given, without a network.
set -u
OUT=${OUT:?set OUT to the folder the results go to}
DEVICE=${DEVICE:-cuda}
mkdir -p "$OUT/gpu-facts" "$OUT/storage"
LOG="$OUT/log.txt"
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
export GPUPLAN_DATA_DIR="$OUT/data"

gpuplan() { python3 -c 'import sys; from gpuplan.cli.app import main; sys.argv[0] = "gpuplan"; main()' "$@"; }
export -f gpuplan

step() {  # step NAME SECONDS COMMAND...
    local name=$1 seconds=$2
    shift 2
    echo "=== $name (limit ${seconds}s) $(date -u +%H:%M:%S)" | tee -a "$LOG"
    local start=$SECONDS
    timeout -k 10 "$seconds" "$@" >>"$LOG" 2>&1
    local code=$?
    echo "=== $name: exit $code after $((SECONDS - start))s" | tee -a "$LOG"
}

facts=${GPU_FACTS:-}
for candidate in shared/device/gpu_facts.py ../shared/device/gpu_facts.py; do
    [ -z "$facts" ] && [ -f "$candidate" ] && facts=$candidate
done
scale=1
[ "$DEVICE" = cpu ] && scale=64

if ! python3 -c "import numpy, typer, rich, yaml" 2>/dev/null && [ -n "${WHEELS:-}" ]; then
    step wheels 120 python3 -m pip install --no-index --find-links "$WHEELS" numpy typer rich pyyaml nvidia-ml-py
fi
step environment 30 bash -c 'nvidia-smi -q 2>&1 | head -120; python3 -c "import torch, sys;
print(sys.version); print(torch.__version__, torch.version.cuda, torch.cuda.is_available());
[print(i, torch.cuda.get_device_name(i), torch.cuda.get_device_properties(i).uuid)
 for i in range(torch.cuda.device_count())]"'
if [ -n "$facts" ]; then
    step referee 150 env DEVICE_CHECK_SCALE=$scale python3 "$facts" "$OUT/gpu-facts"
else
    echo "=== referee: gpu_facts.py not found (set GPU_FACTS)" | tee -a "$LOG"
fi
step bench-quick 330 bash -c "gpuplan bench --device $DEVICE --quick --exit-zero \
    --storage-dir '$OUT/storage' --json > '$OUT/bench-quick.json'"
step bench-matmul-full 240 bash -c "gpuplan bench --device $DEVICE --only matmul --exit-zero \
    --json > '$OUT/bench-matmul.json'"
step bench-probe 150 bash -c "gpuplan bench --device $DEVICE --only probe --exit-zero \
    --probe scripts/device-check-probe.yaml --json > '$OUT/bench-probe.json'"
step compare 30 python3 scripts/device_compare.py "$OUT/bench-quick.json" "$OUT/bench-matmul.json" \
    "$OUT/gpu-facts/raw.json" --output "$OUT/compare.txt"
cat "$OUT/compare.txt" 2>/dev/null
