#!/usr/bin/env python3
"""TorchScript models written with the installed PyTorch, for the tests that
the studio trains a person's own model.
Usage: make_torchscript_models.py OUT_DIR FEATURES CLASSES [CNN_INIT]

  cnn.ts            torch.jit.script of nn.Sequential: the studio's built-in cnn
                    (width 32, depth 2) for 1x28x28 images and 10 classes;
                    with CNN_INIT (a state dict the studio wrote), starting from
                    those weights
  residual.ts       torch.jit.script of a module with a residual connection
                    (its forward is not a chain of its children)
  traced_mlp.ts     torch.jit.trace of an MLP for FEATURES inputs, CLASSES classes
  bn_mlp.ts         an MLP with BatchNorm1d, for FEATURES inputs, CLASSES classes
  wrong_classes.ts  a CNN giving 7 logits for 10 classes
  tuple_output.ts   a module returning (logits, features)
  no_parameters.ts  10 logits from 1x28x28 images with no parameters at all
  state_dict.pt     torch.save of a state dict: not TorchScript
  noise.ts          random bytes
"""
import os
import sys

import torch
from torch import nn


def cnn(classes=10):
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1, bias=False), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 7 * 7, classes))


class Residual(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(1, 8, 3, padding=1)
        self.body = nn.Sequential(nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1))
        self.head = nn.Linear(8, 10)

    def forward(self, x):
        y = self.stem(x)
        y = y + self.body(y)
        return self.head(y.mean(dim=(2, 3)))


class TupleOut(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(784, 10)

    def forward(self, x):
        f = torch.flatten(x, 1)
        return self.fc(f), f


class NoParameters(nn.Module):
    def forward(self, x):
        return torch.flatten(x, 1)[:, :10]


def main():
    out, features, classes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    net = cnn()
    if len(sys.argv) > 4:
        net.load_state_dict(torch.load(sys.argv[4]))
    torch.jit.script(net).save(os.path.join(out, "cnn.ts"))
    torch.jit.script(Residual()).save(os.path.join(out, "residual.ts"))
    mlp = nn.Sequential(nn.Linear(features, 64), nn.ReLU(), nn.Linear(64, classes))
    torch.jit.trace(mlp, torch.zeros(2, features)).save(os.path.join(out, "traced_mlp.ts"))
    bn = nn.Sequential(nn.Linear(features, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, classes))
    torch.jit.script(bn).save(os.path.join(out, "bn_mlp.ts"))
    torch.jit.script(cnn(7)).save(os.path.join(out, "wrong_classes.ts"))
    torch.jit.script(TupleOut()).save(os.path.join(out, "tuple_output.ts"))
    torch.jit.script(NoParameters()).save(os.path.join(out, "no_parameters.ts"))
    torch.save(cnn().state_dict(), os.path.join(out, "state_dict.pt"))
    with open(os.path.join(out, "noise.ts"), "wb") as f:
        f.write(os.urandom(4096))
    print("torchscript models written")


if __name__ == "__main__":
    main()
