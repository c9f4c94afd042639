#!/usr/bin/env python3
"""Synthetic scenes to segment (test_segmentation_train): noisy RGB canvases
of 48 to 80 px a side, each with a red square (class 1) and a blue disc
(class 2) on a dark background (class 0), written by Pillow as PNG images
and, beside them, PNG masks of the class per pixel with VOC's 255 on the
square's top edge (the ignored border). make_scenes(images, masks, n, seed)
writes n of each, the masks as gray (even seeds) or VOC palette PNGs, and
returns the images' paths.
"""
import os

import numpy as np
from PIL import Image

from segmentation_reference import voc_palette


def scene(rng):
    h, w = (int(v) for v in rng.integers(48, 81, 2))
    image = rng.integers(0, 70, (h, w, 3), dtype=np.uint8)
    mask = np.zeros((h, w), np.uint8)
    side = int(rng.integers(14, 24))
    y, x = int(rng.integers(0, h - side)), int(rng.integers(0, w - side))
    image[y:y + side, x:x + side] = (210, 50, 40)
    mask[y:y + side, x:x + side] = 1
    mask[y, x:x + side] = 255
    r = int(rng.integers(7, 12))
    cy, cx = int(rng.integers(r, h - r)), int(rng.integers(r, w - r))
    yy, xx = np.ogrid[:h, :w]
    disc = (yy - cy) ** 2 + (xx - cx) ** 2 <= r * r
    image[disc] = (40, 60, 220)
    mask[disc] = 2
    return image, mask


def make_scenes(images, masks, n, seed, palette=None, image_ext=".png"):
    rng = np.random.default_rng(seed)
    os.makedirs(images, exist_ok=True)
    os.makedirs(masks, exist_ok=True)
    paths = []
    for i in range(n):
        image, mask = scene(rng)
        path = os.path.join(images, f"{i:03d}{image_ext}")
        Image.fromarray(image).save(path, quality=95) if image_ext == ".jpg" else Image.fromarray(image).save(path)
        m = Image.fromarray(mask)
        if palette if palette is not None else seed % 2 == 1:
            m = m.convert("P")
            m.putpalette(voc_palette())
        m.save(os.path.join(masks, f"{i:03d}.png"))
        paths.append(path)
    return paths
