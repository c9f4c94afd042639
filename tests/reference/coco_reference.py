#!/usr/bin/env python3
"""COCO detection figures by pycocotools' COCOeval on a seeded fixture, for
test_coco_eval: ground truth with crowds, images without boxes, boxes of
every size range, an annotation area that is not its box's; detections with
tied scores, more than 100 in one image, images with detections only, a
category the ground truth lacks, and boxes near misses of the truth.
make_references.py writes it to OUT_DIR/coco_eval.json as {"data": {"ground_truth":
COCO instances, "detections": results list, "stats": COCOeval.stats,
"ap_per_category", "precision50", "precision75" (per category, at area all
and 100 detections), "exact": the same for detections equal to the truth}}.
"""
import contextlib
import io
import json
import numpy as np
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval


def fixture(seed=43):
    rng = np.random.default_rng(seed)
    categories = [{"id": c, "name": f"c{c}"} for c in (1, 3, 7, 12)]
    images, anns, dets = [], [], []
    for i in range(1, 41):
        images.append({"id": i * 10, "file_name": f"{i}.png", "width": 640, "height": 480})
        if i % 9 == 0:
            continue  # an image without boxes (some have detections: false positives)
        for _ in range(int(rng.integers(1, 7))):
            cat = int(rng.choice([1, 3, 7, 12]))
            size = float(rng.choice([12, 28, 50, 90, 150, 300]))  # small, medium and large
            w, h = size * rng.uniform(0.6, 1.4), size * rng.uniform(0.6, 1.4)
            x, y = rng.uniform(0, 640 - w), rng.uniform(0, 480 - h)
            crowd = int(rng.random() < 0.08)
            area = w * h * (rng.uniform(0.5, 0.9) if rng.random() < 0.5 else 1.0)  # a segmentation's area
            anns.append({"id": len(anns) + 1, "image_id": i * 10, "category_id": cat, "bbox": [x, y, w, h],
                         "area": area, "iscrowd": crowd})
    for a in anns:  # detections near each box, some good, some poor, some missed
        if rng.random() < 0.15:
            continue
        x, y, w, h = a["bbox"]
        for _ in range(int(rng.integers(1, 3))):
            j = rng.normal(0, 0.12, 4) * [w, h, w, h]
            dets.append({"image_id": a["image_id"], "category_id": a["category_id"],
                         "bbox": [x + j[0], y + j[1], max(1.0, w + j[2]), max(1.0, h + j[3])],
                         "score": float(np.round(rng.uniform(0.05, 1.0), 2))})  # 2 decimals: ties
    for i in range(1, 41):  # false positives everywhere, one category the truth lacks
        for _ in range(int(rng.integers(0, 4))):
            w, h = rng.uniform(8, 200, 2)
            dets.append({"image_id": i * 10, "category_id": int(rng.choice([1, 3, 7, 12, 99])),
                         "bbox": [float(rng.uniform(0, 440)), float(rng.uniform(0, 280)), float(w), float(h)],
                         "score": float(np.round(rng.uniform(0.0, 0.9), 2))})
    for _ in range(130):  # more than 100 detections of one category in one image
        w, h = rng.uniform(10, 80, 2)
        dets.append({"image_id": 20, "category_id": 3, "bbox": [float(rng.uniform(0, 500)),
                     float(rng.uniform(0, 380)), float(w), float(h)], "score": float(np.round(rng.uniform(0, 1), 1))})
    return {"images": images, "annotations": anns, "categories": categories}, dets


def evaluate(gt, dets, iou_type="bbox"):
    coco = COCO()
    coco.dataset = json.loads(json.dumps(gt))
    with contextlib.redirect_stdout(io.StringIO()):
        coco.createIndex()
        res = coco.loadRes(json.loads(json.dumps(dets)))
        e = COCOeval(coco, res, iou_type)
        e.evaluate()
        e.accumulate()
        e.summarize()
    p = e.eval["precision"]  # T x R x K x A x M
    ap = []
    for k in range(p.shape[2]):
        s = p[:, :, k, 0, -1]
        ap.append(float(s[s > -1].mean()) if (s > -1).any() else -1.0)
    return {"stats": [float(v) for v in e.stats], "ap_per_category": ap,
            "categories": sorted(coco.getCatIds()),
            "precision50": p[0, :, :, 0, -1].T.tolist(), "precision75": p[5, :, :, 0, -1].T.tolist()}


def make_coco_eval():
    gt, dets = fixture()
    result = {"ground_truth": gt, "detections": dets, **evaluate(gt, dets)}
    # A second case: every detection exact, for AP 1 where nothing is ignored.
    exact = [{"image_id": a["image_id"], "category_id": a["category_id"], "bbox": a["bbox"], "score": 1.0}
             for a in gt["annotations"]]
    result["exact"] = {"detections": exact, **evaluate(gt, exact)}
    return result


def ellipse(box, h, w, points=16):
    """The polygon of the ellipse inscribed in box [x, y, w, h], clipped to the image."""
    x, y, bw, bh = box
    a = np.arange(points) * 2 * np.pi / points
    xs = np.clip(x + bw / 2 + bw / 2 * np.cos(a), 0, w)
    ys = np.clip(y + bh / 2 + bh / 2 * np.sin(a), 0, h)
    return [float(v) for pair in zip(xs, ys) for v in pair]


def make_coco_segm_eval():
    """COCOeval with iouType "segm" on the same fixture's masks: each ground truth the polygon of the
    ellipse in its box (a crowd: its box as an uncompressed RLE), its "area" the fixture's (pycocotools
    ranges a ground truth by it); each detection the ellipse in its box as compressed RLE (results'
    form; pycocotools takes its area from the mask). Written as coco_segm_eval.json, its segmentations
    as the files hold them."""
    from pycocotools import mask as mask_utils
    from coco_mask_reference import rle_runs
    gt, dets = fixture(seed=47)
    size = {im["id"]: (im["height"], im["width"]) for im in gt["images"]}
    for a in gt["annotations"]:
        h, w = size[a["image_id"]]
        if a["iscrowd"]:
            m = np.zeros((h, w), np.uint8)
            x, y, bw, bh = (int(round(v)) for v in a["bbox"])
            m[y:y + bh, x:x + bw] = 1
            a["segmentation"] = {"size": [h, w], "counts": rle_runs(m)}
        else:
            a["segmentation"] = [ellipse(a["bbox"], h, w)]
    out = []
    for d in dets:
        h, w = size[d["image_id"]]
        rle = mask_utils.merge(mask_utils.frPyObjects([ellipse(d["bbox"], h, w)], h, w))
        out.append({"image_id": d["image_id"], "category_id": d["category_id"], "score": d["score"],
                    "segmentation": {"size": [h, w], "counts": rle["counts"].decode()}})
    return {"ground_truth": gt, "detections": out, **evaluate(gt, out, "segm")}
