#!/usr/bin/env python3
"""The exponential moving average of a run's weights as PyTorch keeps it:
torch.optim.swa_utils.AveragedModel with get_ema_multi_avg_fn(decay) and
use_buffers=True (BatchNorm's running statistics are averaged too), updated
with the weights of each given checkpoint in turn (the studio's
checkpoints/step-N.ckpt, read with torch.load's weights_only=True). Compares
it with the average the studio kept in LAST's "ema" entry.
Usage: ema_reference.py DECAY LAST_CKPT STEP_CKPT...
Prints the largest absolute difference; exits 1 when it exceeds 1e-6.
"""
import sys

import torch
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn


class Weights(torch.nn.Module):
    """The checkpoint's tensors, in its order, as one module."""

    def __init__(self, state):
        super().__init__()
        self.names = list(state)
        for i, name in enumerate(self.names):
            self.register_buffer(f"t{i}", state[name].clone())

    def load(self, state):
        for i, name in enumerate(self.names):
            getattr(self, f"t{i}").copy_(state[name])


def main():
    decay, last, steps = float(sys.argv[1]), sys.argv[2], sys.argv[3:]
    first = torch.load(steps[0])["model"]
    module = Weights(first)
    average = AveragedModel(module, multi_avg_fn=get_ema_multi_avg_fn(decay), use_buffers=True)
    for path in steps:
        module.load(torch.load(path)["model"])
        average.update_parameters(module)
    studio = torch.load(last)["ema"]
    assert sorted(studio) == sorted(module.names), (sorted(studio), sorted(module.names))
    worst, where = 0.0, ""
    for i, name in enumerate(module.names):
        ours = getattr(average.module, f"t{i}")
        diff = (ours.double() - studio[name].double()).abs().max().item()
        if diff > worst or not where:
            worst, where = diff, name
    print(f"ema of {len(steps)} updates, decay {decay}: {len(module.names)} tensors, "
          f"largest difference {worst:.3g} ({where})")
    sys.exit(0 if worst <= 1e-6 else 1)


if __name__ == "__main__":
    main()
