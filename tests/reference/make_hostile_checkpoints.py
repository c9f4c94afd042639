#!/usr/bin/env python3
"""Writes checkpoints that carry code, with the installed PyTorch, for the
test that Training Studio reads checkpoints as data only.
Usage: make_hostile_checkpoints.py OUT_DIR MARKER_FILE

  jit_setstate.ckpt   a TorchScript archive (torch.jit.save) whose
                      __setstate__ prints CODE-RAN-FROM-CHECKPOINT: what a
                      crafted last.ckpt looked like when checkpoints were
                      TorchScript archives.
  pickle_reduce.ckpt  torch.save's format whose pickle calls os.system to
                      create MARKER_FILE, with a studio_checksum.json that is
                      correct, so the reader gets as far as unpickling.
"""
import json
import os
import sys
import zipfile
import zlib

import torch


class Evil(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.x = torch.zeros(1)

    @torch.jit.export
    def __getstate__(self):
        return (self.x, self.training)

    @torch.jit.export
    def __setstate__(self, state: tuple[torch.Tensor, bool]):
        print("CODE-RAN-FROM-CHECKPOINT")
        self.x = state[0]
        self.training = state[1]

    def forward(self, x):
        return x + self.x


class RunsCommand:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def add_checksums(path):
    """Adds studio_checksum.json (CRC-32 of data.pkl and data/*) as Training
    Studio writes it, so only the pickle's content can make the load fail."""
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        prefix = names[0].split("/")[0]
        crcs = {}
        for n in names:
            rel = n[len(prefix) + 1:]
            if rel == "data.pkl" or rel.startswith("data/"):
                crcs[rel] = zlib.crc32(z.read(n))
    with zipfile.ZipFile(path, "a") as z:
        z.writestr(f"{prefix}/studio_checksum.json", json.dumps({"algorithm": "crc32", "records": crcs}))


def main():
    out, marker = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    torch.jit.script(Evil()).save(os.path.join(out, "jit_setstate.ckpt"))
    reduce_path = os.path.join(out, "pickle_reduce.ckpt")
    torch.save({"format": "training-studio-checkpoint", "version": 2, "model": RunsCommand(marker)}, reduce_path)
    add_checksums(reduce_path)
    print("hostile checkpoints written")


if __name__ == "__main__":
    main()
