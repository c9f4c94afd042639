#!/usr/bin/env python3
"""The model's input from image files, as Training Studio made it.

This file ships in an export of a model that takes images, beside
preprocessing.json, which it follows. It gives the studio's own input
tensors (to within 1e-6), including two steps that "how" in
preprocessing.json names but a reader may not reproduce by hand:

- A JPEG at least twice the size it is resized to is decoded at a reduced
  DCT scale (1/2, 1/4 or 1/8), as Pillow's Image.draft picks it, not at full
  size and then shrunk.
- A resized image is rounded back to 8-bit pixels before it is normalised:
  the studio stores its images as bytes.

Following "how" without these differs by up to about 0.01 on JPEGs and
5e-3 on upscaled PNGs.

In Python:

    from preprocess import preprocess
    x = preprocess(["photo.jpg", "scan.png"])  # float32 [N, C, H, W]
    logits = model(x)

From a shell (prints each file's shape and range, or saves the batch):

    python3 preprocess.py photo.jpg scan.png --out x.pt

Needs Pillow, NumPy and PyTorch.
"""
import argparse
import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))


def facts(folder=HERE):
    """preprocessing.json of the export in folder."""
    with open(os.path.join(folder, "preprocessing.json")) as f:
        pre = json.load(f)
    if pre.get("input") != "image":
        raise ValueError(f"{folder}/preprocessing.json is not of a model that takes images")
    return pre


def resized_size(h, w, fit_h, fit_w, cover):
    """The size an h x w image is resized to: fit_h x fit_w, or, to cover
    it, the binding side fitted and the other scaled and floored."""
    if not cover:
        return fit_h, fit_w
    if h * fit_w >= w * fit_h:
        return max(fit_h, fit_w * h // w), fit_w
    return fit_h, max(fit_w, fit_h * w // h)


def centre_crop(x, h, w):
    """torchvision's CenterCrop of a [C, H, W] tensor (half offsets rounded to even)."""
    top, left = round((x.shape[1] - h) / 2), round((x.shape[2] - w) / 2)
    return x[:, top:top + h, left:left + w]


def pixels(path, pre):
    """One image as the studio stores it: uint8 [C, H, W] of the input's size."""
    shape = pre["input_shape"]
    c, h, w = shape["channels"], shape["height"], shape["width"]
    # With "resize": its shorter side to resize, the centre cut square, then
    # the input's centre; without: stretched to the input's size.
    fit = (pre["resize"], pre["resize"], True) if "resize" in pre else (h, w, False)
    with Image.open(path) as im:
        if im.format == "JPEG":
            rh, rw = resized_size(im.height, im.width, *fit)
            im.draft(None, (rw, rh))  # the reduced DCT scale, as the studio decodes
        arr = np.asarray(im.convert("L" if c == 1 else "RGB"))
    x = torch.from_numpy(arr.reshape(arr.shape[0], arr.shape[1], -1).copy()).permute(2, 0, 1)
    rh, rw = resized_size(x.shape[1], x.shape[2], *fit)
    if (rh, rw) != tuple(x.shape[1:]):
        # Antialiased bilinear in float32, rounded back to bytes.
        x = F.interpolate(x[None].float(), size=(rh, rw), mode="bilinear", antialias=True, align_corners=False)[0]
        x = x.round().clamp(0, 255).to(torch.uint8)
    return centre_crop(centre_crop(x, fit[0], fit[1]), h, w)


def preprocess(paths, folder=HERE):
    """The model's input for image files: float32 [N, C, H, W]."""
    pre = facts(folder)
    n = pre["normalization"]
    mean = torch.tensor(n["mean"], dtype=torch.float32).view(-1, 1, 1)
    std = torch.tensor(n["std"], dtype=torch.float32).view(-1, 1, 1)
    return torch.stack([(pixels(p, pre).float() / 255.0 - mean) / std for p in paths])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("images", nargs="+")
    ap.add_argument("--out", help="save the batch here: .pt (torch.save) or .npy")
    ap.add_argument("--export", default=HERE, help="the export folder (default: this file's)")
    a = ap.parse_args()
    x = preprocess(a.images, a.export)
    if a.out and a.out.endswith(".npy"):
        np.save(a.out, x.numpy())
    elif a.out:
        torch.save(x, a.out)
    else:
        for path, one in zip(a.images, x):
            print(f"{path}: {list(one.shape)}, from {one.min().item():.4f} to {one.max().item():.4f}")


if __name__ == "__main__":
    sys.exit(main())
