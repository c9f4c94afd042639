#!/usr/bin/env python3
"""The reference for training-studio-cli predict: an export's model in Python
with the installed PyTorch (model.ts with torch.jit.load, or model.pt loaded
into the export's own model.py), fed through its preprocessing.json.

  predict_reference.py probs EXPORT_DIR INPUT OUT_JSON [five-crop]
      INPUT: a text file listing image files (one per line), or a CSV table.
      Writes {"probabilities": [[...], ...]}: softmax of the logits, float32,
      one row per image or table row, in order. five-crop: each image resized
      to round(8/7) of the input's size and the mean of the probabilities of
      torchvision.transforms.FiveCrop's five crops (the corners, and the
      centre at int(round((S - h) / 2))), written out here as torchvision
      does it (functional.five_crop).
  predict_reference.py gradcam EXPORT_DIR IMAGE LAYER OUT_JSON
      Grad-CAM (Selvaraju et al. 2017) of the predicted class with a forward hook on
      model[LAYER] and a hook on its output's gradient: the channel weights are the gradient's
      mean over the positions, the map relu(sum of weighted activations),
      upsampled bilinearly (align_corners=False) to the input's size and
      divided by its maximum. Writes {"class": c, "probability": p, "heat": [...]}.
  predict_reference.py attributions EXPORT_DIR TABLE ROW OUT_JSON
      Gradient x input (Captum's InputXGradient) of the predicted class's
      logit for data row ROW (0-based) of the table, on the normalised
      features. Writes {"class": c, "values": [...]}.
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


def load(export_dir):
    if os.path.exists(os.path.join(export_dir, "model.ts")):
        model = torch.jit.load(os.path.join(export_dir, "model.ts"))
    else:
        model = build(export_dir)
        model.load_state_dict(torch.load(os.path.join(export_dir, "model.pt")))
    return model.eval()


def image(path, pre, scale=1.0):
    shape = pre["input_shape"]
    c, h, w = shape["channels"], shape["height"], shape["width"]
    h, w = round(h * scale), round(w * scale)
    arr = np.array(Image.open(path).convert("L" if c == 1 else "RGB"))
    t = torch.from_numpy(arr.reshape(arr.shape[0], arr.shape[1], c).copy()).permute(2, 0, 1)[None].float()
    if t.shape[2:] != (h, w):
        t = F.interpolate(t, size=(h, w), mode="bilinear", antialias=True, align_corners=False).round().clamp(0, 255)
    mean = torch.tensor(pre["normalization"]["mean"]).view(1, -1, 1, 1)
    std = torch.tensor(pre["normalization"]["std"]).view(1, -1, 1, 1)
    return ((t / 255.0 - mean) / std).float()


def table(path, pre):
    with open(path, newline="") as f:
        sample = f.readline()
    delim = max([",", ";", "\t"], key=sample.count)
    with open(path, newline="") as f:
        rows = list(csv.reader(f, delimiter=delim))
    header, rows = [h.strip() for h in rows[0]], rows[1:]
    cols = [header.index(n) for n in pre["features"]]
    x = torch.tensor([[float(r[k]) for k in cols] for r in rows], dtype=torch.float32)
    mean = torch.tensor(pre["normalization"]["mean"], dtype=torch.float32)
    std = torch.tensor(pre["normalization"]["std"], dtype=torch.float32)
    return (x - mean) / std


def main():
    mode, export_dir = sys.argv[1], sys.argv[2]
    pre = json.load(open(os.path.join(export_dir, "preprocessing.json")))
    model = load(export_dir)
    if mode == "probs":
        source, out = sys.argv[3], sys.argv[4]
        five = len(sys.argv) > 5 and sys.argv[5] == "five-crop"
        if pre["input"] == "table":
            x = table(source, pre)
        else:
            x = torch.cat([image(line.strip(), pre, 8 / 7 if five else 1.0) for line in open(source) if line.strip()])
        with torch.no_grad():
            if five:
                h, w = pre["input_shape"]["height"], pre["input_shape"]["width"]
                big_h, big_w = x.shape[2], x.shape[3]
                top, left = int(round((big_h - h) / 2.0)), int(round((big_w - w) / 2.0))
                crops = [x[:, :, :h, :w], x[:, :, :h, big_w - w:], x[:, :, big_h - h:, :w],
                         x[:, :, big_h - h:, big_w - w:], x[:, :, top:top + h, left:left + w]]
                p = torch.stack([torch.softmax(model(c).float(), 1) for c in crops]).mean(0)
            else:
                p = torch.softmax(model(x).float(), 1)
        json.dump({"probabilities": p.tolist()}, open(out, "w"))
    elif mode == "gradcam":
        path, layer, out = sys.argv[3], int(sys.argv[4]), sys.argv[5]
        kept = {}
        stage = model[layer]

        def keep(module, inputs, output):
            kept["a"] = output
            output.register_hook(lambda grad: kept.__setitem__("g", grad))

        stage.register_forward_hook(keep)
        x = image(path, pre).requires_grad_(True)
        logits = model(x)
        c = int(logits.argmax(1))
        logits[0, c].backward()
        weights = kept["g"].mean((2, 3), keepdim=True)
        cam = F.relu((weights * kept["a"].detach()).sum(1, keepdim=True))
        cam = F.interpolate(cam, size=x.shape[2:], mode="bilinear", align_corners=False)
        if cam.max() > 0:
            cam = cam / cam.max()
        prob = float(torch.softmax(logits.detach(), 1)[0, c])
        json.dump({"class": c, "probability": prob, "heat": cam.flatten().tolist()}, open(out, "w"))
    elif mode == "attributions":
        path, row, out = sys.argv[3], int(sys.argv[4]), sys.argv[5]
        x = table(path, pre)[row:row + 1].clone().requires_grad_(True)
        logits = model(x)
        c = int(logits.argmax(1))
        logits[0, c].backward()
        json.dump({"class": c, "values": (x.grad * x.detach())[0].tolist()}, open(out, "w"))
    else:
        raise SystemExit("mode must be probs, gradcam or attributions")


if __name__ == "__main__":
    main()
