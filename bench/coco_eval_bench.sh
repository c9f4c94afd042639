#!/usr/bin/env bash
# COCO's detection figures over N images (default 5,000, COCO val2017's
# count): the studio's evaluation (bench_coco_eval) against pycocotools'
# COCOeval (evaluate + accumulate + summarize) on the same ground truth and
# detections, written by a seeded script: 80 categories, about 7 boxes per
# image (some crowds, all sizes), 100 detections per image near them and
# scattered. Checks the 12 figures agree within 1e-9, prints both times.
# Usage: bench/coco_eval_bench.sh [BUILD_DIR] [IMAGES]
# BENCH_SMOKE=1 (make bench-smoke): 200 images.
set -euo pipefail
BUILD=${1:-build}
IMAGES=${2:-5000}
[ -n "${BENCH_SMOKE:-}" ] && IMAGES=200
PY=${STUDIO_PYTHON:-python3}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cmake --build "$BUILD" --target bench_coco_eval > /dev/null

"$PY" - "$WORK" "$IMAGES" <<'PY'
import json, sys
import numpy as np
work, n = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(0)
images, annotations, results = [], [], []
for i in range(1, n + 1):
    w, h = int(rng.integers(320, 641)), int(rng.integers(240, 481))
    images.append({"id": i, "width": w, "height": h})
    boxes = []
    for _ in range(int(rng.poisson(7))):
        bw, bh = float(rng.uniform(4, w / 2)), float(rng.uniform(4, h / 2))
        x, y = float(rng.uniform(0, w - bw)), float(rng.uniform(0, h - bh))
        c = int(rng.integers(1, 81))
        annotations.append({"id": len(annotations) + 1, "image_id": i, "category_id": c, "bbox": [x, y, bw, bh],
                            "area": bw * bh * float(rng.uniform(0.5, 1.0)), "iscrowd": int(rng.random() < 0.02)})
        boxes.append((x, y, bw, bh, c))
    for _ in range(100):
        if boxes and rng.random() < 0.6:
            x, y, bw, bh, c = boxes[int(rng.integers(len(boxes)))]
            j = rng.normal(0, 0.15, 4) * [bw, bh, bw, bh]
            box = [x + j[0], y + j[1], max(1.0, bw + j[2]), max(1.0, bh + j[3])]
            c = c if rng.random() < 0.8 else int(rng.integers(1, 81))
        else:
            bw, bh = float(rng.uniform(4, w / 2)), float(rng.uniform(4, h / 2))
            box = [float(rng.uniform(0, w - bw)), float(rng.uniform(0, h - bh)), bw, bh]
            c = int(rng.integers(1, 81))
        results.append({"image_id": i, "category_id": c, "bbox": [float(v) for v in box],
                        "score": round(float(rng.random()), 3)})
json.dump({"images": images, "annotations": annotations,
           "categories": [{"id": c, "name": str(c)} for c in range(1, 81)]}, open(f"{work}/gt.json", "w"))
json.dump(results, open(f"{work}/results.json", "w"))
PY

"$BUILD/bench/bench_coco_eval" "$WORK/gt.json" "$WORK/results.json" > "$WORK/studio.txt"
"$PY" - "$WORK" <<'PY'
import contextlib, io, sys, time
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval
work = sys.argv[1]
with contextlib.redirect_stdout(io.StringIO()):
    t0 = time.perf_counter()
    gt = COCO(f"{work}/gt.json")
    dt = gt.loadRes(f"{work}/results.json")
    load = time.perf_counter() - t0
    t1 = time.perf_counter()
    e = COCOeval(gt, dt, "bbox")
    e.evaluate(); e.accumulate(); e.summarize()
    evaluation = time.perf_counter() - t1
ours = {}
for line in open(f"{work}/studio.txt"):
    if line.startswith("stat "):
        _, i, v = line.split()
        ours[int(i)] = float(v)
    else:
        print(line.strip())
worst = max(abs(ours[i] - e.stats[i]) for i in range(12))
print(f"pycocotools: reading {load:.3f} s, evaluation {evaluation:.3f} s")
print(f"AP {e.stats[0]:.4f}, AP50 {e.stats[1]:.4f}, AR@100 {e.stats[8]:.4f}; "
      f"largest difference of the 12 figures {worst:.1e}")
assert worst < 1e-9, "the figures differ from pycocotools'"
PY
