"""Issue 62, item 6, the boxes' part: how many labelled images the studio's
order saves a detector. A labeller is simulated with the true boxes of the
tests' synthetic scenes (tests/reference/detection_scenes.py's make_shapes:
bright and dim squares on noisy canvases, every 8th a negative): TEST fixed
test scenes, POOL others unlabelled. Each loop starts from the same START
scenes (drawn by the seed), trains a detector
(fasterrcnn_mobilenet_v3_large_320_fpn at 128 px, from random weights, a
fixed number of STEPS a round) on what is labelled, and labels the next
BATCH scenes: in the studio's order (label --suggest: the images whose
detections are least confident first, near-copies last) or in a random
order drawn by the same seed; until the test AP50 (COCO's, summary.json's
test_map50) reaches TARGET, or MAX labels. Prints the labels each needed per
seed, the AP50 after each round, and the saving.

Usage: active_learning_boxes.py CLI [--seeds 3] [--first-seed 1] [--target 0.7] [--batch 20] [--start 10]
       [--steps 240] [--pool 200] [--test 60] [--max-labels 200]"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "reference"))
from detection_scenes import make_shapes  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("cli")
p.add_argument("--seeds", type=int, default=3)
p.add_argument("--first-seed", type=int, default=1)
p.add_argument("--target", type=float, default=0.7)
p.add_argument("--batch", type=int, default=20)
p.add_argument("--start", type=int, default=10)
p.add_argument("--steps", type=int, default=240)
p.add_argument("--pool", type=int, default=200)
p.add_argument("--test", type=int, default=60)
p.add_argument("--max-labels", type=int, default=200)
a = p.parse_args()
work = tempfile.mkdtemp(prefix="active-learning-boxes-")
# The pool and the test scenes: made once, the same for every loop.
pool_folder, test_folder = os.path.join(work, "pool"), os.path.join(work, "test")
with open(make_shapes(pool_folder, a.pool, seed=11)) as f:
    truth = json.load(f)
test_annotations = make_shapes(test_folder, a.test, seed=12)
TRAIN = ["--set", "task.kind=detection", "--set", "model.kind=fasterrcnn_mobilenet_v3_large_320_fpn",
         "--set", "data.format=image_folder", "--set", f"data.test_root={test_folder}",
         "--set", f"data.test_annotations={test_annotations}", "--set", "data.val_fraction=0",
         "--set", "data.test_fraction=0", "--set", "model.detector.min_size=128",
         "--set", "model.detector.max_size=128", "--set", "model.detector.rois_per_image=16",
         "--set", "train.batch_size=6", "--set", "train.epochs=100000", "--set", f"train.max_steps={a.steps}",
         "--set", "optimizer.kind=sgd", "--set", "optimizer.lr=0.03", "--set", "optimizer.momentum=0.9",
         "--set", "schedule.kind=cosine", "--set", "schedule.warmup_steps=6", "--set", "evaluation.every_steps=100000",
         "--set", "data.augment_flip=true"]


def cli(*args):
    r = subprocess.run([a.cli, *args], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(args[:2])} failed: {r.stdout[-800:]}{r.stderr[-800:]}")
    return r.stdout


def write_labels(folder, names):
    """The labeller's answer: the labelled scenes' true boxes, as a COCO file beside them."""
    images = [im for im in truth["images"] if im["file_name"] in names]
    ids = {im["id"] for im in images}
    path = os.path.join(folder, "instances.json")
    with open(path, "w") as f:
        json.dump({**truth, "images": images,
                   "annotations": [x for x in truth["annotations"] if x["image_id"] in ids]}, f)
    return path


def train(root, annotations, runs):
    shutil.rmtree(runs, ignore_errors=True)
    cli("train", *TRAIN, "--set", f"data.root={root}", "--set", f"data.annotations={annotations}", "--out", runs)
    run = os.path.join(runs, os.listdir(runs)[0])
    with open(os.path.join(run, "summary.json")) as f:
        return json.load(f)["test_map50"], run


def loop(seed, studio_order):
    """The labels needed to reach the target, and the AP50 on the way."""
    rng = np.random.default_rng(seed)
    names = [im["file_name"] for im in truth["images"]]
    pool = [names[i] for i in rng.permutation(len(names))]
    root = os.path.join(work, f"{'studio' if studio_order else 'random'}-{seed}")
    shutil.rmtree(root, ignore_errors=True)
    labelled_folder, unlabelled = os.path.join(root, "labelled"), os.path.join(root, "unlabelled")
    os.makedirs(labelled_folder)
    os.makedirs(unlabelled)
    labelled, pool = pool[:a.start], pool[a.start:]
    for name in labelled:
        shutil.copy(os.path.join(pool_folder, name), labelled_folder)
    for name in pool:
        shutil.copy(os.path.join(pool_folder, name), unlabelled)
    curve = []
    while True:
        ap50, run = train(labelled_folder, write_labels(labelled_folder, set(labelled)), os.path.join(root, "runs"))
        curve.append((len(labelled), ap50))
        if ap50 >= a.target or len(labelled) >= a.max_labels or not pool:
            return len(labelled), ap50, curve
        if studio_order:
            order = os.path.join(root, "order.csv")
            cli("label", "--suggest", run, "--data", unlabelled, "--out", order, "--overwrite")
            with open(order) as f:
                ranked = [os.path.basename(line.split(",")[1]) for line in f.read().splitlines()[1:]]
            chosen = ranked[:a.batch]
        else:
            chosen = pool[:a.batch]  # the pool is in the seed's random order
        for name in chosen:
            os.replace(os.path.join(unlabelled, name), os.path.join(labelled_folder, name))
        labelled += chosen
        pool = [n for n in pool if n not in set(chosen)]


results = {True: [], False: []}
for seed in range(a.first_seed, a.first_seed + a.seeds):
    for studio_order in (True, False):
        t = time.time()
        needed, ap50, curve = loop(seed, studio_order)
        results[studio_order].append(needed)
        print(f"seed {seed}, {'studio order' if studio_order else 'random order'}: {needed} labelled scenes "
              f"(test AP50 {ap50:.4f}; {time.time() - t:.0f} s) " + " ".join(f"{n}:{m:.3f}" for n, m in curve),
              flush=True)
s, r = np.mean(results[True]), np.mean(results[False])
print(f"labelled scenes to reach test AP50 {a.target} (batch {a.batch}, {a.steps} steps a round, {a.seeds} seeds): "
      f"studio order {results[True]} (mean {s:.0f}), random {results[False]} (mean {r:.0f}): "
      f"{1 - s / r:.0%} fewer labels")
shutil.rmtree(work, ignore_errors=True)
