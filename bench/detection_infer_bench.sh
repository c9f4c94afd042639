#!/usr/bin/env bash
# A detector's inference on the CPU: training-studio-cli predict against
# torchvision's own model in evaluation mode (bench/detection_infer.py), the
# same weights (a short run of the studio's, exported: model.py builds
# torchvision's detector and loads them strict), images, batch and threads.
# Each side's model is loaded once and its load timed apart: the studio's
# figure is predict's own time for the images (it prints it, the process
# start and load not in it), Python's the model calls' with Pillow's
# decoding, as predict decodes too. Alternating rounds, medians compared.
# Usage: bench/detection_infer_bench.sh [BUILD_DIR]
# KIND (default fasterrcnn_mobilenet_v3_large_fpn; any of the five), SIZE
# (min_size and max_size, default 128; not SSDlite's, fixed at 320), IMAGES
# (default 48), BATCH (default 8), THREADS (default: every core), ROUNDS
# (default 3). BENCH_SMOKE=1 (make bench-smoke): tiny sizes and one round.
set -euo pipefail
BUILD=${1:-build}
KIND=${KIND:-fasterrcnn_mobilenet_v3_large_fpn}
SIZE=${SIZE:-128}
BATCH=${BATCH:-8}
THREADS=${THREADS:-$(nproc)}
if [ -n "${BENCH_SMOKE:-}" ]; then IMAGES=8 ROUNDS=1; else IMAGES=${IMAGES:-48} ROUNDS=${ROUNDS:-3}; fi
CLI=$BUILD/app/training-studio-cli
PY=${STUDIO_PYTHON:-python3}
sizes=(--set model.detector.min_size="$SIZE" --set model.detector.max_size="$SIZE")
if [[ $KIND == ssdlite* ]]; then sizes=(); fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench_common.sh"
"$PY" "$here/../tests/reference/detection_scenes.py" "$WORK/scenes" "$IMAGES" 1 > /dev/null
# Weights that find boxes: a few steps of training, then the export torchvision loads.
"$CLI" train --set task.kind=detection --set model.kind="$KIND" --set data.format=image_folder \
  --set data.root="$WORK/scenes" --set data.annotations="$WORK/scenes/instances.json" --set data.test_fraction=0.25 \
  --set data.val_fraction=0 "${sizes[@]}" --set train.batch_size=4 --set train.max_steps=4 \
  --set optimizer.kind=sgd --set optimizer.lr=0.01 --set schedule.kind=constant --set performance.threads="$THREADS" --out "$WORK/runs" > /dev/null
"$CLI" export "$WORK"/runs/* --out "$WORK/export" > /dev/null

studio() {
  local start end text
  start=$(date +%s.%N)
  text=$(OMP_NUM_THREADS=$THREADS "$CLI" predict "$WORK"/runs/* --input "$WORK/scenes" --batch-size "$BATCH" \
    --out "$WORK/boxes.json" --overwrite 2>/dev/null)
  end=$(date +%s.%N)
  # "found N boxes in M images with ... in S s (R images per second)"
  local seconds boxes
  seconds=$(printf '%s\n' "$text" | sed -n 's/^found .* in \([0-9.]*\) s (.*/\1/p')
  boxes=$(printf '%s\n' "$text" | sed -n 's/^found \([0-9]*\) boxes .*/\1/p')
  awk -v s="$seconds" -v a="$start" -v b="$end" -v n="$boxes" 'BEGIN { printf "%.3f %.3f %d\n", s, b - a - s, n }'
}
python_side() {
  OMP_NUM_THREADS=$THREADS "$PY" "$here/detection_infer.py" "$WORK/export" "$WORK/scenes" "$BATCH" "$THREADS" |
    sed -n 's/^load \([0-9.]*\) s; found \([0-9]*\) boxes in .* in \([0-9.]*\) s (.*/\3 \1 \2/p'
}

s=() p=() sl=() pl=() sb=() pb=()
for round in $(seq "$ROUNDS"); do
  read -r a b c < <(studio); s+=("$a"); sl+=("$b"); sb+=("$c")
  read -r a b c < <(python_side); p+=("$a"); pl+=("$b"); pb+=("$c")
done
ms=$(median "${s[@]}"); mp=$(median "${p[@]}")
at="$SIZE px"; if [[ $KIND == ssdlite* ]]; then at="its fixed 320 px"; fi
echo "$KIND inference at $at, $IMAGES images, batch $BATCH, $THREADS threads: studio ${s[*]} s" \
  "(start and load ${sl[*]} s; ${sb[0]} boxes), Python ${p[*]} s (build and load ${pl[*]} s; ${pb[0]} boxes)"
awk -v s="$ms" -v p="$mp" 'BEGIN { printf "median: studio %.3f s, Python %.3f s: %.2fx Python'"'"'s speed\n", s, p, p / s }'
