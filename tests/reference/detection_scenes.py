"""Synthetic detection scenes: Fashion-MNIST items, enlarged 2x, pasted on
noisy 128x128 canvases (every 8th image a negative, with no item), and a COCO
instances JSON of their boxes. Used by tests/test_detection_train.py and
bench/detection_bench.sh.

Usage: detection_scenes.py FOLDER COUNT SEED [--masks]  (writes FOLDER/instances.json; --masks: each
item's pixels as its segmentation, for instance segmentation)"""
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


def new_coco(folder, names):
    """An empty COCO instances document of these categories (ids from 10), its folder made."""
    os.makedirs(folder, exist_ok=True)
    return {"images": [], "annotations": [], "categories": [{"id": 10 + k, "name": n} for k, n in enumerate(names)]}


def add_box(coco, i, k, box, mask=None):
    """Scene i's box (x, y, width, height) of category k; with mask (the canvas's 0/1 pixels of the
    object), its COCO RLE as the annotation's segmentation and area (instance segmentation)."""
    coco["annotations"].append({"id": len(coco["annotations"]) + 1, "image_id": 100 + i, "category_id": 10 + k,
                                "bbox": [float(v) for v in box], "area": float(box[2] * box[3]), "iscrowd": 0})
    if mask is not None:
        from pycocotools import mask as mask_utils
        rle = mask_utils.encode(np.asfortranarray(mask.astype(np.uint8)))
        coco["annotations"][-1].update(segmentation={"size": rle["size"], "counts": rle["counts"].decode()},
                                       area=float(mask.sum()))


def add_scene(coco, folder, i, canvas):
    """Scene i: its grey canvas written as an RGB PNG, and its image entry."""
    name = f"scene{i:03d}.png"
    Image.fromarray(np.stack([canvas] * 3, axis=-1)).save(os.path.join(folder, name))
    coco["images"].append({"id": 100 + i, "file_name": name, "width": canvas.shape[1], "height": canvas.shape[0]})


def write_coco(coco, folder):
    path = os.path.join(folder, "instances.json")
    with open(path, "w") as f:
        json.dump(coco, f)
    return path


def make_scenes(folder, count, seed, items=None, labels=None, classes=CLASSES, masks=False):
    """count 128x128 canvases with 0 to 2 items each (enlarged 2x), and their COCO JSON; masks: each
    item's pixels (above 30) as its segmentation too."""
    if items is None:
        items = idx(f"{FASHION}/train-images-idx3-ubyte.gz")
        labels = idx(f"{FASHION}/train-labels-idx1-ubyte.gz")
    rng = np.random.default_rng(seed)
    coco = new_coco(folder, [name for name, _ in classes])
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
            mask = None
            if masks:
                mask = np.zeros(canvas.shape, dtype=np.uint8)
                mask[top:top + 56, left:left + 56] = item > 30
            add_box(coco, i, k, box, mask)
        add_scene(coco, folder, i, canvas)
    return write_coco(coco, folder)


SHAPES = [("bright", 200), ("dim", 110)]  # a square's grey level


def make_shapes(folder, count, seed, size=128):
    """count size x size noisy canvases with 1 or 2 squares each, 24 to 48 px, bright or dim (every
    8th canvas a negative), and their COCO JSON: the smallest scenes that a detector from random
    weights learns clearly in a few dozen steps (a test that shows learning, test_detection_train).
    The Fashion-MNIST items above are for the benchmark."""
    rng = np.random.default_rng(seed)
    coco = new_coco(folder, [name for name, _ in SHAPES])
    for i in range(count):
        canvas = rng.integers(0, 40, size=(size, size), dtype=np.uint8)
        taken = []
        for _ in range(int(rng.integers(1, 3)) if i % 8 else 0):
            k = int(rng.integers(len(SHAPES)))
            side = int(rng.integers(24, 49))
            left, top = int(rng.integers(0, size - side + 1)), int(rng.integers(0, size - side + 1))
            if any(left < b[0] + b[2] and b[0] < left + side and top < b[1] + b[3] and b[1] < top + side
                   for b in taken):
                continue  # no overlaps
            taken.append((left, top, side, side))
            canvas[top:top + side, left:left + side] = SHAPES[k][1] + rng.integers(0, 30)
            add_box(coco, i, k, (left, top, side, side))
        add_scene(coco, folder, i, canvas)
    return write_coco(coco, folder)


if __name__ == "__main__":
    print(make_scenes(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), masks="--masks" in sys.argv[4:]))
