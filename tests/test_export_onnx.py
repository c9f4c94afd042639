#!/usr/bin/env python3
"""The export to ONNX (issue 44), through training-studio-cli, against the
real things: ONNX Runtime and PyTorch in this Python, and the studio's own
predict.

- Fashion-MNIST's CNN: `export --format onnx --quantize int8`. model.onnx,
  run here in ONNX Runtime on the test file's own images (read from the IDX
  file, preprocessed by preprocessing.json's recipe), gives the logits of
  the export's model.py + model.safetensors in PyTorch (1e-4) for a batch of
  3 and of 7 (a dynamic batch axis); export.json's fp32 figure is the run's
  test accuracy (summary.json) and its int8 figure is what model.int8.onnx,
  run here, scores on the same split; the model card's Python snippets run.
- A regression table (scikit-learn's diabetes): model.onnx's values, in the
  data's units by preprocessing.json, equal the studio's `predict` on the
  test table.
- A TorchScript model (model.ts) and a torchvision resnet18 on an image
  folder: every file's check passes, and model.onnx gives the PyTorch
  model's logits here.
- The check fails (exit 1) when the files do not answer as the studio does
  (a tolerance of 0), naming the file and keeping it; bad input ends with
  exit 2 and writes nothing: --quantize without onnx, an opset out of range,
  a run whose data is gone, a Python without onnxruntime.
Environment (ctest sets it): STUDIO_CLI, STUDIO_PRESET_DIR, STUDIO_TEST_SCRIPTS.
"""
import csv
import glob
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import onnxruntime as ort
import torch
from PIL import Image
from safetensors.torch import load_file
from sklearn.datasets import load_diabetes, make_classification, make_multilabel_classification
from sklearn.model_selection import train_test_split

from idx_reader import idx
from suite_limits import HANG_LIMIT_S

CLI = os.environ["STUDIO_CLI"]
SCRIPTS = os.environ["STUDIO_TEST_SCRIPTS"]
FASHION = "/usr/share/datasets/fashion-mnist"


def cli(*args, env=None, timeout=HANG_LIMIT_S):
    p = subprocess.run([CLI, *args], capture_output=True, text=True, timeout=timeout,
                       env=None if env is None else {**os.environ, **env})
    return p.returncode, p.stdout + p.stderr


def only_run(out):
    runs = sorted(glob.glob(os.path.join(out, "*")))
    assert len(runs) == 1, runs
    return runs[0]


def read_json(path):
    with open(path) as f:
        return json.load(f)


def images_in(pre, pixels):
    """preprocessing.json's recipe for uint8 images [N, C, H, W], written here from its words."""
    mean = np.asarray(pre["normalization"]["mean"], np.float32).reshape(1, -1, 1, 1)
    std = np.asarray(pre["normalization"]["std"], np.float32).reshape(1, -1, 1, 1)
    return ((pixels.astype(np.float32) / 255.0 - mean) / std).astype(np.float32)


def torch_model(export):
    spec = importlib.util.spec_from_file_location("exported_model", os.path.join(export, "model.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = module.build()
    model.load_state_dict(load_file(os.path.join(export, "model.safetensors")), strict=True)
    return model.eval()


def session(path):
    return ort.InferenceSession(path, providers=["CPUExecutionProvider"])


def snippets(card):
    return re.findall(r"```python\n(.*?)```", card, re.S)


def write_splits(folder, header, table, test_size, cells=lambda r: [f"{v:.6g}" for v in r]):
    """train.csv and test.csv of the table's rows (train_test_split, seeded), as the studio reads them."""
    paths = {}
    for name, rows in zip(("train", "test"), train_test_split(table, test_size=test_size, random_state=0)):
        paths[name] = os.path.join(folder, f"{name}.csv")
        with open(paths[name], "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(header)
            w.writerows([cells(r) for r in rows])
    return paths


class CnnTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="studio-onnx-")
        out = os.path.join(cls.tmp.name, "runs")
        code, text = cli("train", "--preset", "fashion-mnist-cnn", "--set", "data.train_limit=3000",
                         "--set", "data.test_limit=400", "--set", "train.epochs=2", "--out", out)
        assert code == 0, text
        cls.run_dir = only_run(out)
        cls.export = os.path.join(cls.tmp.name, "export")
        cls.code, cls.text = cli("export", cls.run_dir, "--out", cls.export, "--format", "onnx", "--quantize", "int8",
                                 "--calibration-examples", "200")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_model_onnx_gives_pytorchs_logits_on_the_test_files_images(self):
        self.assertEqual(self.code, 0, self.text)
        pre = read_json(os.path.join(self.export, "preprocessing.json"))
        self.assertEqual(pre["onnx"]["input"], "input")
        self.assertEqual(pre["onnx"]["output"], "logits")
        s = session(os.path.join(self.export, "model.onnx"))
        self.assertEqual([o.name for o in s.get_outputs()], ["logits"])
        pixels = idx(f"{FASHION}/t10k-images-idx3-ubyte.gz")[:64, None]
        x = images_in(pre, pixels)
        model = torch_model(self.export)
        for batch in (3, 7):
            with torch.no_grad():
                want = model(torch.from_numpy(x[:batch])).numpy()
            got = s.run(["logits"], {"input": x[:batch]})[0]
            self.assertEqual(got.shape, (batch, 10))
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-4)
        with torch.no_grad():
            want = model(torch.from_numpy(x)).numpy()
        self.assertTrue((s.run(None, {"input": x})[0].argmax(1) == want.argmax(1)).all())

    def test_export_json_holds_every_files_check_and_int8s_figures(self):
        self.assertEqual(self.code, 0, self.text)
        report = read_json(os.path.join(self.export, "export.json"))
        summary = read_json(os.path.join(self.run_dir, "summary.json"))
        self.assertTrue(report["passed"])
        files = {c["file"]: c for c in report["checks"]}
        self.assertEqual(set(files), {"model.safetensors", "model.pt", "model.onnx"})
        for c in files.values():
            self.assertLessEqual(c["largest_difference"], 1e-4, c)
            self.assertEqual(c["top1_agreement"], 1.0, c)
            self.assertEqual(c["examples"], 256)
        self.assertIn("model.onnx", self.text)
        q = report["int8"]
        self.assertEqual(q["examples"], 400)
        self.assertEqual(q["calibration_examples"], 200)
        # ONNX Runtime's fp32 accuracy on the split is the studio's own test accuracy.
        self.assertAlmostEqual(q["fp32"], summary["test_accuracy"], delta=1.5 / 400)
        # model.int8.onnx, run here on the test file's first 400 images, scores near its own figure.
        pre = read_json(os.path.join(self.export, "preprocessing.json"))
        x = images_in(pre, idx(f"{FASHION}/t10k-images-idx3-ubyte.gz")[:400, None])
        y = idx(f"{FASHION}/t10k-labels-idx1-ubyte.gz")[:400]
        i8 = (session(os.path.join(self.export, "model.int8.onnx")).run(None, {"input": x})[0].argmax(1) == y).mean()
        f32 = (session(os.path.join(self.export, "model.onnx")).run(None, {"input": x})[0].argmax(1) == y).mean()
        print(f"int8 here {i8:.4f} / fp32 here {f32:.4f}; export.json int8 {q['int8']:.4f} fp32 {q['fp32']:.4f}")
        self.assertLess(abs((f32 - i8) - (q["fp32"] - q["int8"])), 0.05)
        # INT8 keeps the accuracy within 2 points.
        self.assertLessEqual(abs(q["fp32"] - q["int8"]), 0.02)
        self.assertAlmostEqual(q["drop_points"], (q["fp32"] - q["int8"]) * 100, places=9)
        for kind in ("speed_fp32", "speed_int8"):
            self.assertGreater(q[kind]["batch1_latency_ms"], 0)
            self.assertGreater(q[kind]["batch32_examples_per_second"], 0)
        self.assertAlmostEqual(q["speedup_batch1"],
                               q["speed_fp32"]["batch1_latency_ms"] / q["speed_int8"]["batch1_latency_ms"], places=9)
        self.assertIn("x fp32's speed at batch 1", self.text)

    def test_the_model_cards_snippets_run(self):
        self.assertEqual(self.code, 0, self.text)
        with open(os.path.join(self.export, "README.md")) as f:
            card = f.read()
        for heading in ("## What it is", "## What it was trained on", "## How it did", "## How it was trained",
                        "## How to run it", "## Limitations"):
            self.assertIn(heading, card)
        summary = read_json(os.path.join(self.run_dir, "summary.json"))
        self.assertIn(f"Test accuracy: {summary['test_accuracy'] * 100:.2f} %", card)
        self.assertIn("| Ankle boot |", card)
        code = snippets(card)
        self.assertEqual(len(code), 2)
        # The snippets feed preprocess.py's x from an image file (issue 60, item 11): one is made here.
        self.assertIn('preprocess(["photo.jpg"])', card)
        rng = np.random.default_rng(0)
        Image.fromarray(rng.integers(0, 255, (40, 33, 3), dtype=np.uint8)).save(
            os.path.join(self.export, "photo.jpg"))
        for snippet in code:
            p = subprocess.run([sys.executable, "-c", snippet], cwd=self.export, capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(len(re.findall(r"[-\d.e]+", p.stdout.replace("tensor", ""))) >= 10, True, p.stdout)

    def test_a_check_that_fails_says_which_file_and_keeps_it(self):
        out = os.path.join(self.tmp.name, "strict")
        code, text = cli("export", self.run_dir, "--out", out, "--format", "onnx", "--tolerance", "0")
        self.assertEqual(code, 1, text)
        self.assertIn("model.onnx", text)
        self.assertIn("largest difference", text)
        self.assertIn("kept", text)
        self.assertTrue(os.path.exists(os.path.join(out, "model.onnx")))
        self.assertFalse(read_json(os.path.join(out, "export.json"))["passed"])
        with open(os.path.join(out, "README.md")) as f:
            self.assertIn("export check failed", f.read())

    def test_bad_input_is_refused_before_anything_is_written(self):
        cases = [
            (["--quantize", "int8"], "--format onnx", {}),
            (["--format", "onnx", "--opset", "7"], "--opset", {}),
        ]
        fake = os.path.join(self.tmp.name, "no-onnxruntime")
        os.makedirs(os.path.join(fake, "onnxruntime"), exist_ok=True)
        with open(os.path.join(fake, "onnxruntime", "__init__.py"), "w") as f:
            f.write("raise ModuleNotFoundError(\"No module named 'onnxruntime'\", name='onnxruntime')\n")
        cases.append((["--format", "onnx"], "onnxruntime is not installed", {"PYTHONPATH": fake}))
        for i, (args, said, env) in enumerate(cases):
            with self.subTest(args=args):
                out = os.path.join(self.tmp.name, f"bad-{i}")
                code, text = cli("export", self.run_dir, "--out", out, *args, env=env)
                self.assertEqual(code, 2, text)
                self.assertIn(said, text)
                self.assertFalse(os.path.exists(os.path.join(out, "model.pt")), text)
        # A run whose data is gone: said by name, nothing written.
        moved = os.path.join(self.tmp.name, "moved-run")
        shutil.copytree(self.run_dir, moved)
        settings = read_json(os.path.join(moved, "settings.json"))
        settings["data"]["root"] = os.path.join(self.tmp.name, "gone")
        with open(os.path.join(moved, "settings.json"), "w") as f:
            json.dump(settings, f)
        out = os.path.join(self.tmp.name, "bad-data")
        code, text = cli("export", moved, "--out", out, "--format", "onnx")
        self.assertEqual(code, 2, text)
        self.assertIn("could not be loaded", text)
        self.assertIn("gone", text)
        self.assertFalse(os.path.exists(os.path.join(out, "model.pt")), text)


class TableTest(unittest.TestCase):
    def test_a_regressions_onnx_values_are_the_studios_predictions(self):
        with tempfile.TemporaryDirectory(prefix="studio-onnx-table-") as tmp:
            d = load_diabetes(scaled=False)
            names = list(d.feature_names) + ["progression"]
            paths = write_splits(tmp, names, np.column_stack([d.data, d.target]), 0.2)
            out = os.path.join(tmp, "runs")
            code, text = cli("train", "--preset", "csv-regression", "--set", f"data.root={paths['train']}",
                             "--set", f"data.test_file={paths['test']}", "--set", "data.val_fraction=0",
                             "--set", "train.epochs=5", "--out", out)
            self.assertEqual(code, 0, text)
            run = only_run(out)
            export = os.path.join(tmp, "export")
            code, text = cli("export", run, "--out", export, "--format", "onnx", "--quantize", "int8")
            self.assertEqual(code, 0, text)
            pre = read_json(os.path.join(export, "preprocessing.json"))
            self.assertEqual(pre["onnx"]["output"], "values")
            # --check without ONNX: the PyTorch files alone are checked.
            code, text = cli("export", run, "--out", os.path.join(tmp, "checked"), "--check")
            self.assertEqual(code, 0, text)
            checked = read_json(os.path.join(tmp, "checked", "export.json"))
            self.assertEqual([c["file"] for c in checked["checks"]], ["model.safetensors", "model.pt"])
            self.assertNotIn("onnx", checked)
            self.assertFalse(os.path.exists(os.path.join(tmp, "checked", "model.onnx")))
            report = read_json(os.path.join(export, "export.json"))
            self.assertTrue(report["passed"])
            self.assertIsNone(report["checks"][-1]["top1_agreement"])
            self.assertEqual(report["int8"]["figure"], "r2")
            summary = read_json(os.path.join(run, "summary.json"))
            self.assertAlmostEqual(report["int8"]["fp32"], summary["test_r2"], delta=1e-4)
            # The studio's predict on the test table, and model.onnx here by preprocessing.json.
            code, text = cli("predict", run, "--input", paths["test"], "--which", "last", "--out",
                             os.path.join(tmp, "pred.csv"), "--batch-size", "1000")
            self.assertEqual(code, 0, text)
            with open(os.path.join(tmp, "pred.csv")) as f:
                want = np.array([float(r["progression"]) for r in csv.DictReader(f)])
            rows = np.loadtxt(paths["test"], delimiter=",", skiprows=1)[:, :-1]
            mean, std = np.array(pre["normalization"]["mean"]), np.array(pre["normalization"]["std"])
            x = ((rows - mean) / std).astype(np.float32)
            values = session(os.path.join(export, "model.onnx")).run(["values"], {"input": x})[0][:, 0]
            got = values * pre["targets"]["std"][0] + pre["targets"]["mean"][0]
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)


    def test_a_tables_mlp_answers_as_predict_and_an_unexportable_model_says_why(self):
        with tempfile.TemporaryDirectory(prefix="studio-onnx-classes-") as tmp:
            x, y = make_classification(n_samples=500, n_features=4, n_informative=3, n_redundant=0, n_classes=3,
                                       random_state=1)
            paths = write_splits(tmp, ["a", "b", "c", "d", "kind"], np.column_stack([x, y]), 0.2,
                                 lambda r: [f"{v:.6g}" for v in r[:4]] + [f"k{int(r[4])}"])
            common = ["--preset", "csv-table", "--set", f"data.root={paths['train']}", "--set",
                      f"data.test_file={paths['test']}", "--set", "data.val_fraction=0", "--set", "train.epochs=5"]
            out = os.path.join(tmp, "mlp")
            code, text = cli("train", *common, "--out", out)
            self.assertEqual(code, 0, text)
            run = only_run(out)
            export = os.path.join(tmp, "export")
            code, text = cli("export", run, "--out", export, "--format", "onnx")
            self.assertEqual(code, 0, text)
            report = read_json(os.path.join(export, "export.json"))
            self.assertTrue(report["passed"])
            self.assertEqual([c["top1_agreement"] for c in report["checks"]], [1.0, 1.0, 1.0])
            # An export into a folder that holds one is refused, as before ONNX.
            code, text = cli("export", run, "--out", export, "--format", "onnx")
            self.assertEqual(code, 2, text)
            self.assertIn("already holds", text)
            pre = read_json(os.path.join(export, "preprocessing.json"))
            code, text = cli("predict", run, "--input", paths["test"], "--which", "last", "--out",
                             os.path.join(tmp, "pred.csv"), "--batch-size", "1000")
            self.assertEqual(code, 0, text)
            with open(os.path.join(tmp, "pred.csv")) as f:
                rows = list(csv.DictReader(f))
            table = np.loadtxt(paths["test"], delimiter=",", skiprows=1, usecols=range(4))
            mean, std = np.array(pre["normalization"]["mean"]), np.array(pre["normalization"]["std"])
            logits = session(os.path.join(export, "model.onnx")).run(
                ["logits"], {"input": ((table - mean) / std).astype(np.float32)})[0].astype(np.float64)
            p = np.exp(logits - logits.max(1, keepdims=True))
            p /= p.sum(1, keepdims=True)
            self.assertEqual([pre["classes"][i] for i in p.argmax(1)], [r["class_1"] for r in rows])
            np.testing.assert_allclose(p.max(1), [float(r["probability_1"]) for r in rows], rtol=0, atol=1e-4)

            # A TorchScript model with an operator ONNX has no export for: the exporter's reason, in one paragraph.
            class Bessel(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.l = torch.nn.Linear(4, 3)

                def forward(self, x):
                    y = self.l(x)
                    return y + torch.special.i1e(y)

            scripted = os.path.join(tmp, "bessel.ts")
            torch.jit.save(torch.jit.script(Bessel()), scripted)
            out = os.path.join(tmp, "bessel")
            code, text = cli("train", *common, "--set", "model.kind=torchscript", "--set", f"model.path={scripted}",
                             "--out", out)
            self.assertEqual(code, 0, text)
            code, text = cli("export", only_run(out), "--out", os.path.join(tmp, "bessel-export"), "--format", "onnx")
            self.assertEqual(code, 2, text)
            self.assertIn("torch.onnx.export could not export this model with opset 18", text)
            self.assertIn("special_i1e", text)
            self.assertNotIn("Traceback", text)

    def test_a_multi_labels_onnx_probabilities_are_the_studios_predictions(self):
        with tempfile.TemporaryDirectory(prefix="studio-onnx-labels-") as tmp:
            x, y = make_multilabel_classification(n_samples=400, n_features=8, n_classes=3, n_labels=2,
                                                  allow_unlabeled=False, random_state=3)
            labels, names = ["a", "b", "c"], [f"f{i}" for i in range(8)]
            paths = write_splits(tmp, names + labels, np.column_stack([x, y]), 0.25)
            out = os.path.join(tmp, "runs")
            code, text = cli("train", "--preset", "multilabel-table", "--set", f"data.root={paths['train']}",
                             "--set", f"data.test_file={paths['test']}", "--set", "data.val_fraction=0",
                             "--set", f"data.target_columns={json.dumps(labels)}", "--set", "train.epochs=5",
                             "--out", out)
            self.assertEqual(code, 0, text)
            run = only_run(out)
            export = os.path.join(tmp, "export")
            code, text = cli("export", run, "--out", export, "--format", "onnx")
            self.assertEqual(code, 0, text)
            self.assertTrue(read_json(os.path.join(export, "export.json"))["passed"])
            pre = read_json(os.path.join(export, "preprocessing.json"))
            code, text = cli("predict", run, "--input", paths["test"], "--which", "last", "--out",
                             os.path.join(tmp, "pred.csv"), "--batch-size", "1000")
            self.assertEqual(code, 0, text)
            with open(os.path.join(tmp, "pred.csv")) as f:
                want = np.array([[float(r[label]) for label in labels] for r in csv.DictReader(f)])
            rows = np.loadtxt(paths["test"], delimiter=",", skiprows=1)[:, :8]
            mean, std = np.array(pre["normalization"]["mean"]), np.array(pre["normalization"]["std"])
            logits = session(os.path.join(export, "model.onnx")).run(
                ["logits"], {"input": ((rows - mean) / std).astype(np.float32)})[0]
            np.testing.assert_allclose(1 / (1 + np.exp(-logits.astype(np.float64))), want, rtol=0, atol=1e-4)


class OtherModelsTest(unittest.TestCase):
    def test_a_torchscript_model_and_a_resnet18_export_and_answer(self):
        with tempfile.TemporaryDirectory(prefix="studio-onnx-models-") as tmp:
            models = os.path.join(tmp, "models")
            p = subprocess.run([sys.executable, os.path.join(SCRIPTS, "make_torchscript_models.py"), models, "4", "3"],
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            # Image folders of Fashion-MNIST's T-shirts, trousers and sneakers.
            images, labels = idx(f"{FASHION}/train-images-idx3-ubyte.gz"), idx(f"{FASHION}/train-labels-idx1-ubyte.gz")
            folder = os.path.join(tmp, "photos")
            for name, label in (("tshirt", 0), ("trouser", 1), ("sneaker", 7)):
                picks = np.flatnonzero(labels == label)
                for split, chosen in (("train", picks[:40]), ("test", picks[40:60])):
                    os.makedirs(os.path.join(folder, split, name))
                    for i in chosen:
                        with open(os.path.join(folder, split, name, f"{i}.pgm"), "wb") as f:
                            f.write(b"P5 28 28 255\n" + images[i].tobytes())
            cases = {
                "torchscript": ["--preset", "fashion-mnist-cnn", "--set", "model.kind=torchscript", "--set",
                                f"model.path={models}/residual.ts", "--set", "data.train_limit=1300", "--set",
                                "data.test_limit=100", "--set", "train.epochs=1"],
                "resnet18": ["--preset", "finetune-photos", "--set", f"data.root={folder}", "--set",
                             "data.image_size=[32, 32]", "--set", "train.epochs=1", "--set", "train.batch_size=30",
                             "--set", "data.val_fraction=0"],
            }
            for name, args in cases.items():
                with self.subTest(model=name):
                    out = os.path.join(tmp, name)
                    code, text = cli("train", *args, "--out", out)
                    self.assertEqual(code, 0, text)
                    export = os.path.join(tmp, f"{name}-export")
                    code, text = cli("export", only_run(out), "--out", export, "--format", "onnx")
                    self.assertEqual(code, 0, text)
                    report = read_json(os.path.join(export, "export.json"))
                    self.assertTrue(report["passed"])
                    checked = [c["file"] for c in report["checks"]]
                    self.assertIn("model.onnx", checked)
                    self.assertIn("model.ts" if name == "torchscript" else "model.safetensors", checked)
                    with open(os.path.join(export, "README.md")) as f:
                        card = f.read()
                    self.assertEqual("torch.jit.load(\"model.ts\")" in card, name == "torchscript")
                    pre = read_json(os.path.join(export, "preprocessing.json"))
                    shape = pre["input_shape"]
                    x = torch.randn(5, shape["channels"], shape["height"], shape["width"],
                                    generator=torch.Generator().manual_seed(0))
                    model = (torch.jit.load(os.path.join(export, "model.ts")) if name == "torchscript"
                             else torch_model(export)).eval()
                    with torch.no_grad():
                        want = model(x).numpy()
                    got = session(os.path.join(export, "model.onnx")).run(None, {"input": x.numpy()})[0]
                    np.testing.assert_allclose(got, want, rtol=0, atol=1e-4)


if __name__ == "__main__":
    unittest.main(verbosity=2)
