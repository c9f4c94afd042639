#!/usr/bin/env bash
# A resnet18 fine-tune's training samples per second: training-studio-cli
# against the same model in a hand-written PyTorch loop
# (bench/finetune_loop.py: torchvision's resnet18 from the same state dict,
# the same images in memory, batch, optimizer and augmentation), on 1,500
# Fashion-MNIST images of three classes at SIZE px in RGB. Both train the
# whole network (no frozen layers) for the same steps on the same threads;
# three alternating rounds, medians compared.
# Usage: bench/finetune_bench.sh [BUILD_DIR] [SIZE] [DEVICE]
# EPOCHS (default 2): a GPU finishes two epochs of 1,500 images in about a
# second, so its start weighs; FINETUNE_LOG=FILE keeps the studio's last log.txt.
# BENCH_SMOKE=1 (make bench-smoke): tiny sizes and one round, to show it still runs.
set -euo pipefail
BUILD=${1:-build}
SIZE=${2:-64}
DEVICE=${3:-cpu}
EPOCHS=${EPOCHS:-2}
if [ -n "${BENCH_SMOKE:-}" ]; then PER_CLASS=32 ROUNDS=1; else PER_CLASS=500 ROUNDS=${ROUNDS:-3}; fi
CLI=$BUILD/app/training-studio-cli
PY=${STUDIO_PYTHON:-python3}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench_common.sh"

"$PY" - "$WORK" "$PER_CLASS" <<'PY'
import gzip, os, sys
import numpy as np, torch, torchvision
from PIL import Image
root = "/usr/share/datasets/fashion-mnist/"
x = np.frombuffer(gzip.open(root + "train-images-idx3-ubyte.gz").read(), np.uint8, offset=16).reshape(-1, 28, 28)
y = np.frombuffer(gzip.open(root + "train-labels-idx1-ubyte.gz").read(), np.uint8, offset=8)
for name, label in {"tshirt": 0, "trouser": 1, "sneaker": 7}.items():
    d = os.path.join(sys.argv[1], "photos", "train", name)
    os.makedirs(d)
    for i in np.flatnonzero(y == label)[:int(sys.argv[2])]:
        Image.fromarray(x[i]).save(os.path.join(d, f"{i}.png"))
    os.makedirs(os.path.join(sys.argv[1], "photos", "test", name))
    Image.fromarray(x[np.flatnonzero(y == label)[600]]).save(os.path.join(sys.argv[1], "photos", "test", name, "t.png"))
torch.save(torchvision.models.resnet18(weights=None).state_dict(), os.path.join(sys.argv[1], "resnet18.pth"))
PY

studio() {
  rm -rf "$WORK/runs"
  "$CLI" train --preset finetune-photos --set data.root="$WORK/photos" --set "data.image_size=[$SIZE, $SIZE]" \
    --set model.weights="$WORK/resnet18.pth" --set data.stored_size="$SIZE" --set data.val_fraction=0 --set train.epochs=$EPOCHS \
    --set train.batch_size=32 --set schedule.kind=constant --set performance.device="$DEVICE" \
    --out "$WORK/runs" | sed -n 's/ *samples\/s: *\([0-9.]*\).*/\1/p'
  [ -z "${FINETUNE_LOG:-}" ] || cat "$WORK"/runs/*/log.txt > "$FINETUNE_LOG"
}
python() { "$PY" "$here/finetune_loop.py" "$WORK/photos/train" "$WORK/resnet18.pth" "$SIZE" "$DEVICE" "$EPOCHS" | sed -n 's/.*: \([0-9.]*\) samples\/s/\1/p'; }

s=(); p=()
for round in $(seq "$ROUNDS"); do
  s+=("$(studio)")
  p+=("$(python)")
done
# The middle value; of an even count, the mean of the two middle ones.
ms=$(median "${s[@]}"); mp=$(median "${p[@]}")
echo "resnet18 fine-tune at ${SIZE}px, $EPOCHS epochs, batch 32, AdamW, flip, $DEVICE: studio ${s[*]} samples/s, Python ${p[*]} samples/s"
echo "medians: studio $ms, Python $mp, ratio $(awk -v a="$ms" -v b="$mp" 'BEGIN { printf "%.2f", a / b }')"
