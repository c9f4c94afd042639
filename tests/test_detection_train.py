"""Training a detector through the CLI (issue 43): task.kind detection on
synthetic scenes made here (Fashion-MNIST items pasted on noisy canvases, a
COCO instances JSON of their boxes: tests/reference/detection_scenes.py), with each loss part as its own column,
COCO's figures at each evaluation and in summary.json, a killed run that
resumes bit for bit, and bad boxes named.

The boxes' figures themselves are checked against pycocotools in
test_coco_eval, the detector's losses against torchvision's in
test_detectors; this suite checks that a run puts them together."""
import glob
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference"))
from detection_scenes import make_scenes  # noqa: E402

CLI = os.environ["STUDIO_CLI"]
PARTS = ["loss_classifier", "loss_box_reg", "loss_objectness", "loss_rpn_box_reg"]


def run(*args, env=None):
    p = subprocess.run(list(args), capture_output=True, text=True, timeout=900, env=env)
    return p.returncode, p.stdout + p.stderr


class DetectionTrainTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="studio-detect-")
        cls.root = os.path.join(cls.tmp.name, "scenes")
        cls.annotations = make_scenes(cls.root, 48, 1)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def args(self, *more):
        return ["--set", "task.kind=detection", "--set", "model.kind=fasterrcnn_mobilenet_v3_large_320_fpn",
                "--set", "data.format=image_folder", "--set", f"data.root={self.root}",
                "--set", f"data.annotations={self.annotations}", "--set", "data.test_fraction=0.25",
                "--set", "model.detector.min_size=128", "--set", "model.detector.max_size=128",
                "--set", "model.detector.rois_per_image=32", "--set", "train.batch_size=6",
                "--set", "optimizer.kind=sgd", "--set", "optimizer.lr=0.02", "--set", "optimizer.momentum=0.9",
                "--set", "schedule.kind=cosine", "--set", "schedule.warmup_steps=12",
                "--set", "train.log_every_steps=1", *more]

    def train(self, name, *more, env=None):
        out = os.path.join(self.tmp.name, name)
        code, text = run(CLI, "train", *self.args(*more), "--out", out, env=env)
        runs = sorted(glob.glob(os.path.join(out, "*")))
        return code, text, runs[0] if runs else None

    @staticmethod
    def csv(folder):
        with open(os.path.join(folder, "metrics.csv")) as f:
            lines = f.read().splitlines()
        header = lines[0].split(",")
        return [dict(zip(header, line.split(","))) for line in lines[1:]]

    def test_a_detector_learns_to_find_the_items(self):
        # 36 training images, 12 held out for testing; from random weights (no
        # download here). Measured on the 2-core VM: the loss from 1.77 to 0.36,
        # AP50 0.49 and 0.47 at the last two evaluations, in 60 s.
        code, text, folder = self.train("learns", "--set", "train.epochs=15", "--set", "evaluation.every_steps=18")
        self.assertEqual(code, 0, text)
        rows = self.csv(folder)
        train = [r for r in rows if r["kind"] == "train"]
        self.assertEqual(len(train), 15 * 6)
        # The loss is the sum of its four parts, each its own column.
        for r in train:
            parts = [float(r[p]) for p in PARTS]
            self.assertAlmostEqual(sum(parts), float(r["train_loss"]), delta=1e-4 * max(1.0, sum(parts)))
        first = np.mean([float(r["train_loss"]) for r in train[:6]])
        last = np.mean([float(r["train_loss"]) for r in train[-6:]])
        self.assertLess(last, 0.5 * first, f"the loss went from {first:.3f} to {last:.3f}")
        evals = [r for r in rows if r["kind"] == "eval"]
        self.assertEqual(len(evals), 5)
        maps = [float(r["eval_map"]) for r in evals]
        self.assertTrue(all(0 <= m <= 1 for m in maps), maps)
        with open(os.path.join(folder, "summary.json")) as f:
            summary = json.load(f)
        # It finds the items: half of them at IoU 0.5 would be 0.5.
        self.assertGreater(summary["test_map50"], 0.25, summary)
        self.assertGreaterEqual(summary["test_map50"], summary["test_map75"])
        self.assertGreaterEqual(summary["test_map50"], summary["test_map"])
        report = sorted(glob.glob(os.path.join(folder, "eval", "step-*.json")))[-1]
        with open(report) as f:
            figures = json.load(f)
        self.assertEqual(figures["task"], "detection")
        self.assertEqual([c["class"] for c in figures["per_class"]], ["trouser", "bag"])
        self.assertAlmostEqual(figures["map"], summary["test_map"], places=9)

    def test_a_killed_detection_run_resumes_bit_for_bit(self):
        # With every box augmentation on: their draws come from the generator the checkpoint keeps.
        more = ["--set", "train.epochs=2", "--set", "output.checkpoint_every_steps=4", "--set", "data.augment_flip=true",
                "--set", "data.augment_photometric=true", "--set", "data.augment_zoom_out=true",
                "--set", "data.augment_iou_crop=true"]
        code, text, whole = self.train("whole", *more)
        self.assertEqual(code, 0, text)
        code, text, killed = self.train("killed", *more, env={**os.environ, "STUDIO_CRASH_AT": "train-step:7"})
        self.assertNotEqual(code, 0, text)
        code, text = run(CLI, "resume", killed)
        self.assertEqual(code, 0, text)
        columns = ["kind", "step", "epoch", "train_loss", "grad_norm", "eval_map", "eval_map50", *PARTS]
        pick = lambda rows: [[r[c] for c in columns] for r in rows]
        self.assertEqual(pick(self.csv(killed)), pick(self.csv(whole)))
        # Not built yet, and said so rather than failing inside.
        code, text = run(CLI, "predict", whole, "--input", self.root, "--out", os.path.join(self.tmp.name, "p.csv"))
        self.assertEqual(code, 2, text)
        self.assertIn("trained a detector (task.kind detection): predicting boxes on new files is not built yet", text)
        code, text = run(CLI, "export", whole, "--out", os.path.join(self.tmp.name, "exported"))
        self.assertEqual(code, 2, text)
        self.assertIn("exporting a detector is not built yet", text)

    def test_summary_counts_boxes_and_lists_the_detector(self):
        code, text = run(CLI, "summary", *self.args())
        self.assertEqual(code, 0, text)
        with open(self.annotations) as f:
            boxes = len(json.load(f)["annotations"])
        self.assertIn("boxes of each split and class:", text)
        counted = [int(line.split()[1]) for line in text.splitlines() if line.split()[:1] in (["training"], ["test"])]
        self.assertEqual(sum(counted), boxes, text)
        for part in ("BackboneWithFPN", "RegionProposalNetwork", "RoIHeads"):
            self.assertIn(part, text)

    def test_a_box_past_its_image_is_named(self):
        with open(self.annotations) as f:
            coco = json.load(f)
        coco["annotations"][3]["bbox"][0] = 120.0  # 120 + its width passes 128
        bad = os.path.join(self.tmp.name, "bad.json")
        with open(bad, "w") as f:
            json.dump(coco, f)
        code, text, _ = self.train("bad", "--set", f"data.annotations={bad}", "--set", "train.epochs=1")
        self.assertEqual(code, 2, text)
        self.assertIn("bad.json annotations[3] (id 4): the box [120, ", text)
        self.assertIn("extends past its image", text)
        code, text, folder = self.train("clipped", "--set", f"data.annotations={bad}", "--set", "train.max_steps=1",
                                        "--set", "data.on_bad_box=clip", "--set", "train.epochs=1")
        self.assertEqual(code, 0, text)
        with open(os.path.join(folder, "log.txt")) as f:
            self.assertIn("1 boxes clipped to their images and 0 skipped (data.on_bad_box clip)", f.read())


if __name__ == "__main__":
    unittest.main(verbosity=2)
