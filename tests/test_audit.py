#!/usr/bin/env python3
"""The data audit (issue 45), through training-studio-cli, against the real
things: cleanlab's find_label_issues on the audit's own out-of-fold
probabilities, and the files the test itself corrupted and copied.

scikit-learn's digits (1,797 images of 8x8) as a PNG folder with train/ and
test/ folders: 8 % of the training images moved to a wrong class by a seeded
draw, and 20 test images copied into the training folder under other names.
- `audit --folds 3`: its label issues are exactly cleanlab's
  find_label_issues(labels, pred_probs, filter_by="prune_by_noise_rate") on
  oof.csv's probabilities, and they find most of the moved images (precision
  and recall printed); the 20 copies are all train-test duplicates; the folds
  are stratified (each class's count per fold within one) and their union is
  the training folder, each file once.
- A stopped audit (Ctrl-C during fold 2) exits 130 and `audit --resume`
  finishes it, resuming fold 2 in its own folder.
- Near copies (one pixel brighter) are near train-test pairs in the model's
  penultimate features, and noise images rank among the outliers; features
  that find more near pairs than images are said to say little.
- Corrections: the suggested file applies to a later run's counts, and bad
  corrections are refused by row.
- Bad input exits 2 naming what is wrong: --folds 1, data the audit cannot
  read yet (a table), a folder that is not an audit.
cleanlab is AGPL: it is used here, as the reference, and never by the studio.
Environment (ctest sets it): STUDIO_CLI.
"""
import csv
import glob
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

import numpy as np
from cleanlab.count import compute_confident_joint
from cleanlab.filter import find_label_issues
from PIL import Image
from sklearn.datasets import load_digits

CLI = os.environ["STUDIO_CLI"]
NOISE = 0.08
COPIES = 20
NEAR = 5       # test images copied into training with one pixel brighter: not the same bytes
STRANGERS = 3  # noise images filed under a class


def cli(*args, timeout=900):
    p = subprocess.run([CLI, *args], capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout + p.stderr


def digits_folder(root):
    """train/ and test/ class folders of PNGs; returns (moved files, copies)."""
    digits = load_digits()
    rng = np.random.default_rng(45)
    order = rng.permutation(len(digits.target))
    test = set(order[: len(order) // 5].tolist())
    moved, copies, test_files = {}, [], []
    train_idx = [i for i in order if i not in test]
    noisy = set(rng.choice(train_idx, int(NOISE * len(train_idx)), replace=False).tolist())
    for i in order:
        i = int(i)
        label = int(digits.target[i])
        split = "test" if i in test else "train"
        if i in noisy:
            label = int((label + rng.integers(1, 10)) % 10)
        folder = os.path.join(root, split, str(label))
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, f"d{i:04d}.png")
        Image.fromarray((digits.images[i] * 255 / 16).astype(np.uint8)).save(path)
        if i in noisy:
            moved[os.path.realpath(path)] = int(digits.target[i])
        if split == "test":
            test_files.append((path, label))
    for path, label in test_files[:COPIES]:
        copy = os.path.join(root, "train", str(label), "copy-" + os.path.basename(path))
        shutil.copyfile(path, copy)
        copies.append(os.path.realpath(copy))
    near = []
    for path, label in test_files[COPIES:COPIES + NEAR]:
        pixels = np.array(Image.open(path))
        pixels[0, 0] = min(int(pixels[0, 0]) + 16, 255)  # a corner pixel a little brighter
        copy = os.path.join(root, "train", str(label), "near-" + os.path.basename(path))
        Image.fromarray(pixels).save(copy)
        near.append((os.path.realpath(copy), os.path.realpath(path)))
    strangers = []
    for s in range(STRANGERS):
        path = os.path.join(root, "train", str(s), f"stranger-{s}.png")
        Image.fromarray(rng.integers(0, 256, (8, 8), dtype=np.uint8)).save(path)
        strangers.append(os.path.realpath(path))
    return moved, copies, near, strangers


def settings(root, out):
    return {
        "schema_version": 2,
        "name": "digits",
        "model": {"kind": "cnn", "width": 16, "depth": 1, "dropout": 0.0},
        "data": {"format": "image_folder", "root": root, "image_size": [8, 8], "channels": 1},
        "train": {"epochs": 12, "batch_size": 32, "seed": 1},
        "optimizer": {"kind": "adamw", "lr": 0.003, "weight_decay": 0.0005},
        "schedule": {"kind": "onecycle", "onecycle": {"max_lr": 0.01, "pct_start": 0.25}},
        "evaluation": {"every_steps": 0},
        "output": {"dir": out},
    }


def load_json(path):
    with open(path) as f:
        return json.load(f)


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


class AuditTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="test_audit-")
        cls.root = os.path.join(cls.tmp, "digits")
        cls.moved, cls.copies, cls.near, cls.strangers = digits_folder(cls.root)
        cls.config = os.path.join(cls.tmp, "digits.json")
        with open(cls.config, "w") as f:
            json.dump(settings(cls.root, os.path.join(cls.tmp, "audits")), f)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def audit_dir(self, out):
        dirs = sorted(glob.glob(os.path.join(out, "*-audit-digits*")))
        self.assertEqual(len(dirs), 1, dirs)
        return dirs[0]

    def test_audit_finds_what_was_done_to_the_data(self):
        out = os.path.join(self.tmp, "full")
        rc, text = cli("audit", "--config", self.config, "--folds", "3", "--out", out)
        self.assertEqual(rc, 0, text)
        d = self.audit_dir(out)
        rows = read_csv(os.path.join(d, "oof.csv"))
        classes = [c[2:] for c in list(rows[0].keys())[3:]]
        self.assertEqual(classes, [str(k) for k in range(10)])
        files = [os.path.realpath(r["file"]) for r in rows]
        labels = np.array([int(r["given"]) for r in rows])
        probs = np.array([[float(r["p_" + c]) for c in classes] for r in rows])
        np.testing.assert_allclose(probs.sum(1), 1.0, atol=1e-5)

        # The folds: the training folder, each file once; stratified.
        train = sorted(os.path.realpath(p) for p in glob.glob(os.path.join(self.root, "train", "*", "*.png")))
        self.assertEqual(sorted(files), train)
        folds = np.array([int(r["fold"]) for r in rows])
        self.assertEqual(sorted(set(folds.tolist())), [1, 2, 3])
        for k in range(10):
            per_fold = [int(((labels == k) & (folds == f)).sum()) for f in (1, 2, 3)]
            self.assertLessEqual(max(per_fold) - min(per_fold), 1, (k, per_fold))

        # Label issues: exactly cleanlab's on the same probabilities. The
        # calibrated confident joint rounds each row to whole examples; where
        # two entries have the same fraction, which one rounds up is numpy's
        # sort order (its SIMD argsort, CPU-dependent) in cleanlab and the
        # class order in the studio. So: the joints are equal but at such
        # ties, and cleanlab given the studio's joint finds the same set.
        report = load_json(os.path.join(d, "audit.json"))
        joint = np.array(report["confident_joint"])
        reference = compute_confident_joint(labels, probs)
        for g in np.flatnonzero((joint != reference).any(1)):
            raw = compute_confident_joint(labels, probs, calibrate=False).astype(float)
            counts = np.bincount(labels, minlength=10)
            calibrated = (raw.T / raw.sum(1) * counts).T
            row = (calibrated / calibrated.sum() * counts.sum())[g]
            differ = np.flatnonzero(joint[g] != reference[g])
            fractions = np.round(row[differ] - np.round(row[differ]), 9)
            self.assertEqual(len(set(fractions.tolist())), 1, (g, row, joint[g], reference[g]))
            self.assertEqual(joint[g].sum(), reference[g].sum())
        found_rows = read_csv(os.path.join(d, "label_issues.csv"))
        found = {os.path.realpath(r["file"]) for r in found_rows}
        for cj in ([None] if (joint == reference).all() else [joint]):
            mask = find_label_issues(labels, probs, filter_by="prune_by_noise_rate", confident_joint=cj)
            expected = {files[i] for i in np.flatnonzero(mask)}
            self.assertEqual(found, expected, f"studio-only {sorted(found - expected)[:5]}, "
                                              f"cleanlab-only {sorted(expected - found)[:5]}")
        confidences = [float(r["self_confidence"]) for r in found_rows]
        self.assertEqual(confidences, sorted(confidences))
        moved = set(self.moved)
        precision = len(found & moved) / max(len(found), 1)
        recall = len(found & moved) / len(moved)
        print(f"label issues: {len(found)} flagged, {len(moved)} moved; precision {precision:.3f}, "
              f"recall {recall:.3f}; cross-validated accuracy {load_json(os.path.join(d, 'audit.json'))['accuracy']}")
        self.assertGreater(recall, 0.6)
        self.assertGreater(precision, 0.6)
        for r in found_rows:  # a moved image's suggestion is mostly its true class
            if os.path.realpath(r["file"]) in moved:
                self.assertNotEqual(r["suggested"], r["given"])

        # Duplicates: the 20 copies, and only they, are train-test pairs.
        dups = read_csv(os.path.join(d, "duplicates.csv"))
        train_test = {os.path.realpath(r["first"]) for r in dups if r["kind"] == "train-test"}
        self.assertEqual(train_test, set(self.copies))
        self.assertEqual(report["duplicates"]["train_test"], COPIES)
        self.assertEqual(report["label_issues"], len(found_rows))
        accuracies = [f["accuracy"] for f in report["folds"]]
        self.assertAlmostEqual(report["accuracy"]["mean"], float(np.mean(accuracies)), places=9)
        self.assertAlmostEqual(report["accuracy"]["std"], float(np.std(accuracies, ddof=1)), places=9)
        # Each fold's accuracy is its out-of-fold predictions'.
        for f in (1, 2, 3):
            sel = folds == f
            self.assertAlmostEqual(accuracies[f - 1], float((probs[sel].argmax(1) == labels[sel]).mean()), places=9)
        self.assertIn("LEAKAGE: 20 test file(s)", text)

        # Near copies (one pixel changed) are near train-test pairs, never
        # exact ones; the noise images are among the least like their class.
        near = {(os.path.realpath(r["first"]), os.path.realpath(r["second"])): float(r["similarity"])
                for r in dups if r["kind"] == "near train-test"}
        for pair in self.near:
            self.assertIn(pair, near)
            self.assertGreaterEqual(near[pair], 0.99)
        self.assertFalse({f for f, _ in self.near} & train_test)
        self.assertEqual(report["duplicates"]["near_train_test"], len(near))
        outliers = [os.path.realpath(r["file"]) for r in read_csv(os.path.join(d, "outliers.csv"))]
        self.assertEqual(sorted(outliers), sorted(files))
        top = outliers[: len(outliers) // 20]
        self.assertTrue(set(self.strangers) <= set(top),
                        [outliers.index(s) for s in self.strangers])

        # Corrections: the suggested file (every suspect relabelled, every
        # copy removed) applies to a later run's plan; the files are untouched.
        suggested = read_csv(os.path.join(d, "suggested_corrections.csv"))
        self.assertEqual(len(suggested), len(found_rows) + COPIES)
        before = self.train_counts()
        rc, text = cli("summary", "--config", self.config, "--set",
                       "data.corrections=" + os.path.join(d, "suggested_corrections.csv"))
        self.assertEqual(rc, 0, text)
        after = self.train_counts(text)
        expected_counts = dict(before)
        by_file = {os.path.realpath(r["file"]): r for r in found_rows}
        for r in suggested:
            f = os.path.realpath(r["file"])
            given = os.path.basename(os.path.dirname(f))
            expected_counts[given] -= 1
            if r["action"] == "relabel":
                self.assertEqual(r["label"], by_file[f]["suggested"])
                expected_counts[r["label"]] += 1
        self.assertEqual(after, expected_counts)
        self.assertTrue(all(os.path.exists(c) for c in self.copies), "corrections never touch the files")

    def train_counts(self, text=None):
        if text is None:
            rc, text = cli("summary", "--config", self.config)
            self.assertEqual(rc, 0, text)
        counts = {}
        for line in text.splitlines():
            parts = line.split()
            if len(parts) == 4 and parts[0] in [str(k) for k in range(10)] and parts[1].isdigit():
                counts[parts[0]] = int(parts[1])
        self.assertEqual(len(counts), 10, text)
        return counts

    def test_features_that_tell_nothing_apart_are_said_so(self):
        # At a similarity of 0.01 nearly every pair is "near": more pairs than
        # images, which the audit must not present as findings.
        out = os.path.join(self.tmp, "loose")
        rc, text = cli("audit", "--config", self.config, "--folds", "2", "--similarity", "0.01", "--out", out,
                       "--set", "train.epochs=2")
        self.assertEqual(rc, 0, text)
        self.assertIn("warning: more near-duplicate pairs", text)
        self.assertIn("than training examples", load_json(os.path.join(self.audit_dir(out), "audit.json"))["feature_note"])
        rc, text = cli("audit", "--config", self.config, "--similarity", "1.5", "--out", out)
        self.assertEqual(rc, 2, text)
        self.assertIn("--similarity must be above 0 and at most 1", text)

    def test_corrections_are_refused_by_name(self):
        train = sorted(glob.glob(os.path.join(self.root, "train", "3", "*.png")))
        bad = [("nowhere/x.png", "remove", "", "is not one of the images under data.root"),
               (os.path.relpath(train[0], self.root), "relabel", "eleven",
                'class "eleven" is not one of the data\'s classes'),
               (os.path.relpath(train[0], self.root), "delete", "", 'action "delete" is none of')]
        for i, (file, action, label, message) in enumerate(bad):
            path = os.path.join(self.tmp, f"corrections-{i}.csv")
            with open(path, "w", newline="") as f:
                csv.writer(f).writerows([["file", "action", "label"], [file, action, label]])
            rc, text = cli("summary", "--config", self.config, "--set", "data.corrections=" + path)
            self.assertEqual(rc, 2, text)
            self.assertIn(f"data.corrections {path} row 2", text)
            self.assertIn(message, text)

    def test_a_table_is_audited_by_its_rows(self):
        # digits as a table (64 pixel columns): 8 % of the training rows
        # relabelled, 20 test rows copied into the training table.
        digits = load_digits()
        rng = np.random.default_rng(7)
        order = rng.permutation(len(digits.target))
        test, train = order[:360], order[360:]
        labels = digits.target.copy()
        noisy = set(rng.choice(train, int(NOISE * len(train)), replace=False).tolist())
        for i in noisy:
            labels[i] = (labels[i] + rng.integers(1, 10)) % 10
        folder = os.path.join(self.tmp, "table")
        os.makedirs(folder, exist_ok=True)
        header = [f"p{j}" for j in range(64)] + ["label"]
        rows = [list(digits.data[i].astype(int)) + [int(labels[i])] for i in train]
        rows += [list(digits.data[i].astype(int)) + [int(labels[i])] for i in test[:COPIES]]
        with open(os.path.join(folder, "train.csv"), "w", newline="") as f:
            csv.writer(f).writerows([header] + rows)
        with open(os.path.join(folder, "test.csv"), "w", newline="") as f:
            csv.writer(f).writerows([header] + [list(digits.data[i].astype(int)) + [int(labels[i])] for i in test])
        config = os.path.join(self.tmp, "table.json")
        with open(config, "w") as f:
            json.dump({"schema_version": 2, "name": "digits-table",
                       "model": {"kind": "mlp", "width": 64, "depth": 1},
                       "data": {"format": "csv", "root": os.path.join(folder, "train.csv"),
                                "test_file": os.path.join(folder, "test.csv"), "label_column": "label"},
                       "train": {"epochs": 20, "batch_size": 64, "seed": 1},
                       "optimizer": {"kind": "adamw", "lr": 0.003},
                       "evaluation": {"every_steps": 0}, "output": {"dir": os.path.join(self.tmp, "t")}}, f)
        out = os.path.join(self.tmp, "table-audit")
        rc, text = cli("audit", "--config", config, "--folds", "3", "--out", out)
        self.assertEqual(rc, 0, text)
        d = glob.glob(os.path.join(out, "*-audit-digits-table"))[0]
        found, files = self.check_label_issues(d)
        # Rows are named "<table> row N" (N as a spreadsheet counts: the header is row 1).
        moved = {f"{os.path.join(folder, 'train.csv')} row {k + 2}" for k, i in enumerate(train) if i in noisy}
        self.assertEqual(len(files), len(rows))
        precision = len(found & moved) / max(len(found), 1)
        recall = len(found & moved) / len(moved)
        print(f"table: {len(found)} flagged, {len(moved)} relabelled; precision {precision:.3f}, recall {recall:.3f}")
        self.assertGreater(recall, 0.6)
        self.assertGreater(precision, 0.6)
        dups = read_csv(os.path.join(d, "duplicates.csv"))
        copies = {f"{os.path.join(folder, 'train.csv')} row {len(train) + k + 2}" for k in range(COPIES)}
        self.assertEqual({r["first"] for r in dups if r["kind"] == "train-test"}, copies)
        self.assertEqual(len(read_csv(os.path.join(d, "outliers.csv"))), len(rows))
        self.assertFalse(os.path.exists(os.path.join(d, "suggested_corrections.csv")))

    def check_label_issues(self, d):
        """The audit's label issues against cleanlab's on oof.csv; returns (found, files)."""
        rows = read_csv(os.path.join(d, "oof.csv"))
        classes = [c[2:] for c in list(rows[0].keys())[3:]]
        files = [r["file"] for r in rows]
        labels = np.array([int(r["given"]) for r in rows])
        probs = np.array([[float(r["p_" + c]) for c in classes] for r in rows])
        joint = np.array(load_json(os.path.join(d, "audit.json"))["confident_joint"])
        reference = compute_confident_joint(labels, probs)
        mask = find_label_issues(labels, probs, filter_by="prune_by_noise_rate",
                                 confident_joint=None if (joint == reference).all() else joint)
        expected = {files[i] for i in np.flatnonzero(mask)}
        found = {r["file"] for r in read_csv(os.path.join(d, "label_issues.csv"))}
        self.assertEqual(found, expected)
        return found, files

    def test_a_stopped_audit_resumes(self):
        out = os.path.join(self.tmp, "stopped")
        p = subprocess.Popen([CLI, "audit", "--config", self.config, "--folds", "2", "--out", out,
                              "--set", "train.epochs=40"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        state = None
        deadline = time.time() + 600
        while time.time() < deadline and p.poll() is None:
            found = glob.glob(os.path.join(out, "*", "audit_state.json"))
            if found:
                try:
                    runs = load_json(found[0])["runs"]
                except (ValueError, KeyError):
                    runs = {}
                if "2" in runs and os.path.exists(os.path.join(runs["2"], "metrics.csv")):
                    state = found[0]
                    break
            time.sleep(0.05)
        self.assertIsNotNone(state, "fold 2 never started")
        p.send_signal(signal.SIGINT)
        text = p.communicate(timeout=300)[0]
        self.assertEqual(p.returncode, 130, text)
        d = os.path.dirname(state)
        self.assertIn(f"audit --resume {d}", text)
        fold2 = load_json(state)["runs"]["2"]
        self.assertEqual(load_json(os.path.join(fold2, "summary.json"))["status"], "stopped")
        rc, text = cli("audit", "--resume", d)
        self.assertEqual(rc, 0, text)
        self.assertEqual(load_json(os.path.join(d, "audit_state.json"))["runs"]["2"], fold2)
        self.assertEqual(load_json(os.path.join(fold2, "summary.json"))["status"], "completed")
        self.assertEqual(len(glob.glob(os.path.join(d, "folds", "*"))), 2)
        self.assertEqual(len(read_csv(os.path.join(d, "oof.csv"))),
                         len(glob.glob(os.path.join(self.root, "train", "*", "*.png"))))

    def test_bad_input_is_named(self):
        out = os.path.join(self.tmp, "bad")
        rc, text = cli("audit", "--config", self.config, "--folds", "1", "--out", out)
        self.assertEqual(rc, 2, text)
        self.assertIn("--folds must be from 2 to 20", text)
        rc, text = cli("audit", "--preset", "csv-regression", "--out", out)
        self.assertEqual(rc, 2, text)
        self.assertIn("the audit reads image folders and tables of classes so far", text)
        rc, text = cli("audit", "--resume", self.root)
        self.assertEqual(rc, 2, text)
        self.assertIn("is not an audit folder", text)
        rc, text = cli("audit", "--config", self.config, "--set", "data.cv_folds=3", "--set", "data.cv_fold=1",
                       "--out", out)
        self.assertEqual(rc, 2, text)
        self.assertIn("data.cv_folds is the audit's to set", text)
        self.assertFalse(os.path.exists(out) and os.listdir(out), "a refused audit wrote nothing")
        # The fold settings themselves, for a run of one's own.
        rc, text = cli("summary", "--config", self.config, "--set", "data.cv_folds=1")
        self.assertEqual(rc, 2, text)
        self.assertIn("one fold leaves nothing to train on", text)
        rc, text = cli("summary", "--config", self.config, "--set", "data.cv_folds=4", "--set", "data.cv_fold=5")
        self.assertEqual(rc, 2, text)
        self.assertIn("data.cv_fold must be a fold from 1 to data.cv_folds (4), got 5", text)
        rc, text = cli("summary", "--config", self.config, "--set", "data.cv_folds=4", "--set", "data.cv_fold=2")
        self.assertEqual(rc, 0, text)
        self.assertIn("fold 2 of 4 of", text)


if __name__ == "__main__":
    unittest.main(verbosity=2)
