#!/usr/bin/env python3
"""PyTorch's input pipeline for the photo benchmark (bench/photo_pipeline_bench.sh):
torchvision.datasets.ImageFolder with transforms.v2 (RandomResizedCrop(224),
RandomHorizontalFlip, ColorJitter(0.4, 0.4, 0.4), ToImage, ToDtype float32,
Normalize with ImageNet's statistics) through a DataLoader with 2 workers,
batch 64, shuffled; the images per second after the first batch of each
epoch, as the studio's bench counts them.
Usage: photo_loader.py FOLDER [EPOCHS]
"""
import sys
import time

import torch
import torchvision
from torchvision.transforms import v2

folder = sys.argv[1]
epochs = int(sys.argv[2]) if len(sys.argv) > 2 else 2
transform = v2.Compose([
    v2.RandomResizedCrop(224, antialias=True),
    v2.RandomHorizontalFlip(),
    v2.ColorJitter(0.4, 0.4, 0.4),
    v2.ToImage(),
    v2.ToDtype(torch.float32, scale=True),
    v2.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
])
data = torchvision.datasets.ImageFolder(folder, transform=transform)
loader = torch.utils.data.DataLoader(data, batch_size=64, shuffle=True, num_workers=2, pin_memory=torch.cuda.is_available())
for epoch in range(epochs):
    images, start = 0, None
    for x, y in loader:
        if start is None:
            start = time.perf_counter()
            continue
        images += x.shape[0]
    seconds = time.perf_counter() - start
    print(f"epoch {epoch + 1}: {images} images after the first batch in {seconds:.2f} s: "
          f"{images / seconds:.0f} images/s (batch {tuple(x.shape)})")
