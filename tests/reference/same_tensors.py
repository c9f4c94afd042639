#!/usr/bin/env python3
"""Reads two files with the installed PyTorch's torch.load (weights_only=True)
and checks that they hold the same tensors under the same names.
Usage: same_tensors.py FILE[:KEY] FILE[:KEY]
KEY picks an entry of a dict file (e.g. a checkpoint's "ema").
"""
import sys

import torch


def tensors(spec):
    path, _, key = spec.partition(":")
    data = torch.load(path)
    return data[key] if key else data


def main():
    a, b = tensors(sys.argv[1]), tensors(sys.argv[2])
    if sorted(a) != sorted(b):
        print(f"different names: {sorted(a)} / {sorted(b)}")
        sys.exit(1)
    for name in a:
        if not torch.equal(a[name], b[name]):
            print(f"{name} differs by {(a[name].double() - b[name].double()).abs().max().item():.3g}")
            sys.exit(1)
    print(f"the same {len(a)} tensors")


if __name__ == "__main__":
    main()
