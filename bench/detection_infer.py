"""The Python side of bench/detection_infer_bench.sh: torchvision's detector in
evaluation mode, built and loaded by the export's own model.py (the same
weights and options as the studio's run), finding the boxes of a folder of
images as the studio's predict does: each image read with Pillow and made a
float tensor, batches of BATCH images to model(list) under
torch.inference_mode, on THREADS CPU threads. The model's build and load are
timed apart from the images. Prints both.

Usage: detection_infer.py EXPORT_DIR IMAGES_DIR BATCH THREADS"""
import glob
import importlib.util
import os
import sys
import time

import numpy as np
import torch
from PIL import Image

export, folder, batch, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
torch.set_num_threads(threads)
t = time.perf_counter()
spec = importlib.util.spec_from_file_location("exported_model", os.path.join(export, "model.py"))
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
model = module.build().eval()  # load_state_dict(..., strict=True) inside
load = time.perf_counter() - t
files = sorted(glob.glob(os.path.join(folder, "*.png")))
t = time.perf_counter()
boxes = 0
with torch.inference_mode():
    for i in range(0, len(files), batch):
        xs = [torch.from_numpy(np.asarray(Image.open(f).convert("RGB")).copy()).permute(2, 0, 1).float().div(255)
              for f in files[i:i + batch]]
        boxes += sum(len(o["boxes"]) for o in model(xs))
seconds = time.perf_counter() - t
print(f"load {load:.3f} s; found {boxes} boxes in {len(files)} images in {seconds:.3f} s "
      f"({len(files) / seconds:.2f} images per second)")
