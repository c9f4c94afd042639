"""Synthetic detection scenes: Fashion-MNIST items, enlarged 2x, pasted on
noisy 128x128 canvases (every 8th image a negative, with no item), and a COCO
instances JSON of their boxes. Used by tests/test_detection_train.py and
bench/detection_bench.sh.

Usage: detection_scenes.py FOLDER COUNT SEED  (writes FOLDER/instances.json)"""
import gzip
import json
import os
import sys

import numpy as np
from PIL import Image

FASHION = os.environ.get("STUDIO_FASHION", "/usr/share/datasets/fashion-mnist")
CLASSES = [("trouser", 1), ("bag", 8)]


def idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def make_scenes(folder, count, seed, items=None, labels=None, classes=CLASSES):
    """count 128x128 canvases with 0 to 2 items each (enlarged 2x), and their COCO JSON."""
    if items is None:
        items = idx(f"{FASHION}/train-images-idx3-ubyte.gz")
        labels = idx(f"{FASHION}/train-labels-idx1-ubyte.gz")
    rng = np.random.default_rng(seed)
    os.makedirs(folder, exist_ok=True)
    coco = {"images": [], "annotations": [],
            "categories": [{"id": 10 + k, "name": name} for k, (name, _) in enumerate(classes)]}
    picks = [np.flatnonzero(labels == label) for _, label in classes]
    for i in range(count):
        canvas = rng.integers(0, 40, size=(128, 128), dtype=np.uint8)
        taken = []
        for _ in range(int(rng.integers(0, 3)) if i % 8 else 0):  # every 8th image: a negative
            k = int(rng.integers(len(classes)))
            item = np.kron(items[int(rng.choice(picks[k]))], np.ones((2, 2), dtype=np.uint8))
            ys, xs = np.nonzero(item > 30)
            top, left = int(rng.integers(0, 128 - 56)), int(rng.integers(0, 128 - 56))
            box = [left + xs.min(), top + ys.min(), xs.max() - xs.min() + 1, ys.max() - ys.min() + 1]
            if any(abs(box[0] - b[0]) < 40 and abs(box[1] - b[1]) < 40 for b in taken):
                continue  # keep the items apart
            taken.append(box)
            region = canvas[top:top + 56, left:left + 56]
            np.maximum(region, item, out=region)
            coco["annotations"].append({"id": len(coco["annotations"]) + 1, "image_id": 100 + i,
                                        "category_id": 10 + k, "bbox": [float(v) for v in box],
                                        "area": float(box[2] * box[3]), "iscrowd": 0})
        name = f"scene{i:03d}.png"
        Image.fromarray(np.stack([canvas] * 3, axis=-1)).save(os.path.join(folder, name))
        coco["images"].append({"id": 100 + i, "file_name": name, "width": 128, "height": 128})
    path = os.path.join(folder, "instances.json")
    with open(path, "w") as f:
        json.dump(coco, f)
    return path


if __name__ == "__main__":
    print(make_scenes(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
