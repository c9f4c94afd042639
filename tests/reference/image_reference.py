#!/usr/bin/env python3
"""Image fixtures and their reference decoding, with Pillow and the installed
torch, for the test that the studio decodes images as Python does.

Usage: image_reference.py DIR
  1. Writes, with Pillow, the kinds of files the studio's own writers do not
     make: RGBA and palette PNGs, a 16-bit gray PNG, an interlaced PNG, a
     progressive JPEG, gray and colour BMPs, a PGM and a PPM.
  2. Decodes every image file in DIR (those and the ones the C++ test wrote
     with libpng and TurboJPEG) as the studio does: Pillow's convert("L") or
     convert("RGB") (16-bit gray: Pillow's 16-bit values, high byte, since
     Pillow's own convert clips them to 255), then, for other sizes,
     torch.nn.functional.interpolate(mode="bilinear", antialias=True,
     align_corners=False), rounded. Each result goes to
     DIR/ref/<file>.<channels>.<height>x<width>.u8 (C x H x W bytes), for
     channels 1 and 3 at the file's own size and at 20x24.
  Prints one line per reference.
"""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image

SIZES = [None, (20, 24)]


def pattern(h, w, c, seed):
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:h, 0:w]
    base = (xx * 7 + yy * 13) % 256
    img = np.stack([(base + 60 * k + rng.integers(0, 30, (h, w))) % 256 for k in range(c)], axis=-1)
    return img.astype(np.uint8)


def write_fixtures(d):
    Image.fromarray(pattern(17, 23, 4, 1), "RGBA").save(os.path.join(d, "pil_rgba.png"))
    Image.fromarray(pattern(19, 21, 3, 2)).convert("P", palette=Image.ADAPTIVE, colors=40).save(
        os.path.join(d, "pil_palette.png"))
    g16 = (pattern(15, 18, 1, 3)[..., 0].astype(np.uint16) * 257 + 3)
    Image.fromarray(g16).save(os.path.join(d, "pil_gray16.png"))
    Image.fromarray(pattern(16, 16, 3, 4)).save(os.path.join(d, "pil_interlaced.png"), interlace=1)
    Image.fromarray(pattern(32, 40, 3, 5)).save(os.path.join(d, "pil_progressive.jpg"), quality=85, progressive=True)
    Image.fromarray(pattern(13, 11, 1, 6)[..., 0], "L").save(os.path.join(d, "pil_gray.bmp"))
    Image.fromarray(pattern(13, 11, 3, 7)).save(os.path.join(d, "pil_rgb.bmp"))
    Image.fromarray(pattern(12, 14, 1, 8)[..., 0], "L").save(os.path.join(d, "pil_gray.pgm"))
    Image.fromarray(pattern(10, 9, 3, 9)).save(os.path.join(d, "pil_rgb.ppm"))


def decode(path, channels):
    im = Image.open(path)
    if im.mode in ("I;16", "I;16B", "I;16L", "I"):
        gray = (np.array(im).astype(np.uint32) >> 8).astype(np.uint8)
        arr = gray[..., None] if channels == 1 else np.repeat(gray[..., None], 3, axis=-1)
    else:
        arr = np.array(im.convert("L" if channels == 1 else "RGB"))
        if arr.ndim == 2:
            arr = arr[..., None]
    return torch.from_numpy(arr.copy()).permute(2, 0, 1).contiguous()


def main():
    d = sys.argv[1]
    write_fixtures(d)
    os.makedirs(os.path.join(d, "ref"), exist_ok=True)
    for name in sorted(os.listdir(d)):
        path = os.path.join(d, name)
        if not os.path.isfile(path) or not name.lower().endswith((".png", ".jpg", ".jpeg", ".bmp", ".pgm", ".ppm")):
            continue
        for channels in (1, 3):
            chw = decode(path, channels)
            for size in SIZES:
                h, w = size or chw.shape[1:]
                out = chw
                if (h, w) != tuple(chw.shape[1:]):
                    f = F.interpolate(chw[None].float(), size=(h, w), mode="bilinear", antialias=True,
                                      align_corners=False)
                    out = f[0].round().clamp(0, 255).to(torch.uint8)
                ref = os.path.join(d, "ref", f"{name}.{channels}.{h}x{w}.u8")
                out.numpy().tofile(ref)
                print(f"{name} {channels} {h} {w}")


if __name__ == "__main__":
    main()
