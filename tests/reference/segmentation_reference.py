#!/usr/bin/env python3
"""Segmentation masks and figures for test_segmentation_figures.

write_segmentation(out) (make_references.py calls it) writes out/segmentation/:
- masks/: PNG masks as people and tools save them, written by Pillow (palette
  with VOC's colours and its 255 border, 8-bit gray, 1-bit, 16-bit gray) and
  by hand where Pillow does not write the kind (2- and 4-bit gray, a 4-bit
  palette, a palette of 21 colours), each beside name.values: what
  np.array(Image.open(name)) gives, as bytes (what torchvision's
  references/segmentation train on); and masks to refuse (RGB, gray with
  alpha, a 16-bit value past 255, truncated).
- figures.json: cases of (truth, prediction) masks, each pair's bytes in
  case.truth and case.predicted, with torchvision's references/segmentation
  ConfusionMatrix (utils.py, copied below) on them: the matrix, and the
  global accuracy, class accuracies and IoUs from its compute(), in float64
  (theirs casts the matrix to float32, whose rounding alone is 1e-7) and in
  float32 as theirs; and scikit-learn's confusion_matrix, jaccard_score and
  f1_score (Dice) per class on the same pixels (0 for a class in neither the
  truth nor the predictions, where the studio's is undefined).

`segmentation_reference.py read PNG` prints what Pillow opens from a PNG the
studio wrote: its mode, size, palette and np.array's values, as JSON.
"""
import json
import os
import struct
import sys
import zlib

import numpy as np
from PIL import Image


class ConfusionMatrix:
    """torchvision/references/segmentation/utils.py (v0.26), with compute() in float64 beside float32."""

    def __init__(self, num_classes):
        self.num_classes = num_classes
        self.mat = None

    def update(self, a, b):
        import torch
        n = self.num_classes
        if self.mat is None:
            self.mat = torch.zeros((n, n), dtype=torch.int64, device=a.device)
        with torch.inference_mode():
            k = (a >= 0) & (a < n)
            inds = n * a[k].to(torch.int64) + b[k]
            self.mat += torch.bincount(inds, minlength=n**2).reshape(n, n)

    def compute(self, dtype):
        import torch
        h = self.mat.to(dtype)
        acc_global = torch.diag(h).sum() / h.sum()
        acc = torch.diag(h) / h.sum(1)
        iu = torch.diag(h) / (h.sum(1) + h.sum(0) - torch.diag(h))
        return acc_global, acc, iu


def raw_png(path, width, height, depth, color_type, rows, palette=None):
    """A PNG written chunk by chunk (for the kinds Pillow does not write)."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, depth, color_type, 0, 0, 0))
    if palette is not None:
        png += chunk(b"PLTE", bytes(palette))
    png += chunk(b"IDAT", zlib.compress(b"".join(b"\0" + r for r in rows))) + chunk(b"IEND", b"")
    with open(path, "wb") as f:
        f.write(png)


def pack(values, depth):
    """A row of values of `depth` bits, packed as PNG packs them (high bits first)."""
    per = 8 // depth
    out = bytearray()
    for i in range(0, len(values), per):
        byte = 0
        for k in range(per):
            v = values[i + k] if i + k < len(values) else 0
            byte |= v << (8 - depth * (k + 1))
        out.append(byte)
    return bytes(out)


def voc_palette():
    """VOC devkit's labelcolormap."""
    p = []
    for i in range(256):
        r = g = b = 0
        c = i
        for j in range(8):
            r |= ((c >> 0) & 1) << (7 - j)
            g |= ((c >> 1) & 1) << (7 - j)
            b |= ((c >> 2) & 1) << (7 - j)
            c >>= 3
        p += [r, g, b]
    return p


def write_masks(folder, rng):
    os.makedirs(folder, exist_ok=True)
    h, w = 19, 27
    classes = rng.integers(0, 21, (h, w)).astype(np.uint8)
    classes[0, :] = 255  # VOC's border
    classes[:, 3] = 255
    p = Image.fromarray(classes, mode="P")
    p.putpalette(voc_palette())
    p.save(os.path.join(folder, "voc_palette.png"))
    Image.fromarray(rng.integers(0, 256, (h, w)).astype(np.uint8), mode="L").save(os.path.join(folder, "gray8.png"))
    Image.fromarray(rng.integers(0, 2, (h, w)).astype(bool)).save(os.path.join(folder, "gray1.png"))
    Image.fromarray(rng.integers(0, 256, (h, w)).astype(np.uint16)).save(os.path.join(folder, "gray16.png"))
    for depth in (2, 4):
        v = rng.integers(0, 2**depth, (h, w))
        raw_png(os.path.join(folder, f"gray{depth}.png"), w, h, depth, 0, [pack(list(r), depth) for r in v])
    v = rng.integers(0, 16, (h, w))
    raw_png(os.path.join(folder, "palette4.png"), w, h, 4, 3, [pack(list(r), 4) for r in v], palette=voc_palette()[:48])
    v = rng.integers(0, 21, (h, w))
    raw_png(os.path.join(folder, "palette8_short.png"), w, h, 8, 3, [bytes(list(r)) for r in v],
            palette=voc_palette()[:63])  # a palette of 21 colours only
    readable = {}
    for name in ("voc_palette.png", "gray8.png", "gray1.png", "gray16.png", "gray2.png", "gray4.png", "palette4.png",
                 "palette8_short.png"):
        a = np.array(Image.open(os.path.join(folder, name)))
        readable[name] = {"height": a.shape[0], "width": a.shape[1], "mode": Image.open(os.path.join(folder, name)).mode}
        with open(os.path.join(folder, name[:-4] + ".values"), "wb") as f:
            f.write(a.astype(np.uint8).tobytes())
    # To refuse: colour, gray with alpha, a 16-bit value past 255, a truncated file.
    Image.fromarray(rng.integers(0, 256, (h, w, 3)).astype(np.uint8)).save(os.path.join(folder, "rgb.png"))
    Image.fromarray(rng.integers(0, 256, (h, w, 2)).astype(np.uint8), mode="LA").save(os.path.join(folder, "la.png"))
    big = np.zeros((h, w), np.uint16)
    big[5, 7] = 300
    Image.fromarray(big).save(os.path.join(folder, "gray16_300.png"))
    with open(os.path.join(folder, "voc_palette.png"), "rb") as f:
        whole = f.read()
    with open(os.path.join(folder, "truncated.png"), "wb") as f:
        f.write(whole[: len(whole) // 2])
    return readable


def figures_case(folder, name, truth, predicted, classes):
    import torch
    from sklearn.metrics import confusion_matrix, f1_score, jaccard_score
    with open(os.path.join(folder, name + ".truth"), "wb") as f:
        f.write(truth.astype(np.uint8).tobytes())
    with open(os.path.join(folder, name + ".predicted"), "wb") as f:
        f.write(predicted.astype(np.uint8).tobytes())
    cm = ConfusionMatrix(classes)
    for t, p in zip(torch.from_numpy(truth.astype(np.int64)), torch.from_numpy(predicted.astype(np.int64))):
        cm.update(t.flatten(), p.flatten())  # one mask at a time, as the references' evaluate()
    g64, acc64, iu64 = cm.compute(torch.float64)
    g32, acc32, iu32 = cm.compute(torch.float32)
    keep = truth.flatten() < classes
    t, p = truth.flatten()[keep], predicted.flatten()[keep]
    labels = list(range(classes))
    return {"classes": classes, "masks": truth.shape[0], "height": truth.shape[1], "width": truth.shape[2],
            "matrix": cm.mat.tolist(), "acc_global": g64.item(), "acc": acc64.tolist(), "iu": iu64.tolist(),
            "acc_global_float32": g32.item(), "acc_float32": acc32.tolist(), "iu_float32": iu32.tolist(),
            "sklearn_matrix": confusion_matrix(t, p, labels=labels).tolist(),
            "sklearn_jaccard": jaccard_score(t, p, labels=labels, average=None, zero_division=0).tolist(),
            "sklearn_f1": f1_score(t, p, labels=labels, average=None, zero_division=0).tolist()}


def write_segmentation(out):
    folder = os.path.join(out, "segmentation")
    rng = np.random.default_rng(61)
    masks = write_masks(os.path.join(folder, "masks"), rng)
    cases = {}
    # Every class in the truth and the predictions; ignored pixels (255) among them.
    truth = rng.integers(0, 5, (3, 23, 37))
    truth[:, ::7, :] = 255
    predicted = np.where(rng.random(truth.shape) < 0.7, np.minimum(truth, 4), rng.integers(0, 5, truth.shape))
    cases["every_class"] = figures_case(folder, "every_class", truth, predicted, 5)
    # Class 5 nowhere (its IoU undefined: NaN, the references' mean NaN too) and class 4
    # predicted but never true (IoU 0, its accuracy undefined).
    truth = rng.integers(0, 4, (2, 16, 16))
    truth[0, 0, :5] = 255
    predicted = np.where(rng.random(truth.shape) < 0.6, np.minimum(truth, 3), rng.integers(0, 5, truth.shape))
    cases["absent_classes"] = figures_case(folder, "absent_classes", truth, predicted, 6)
    def finite(v):  # JSON has no NaN: null
        if isinstance(v, float) and v != v:
            return None
        if isinstance(v, dict):
            return {k: finite(x) for k, x in v.items()}
        if isinstance(v, list):
            return [finite(x) for x in v]
        return v
    with open(os.path.join(folder, "figures.json"), "w") as f:
        json.dump(finite({"masks": masks, "cases": cases}), f, allow_nan=False)
    return folder


def read(path):
    im = Image.open(path)
    a = np.array(im)
    print(json.dumps({"mode": im.mode, "height": a.shape[0], "width": a.shape[1], "values": a.flatten().tolist(),
                      "palette": im.getpalette()[:3 * 256] if im.mode == "P" else None}))


if __name__ == "__main__":
    if sys.argv[1] == "read":
        read(sys.argv[2])
    else:
        print(write_segmentation(sys.argv[1]))
