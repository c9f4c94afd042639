"""The Python side of bench/segmentation_infer_bench.sh: torchvision's
segmenter in evaluation mode, built and loaded by the export's own model.py
(the same weights as the studio's run), segmenting a folder of images as
the studio's predict does and as torchvision's references evaluate: each
image read with Pillow, its shorter side resized to base_size (antialiased),
normalised with preprocessing.json's mean and std, model(x)["out"] resized
back to the image's size (bilinear), the arg-max written as a palette PNG,
under torch.inference_mode on THREADS CPU threads. The model's build and
load are timed apart from the images. Prints both.

Usage: segmentation_infer.py EXPORT_DIR IMAGES_DIR OUT_DIR THREADS"""
import glob
import importlib.util
import json
import os
import sys
import time

import numpy as np
import torch
from PIL import Image
from torchvision.transforms.v2 import functional as F

export, folder, out, threads = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
torch.set_num_threads(threads)
os.makedirs(out, exist_ok=True)
t = time.perf_counter()
spec = importlib.util.spec_from_file_location("exported_model", os.path.join(export, "model.py"))
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
model = module.build().eval()  # load_state_dict(..., strict=True) inside
with open(os.path.join(export, "preprocessing.json")) as f:
    pre = json.load(f)
base, mean, std = pre["base_size"], pre["normalization"]["mean"], pre["normalization"]["std"]
load = time.perf_counter() - t
palette = [v for k in range(256) for v in ((k * 37) % 256, (k * 91) % 256, (k * 53) % 256)]
files = sorted(glob.glob(os.path.join(folder, "*.png")))
t = time.perf_counter()
with torch.inference_mode():
    for file in files:
        image = torch.from_numpy(np.asarray(Image.open(file).convert("RGB")).copy()).permute(2, 0, 1)
        x = F.normalize(F.to_dtype(F.resize(image, base, antialias=True), torch.float32, scale=True), mean, std)
        logits = torch.nn.functional.interpolate(model(x[None])["out"], size=image.shape[-2:], mode="bilinear",
                                                 align_corners=False)
        mask = Image.fromarray(logits.argmax(1)[0].to(torch.uint8).numpy(), "P")
        mask.putpalette(palette)
        mask.save(os.path.join(out, os.path.basename(file)))
seconds = time.perf_counter() - t
print(f"load {load:.3f} s; segmented {len(files)} images in {seconds:.3f} s "
      f"({len(files) / seconds:.2f} images per second)")
