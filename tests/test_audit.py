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
import random
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

import numpy as np
from cleanlab.count import compute_confident_joint
from cleanlab.filter import find_label_issues
from cleanlab.multilabel_classification.filter import find_label_issues as find_multilabel_issues
from PIL import Image
from sklearn.datasets import load_digits
from suite_limits import HANG_LIMIT_S

CLI = os.environ["STUDIO_CLI"]
NOISE = 0.08
COPIES = 20
NEAR = 5       # test images copied into training with one pixel brighter: not the same bytes
STRANGERS = 3  # noise images filed under a class


def cli(*args, timeout=HANG_LIMIT_S):
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
        # Each training file's nearest other example: an exact copy's is its
        # test original (similarity 1), a near copy's too (>= 0.99); a
        # suspect's in label_issues.csv is the same as in outliers.csv.
        rows = {os.path.realpath(r["file"]): r for r in read_csv(os.path.join(d, "outliers.csv"))}
        for copy in self.copies:
            self.assertEqual(os.path.basename(rows[copy]["nearest"]), os.path.basename(copy)[len("copy-"):])
            self.assertGreater(float(rows[copy]["nearest_similarity"]), 0.9999)
        for copy, original in self.near:
            self.assertEqual(os.path.realpath(rows[copy]["nearest"]), original)
            self.assertGreaterEqual(float(rows[copy]["nearest_similarity"]), 0.99)
        for r in found_rows:
            self.assertEqual(r["nearest"], rows[os.path.realpath(r["file"])]["nearest"])
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
        # Issue 59, item 12: the data's own checks again after the corrections
        # (each trained before, or blamed the split settings), and one
        # decision per file (the last one won).
        everything = sorted(glob.glob(os.path.join(self.root, "train", "*", "*.png")))
        rel = [os.path.relpath(f, self.root) for f in everything]
        cases = [([[rel[0], "remove", ""], [rel[0], "relabel", "5"]],
                  f"rows 2 and 3 decide \"{rel[0]}\" twice (remove, then relabel to 5): keep one decision per file"),
                 ([[os.path.relpath(f, self.root), "remove", ""] for f in train],
                  'removes or relabels every training example of class "3": a class without examples cannot be '
                  'learnt'),
                 ([[f, "relabel", "0"] for f in rel],
                  'leaves every training example in class "0": a classifier needs examples of two classes'),
                 ([[f, "remove", ""] for f in rel], "removes every training example (")]
        for i, (rows, message) in enumerate(cases):
            path = os.path.join(self.tmp, f"corrections-after-{i}.csv")
            with open(path, "w", newline="") as f:
                csv.writer(f).writerows([["file", "action", "label"], *rows])
            rc, text = cli("summary", "--config", self.config, "--set", "data.corrections=" + path)
            self.assertEqual(rc, 2, text)
            self.assertIn(f"data.corrections {path}", text)
            self.assertIn(message, text)
        # The same decision twice is one decision.
        path = os.path.join(self.tmp, "corrections-twice.csv")
        with open(path, "w", newline="") as f:
            csv.writer(f).writerows([["file", "action", "label"], [rel[0], "remove", ""], [rel[0], "remove", ""]])
        rc, text = cli("summary", "--config", self.config, "--set", "data.corrections=" + path)
        self.assertEqual(rc, 0, text)
        self.assertIn("data.corrections: 1 removed", text)

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
        # The suggestions apply to the table: each suspect row relabelled,
        # each copy of a test row removed, counted in the next run's plan.
        suggested = read_csv(os.path.join(d, "suggested_corrections.csv"))
        self.assertEqual({r["file"] for r in suggested if r["action"] == "remove"}, copies)
        rc, before = cli("summary", "--config", config)
        self.assertEqual(rc, 0, before)
        rc, after = cli("summary", "--config", config, "--set",
                        "data.corrections=" + os.path.join(d, "suggested_corrections.csv"))
        self.assertEqual(rc, 0, after)
        relabelled = sum(r["action"] == "relabel" for r in suggested)
        self.assertIn(f"data.corrections: {COPIES} removed, {relabelled} relabelled", after)
        self.assertEqual(self.total_train(after), self.total_train(before) - COPIES)

    def total_train(self, text):
        for line in text.splitlines():
            if line.strip().startswith("training "):
                return int(line.split()[1])
        self.fail(text)

    def write_table(self, name, header, rows, settings_more):
        folder = os.path.join(self.tmp, name)
        os.makedirs(folder, exist_ok=True)
        table = os.path.join(folder, "train.csv")
        with open(table, "w", newline="") as f:
            csv.writer(f).writerows([header] + rows)
        config = os.path.join(self.tmp, name + ".json")
        settings = {"schema_version": 2, "name": name,
                    "data": {"format": "csv", "root": table, "test_fraction": 0.2, "val_fraction": 0.0},
                    "train": {"epochs": 30, "batch_size": 32, "seed": 1},
                    "optimizer": {"kind": "adamw", "lr": 0.003},
                    "evaluation": {"every_steps": 0}, "output": {"dir": os.path.join(self.tmp, name + "-runs")}}
        for k, v in settings_more.items():
            settings.setdefault(k, {}).update(v)
        with open(config, "w") as f:
            json.dump(settings, f)
        return table, config

    def test_a_regression_is_audited_by_its_residuals_folds_at_once(self):
        # A linear target with noise; 12 rows' values pushed 8 noise
        # deviations away. --parallel 2: the folds as two processes at once.
        from sklearn.metrics import r2_score
        rng = np.random.default_rng(11)
        x = rng.normal(size=(500, 6))
        y = x @ np.array([1.5, -2.0, 0.7, 0.0, 1.0, 0.3]) + 0.3 * rng.normal(size=500)
        wrong = rng.choice(500, 12, replace=False)
        y[wrong] += 8 * 0.3 * rng.choice([-1, 1], 12) * 3
        rows = [[f"{v:.6f}" for v in x[i]] + [f"{y[i]:.6f}"] for i in range(500)]
        table, config = self.write_table("reg", [f"x{j}" for j in range(6)] + ["y"], rows, {
            "task": {"kind": "regression", "standardize_targets": True},
            "model": {"kind": "mlp", "width": 32, "depth": 1},
            "data": {"target_columns": ["y"]}})
        out = os.path.join(self.tmp, "reg-audit")
        rc, text = cli("audit", "--config", config, "--folds", "3", "--parallel", "2", "--out", out)
        self.assertEqual(rc, 0, text)
        self.assertIn("cross-validated R2", text)
        d = glob.glob(os.path.join(out, "*-audit-reg"))[0]
        state = load_json(os.path.join(d, "audit_state.json"))
        self.assertEqual(state["parallel"], 2)
        for fold in ("1", "2", "3"):  # each its own process, the 2 cores shared
            self.assertEqual(load_json(os.path.join(d, state["runs"][fold], "settings.json"))["performance"]["threads"],
                             max(1, os.cpu_count() // 2))
        oof = read_csv(os.path.join(d, "oof.csv"))
        given = np.array([float(r["given_y"]) for r in oof])
        pred = np.array([float(r["pred_y"]) for r in oof])
        folds = np.array([int(r["fold"]) for r in oof])
        report = load_json(os.path.join(d, "audit.json"))
        self.assertEqual(report["metric"], "r2")
        for f in report["folds"]:  # each fold's R² is scikit-learn's on its out-of-fold predictions
            sel = folds == f["fold"]
            self.assertAlmostEqual(f["r2"], r2_score(given[sel], pred[sel]), places=9)
        r2 = [f["r2"] for f in report["folds"]]
        self.assertAlmostEqual(report["r2"]["mean"], float(np.mean(r2)), places=9)
        # The suspects: |residual| / the residuals' standard deviation >= 3.
        z = (given - pred) / np.std(given - pred, ddof=1)
        expected = {oof[i]["file"] for i in np.flatnonzero(np.abs(z) >= 3)}
        issues = read_csv(os.path.join(d, "label_issues.csv"))
        self.assertEqual({r["file"] for r in issues}, expected)
        by_file = {r["file"]: i for i, r in enumerate(oof)}
        for r in issues:
            self.assertAlmostEqual(float(r["residual_z"]), z[by_file[r["file"]]], places=9)
        self.assertEqual([abs(float(r["residual_z"])) for r in issues],
                         sorted((abs(float(r["residual_z"])) for r in issues), reverse=True))
        self.assertEqual(len(read_csv(os.path.join(d, "residuals.csv"))), len(oof))
        planted = {f"{table} row {i + 2}" for i in wrong}
        in_training = planted & set(by_file)
        found = {r["file"] for r in issues}
        recall = len(found & in_training) / len(in_training)
        print(f"regression: {len(found)} flagged, {len(in_training)} planted in training; recall {recall:.3f}; "
              f"cross-validated R2 {report['r2']['mean']:.4f}")
        self.assertGreater(recall, 0.8)
        self.assertGreater(report["r2"]["mean"], 0.5)
        # 6 columns: a cosine over so few finds rows "near" that are not; the
        # audit says so rather than crying leakage.
        near = report["duplicates"]["near_train_test"] + report["duplicates"]["near_train_train"]
        self.assertGreater(near, 0)
        self.assertIn("too few to tell near copies", report["feature_note"])
        self.assertNotIn("LEAKAGE, likely", text)
        # Its corrections remove rows; a relabel has no class to go to.
        rc, before = cli("summary", "--config", config)
        rc, after = cli("summary", "--config", config, "--set",
                        "data.corrections=" + os.path.join(d, "suggested_corrections.csv"))
        self.assertEqual(rc, 0, after)
        self.assertEqual(self.total_train(after), self.total_train(before) - len(found))
        bad = os.path.join(self.tmp, "reg-relabel.csv")
        with open(bad, "w", newline="") as f:
            csv.writer(f).writerows([["file", "action", "label"], [oof[0]["file"], "relabel", "3.5"]])
        rc, text = cli("summary", "--config", config, "--set", "data.corrections=" + bad)
        self.assertEqual(rc, 2, text)
        self.assertIn("has no classes: remove the example", text)

    def test_a_stopped_parallel_audit_resumes(self):
        rng = np.random.default_rng(3)
        x = rng.normal(size=(300, 4))
        rows = [[f"{v:.5f}" for v in x[i]] + [f"{x[i].sum():.5f}"] for i in range(300)]
        _, config = self.write_table("reg-stop", ["a", "b", "c", "d", "y"], rows, {
            "task": {"kind": "regression"}, "model": {"kind": "mlp", "width": 16, "depth": 1},
            "data": {"target_columns": ["y"]}, "train": {"epochs": 1500}})
        out = os.path.join(self.tmp, "reg-stop-audit")
        p = subprocess.Popen([CLI, "audit", "--config", config, "--folds", "2", "--parallel", "2", "--out", out],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        runs = {}
        deadline = time.time() + HANG_LIMIT_S
        while time.time() < deadline and p.poll() is None:
            found = glob.glob(os.path.join(out, "*", "audit_state.json"))
            try:
                runs = load_json(found[0])["runs"] if found else {}
            except ValueError:
                runs = {}
            if len(runs) == 2 and all(os.path.exists(os.path.join(os.path.dirname(found[0]), r, "metrics.csv"))
                                      for r in runs.values()):
                break
            time.sleep(0.05)
        self.assertEqual(len(runs), 2, "the two folds never ran at once")
        p.send_signal(signal.SIGINT)
        text = p.communicate(timeout=HANG_LIMIT_S)[0]
        self.assertEqual(p.returncode, 130, text)
        d = os.path.dirname(found[0])
        for r in runs.values():  # both stopped with a checkpoint
            self.assertEqual(load_json(os.path.join(d, r, "summary.json"))["status"], "stopped", text)
        rc, text = cli("audit", "--resume", d)  # at once again, each fold from its checkpoint
        self.assertEqual(rc, 0, text)
        for r in runs.values():
            self.assertEqual(load_json(os.path.join(d, r, "summary.json"))["status"], "completed")
        self.assertEqual(load_json(os.path.join(d, "audit_state.json"))["runs"], runs)

    def test_multilabel_by_confident_learning_label_by_label(self):
        # Four labels, each a half-space of 12 features (a model can learn
        # them), 5 % of the label values flipped by a seeded draw.
        rng = np.random.default_rng(5)
        x = rng.normal(size=(700, 12))
        y = (x @ rng.normal(size=(12, 4)) > 0.3).astype(int)
        noisy = y.copy()
        flips = rng.random(y.shape) < 0.05
        noisy[flips] = 1 - noisy[flips]
        names = ["red", "round", "soft", "big"]
        rows = [[f"{v:.5f}" for v in x[i]] + [str(int(v)) for v in noisy[i]] for i in range(len(x))]
        table, config = self.write_table("tags", [f"f{j}" for j in range(12)] + names, rows, {
            "task": {"kind": "multilabel"}, "loss": {"kind": "bce"},
            "model": {"kind": "mlp", "width": 64, "depth": 1}, "data": {"target_columns": names}})
        out = os.path.join(self.tmp, "tags-audit")
        rc, text = cli("audit", "--config", config, "--folds", "3", "--out", out)
        self.assertEqual(rc, 0, text)
        d = glob.glob(os.path.join(out, "*-audit-tags"))[0]
        oof = read_csv(os.path.join(d, "oof.csv"))
        given = np.array([[int(float(r["given_" + n])) for n in names] for r in oof])
        probs = np.array([[float(r["p_" + n]) for n in names] for r in oof])
        labels = [list(np.flatnonzero(g)) for g in given]
        mask = find_multilabel_issues(labels, probs, filter_by="prune_by_noise_rate")
        issues = read_csv(os.path.join(d, "label_issues.csv"))
        found = {r["file"] for r in issues}
        self.assertEqual(found, {oof[i]["file"] for i in np.flatnonzero(mask)})
        # Each listed label is one whose given value the model doubts.
        by_file = {r["file"]: i for i, r in enumerate(oof)}
        for r in issues:
            i, k = by_file[r["file"]], names.index(r["label"])
            self.assertEqual(int(r["given"]), given[i, k])
            p = probs[i, k] if given[i, k] else 1 - probs[i, k]
            self.assertAlmostEqual(float(r["self_confidence"]), p, places=9)
        flipped = {f"{table} row {i + 2}" for i in np.flatnonzero(flips.any(1))} & set(by_file)
        precision = len(found & flipped) / max(len(found), 1)
        recall = len(found & flipped) / len(flipped)
        report = load_json(os.path.join(d, "audit.json"))
        print(f"multi-label: {len(found)} examples flagged, {len(flipped)} with a flipped label; precision "
              f"{precision:.3f}, recall {recall:.3f}; cross-validated label accuracy "
              f"{report['label_accuracy']['mean']:.4f}")
        self.assertGreater(precision, 0.6)
        self.assertGreater(recall, 0.6)
        self.assertEqual(report["examples_with_issues"], len(found))

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
        deadline = time.time() + HANG_LIMIT_S
        while time.time() < deadline and p.poll() is None:
            found = glob.glob(os.path.join(out, "*", "audit_state.json"))
            if found:
                try:
                    runs = load_json(found[0])["runs"]
                except (ValueError, KeyError):
                    runs = {}
                if "2" in runs and os.path.exists(os.path.join(os.path.dirname(found[0]), runs["2"], "metrics.csv")):
                    state = found[0]
                    break
            time.sleep(0.05)
        self.assertIsNotNone(state, "fold 2 never started")
        p.send_signal(signal.SIGINT)
        text = p.communicate(timeout=HANG_LIMIT_S)[0]
        self.assertEqual(p.returncode, 130, text)
        d = os.path.dirname(state)
        self.assertIn(f"audit --resume {d}", text)
        fold2 = load_json(state)["runs"]["2"]
        self.assertFalse(os.path.isabs(fold2), fold2)  # relative to the audit folder (issue 59, item 13)
        self.assertEqual(load_json(os.path.join(d, fold2, "summary.json"))["status"], "stopped")
        rc, text = cli("audit", "--resume", d)
        self.assertEqual(rc, 0, text)
        self.assertEqual(load_json(os.path.join(d, "audit_state.json"))["runs"]["2"], fold2)
        self.assertEqual(load_json(os.path.join(d, fold2, "summary.json"))["status"], "completed")
        self.assertEqual(len(glob.glob(os.path.join(d, "folds", "*"))), 2)
        self.assertEqual(len(read_csv(os.path.join(d, "oof.csv"))),
                         len(glob.glob(os.path.join(self.root, "train", "*", "*.png"))))
        # Issue 59, item 13: a copied audit folder resumes from its own folds (the original moved away, nothing
        # is trained again), and one whose audit_state.json was given other folds is refused, naming them.
        copy = d + "-copy"
        shutil.copytree(d, copy)
        shutil.move(d, d + "-moved")
        rc, text = cli("audit", "--resume", copy)
        self.assertEqual(rc, 0, text)
        self.assertEqual(len(glob.glob(os.path.join(copy, "folds", "*"))), 2)
        edited = load_json(os.path.join(copy, "audit_state.json"))
        edited["folds"] = 3
        with open(os.path.join(copy, "audit_state.json"), "w") as f:
            json.dump(edited, f)
        rc, text = cli("audit", "--resume", copy)
        self.assertEqual(rc, 2, text)
        self.assertIn("audit_state.json says 3 folds", text)
        self.assertIn("was trained as fold 1 of 2", text)
        self.assertEqual(len(glob.glob(os.path.join(copy, "folds", "*"))), 2)

    def test_an_audit_killed_at_random_moments_resumes_bit_for_bit(self):
        # Issue 59, item 16: kill -9 of the audit (STUDIO_CRASH_AT: the engine kills itself there), then
        # --resume: the same out-of-fold outputs, byte for byte, as an audit never stopped. The moments are
        # drawn (seeded, so a failure repeats): a training step of either fold, or a checkpoint's writing.
        args = ["--config", self.config, "--folds", "2", "--set", "train.epochs=3"]
        whole = os.path.join(self.tmp, "whole")
        rc, text = cli("audit", *args, "--out", whole)
        self.assertEqual(rc, 0, text)
        with open(os.path.join(self.audit_dir(whole), "oof.csv"), "rb") as f:
            want = f.read()
        rng = random.Random(59)
        moments = [f"train-step:{rng.randint(1, 60)}", f"train-step:{rng.randint(70, 120)}",
                   f"checkpoint-after-metrics-flush:{rng.randint(2, 5)}"]
        for k, moment in enumerate(moments):
            out = os.path.join(self.tmp, f"killed-{k}")
            p = subprocess.run([CLI, "audit", *args, "--out", out], capture_output=True, text=True,
                               timeout=HANG_LIMIT_S, env={**os.environ, "STUDIO_CRASH_AT": moment})
            self.assertEqual(p.returncode, -signal.SIGKILL, f"{moment}: {p.stdout + p.stderr}")
            d = self.audit_dir(out)
            rc, text = cli("audit", "--resume", d)
            self.assertEqual(rc, 0, f"{moment}: {text}")
            with open(os.path.join(d, "oof.csv"), "rb") as f:
                self.assertEqual(f.read(), want, f"killed at {moment}: oof.csv differs after --resume")

    def test_the_validation_split_is_audited_too(self):
        # Issue 60, item 7: with data.val_fraction the audit dealt only the examples left after validation into
        # its folds: a leaked copy or a moved label there was never examined, and each fold's "best" weights
        # were picked on it. Every training example is audited, and the unused setting is said.
        out = os.path.join(self.tmp, "with-validation")
        rc, text = cli("audit", "--config", self.config, "--folds", "2", "--set", "train.epochs=2",
                       "--set", "data.val_fraction=0.2", "--out", out)
        self.assertEqual(rc, 0, text)
        self.assertIn("data.val_fraction 0.2 is not used: every training example is dealt into the folds", text)
        d = self.audit_dir(out)
        files = {os.path.realpath(r["file"]) for r in read_csv(os.path.join(d, "oof.csv"))}
        self.assertEqual(files, {os.path.realpath(f) for f in glob.glob(os.path.join(self.root, "train", "*", "*.png"))})
        self.assertTrue(set(self.copies) <= files)

    def test_bad_input_is_named(self):
        out = os.path.join(self.tmp, "bad")
        rc, text = cli("audit", "--config", self.config, "--folds", "1", "--out", out)
        self.assertEqual(rc, 2, text)
        self.assertIn("--folds must be from 2 to 20", text)
        rc, text = cli("audit", "--preset", "fashion-mnist-cnn", "--out", out)
        self.assertEqual(rc, 2, text)
        self.assertIn("the audit reads image folders and tables", text)
        self.assertIn("data.format idx", text)
        rc, text = cli("audit", "--config", self.config, "--parallel", "0", "--out", out)
        self.assertEqual(rc, 2, text)
        self.assertIn("--parallel must be 1 or more", text)
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
