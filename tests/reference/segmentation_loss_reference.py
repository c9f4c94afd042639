#!/usr/bin/env python3
"""torchvision's references/segmentation criterion (train.py) and
ConfusionMatrix (utils.py, via segmentation_reference.py) on seeded logits,
for test_segmentation_loss: logits "out" [2, 5, 9, 11] and "aux", targets
with pixels at 255; writes OUT.safetensors with the inputs, the loss with
and without the auxiliary logits, and the matrix.
Usage: segmentation_loss_reference.py OUT.safetensors
"""
import os
import sys

import torch
import torch.nn.functional as F
from safetensors.torch import save_file

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from segmentation_reference import ConfusionMatrix  # noqa: E402


def criterion(inputs, target):  # references/segmentation/train.py
    losses = {}
    for name, x in inputs.items():
        losses[name] = F.cross_entropy(x, target, ignore_index=255)
    if len(losses) == 1:
        return losses["out"]
    return losses["out"] + 0.5 * losses["aux"]


g = torch.Generator().manual_seed(62)
out = torch.randn(2, 5, 9, 11, generator=g, dtype=torch.float64) * 3
aux = torch.randn(2, 5, 9, 11, generator=g, dtype=torch.float64) * 3
target = torch.randint(0, 5, (2, 9, 11), generator=g)
target[torch.rand(2, 9, 11, generator=g) < 0.15] = 255
cm = ConfusionMatrix(5)
cm.update(target.flatten(), out.argmax(1).flatten())
save_file({"out": out, "aux": aux, "target": target.to(torch.uint8),
           "loss": criterion({"out": out}, target).reshape(1),
           "loss_aux": criterion({"out": out, "aux": aux}, target).reshape(1),
           "matrix": cm.mat}, sys.argv[1])
