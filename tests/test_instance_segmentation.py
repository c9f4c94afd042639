"""Instance segmentation through the CLI (issue 61): task.kind
instance_segmentation with maskrcnn_resnet50_fpn_v2 on synthetic scenes made
here (discs given as COCO polygons, squares as compressed RLE, on noisy
canvases; the test scenes' squares as polygons, with YOLO's labels too), two
steps from random weights:
- the five losses, loss_mask among them, are metrics.csv's columns and sum
  to the training loss; the evaluation reports the masks' COCO figures
  (segm) beside the boxes', and summary.json has test_mask_map;
- `predict --annotations` (the test scenes' YOLO polygon labels) writes
  COCO's results with an RLE mask per box, and prints the boxes' and the
  masks' figures, which are pycocotools' COCOeval ("bbox" and "segm") of
  those results against the same polygons in COCO's form;
- the export's model.py builds torchvision's maskrcnn_resnet50_fpn_v2,
  loads model.safetensors strict, and finds predict's boxes and masks;
- bad masks and a detector without masks are refused, named.

Mask R-CNN's parts against torchvision's are test_mask_rcnn's; RLE and the
segm evaluation against pycocotools' are test_coco_mask's and
test_coco_eval's; this suite checks that a run puts them together.
Environment (ctest sets it): STUDIO_CLI."""
import contextlib
import glob
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np
from PIL import Image
from pycocotools import mask as mask_utils
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference"))
from suite_limits import HANG_LIMIT_S  # noqa: E402

CLI = os.environ["STUDIO_CLI"]
PARTS = ["loss_classifier", "loss_box_reg", "loss_mask", "loss_objectness", "loss_rpn_box_reg"]
SIZE = 96


def run(*args):
    p = subprocess.run(list(args), capture_output=True, text=True, timeout=HANG_LIMIT_S)
    return p.returncode, p.stdout + p.stderr


def make_scenes(folder, count, seed, first_id=1, polygons=False):
    """count noisy SIZE x SIZE canvases with 1 or 2 shapes each, apart, and their COCO instances JSON:
    a disc (its mask a 24-point polygon) or a square (its mask a compressed RLE). polygons: the squares
    as their four corners, every box its polygon's extent, and the same objects as YOLO's polygon
    labels beside the images (data.yaml: YOLO's image k is COCO's image first_id + k)."""
    rng = np.random.default_rng(seed)
    os.makedirs(folder)
    coco = {"images": [], "annotations": [], "categories": [{"id": 1, "name": "disc"}, {"id": 2, "name": "square"}]}
    for i in range(count):
        canvas = rng.integers(0, 40, size=(SIZE, SIZE), dtype=np.uint8)
        taken, lines = [], []
        for _ in range(int(rng.integers(1, 3))):
            k = int(rng.integers(2))
            side = int(rng.integers(24, 41))
            left, top = int(rng.integers(0, SIZE - side + 1)), int(rng.integers(0, SIZE - side + 1))
            if any(left < b[0] + b[2] and b[0] < left + side and top < b[1] + b[3] and b[1] < top + side
                   for b in taken):
                continue
            taken.append((left, top, side, side))
            if k == 0:
                t = np.linspace(0, 2 * np.pi, 24, endpoint=False)
                r = side / 2
                segmentation = [np.stack([left + r + r * np.cos(t), top + r + r * np.sin(t)], 1).ravel().tolist()]
            elif polygons:
                segmentation = [[left, top, left + side, top, left + side, top + side, left, top + side]]
            else:
                square = np.zeros((SIZE, SIZE), dtype=np.uint8)
                square[top:top + side, left:left + side] = 1
                rle = mask_utils.encode(np.asfortranarray(square))
                segmentation = {"size": rle["size"], "counts": rle["counts"].decode()}
            rle = mask_utils.merge(mask_utils.frPyObjects(segmentation, SIZE, SIZE)) if isinstance(
                segmentation, list) else dict(segmentation, counts=segmentation["counts"].encode())
            mask = mask_utils.decode(rle)
            canvas[mask > 0] = (200 if k == 0 else 120) + rng.integers(0, 30)
            if polygons:
                xy = np.array(segmentation[0]).reshape(-1, 2)
                box = [float(xy[:, 0].min()), float(xy[:, 1].min()), float(np.ptp(xy[:, 0])), float(np.ptp(xy[:, 1]))]
                lines.append(f"{k} " + " ".join(f"{v / SIZE:.12f}" for v in segmentation[0]))
            else:
                box = [float(v) for v in mask_utils.toBbox(rle)]
            coco["annotations"].append({"id": len(coco["annotations"]) + 1, "image_id": first_id + i,
                                        "category_id": k + 1, "bbox": box, "area": float(mask_utils.area(rle)),
                                        "iscrowd": 0, "segmentation": segmentation})
        name = f"scene{i:03d}.png"
        Image.fromarray(np.stack([canvas] * 3, axis=-1)).save(os.path.join(folder, name))
        coco["images"].append({"id": first_id + i, "file_name": name, "width": SIZE, "height": SIZE})
        if polygons:
            with open(os.path.join(folder, f"scene{i:03d}.txt"), "w") as f:
                f.write("".join(line + "\n" for line in lines))
    if polygons:
        with open(os.path.join(folder, "data.yaml"), "w") as f:
            f.write("names: [disc, square]\n")
    path = os.path.join(folder, "instances.json")
    with open(path, "w") as f:
        json.dump(coco, f)
    return path


def summarize(truth, results, kind):
    """COCOeval's stats of results (a file or a list); for "segm" each result without its bbox, as
    torchvision's references/detection/coco_eval.py gives them (loadRes then takes a result's area
    from its mask, not its box)."""
    if isinstance(results, str):
        with open(results) as f:
            results = json.load(f)
    if kind == "segm":
        results = [{k: v for k, v in r.items() if k != "bbox"} for r in results]
    with contextlib.redirect_stdout(io.StringIO()):
        e = COCOeval(truth, truth.loadRes(results), kind)
        e.evaluate()
        e.accumulate()
        e.summarize()
    return e.stats


class InstanceSegmentationTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="studio-instances-")
        cls.root = os.path.join(cls.tmp.name, "scenes")
        cls.test_root = os.path.join(cls.tmp.name, "test-scenes")
        cls.annotations = make_scenes(cls.root, 8, 1)
        cls.test_annotations = make_scenes(cls.test_root, 4, 2, first_id=101, polygons=True)
        cls.test_yolo = os.path.join(cls.test_root, "data.yaml")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def args(self, annotations=None, *more):
        return ["--set", "task.kind=instance_segmentation", "--set", "model.kind=maskrcnn_resnet50_fpn_v2",
                "--set", "data.format=image_folder", "--set", f"data.root={self.root}",
                "--set", f"data.annotations={annotations or self.annotations}",
                "--set", f"data.test_root={self.test_root}",
                "--set", f"data.test_annotations={self.test_annotations}", "--set", "data.val_fraction=0",
                "--set", "model.detector.min_size=96", "--set", "model.detector.max_size=96",
                "--set", "model.detector.rois_per_image=32", "--set", "model.detector.detections_per_image=25",
                # Every proposal's box scored (a detector two steps from random weights scores few above
                # 0.05), at most 25 an image: enough detections to compare, whatever the steps did.
                "--set", "model.detector.score_threshold=0",
                "--set", "train.batch_size=2",
                "--set", "train.max_steps=2", "--set", "train.log_every_steps=1", "--set", "data.augment_flip=true",
                "--set", "optimizer.kind=sgd", "--set", "optimizer.lr=0.01", "--set", "optimizer.momentum=0.9",
                "--set", "schedule.kind=cosine", *more]

    def test_a_run_trains_evaluates_predicts_and_exports_masks(self):
        out = os.path.join(self.tmp.name, "run")
        code, text = run(CLI, "train", *self.args(), "--out", out)
        self.assertEqual(code, 0, text)
        folder = sorted(glob.glob(os.path.join(out, "*")))[0]
        with open(os.path.join(folder, "metrics.csv")) as f:
            lines = f.read().splitlines()
        header = lines[0].split(",")
        rows = [dict(zip(header, line.split(","))) for line in lines[1:]]
        train = [r for r in rows if r["kind"] == "train"]
        self.assertEqual(len(train), 2)
        for r in train:
            parts = [float(r[p]) for p in PARTS]
            self.assertGreater(float(r["loss_mask"]), 0)
            self.assertAlmostEqual(sum(parts), float(r["train_loss"]), delta=1e-4 * max(1.0, sum(parts)))
        with open(os.path.join(folder, "summary.json")) as f:
            summary = json.load(f)
        for key in ("test_mask_map", "test_mask_map50", "test_map", "test_map50"):
            self.assertIn(key, summary)
        # The CLI's summary leads with the masks' mAP, the figure the task is judged by.
        self.assertIn("  test:            mask mAP %.4f, mask AP50 %.4f, mAP %.4f, AP50 %.4f\n"
                      % tuple(summary[k] for k in ("test_mask_map", "test_mask_map50", "test_map", "test_map50")),
                      text)
        report = sorted(glob.glob(os.path.join(folder, "eval", "step-*.json")))[-1]
        with open(report) as f:
            figures = json.load(f)
        self.assertEqual(figures["task"], "instance_segmentation")
        self.assertAlmostEqual(figures["mask"]["map"], summary["test_mask_map"], places=9)
        self.assertEqual([c["class"] for c in figures["per_class"]], ["disc", "square"])
        self.assertTrue(all("mask_ap" in c for c in figures["per_class"]))

        # predict on the test scenes with their YOLO polygon labels: an RLE mask per box; the printed
        # figures are pycocotools' on the written results against the same polygons in COCO's form,
        # and the run's test figures (the COCO form, the same weights).
        detections = os.path.join(self.tmp.name, "detections.json")
        code, text = run(CLI, "predict", folder, "--input", self.test_root, "--annotations", self.test_yolo,
                         "--out", detections)
        self.assertEqual(code, 0, text)
        printed = [float(line.rsplit("=", 1)[1]) for line in text.splitlines() if line.startswith(" Average ")]
        self.assertEqual(len(printed), 24, text)
        with open(detections) as f:  # YOLO's image ids are the files' places
            results = [dict(r, image_id=r["image_id"] + 101) for r in json.load(f)]
        self.assertGreater(len(results), 10, "too few detections to compare")
        self.assertEqual(set(results[0]), {"image_id", "category_id", "bbox", "score", "segmentation"})
        self.assertEqual(results[0]["segmentation"]["size"], [SIZE, SIZE])
        with contextlib.redirect_stdout(io.StringIO()):
            truth = COCO(self.test_annotations)
        np.testing.assert_allclose(printed[:12], summarize(truth, results, "bbox"), atol=1e-6)
        np.testing.assert_allclose(printed[12:], summarize(truth, results, "segm"), atol=1e-6)
        self.assertAlmostEqual(printed[12], summary["test_mask_map"], delta=1e-3)
        self.assertAlmostEqual(printed[0], summary["test_map"], delta=1e-3)
        self.check_export(folder, results)

    def check_export(self, folder, results):
        exported = os.path.join(self.tmp.name, "exported")
        code, text = run(CLI, "export", folder, "--out", exported)
        self.assertEqual(code, 0, text)
        with open(os.path.join(folder, "summary.json")) as f:
            summary = json.load(f)
        with open(os.path.join(exported, "README.md")) as f:  # the model card names the masks' figures
            card = f.read()
        self.assertIn("- Test mask mAP@[.50:.95] (COCO's segm): %.4g\n" % summary["test_mask_map"], card)
        self.assertIn("- Test mask AP50: %.4g\n" % summary["test_mask_map50"], card)
        self.assertIn('found["masks"] > 0.5', card)
        with open(os.path.join(exported, "model.py")) as f:
            self.assertIn('found["masks"]', f.read())
        import importlib.util
        import torch
        spec = importlib.util.spec_from_file_location("exported_masks", os.path.join(exported, "model.py"))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        model = module.build()  # torchvision's MaskRCNN, load_state_dict(..., strict=True) inside
        self.assertEqual(type(model).__name__, "MaskRCNN")
        with open(self.test_annotations) as f:
            images = json.load(f)["images"]
        compared = 0
        for image in images:
            pixels = np.asarray(Image.open(os.path.join(self.test_root, image["file_name"])).convert("RGB"))
            with torch.no_grad():
                found = model([torch.from_numpy(pixels.copy()).permute(2, 0, 1).float() / 255])[0]
            studio = sorted((r for r in results if r["image_id"] == image["id"]), key=lambda r: -r["score"])
            self.assertEqual(len(studio), len(found["boxes"]), image["file_name"])
            order = torch.argsort(found["scores"], descending=True, stable=True)
            boxes = found["boxes"][order].numpy().astype(np.float64)
            boxes[:, 2:] -= boxes[:, :2]
            masks = (found["masks"][order, 0] > 0.5).numpy().astype(np.uint8)
            compared_here = 0
            for r, box, mask in zip(studio, boxes, masks):
                # ResNet-50's float32 sums in another order: within 0.005 px (measured 0.0011).
                np.testing.assert_allclose(r["bbox"], box, atol=5e-3)
                self.assertAlmostEqual(r["score"], float(found["scores"][order][compared_here]), delta=1e-4)
                compared_here += 1
                ours = mask_utils.decode({"size": r["segmentation"]["size"],
                                          "counts": r["segmentation"]["counts"].encode()})
                # Probabilities at 0.5 may round either way on the two sides: nearly every pixel agrees.
                self.assertLessEqual(int((ours != mask).sum()), max(2, mask.sum() // 100), image["file_name"])
                compared += 1
        self.assertGreater(compared, 10)

    def refused(self, annotations, *words):
        code, text = run(CLI, "train", *self.args(annotations), "--out", os.path.join(self.tmp.name, "refused"))
        self.assertEqual(code, 2, text)
        for w in words:
            self.assertIn(w, text)

    def broken(self, name, change):
        with open(self.annotations) as f:
            coco = json.load(f)
        change(coco["annotations"][1])
        path = os.path.join(self.tmp.name, name)
        with open(path, "w") as f:
            json.dump(coco, f)
        return path

    def test_bad_masks_are_refused_named(self):
        self.refused(self.broken("none.json", lambda a: a.pop("segmentation")),
                     "none.json annotations[1]", "has no \"segmentation\"")
        self.refused(self.broken("two.json", lambda a: a.update(segmentation=[[1, 1, 5, 5]])),
                     "two.json annotations[1]", "polygon 1 has 4 numbers", "at least three points")
        self.refused(self.broken("size.json", lambda a: a.update(segmentation={"size": [50, 50], "counts": [2500]})),
                     "size.json annotations[1]", "its RLE is 50x50 but its image is 96x96")
        code, text = run(CLI, "train", *self.args(None, "--set", "model.kind=fasterrcnn_resnet50_fpn_v2"),
                         "--out", os.path.join(self.tmp.name, "refused"))
        self.assertEqual(code, 2, text)
        self.assertIn("task.kind instance_segmentation needs a detector with masks: one of maskrcnn_resnet50_fpn_v2",
                      text)
        code, text = run(CLI, "train", *self.args(None, "--set", "task.kind=detection"),
                         "--out", os.path.join(self.tmp.name, "refused"))
        self.assertEqual(code, 2, text)
        self.assertIn("maskrcnn_resnet50_fpn_v2 finds masks too: set task.kind instance_segmentation", text)


if __name__ == "__main__":
    unittest.main()
