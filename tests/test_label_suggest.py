#!/usr/bin/env python3
"""Issue 62, items 3 to 5: training-studio-cli label --suggest RUN --data
FOLDER --out order.csv, the order to label a folder's images in by a
trained classifier's uncertainty, near-copies last; label --prelabel, the
model's proposals.

A Fashion-MNIST CNN trained briefly through the CLI; 60 of the test images
as PNG files, with an exact copy of one and a copy with a few pixels
changed. The reference: the same run's `predict` probabilities for every
class (--top-k 10) and the uncertainty computed from them here, as Settles'
survey (2009, section 3.1) defines least confidence, margin and entropy:
- every image is ordered once; the order of the images with no near-copy
  before them is the reference's, highest uncertainty first (the studio's
  own figures within 1e-6 of the reference's);
- of the copies, those after their original go after every other image,
  each naming the image it nearly copies; with --similarity above 1 there is
  no guard and the whole order is the reference's;
- label --prelabel proposes each image's three most probable classes with
  predict's probabilities (test_detection_train checks a detector's boxes);
- bad input exits 2 naming it.
"""
import csv
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference"))
from idx_reader import idx  # noqa: E402
from suite_limits import HANG_LIMIT_S  # noqa: E402

CLI = os.environ["STUDIO_CLI"]
FASHION = "/usr/share/datasets/fashion-mnist"


def run(*args):
    p = subprocess.run([CLI, *args], capture_output=True, text=True, timeout=HANG_LIMIT_S)
    return p.returncode, p.stdout + p.stderr


def read(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def reference_uncertainty(p, how):
    top = np.sort(p)[::-1]
    if how == "least-confidence":
        return 1 - top[0]
    if how == "margin":
        return 1 - (top[0] - top[1])
    q = p[p > 0]
    return float(-(q * np.log(q)).sum())


class LabelSuggestTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="test_label_suggest-")
        cls.images = os.path.join(cls.tmp, "unlabelled")
        os.makedirs(cls.images)
        x = idx(os.path.join(FASHION, "t10k-images-idx3-ubyte.gz"))
        for i in range(60):
            Image.fromarray(x[i]).save(os.path.join(cls.images, f"{i:03d}.png"))
        shutil.copy(os.path.join(cls.images, "007.png"), os.path.join(cls.images, "007-copy.png"))
        near = x[12].copy()
        near[:2, :2] = 255  # four pixels of 784 changed
        Image.fromarray(near).save(os.path.join(cls.images, "012-near.png"))
        code, text = run("train", "--preset", "fashion-mnist-cnn", "--set", "data.train_limit=2000",
                         "--set", "data.test_limit=200", "--set", "train.epochs=3", "--set", "performance.threads=1",
                         "--out", os.path.join(cls.tmp, "runs"))
        assert code == 0, text
        cls.run_dir = os.path.join(cls.tmp, "runs", os.listdir(os.path.join(cls.tmp, "runs"))[0])
        code, text = run("predict", cls.run_dir, "--input", cls.images, "--top-k", "10",
                         "--out", os.path.join(cls.tmp, "probabilities.csv"))
        assert code == 0, text
        cls.probabilities = {}
        for row in read(os.path.join(cls.tmp, "probabilities.csv")):
            p = {row[f"class_{k}"]: float(row[f"probability_{k}"]) for k in range(1, 11)}
            cls.probabilities[os.path.basename(row["source"])] = np.array([p[c] for c in sorted(p)], np.float64)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def suggest(self, name, *more):
        out = os.path.join(self.tmp, name + ".csv")
        code, text = run("label", "--suggest", self.run_dir, "--data", self.images, "--out", out, *more)
        self.assertEqual(code, 0, text)
        return read(out), text

    def assertReferenceOrder(self, rows, how):
        ref = {f: reference_uncertainty(p, how) for f, p in self.probabilities.items()}
        names = [os.path.basename(r["file"]) for r in rows]
        for r, name in zip(rows, names):
            self.assertAlmostEqual(float(r["uncertainty"]), ref[name], delta=1e-6, msg=name)
        for a, b in zip(names, names[1:]):
            self.assertGreaterEqual(ref[a], ref[b] - 1e-6, f"{how}: {a} before {b}")
        return names

    def test_each_strategy_orders_as_the_reference_with_near_copies_last(self):
        for how in ("least-confidence", "margin", "entropy"):
            with self.subTest(strategy=how):
                rows, text = self.suggest(how, "--strategy", how)
                names = [os.path.basename(r["file"]) for r in rows]
                self.assertEqual(sorted(names), sorted(self.probabilities))
                self.assertEqual([int(r["rank"]) for r in rows], list(range(1, len(rows) + 1)))
                placed = [r for r in rows if not r["near_copy_of"]]
                moved = [r for r in rows if r["near_copy_of"]]
                self.assertEqual(rows[:len(placed)], placed, "near-copies go after every other image")
                self.assertReferenceOrder(placed, how)
                pairs = {frozenset((os.path.basename(r["file"]), os.path.basename(r["near_copy_of"]))) for r in moved}
                self.assertIn(frozenset(("007.png", "007-copy.png")), pairs)
                self.assertIn(frozenset(("012.png", "012-near.png")), pairs)
                for r in moved:  # the one it copies is placed before it
                    self.assertIn(r["near_copy_of"], [p["file"] for p in placed])
                self.assertIn(f"{len(moved)} near-copies", text)

    def test_without_the_guard_the_order_is_the_references(self):
        rows, text = self.suggest("unguarded", "--similarity", "2")
        self.assertTrue(all(not r["near_copy_of"] for r in rows))
        self.assertEqual(len(rows), len(self.probabilities))
        self.assertReferenceOrder(rows, "least-confidence")
        self.assertIn("no near-copy guard", text)
        # The predicted class and its probability are predict's.
        for r in rows:
            p = self.probabilities[os.path.basename(r["file"])]
            self.assertAlmostEqual(float(r["probability"]), p.max(), delta=1e-5)

    def test_prelabel_proposes_predicts_classes(self):
        # label --prelabel: each image's three most probable classes with predict's probabilities,
        # made by the model.
        out = os.path.join(self.tmp, "proposals.json")
        code, text = run("label", "--prelabel", self.run_dir, "--data", self.images, "--out", out)
        self.assertEqual(code, 0, text)
        import json
        with open(out) as f:
            doc = json.load(f)
        self.assertEqual(doc["task"], "classification")
        self.assertEqual(len(doc["images"]), len(self.probabilities))
        classes = sorted(doc["classes"])
        for image in doc["images"]:
            p = self.probabilities[os.path.basename(image["file"])]
            order = np.argsort(-p, kind="stable")[:3]
            self.assertEqual(image["made_by"], "model")
            self.assertEqual([t["class"] for t in image["top"]], [classes[k] for k in order], image["file"])
            np.testing.assert_allclose([t["probability"] for t in image["top"]], p[order], atol=1e-6)
            self.assertEqual(image["class"], image["top"][0]["class"])
        code, text = run("label", "--data", self.images)
        self.assertEqual(code, 2, text)
        self.assertIn("give --suggest RUN", text)

    def test_bad_input_is_named(self):
        out = os.path.join(self.tmp, "bad.csv")
        empty = os.path.join(self.tmp, "empty")
        os.makedirs(empty, exist_ok=True)
        for args, said in ((["--strategy", "random"], "--strategy random"),
                           (["--similarity", "0"], "--similarity"),
                           (["--data", empty], empty)):
            with self.subTest(args=args):
                base = ["label", "--suggest", self.run_dir, "--data", self.images, "--out", out]
                if args[0] == "--data":
                    base[4] = args[1]
                    args = []
                code, text = run(*base, *args)
                self.assertEqual(code, 2, text)
                self.assertIn(said, text)
        open(out, "w").close()  # an existing --out is not written over without --overwrite
        code, text = run("label", "--suggest", self.run_dir, "--data", self.images, "--out", out)
        self.assertEqual(code, 2, text)
        self.assertIn("--overwrite", text)


if __name__ == "__main__":
    unittest.main()
