#!/usr/bin/env python3
"""The hand-written PyTorch loop the engine is measured against: the same
model, data, optimizer and schedule as a preset, written the way a
practitioner who knows the tricks would (data resident on the device, fused
optimizer, zero_grad(set_to_none=True), no per-step .item()). Prints one JSON
line with samples/s.

--model cnn: the preset fashion-mnist-cnn (convolution stages, fused SGD with
  Nesterov, OneCycleLR).
--model mlp: the preset fashion-mnist-mlp (two hidden layers with dropout,
  fused AdamW, linear warm-up then cosine).
--mode eager: the plain loop; compile: the model through
  torch.compile(mode="reduce-overhead") (its compilation falls in the 20
  warm-up steps); graph (CUDA only): the whole step captured in one CUDA graph.
Usage: reference_loop.py --steps N --batch B --threads T --device cpu|cuda
       [--model cnn|mlp] [--width W] [--depth D] [--mode eager|compile|graph]
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
    ap.add_argument("--model", default="cnn", choices=["cnn", "mlp"])
    ap.add_argument("--width", type=int, default=0, help="default: the preset's (cnn 32, mlp 256)")
    ap.add_argument("--depth", type=int, default=2)
    ap.add_argument("--root", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--pool-first", action="store_true",
                    help="cnn: each stage max-pools before its ReLU, as the studio's CNN does (the same results, "
                         "a quarter of the ReLU's work); default: the usual conv-BN-ReLU-pool order")
    ap.add_argument("--mode", default="eager", choices=["eager", "compile", "graph"],
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
    mlp = a.model == "mlp"
    width = a.width or (256 if mlp else 32)
    layers, c, h = [], 1, 28
    if mlp:  # as the studio builds fashion-mnist-mlp (model.py in an exported run)
        layers, n = [nn.Flatten()], 784
        for _ in range(a.depth):
            layers += [nn.Linear(n, width), nn.ReLU(), nn.Dropout(0.1)]
            n = width
        model = nn.Sequential(*layers, nn.Linear(n, 10)).to(dev)
    else:
        for i in range(a.depth):
            out = width << i
            act = [nn.MaxPool2d(2), nn.ReLU()] if a.pool_first else [nn.ReLU(), nn.MaxPool2d(2)]
            layers += [nn.Conv2d(c, out, 3, padding=1, bias=False), nn.BatchNorm2d(out)] + act
            c, h = out, h // 2
        model = nn.Sequential(*layers, nn.Flatten(), nn.Linear(c * h * h, 10)).to(dev)
    if a.mode == "graph" and dev.type != "cuda":
        raise SystemExit("--mode graph needs --device cuda")
    graph = a.mode == "graph"
    forward = torch.compile(model, mode="reduce-overhead") if a.mode == "compile" else model
    total = a.steps + 20
    # The preset's optimizer and schedule. In graph mode the learning rate is a
    # device tensor that is filled before each replay from the same schedule
    # run on a probe; the momentum stays fixed (the fused SGD kernel takes it
    # as a number, so OneCycle's momentum cycling cannot be captured here).
    def make_opt(params, lr):
        if mlp:
            return torch.optim.AdamW(params, lr=lr, weight_decay=0.01, fused=True, capturable=graph)
        return torch.optim.SGD(params, lr=lr, momentum=0.9, nesterov=True, weight_decay=5e-4, fused=True)

    def make_sched(o, cycle_momentum=True):
        if mlp:
            warm = torch.optim.lr_scheduler.LinearLR(o, start_factor=0.1, end_factor=1.0, total_iters=100)
            cos = torch.optim.lr_scheduler.CosineAnnealingLR(o, T_max=max(total - 100, 1))
            return torch.optim.lr_scheduler.SequentialLR(o, [warm, cos], milestones=[100])
        return torch.optim.lr_scheduler.OneCycleLR(o, max_lr=0.1, total_steps=total, pct_start=0.25,
                                                   cycle_momentum=cycle_momentum)

    base_lr = 1e-3 if mlp else 0.1
    if graph:
        lr_t = torch.tensor(base_lr, device=dev)
        opt = make_opt(model.parameters(), lr_t)
        probe = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=base_lr)
        plan = make_sched(probe, cycle_momentum=False)
        lrs = []
        for _ in range(total):
            lrs.append(probe.param_groups[0]["lr"])
            probe.step()
            plan.step()
    else:
        opt = make_opt(model.parameters(), base_lr)
        sched = make_sched(opt)
    loss_fn = nn.CrossEntropyLoss()
    perm = torch.randperm(60000, device=dev)
    losses = []

    def batch(i):
        idx = perm[(i * a.batch) % (60000 - a.batch):][: a.batch]
        return (x_all[idx].float().div_(255) - mean) / std, y_all[idx]

    def eager_step(i):
        x, y = batch(i)
        loss = loss_fn(forward(x), y)
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

    for i in range(3 if graph else 0, 20):  # warm-up (cuDNN benchmark, allocator, compilation)
        step(i)
    if dev.type == "cuda":
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    for i in range(20, 20 + a.steps):
        step(i)
    final = torch.stack(losses[-10:]).mean().item()  # the one sync
    seconds = time.perf_counter() - t0
    print(json.dumps({"samples_per_second": a.steps * a.batch / seconds, "seconds": seconds, "steps": a.steps,
                      "final_loss": final, "model": a.model, "width": width, "mode": a.mode, "pool_first": a.pool_first, "threads": torch.get_num_threads(), "torch": torch.__version__}))


if __name__ == "__main__":
    main()
