#!/usr/bin/env python3
"""The hand-written PyTorch loop bench/finetune_bench.sh compares the studio
with: torchvision's resnet18 from the same state dict with a new 3-class
classifier, the training images decoded once and held in memory as the
studio holds them (RGB, resized to SIZE with antialiased bilinear
interpolation, ImageNet's mean and std), shuffled batches of 32 with a random
horizontal flip, AdamW (lr 3e-4, weight decay 0.01, fused on a GPU),
zero_grad(set_to_none=True), EPOCHS epochs (default 2); no evaluation. Prints the training
samples per second of the steps after the first (the studio's figure also
leaves out its set-up).
Usage: finetune_loop.py TRAIN_FOLDER WEIGHTS SIZE DEVICE [EPOCHS]"""
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
import torchvision
from PIL import Image

folder, weights, size, device = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
epochs = int(sys.argv[5]) if len(sys.argv) > 5 else 2
classes = sorted(os.listdir(folder))
xs, ys = [], []
for k, c in enumerate(classes):
    for name in sorted(os.listdir(os.path.join(folder, c))):
        img = np.array(Image.open(os.path.join(folder, c, name)).convert("RGB"))
        xs.append(torch.from_numpy(img).permute(2, 0, 1))
        ys.append(k)
x = torch.stack(xs).float().div(255)
x = F.interpolate(x, size=(size, size), mode="bilinear", align_corners=False, antialias=True)
mean = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
std = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)
x = ((x - mean) / std).to(device)
y = torch.tensor(ys).to(device)

model = torchvision.models.resnet18(weights=None)
state = torch.load(weights)
model.load_state_dict(state)
model.fc = torch.nn.Linear(512, len(classes))
model = model.to(device).train()
opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01, fused=device != "cpu")
n, batch = x.size(0), 32
steps, samples, start = 0, 0, None
for epoch in range(epochs):
    order = torch.randperm(n, device=device)
    for i in range(0, n, batch):
        idx = order[i:i + batch]
        xb, yb = x[idx], y[idx]
        flip = torch.rand(xb.size(0), device=device) < 0.5
        xb = torch.where(flip.view(-1, 1, 1, 1), xb.flip(3), xb)
        loss = F.cross_entropy(model(xb), yb)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        steps += 1
        if steps == 1:
            if device != "cpu":
                torch.cuda.synchronize()
            start = time.perf_counter()
        else:
            samples += xb.size(0)
if device != "cpu":
    torch.cuda.synchronize()
print(f"python resnet18 loop: {samples / (time.perf_counter() - start):.1f} samples/s")
