#!/usr/bin/env python3
"""torchvision's segmentation models rebuilt in the studio (issue 61, item 2),
against torchvision itself:
- every parameter and buffer name and shape is torchvision's, with and
  without the auxiliary head (aux_loss), so that its state dicts load key
  for key (strict);
- with torchvision's model's weights (random, with BatchNorm statistics
  that are not the initial ones and heads scaled so that the logits are
  large), the studio's model gives torchvision's logits ("out", and "aux"
  with the auxiliary head) in eval mode, at an input size that is not a
  multiple of the backbone's stride (the upsampling's sizes), and for
  LRASPP at a square one too.
Models: lraspp_mobilenet_v3_large, deeplabv3_mobilenet_v3_large,
deeplabv3_resnet50 and fcn_resnet50.
Environment (ctest sets it): STUDIO_SEGMENTER_CHECK.
"""
import os
import subprocess
import tempfile
import unittest

import torch
import torchvision
from safetensors.torch import load_file, save_file

from model_fixtures import move_batchnorm_statistics
from suite_limits import HANG_LIMIT_S

CHECK = os.environ["STUDIO_SEGMENTER_CHECK"]
KINDS = ["lraspp_mobilenet_v3_large", "deeplabv3_mobilenet_v3_large", "deeplabv3_resnet50", "fcn_resnet50"]
AUX = {"lraspp_mobilenet_v3_large": (False,)}  # LRASPP has no auxiliary head


def run(*args):
    p = subprocess.run([CHECK, *map(str, args)], capture_output=True, text=True, timeout=HANG_LIMIT_S)
    return p.returncode, p.stdout + p.stderr


def torchvision_model(kind, classes, aux=False, seed=0):
    torch.manual_seed(seed)
    m = getattr(torchvision.models.segmentation, kind)(weights=None, weights_backbone=None, num_classes=classes,
                                                         **({"aux_loss": True} if aux else {})).eval()
    move_batchnorm_statistics(m, 3)
    with torch.no_grad():
        for name, mod in m.named_modules():  # logits of a size that tests something
            if "classifier" in name and isinstance(mod, torch.nn.Conv2d) and mod.out_channels == classes:
                mod.weight.normal_(0, 0.5)
    return m


class SegmenterTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # Each kind once, with its auxiliary head where it has one: torchvision's model, its weights, and
        # the studio's model (one segmenter_check) on the same inputs: its names and its logits.
        cls.tmp = tempfile.TemporaryDirectory(prefix="studio-segmenters-")
        cls.models, cls.names, cls.logits, cls.inputs = {}, {}, {}, {}
        for kind in KINDS:
            aux = kind != "lraspp_mobilenet_v3_large"
            m = cls.models[kind] = torchvision_model(kind, 5, aux)
            weights = os.path.join(cls.tmp.name, f"{kind}.pth")
            torch.save(m.state_dict(), weights)
            sizes = ((64, 64), (70, 53)) if not aux else ((70, 53),)  # 70x53: not a multiple of the stride
            cls.inputs[kind] = {f"x{h}x{w}": torch.randn(2, 3, h, w, generator=torch.Generator().manual_seed(h))
                                for h, w in sizes}
            save_file(cls.inputs[kind], os.path.join(cls.tmp.name, "x.safetensors"))
            code, text = run("logits", kind, 5, int(aux), weights, os.path.join(cls.tmp.name, "x.safetensors"),
                             os.path.join(cls.tmp.name, "out.safetensors"))
            assert code == 0, text
            cls.names[kind] = dict(line.split(" ", 1) for line in text.strip().splitlines())
            cls.logits[kind] = load_file(os.path.join(cls.tmp.name, "out.safetensors"))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    def same_names(self, ours, state):
        self.assertEqual(sorted(ours), sorted(state))
        for name, shape in ours.items():
            self.assertEqual(shape, str(list(state[name].shape)), name)

    def test_names_and_shapes_are_torchvisions(self):
        for kind in KINDS:
            with self.subTest(kind=kind):
                self.same_names(self.names[kind], self.models[kind].state_dict())
        # Without the auxiliary head (aux_loss off, torchvision's default without weights).
        kind = "deeplabv3_mobilenet_v3_large"
        code, text = run("names", kind, 5, 0)
        self.assertEqual(code, 0, text)
        self.same_names(dict(line.split(" ", 1) for line in text.strip().splitlines()),
                        torchvision_model(kind, 5, False).state_dict())

    def test_torchvisions_weights_give_torchvisions_logits(self):
        for kind in KINDS:
            for name, x in self.inputs[kind].items():
                with self.subTest(kind=kind, input=name):
                    with torch.no_grad():
                        want = self.models[kind](x)
                    got = {k.split(".")[1]: v for k, v in self.logits[kind].items() if k.startswith(name + ".")}
                    self.assertEqual(sorted(got), sorted(want))
                    for part in want:
                        self.assertEqual(got[part].shape, want[part].shape)
                        print(f"{kind} {part} at {tuple(x.shape[2:])}: largest logit {want[part].abs().max():.3g}, "
                              f"largest difference {(got[part] - want[part]).abs().max():.3g}")
                        torch.testing.assert_close(got[part], want[part], rtol=1e-5, atol=1e-4)

    def test_another_models_weights_are_refused(self):
        weights = self.path("resnet18.pth")
        torch.save(torchvision.models.resnet18(weights=None).state_dict(), weights)
        save_file({"x": torch.zeros(1, 3, 32, 32)}, self.path("x0.safetensors"))
        code, text = run("logits", KINDS[0], 3, 0, weights, self.path("x0.safetensors"), self.path("o.safetensors"))
        self.assertEqual(code, 2, text)
        self.assertIn("has no backbone.0.0.weight", text)


if __name__ == "__main__":
    unittest.main(verbosity=2)
