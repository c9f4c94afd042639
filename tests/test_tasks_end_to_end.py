#!/usr/bin/env python3
"""The tasks end to end (issue 26), through training-studio-cli: regression,
multi-label, and single-label classification with imbalanced classes.

Every reference is computed here, by scikit-learn on the same rows: the
metrics (r2_score, mean_absolute_error, root_mean_squared_error) on the
predictions the CLI writes, and a linear model's R² on the same split
(LinearRegression) as the figure a small MLP should reach. Tables:
scikit-learn's diabetes data (442 rows, bundled with it) and a table of two
targets from make_regression. A run killed mid-way and resumed equals an
uninterrupted one, row for row (a multi-label run and the balanced sampler's
too); the export's model.py and model.pt give the CLI's values in plain
PyTorch. Bad input ends with exit 2 and a message
that names the row, the column or the setting.
Multi-label: a table of 0/1 label columns from make_multilabel_classification
and the same labels as one column of tags; every figure of the report (micro
and macro F1, subset accuracy, each label's average precision, ROC AUC and
ROC points) equals scikit-learn's on the CLI's probabilities.
Single-label curves: a 3-class table; each class's one-vs-rest ROC AUC,
average precision and ROC points equal scikit-learn's, and the reliability
diagram and expected calibration error equal Guo et al.'s definition
computed here with numpy.
Imbalance: an image folder of Fashion-MNIST's T-shirts and shirts (10 to 1)
trained plainly, with balanced class weights (compared with scikit-learn's
compute_class_weight) and with the balanced sampler: both raise the rare
class's recall on a balanced test folder.
Environment (ctest sets it): STUDIO_CLI.
"""
import csv
import glob
import importlib.util
import json
import math
import os
import subprocess
import tempfile
import unittest

import numpy as np
import torch
from sklearn.datasets import load_diabetes, make_classification, make_multilabel_classification, make_regression
from sklearn.linear_model import LinearRegression
from sklearn.metrics import (accuracy_score, average_precision_score, f1_score, mean_absolute_error, r2_score,
                             roc_auc_score, roc_curve, root_mean_squared_error)
from sklearn.model_selection import train_test_split
from sklearn.utils.class_weight import compute_class_weight

from idx_reader import idx
from suite_limits import HANG_LIMIT_S

CLI = os.environ["STUDIO_CLI"]


def cli(*args, env=None, timeout=HANG_LIMIT_S):
    p = subprocess.run([CLI, *args], capture_output=True, text=True, timeout=timeout,
                       env=None if env is None else {**os.environ, **env})
    return p.returncode, p.stdout + p.stderr


def write_table(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        for r in rows:
            w.writerow([f"{v:.6g}" for v in r])


def read_json(path):
    with open(path) as f:
        return json.load(f)


def only_run(out):
    runs = sorted(glob.glob(os.path.join(out, "*")))
    assert len(runs) == 1, runs
    return runs[0]


def predictions(run, table, out_csv, which="last"):
    # One batch, as the evaluation's: the same outputs to the last bit.
    code, text = cli("predict", run, "--input", table, "--which", which, "--out", out_csv, "--overwrite",
                     "--batch-size", "1000")
    assert code == 0, text
    with open(out_csv) as f:
        rows = list(csv.DictReader(f))
    return rows


def assert_resumes_exactly(test, args, kill_at_step, columns):
    """A run killed (SIGKILL) at a training step and resumed writes the same
    metrics.csv rows (these columns, and the losses, rates and gradient
    norms) and the same last evaluation as one never stopped."""
    with tempfile.TemporaryDirectory(prefix="studio-resume-") as tmp:
        whole, killed = os.path.join(tmp, "whole"), os.path.join(tmp, "killed")
        code, text = cli("train", *args, "--out", whole)
        test.assertEqual(code, 0, text)
        code, _ = cli("train", *args, "--out", killed, env={"STUDIO_CRASH_AT": f"train-step:{kill_at_step}"})
        test.assertNotEqual(code, 0)
        code, text = cli("resume", only_run(killed))
        test.assertEqual(code, 0, text)

        def rows(run):
            with open(os.path.join(run, "metrics.csv")) as f:
                lines = f.read().splitlines()
            header = lines[0].split(",")
            keep = [header.index(c) for c in ["kind", "step", "epoch", "train_loss", "lr", "grad_norm", *columns]]
            return [[line.split(",")[i] for i in keep] for line in lines[1:]]

        test.assertEqual(rows(only_run(killed)), rows(only_run(whole)))
        a, b = last_report(only_run(killed)), last_report(only_run(whole))
        a.pop("thumbnails", None)
        b.pop("thumbnails", None)
        test.assertEqual(a, b)


def exported_model(export):
    """The export's network built by its model.py, with model.pt's weights (weights_only)."""
    spec = importlib.util.spec_from_file_location("model", os.path.join(export, "model.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = module.build()
    model.load_state_dict(torch.load(os.path.join(export, "model.pt")), strict=True)
    return model.eval()


def last_report(run):
    steps = sorted(int(os.path.basename(p)[5:-5]) for p in glob.glob(os.path.join(run, "eval", "step-*.json")))
    return read_json(os.path.join(run, "eval", f"step-{steps[-1]}.json"))


class RegressionTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="studio-tasks-")
        d = load_diabetes(scaled=False)
        cls.names = list(d.feature_names) + ["progression"]
        xy = np.column_stack([d.data, d.target])
        train, test = train_test_split(xy, test_size=0.2, random_state=0)
        cls.train_csv = os.path.join(cls.tmp.name, "diabetes-train.csv")
        cls.test_csv = os.path.join(cls.tmp.name, "diabetes-test.csv")
        write_table(cls.train_csv, cls.names, train)
        write_table(cls.test_csv, cls.names, test)
        # The tables as written (6 significant digits), as the studio reads them.
        cls.train = np.loadtxt(cls.train_csv, delimiter=",", skiprows=1)
        cls.test = np.loadtxt(cls.test_csv, delimiter=",", skiprows=1)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def diabetes_args(self, *more):
        return ["--preset", "csv-regression", "--set", f"data.root={self.train_csv}",
                "--set", f"data.test_file={self.test_csv}", "--set", "data.val_fraction=0",
                "--set", "train.early_stopping.metric=off", "--set", "train.epochs=60", *more]

    def test_diabetes_learns_and_its_figures_are_scikit_learns(self):
        out = os.path.join(self.tmp.name, "diabetes")
        code, text = cli("train", *self.diabetes_args(), "--out", out)
        self.assertEqual(code, 0, text)
        run = only_run(out)
        summary = read_json(os.path.join(run, "summary.json"))
        y_test = self.test[:, -1]
        linear = LinearRegression().fit(self.train[:, :-1], self.train[:, -1])
        linear_r2 = r2_score(y_test, linear.predict(self.test[:, :-1]))
        print(f"diabetes: studio MLP test R2 {summary['test_r2']:.4f}, RMSE {summary['test_rmse']:.2f}, "
              f"MAE {summary['test_mae']:.2f}; LinearRegression R2 {linear_r2:.4f}")
        self.assertGreater(summary["test_r2"], linear_r2 - 0.05)

        # The final figures are scikit-learn's on the CLI's predictions of the test table.
        rows = predictions(run, self.test_csv, os.path.join(self.tmp.name, "diabetes-pred.csv"))
        predicted = np.array([float(r["progression"]) for r in rows])
        self.assertEqual(len(predicted), len(y_test))
        self.assertAlmostEqual(summary["test_r2"], r2_score(y_test, predicted), delta=1e-4)
        self.assertAlmostEqual(summary["test_mae"], mean_absolute_error(y_test, predicted), delta=1e-3)
        self.assertAlmostEqual(summary["test_rmse"], root_mean_squared_error(y_test, predicted), delta=1e-3)

        # The last evaluation's report: the test rows' values, in order, in the data's units.
        report = last_report(run)
        self.assertEqual(report["task"], "regression")
        self.assertEqual(report["examples"], len(y_test))
        np.testing.assert_allclose(np.array(report["actual"])[:, 0], y_test, rtol=1e-6)
        np.testing.assert_allclose(np.array(report["predicted"])[:, 0], predicted, rtol=1e-4, atol=1e-3)
        self.assertAlmostEqual(report["targets"][0]["r2"], report["r2"], places=12)
        with open(os.path.join(run, "metrics.csv")) as f:
            metrics = f.read().splitlines()
        header = metrics[0].split(",")
        last_eval = [line.split(",") for line in metrics if line.startswith("eval,")][-1]
        self.assertAlmostEqual(float(last_eval[header.index("eval_r2")]), report["r2"], places=6)
        self.assertEqual(last_eval[header.index("eval_accuracy")], "")

        # The export carries the targets' statistics; predicting from it gives the same values.
        export = os.path.join(self.tmp.name, "diabetes-export")
        code, text = cli("export", run, "--which", "last", "--out", export)
        self.assertEqual(code, 0, text)
        pre = read_json(os.path.join(export, "preprocessing.json"))
        self.assertEqual(pre["task"], "regression")
        self.assertEqual(pre["targets"]["names"], ["progression"])
        self.assertAlmostEqual(pre["targets"]["mean"][0], self.train[:, -1].mean(), places=6)
        self.assertAlmostEqual(pre["targets"]["std"][0], self.train[:, -1].std(), places=6)
        again = predictions(export, self.test_csv, os.path.join(self.tmp.name, "export-pred.csv"))
        self.assertEqual([r["progression"] for r in again], [r["progression"] for r in rows])
        # In plain PyTorch, by preprocessing.json's recipe: the export's model.py and model.pt give them too.
        model = exported_model(export)
        norm = pre["normalization"]
        x = (torch.tensor(self.test[:, :-1], dtype=torch.float32) - torch.tensor(norm["mean"])) / torch.tensor(norm["std"])
        with torch.no_grad():
            y = model(x.float()).double() * pre["targets"]["std"][0] + pre["targets"]["mean"][0]
        np.testing.assert_allclose(y[:, 0].numpy(), predicted, rtol=1e-4, atol=1e-3)

    def test_two_targets_each_with_its_figures(self):
        x, y = make_regression(n_samples=400, n_features=6, n_targets=2, noise=10.0, random_state=1)
        y[:, 1] = y[:, 1] * 100 + 5000  # another scale: standardised apart
        table = os.path.join(self.tmp.name, "two.csv")
        write_table(table, [f"f{i}" for i in range(6)] + ["y0", "y1"], np.column_stack([x, y]))
        out = os.path.join(self.tmp.name, "two")
        code, text = cli("train", "--preset", "csv-regression", "--set", f"data.root={table}",
                         "--set", 'data.target_columns=["y0", "y1"]', "--set", "data.val_fraction=0",
                         "--set", "train.epochs=40", "--set", "train.early_stopping.metric=off",
                         "--set", "loss.kind=huber", "--out", out)
        self.assertEqual(code, 0, text)
        run = only_run(out)
        report = last_report(run)
        actual, predicted = np.array(report["actual"]), np.array(report["predicted"])
        self.assertEqual(actual.shape, (80, 2))
        per_target = r2_score(actual, predicted, multioutput="raw_values")
        for k, name in enumerate(["y0", "y1"]):
            self.assertEqual(report["targets"][k]["target"], name)
            self.assertAlmostEqual(report["targets"][k]["r2"], per_target[k], delta=1e-5)
            self.assertAlmostEqual(report["targets"][k]["mae"], mean_absolute_error(actual[:, k], predicted[:, k]),
                                   delta=1e-3 * max(1.0, abs(actual[:, k]).mean()))
        self.assertAlmostEqual(report["r2"], r2_score(actual, predicted), delta=1e-5)  # uniform average
        self.assertAlmostEqual(report["rmse"], root_mean_squared_error(actual, predicted), delta=1e-2)
        self.assertGreater(report["r2"], 0.9)  # a linear problem with little noise
        print(f"two targets: R2 {per_target[0]:.4f} and {per_target[1]:.4f}")

    def test_a_killed_run_resumes_as_if_never_stopped(self):
        # 6 steps an epoch: killed in epoch 4, after the checkpoint of epoch 3.
        assert_resumes_exactly(self, self.diabetes_args("--set", "train.epochs=6"), 20,
                               ["eval_loss", "eval_r2", "eval_rmse", "eval_mae"])

    def test_bad_input_says_what_is_wrong(self):
        bad = os.path.join(self.tmp.name, "bad.csv")
        with open(bad, "w") as f:
            f.write("a,b,price\n1,2,3\n2,3,4\n3,4,n/a\n4,5,6\n5,6,7\n")
        const = os.path.join(self.tmp.name, "const.csv")
        with open(const, "w") as f:
            f.write("a,b,price\n1,2,3\n2,3,3\n3,4,3\n4,5,3\n5,6,3\n")
        out = os.path.join(self.tmp.name, "bad-runs")
        cases = [
            (["--preset", "csv-regression", "--set", f"data.root={bad}"],
             ['row 4, column "price"', '"n/a" is not a number']),
            (["--preset", "csv-regression", "--set", f"data.root={const}"],
             ['column "price" has the same value in every row (3)']),
            (["--preset", "csv-regression", "--set", f"data.root={const}", "--set", "loss.kind=cross_entropy"],
             ["loss.kind cross_entropy does not fit task.kind regression"]),
            (["--preset", "csv-table", "--set", f"data.root={const}", "--set", "loss.kind=mse"],
             ['loss.kind "mse" does not fit task.kind classification']),
            (["--preset", "csv-regression", "--set", f"data.root={bad}", "--set", 'data.target_columns=["cost"]'],
             ['data.target_columns entry "cost" is not a column', "its columns: a, b, price"]),
            (["--preset", "csv-regression", "--set", f"data.root={bad}", "--set", 'data.ignore_columns=["price"]'],
             ['data.ignore_columns lists "price", which is a target column']),
            (["--preset", "fashion-mnist-mlp", "--set", "task.kind=regression"],
             ["task.kind regression reads its targets from a table's columns: it needs data.format csv"]),
        ]
        for args, words in cases:
            code, text = cli("train", *args, "--out", out)
            self.assertEqual(code, 2, text)
            for w in words:
                self.assertIn(w, text)

    def test_the_probes_follow_the_task(self):
        probe_args = self.diabetes_args()
        out = os.path.join(self.tmp.name, "probes")
        code, text = cli("lr-find", *probe_args, "--out", out)
        self.assertEqual(code, 0, text)
        self.assertIn("suggested learning rate", text)
        code, text = cli("batch-find", *probe_args, "--set", "memory.cpu_limit_mib=1500", "--out", out)
        self.assertEqual(code, 0, text)  # its probe steps take the task's targets (a float per target)
        self.assertIn("largest micro-batch that fits", text)

    def test_a_fork_keeps_the_task(self):
        out = os.path.join(self.tmp.name, "fork-parent")
        code, text = cli("train", *self.diabetes_args("--set", "train.epochs=2"), "--out", out)
        self.assertEqual(code, 0, text)
        parent = only_run(out)
        before = sorted(os.listdir(out))
        code, text = cli("fork", parent, "--set", "task.kind=classification")
        self.assertEqual(code, 2, text)
        self.assertIn("fork cannot change task.kind", text)
        self.assertEqual(sorted(os.listdir(out)), before)  # nothing made
        code, text = cli("fork", parent, "--set", "loss.kind=l1", "--set", "train.epochs=3")
        self.assertEqual(code, 0, text)  # another loss for the same outputs is a fork



class MultilabelTest(unittest.TestCase):
    LABELS = ["cat", "dog", "bird", "fish"]

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="studio-multilabel-")
        x, y = make_multilabel_classification(n_samples=600, n_features=12, n_classes=4, n_labels=2,
                                              allow_unlabeled=False, random_state=3)
        names = [f"f{i}" for i in range(12)]
        train_x, test_x, train_y, test_y = train_test_split(x, y, test_size=0.25, random_state=0)
        cls.test_y = test_y
        cls.train_y = train_y
        cls.train_csv, cls.test_csv = (os.path.join(cls.tmp.name, f) for f in ("train.csv", "test.csv"))
        write_table(cls.train_csv, names + cls.LABELS, np.column_stack([train_x, train_y]))
        write_table(cls.test_csv, names + cls.LABELS, np.column_stack([test_x, test_y]))
        # The same rows with their labels as one column of tags.
        cls.tags_csv = os.path.join(cls.tmp.name, "tags.csv")
        with open(cls.tags_csv, "w") as f:
            f.write(",".join(names) + ",tags\n")
            for row, labels in zip(train_x, train_y):
                tags = "|".join(n for n, v in zip(cls.LABELS, labels) if v)
                f.write(",".join(f"{v:g}" for v in row) + "," + tags + "\n")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def train(self, name, *args):
        out = os.path.join(self.tmp.name, name)
        code, text = cli("train", "--preset", "multilabel-table", "--set", "data.val_fraction=0",
                         "--set", "train.early_stopping.metric=off", "--set", "train.epochs=30", *args, "--out", out)
        self.assertEqual(code, 0, text)
        return only_run(out)

    def test_label_columns_figures_are_scikit_learns(self):
        run = self.train("columns", "--set", f"data.root={self.train_csv}", "--set", f"data.test_file={self.test_csv}",
                         "--set", f"data.target_columns={json.dumps(self.LABELS)}", "--set", "loss.pos_weight=balanced")
        rows = predictions(run, self.test_csv, os.path.join(self.tmp.name, "pred.csv"))
        probs = np.array([[float(r[label]) for label in self.LABELS] for r in rows])
        said = (probs >= 0.5).astype(int)
        report = last_report(run)
        self.assertEqual(report["task"], "multilabel")
        self.assertEqual([l["label"] for l in report["per_label"]], self.LABELS)
        y = self.test_y
        self.assertAlmostEqual(report["micro_f1"], f1_score(y, said, average="micro"), places=9)
        self.assertAlmostEqual(report["macro_f1"], f1_score(y, said, average="macro"), places=9)
        self.assertAlmostEqual(report["accuracy"], accuracy_score(y, said), places=9)
        self.assertAlmostEqual(report["map"], average_precision_score(y, probs, average="macro"), places=6)
        for k, label in enumerate(report["per_label"]):
            self.assertEqual(label["support"], int(y[:, k].sum()))
            self.assertAlmostEqual(label["average_precision"], average_precision_score(y[:, k], probs[:, k]), places=6)
            self.assertAlmostEqual(label["roc_auc"], roc_auc_score(y[:, k], probs[:, k]), places=6)
            fpr, tpr, _ = roc_curve(y[:, k], probs[:, k], drop_intermediate=False)
            np.testing.assert_allclose(np.array(label["roc"]), np.column_stack([fpr, tpr]), atol=1e-9)
        # The predicted labels, and the positive weights as used.
        self.assertEqual(rows[0]["labels"], "|".join(l for l, v in zip(self.LABELS, said[0]) if v))
        info = read_json(os.path.join(run, "settings.json"))["run_info"]
        positives = self.train_y.sum(0)
        np.testing.assert_allclose(info["targets"]["pos_weight"], (len(self.train_y) - positives) / positives,
                                   rtol=1e-12)
        print(f"multi-label columns: mAP {report['map']:.4f}, F1 macro {report['macro_f1']:.4f}, "
              f"micro {report['micro_f1']:.4f}, subset accuracy {report['accuracy']:.4f}")
        self.assertGreater(report["map"], 0.75)

    def test_a_killed_run_resumes_as_if_never_stopped(self):
        # 450 training rows, 64 a batch: 8 steps an epoch; killed in epoch 3.
        assert_resumes_exactly(self, ["--preset", "multilabel-table", "--set", f"data.root={self.train_csv}",
                                      "--set", f"data.target_columns={json.dumps(self.LABELS)}",
                                      "--set", "data.val_fraction=0", "--set", "train.epochs=4",
                                      "--set", "train.early_stopping.metric=off"], 20, ["eval_loss", "eval_map", "eval_f1"])

    def test_thresholds_tuned_on_the_validation_split(self):
        run = self.train("tuned", "--set", f"data.root={self.train_csv}", "--set", f"data.test_file={self.test_csv}",
                         "--set", f"data.target_columns={json.dumps(self.LABELS)}", "--set", "data.val_fraction=0.25",
                         "--set", "task.tune_thresholds=true")
        reports = [read_json(p) for p in glob.glob(os.path.join(run, "eval", "step-*.json"))]
        validation = [r for r in reports if r["split"] == "validation"]
        self.assertTrue(validation)
        for report in validation:
            for label in report["per_label"]:
                # A validation evaluation reports its figures at its own best-F1 thresholds.
                self.assertEqual(label["threshold"], label["best_threshold"])
        summary = read_json(os.path.join(run, "summary.json"))
        tuned = read_json(os.path.join(run, "thresholds.json"))
        self.assertEqual(tuned["step"], summary["steps"])  # the last validation, at the run's end
        test = last_report(run)  # the test split's, after it at the same step
        self.assertEqual(test["split"], "test")
        for label in test["per_label"]:
            self.assertEqual(label["threshold"], tuned["thresholds"][label["label"]])
        # Predictions use them: the F1 of the labels predicted equals scikit-learn's at those thresholds,
        # and the test figures of the summary are the same.
        rows = predictions(run, self.test_csv, os.path.join(self.tmp.name, "tuned.csv"))
        probs = np.array([[float(r[label]) for label in self.LABELS] for r in rows])
        cut = np.array([tuned["thresholds"][label] for label in self.LABELS])
        said = (probs >= cut).astype(int)
        self.assertAlmostEqual(summary["test_f1"], f1_score(self.test_y, said, average="macro"), places=9)
        self.assertEqual(rows[3]["labels"], "|".join(l for l, v in zip(self.LABELS, said[3]) if v))
        export = os.path.join(self.tmp.name, "tuned-export")
        code, text = cli("export", run, "--which", "last", "--out", export)
        self.assertEqual(code, 0, text)
        self.assertEqual(read_json(os.path.join(export, "preprocessing.json"))["targets"]["thresholds"], list(cut))
        print(f"tuned thresholds {dict(zip(self.LABELS, cut))}: test F1 macro {summary['test_f1']:.4f}")

    def test_the_probes_follow_the_task(self):
        args = ["--preset", "multilabel-table", "--set", f"data.root={self.tags_csv}"]
        out = os.path.join(self.tmp.name, "probes")
        code, text = cli("lr-find", *args, "--out", out)
        self.assertEqual(code, 0, text)
        code, text = cli("batch-find", *args, "--set", "memory.cpu_limit_mib=1500", "--out", out)
        self.assertEqual(code, 0, text)
        self.assertIn("largest micro-batch that fits", text)

    def test_a_column_of_tags(self):
        run = self.train("tags", "--set", f"data.root={self.tags_csv}")
        report = last_report(run)
        self.assertEqual([l["label"] for l in report["per_label"]], sorted(self.LABELS))
        summary = read_json(os.path.join(run, "summary.json"))
        print(f"multi-label tags: test mAP {summary['test_map']:.4f}, F1 macro {summary['test_f1']:.4f}")
        self.assertGreater(summary["test_map"], 0.75)
        self.assertAlmostEqual(summary["test_map"], report["map"], places=12)

    def test_bad_input_says_what_is_wrong(self):
        def table(name, text):
            path = os.path.join(self.tmp.name, name)
            with open(path, "w") as f:
                f.write(text)
            return path
        untagged = table("untagged.csv", "a,b,tags\n1,2,cat\n2,3,\n3,4,dog|cat\n4,5,dog\n")
        train = table("known.csv", "a,b,tags\n1,2,cat\n2,3,dog\n3,4,dog|cat\n4,5,dog\n5,6,cat\n")
        unknown = table("unknown.csv", "a,b,tags\n1,2,cat\n2,3,cow\n")
        half = table("half.csv", "a,b,cat,dog\n1,2,1,0\n2,3,0.5,1\n3,4,0,1\n")
        out = os.path.join(self.tmp.name, "bad")
        cases = [
            (["--set", f"data.root={untagged}"], ["row 3", "is missing"]),
            (["--set", f"data.root={train}", "--set", f"data.test_file={unknown}"],
             ['row 3, column "tags" has tag "cow", which the training table']),
            (["--set", f"data.root={half}", "--set", 'data.target_columns=["cat", "dog"]'],
             ['row 3, column "cat": 0.5 is not 0 or 1']),
            (["--set", f"data.root={train}", "--set", "loss.kind=mse"],
             ['loss.kind "mse" does not fit task.kind multilabel']),
            (["--set", f"data.root={train}", "--set", "loss.pos_weight=1, 2, 3"],
             ["loss.pos_weight has 3 weight(s); the data has 2 labels (cat, dog)"]),
        ]
        for args, words in cases:
            code, text = cli("train", "--preset", "multilabel-table", *args, "--out", out)
            self.assertEqual(code, 2, text)
            for w in words:
                self.assertIn(w, text)


class ClassCurvesTest(unittest.TestCase):
    def test_curves_and_calibration_are_scikit_learns(self):
        with tempfile.TemporaryDirectory(prefix="studio-curves-") as tmp:
            x, y = make_classification(n_samples=600, n_features=8, n_informative=5, n_classes=3, random_state=5)
            names = [f"f{i}" for i in range(8)] + ["kind"]
            train_x, test_x, train_y, test_y = train_test_split(x, y, test_size=0.25, random_state=0)
            train_csv, test_csv = os.path.join(tmp, "train.csv"), os.path.join(tmp, "test.csv")
            write_table(train_csv, names, np.column_stack([train_x, train_y]))
            write_table(test_csv, names, np.column_stack([test_x, test_y]))
            out = os.path.join(tmp, "runs")
            code, text = cli("train", "--preset", "csv-table", "--set", f"data.root={train_csv}",
                             "--set", f"data.test_file={test_csv}", "--set", "data.val_fraction=0",
                             "--set", "train.epochs=10", "--out", out)
            self.assertEqual(code, 0, text)
            run = only_run(out)
            rows = predictions(run, test_csv, os.path.join(tmp, "pred.csv"))
            probs = np.zeros((len(rows), 3))
            for i, r in enumerate(rows):
                for j in range(1, 4):
                    probs[i, int(r[f"class_{j}"])] = float(r[f"probability_{j}"])
            report = last_report(run)
            self.assertEqual(report["classes"], ["0", "1", "2"])
            aucs = []
            for c, figures in enumerate(report["per_class"]):
                truth = (test_y == c).astype(int)
                self.assertAlmostEqual(figures["roc_auc"], roc_auc_score(truth, probs[:, c]), places=6)
                self.assertAlmostEqual(figures["average_precision"], average_precision_score(truth, probs[:, c]),
                                       places=6)
                fpr, tpr, _ = roc_curve(truth, probs[:, c], drop_intermediate=False)
                np.testing.assert_allclose(np.array(figures["roc"]), np.column_stack([fpr, tpr]), atol=1e-9)
                aucs.append(figures["roc_auc"])
            self.assertAlmostEqual(float(np.mean(aucs)), roc_auc_score(test_y, probs, multi_class="ovr"), places=6)
            # Guo et al. 2017: 15 equal bins of the top-class confidence, ECE = sum |acc - conf| x share.
            confidence, predicted = probs.max(1), probs.argmax(1)
            bins = np.clip(np.ceil(confidence * 15) - 1, 0, 14).astype(int)
            ece = 0.0
            for b, got in enumerate(report["reliability"]["bins"]):
                inside = bins == b
                self.assertEqual(got["count"], int(inside.sum()))
                if inside.any():
                    accuracy = (predicted[inside] == test_y[inside]).mean()
                    self.assertAlmostEqual(got["accuracy"], accuracy, places=9)
                    self.assertAlmostEqual(got["confidence"], confidence[inside].mean(), places=6)
                    ece += inside.mean() * abs(accuracy - confidence[inside].mean())
            self.assertAlmostEqual(report["reliability"]["ece"], ece, places=6)
            with open(os.path.join(run, "metrics.csv")) as f:
                lines = f.read().splitlines()
            header, last = lines[0].split(","), [l.split(",") for l in lines if l.startswith("eval,")][-1]
            self.assertAlmostEqual(float(last[header.index("eval_auc")]), float(np.mean(aucs)), places=6)
            self.assertAlmostEqual(float(last[header.index("eval_ece")]), ece, places=6)
            print(f"3 classes: accuracy {report['accuracy']:.4f}, mean ROC AUC {np.mean(aucs):.4f}, ECE {ece:.4f}")


def write_pgm(path, pixels):
    with open(path, "wb") as f:
        f.write(b"P5 28 28 255\n" + pixels.tobytes())


class ImbalanceTest(unittest.TestCase):
    ROOT = "/usr/share/datasets/fashion-mnist"
    COMMON = 6  # Fashion-MNIST's shirt: the rare class is T-shirt/top (0)

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="studio-imbalance-")
        images, labels = idx(f"{cls.ROOT}/train-images-idx3-ubyte.gz"), idx(f"{cls.ROOT}/train-labels-idx1-ubyte.gz")
        cls.folder = os.path.join(cls.tmp.name, "shirts")
        # Training: 600 shirts, 60 T-shirts; test: 200 of each (images the training never sees).
        plan = {("train", "shirt"): (cls.COMMON, 0, 600), ("train", "tshirt"): (0, 0, 60),
                ("test", "shirt"): (cls.COMMON, 600, 800), ("test", "tshirt"): (0, 600, 800)}
        cls.train_counts = {}
        for (split, name), (label, start, end) in plan.items():
            os.makedirs(os.path.join(cls.folder, split, name))
            picks = np.flatnonzero(labels == label)[start:end]
            for i in picks:
                write_pgm(os.path.join(cls.folder, split, name, f"{i}.pgm"), images[i])
            if split == "train":
                cls.train_counts[name] = len(picks)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def rare_recall(self, name, *more):
        out = os.path.join(self.tmp.name, name)
        code, text = cli("train", "--preset", "image-folder", "--set", f"data.root={self.folder}",
                         "--set", "data.image_size=[28, 28]", "--set", "data.channels=1",
                         "--set", "model.kind=mlp", "--set", "model.width=64", "--set", "train.epochs=4",
                         "--set", "train.batch_size=32", "--set", "data.val_fraction=0", "--set", "optimizer.kind=adam",
                         "--set", "optimizer.lr=0.001", "--set", "schedule.kind=constant",
                         "--set", "train.early_stopping.metric=off", *more, "--out", out)
        self.assertEqual(code, 0, text)
        run = only_run(out)
        report = last_report(run)
        self.assertEqual(report["classes"], ["shirt", "tshirt"])
        return run, report["per_class"][1]["recall"]

    def test_class_weights_and_the_sampler_raise_the_rare_class_recall(self):
        _, plain = self.rare_recall("plain")
        run, weighted = self.rare_recall("weighted", "--set", "loss.class_weights=balanced")
        _, sampled = self.rare_recall("sampled", "--set", "data.sampler=balanced")
        print(f"T-shirt recall (60 of 660 training images): plain {plain:.3f}, balanced class weights {weighted:.3f}, "
              f"balanced sampler {sampled:.3f}")
        self.assertGreater(weighted, plain + 0.05)
        self.assertGreater(sampled, plain + 0.05)
        # The weights are scikit-learn's "balanced" ones for the training labels.
        info = read_json(os.path.join(run, "settings.json"))["run_info"]
        y = np.array([0] * self.train_counts["shirt"] + [1] * self.train_counts["tshirt"])
        np.testing.assert_allclose(info["class_weights"], compute_class_weight("balanced", classes=np.array([0, 1]), y=y),
                                   rtol=1e-12)

    def test_the_balanced_sampler_resumes_as_if_never_stopped(self):
        # 660 images, 32 a batch: 21 steps an epoch; killed in epoch 2, its draws made again.
        assert_resumes_exactly(self, ["--preset", "image-folder", "--set", f"data.root={self.folder}",
                                      "--set", "data.image_size=[28, 28]", "--set", "data.channels=1",
                                      "--set", "model.kind=mlp", "--set", "model.width=32", "--set", "train.epochs=3",
                                      "--set", "train.batch_size=32", "--set", "data.val_fraction=0",
                                      "--set", "data.sampler=balanced", "--set", "loss.label_smoothing=0.1",
                                      "--set", "train.early_stopping.metric=off"], 30,
                               ["eval_loss", "eval_accuracy", "eval_auc", "eval_ece"])

    def test_targets_of_images_from_a_table(self):
        """Regression and multi-label on an image folder: data.targets_file names each image and its targets."""
        images, labels = idx(f"{self.ROOT}/t10k-images-idx3-ubyte.gz"), idx(f"{self.ROOT}/t10k-labels-idx1-ubyte.gz")
        folder = os.path.join(self.tmp.name, "flat")
        os.makedirs(os.path.join(folder, "pictures"))
        values, tags = os.path.join(self.tmp.name, "values.csv"), os.path.join(self.tmp.name, "tags.csv")
        with open(values, "w") as v, open(tags, "w") as t:
            v.write("file,brightness,ink\n")
            t.write("file,tags\n")
            for i in range(600):
                name = f"pictures/{i}.pgm"
                write_pgm(os.path.join(folder, name), images[i])
                brightness, ink = images[i].mean() / 255, (images[i] > 128).mean()
                v.write(f"{name},{brightness:.6f},{ink:.6f}\n")
                kind = "footwear" if labels[i] in (5, 7, 9) else "clothing"
                t.write(f"{name},{kind}|{'bright' if brightness > 0.3 else 'dark'}\n")
        common = ["--preset", "image-folder", "--set", f"data.root={folder}", "--set", "data.image_size=[28, 28]",
                  "--set", "data.channels=1", "--set", "model.kind=mlp", "--set", "model.width=64",
                  "--set", "train.epochs=8", "--set", "data.val_fraction=0", "--set", "data.augment_flip=false",
                  "--set", "data.augment_crop=0", "--set", "train.early_stopping.metric=off"]
        out = os.path.join(self.tmp.name, "image-targets")
        code, text = cli("train", *common, "--set", "task.kind=regression", "--set", f"data.targets_file={values}",
                         "--out", out)
        self.assertEqual(code, 0, text)
        run = only_run(out)
        summary = read_json(os.path.join(run, "summary.json"))
        self.assertEqual([t["target"] for t in last_report(run)["targets"]], ["brightness", "ink"])
        self.assertGreater(summary["test_r2"], 0.8)
        code, text = cli("predict", run, "--input", os.path.join(folder, "pictures", "7.pgm"),
                         "--out", os.path.join(self.tmp.name, "one.csv"))
        self.assertEqual(code, 0, text)
        with open(os.path.join(self.tmp.name, "one.csv")) as f:
            row = next(csv.DictReader(f))
        self.assertAlmostEqual(float(row["brightness"]), images[7].mean() / 255, delta=0.05)
        code, text = cli("predict", run, "--input", os.path.join(folder, "pictures", "7.pgm"), "--top-k", "3",
                         "--out", os.path.join(self.tmp.name, "one.csv"), "--overwrite")
        self.assertEqual(code, 0, text)
        self.assertIn("warning: --top-k has no effect", text)
        code, text = cli("predict", run, "--input", os.path.join(folder, "pictures", "7.pgm"), "--workers", "-1",
                         "--out", os.path.join(self.tmp.name, "one.csv"), "--overwrite")
        self.assertEqual(code, 2, text)
        self.assertIn("--workers -1: give the decoding threads", text)
        code, text = cli("train", *common, "--set", "task.kind=multilabel", "--set", f"data.targets_file={tags}",
                         "--out", out + "-tags")
        self.assertEqual(code, 0, text)
        tagged = only_run(out + "-tags")
        self.assertEqual([l["label"] for l in last_report(tagged)["per_label"]],
                         ["bright", "clothing", "dark", "footwear"])
        self.assertGreater(read_json(os.path.join(tagged, "summary.json"))["test_map"], 0.8)
        print(f"image targets: regression test R2 {summary['test_r2']:.4f}; tags test mAP "
              f"{read_json(os.path.join(tagged, 'summary.json'))['test_map']:.4f}")
        # A row naming an image that is not there.
        missing = os.path.join(self.tmp.name, "missing.csv")
        with open(missing, "w") as f:
            f.write("file,brightness\npictures/1.pgm,0.5\npictures/nowhere.pgm,0.25\npictures/2.pgm,0.3\n")
        code, text = cli("train", *common, "--set", "task.kind=regression", "--set", f"data.targets_file={missing}",
                         "--out", out + "-bad")
        self.assertEqual(code, 2, text)
        self.assertIn('row 3: image "pictures/nowhere.pgm" is not a file under data.root', text)
        # An absolute path outside data.root is refused as "../" is; an image named twice is refused with both
        # rows; images without a row are said (how many, and which), not silently left out.
        elsewhere = os.path.join(self.tmp.name, "elsewhere.pgm")
        write_pgm(elsewhere, images[0])
        for name, rows, message in [
                ("outside", f"pictures/1.pgm,0.5\n{elsewhere},0.25\n", f'row 3: image "{elsewhere}" is not a file under'),
                ("twice", "pictures/1.pgm,0.5\npictures/2.pgm,0.1\npictures/1.pgm,0.25\n",
                 'row 4: image "pictures/1.pgm" is named twice, in row 2 and row 4')]:
            table = os.path.join(self.tmp.name, f"{name}.csv")
            with open(table, "w") as f:
                f.write("file,brightness\n" + rows)
            code, text = cli("train", *common, "--set", "task.kind=regression", "--set",
                             f"data.targets_file={table}", "--out", out + "-" + name)
            self.assertEqual(code, 2, text)
            self.assertIn(message, text)
        empty = os.path.join(self.tmp.name, "header-only.csv")
        with open(empty, "w") as f:
            f.write("file,brightness\n")
        code, text = cli("train", *common, "--set", "task.kind=regression", "--set", f"data.targets_file={empty}",
                         "--out", out + "-empty")
        self.assertEqual(code, 2, text)
        self.assertIn("has no rows of targets under its header", text)
        half = os.path.join(self.tmp.name, "half.csv")
        with open(half, "w") as f:
            f.write("file,brightness\n" + "".join(f"pictures/{i}.pgm,{images[i].mean() / 255:.4f}\n" for i in range(300)))
        code, text = cli("train", *common, "--set", "task.kind=regression", "--set", f"data.targets_file={half}",
                         "--out", out + "-half")
        self.assertEqual(code, 0, text)
        self.assertIn(f"300 of the 600 images under data.root {folder} have no row in data.targets_file", text)
        self.assertRegex(text, r"are not used \(pictures/\d+\.pgm, pictures/\d+\.pgm, pictures/\d+\.pgm, …\)")

    def test_bad_class_weights_say_what_is_wrong(self):
        out = os.path.join(self.tmp.name, "bad")
        code, text = cli("train", "--preset", "image-folder", "--set", f"data.root={self.folder}",
                         "--set", "loss.class_weights=1, 2, 3", "--out", out)
        self.assertEqual(code, 2, text)
        self.assertIn("loss.class_weights has 3 weight(s); the data has 2 classes (shirt, tshirt)", text)
        code, text = cli("train", "--preset", "image-folder", "--set", f"data.root={self.folder}",
                         "--set", "loss.class_weights=heavy", "--out", out)
        self.assertEqual(code, 2, text)
        self.assertIn('loss.class_weights must be none, balanced, or one positive number per class', text)


if __name__ == "__main__":
    unittest.main(verbosity=2)
