#!/usr/bin/env bash
# training-studio-cli predict against the same model in Python (bench/predict_loop.py:
# a DataLoader with the same number of workers), on a folder of the 10,000
# Fashion-MNIST test images written as files, half PNG and half JPEG, in
# class folders. Both read the files from the page cache (a first pass warms
# it); three alternating rounds, medians compared. Prints images per second.
# Usage: bench/predict_bench.sh [BUILD_DIR] [WORKERS] [DEVICE]
# BENCH_SMOKE=1 (make bench-smoke): tiny sizes and one round, to show it still runs.
set -euo pipefail
BUILD=${1:-build}
WORKERS=${2:-$(nproc)}
DEVICE=${3:-cpu}
if [ -n "${BENCH_SMOKE:-}" ]; then COUNT=300 ROUNDS=1; else COUNT=10000 ROUNDS=3; fi
CLI=$BUILD/app/training-studio-cli
PY=${STUDIO_PYTHON:-python3}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench_common.sh"

"$PY" - "$WORK/images" "$COUNT" <<'PY'
import gzip, os, sys
import numpy as np
from PIL import Image
root = "/usr/share/datasets/fashion-mnist/"
x = np.frombuffer(gzip.open(root + "t10k-images-idx3-ubyte.gz").read(), np.uint8, offset=16).reshape(-1, 28, 28)
y = np.frombuffer(gzip.open(root + "t10k-labels-idx1-ubyte.gz").read(), np.uint8, offset=8)
for i, (img, label) in enumerate(zip(x[:int(sys.argv[2])], y)):
    d = os.path.join(sys.argv[1], str(label))
    os.makedirs(d, exist_ok=True)
    Image.fromarray(img).save(os.path.join(d, f"{i:05d}.{'png' if i % 2 else 'jpg'}"), quality=90)
PY
# The model: the default preset (cnn w32 d2) trained for 50 steps, exported.
"$CLI" train --preset fashion-mnist-cnn --set train.max_steps=50 --set schedule.kind=constant \
  --set performance.device="$DEVICE" --out "$WORK/runs" > /dev/null
run=$(ls -d "$WORK"/runs/*/ | head -1)
"$CLI" export "$run" --out "$WORK/export" --which last > /dev/null

studio() {
  "$CLI" predict "$WORK/export" --input "$WORK/images" --workers "$WORKERS" --device "$DEVICE" \
    --out "$WORK/p.csv" --overwrite | sed -n 's/.*(\([0-9.]*\) per second).*/\1/p'
}
python() { "$PY" "$here/predict_loop.py" "$WORK/export" "$WORK/images" "$WORKERS" 256 "$DEVICE" | sed -n 's/.*: \([0-9]*\) images\/s/\1/p'; }
studio > /dev/null; python > /dev/null  # warm the page cache
s=(); p=()
for round in $(seq "$ROUNDS"); do s+=("$(studio)"); p+=("$(python)"); done
# The middle value; of an even count, the mean of the two middle ones.
S=$(median "${s[@]}"); P=$(median "${p[@]}")
echo "predict, $COUNT files (PNG and JPEG, 28x28), $WORKERS workers, $DEVICE: studio ${s[*]} images/s, python ${p[*]} images/s"
echo "medians: studio $S, python $P images/s; ratio $(awk -v a="$S" -v b="$P" 'BEGIN { printf "%.2f", a / b }')"
