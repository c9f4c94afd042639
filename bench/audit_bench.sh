#!/usr/bin/env bash
# The data audit (issue 45) on Fashion-MNIST: 10,000 training images and
# 2,000 test images written as a PNG folder (train/, test/), 5 % of the
# training labels changed by a seeded draw; `audit --folds 5` with the
# default preset's CNN (3 epochs a fold). Prints the precision and recall of
# the flagged labels against the changed ones, the cross-validated accuracy,
# the duplicates found, and the audit's wall time on this machine.
# Usage: bench/audit_bench.sh [BUILD_DIR]
# BENCH_SMOKE=1 (make bench-smoke): 1,000 images and 2 folds, to show it still runs.
# PARALLEL=N: the folds N at once (audit --parallel N; default 1).
set -euo pipefail
BUILD=${1:-build}
CLI=$BUILD/app/training-studio-cli
PY=${STUDIO_PYTHON:-python3}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
if [ -n "${BENCH_SMOKE:-}" ]; then TRAIN=1000 TEST=200 FOLDS=2; else TRAIN=10000 TEST=2000 FOLDS=5; fi

"$PY" - "$WORK" "$TRAIN" "$TEST" <<'PY'
import json, os, sys
import numpy as np
from PIL import Image
sys.path.insert(0, "tests")
from idx_reader import idx  # the tests' IDX reader
root, train, test = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
fm = "/usr/share/datasets/fashion-mnist/"
images, labels = idx(fm + "train-images-idx3-ubyte.gz"), idx(fm + "train-labels-idx1-ubyte.gz")
rng = np.random.default_rng(5)
noisy = set(rng.choice(train, train // 20, replace=False).tolist())
changed = {}
for i in range(train + test):
    split = "train" if i < train else "test"
    label = int(labels[i])
    if i in noisy:
        label = int((label + rng.integers(1, 10)) % 10)
    folder = os.path.join(root, "data", split, str(label))
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{i:05d}.png")
    Image.fromarray(images[i]).save(path)
    if i in noisy:
        changed[os.path.realpath(path)] = int(labels[i])
json.dump(sorted(changed), open(os.path.join(root, "changed.json"), "w"))
settings = json.load(open(os.path.join(os.environ.get("STUDIO_PRESETS", "resources/presets"), "fashion-mnist-cnn.json")))
settings["data"] = {"format": "image_folder", "root": os.path.join(root, "data"), "image_size": [28, 28], "channels": 1}
settings["name"] = "fashion-audit"
json.dump(settings, open(os.path.join(root, "settings.json"), "w"))
PY

start=$(date +%s.%N)
"$CLI" audit --config "$WORK/settings.json" --folds "$FOLDS" --parallel "${PARALLEL:-1}" --out "$WORK/audits" > "$WORK/audit.log" 2>&1 || { tail -20 "$WORK/audit.log"; exit 1; }
end=$(date +%s.%N)
grep -v "^step\|^  \(device\|steps\|test:\|EMA weights\|best eval\|final train\|samples\|wall time\|time spent\)\|^run completed\|^$\|^warning" "$WORK/audit.log" | head -20

"$PY" - "$WORK" "$start" "$end" "$TRAIN" "$FOLDS" <<'PY'
import csv, glob, json, os, sys
work, start, end, train, folds = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5]
d = glob.glob(os.path.join(work, "audits", "*-audit-*"))[0]
changed = set(json.load(open(os.path.join(work, "changed.json"))))
found = {os.path.realpath(r["file"]) for r in csv.DictReader(open(os.path.join(d, "label_issues.csv")))}
report = json.load(open(os.path.join(d, "audit.json")))
hit = len(found & changed)
print(f"audit of {train} Fashion-MNIST training images, {len(changed)} labels changed, {folds} folds, "
      f"{os.environ.get('PARALLEL', '1')} at once:")
print(f"  flagged {len(found)}: precision {hit / max(len(found), 1):.3f}, recall {hit / len(changed):.3f}")
print(f"  cross-validated accuracy {report['accuracy']['mean']:.4f} +- {report['accuracy']['std']:.4f}")
print(f"  duplicates: {report['duplicates']}")
print(f"  wall time {end - start:.1f} s (folds' training, out-of-fold predictions, feature searches)")
PY
