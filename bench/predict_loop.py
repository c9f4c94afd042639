#!/usr/bin/env python3
"""The Python side of bench/predict_bench.sh: an export's model (model.py's
build() with model.pt, as the export's README says) predicting a folder of
images the way a person writes it: a torch DataLoader with WORKERS worker
processes decoding with Pillow (the same preprocessing as the studio's:
preprocessing.json's size, channels and normalisation), batches of BATCH,
softmax and the top 5 under torch.inference_mode, on DEVICE (default cpu;
on cuda the batches come pinned and are copied without blocking). Prints
images per second.
Usage: predict_loop.py EXPORT_DIR FOLDER WORKERS BATCH [DEVICE]
"""
import importlib.util
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image


def build(export_dir):
    spec = importlib.util.spec_from_file_location("model", os.path.join(export_dir, "model.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build()


class Files(torch.utils.data.Dataset):
    def __init__(self, files, pre):
        self.files = files
        shape = pre["input_shape"]
        self.c, self.h, self.w = shape["channels"], shape["height"], shape["width"]
        self.mean = torch.tensor(pre["normalization"]["mean"]).view(-1, 1, 1)
        self.std = torch.tensor(pre["normalization"]["std"]).view(-1, 1, 1)

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        arr = np.asarray(Image.open(self.files[i]).convert("L" if self.c == 1 else "RGB"))
        t = torch.from_numpy(arr.reshape(arr.shape[0], arr.shape[1], self.c).copy()).permute(2, 0, 1).float()
        if t.shape[1:] != (self.h, self.w):
            t = F.interpolate(t[None], size=(self.h, self.w), mode="bilinear", antialias=True)[0].round()
        return (t / 255.0 - self.mean) / self.std


def main():
    export_dir, folder, workers, batch = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    device = torch.device(sys.argv[5] if len(sys.argv) > 5 else "cpu")
    torch.set_num_threads(os.cpu_count())
    pre = json.load(open(os.path.join(export_dir, "preprocessing.json")))
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(folder) for f in fs)
    model = build(export_dir)
    model.load_state_dict(torch.load(os.path.join(export_dir, "model.pt")))
    model.to(device).eval()
    start = time.perf_counter()
    loader = torch.utils.data.DataLoader(Files(files, pre), batch_size=batch, num_workers=workers,
                                         pin_memory=device.type == "cuda")
    top = []
    with torch.inference_mode():
        for x in loader:
            p = torch.softmax(model(x.to(device, non_blocking=True)), 1)
            top.append(p.topk(5, 1))
        if device.type == "cuda":
            torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    print(f"python: {len(files)} images in {seconds:.2f} s: {len(files) / seconds:.0f} images/s")


if __name__ == "__main__":
    main()
