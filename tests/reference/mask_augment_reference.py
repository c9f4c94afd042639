#!/usr/bin/env python3
"""torchvision.transforms.v2.functional on an Image and a Mask together, for
test_mask_augment: a seeded uint8 image [3, 37, 53] and mask [37, 53]
(classes 0..4, some 255), resized by the shorter side down (29) and up (61),
padded to 64x70 (the mask with 255, as references/segmentation's
PadIfSmaller), cropped (top 5, left 7, 20x30) and flipped horizontally;
each result saved as NAME.image and NAME.mask in OUT.safetensors (with the
inputs as input.image and input.mask).
Usage: mask_augment_reference.py OUT.safetensors
"""
import sys

import torch
from safetensors.torch import save_file
from torchvision import tv_tensors
from torchvision.transforms import v2
from torchvision.transforms.v2 import functional as F

g = torch.Generator().manual_seed(61)
image = tv_tensors.Image(torch.randint(0, 256, (3, 37, 53), generator=g, dtype=torch.uint8))
mask = torch.randint(0, 5, (37, 53), generator=g, dtype=torch.uint8)
mask[torch.rand(37, 53, generator=g) < 0.1] = 255
mask = tv_tensors.Mask(mask)
out = {"input.image": image.as_subclass(torch.Tensor), "input.mask": mask.as_subclass(torch.Tensor)}


def keep(name, pair):
    out[name + ".image"] = pair[0].as_subclass(torch.Tensor).contiguous()
    out[name + ".mask"] = pair[1].as_subclass(torch.Tensor).contiguous()


for size in (29, 61):
    keep(f"resize{size}", (F.resize(image, [size]), F.resize(mask, [size])))
# references/segmentation/v2_extras.py's PadIfSmaller: right and bottom, the mask's fill 255.
pad = v2.Pad([0, 0, 70 - 53, 64 - 37], fill={tv_tensors.Mask: 255, "others": 0})
keep("pad", pad(image, mask))
keep("crop", (F.crop(image, 5, 7, 20, 30), F.crop(mask, 5, 7, 20, 30)))
keep("flip", (F.horizontal_flip(image), F.horizontal_flip(mask)))
save_file(out, sys.argv[1])
