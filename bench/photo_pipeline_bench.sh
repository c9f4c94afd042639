#!/usr/bin/env bash
# The photo input pipeline at 224 px: the studio (bench/bench_photo_pipeline:
# JPEGs decoded once at a reduced DCT scale into the 256 px cache, then
# batches of RandomResizedCrop, flip, ColorJitter and normalisation from it on
# 2 loader workers) against PyTorch's DataLoader with torchvision v2
# transforms on 2 workers (bench/photo_loader.py), on the same N JPEG photos
# (500x375 and 375x500, cut from scikit-learn's two sample photos) and the
# same cores. Prints both sides' images/s and the ratio of their last epochs.
# Usage: bench/photo_pipeline_bench.sh [BUILD_DIR] [N]
# BENCH_SMOKE=1 (make bench-smoke): tiny sizes and one round, to show it still runs.
set -euo pipefail
BUILD=${1:-build}
N=${2:-2000}
[ -n "${BENCH_SMOKE:-}" ] && N=400  # 2 test photos a class at its 1 %
PY=${STUDIO_PYTHON:-python3}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
here=$(cd "$(dirname "$0")" && pwd)

"$PY" - "$WORK/photos" "$N" <<'PY'
import os, sys
import numpy as np
from PIL import Image
from sklearn.datasets import load_sample_images
root, n = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(0)
photos = load_sample_images()
for k, name in enumerate(photos.filenames):
    os.makedirs(os.path.join(root, os.path.basename(name).split(".")[0]), exist_ok=True)
for i in range(n):
    k = i % 2
    src = Image.fromarray(photos.images[k])
    w, h = src.size
    cw = int(rng.integers(w // 2, w))
    ch = int(rng.integers(h // 2, h))
    x0, y0 = int(rng.integers(0, w - cw + 1)), int(rng.integers(0, h - ch + 1))
    size = (500, 375) if i % 3 else (375, 500)
    img = src.crop((x0, y0, x0 + cw, y0 + ch)).resize(size, Image.BILINEAR)
    if rng.random() < 0.5:
        img = img.transpose(Image.FLIP_LEFT_RIGHT)
    cls = os.path.basename(photos.filenames[k]).split(".")[0]
    img.save(os.path.join(root, cls, f"{i:06d}.jpg"), quality=90)
PY
echo "$N JPEG photos, $(du -sm "$WORK/photos" | cut -f1) MiB, on $(nproc) cores"
studio=$("$BUILD/bench/bench_photo_pipeline" "$WORK/photos" 2)
echo "studio:"; echo "$studio" | sed 's/^/  /'
python=$("$PY" "$here/photo_loader.py" "$WORK/photos" 2)
echo "PyTorch DataLoader + torchvision v2:"; echo "$python" | sed 's/^/  /'
s=$(echo "$studio" | sed -n 's/^epoch 2: .*: \([0-9.]*\) images\/s.*/\1/p')
p=$(echo "$python" | sed -n 's/^epoch 2: .*: \([0-9.]*\) images\/s.*/\1/p')
echo "epoch 2: studio $s images/s, PyTorch $p images/s, ratio $(awk -v a="$s" -v b="$p" 'BEGIN { printf "%.2f", a / b }')"
