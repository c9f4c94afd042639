#!/usr/bin/env bash
# A detector's training images per second: training-studio-cli (task.kind
# detection) against torchvision's own detector in the loop of torchvision's
# references/detection (bench/detection_loop.py): the same model, synthetic
# scenes (tests/reference/detection_scenes.py: Fashion-MNIST items on 128 px
# canvases), image size, batch, SGD and CPU threads. Three alternating
# rounds, medians compared; and each side's peak resident memory (the
# process's ru_maxrss: the model, the optimizer, the data and the step's
# activations), the medians compared too.
# Usage: bench/detection_bench.sh [BUILD_DIR] [DEVICE]
# KIND (default fasterrcnn_mobilenet_v3_large_320_fpn; or any detector, as
# retinanet_resnet50_fpn_v2, maskrcnn_resnet50_fpn_v2 (task.kind
# instance_segmentation, the items' masks too) or ssdlite320_mobilenet_v3_large, which resizes
# every image to 320 x 320 on both sides), ROIS (proposals trained per image, a Faster
# R-CNN's only, default 128), IMAGES (default 160), EPOCHS (default 2), SIZE (the
# images' min_size and max_size, default 128; 320 is the _320_ model's own).
# BENCH_SMOKE=1 (make bench-smoke): tiny sizes and one round, to show it still runs.
set -euo pipefail
BUILD=${1:-build}
DEVICE=${2:-cpu}
KIND=${KIND:-fasterrcnn_mobilenet_v3_large_320_fpn}
ROIS=${ROIS:-128}
if [ -n "${BENCH_SMOKE:-}" ]; then IMAGES=16 ROUNDS=1 EPOCHS=1; else IMAGES=${IMAGES:-160} ROUNDS=${ROUNDS:-3} EPOCHS=${EPOCHS:-2}; fi
CLI=$BUILD/app/training-studio-cli
# RetinaNet has no proposals: ROIS is a Faster R-CNN's setting only.
rois=() roisText="no proposals"
if [[ $KIND == fasterrcnn* || $KIND == maskrcnn* ]]; then
  rois=(--set model.detector.rois_per_image="$ROIS") roisText="$ROIS proposals per image"
fi
# Mask R-CNN: task.kind instance_segmentation, the scenes' items with their masks.
task=detection masks=()
if [[ $KIND == maskrcnn* ]]; then task=instance_segmentation masks=(--masks); fi
# SSDlite resizes every image to 320 x 320: min_size and max_size would have no effect.
SIZE=${SIZE:-128}
sizes=(--set model.detector.min_size="$SIZE" --set model.detector.max_size="$SIZE")
if [[ $KIND == ssdlite* ]]; then sizes=(); fi
PY=${STUDIO_PYTHON:-python3}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench_common.sh"
"$PY" "$here/../tests/reference/detection_scenes.py" "$WORK/scenes" "$IMAGES" 1 "${masks[@]}" > /dev/null
# The studio tests on scenes of their own, so that both sides train the same IMAGES in the same
# batches (with a share held out of IMAGES, the studio's last batch of each epoch was a short one).
"$PY" "$here/../tests/reference/detection_scenes.py" "$WORK/test-scenes" 16 3 "${masks[@]}" > /dev/null

studio() {
  rm -rf "$WORK/runs"
  peak "$WORK/studio.rss" "$CLI" train --set task.kind="$task" --set model.kind="$KIND" --set data.format=image_folder \
    --set data.root="$WORK/scenes" --set data.annotations="$WORK/scenes/instances.json" \
    --set data.test_root="$WORK/test-scenes" --set data.test_annotations="$WORK/test-scenes/instances.json" \
    "${sizes[@]}" "${rois[@]}" \
    --set train.batch_size=8 --set optimizer.kind=sgd --set optimizer.lr=0.02 --set optimizer.momentum=0.9 \
    --set optimizer.weight_decay=0.0001 --set schedule.kind=constant --set train.epochs="$EPOCHS" \
    --set evaluation.every_steps=100000 --set performance.device="$DEVICE" --out "$WORK/runs" > /dev/null
  "$PY" -c 'import json, sys; print(round(json.load(open(sys.argv[1]))["samples_per_second"], 2))' "$WORK"/runs/*/summary.json
}
torchvision_loop() {
  peak "$WORK/python.rss" "$PY" "$here/detection_loop.py" "$WORK/scenes/instances.json" "$KIND" "$SIZE" 8 "$EPOCHS" "$ROIS" "$DEVICE" |
    sed -n 's/.*: \([0-9.]*\) samples\/s/\1/p'
}

s=(); p=()
for round in $(seq "$ROUNDS"); do
  s+=("$(studio)")
  p+=("$(torchvision_loop)")
done
ms=$(median "${s[@]}"); mp=$(median "${p[@]}")
at="$SIZE px"; if [[ $KIND == ssdlite* ]]; then at="its fixed 320 px"; fi
echo "$KIND at $at, batch 8, SGD, $roisText, $EPOCHS epochs of $IMAGES images, $DEVICE: studio ${s[*]} samples/s, Python ${p[*]} samples/s"
awk -v s="$ms" -v p="$mp" 'BEGIN { printf "median: studio %.2f samples/s, Python %.2f samples/s: %.2fx\n", s, p, s / p }'
mapfile -t rs < "$WORK/studio.rss"; mapfile -t rp < "$WORK/python.rss"
echo "peak resident memory: studio ${rs[*]} MiB, Python ${rp[*]} MiB"
awk -v s="$(median "${rs[@]}")" -v p="$(median "${rp[@]}")" \
  'BEGIN { printf "median: studio %.0f MiB, Python %.0f MiB: %.2fx the memory\n", s, p, s / p }'
