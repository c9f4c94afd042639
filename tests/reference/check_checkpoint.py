#!/usr/bin/env python3
"""Reads a Training Studio checkpoint with the installed PyTorch's
torch.load and its default weights_only=True (which refuses anything but
tensors and plain values), and checks what it holds.
Usage: check_checkpoint.py CHECKPOINT STEP
"""
import sys

import torch


def main():
    path, step = sys.argv[1], int(sys.argv[2])
    ckpt = torch.load(path)  # weights_only=True is the default
    assert ckpt["format"] == "training-studio-checkpoint", ckpt.get("format")
    assert ckpt["version"] == 2, ckpt["version"]
    assert ckpt["counters"]["step"] == step, (ckpt["counters"]["step"], step)
    model = ckpt["model"]
    assert all(isinstance(t, torch.Tensor) for t in model.values())
    assert all(torch.isfinite(t.float()).all() for t in model.values())
    print(f"checkpoint ok: {len(model)} model tensors, step {step}")


if __name__ == "__main__":
    main()
