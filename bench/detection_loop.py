"""The Python side of bench/detection_bench.sh: torchvision's detector trained
as torchvision's references/detection/engine.py train_one_epoch trains it
(model(images, targets), the sum of the loss dict, zero_grad, backward,
step), on the same synthetic scenes, batch, optimizer, image size and CPU
threads as the studio's run; the images decoded once into memory, shuffled
each epoch. Prints the training images per second over every step (the
studio's samples/s is its training time's, evaluations left out).

Usage: detection_loop.py ANNOTATIONS KIND SIZE BATCH EPOCHS ROIS DEVICE (ROIS: Faster and Mask R-CNN's
only; SIZE: not SSDlite's, fixed at 320). Mask R-CNN (maskrcnn_resnet50_fpn_v2) trains on the
annotations' masks too, decoded into the targets once."""
import json
import os
import sys
import time

import numpy as np
import torch
import torchvision
from PIL import Image

annotations, kind, size, batch, epochs, rois, device = sys.argv[1:8]
size, batch, epochs, rois = int(size), int(batch), int(epochs), int(rois)
torch.manual_seed(1)
with open(annotations) as f:
    coco = json.load(f)
root = os.path.dirname(annotations)
labels = {c["id"]: k + 1 for k, c in enumerate(sorted(coco["categories"], key=lambda c: c["id"]))}
images, targets = [], []
for im in coco["images"]:
    x = np.array(Image.open(os.path.join(root, im["file_name"])).convert("RGB"))
    images.append(torch.from_numpy(x).permute(2, 0, 1).float().div(255).to(device))
    boxes = [a for a in coco["annotations"] if a["image_id"] == im["id"] and not a["iscrowd"]]
    b = torch.tensor([[a["bbox"][0], a["bbox"][1], a["bbox"][0] + a["bbox"][2], a["bbox"][1] + a["bbox"][3]]
                      for a in boxes], dtype=torch.float32).reshape(-1, 4)
    targets.append({"boxes": b.to(device), "labels": torch.tensor([labels[a["category_id"]] for a in boxes],
                                                                  dtype=torch.int64, device=device)})
    if kind.startswith("maskrcnn"):  # each box's mask, decoded once as references/detection's dataset does
        from pycocotools import mask as mask_utils
        m = [mask_utils.decode(dict(a["segmentation"], counts=a["segmentation"]["counts"].encode())) for a in boxes]
        targets[-1]["masks"] = torch.from_numpy(np.stack(m) if m else np.zeros((0, *x.shape[:2]), np.uint8)).to(device)
# RetinaNet has no proposals: ROIS is Faster R-CNN's box_batch_size_per_image only.
extra = {"box_batch_size_per_image": rois} if kind.startswith(("fasterrcnn", "maskrcnn")) else {}
# SSDlite resizes every image to its fixed 320 x 320: no min_size or max_size.
if not kind.startswith("ssdlite"):
    extra.update(min_size=size, max_size=size)
model = getattr(torchvision.models.detection, kind)(weights=None, weights_backbone=None, num_classes=len(labels) + 1,
                                                    **extra)
model.to(device).train()
params = [p for p in model.parameters() if p.requires_grad]
optimizer = torch.optim.SGD(params, lr=0.02, momentum=0.9, weight_decay=1e-4)
timed, seconds = 0, 0.0
for epoch in range(epochs):
    order = torch.randperm(len(images)).tolist()
    for start in range(0, len(order), batch):
        pick = order[start:start + batch]
        if device != "cpu":
            torch.cuda.synchronize()
        t = time.perf_counter()
        loss_dict = model([images[i] for i in pick], [targets[i] for i in pick])
        losses = sum(loss for loss in loss_dict.values())
        optimizer.zero_grad()
        losses.backward()
        optimizer.step()
        if device != "cpu":
            torch.cuda.synchronize()
        seconds += time.perf_counter() - t
        timed += len(pick)
print(f"{kind} in Python (torchvision's references loop): {timed / seconds:.2f} samples/s")
