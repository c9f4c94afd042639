#!/usr/bin/env python3
"""Checks an exported model.pt with the installed PyTorch: torch.load reads it
with the default weights_only=True, the state dict loads strictly into the
same architecture built in Python, and its logits on the given test images
equal the ones the C++ engine computed.
Usage: check_export.py EXPORT_DIR LOGITS_JSON
LOGITS_JSON: {"images": "<idx file>", "count": N, "mean": m, "std": s, "logits": [[...], ...]}
"""
import gzip
import json
import sys

import numpy as np
import torch
from torch import nn


def build(model_cfg, run_info):
    """The studio's built-in mlp or cnn for the run's input shape and classes."""
    kind, width, depth, dropout = (model_cfg["kind"], model_cfg["width"], model_cfg["depth"],
                                   model_cfg.get("dropout", 0.0))
    shape = run_info["input"]
    classes = len(run_info["classes"])
    layers = []
    if kind == "mlp":
        layers.append(nn.Flatten())
        n = shape["features"] or shape["channels"] * shape["height"] * shape["width"]
        for _ in range(depth):
            layers += [nn.Linear(n, width), nn.ReLU()]
            if dropout > 0:
                layers.append(nn.Dropout(dropout))
            n = width
        layers.append(nn.Linear(n, classes))
    elif kind == "cnn":
        c, h, w = shape["channels"], shape["height"], shape["width"]
        for i in range(depth):
            out = width << i
            layers += [nn.Conv2d(c, out, 3, padding=1, bias=False), nn.BatchNorm2d(out), nn.ReLU()]
            if h >= 2 and w >= 2:
                layers.append(nn.MaxPool2d(2))
                h //= 2
                w //= 2
            c = out
        if h > 7 or w > 7:
            h, w = min(h, 7), min(w, 7)
            layers.append(nn.AdaptiveAvgPool2d((h, w)))
        layers.append(nn.Flatten())
        if dropout > 0:
            layers.append(nn.Dropout(dropout))
        layers.append(nn.Linear(c * h * w, classes))
    else:
        raise SystemExit(f"check_export.py knows mlp and cnn, not {kind}")
    return nn.Sequential(*layers)


def main():
    export_dir, logits_path = sys.argv[1], sys.argv[2]
    settings = json.load(open(f"{export_dir}/settings.json"))
    state = torch.load(f"{export_dir}/model.pt")  # weights_only=True is the default
    assert isinstance(state, dict), type(state)
    model = build(settings["model"], settings["run_info"])
    model.load_state_dict(state, strict=True)
    model.eval()
    ref = json.load(open(logits_path))
    n = ref["count"]
    with gzip.open(ref["images"], "rb") as f:
        raw = f.read()
    images = np.frombuffer(raw, dtype=np.uint8, offset=16)[: n * 784].reshape(n, 1, 28, 28)
    x = (torch.from_numpy(images.copy()).float() / 255.0 - ref["mean"]) / ref["std"]
    with torch.no_grad():
        logits = model(x)
    want = torch.tensor(ref["logits"], dtype=torch.float32)
    diff = (logits - want).abs().max().item()
    print(f"{len(state)} tensors loaded; {n} images; max logit difference {diff:.3g}")
    if not torch.allclose(logits, want, rtol=1e-4, atol=1e-4):
        raise SystemExit(f"logits differ from the engine's by up to {diff}")
    print("export ok")


if __name__ == "__main__":
    main()
