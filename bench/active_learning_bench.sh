#!/usr/bin/env bash
# Issue 62, item 6: labels needed in the studio's order against a random
# order, for classes (bench/active_learning.py, with pre-labelling's
# overhead) and for boxes (bench/active_learning_boxes.py).
# Usage: bench/active_learning_bench.sh [BUILD_DIR]; SEEDS (3), FIRST_SEED (1), TARGET (0.95), BATCH (20);
# the boxes' BOX_SEEDS (2), BOX_TARGET (test AP50 0.7), BOX_BATCH (20), BOX_STEPS (240 a round).
# BENCH_SMOKE=1 (make bench-smoke): one seed to a low target, 100 images pre-labelled; boxes two short rounds.
set -euo pipefail
BUILD=${1:-build}
PY=${STUDIO_PYTHON:-python3}
here=$(cd "$(dirname "$0")" && pwd)
export STUDIO_PRESET_DIR=${STUDIO_PRESET_DIR:-$here/../resources/presets}
CLI=$BUILD/app/training-studio-cli
if [ -n "${BENCH_SMOKE:-}" ]; then
  "$PY" "$here/active_learning.py" "$CLI" --seeds 1 --target 0.7 --max-labels 60 --prelabel 100
  exec "$PY" "$here/active_learning_boxes.py" "$CLI" --seeds 1 --target 0.99 --start 6 --batch 6 --max-labels 12 \
    --steps 4 --pool 24 --test 8
fi
"$PY" "$here/active_learning.py" "$CLI" --seeds "${SEEDS:-3}" --first-seed "${FIRST_SEED:-1}" --target "${TARGET:-0.95}" \
  --batch "${BATCH:-20}"
exec "$PY" "$here/active_learning_boxes.py" "$CLI" --seeds "${BOX_SEEDS:-2}" --first-seed "${FIRST_SEED:-1}" \
  --target "${BOX_TARGET:-0.7}" --batch "${BOX_BATCH:-20}" --steps "${BOX_STEPS:-240}"
