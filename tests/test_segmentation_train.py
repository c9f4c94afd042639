"""Training a segmenter through the CLI (issue 61): task.kind segmentation on
synthetic scenes made here (a red square and a blue disc on noisy canvases of
48 to 80 px, PNG masks beside them: tests/reference/segmentation_scenes.py),
its figures at each evaluation and in summary.json, the run's confusion
matrix against torchvision's references/segmentation's ConfusionMatrix of
torchvision's own model with the run's weights on the same test images,
Pascal VOC's layout, the auxiliary head, and bad masks named.

The parts have their own suites: the models against torchvision's
(test_segmenters), the loss (test_segmentation_loss), the augmentations
(test_mask_augment), the figures (test_segmentation_figures); this suite
checks that a run puts them together."""
import csv
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import torch
import torchvision
from PIL import Image
from torchvision import tv_tensors
from torchvision.transforms.v2 import functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference"))
from segmentation_reference import ConfusionMatrix  # noqa: E402
from segmentation_scenes import make_scenes  # noqa: E402
from suite_limits import HANG_LIMIT_S  # noqa: E402

CLI = os.environ["STUDIO_CLI"]
CLASSES = ["background", "red square", "blue disc"]
BASE = 64  # model.segmenter.base_size: evaluation's shorter side


def run(*args, env=None):
    p = subprocess.run(list(args), capture_output=True, text=True, timeout=HANG_LIMIT_S, env=env)
    return p.returncode, p.stdout + p.stderr


def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


class SegmentationTrainTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        torch.set_num_threads(1)
        cls.tmp = tempfile.TemporaryDirectory(prefix="studio-segment-")
        cls.images = os.path.join(cls.tmp.name, "images")
        cls.masks = os.path.join(cls.tmp.name, "masks")
        make_scenes(cls.images, cls.masks, 48, seed=1)
        with open(os.path.join(cls.masks, "classes.txt"), "w") as f:
            f.write("\n".join(CLASSES) + "\n")
        # One run that learns, shared by the tests that read it.
        cls.code, cls.text, cls.folder = cls.train("learns", "--set", "train.epochs=16")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    @classmethod
    def args(cls, *more, images=None, masks=None):
        return ["--set", "task.kind=segmentation", "--set", "model.kind=lraspp_mobilenet_v3_large",
                "--set", "data.format=image_folder", "--set", f"data.root={images or cls.images}",
                "--set", f"data.annotations={masks if masks is not None else cls.masks}",
                "--set", f"model.segmenter.base_size={BASE}", "--set", "model.segmenter.crop_size=48",
                "--set", "data.augment_flip=true", "--set", "data.test_fraction=0.25",
                "--set", "train.batch_size=8", "--set", "performance.threads=1", *more]

    @classmethod
    def train(cls, name, *more, images=None, masks=None, env=None):
        out = os.path.join(cls.tmp.name, name)
        code, text = run(CLI, "train", *cls.args(*more, images=images, masks=masks), "--out", out, env=env)
        runs = sorted(glob.glob(os.path.join(out, "*")))
        return code, text, runs[0] if runs else None

    def last_report(self, folder):
        steps = sorted(int(os.path.basename(p)[len("step-"):-len(".json")])
                       for p in glob.glob(os.path.join(folder, "eval", "step-*.json")))
        with open(os.path.join(folder, "eval", f"step-{steps[-1]}.json")) as f:
            return json.load(f)

    def test_a_run_learns_and_records_the_figures(self):
        self.assertEqual(self.code, 0, self.text)
        rows = [r for r in read_csv(os.path.join(self.folder, "metrics.csv")) if r["kind"] == "eval"]
        miou = [float(r["eval_miou"]) for r in rows]
        # Learning is judged at the best evaluation: 36 scenes overfit once the
        # rate anneals, and where depends on the CPU's kernels (2026-12-01, an
        # AMD EPYC VM: 0.28 at first, 0.80 at epoch 6, 0.48 at the end; seeds
        # 2 and 3 of the scenes: best 0.64 and 0.72, last 0.53 and 0.49).
        best = max(range(len(miou)), key=lambda k: miou[k])
        self.assertGreater(miou[best], 0.6, miou)
        self.assertGreater(miou[best], miou[0] + 0.3, miou)
        for r in rows:  # a segmenter's figures, not a classifier's
            self.assertEqual(r["eval_accuracy"], "")
            self.assertNotEqual(r["eval_pixel_accuracy"], "")
            self.assertNotEqual(r["eval_dice"], "")
        with open(os.path.join(self.folder, "eval", f"step-{rows[best]['step']}.json")) as f:
            at_best = json.load(f)
        self.assertAlmostEqual(at_best["mean_iou"], miou[best], places=6)
        self.assertTrue(all(c["iou"] > 0.3 for c in at_best["per_class"]), at_best["per_class"])
        report = self.last_report(self.folder)
        self.assertEqual(report["task"], "segmentation")
        self.assertEqual(report["classes"], CLASSES)
        self.assertEqual([c["class"] for c in report["per_class"]], CLASSES)
        with open(os.path.join(self.folder, "summary.json")) as f:
            summary = json.load(f)
        for key, field in (("test_miou", "mean_iou"), ("test_pixel_accuracy", "pixel_accuracy"),
                           ("test_dice", "mean_dice"), ("test_loss", "loss")):
            self.assertAlmostEqual(summary[key], report[field], places=12)
        self.assertAlmostEqual(summary["best_eval_miou"], max(miou), places=6)
        # The CLI's summary gives the figure the task is judged by first, then the others
        # (studio/figure_words.h), each as summary.json has it.
        self.assertIn("  test:            mean IoU %.4f, pixel accuracy %.2f%%, Dice (mean of classes) %.4f, loss %.4f\n"
                      % (summary["test_miou"], 100 * summary["test_pixel_accuracy"], summary["test_dice"],
                         summary["test_loss"]), self.text)
        self.assertIn("  best eval:       mean IoU %.4f\n" % summary["best_eval_miou"], self.text)

    def references_matrix(self, folder, truth_of):
        """torchvision's lraspp_mobilenet_v3_large loaded strict with the run's last weights, the
        references' evaluation preset (the shorter side resized to base_size, the mask by nearest) on
        the run's test images, and their ConfusionMatrix; truth_of(image path) is its mask."""
        model = torchvision.models.segmentation.lraspp_mobilenet_v3_large(num_classes=3, weights=None,
                                                                            weights_backbone=None)
        model.load_state_dict(torch.load(os.path.join(folder, "checkpoints", "last.ckpt"))["model"])
        model.eval()
        matrix = ConfusionMatrix(3)
        tests = [r["source"] for r in read_csv(os.path.join(folder, "splits.csv")) if r["split"] == "test"]
        with torch.inference_mode():
            for path in tests:
                image = tv_tensors.Image(torch.from_numpy(np.array(Image.open(path).convert("RGB"))).permute(2, 0, 1))
                image, mask = F.resize(image, BASE, antialias=True), F.resize(tv_tensors.Mask(truth_of(path)), BASE)
                x = F.normalize(F.to_dtype(image, torch.float32, scale=True), [0.485, 0.456, 0.406],
                                [0.229, 0.224, 0.225])
                matrix.update(mask.flatten().long(), model(x[None])["out"].argmax(1).flatten())
        return matrix, len(tests)

    def test_the_figures_are_the_references_on_torchvisions_model_with_the_runs_weights(self):
        # The same matrix as the run's, pixel for pixel, and the same figures.
        self.assertEqual(self.code, 0, self.text)
        matrix, images = self.references_matrix(
            self.folder, lambda path: torch.from_numpy(np.array(Image.open(path.replace(self.images, self.masks)))))
        self.assertEqual(images, 12)
        report = self.last_report(self.folder)
        self.assertEqual(report["confusion"], matrix.mat.tolist())
        total, per_class, iou = matrix.compute(torch.float64)
        self.assertAlmostEqual(report["pixel_accuracy"], float(total), delta=1e-9)
        self.assertAlmostEqual(report["mean_iou"], float(iou.nanmean()), delta=1e-9)
        self.assertAlmostEqual(report["mean_class_accuracy"], float(per_class.nanmean()), delta=1e-9)
        np.testing.assert_allclose([c["iou"] for c in report["per_class"]], iou.numpy(), atol=1e-9)
        self.assertEqual(report["examples"], 12)
        self.assertEqual(report["pixels"], int(matrix.mat.sum()))

    def test_a_coco_json_of_polygons_and_rles_trains_as_the_references_read_it(self):
        # The scenes' squares as polygons and discs as RLE (uncompressed, as COCO's crowds are: the
        # references' frPyObjects takes no other) in a COCO instances JSON (category ids 5 and 9):
        # the run's test matrix is the references' with ConvertCocoPolysToMask's targets.
        from pycocotools import mask as mask_utils
        from coco_mask_reference import rle_runs, semantic_target
        images, annotations = [], []
        names = sorted(os.listdir(self.images))
        for i, name in enumerate(names):
            truth = np.array(Image.open(os.path.join(self.masks, name)))
            h, w = truth.shape
            images.append({"id": i + 1, "file_name": name, "height": h, "width": w})
            ys, xs = np.nonzero((truth == 1) | (truth == 255))
            square = [float(xs.min()), float(ys.min()), float(xs.max() + 1), float(ys.min()),
                      float(xs.max() + 1), float(ys.max() + 1), float(xs.min()), float(ys.max() + 1)]
            annotations.append({"id": 2 * i + 1, "image_id": i + 1, "category_id": 5, "iscrowd": 0,
                                "segmentation": [square], "bbox": [square[0], square[1], square[2] - square[0],
                                                                   square[5] - square[1]]})
            disc = (truth == 2).astype(np.uint8)
            annotations.append({"id": 2 * i + 2, "image_id": i + 1, "category_id": 9, "iscrowd": 1,
                                "segmentation": {"size": [h, w], "counts": rle_runs(disc)},
                                "bbox": [float(v) for v in mask_utils.toBbox(
                                    mask_utils.encode(np.asfortranarray(disc)))]})
        coco = {"images": images, "annotations": annotations,
                "categories": [{"id": 9, "name": "blue disc"}, {"id": 5, "name": "red square"}]}
        path = os.path.join(self.tmp.name, "instances.json")
        with open(path, "w") as f:
            json.dump(coco, f)
        code, text, folder = self.train("coco", "--set", "train.epochs=3", masks=path)
        self.assertEqual(code, 0, text)
        by_name = {im["file_name"]: im for im in images}
        remap = {5: 1, 9: 2}  # the categories by id after the background

        def truth_of(image_path):
            im = by_name[os.path.basename(image_path)]
            anno = [dict(a, category_id=remap[a["category_id"]]) for a in annotations if a["image_id"] == im["id"]]
            return semantic_target(anno, im["height"], im["width"])

        matrix, _ = self.references_matrix(folder, truth_of)
        report = self.last_report(folder)
        self.assertEqual(report["classes"], ["background", "red square", "blue disc"])
        self.assertEqual(report["confusion"], matrix.mat.tolist())
        # predict --annotations takes the same JSON: its figures are the references' on the masks it
        # writes against ConvertCocoPolysToMask's targets, every image at its own size.
        self.assert_predicts_figures(folder, self.images, path, truth_of, len(names))
        # A file of boxes alone is named for what it lacks.
        for a in coco["annotations"]:
            del a["segmentation"]
        with open(path, "w") as f:
            json.dump(coco, f)
        code, text, _ = self.train("coco-boxes", masks=path)
        self.assertNotEqual(code, 0)
        self.assertIn("has no \"segmentation\"", text)

    def test_yolo_polygons_train_as_pycocotools_paints_them_on_the_data_yamls_splits(self):
        # Ultralytics' segmentation layout: images/{train,val,test}, a labels/*.txt of "class x1 y1 ..."
        # polygons (fractions of the image) per image, a data.yaml naming the classes and the splits.
        # Each square a four-point polygon, each disc a 24-point one; the run's test matrix is the
        # references' on its test: images, their targets the polygons in pixels (the fraction times
        # the side, as read) through pycocotools' frPyObjects, painted as ConvertCocoPolysToMask does.
        from coco_mask_reference import semantic_target
        root = os.path.join(self.tmp.name, "yolo")
        names = sorted(os.listdir(self.images))
        polygons = {}
        for i, name in enumerate(names):
            split = "train" if i < 32 else "val" if i < 38 else "test"
            for part in ("images", "labels"):
                os.makedirs(os.path.join(root, part, split), exist_ok=True)
            shutil.copy(os.path.join(self.images, name), os.path.join(root, "images", split, name))
            truth = np.array(Image.open(os.path.join(self.masks, name)))
            h, w = truth.shape
            ys, xs = np.nonzero((truth == 1) | (truth == 255))
            square = [xs.min(), ys.min(), xs.max() + 1, ys.min(), xs.max() + 1, ys.max() + 1, xs.min(), ys.max() + 1]
            ys, xs = np.nonzero(truth == 2)
            cy, cx, r = ys.mean() + 0.5, xs.mean() + 0.5, np.sqrt(len(xs) / np.pi)
            angles = np.arange(24) * 2 * np.pi / 24
            disc = [v for a in angles for v in (cx + r * np.cos(a), cy + r * np.sin(a))]
            lines, pixels = [], []
            for cls, poly in ((0, square), (1, disc)):
                text = ["%.6f" % (float(v) / (w if k % 2 == 0 else h)) for k, v in enumerate(poly)]
                lines.append(" ".join([str(cls)] + text))
                pixels.append((cls + 1, [float(t) * (w if k % 2 == 0 else h) for k, t in enumerate(text)]))
            polygons[name] = (h, w, pixels)
            with open(os.path.join(root, "labels", split, os.path.splitext(name)[0] + ".txt"), "w") as f:
                f.write("\n".join(lines) + "\n")
        data_yaml = os.path.join(root, "data.yaml")
        with open(data_yaml, "w") as f:
            f.write("path: .\ntrain: images/train\nval: images/val\ntest: images/test\n"
                    "names:\n  0: red square\n  1: blue disc\n")
        code, text, folder = self.train("yolo", "--set", "train.epochs=3", "--set", f"data.root={root}",
                                        masks=data_yaml)
        self.assertEqual(code, 0, text)
        splits = read_csv(os.path.join(folder, "splits.csv"))
        self.assertEqual(sorted(os.path.basename(r["source"]) for r in splits if r["split"] == "test"), names[38:])
        self.assertEqual(len([r for r in splits if r["split"] == "validation"]), 6)

        def truth_of(image_path):
            h, w, pixels = polygons[os.path.basename(image_path)]
            return semantic_target([{"segmentation": [p], "category_id": c} for c, p in pixels], h, w)

        matrix, images = self.references_matrix(folder, truth_of)
        self.assertEqual(images, len(names) - 38)
        self.assert_predicts_figures(folder, os.path.join(root, "images", "test"), data_yaml, truth_of,
                                     len(names) - 38)
        report = self.last_report(folder)
        self.assertEqual(report["classes"], CLASSES)
        self.assertEqual(report["confusion"], matrix.mat.tolist())
        # A box's line among the polygons, and a class past the names: the file and line named.
        bad = os.path.join(root, "labels", "train", os.path.splitext(names[0])[0] + ".txt")
        with open(bad, "a") as f:
            f.write("0 0.5 0.5 0.2 0.2\n")
        code, text, _ = self.train("yolo-box", "--set", f"data.root={root}", masks=data_yaml)
        self.assertEqual(code, 2, text)
        self.assertIn(bad + " line 3: a polygon needs at least three points", text)
        with open(bad, "w") as f:
            f.write("2 0.1 0.1 0.5 0.1 0.5 0.5\n")
        code, text, _ = self.train("yolo-class", "--set", f"data.root={root}", masks=data_yaml)
        self.assertEqual(code, 2, text)
        self.assertIn(bad + " line 1: class 2, but there are 2 classes", text)

    def assert_predicts_figures(self, folder, images, annotations, truth_of, count):
        """predict on the images with --annotations: the figures it prints are the references'
        ConfusionMatrix of the masks it writes against truth_of(image path)."""
        out = os.path.join(self.tmp.name, "predicted-" + os.path.basename(folder))
        code, text = run(CLI, "predict", folder, "--input", images, "--annotations", annotations, "--out", out)
        self.assertEqual(code, 0, text)
        matrix = ConfusionMatrix(3)
        for name in sorted(os.listdir(images)):
            written = torch.from_numpy(np.array(Image.open(os.path.join(out, os.path.splitext(name)[0] + ".png"))))
            matrix.update(truth_of(os.path.join(images, name)).flatten().long(), written.flatten().long())
        total, _, iou = matrix.compute(torch.float64)
        printed = dict(line.strip().split(" = ") for line in text.splitlines() if " = " in line)
        self.assertAlmostEqual(float(printed["mean IoU"]), float(iou.nanmean()), delta=1e-6)
        self.assertAlmostEqual(float(printed["pixel accuracy"]), float(total), delta=1e-6)
        self.assertIn(f"{count} images with a mask", text)

    def test_predict_writes_torchvisions_masks_and_their_figures(self):
        # predict on the test images: each index PNG is the arg-max of torchvision's model with the
        # run's weights, its logits resized back to the image's size (as torchvision's segmenters
        # resize theirs); with --annotations the printed figures are the references' ConfusionMatrix
        # of those masks against the truth, each image at its own size.
        self.assertEqual(self.code, 0, self.text)
        tests = [r["source"] for r in read_csv(os.path.join(self.folder, "splits.csv")) if r["split"] == "test"]
        inputs = os.path.join(self.tmp.name, "predict-in")
        os.makedirs(inputs)
        for path in tests:
            shutil.copy(path, inputs)
        out = os.path.join(self.tmp.name, "predicted-masks")
        code, text = run(CLI, "predict", self.folder, "--input", inputs, "--annotations", self.masks, "--out", out)
        self.assertEqual(code, 0, text)
        model = torchvision.models.segmentation.lraspp_mobilenet_v3_large(num_classes=3, weights=None,
                                                                            weights_backbone=None)
        model.load_state_dict(torch.load(os.path.join(self.folder, "checkpoints", "last.ckpt"))["model"])
        model.eval()
        matrix = ConfusionMatrix(3)
        with torch.inference_mode():
            for path in tests:
                name = os.path.basename(path)
                written = Image.open(os.path.join(out, name))
                self.assertEqual(written.mode, "P")
                image = tv_tensors.Image(torch.from_numpy(np.array(Image.open(path).convert("RGB"))).permute(2, 0, 1))
                x = F.normalize(F.to_dtype(F.resize(image, BASE, antialias=True), torch.float32, scale=True),
                                [0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
                logits = torch.nn.functional.interpolate(model(x[None])["out"], size=image.shape[-2:],
                                                         mode="bilinear", align_corners=False)
                want = logits.argmax(1)[0].to(torch.uint8)
                np.testing.assert_array_equal(np.array(written), want.numpy(), err_msg=name)
                truth = torch.from_numpy(np.array(Image.open(os.path.join(self.masks, name))))
                matrix.update(truth.flatten().long(), want.flatten().long())
        total, per_class, iou = matrix.compute(torch.float64)
        printed = dict(line.strip().split(" = ") for line in text.splitlines() if " = " in line)
        self.assertAlmostEqual(float(printed["mean IoU"]), float(iou.nanmean()), delta=1e-6)
        self.assertAlmostEqual(float(printed["pixel accuracy"]), float(total), delta=1e-6)
        self.assertAlmostEqual(float(printed["mean class accuracy"]), float(per_class.nanmean()), delta=1e-6)
        self.assertIn("12 images with a mask", text)
        self.assertIn(f"wrote 12 masks into {out}", text)
        # The folder is not written over without --overwrite.
        code, text = run(CLI, "predict", self.folder, "--input", inputs, "--out", out)
        self.assertNotEqual(code, 0)
        self.assertIn("--overwrite", text)

    def test_a_killed_segmentation_run_resumes_bit_for_bit(self):
        # The resize, flip and crop draw from the generator the checkpoint keeps: killed at step 5,
        # resumed from step 4's checkpoint mid-epoch, the run's rows are the uninterrupted run's.
        more = ["--set", "train.batch_size=4", "--set", "train.max_steps=6", "--set", "output.checkpoint_every_steps=2",
                "--set", "schedule.kind=constant", "--set", "evaluation.every_steps=3"]
        code, text, whole = self.train("whole", *more)
        self.assertEqual(code, 0, text)
        code, text, killed = self.train("killed", *more, env={**os.environ, "STUDIO_CRASH_AT": "train-step:5"})
        self.assertNotEqual(code, 0, text)
        code, text = run(CLI, "resume", killed)
        self.assertEqual(code, 0, text)
        columns = ["kind", "step", "epoch", "train_loss", "grad_norm", "eval_loss", "eval_miou", "eval_dice"]
        pick = lambda folder: [[r[c] for c in columns] for r in read_csv(os.path.join(folder, "metrics.csv"))]
        self.assertEqual(pick(killed), pick(whole))
        self.assertEqual(len([r for r in pick(whole) if r[0] == "eval"]), 2)

    def test_the_export_loads_strict_in_torchvision_and_gives_predicts_masks(self):
        # export: model.safetensors with model.py, whose build() is torchvision's model loaded strict;
        # on preprocessing.json's recipe its masks are predict's on the export, pixel for pixel.
        self.assertEqual(self.code, 0, self.text)
        export = os.path.join(self.tmp.name, "export")
        code, text = run(CLI, "export", self.folder, "--out", export)
        self.assertEqual(code, 0, text)
        with open(os.path.join(export, "preprocessing.json")) as f:
            pre = json.load(f)
        self.assertEqual((pre["task"], pre["classes"], pre["base_size"]), ("segmentation", CLASSES, BASE))
        with open(os.path.join(export, "README.md")) as f:
            self.assertIn("Test mean IoU", f.read())
        sys.path.insert(0, export)
        try:
            import model as exported  # noqa: the export's model.py
        finally:
            sys.path.remove(export)
        net = exported.build()
        self.assertEqual(type(net).__name__, "LRASPP")
        masks = os.path.join(self.tmp.name, "export-masks")
        code, text = run(CLI, "predict", export, "--input", self.images, "--out", masks)
        self.assertEqual(code, 0, text)
        mean, std = pre["normalization"]["mean"], pre["normalization"]["std"]
        with torch.inference_mode():
            for name in sorted(os.listdir(self.images))[:6]:
                image = tv_tensors.Image(torch.from_numpy(np.array(Image.open(os.path.join(self.images, name))
                                                                   .convert("RGB"))).permute(2, 0, 1))
                x = F.normalize(F.to_dtype(F.resize(image, pre["base_size"], antialias=True), torch.float32,
                                           scale=True), mean, std)
                logits = torch.nn.functional.interpolate(net(x[None])["out"], size=image.shape[-2:],
                                                         mode="bilinear", align_corners=False)
                np.testing.assert_array_equal(np.array(Image.open(os.path.join(masks, name))),
                                              logits.argmax(1)[0].numpy(), err_msg=name)

    def test_the_onnx_export_gives_predicts_masks_in_onnx_runtime_at_any_size(self):
        # --format onnx: model.onnx with the batch, height and width dynamic, checked by the export
        # against the studio's logits (export.json); here, each photo at its own size through ONNX
        # Runtime, the logits resized back as predict does: the same masks as predict's.
        import onnxruntime as ort
        self.assertEqual(self.code, 0, self.text)
        export = os.path.join(self.tmp.name, "export-onnx")
        code, text = run(CLI, "export", self.folder, "--out", export, "--format", "onnx")
        self.assertEqual(code, 0, text)
        with open(os.path.join(export, "export.json")) as f:
            report = json.load(f)
        self.assertTrue(report["passed"], report)
        self.assertEqual([c["file"] for c in report["checks"]], ["model.safetensors", "model.onnx"])
        for c in report["checks"]:
            self.assertLessEqual(c["largest_difference"], 1e-4, c)
            self.assertEqual(c["top1_agreement"], 1.0, c)
        with open(os.path.join(export, "preprocessing.json")) as f:
            pre = json.load(f)
        self.assertEqual(pre["onnx"]["output"], "logits")
        with open(os.path.join(export, "README.md")) as f:
            self.assertIn("ort.InferenceSession", f.read())
        session = ort.InferenceSession(os.path.join(export, "model.onnx"), providers=["CPUExecutionProvider"])
        masks = os.path.join(self.tmp.name, "onnx-masks")
        code, text = run(CLI, "predict", self.folder, "--input", self.images, "--out", masks)
        self.assertEqual(code, 0, text)
        mean, std = pre["normalization"]["mean"], pre["normalization"]["std"]
        sizes = set()
        for name in sorted(os.listdir(self.images))[:8]:
            image = tv_tensors.Image(torch.from_numpy(np.array(Image.open(os.path.join(self.images, name))
                                                               .convert("RGB"))).permute(2, 0, 1))
            x = F.normalize(F.to_dtype(F.resize(image, pre["base_size"], antialias=True), torch.float32,
                                       scale=True), mean, std)
            sizes.add(tuple(x.shape[-2:]))
            logits = torch.from_numpy(session.run(None, {"input": x[None].numpy()})[0])
            logits = torch.nn.functional.interpolate(logits, size=image.shape[-2:], mode="bilinear",
                                                     align_corners=False)
            found = logits.argmax(1)[0].numpy()
            want = np.array(Image.open(os.path.join(masks, name)))
            # ONNX Runtime's float sums differ from LibTorch's in the last bits: a pixel whose two
            # best logits are that close may flip, and none other.
            self.assertGreaterEqual((found == want).mean(), 0.999, name)
        self.assertGreater(len(sizes), 1, sizes)  # photos of several sizes through one model.onnx
        code, text = run(CLI, "export", self.folder, "--out", export + "-int8", "--format", "onnx",
                         "--quantize", "int8")
        self.assertEqual(code, 2, text)
        self.assertIn("--quantize applies to a classifier's ONNX export", text)

    def test_weights_load_as_torchvisions_builders_take_them(self):
        # A segmenter's state dict (21 classes, as torchvision's COCO-with-VOC-labels weights): every
        # tensor but the class layers, which are new for the data's 3; a classifier's state dict into
        # the backbone, as weights_backbone. Trained one step at lr 1e-9: the weights are the file's.
        more = ["--set", "train.max_steps=1", "--set", "schedule.kind=constant", "--set", "optimizer.lr=1e-9"]
        torch.manual_seed(0)
        whole = torchvision.models.segmentation.lraspp_mobilenet_v3_large(num_classes=21, weights=None,
                                                                            weights_backbone=None).state_dict()
        path = os.path.join(self.tmp.name, "lraspp21.pth")
        torch.save(whole, path)
        code, text, folder = self.train("weights", "--set", f"model.weights={path}", *more)
        self.assertEqual(code, 0, text)
        state = torch.load(os.path.join(folder, "checkpoints", "last.ckpt"))["model"]
        for key in ("backbone.0.0.weight", "backbone.16.0.weight", "classifier.cbr.0.weight",
                    "classifier.scale.1.weight"):
            np.testing.assert_allclose(state[key].numpy(), whole[key].numpy(), atol=1e-6, err_msg=key)
        self.assertEqual(tuple(state["classifier.high_classifier.weight"].shape)[0], 3)
        with open(os.path.join(folder, "log.txt")) as f:
            self.assertIn("new class layers for the data's 3 classes (the file's had 21)", f.read())
        classifier = torchvision.models.mobilenet_v3_large(weights=None).state_dict()
        path = os.path.join(self.tmp.name, "mobilenet.pth")
        torch.save(classifier, path)
        code, text, folder = self.train("backbone-weights", "--set", f"model.weights={path}", *more)
        self.assertEqual(code, 0, text)
        state = torch.load(os.path.join(folder, "checkpoints", "last.ckpt"))["model"]
        np.testing.assert_allclose(state["backbone.0.0.weight"].numpy(), classifier["features.0.0.weight"].numpy(),
                                   atol=1e-6)
        # Another network's weights are refused, naming a tensor that does not fit.
        path = os.path.join(self.tmp.name, "resnet18.pth")
        torch.save(torchvision.models.resnet18(weights=None).state_dict(), path)
        code, text, _ = self.train("wrong-weights", "--set", f"model.weights={path}", *more)
        self.assertNotEqual(code, 0)
        self.assertIn("resnet18.pth", text)
        self.assertIn("has no features.0.0.weight", text)

    def test_pascal_vocs_folder_trains_on_its_train_list_and_tests_on_its_val_list(self):
        root = os.path.join(self.tmp.name, "VOC2012")
        images, masks = os.path.join(root, "JPEGImages"), os.path.join(root, "SegmentationClass")
        make_scenes(images, masks, 10, seed=3, palette=True, image_ext=".jpg")
        lists = os.path.join(root, "ImageSets", "Segmentation")
        os.makedirs(lists)
        stems = [f"{i:03d}" for i in range(10)]
        for name, part in (("train", stems[:7]), ("val", stems[7:])):
            with open(os.path.join(lists, name + ".txt"), "w") as f:
                f.write("\n".join(part) + "\n")
        code, text, folder = self.train("voc", "--set", "train.max_steps=2", "--set", "schedule.kind=constant",
                                      images=root, masks="")
        self.assertEqual(code, 0, text)
        splits = read_csv(os.path.join(folder, "splits.csv"))
        self.assertEqual(sorted(os.path.basename(r["source"]) for r in splits if r["split"] == "test"),
                         [s + ".jpg" for s in stems[7:]])
        with open(os.path.join(folder, "log.txt")) as f:
            log = f.read()
        self.assertIn("7 training, 0 validation, 3 test images", log)
        self.assertIn("training from " + root + "/ImageSets/Segmentation/train.txt", log)
        report = self.last_report(folder)
        self.assertEqual(report["classes"], [
            "__background__", "aeroplane", "bicycle", "bird", "boat", "bottle", "bus", "car", "cat", "chair", "cow",
            "diningtable", "dog", "horse", "motorbike", "person", "pottedplant", "sheep", "sofa", "train", "tvmonitor"])

    def test_the_auxiliary_head_trains_and_loads_into_torchvisions_model(self):
        code, text, folder = self.train("aux", "--set", "model.kind=deeplabv3_mobilenet_v3_large",
                                        "--set", "model.segmenter.aux_loss=true", "--set", "train.max_steps=2",
                                        "--set", "schedule.kind=constant",
                                        "--set", "train.batch_size=4")
        self.assertEqual(code, 0, text)
        state = torch.load(os.path.join(folder, "checkpoints", "last.ckpt"))["model"]
        self.assertTrue(any(k.startswith("aux_classifier.") for k in state))
        model = torchvision.models.segmentation.deeplabv3_mobilenet_v3_large(num_classes=3, aux_loss=True,
                                                                               weights=None, weights_backbone=None)
        model.load_state_dict(state)  # strict: every name and shape is torchvision's
        # LRASPP has no auxiliary head: refused before anything is read.
        code, text, _ = self.train("lraspp-aux", "--set", "model.segmenter.aux_loss=true")
        self.assertNotEqual(code, 0)
        self.assertIn("model.segmenter.aux_loss", text)
        self.assertIn("has no auxiliary head", text)

    def test_bad_masks_and_classes_are_named(self):
        def broken(name, change):
            images, masks = os.path.join(self.tmp.name, name, "images"), os.path.join(self.tmp.name, name, "masks")
            shutil.copytree(self.images, images)
            shutil.copytree(self.masks, masks)
            change(images, masks)
            return self.train(name + "-run", "--set", "train.max_steps=1", images=images, masks=masks)

        def resize(images, masks):
            Image.open(os.path.join(masks, "005.png")).crop((0, 0, 20, 20)).save(os.path.join(masks, "005.png"))

        code, text, _ = broken("small-mask", resize)
        self.assertNotEqual(code, 0)
        self.assertIn("005.png", text)
        self.assertIn("20x20", text)

        def stray(images, masks):
            m = np.array(Image.open(os.path.join(masks, "007.png")))
            m[3, 4] = 9
            Image.fromarray(m).save(os.path.join(masks, "007.png"))

        code, text, _ = broken("stray-value", stray)
        self.assertNotEqual(code, 0)
        self.assertIn("007.png", text)
        self.assertIn("value 9 (at x 4, y 3)", text)

        code, text, _ = broken("no-classes", lambda images, masks: os.remove(os.path.join(masks, "classes.txt")))
        self.assertNotEqual(code, 0)
        self.assertIn("data.class_names", text)
        self.assertIn("classes.txt", text)

        code, text, _ = self.train("classifier", "--set", "model.kind=resnet18")
        self.assertNotEqual(code, 0)
        self.assertIn("needs a segmentation model", text)


if __name__ == "__main__":
    unittest.main()
