#!/usr/bin/env python3
"""pycocotools' mask API (pycocotools.mask, its maskApi.c) on seeded masks
and polygons, for test_coco_mask: make_references.py writes it to
OUT_DIR/coco_mask.json as {"data": {"masks": [...], "polygons": [...],
"iou": ...}}:
- masks: random blobs of several sizes, an empty, a full mask and one whose
  run of ones crosses from a column to the next, each as
  row-major bits, with encode()'s counts text, area() and toBbox();
- polygons: random ones (concave, crossing themselves, partly outside the
  image), one with a repeated vertex, boxes through frPyObjects([x, y, w, h]) and objects of several
  polygons merged (as COCO.annToRLE), each with its counts text, area and
  box;
- iou: iou(detections, truths, iscrowd) over masks of one size, a crowd
  among the truths;
- semantic: images' annotations (polygons, several per object, and RLEs,
  compact and as a list of runs) with the semantic mask torchvision's
  references/segmentation/coco_utils.py's ConvertCocoPolysToMask makes of
  them (copied below), overlaps at 255.
"""
import numpy as np
import torch
from pycocotools import mask as mask_utils


def convert_coco_poly_to_mask(segmentations, height, width):  # references/segmentation/coco_utils.py (v0.26)
    masks = []
    for polygons in segmentations:
        rles = mask_utils.frPyObjects(polygons, height, width)
        mask = mask_utils.decode(rles)
        if len(mask.shape) < 3:
            mask = mask[..., None]
        mask = torch.as_tensor(mask, dtype=torch.uint8)
        mask = mask.any(dim=2)
        masks.append(mask)
    if masks:
        masks = torch.stack(masks, dim=0)
    else:
        masks = torch.zeros((0, height, width), dtype=torch.uint8)
    return masks


def semantic_target(anno, h, w):  # ConvertCocoPolysToMask.__call__'s target
    segmentations = [obj["segmentation"] for obj in anno]
    cats = [obj["category_id"] for obj in anno]
    if segmentations:
        masks = convert_coco_poly_to_mask(segmentations, h, w)
        cats = torch.as_tensor(cats, dtype=masks.dtype)
        target, _ = (masks * cats[:, None, None]).max(dim=0)
        target[masks.sum(0) > 1] = 255
    else:
        target = torch.zeros((h, w), dtype=torch.uint8)
    return target


def blob(rng, h, w):
    yy, xx = np.mgrid[0:h, 0:w]
    m = np.zeros((h, w), np.uint8)
    for _ in range(int(rng.integers(1, 4))):
        cy, cx = rng.uniform(0, h), rng.uniform(0, w)
        ry, rx = rng.uniform(0.5, max(1.0, h / 2)), rng.uniform(0.5, max(1.0, w / 2))
        m |= (((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2 <= 1).astype(np.uint8)
    m[rng.random((h, w)) < 0.03] ^= 1  # speckles
    return m


def rle_runs(m):
    """Runs of a mask in column-major order from a run of zeros (COCO's uncompressed counts)."""
    flat = np.asarray(m).flatten(order="F")
    runs, value, run = [], 0, 0
    for v in flat.tolist():
        if v != value:
            runs.append(run)
            run, value = 0, v
        run += 1
    runs.append(run)
    return runs


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
    # A repeated vertex (an edge of no length), as tools write closed polygons.
    poly = [2.0, 3.0, 17.5, 3.0, 17.5, 3.0, 17.5, 15.0, 2.0, 15.0, 2.0, 3.0]
    rle = mask_utils.frPyObjects([poly], 20, 24)[0]
    polygons.append(entry(rle, 20, 24, {"polygons": [poly], "bits": mask_utils.decode(rle).flatten().tolist()}))
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
    semantic = []
    for i in range(6):
        h, w = int(rng.integers(24, 60)), int(rng.integers(24, 60))
        anno = []
        for _ in range(int(rng.integers(0, 5)) if i else 0):  # the first image has no instance
            polys = []
            for _ in range(int(rng.integers(1, 3))):
                n = int(rng.integers(3, 9))
                cx, cy = rng.uniform(0, w), rng.uniform(0, h)
                polys.append([float(v) for v in np.stack([cx + rng.uniform(-12, 12, n), cy + rng.uniform(-12, 12, n)],
                                                         1).flatten()])
            anno.append({"segmentation": polys, "category_id": int(rng.integers(1, 21))})
        if i >= 3:  # and an object given as an RLE: a list of runs (as frPyObjects takes it)
            m = np.asfortranarray(blob(rng, h, w))
            runs = rle_runs(m)
            anno.append({"segmentation": {"size": [h, w], "counts": runs}, "category_id": int(rng.integers(1, 21))})
        target = semantic_target(anno, h, w)
        semantic.append({"height": h, "width": w, "annotations": anno, "target": target.flatten().tolist()})
    # YOLO's segmentation labels (class, then points as fractions of the width and height): the mask the
    # references make of the same polygons in pixels as COCO annotations, YOLO's class k as k + 1.
    yolo = []
    for i in range(4):
        h, w = int(rng.integers(24, 60)), int(rng.integers(24, 60))
        lines, anno = [], []
        for _ in range(int(rng.integers(1, 5))):
            n = int(rng.integers(3, 9))
            cx, cy = rng.uniform(0.1, 0.9), rng.uniform(0.1, 0.9)
            pts = np.clip(np.stack([cx + rng.uniform(-0.3, 0.3, n), cy + rng.uniform(-0.3, 0.3, n)], 1), 0, 1)
            k = int(rng.integers(0, 5))
            lines.append(" ".join([str(k)] + [f"{v:.6f}" for v in pts.flatten()]))
            back = [float(v) for v in np.array([float(t) for t in lines[-1].split()[1:]]).reshape(-1, 2).__mul__(
                [w, h]).flatten()]
            anno.append({"segmentation": [back], "category_id": k + 1})
        yolo.append({"height": h, "width": w, "text": "\n".join(lines) + "\n",
                     "target": semantic_target(anno, h, w).flatten().tolist()})
    # A compact RLE's pixels (pycocotools' decode), for the reader.
    m = blob(rng, 30, 20)
    compact = mask_utils.encode(np.asfortranarray(m))
    rle_text = {"height": 30, "width": 20, "counts": compact["counts"].decode(),
                "bits": mask_utils.decode(compact).flatten().tolist()}
    return {"masks": masks, "polygons": polygons, "boxes": boxes, "semantic": semantic, "yolo": yolo, "rle_text": rle_text,
            "iou": {"detections": [r["counts"].decode() for r in dts], "truths": [r["counts"].decode() for r in gts],
                    "height": 40, "width": 31, "crowd": crowd, "values": iou.tolist()}}
