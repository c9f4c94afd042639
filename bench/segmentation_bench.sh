#!/usr/bin/env bash
# A segmenter's training images per second (issue 61, item 6):
# training-studio-cli (task.kind segmentation) against torchvision's own
# segmenter in the loop of torchvision's references/segmentation
# (bench/segmentation_loop.py, its training preset and collate): the same
# model, synthetic scenes (tests/reference/segmentation_scenes.py: a square
# and a disc on noisy 48-80 px canvases, PNG masks with VOC's 255 borders),
# base and crop sizes, batch, SGD and CPU threads. Three alternating rounds,
# medians compared; and each side's peak resident memory (ru_maxrss).
# Usage: bench/segmentation_bench.sh [BUILD_DIR] [DEVICE]
# KIND (default lraspp_mobilenet_v3_large; deeplabv3_mobilenet_v3_large,
# deeplabv3_resnet50 and fcn_resnet50 train with their auxiliary head on
# both sides), IMAGES (default 96), EPOCHS (default 2), BASE (base_size,
# default 128), CROP (crop_size, default 112), BATCH (default 8).
# BENCH_SMOKE=1 (make bench-smoke): tiny sizes and one round, to show it still runs.
set -euo pipefail
BUILD=${1:-build}
DEVICE=${2:-cpu}
KIND=${KIND:-lraspp_mobilenet_v3_large}
BASE=${BASE:-128} CROP=${CROP:-112} BATCH=${BATCH:-8}
if [ -n "${BENCH_SMOKE:-}" ]; then IMAGES=16 ROUNDS=1 EPOCHS=1; else IMAGES=${IMAGES:-96} ROUNDS=${ROUNDS:-3} EPOCHS=${EPOCHS:-2}; fi
CLI=$BUILD/app/training-studio-cli
aux=(); if [[ $KIND != lraspp* ]]; then aux=(--set model.segmenter.aux_loss=true); fi
PY=${STUDIO_PYTHON:-python3}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench_common.sh"
segmentation_scenes "$WORK/images" "$WORK/masks" "$IMAGES"

studio() {
  rm -rf "$WORK/runs"
  peak "$WORK/studio.rss" "$CLI" train --set task.kind=segmentation --set model.kind="$KIND" \
    --set data.format=image_folder --set data.root="$WORK/images" --set data.annotations="$WORK/masks" \
    --set data.test_fraction=0.1 --set data.augment_flip=true "${aux[@]}" \
    --set model.segmenter.base_size="$BASE" --set model.segmenter.crop_size="$CROP" \
    --set train.batch_size="$BATCH" --set optimizer.kind=sgd --set optimizer.lr=0.02 --set optimizer.momentum=0.9 \
    --set optimizer.weight_decay=0.0001 --set schedule.kind=constant --set train.epochs="$EPOCHS" \
    --set evaluation.every_steps=100000 --set performance.device="$DEVICE" --out "$WORK/runs" > /dev/null
  "$PY" -c 'import json, sys; print(round(json.load(open(sys.argv[1]))["samples_per_second"], 2))' "$WORK"/runs/*/summary.json
}
torchvision_loop() {
  peak "$WORK/python.rss" "$PY" "$here/segmentation_loop.py" "$WORK/images" "$WORK/masks" "$KIND" "$BASE" "$CROP" \
    "$BATCH" "$EPOCHS" "$DEVICE" | sed -n 's/.*: \([0-9.]*\) samples\/s/\1/p'
}

s=(); p=()
for round in $(seq "$ROUNDS"); do
  s+=("$(studio)")
  p+=("$(torchvision_loop)")
done
ms=$(median "${s[@]}"); mp=$(median "${p[@]}")
echo "$KIND, base $BASE, crop $CROP, batch $BATCH, SGD, $EPOCHS epochs of $IMAGES images, $DEVICE: studio ${s[*]} samples/s, Python ${p[*]} samples/s"
awk -v s="$ms" -v p="$mp" 'BEGIN { printf "median: studio %.2f samples/s, Python %.2f samples/s: %.2fx\n", s, p, s / p }'
mapfile -t rs < "$WORK/studio.rss"; mapfile -t rp < "$WORK/python.rss"
echo "peak resident memory: studio ${rs[*]} MiB, Python ${rp[*]} MiB"
awk -v s="$(median "${rs[@]}")" -v p="$(median "${rp[@]}")" \
  'BEGIN { printf "median: studio %.0f MiB, Python %.0f MiB: %.2fx the memory\n", s, p, s / p }'
