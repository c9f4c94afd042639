#!/usr/bin/env bash
# A segmenter's inference on the CPU (issue 61, item 6): training-studio-cli
# predict against torchvision's own model in evaluation mode
# (bench/segmentation_infer.py), the same weights (a short run of the
# studio's, exported: model.py builds torchvision's segmenter and loads them
# strict), images, base size and threads, each image's mask written as a
# palette PNG on both sides. Each side's model is loaded once and its load
# timed apart: the studio's figure is predict's own time for the images (it
# prints it), Python's the loop's with Pillow's decoding and writing.
# Alternating rounds, medians compared.
# Usage: bench/segmentation_infer_bench.sh [BUILD_DIR]
# KIND (default lraspp_mobilenet_v3_large), BASE (base_size, default 256),
# IMAGES (default 48), THREADS (default: every core), ROUNDS (default 3).
# BENCH_SMOKE=1 (make bench-smoke): tiny sizes and one round.
set -euo pipefail
BUILD=${1:-build}
KIND=${KIND:-lraspp_mobilenet_v3_large}
BASE=${BASE:-256}
THREADS=${THREADS:-$(nproc)}
if [ -n "${BENCH_SMOKE:-}" ]; then IMAGES=8 ROUNDS=1; else IMAGES=${IMAGES:-48} ROUNDS=${ROUNDS:-3}; fi
CLI=$BUILD/app/training-studio-cli
PY=${STUDIO_PYTHON:-python3}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench_common.sh"
segmentation_scenes "$WORK/images" "$WORK/masks" "$IMAGES"
aux=(); if [[ $KIND != lraspp* ]]; then aux=(--set model.segmenter.aux_loss=true); fi
"$CLI" train --set task.kind=segmentation --set model.kind="$KIND" --set data.format=image_folder \
  --set data.root="$WORK/images" --set data.annotations="$WORK/masks" --set data.test_fraction=0.25 "${aux[@]}" \
  --set model.segmenter.base_size="$BASE" --set model.segmenter.crop_size=64 --set train.batch_size=4 \
  --set train.max_steps=2 --set schedule.kind=constant --set performance.threads="$THREADS" --out "$WORK/runs" > /dev/null
"$CLI" export "$WORK"/runs/* --out "$WORK/export" > /dev/null

studio() {
  local start end text
  start=$(date +%s.%N)
  text=$(OMP_NUM_THREADS=$THREADS "$CLI" predict "$WORK"/runs/* --input "$WORK/images" --out "$WORK/studio-masks" \
    --overwrite 2>/dev/null)
  end=$(date +%s.%N)
  # "segmented N images with ... in S s (R images per second)"
  local seconds
  seconds=$(printf '%s\n' "$text" | sed -n 's/^segmented .* in \([0-9.]*\) s (.*/\1/p')
  awk -v s="$seconds" -v a="$start" -v b="$end" 'BEGIN { printf "%.3f %.3f\n", s, b - a - s }'
}
python_side() {
  rm -rf "$WORK/python-masks"
  OMP_NUM_THREADS=$THREADS "$PY" "$here/segmentation_infer.py" "$WORK/export" "$WORK/images" "$WORK/python-masks" \
    "$THREADS" | sed -n 's/^load \([0-9.]*\) s; segmented .* in \([0-9.]*\) s (.*/\2 \1/p'
}

s=() p=() sl=() pl=()
for round in $(seq "$ROUNDS"); do
  read -r a b < <(studio); s+=("$a"); sl+=("$b")
  read -r a b < <(python_side); p+=("$a"); pl+=("$b")
done
# The same masks on both sides (a pixel whose two best logits tie within the float sums' last bits may differ).
"$PY" -c 'import sys, os, numpy as np; from PIL import Image
a, b = sys.argv[1], sys.argv[2]
same = [np.mean(np.array(Image.open(os.path.join(a, n))) == np.array(Image.open(os.path.join(b, n)))) for n in sorted(os.listdir(b))]
print("masks: %.4f %% of the pixels the same on both sides (the least of an image %.4f %%)" % (100 * np.mean(same), 100 * min(same)))' \
  "$WORK/studio-masks" "$WORK/python-masks"
ms=$(median "${s[@]}"); mp=$(median "${p[@]}")
echo "$KIND inference at base $BASE, $IMAGES images, $THREADS threads: studio ${s[*]} s (start and load ${sl[*]} s)," \
  "Python ${p[*]} s (build and load ${pl[*]} s)"
awk -v s="$ms" -v p="$mp" 'BEGIN { printf "median: studio %.3f s, Python %.3f s: %.2fx Python'"'"'s speed\n", s, p, p / s }'
