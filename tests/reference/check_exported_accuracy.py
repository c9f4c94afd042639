#!/usr/bin/env python3
"""Checks that an exported run gives, in Python with the installed PyTorch,
the test accuracy the studio reported (summary.json), on the same test data:
model.ts with torch.jit.load, or model.pt (a state dict) loaded into the same
nn.Sequential (built by the export's model.py), fed through preprocessing.json.
Usage: check_exported_accuracy.py EXPORT_DIR TEST_DATA
  TEST_DATA: a folder of class folders (images), or a CSV test table.
Prints the accuracy; fails when it differs from the summary's by more than
one example's worth (float summation order may flip a near tie).
"""
import csv
import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image

sys.path.insert(0, os.path.dirname(__file__))
from check_export import build  # noqa: E402


def images(folder, pre):
    shape = pre["input_shape"]
    c, h, w = shape["channels"], shape["height"], shape["width"]
    mean = torch.tensor(pre["normalization"]["mean"]).view(1, -1, 1, 1)
    std = torch.tensor(pre["normalization"]["std"]).view(1, -1, 1, 1)
    xs, ys = [], []
    for label, name in enumerate(pre["classes"]):
        d = os.path.join(folder, name)
        for f in sorted(os.listdir(d)):
            arr = np.array(Image.open(os.path.join(d, f)).convert("L" if c == 1 else "RGB"))
            t = torch.from_numpy(arr.reshape(arr.shape[0], arr.shape[1], c).copy()).permute(2, 0, 1)[None].float()
            if t.shape[2:] != (h, w):
                t = F.interpolate(t, size=(h, w), mode="bilinear", antialias=True, align_corners=False).round()
            xs.append(t)
            ys.append(label)
    x = torch.cat(xs) / 255.0
    return ((x - mean) / std).float(), torch.tensor(ys)


def table(path, pre, settings):
    with open(path, newline="") as f:
        sample = f.readline()
    delim = max([",", ";", "\t"], key=sample.count)
    with open(path, newline="") as f:
        rows = list(csv.reader(f, delimiter=delim))
    header, rows = rows[0], rows[1:]
    label = header.index(settings["data"]["label_column"]) if settings["data"]["label_column"] else len(header) - 1
    cols = [header.index(n) for n in pre["features"]]
    x = torch.tensor([[float(r[k]) for k in cols] for r in rows], dtype=torch.float32)
    y = torch.tensor([pre["classes"].index(r[label].strip()) for r in rows])
    mean = torch.tensor(pre["normalization"]["mean"], dtype=torch.float32)
    std = torch.tensor(pre["normalization"]["std"], dtype=torch.float32)
    return (x - mean) / std, y


def main():
    export_dir, data = sys.argv[1], sys.argv[2]
    pre = json.load(open(os.path.join(export_dir, "preprocessing.json")))
    settings = json.load(open(os.path.join(export_dir, "settings.json")))
    summary = json.load(open(os.path.join(export_dir, "summary.json")))
    if os.path.exists(os.path.join(export_dir, "model.ts")):
        model = torch.jit.load(os.path.join(export_dir, "model.ts"))
    else:
        model = build(export_dir)  # the export's own model.py
        model.load_state_dict(torch.load(os.path.join(export_dir, "model.pt")))
    model.eval()
    x, y = table(data, pre, settings) if pre["input"] == "table" else images(data, pre)
    with torch.no_grad():
        accuracy = (model(x).argmax(1) == y).float().mean().item()
    want = summary["test_accuracy"]
    print(f"{len(y)} test examples: accuracy {accuracy:.6f} in Python, {want:.6f} in the studio")
    if abs(accuracy - want) > 1.0 / len(y) + 1e-9:
        raise SystemExit("the exported model's accuracy differs from the studio's")
    print("accuracy reproduced")


if __name__ == "__main__":
    main()
