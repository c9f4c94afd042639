"""The Python side of bench/segmentation_bench.sh: torchvision's segmenter
trained as torchvision's references/segmentation/train.py trains it
(train_one_epoch: model(image), cross-entropy with ignore_index 255 on
"out" plus 0.5 x "aux" where the model has one, zero_grad, backward, step)
with the references' training preset on each image (transforms v2:
RandomResize from half to twice base_size, RandomHorizontalFlip 0.5,
PadIfSmaller to crop_size with 0 for the image and 255 for the mask,
RandomCrop, ToDtype with scale, Normalize with ImageNet's mean and std) and
the references' collate (cat_list: each batch padded to its largest image,
0 and 255), on the same scenes, batch, optimizer and CPU threads as the
studio's run. The images are decoded once into memory and shuffled each
epoch; a step's time is its transforms' and the model's (the references'
DataLoader with workers=0): the studio's samples/s is its training time's,
which resizes and crops the batch as its step's first part.

Usage: segmentation_loop.py IMAGES MASKS KIND BASE CROP BATCH EPOCHS DEVICE"""
import os
import sys
import time

import numpy as np
import torch
import torchvision
from PIL import Image
from torchvision import tv_tensors
from torchvision.transforms import v2 as T
from torchvision.transforms.v2 import functional as F

images_dir, masks_dir, kind, base, crop, batch, epochs, device = sys.argv[1:9]
base, crop, batch, epochs = int(base), int(crop), int(batch), int(epochs)
torch.manual_seed(1)
with open(os.path.join(masks_dir, "classes.txt")) as f:
    classes = len([line for line in f if line.strip()])
names = sorted(n for n in os.listdir(images_dir) if n.endswith(".png"))
data = [(tv_tensors.Image(torch.from_numpy(np.array(Image.open(os.path.join(images_dir, n)).convert("RGB")))
                          .permute(2, 0, 1)),
         tv_tensors.Mask(torch.from_numpy(np.array(Image.open(os.path.join(masks_dir, n))))))
        for n in names]


class PadIfSmaller(torch.nn.Module):  # references/segmentation/v2_extras.py
    def __init__(self, size):
        super().__init__()
        self.size = size

    def forward(self, image, mask):
        h, w = image.shape[-2:]
        pad = [0, 0, max(self.size - w, 0), max(self.size - h, 0)]
        return F.pad(image, pad, fill=0), F.pad(mask, pad, fill=255)


resize, flip, pad, cut = (T.RandomResize(int(0.5 * base), int(2.0 * base)), T.RandomHorizontalFlip(0.5),
                          PadIfSmaller(crop), T.RandomCrop(crop))
finish = T.Compose([T.ToDtype(torch.float, scale=True), T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])


def prepared(image, mask):
    image, mask = flip(*resize(image, mask))
    image, mask = cut(*pad(image, mask))
    return finish(image), mask


def cat_list(items, fill):  # references/segmentation/utils.py
    size = tuple(max(s) for s in zip(*[i.shape for i in items]))
    out = items[0].new(*((len(items),) + size)).fill_(fill)
    for i, o in zip(items, out):
        o[..., :i.shape[-2], :i.shape[-1]].copy_(i)
    return out


aux = kind != "lraspp_mobilenet_v3_large"
model = getattr(torchvision.models.segmentation, kind)(weights=None, weights_backbone=None, num_classes=classes,
                                                       **({"aux_loss": True} if aux else {}))
model.to(device).train()
optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.02, momentum=0.9,
                            weight_decay=1e-4)


def criterion(inputs, target):  # references/segmentation/train.py
    losses = {name: torch.nn.functional.cross_entropy(x, target, ignore_index=255) for name, x in inputs.items()}
    return losses["out"] if len(losses) == 1 else losses["out"] + 0.5 * losses["aux"]


timed, seconds = 0, 0.0
for epoch in range(epochs):
    order = torch.randperm(len(data)).tolist()
    for start in range(0, len(order), batch):
        pick = order[start:start + batch]
        if device != "cpu":
            torch.cuda.synchronize()
        t = time.perf_counter()
        pairs = [prepared(*data[i]) for i in pick]
        image = cat_list([p[0] for p in pairs], 0).to(device)
        target = cat_list([p[1] for p in pairs], 255).long().to(device)
        loss = criterion(model(image), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if device != "cpu":
            torch.cuda.synchronize()
        seconds += time.perf_counter() - t
        timed += len(pick)
print(f"torchvision {kind} in the references' loop: {timed / seconds:.2f} samples/s")
