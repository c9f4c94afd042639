#!/usr/bin/env bash
# The export to ONNX (issue 44): for the default CNN (fashion-mnist-cnn, its
# whole preset) and a resnet18 at 224 px (fine-tuned from random weights on
# 300 Fashion-MNIST photos, as bench/finetune_bench.sh makes them), the
# studio's `export --format onnx --quantize int8` and its figures: ONNX
# Runtime's fp32 and INT8 test accuracy, batch-1 latency and batch-32
# throughput on this machine's CPU (from export.json), against LibTorch's own
# inference, the studio's predict on the test images written as PNG files
# (--batch-size 1 and 32, each image's decoding included).
# Usage: bench/onnx_bench.sh [BUILD_DIR]
# BENCH_SMOKE=1 (make bench-smoke): tiny sizes, to show it still runs.
set -euo pipefail
BUILD=${1:-build}
CLI=$BUILD/app/training-studio-cli
PY=${STUDIO_PYTHON:-python3}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
if [ -n "${BENCH_SMOKE:-}" ]; then
  CNN=(--set data.train_limit=1000 --set data.test_limit=200 --set train.epochs=1) PHOTOS=20 SIZE=64 TESTS=200
else
  CNN=() PHOTOS=100 SIZE=224 TESTS=10000
fi

"$PY" - "$WORK" "$PHOTOS" "$TESTS" <<'PY'
import gzip, os, sys
import numpy as np
from PIL import Image
root, photos, tests = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
fm = "/usr/share/datasets/fashion-mnist/"
def idx(name, offset):
    return np.frombuffer(gzip.open(fm + name).read(), np.uint8, offset=offset)
x = idx("train-images-idx3-ubyte.gz", 16).reshape(-1, 28, 28)
y = idx("train-labels-idx1-ubyte.gz", 8)
for name, label in (("tshirt", 0), ("trouser", 1), ("sneaker", 7)):
    picks = np.flatnonzero(y == label)
    for split, chosen in (("train", picks[:photos]), ("test", picks[photos:photos + photos // 2])):
        os.makedirs(os.path.join(root, "photos", split, name))
        for i in chosen:
            Image.fromarray(x[i]).save(os.path.join(root, "photos", split, name, f"{i}.png"))
tx = idx("t10k-images-idx3-ubyte.gz", 16).reshape(-1, 28, 28)
ty = idx("t10k-labels-idx1-ubyte.gz", 8)
for i in range(tests):
    d = os.path.join(root, "tests", str(ty[i]))
    os.makedirs(d, exist_ok=True)
    Image.fromarray(tx[i]).save(os.path.join(d, f"{i:05d}.png"))
PY

# LibTorch through the studio's predict: images per second at a batch size.
studio() {
  "$CLI" predict "$1" --input "$2" --batch-size "$3" --workers 1 --out "$WORK/p.csv" --overwrite |
    sed -n 's/.*(\([0-9.]*\) per second).*/\1/p'
}
report() {  # report NAME EXPORT IMAGES
  "$CLI" predict "$2" --input "$3" --out "$WORK/p.csv" --overwrite > /dev/null  # the page cache, the first calls
  local one many
  one=$(studio "$2" "$3" 1) many=$(studio "$2" "$3" 32)
  "$PY" - "$1" "$2/export.json" "$WORK/p.csv" "$one" "$many" <<'PY'
import csv, json, sys
name, report, predictions, one, many = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
import os
classes = json.load(open(os.path.join(os.path.dirname(sys.argv[2]), "preprocessing.json")))["classes"]
rows = list(csv.DictReader(open(predictions)))
truth = [os.path.basename(os.path.dirname(r["source"])) for r in rows]  # a class's name, or its index
truth = [t if t in classes else classes[int(t)] for t in truth]
studio = sum(t == r["class_1"] for t, r in zip(truth, rows)) / len(rows)
q = report["int8"]
print(f"{name}: accuracy on {len(rows)} test images: studio (LibTorch) {studio * 100:.2f} %, "
      f"ONNX Runtime fp32 {q['fp32'] * 100:.2f} %, int8 {q['int8'] * 100:.2f} % (on {q['examples']} examples)")
print(f"{name}: batch 1 latency ms: studio predict {1000 / one:.3f} (a PNG decoded each), "
      f"ONNX Runtime fp32 {q['speed_fp32']['batch1_latency_ms']:.3f}, int8 {q['speed_int8']['batch1_latency_ms']:.3f}")
print(f"{name}: batch 32 examples/s: studio predict {many:.0f} (decoding included), "
      f"ONNX Runtime fp32 {q['speed_fp32']['batch32_examples_per_second']:.0f}, "
      f"int8 {q['speed_int8']['batch32_examples_per_second']:.0f}")
print(f"{name}: parity: " + ", ".join(f"{c['file']} {c['largest_difference']:.2g}" for c in report["checks"]))
PY
}

"$CLI" train --preset fashion-mnist-cnn "${CNN[@]}" --out "$WORK/cnn" > /dev/null
t0=$(date +%s.%N)
"$CLI" export "$(ls -d "$WORK"/cnn/*/ | head -1)" --out "$WORK/cnn-export" --format onnx --quantize int8 > /dev/null
echo "cnn: export with the checks and INT8 took $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
report cnn "$WORK/cnn-export" "$WORK/tests"

"$CLI" train --preset finetune-photos --set data.root="$WORK/photos" --set "data.image_size=[$SIZE, $SIZE]" \
  --set train.epochs=4 --set train.batch_size=32 --set data.val_fraction=0 --out "$WORK/resnet" > /dev/null
t0=$(date +%s.%N)
"$CLI" export "$(ls -d "$WORK"/resnet/*/ | head -1)" --out "$WORK/resnet-export" --format onnx --quantize int8 \
  --calibration-examples 100 > /dev/null
echo "resnet18 at $SIZE px: export with the checks and INT8 took $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
report "resnet18 at $SIZE px" "$WORK/resnet-export" "$WORK/photos/test"
