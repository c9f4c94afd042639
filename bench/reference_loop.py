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
    ap.add_argument("--mode", default="eager", choices=["eager", "graph"],
                    help="graph: the whole step (forward, backward, fused SGD with a tensor learning rate) "
                         "captured once in a CUDA graph and replayed, as torch.cuda.graphs documents")
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
    graph = a.mode == "graph" and dev.type == "cuda"
    total = a.steps + 20
    if graph:
        # A tensor learning rate that the schedule fills before each replay;
        # the momentum stays 0.9 (the fused kernel takes it as a number, so
        # OneCycle's momentum cycling cannot be captured here).
        lr_t = torch.tensor(0.1, device=dev)
        opt = torch.optim.SGD(model.parameters(), lr=lr_t, momentum=0.9, nesterov=True, weight_decay=5e-4,
                              fused=True)
        probe = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
        plan = torch.optim.lr_scheduler.OneCycleLR(probe, max_lr=0.1, total_steps=total, pct_start=0.25,
                                                   cycle_momentum=False)
        lrs = []
        for _ in range(total):
            lrs.append(probe.param_groups[0]["lr"])
            probe.step()
            plan.step()
    else:
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=5e-4,
                              fused=True)
        sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=total, pct_start=0.25)
    loss_fn = nn.CrossEntropyLoss()
    perm = torch.randperm(60000, device=dev)
    losses = []

    def batch(i):
        idx = perm[(i * a.batch) % (60000 - a.batch):][: a.batch]
        return (x_all[idx].float().div_(255) - mean) / std, y_all[idx]

    def eager_step(i):
        x, y = batch(i)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        if not graph:
            sched.step()
        opt.zero_grad(set_to_none=True)
        return loss.detach()

    if graph:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for i in range(3):
                lr_t.fill_(lrs[i])
                losses.append(eager_step(i))
        torch.cuda.current_stream().wait_stream(side)
        static_x, static_y = batch(3)
        g = torch.cuda.CUDAGraph()
        opt.zero_grad(set_to_none=True)
        with torch.cuda.graph(g):
            static_loss = loss_fn(model(static_x), static_y)
            static_loss.backward()
            opt.step()

    def step(i):
        if not graph:
            losses.append(eager_step(i))
            return
        x, y = batch(i)
        static_x.copy_(x)
        static_y.copy_(y)
        lr_t.fill_(lrs[i])
        g.replay()
        losses.append(static_loss.detach().clone())

    for i in range(3 if graph else 0, 20):  # warm-up (cuDNN benchmark, allocator)
        step(i)
    if dev.type == "cuda":
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    for i in range(20, 20 + a.steps):
        step(i)
    final = torch.stack(losses[-10:]).mean().item()  # the one sync
    seconds = time.perf_counter() - t0
    print(json.dumps({"samples_per_second": a.steps * a.batch / seconds, "seconds": seconds, "steps": a.steps,
                      "final_loss": final, "threads": torch.get_num_threads(), "torch": torch.__version__}))


if __name__ == "__main__":
    main()
