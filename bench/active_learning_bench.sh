#!/usr/bin/env bash
# Issue 62, item 6: labels needed in the studio's order against a random
# order, and pre-labelling's overhead (bench/active_learning.py).
# Usage: bench/active_learning_bench.sh [BUILD_DIR]; SEEDS (3), FIRST_SEED (1), TARGET (0.95), BATCH (20).
# BENCH_SMOKE=1 (make bench-smoke): one seed to a low target, 100 images pre-labelled.
set -euo pipefail
BUILD=${1:-build}
PY=${STUDIO_PYTHON:-python3}
here=$(cd "$(dirname "$0")" && pwd)
export STUDIO_PRESET_DIR=${STUDIO_PRESET_DIR:-$here/../resources/presets}
if [ -n "${BENCH_SMOKE:-}" ]; then
  exec "$PY" "$here/active_learning.py" "$BUILD/app/training-studio-cli" --seeds 1 --target 0.7 --max-labels 60 \
    --prelabel 100
fi
exec "$PY" "$here/active_learning.py" "$BUILD/app/training-studio-cli" --seeds "${SEEDS:-3}" --first-seed "${FIRST_SEED:-1}" --target "${TARGET:-0.95}" \
  --batch "${BATCH:-20}"
