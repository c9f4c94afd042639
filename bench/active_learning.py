"""Issue 62, item 6: how many labels the studio's order saves. A labeller is
simulated with the true labels of scikit-learn's digits (1,797 images of
8x8, written as 16x16 PNG files): 400 fixed test images, the rest a pool of
unlabelled ones. Each loop starts from the same seed set (2 images of each
class, drawn by the seed), trains the default classifier preset
(fashion-mnist-cnn) on what is labelled, and labels the next BATCH images:
in the studio's order (label --suggest, least confidence, near-copies last)
or in a random order drawn by the same seed; until the test accuracy reaches
TARGET (or MAX labels). Prints the labels each needed per seed and the
saving; then the loop's own overhead: label --prelabel of 1,000
Fashion-MNIST test images by the default classifier.

Usage: active_learning.py CLI [--seeds 3] [--first-seed 1] [--target 0.95] [--batch 20] [--max-labels 600] [--prelabel 1000]"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
from PIL import Image
from sklearn.datasets import load_digits

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from idx_reader import idx  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("cli")
p.add_argument("--seeds", type=int, default=3)
p.add_argument("--first-seed", type=int, default=1)
p.add_argument("--target", type=float, default=0.95)
p.add_argument("--batch", type=int, default=20)
p.add_argument("--max-labels", type=int, default=600)
p.add_argument("--prelabel", type=int, default=1000)
a = p.parse_args()
work = tempfile.mkdtemp(prefix="active-learning-")
digits = load_digits()
TRAIN = ["--set", "data.format=image_folder", "--set", "train.epochs=30", "--set", "train.batch_size=32",
         "--set", "data.val_fraction=0"]


def png(i, folder):
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{i:04d}.png")
    image = Image.fromarray((digits.images[i] * 255 / 16).astype(np.uint8)).resize((16, 16), Image.BILINEAR)
    image.save(path)
    return path


def cli(*args):
    r = subprocess.run([a.cli, *args], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(args[:2])} failed: {r.stdout[-500:]}{r.stderr[-500:]}")
    return r.stdout


def train(root, runs):
    shutil.rmtree(runs, ignore_errors=True)
    cli("train", "--preset", "fashion-mnist-cnn", "--set", f"data.root={root}", *TRAIN, "--out", runs)
    run = os.path.join(runs, os.listdir(runs)[0])
    with open(os.path.join(run, "summary.json")) as f:  # the run's own record, not the words it printed
        return json.load(f)["test_accuracy"], run


def loop(seed, studio_order):
    """The labels needed to reach the target, and the accuracies on the way."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(digits.images))
    test, pool = order[:400], list(order[400:])
    root = os.path.join(work, f"{'studio' if studio_order else 'random'}-{seed}")
    shutil.rmtree(root, ignore_errors=True)
    data = os.path.join(root, "data")  # train/ and test/ with a folder per class
    for i in test:
        png(int(i), os.path.join(data, "test", str(digits.target[i])))
    labelled = []
    for c in range(10):  # the seed set: two of each class
        labelled += [int(i) for i in pool if digits.target[i] == c][:2]
    pool = [int(i) for i in pool if int(i) not in set(labelled)]
    unlabelled = os.path.join(root, "unlabelled")
    for i in pool:
        png(i, unlabelled)
    for i in labelled:
        png(i, os.path.join(data, "train", str(digits.target[i])))
    curve = []
    while True:
        accuracy, run = train(data, os.path.join(root, "runs"))
        curve.append((len(labelled), accuracy))
        if accuracy >= a.target or len(labelled) >= a.max_labels or not pool:
            return len(labelled), accuracy, curve
        if studio_order:
            csv_path = os.path.join(root, "order.csv")
            cli("label", "--suggest", run, "--data", unlabelled, "--out", csv_path, "--overwrite")
            with open(csv_path) as f:
                ranked = [int(os.path.basename(line.split(",")[1])[:4]) for line in f.read().splitlines()[1:]]
            chosen = ranked[:a.batch]
        else:
            chosen = pool[:a.batch]  # the pool is in the seed's random order
        for i in chosen:  # the labeller's answer: the true class
            os.replace(os.path.join(unlabelled, f"{i:04d}.png"),
                       os.path.join(data, "train", str(digits.target[i]), f"{i:04d}.png"))
        labelled += chosen
        pool = [i for i in pool if i not in set(chosen)]


results = {True: [], False: []}
for seed in range(a.first_seed, a.first_seed + a.seeds):
    for studio_order in (True, False):
        t = time.time()
        needed, accuracy, curve = loop(seed, studio_order)
        results[studio_order].append(needed)
        print(f"seed {seed}, {'studio order' if studio_order else 'random order'}: {needed} labels "
              f"(test accuracy {accuracy:.4f}; {time.time() - t:.0f} s) "
              + " ".join(f"{n}:{acc:.3f}" for n, acc in curve), flush=True)
s, r = np.mean(results[True]), np.mean(results[False])
print(f"labels to reach {a.target:.0%} test accuracy on digits (batch {a.batch}, {a.seeds} seeds): studio order "
      f"{results[True]} (mean {s:.0f}), random {results[False]} (mean {r:.0f}): {1 - s / r:.0%} fewer labels")

# The loop's own overhead: pre-labelling a folder by the default classifier.
fashion = "/usr/share/datasets/fashion-mnist"
folder = os.path.join(work, "fashion")
os.makedirs(folder)
for i, image in enumerate(idx(os.path.join(fashion, "t10k-images-idx3-ubyte.gz"))[:a.prelabel]):
    Image.fromarray(image).save(os.path.join(folder, f"{i:04d}.png"))
runs = os.path.join(work, "fashion-runs")
cli("train", "--preset", "fashion-mnist-cnn", "--set", "data.train_limit=4000", "--set", "train.epochs=1",
    "--out", runs)
run = os.path.join(runs, os.listdir(runs)[0])
for what in ("--prelabel", "--suggest"):
    t = time.time()
    cli("label", what, run, "--data", folder, "--out", os.path.join(work, "out" + what))
    print(f"label {what} of {a.prelabel} Fashion-MNIST images by the default classifier: {time.time() - t:.2f} s "
          "(the process's whole time)")
shutil.rmtree(work, ignore_errors=True)
