#!/usr/bin/env python3
"""Checks an exported built-in model with Python alone: model.safetensors read
by the `safetensors` package holds exactly the tensors of model.pt, and
model.py's build() makes a network into which they load strictly and whose
logits on the given input equal the ones the C++ engine computed.
Usage: check_safetensors.py EXPORT_DIR CASE_JSON
CASE_JSON: {"shape": [N, ...], "input": [flat float32 values], "logits": [[...], ...]}
"""
import importlib.util
import json
import sys

import torch
from safetensors import safe_open
from safetensors.torch import load_file


def main():
    export_dir, case_path = sys.argv[1], sys.argv[2]
    tensors = load_file(f"{export_dir}/model.safetensors")
    state = torch.load(f"{export_dir}/model.pt")
    if sorted(tensors) != sorted(state):
        raise SystemExit(f"names differ: {sorted(tensors)} vs {sorted(state)}")
    for name, t in tensors.items():
        if t.dtype != state[name].dtype or not torch.equal(t, state[name]):
            raise SystemExit(f"tensor {name} differs between model.safetensors and model.pt")
    with safe_open(f"{export_dir}/model.safetensors", framework="pt") as f:
        metadata = f.metadata()
    if metadata.get("format") != "pt":
        raise SystemExit(f"metadata: {metadata}")

    spec = importlib.util.spec_from_file_location("model", f"{export_dir}/model.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = module.build()
    model.load_state_dict(tensors, strict=True)
    model.eval()
    case = json.load(open(case_path))
    x = torch.tensor(case["input"], dtype=torch.float32).reshape(case["shape"])
    with torch.no_grad():
        logits = model(x)
    want = torch.tensor(case["logits"], dtype=torch.float32)
    diff = (logits - want).abs().max().item()
    print(f"{metadata.get('model')}: {len(tensors)} tensors; max logit difference {diff:.3g}")
    if not torch.allclose(logits, want, rtol=1e-5, atol=1e-5):
        raise SystemExit(f"logits differ from the engine's by up to {diff}")
    print("safetensors ok")


if __name__ == "__main__":
    main()
