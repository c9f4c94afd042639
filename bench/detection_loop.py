"""The Python side of bench/detection_bench.sh: torchvision's detector trained
as torchvision's references/detection/engine.py train_one_epoch trains it
(model(images, targets), the sum of the loss dict, zero_grad, backward,
step), on the same synthetic scenes, batch, optimizer, image size and CPU
threads as the studio's run; the images decoded once into memory, shuffled
each epoch. Prints the training images per second over every step (the
studio's samples/s is its training time's, evaluations left out).

Usage: detection_loop.py ANNOTATIONS KIND SIZE BATCH EPOCHS ROIS DEVICE [profile] (ROIS: Faster and
Mask R-CNN's only; SIZE: not SSDlite's, fixed at 320). Mask R-CNN (maskrcnn_resnet50_fpn_v2) trains on
the annotations' masks too, decoded into the targets once.

With "profile" last, the loop then runs four more steps under PyTorch's profiler and prints where a
step's time goes: the convolutions' own time (forward and backward), every operator's, and the most
another loop could gain over this one: with the same operators as fast (the step over the
operators' time: the interpreter's share), and with the same convolutions and nothing else (the step
over the convolutions' time)."""
import json
import os
import sys
import time

import numpy as np
import torch
import torchvision
from PIL import Image

annotations, kind, size, batch, epochs, rois, device = sys.argv[1:8]
profiling = sys.argv[8:9] == ["profile"]
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


def step(pick):
    """One step of references/detection's train_one_epoch; its seconds."""
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
    return time.perf_counter() - t


timed, seconds = 0, 0.0
for epoch in range(epochs):
    order = torch.randperm(len(images)).tolist()
    for start in range(0, len(order), batch):
        pick = order[start:start + batch]
        seconds += step(pick)
        timed += len(pick)
print(f"{kind} in Python (torchvision's references loop): {timed / seconds:.2f} samples/s")
if profiling:
    from torch.profiler import ProfilerActivity, profile
    steps = 4
    picks = [[(k * batch + i) % len(images) for i in range(batch)] for k in range(steps)]
    plain = sum(step(pick) for pick in picks) / steps * 1e3
    with profile(activities=[ProfilerActivity.CPU]) as p:
        for pick in picks:
            step(pick)
    table = sorted(((e.self_cpu_time_total / steps / 1e3, e.key) for e in p.key_averages()), reverse=True)
    conv = sum(ms for ms, key in table if "convolution" in key)
    ops = sum(ms for ms, _ in table)
    print(f"a step of {batch}: {plain:.1f} ms; the convolutions' own time {conv:.1f} ms ({conv / plain:.0%}), "
          f"every operator's {ops:.1f} ms ({ops / plain:.0%})")
    print(f"the most a loop could gain over this one: {plain / ops:.2f}x with every operator as fast as here "
          f"(Python's own time gone), {plain / conv:.2f}x with only the convolutions left")
    for ms, key in table[:12]:
        print(f"{ms:9.1f} ms  {key}")
