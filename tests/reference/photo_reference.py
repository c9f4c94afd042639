#!/usr/bin/env python3
"""Photo fixtures and their reference decoding, for the test that the studio
stores photos as the usual Python pipeline does (test_image_data).

Usage: photo_reference.py DIR
  1. Writes JPEGs with Pillow: colour and gray, landscape and portrait, large
     enough to decode at a reduced DCT scale (1/2, 1/4, 1/8) and small.
  2. For each, at stored sizes 64 and 37:
     - draft: Pillow's Image.draft(None, (w, h)) for the resized size, the
       reduced-scale decode the studio chooses alike; its size and pixels go
       to DIR/ref/<file>.<c>.<S>.draft.u8 (C x H x W bytes);
     - stored: that image through torchvision.transforms.v2.functional's
       resize(S, antialias) and center_crop(S): DIR/ref/<file>.<c>.<S>.stored.u8;
     - eval: resize(S) then center_crop(round(S * 7 / 8)), Resize(256) +
       CenterCrop(224) scaled: DIR/ref/<file>.<c>.<S>.eval.u8.
  Prints "<file> <channels> <S> <draft height> <draft width> <crop>" per case.
"""
import os
import sys

import numpy as np
import torch
from PIL import Image
from torchvision.transforms.v2 import functional as TF


def photo(h, w, seed):
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:h, 0:w]
    img = np.stack([(np.sin(xx / (9 + 4 * k)) * 90 + np.cos(yy / (13 + k)) * 60 + 128 + rng.integers(0, 20, (h, w)))
                    for k in range(3)], axis=-1)
    return img.clip(0, 255).astype(np.uint8)


def resized_size(h, w, s):
    """The covering size of a square s x s: the shorter side s, the longer floored."""
    return (s, int(s * w / h)) if w >= h else (int(s * h / w), s)


def main():
    d = sys.argv[1]
    os.makedirs(os.path.join(d, "ref"), exist_ok=True)
    Image.fromarray(photo(300, 452, 1)).save(os.path.join(d, "wide.jpg"), quality=90)
    Image.fromarray(photo(515, 290, 2)).save(os.path.join(d, "tall.jpg"), quality=85)
    Image.fromarray(photo(333, 333, 3)[..., 0], "L").save(os.path.join(d, "gray.jpg"), quality=90)
    Image.fromarray(photo(70, 90, 4)).save(os.path.join(d, "small.jpg"), quality=90)
    for name in ("wide.jpg", "tall.jpg", "gray.jpg", "small.jpg"):
        for channels in (1, 3):
            for s in (64, 37):
                im = Image.open(os.path.join(d, name))
                rh, rw = resized_size(im.height, im.width, s)
                im.draft(None, (rw, rh))
                arr = np.array(im.convert("L" if channels == 1 else "RGB"))
                chw = torch.from_numpy(arr.reshape(arr.shape[0], arr.shape[1], -1).copy()).permute(2, 0, 1)
                resized = TF.resize(chw, [s], antialias=True)
                crop = round(s * 7 / 8)
                stem = os.path.join(d, "ref", f"{name}.{channels}.{s}")
                chw.contiguous().numpy().tofile(stem + ".draft.u8")
                TF.center_crop(resized, [s, s]).contiguous().numpy().tofile(stem + ".stored.u8")
                TF.center_crop(resized, [crop, crop]).contiguous().numpy().tofile(stem + ".eval.u8")
                print(name, channels, s, chw.shape[1], chw.shape[2], crop)


if __name__ == "__main__":
    main()
