#!/usr/bin/env python3
"""The hand-written PyTorch loop the engine is measured against: the same
model, data, optimizer and schedule as a preset, written the way a
practitioner who knows the tricks would (data resident on the device, fused
SGD, OneCycleLR, zero_grad(set_to_none=True), channels-last/AMP when asked,
no per-step .item()). Prints one JSON line with samples/s.
Usage: reference_loop.py --steps N --batch B --threads T --device cpu|cuda [--width W] [--depth D]
"""
import argparse
import gzip
import json
import time

import numpy as np
import torch
from torch import nn


def load_images(path, n):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    return torch.from_numpy(np.frombuffer(raw, dtype=np.uint8, offset=16)[: n * 784].copy()).view(n, 1, 28, 28)


def load_labels(path, n):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    return torch.from_numpy(np.frombuffer(raw, dtype=np.uint8, offset=8)[:n].copy()).long()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--width", type=int, default=32)
    ap.add_argument("--depth", type=int, default=2)
    ap.add_argument("--root", default="/usr/share/datasets/fashion-mnist")
    a = ap.parse_args()
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    dev = torch.device(a.device)
    x_all = load_images(f"{a.root}/train-images-idx3-ubyte.gz", 60000).to(dev)
    y_all = load_labels(f"{a.root}/train-labels-idx1-ubyte.gz", 60000).to(dev)
    mean, std = 0.2860, 0.3530
    layers, c, h = [], 1, 28
    for i in range(a.depth):
        out = a.width << i
        layers += [nn.Conv2d(c, out, 3, padding=1, bias=False), nn.BatchNorm2d(out), nn.ReLU(), nn.MaxPool2d(2)]
        c, h = out, h // 2
    model = nn.Sequential(*layers, nn.Flatten(), nn.Linear(c * h * h, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=5e-4, fused=True)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=a.steps + 20, pct_start=0.25)
    loss_fn = nn.CrossEntropyLoss()
    perm = torch.randperm(60000, device=dev)
    losses = []

    def step(i):
        idx = perm[(i * a.batch) % (60000 - a.batch):][: a.batch]
        x = (x_all[idx].float().div_(255) - mean) / std
        loss = loss_fn(model(x), y_all[idx])
        loss.backward()
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        losses.append(loss.detach())

    for i in range(20):  # warm-up (cuDNN benchmark, allocator)
        step(i)
    if dev.type == "cuda":
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    for i in range(a.steps):
        step(i)
    final = torch.stack(losses[-10:]).mean().item()  # the one sync
    seconds = time.perf_counter() - t0
    print(json.dumps({"samples_per_second": a.steps * a.batch / seconds, "seconds": seconds, "steps": a.steps,
                      "final_loss": final, "threads": torch.get_num_threads(), "torch": torch.__version__}))


if __name__ == "__main__":
    main()
