#!/usr/bin/env python3
"""Checks an exported model.pt with the installed PyTorch: torch.load reads it
with the default weights_only=True, the state dict loads strictly into the
same architecture built in Python by the export's model.py, and its logits on the given test images
equal the ones the C++ engine computed.
Usage: check_export.py EXPORT_DIR LOGITS_JSON
LOGITS_JSON: {"images": "<idx file>", "count": N, "mean": m, "std": s, "logits": [[...], ...]}
"""
import gzip
import importlib.util
import json
import sys

import numpy as np
import torch


def build(export_dir):
    """The network in plain PyTorch, from the export's own model.py."""
    spec = importlib.util.spec_from_file_location("model", f"{export_dir}/model.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build()


def main():
    export_dir, logits_path = sys.argv[1], sys.argv[2]
    state = torch.load(f"{export_dir}/model.pt")  # weights_only=True is the default
    assert isinstance(state, dict), type(state)
    model = build(export_dir)
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
