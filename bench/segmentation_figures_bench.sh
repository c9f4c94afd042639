#!/usr/bin/env bash
# A semantic segmentation's figures over N masks of 512x512 (default 1,000;
# issue 61 asks for under 1 s): the studio's (bench_segmentation_figures)
# against torchvision's references/segmentation ConfusionMatrix
# (tests/reference/segmentation_reference.py: torch.bincount mask by mask,
# as its evaluate()) on the same seeded masks of 21 classes (VOC's count)
# with 5 % of the pixels at the ignore index 255. Checks mIoU and pixel
# accuracy agree within 1e-9 and prints both times, one thread each.
# Usage: bench/segmentation_figures_bench.sh [BUILD_DIR] [MASKS]
# BENCH_SMOKE=1 (make bench-smoke): 20 masks.
set -euo pipefail
BUILD=${1:-build}
MASKS=${2:-1000}
[ -n "${BENCH_SMOKE:-}" ] && MASKS=20
PY=${STUDIO_PYTHON:-python3}
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cmake --build "$BUILD" --target bench_segmentation_figures > /dev/null

OMP_NUM_THREADS=1 "$PY" - "$WORK" "$MASKS" "$HERE/../tests/reference" <<'PY'
import sys, time
import numpy as np
work, n = sys.argv[1], int(sys.argv[2])
sys.path.insert(0, sys.argv[3])
import torch
from segmentation_reference import ConfusionMatrix
torch.set_num_threads(1)
rng = np.random.default_rng(0)
with open(f"{work}/truth", "wb") as t, open(f"{work}/predicted", "wb") as p:
    for _ in range(n):
        truth = rng.integers(0, 21, (512, 512), dtype=np.uint8)
        pred = np.where(rng.random((512, 512)) < 0.7, truth, rng.integers(0, 21, (512, 512), dtype=np.uint8))
        truth[rng.random((512, 512)) < 0.05] = 255
        t.write(truth.tobytes())
        p.write(pred.tobytes())
truth = np.fromfile(f"{work}/truth", np.uint8).reshape(n, 512 * 512)
pred = np.fromfile(f"{work}/predicted", np.uint8).reshape(n, 512 * 512)
start = time.perf_counter()
cm = ConfusionMatrix(21)
for a, b in zip(torch.from_numpy(truth), torch.from_numpy(pred)):
    cm.update(a, b.to(torch.int64))
g, acc, iu = cm.compute(torch.float64)
seconds = time.perf_counter() - start
with open(f"{work}/python.txt", "w") as f:
    f.write(f"{iu.mean().item():.17g} {g.item():.17g} {seconds:.4f}\n")
PY
read -r PY_MIOU PY_ACC PY_S < "$WORK/python.txt"
OUT=$("$BUILD/bench/bench_segmentation_figures" "$WORK/truth" "$WORK/predicted" 21 $((512 * 512)))
MIOU=$(awk '/^miou/ {print $2}' <<< "$OUT")
ACC=$(awk '/^pixel_accuracy/ {print $2}' <<< "$OUT")
S=$(awk '/^seconds/ {print $2}' <<< "$OUT")
"$PY" - "$MIOU" "$PY_MIOU" "$ACC" "$PY_ACC" <<'PY'
import sys
a, b, c, d = map(float, sys.argv[1:])
assert abs(a - b) <= 1e-9 and abs(c - d) <= 1e-9, (a, b, c, d)
PY
echo "segmentation figures over $MASKS masks of 512x512, 21 classes: mIoU $MIOU, pixel accuracy $ACC"
echo "  studio $S s, torchvision's references (ConfusionMatrix, torch.bincount) $PY_S s: $(awk -v a="$PY_S" -v b="$S" 'BEGIN {printf "%.2fx", a / b}')"
