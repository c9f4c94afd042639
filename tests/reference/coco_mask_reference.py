#!/usr/bin/env python3
"""pycocotools' mask API (pycocotools.mask, its maskApi.c) on seeded masks
and polygons, for test_coco_mask: make_references.py writes it to
OUT_DIR/coco_mask.json as {"data": {"masks": [...], "polygons": [...],
"iou": ...}}:
- masks: random blobs of several sizes, an empty, a full mask and one whose
  run of ones crosses from a column to the next, each as
  row-major bits, with encode()'s counts text, area() and toBbox();
- polygons: random ones (concave, crossing themselves, partly outside the
  image), boxes through frPyObjects([x, y, w, h]) and objects of several
  polygons merged (as COCO.annToRLE), each with its counts text, area and
  box;
- iou: iou(detections, truths, iscrowd) over masks of one size, a crowd
  among the truths.
"""
import numpy as np
from pycocotools import mask as mask_utils


def blob(rng, h, w):
    yy, xx = np.mgrid[0:h, 0:w]
    m = np.zeros((h, w), np.uint8)
    for _ in range(int(rng.integers(1, 4))):
        cy, cx = rng.uniform(0, h), rng.uniform(0, w)
        ry, rx = rng.uniform(0.5, max(1.0, h / 2)), rng.uniform(0.5, max(1.0, w / 2))
        m |= (((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2 <= 1).astype(np.uint8)
    m[rng.random((h, w)) < 0.03] ^= 1  # speckles
    return m


def entry(rle, h, w, extra):
    return {"height": h, "width": w, "counts": rle["counts"].decode(), "area": int(mask_utils.area(rle)),
            "box": [float(v) for v in mask_utils.toBbox(rle)], **extra}


def make_coco_masks(seed=61):
    rng = np.random.default_rng(seed)
    masks = []
    for h, w in ((13, 17), (40, 31), (1, 9), (64, 48)):
        for _ in range(6):
            m = blob(rng, h, w)
            masks.append(entry(mask_utils.encode(np.asfortranarray(m)), h, w, {"bits": m.flatten().tolist()}))
    wrap = np.zeros((12, 10), np.uint8)  # one run of ones from column 3's row 5 to column 4's row 2:
    wrap[5:, 3] = 1                       # its box spans every row (toBbox's rule for runs across columns)
    wrap[:3, 4] = 1
    for m in (np.zeros((12, 10), np.uint8), np.ones((12, 10), np.uint8), wrap):
        masks.append(entry(mask_utils.encode(np.asfortranarray(m)), 12, 10, {"bits": m.flatten().tolist()}))
    polygons = []
    for i in range(60):
        h, w = int(rng.integers(20, 90)), int(rng.integers(20, 90))
        n = int(rng.integers(3, 13))
        xy = np.stack([rng.uniform(-4, w + 4, n), rng.uniform(-4, h + 4, n)], 1)
        if i % 3 == 0:  # round-ish coordinates, as tools write them: ties on pixel edges
            xy = np.round(xy * 2) / 2
        poly = [float(v) for v in xy.flatten()]
        rle = mask_utils.frPyObjects([poly], h, w)[0]
        polygons.append(entry(rle, h, w, {"polygons": [poly], "bits": mask_utils.decode(rle).flatten().tolist()}))
    for _ in range(8):  # objects of two or three polygons, merged as COCO.annToRLE merges them
        h, w = int(rng.integers(20, 60)), int(rng.integers(20, 60))
        polys = []
        for _ in range(int(rng.integers(2, 4))):
            n = int(rng.integers(3, 8))
            polys.append([float(v) for v in np.stack([rng.uniform(0, w, n), rng.uniform(0, h, n)], 1).flatten()])
        rle = mask_utils.merge(mask_utils.frPyObjects(polys, h, w))
        polygons.append(entry(rle, h, w, {"polygons": polys, "bits": mask_utils.decode(rle).flatten().tolist()}))
    boxes = []
    for _ in range(8):
        h, w = int(rng.integers(20, 60)), int(rng.integers(20, 60))
        box = [float(rng.uniform(-3, w)), float(rng.uniform(-3, h)), float(rng.uniform(1, w)), float(rng.uniform(1, h))]
        rle = mask_utils.frPyObjects(np.array([box]), h, w)[0]
        boxes.append(entry(rle, h, w, {"box_in": box}))
    # IoU over masks of 40x31 (the second size's six blobs): three detections, three truths, one a crowd.
    same = [mask_utils.encode(np.asfortranarray(blob(rng, 40, 31))) for _ in range(6)]
    dts, gts, crowd = same[:3], same[3:], [0, 1, 0]
    iou = mask_utils.iou(dts, gts, crowd)
    return {"masks": masks, "polygons": polygons, "boxes": boxes,
            "iou": {"detections": [r["counts"].decode() for r in dts], "truths": [r["counts"].decode() for r in gts],
                    "height": 40, "width": 31, "crowd": crowd, "values": iou.tolist()}}
