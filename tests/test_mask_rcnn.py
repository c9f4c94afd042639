#!/usr/bin/env python3
"""Issue 61, item 2: the studio's Mask R-CNN (maskrcnn_resnet50_fpn_v2's
parts: torchvision's Faster R-CNN ResNet-50 FPN v2 with its MaskRCNNHeads,
MaskRCNNPredictor, the 14 x 14 mask RoIAlign, maskrcnn_loss and
paste_masks_in_image) against torchvision's own, with random weights saved
by torchvision (every BatchNorm statistic drawn too):
- its parameter and buffer names and shapes are torchvision's;
- in evaluation, the same images give the same boxes, scores, labels and
  masks (each detection's probabilities pasted into its image, within 1e-4);
- in training, the same images, boxes, masks (one image without objects)
  and seed give the same five losses, loss_mask among them, and the same
  gradient for every parameter;
- a whole Mask R-CNN's state dict of torchvision's loads, its box and mask
  predictors replaced when its classes differ.
Both sides run at min_size 96, max_size 128, keep 150 proposals in
evaluation and sample 64 per image in training (test_detectors.py's
reasons; ResNet-50's backward on both sides is this suite's cost). These
are the parts of task.kind instance_segmentation's model; its runs,
predict and export are test_instance_segmentation's.

Environment (ctest sets it): STUDIO_DETECTOR_CHECK.
"""
import copy
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import torch
import torchvision
from safetensors.torch import load_file, save_file

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference"))
from suite_limits import HANG_LIMIT_S  # noqa: E402

CHECK = os.environ["STUDIO_DETECTOR_CHECK"]
KIND = "maskrcnn_resnet50_fpn_v2"
CLASSES = 5  # with the background
OPTIONS = dict(min_size=96, max_size=128, rpn_pre_nms_top_n_test=150, rpn_post_nms_top_n_test=150,
               box_batch_size_per_image=64)


def run(*args):
    env = dict(os.environ, DETECTOR_CHECK_SIZE="96:128", DETECTOR_CHECK_PROPOSALS="150:64")
    p = subprocess.run([CHECK, *map(str, args)], capture_output=True, text=True, timeout=HANG_LIMIT_S, env=env)
    return p.returncode, p.stdout + p.stderr


def mask_rcnn(seed):
    torch.manual_seed(seed)
    model = torchvision.models.detection.maskrcnn_resnet50_fpn_v2(weights=None, weights_backbone=None,
                                                                   num_classes=CLASSES, **OPTIONS)
    with torch.no_grad():  # BatchNorm statistics away from their initial values
        for name, b in model.named_buffers():
            if name.endswith("running_mean"):
                b.copy_(torch.randn_like(b) * 0.1)
            elif name.endswith("running_var"):
                b.copy_(torch.rand_like(b) + 0.5)
    return model


def images(sizes):
    g = torch.Generator().manual_seed(1)
    out = []
    for h, w in sizes:
        low = torch.rand(3, h // 8, w // 8, generator=g)
        out.append(torch.nn.functional.interpolate(low[None], size=(h, w), mode="bilinear")[0])
    return out


def ellipse(box, h, w):
    """The 0/1 mask of the ellipse in box (x1, y1, x2, y2) of an h x w image."""
    yy, xx = torch.meshgrid(torch.arange(h) + 0.5, torch.arange(w) + 0.5, indexing="ij")
    x1, y1, x2, y2 = box.tolist()
    cx, cy, rx, ry = (x1 + x2) / 2, (y1 + y2) / 2, (x2 - x1) / 2, (y2 - y1) / 2
    return (((xx - cx) / rx) ** 2 + ((yy - cy) / ry) ** 2 <= 1).to(torch.uint8)


class MaskRcnnTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="test_mask_rcnn-")
        torch.set_num_threads(1)
        # One model with its weights saved, for every case (a build and a save take seconds).
        cls.model = mask_rcnn(0)
        cls.weights = os.path.join(cls.tmp, "weights.pth")
        torch.save(cls.model.state_dict(), cls.weights)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.tmp, name)

    def test_names_and_shapes_are_torchvisions(self):
        rc, text = run("names", KIND, CLASSES)
        self.assertEqual(rc, 0, text)
        theirs = sorted(f"{k} [{', '.join(map(str, v.shape))}]" for k, v in self.model.state_dict().items())
        self.assertEqual(sorted(text.strip().splitlines()), theirs)
        self.assertTrue(any(n.startswith("roi_heads.mask_predictor.conv5_mask") for n in theirs))

    def test_detections_and_their_masks_are_torchvisions(self):
        model = copy.deepcopy(self.model)
        xs = images(((120, 160), (96, 84)))
        save_file({f"image.{i}": x.contiguous() for i, x in enumerate(xs)}, self.path("in.safetensors"))
        rc, text = run("detect", KIND, self.weights, self.path("in.safetensors"),
                       self.path("out.safetensors"))
        self.assertEqual(rc, 0, text)
        ours = load_file(self.path("out.safetensors"))
        with torch.no_grad():
            theirs = model.eval()(xs)
        for i, t in enumerate(theirs):
            self.assertGreater(len(t["boxes"]), 10, "too few detections to compare")
            self.assertTrue(torch.equal(ours[f"labels.{i}"], t["labels"]), f"image {i}'s labels")
            torch.testing.assert_close(ours[f"boxes.{i}"], t["boxes"], rtol=0, atol=1e-3)
            torch.testing.assert_close(ours[f"scores.{i}"], t["scores"], rtol=0, atol=1e-4)
            self.assertEqual(ours[f"masks.{i}"].shape, t["masks"].shape)  # N x 1 x H x W, the image's size
            torch.testing.assert_close(ours[f"masks.{i}"], t["masks"], rtol=0, atol=1e-4, msg=f"image {i}'s masks")
            self.assertGreater(float(t["masks"].max()), 0.3)  # probabilities, not all near zero
        print(f"{KIND}: {[len(t['boxes']) for t in theirs]} detections and their masks equal torchvision's")

    def test_losses_and_gradients_are_torchvisions(self):
        model = copy.deepcopy(self.model)
        xs = images(((120, 160), (96, 84), (64, 72)))
        boxes = [torch.tensor([[10.0, 12.0, 70.0, 90.0], [80.0, 20.0, 150.0, 60.0]]),
                 torch.tensor([[5.0, 30.0, 40.0, 80.0]]), torch.zeros(0, 4)]
        labels = [torch.tensor([1, 3]), torch.tensor([4]), torch.zeros(0, dtype=torch.int64)]
        masks = [torch.stack([ellipse(b, x.shape[1], x.shape[2]) for b in bs]) if len(bs) else
                 torch.zeros(0, x.shape[1], x.shape[2], dtype=torch.uint8) for x, bs in zip(xs, boxes)]
        tensors = {}
        for i in range(3):
            tensors.update({f"image.{i}": xs[i], f"boxes.{i}": boxes[i], f"labels.{i}": labels[i],
                            f"masks.{i}": masks[i]})
        save_file(tensors, self.path("train.safetensors"))
        rc, text = run("losses", KIND, self.weights, self.path("train.safetensors"),
                       self.path("losses.safetensors"), 7)
        self.assertEqual(rc, 0, text)
        ours = load_file(self.path("losses.safetensors"))
        model.train()
        torch.manual_seed(7)
        losses = model(xs, [{"boxes": b, "labels": l, "masks": m} for b, l, m in zip(boxes, labels, masks)])
        self.assertEqual([k for k in ours if not k.startswith("grad.")], list(losses.keys()))
        self.assertIn("loss_mask", losses)
        for name, value in losses.items():
            torch.testing.assert_close(ours[name][0], value.detach(), rtol=1e-5, atol=1e-6,
                                       msg=f"{name}: {ours[name][0]} against {value}")
        sum(losses.values()).backward()
        grads = {n: p.grad for n, p in model.named_parameters() if p.grad is not None}
        self.assertEqual(sorted(k[5:] for k in ours if k.startswith("grad.")), sorted(grads))
        self.assertTrue(any(n.startswith("roi_heads.mask_head") for n in grads))
        scale = max(g.abs().max().item() for g in grads.values())  # test_detectors.py's reason
        for name, g in grads.items():
            torch.testing.assert_close(ours["grad." + name], g, rtol=1e-4, atol=1e-5 * scale,
                                       msg=f"the gradient of {name}")
        print(f"{KIND}: " + ", ".join(f"{k} {v.item():.5f}" for k, v in losses.items()))

    def test_torchvisions_state_dicts_load(self):
        # A whole Mask R-CNN's state dict of COCO's 91 classes (as torchvision's published weights)
        # into a model of 5: every tensor but the box and mask predictors is the file's, those two
        # the model's own (torchvision's fine-tuning tutorial replaces both).
        coco = torchvision.models.detection.maskrcnn_resnet50_fpn_v2(weights=None, weights_backbone=None)
        torch.save(coco.state_dict(), self.path("coco.pth"))
        rc, text = run("load", KIND, self.path("coco.pth"), CLASSES, self.path("loaded.safetensors"))
        self.assertEqual(rc, 0, text)
        self.assertIn("tensors", text)
        self.assertIn("predictor_kept 0 file_classes 91", text)
        loaded = load_file(self.path("loaded.safetensors"))
        replaced = ("roi_heads.box_predictor.", "roi_heads.mask_predictor.")
        same = [k for k, v in coco.state_dict().items() if not k.startswith(replaced) and k in loaded]
        self.assertGreater(len(same), 300)
        for k in same:
            self.assertTrue(torch.equal(loaded[k], coco.state_dict()[k]), k)
        self.assertEqual(loaded["roi_heads.mask_predictor.mask_fcn_logits.weight"].shape[0], CLASSES)
        # (A state dict of the model's own classes keeps both predictors, and a ResNet-50
        # classifier's goes into the backbone: the same code as fasterrcnn_resnet50_fpn_v2's,
        # which test_detectors loads both ways.)

    def test_a_detection_run_cannot_choose_it(self):
        # Training it needs masks: it is task.kind instance_segmentation's model (test_instance_segmentation),
        # not detection's.
        rc, text = run("settings", KIND, CLASSES, "-", "auto", self.path("settings"))
        self.assertNotEqual(rc, 0)


if __name__ == "__main__":
    unittest.main()
