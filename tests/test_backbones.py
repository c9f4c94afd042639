#!/usr/bin/env python3
"""Fine-tuning's backbones (issue 25) against torchvision, the real thing:
- every backbone's parameter and buffer names and shapes are torchvision's;
- a torchvision model with random weights, saved by torch.save (a .pth as
  torchvision's own files are) or as safetensors, loads into the studio and
  gives torchvision's logits in eval mode (fp32, within 1e-4);
- its export loads back into torchvision (load_state_dict, strict) from
  model.pt and model.safetensors, and model.py builds it;
- a resnet18 started from a state dict with torchvision's 1000-class
  classifier fine-tunes on an image folder of real images (Fashion-MNIST's
  T-shirts, trousers and sneakers) through training-studio-cli: a new
  classifier for the 3 classes, ImageNet's normalisation, and it learns;
- bad weights (another architecture's, a truncated file, a safetensors
  header that lies, a pickle that calls a function, a kept classifier of the
  wrong size, a URL) end with exit 2 and a message naming the file or the
  setting, and the run folder keeps its settings.
Environment (ctest sets it): STUDIO_CLI, STUDIO_BACKBONE_CHECK.
"""
import glob
import hashlib
import io
import json
import os
import pickle
import struct
import subprocess
import sys
import tempfile
import unittest
import warnings
import zipfile

import numpy as np
import torch
import torchvision
from safetensors.torch import load_file, save_file

from idx_reader import idx
from model_fixtures import move_batchnorm_statistics
from suite_limits import HANG_LIMIT_S

CLI = os.environ["STUDIO_CLI"]
CHECK = os.environ["STUDIO_BACKBONE_CHECK"]
KINDS = ["resnet18", "resnet34", "resnet50", "mobilenet_v3_small", "mobilenet_v3_large", "efficientnet_b0"]
FASHION = "/usr/share/datasets/fashion-mnist"


def run(*args, timeout=HANG_LIMIT_S):
    p = subprocess.run(list(args), capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout + p.stderr


def torchvision_model(kind, classes, seed=0):
    """torchvision's model with random weights and running statistics that are not the initial ones."""
    torch.manual_seed(seed)
    m = move_batchnorm_statistics(getattr(torchvision.models, kind)(weights=None, num_classes=classes).eval(), 7)
    with torch.no_grad():
        for mod in m.modules():
            if isinstance(mod, torch.nn.Linear):  # logits of a size that tests something
                mod.weight.normal_(0, 0.5)
    return m


class BackboneTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="studio-backbones-")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    def logits(self, kind, weights, x):
        save_file({"x": x.contiguous()}, self.path("x.safetensors"))
        code, text = run(CHECK, "logits", kind, weights, self.path("x.safetensors"), self.path("out.safetensors"))
        self.assertEqual(code, 0, text)
        return load_file(self.path("out.safetensors"))["logits"]

    def test_names_and_shapes_are_torchvisions(self):
        for kind in KINDS:
            with self.subTest(kind=kind):
                code, text = run(CHECK, "names", kind, "7")
                self.assertEqual(code, 0, text)
                ours = [line.split(" ", 1) for line in text.strip().splitlines()]
                state = getattr(torchvision.models, kind)(weights=None, num_classes=7).state_dict()
                self.assertEqual(sorted(name for name, _ in ours), sorted(state))
                for name, shape in ours:
                    self.assertEqual(shape, str(list(state[name].shape)), name)

    def test_torchvisions_weights_give_torchvisions_logits(self):
        for kind in KINDS:
            with self.subTest(kind=kind):
                m = torchvision_model(kind, 5)
                weights = self.path(f"{kind}.pth")
                torch.save(m.state_dict(), weights)
                x = torch.randn(2, 3, 64, 64, generator=torch.Generator().manual_seed(1))
                with torch.no_grad():
                    want = m(x)
                got = self.logits(kind, weights, x)
                print(f"{kind}: largest logit {want.abs().max():.3g}, largest difference {(got - want).abs().max():.3g}")
                torch.testing.assert_close(got, want, rtol=0, atol=1e-4)
                if kind in ("resnet18", "efficientnet_b0"):  # the same tensors as safetensors
                    st = self.path(f"{kind}.safetensors")
                    save_file({k: v.contiguous() for k, v in m.state_dict().items()}, st)
                    torch.testing.assert_close(self.logits(kind, st, x), want, rtol=0, atol=1e-4)

    def test_the_export_loads_back_into_torchvision(self):
        for kind in ("resnet18", "mobilenet_v3_small"):
            with self.subTest(kind=kind):
                m = torchvision_model(kind, 4, seed=3)
                weights = self.path(f"export-{kind}.pth")
                torch.save(m.state_dict(), weights)
                out = self.path(f"export-{kind}")
                os.makedirs(out)
                code, text = run(CHECK, "export", kind, weights, out)
                self.assertEqual(code, 0, text)
                x = torch.randn(3, 3, 48, 48)
                with torch.no_grad():
                    want = m(x)
                for state in (torch.load(os.path.join(out, "model.pt")), load_file(os.path.join(out, "model.safetensors"))):
                    back = getattr(torchvision.models, kind)(weights=None, num_classes=4).eval()
                    back.load_state_dict(state, strict=True)
                    with torch.no_grad():
                        torch.testing.assert_close(back(x), want, rtol=0, atol=0)
                scope = {}
                with open(os.path.join(out, "model.py")) as f:
                    exec(f.read(), scope)
                built = scope["build"]()
                self.assertIsInstance(built, type(m))
                built.load_state_dict(torch.load(os.path.join(out, "model.pt")), strict=True)


class FineTuneTest(unittest.TestCase):
    CLASSES = {"tshirt": 0, "trouser": 1, "sneaker": 7}
    # The smallest images resnet18 trains on with batches of more than one (a 1x1 final map): what these
    # cases check (weights loaded, frozen, resumed; rates; learning) holds at any size, and 64 px took 4x as long.
    SIZE = "data.image_size=[32, 32]"
    # Half the photos (150 training, 5 steps an epoch; 60 tested): the cases that check what a run does,
    # not how well it learns (resumed, frozen) take no more.
    HALF = ["--set", "data.train_limit=150", "--set", "data.test_limit=60"]

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="studio-finetune-")
        images, labels = idx(f"{FASHION}/train-images-idx3-ubyte.gz"), idx(f"{FASHION}/train-labels-idx1-ubyte.gz")
        cls.folder = os.path.join(cls.tmp.name, "photos")
        for name, label in cls.CLASSES.items():
            picks = np.flatnonzero(labels == label)
            for split, chosen in (("train", picks[:100]), ("test", picks[100:150])):
                os.makedirs(os.path.join(cls.folder, split, name))
                for i in chosen:
                    with open(os.path.join(cls.folder, split, name, f"{i}.pgm"), "wb") as f:
                        f.write(b"P5 28 28 255\n" + images[i].tobytes())
        # A state dict as torchvision's files are: 1000 ImageNet classes.
        cls.weights = os.path.join(cls.tmp.name, "resnet18-random.pth")
        torch.manual_seed(0)
        cls.state = torchvision.models.resnet18(weights=None).state_dict()
        torch.save(cls.state, cls.weights)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def train(self, name, *more):
        out = os.path.join(self.tmp.name, name)
        code, text = run(CLI, "train", "--preset", "finetune-photos", "--set", f"data.root={self.folder}",
                         "--set", self.SIZE, "--set", "train.epochs=3", "--set", "train.batch_size=32",
                         "--set", "data.val_fraction=0", *more, "--out", out)
        runs = sorted(glob.glob(os.path.join(out, "*")))
        return code, text, runs[0] if runs else None

    def killed(self, name, crash_at, *more):
        """A fine-tune killed (SIGKILL, STUDIO_CRASH_AT) at crash_at, as self.train would run it: its folder."""
        out = os.path.join(self.tmp.name, name)
        p = subprocess.run([CLI, "train", "--preset", "finetune-photos", "--set", f"data.root={self.folder}",
                            "--set", self.SIZE, "--set", "train.epochs=3",
                            "--set", "train.batch_size=32", "--set", "data.val_fraction=0", *more, "--out", out],
                           capture_output=True, text=True, timeout=HANG_LIMIT_S, env={**os.environ, "STUDIO_CRASH_AT": crash_at})
        self.assertNotEqual(p.returncode, 0)
        return sorted(glob.glob(os.path.join(out, "*")))[0]

    @staticmethod
    def rows(folder, columns):
        """metrics.csv's rows, these columns of each."""
        with open(os.path.join(folder, "metrics.csv")) as f:
            lines = f.read().splitlines()
        header = lines[0].split(",")
        keep = [header.index(c) for c in columns]
        return [[line.split(",")[i] for i in keep] for line in lines[1:]]

    def test_a_resnet18_from_a_state_dict_fine_tunes(self):
        code, text, folder = self.train("resnet18", "--set", f"model.weights={self.weights}", "--set", "train.epochs=2")
        self.assertEqual(code, 0, text)
        with open(os.path.join(folder, "summary.json")) as f:
            summary = json.load(f)
        with open(os.path.join(folder, "settings.json")) as f:
            info = json.load(f)["run_info"]
        print(f"resnet18 fine-tuned on 300 Fashion-MNIST images at 32 px: test accuracy {summary['test_accuracy']:.3f}")
        self.assertGreater(summary["test_accuracy"], 0.8)  # chance is 1/3
        pretrained = info["pretrained"]
        self.assertEqual(pretrained["tensors"], len(self.state) - 2)  # all but fc.weight and fc.bias
        self.assertEqual((pretrained["head"], pretrained["head_kept"], pretrained["file_classes"]), ("fc", False, 1000))
        self.assertEqual(pretrained["prefix_removed"], "")
        with open(self.weights, "rb") as f:
            self.assertEqual(pretrained["sha256"], hashlib.sha256(f.read()).hexdigest())
        np.testing.assert_allclose(info["normalization"]["mean"], [0.485, 0.456, 0.406])
        np.testing.assert_allclose(info["normalization"]["std"], [0.229, 0.224, 0.225])
        self.assertEqual(info["input"]["channels"], 3)
        with open(os.path.join(folder, "log.txt")) as f:
            self.assertIn("a new classifier fc for the data's 3 outputs (the file's had 1000)", f.read())

    def test_a_last_batch_of_one_is_refused_before_training(self):
        # 300 images in batches of 299: a last batch of one example, which
        # resnet18's BatchNorm cannot normalise at 32 px (a 1x1 final map:
        # PyTorch's "Expected more than 1 value per channel when training",
        # after a whole epoch). Refused at the start, naming what to change;
        # 64 px (a 2x2 map) trains.
        code, text, folder = self.train("batch-of-one", "--set", "data.image_size=[32, 32]", "--set",
                                        "train.batch_size=299", "--set", "train.epochs=2")
        self.assertEqual(code, 2, text)
        self.assertIn("train.batch_size 299: the 300 training examples leave each epoch's last batch with a single "
                      "example", text)
        self.assertIn("300 or 298", text)
        self.assertNotIn("step 1", text)
        code, text, folder = self.train("batch-of-one-64", "--set", "data.image_size=[64, 64]",
                                        "--set", "train.batch_size=299", "--set", "train.epochs=1")
        self.assertEqual(code, 0, text)

    def test_a_data_parallel_state_dict_loads(self):
        # torch.nn.DataParallel(model).state_dict() names every tensor "module.<name>".
        wrapped = os.path.join(self.tmp.name, "data-parallel.pth")
        torch.save(torch.nn.DataParallel(torchvision.models.resnet18(weights=None)).state_dict(), wrapped)
        code, text, folder = self.train("wrapped", "--set", f"model.weights={wrapped}", "--set", "train.epochs=1",
                                        "--set", "train.finetune.freeze_epochs=1")
        self.assertEqual(code, 0, text)
        with open(os.path.join(folder, "settings.json")) as f:
            self.assertEqual(json.load(f)["run_info"]["pretrained"]["prefix_removed"], "module.")
        state = self.exported(folder)
        want = torch.load(wrapped)
        self.assertTrue(torch.equal(state["layer3.1.conv2.weight"], want["module.layer3.1.conv2.weight"]))

    def exported(self, folder, which="last"):
        out = folder + "-export"
        code, text = run(CLI, "export", folder, "--out", out, "--which", which)
        self.assertEqual(code, 0, text)
        return torch.load(os.path.join(out, "model.pt"))

    def test_frozen_layers_stay_and_unfrozen_ones_learn(self):
        common = ["--set", f"model.weights={self.weights}", "--set", "train.finetune.freeze_epochs=1", *self.HALF]
        # One epoch, all of it frozen: every tensor but the new classifier's is the file's, bit for bit
        # (the BatchNorm statistics and their counters too).
        code, text, folder = self.train("frozen", *common, "--set", "train.epochs=1")
        self.assertEqual(code, 0, text)
        # Its one evaluation is both its best and its last: one file under the two names, not 134 MB twice.
        best, last = (os.stat(os.path.join(folder, "checkpoints", n)) for n in ("best.ckpt", "last.ckpt"))
        self.assertEqual((best.st_ino, best.st_nlink), (last.st_ino, 2))
        state = self.exported(folder)
        for name, want in self.state.items():
            if not name.startswith("fc."):
                self.assertTrue(torch.equal(state[name], want), name)
        self.assertEqual(tuple(state["fc.weight"].shape), (3, 512))
        # The same with the BatchNorm statistics following the data: the weights stay, the statistics move.
        code, text, folder = self.train("statistics", *common, "--set", "train.epochs=1",
                                        "--set", "train.finetune.freeze_batchnorm=false")
        self.assertEqual(code, 0, text)
        state = self.exported(folder)
        self.assertTrue(torch.equal(state["layer4.1.conv2.weight"], self.state["layer4.1.conv2.weight"]))
        self.assertTrue(torch.equal(state["bn1.weight"], self.state["bn1.weight"]))
        self.assertFalse(torch.equal(state["bn1.running_mean"], self.state["bn1.running_mean"]))
        # Two epochs: the second trains everything, and the curves' record marks where.
        code, text, folder = self.train("thawed", *common, "--set", "train.epochs=2")
        self.assertEqual(code, 0, text)
        state = self.exported(folder)
        for name in ("conv1.weight", "layer1.0.conv1.weight", "layer4.1.conv2.weight", "bn1.running_mean"):
            self.assertFalse(torch.equal(state[name], self.state[name]), name)
        with open(os.path.join(folder, "metrics.csv")) as f:
            unfreezes = [line.split(",")[:3] for line in f if line.startswith("unfreeze,")]
        self.assertEqual(unfreezes, [["unfreeze", "5", "1"]])  # 150 images in batches of 32: 5 steps an epoch

    def test_mixup_and_cutmix_still_learn(self):
        code, text, folder = self.train("mixed", "--set", f"model.weights={self.weights}",
                                        "--set", "data.augment_mixup=true", "--set", "data.augment_cutmix=true",
                                        "--set", "data.augment_resized_crop=true", "--set", "train.epochs=2")
        self.assertEqual(code, 0, text)
        with open(os.path.join(folder, "summary.json")) as f:
            accuracy = json.load(f)["test_accuracy"]
        print(f"with MixUp, CutMix and resized crops: test accuracy {accuracy:.3f}")
        self.assertGreater(accuracy, 0.6)  # chance is 1/3

    def test_group_rates_are_pytorchs_on_the_same_schedule(self):
        code, text, folder = self.train(
            "rates", "--set", f"model.weights={self.weights}", "--set", "train.finetune.backbone_lr_factor=0.01",
            "--set", "train.epochs=2", "--set", "train.log_every_steps=1", "--set", "schedule.kind=onecycle",
            "--set", "schedule.onecycle.max_lr=0.002", "--set", "optimizer.kind=sgd", "--set", "optimizer.momentum=0.9")
        self.assertEqual(code, 0, text)
        with open(os.path.join(folder, "settings.json")) as f:
            groups = json.load(f)["run_info"]["finetune"]["groups"]
        names = [g["name"] for g in groups]
        self.assertEqual(names, ["conv1", "bn1", "layer1", "layer2", "layer3", "layer4", "fc"])
        factors = [g["lr_factor"] for g in groups]
        np.testing.assert_allclose(factors, np.geomspace(0.01, 1, len(groups)), rtol=1e-12)  # fastai's even_mults
        with open(os.path.join(folder, "metrics.csv")) as f:
            header = f.readline().strip().split(",")
            rows = [line.split(",") for line in f if line.startswith("train,")]
        lr = [float(r[header.index("lr")]) for r in rows]
        # PyTorch: one parameter group per layer group, OneCycleLR with each group's peak scaled by its factor.
        model = torchvision.models.resnet18(weights=None, num_classes=3)
        params = {n: [] for n in names}
        for n, p in model.named_parameters():
            params[n.split(".")[0]].append(p)
        opt = torch.optim.SGD([{"params": params[n]} for n in names], lr=0.002, momentum=0.9)
        sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=[0.002 * f for f in factors], total_steps=len(lr))
        for step, head in enumerate(lr):
            want = [g["lr"] for g in opt.param_groups]
            np.testing.assert_allclose([head * f for f in factors], want, rtol=1e-8, err_msg=f"step {step + 1}")
            opt.step()
            sched.step()

    def test_a_killed_fine_tune_resumes_as_if_never_stopped(self):
        # Gradual unfreezing with discriminative rates, killed (SIGKILL) in epoch 2 after its checkpoint at
        # step 6 (half the photos: 5 steps an epoch): the resumed run is in the same frozen state and writes
        # the same rows, bit for bit.
        # With every photo augmentation on: their draws follow (seed, epoch, batch), so they resume too.
        args = ["--set", f"model.weights={self.weights}", "--set", "train.finetune.freeze_epochs=1",
                "--set", "train.finetune.gradual=true", "--set", "train.finetune.backbone_lr_factor=0.1",
                "--set", "output.checkpoint_every_steps=6", "--set", "train.log_every_steps=1", *self.HALF,
                "--set", "data.augment_resized_crop=true", "--set", "data.augment_vflip=true",
                "--set", "data.augment_rotation=15", "--set", "data.augment_brightness=0.3",
                "--set", "data.augment_contrast=0.3", "--set", "data.augment_saturation=0.3",
                "--set", "data.augment_hue=0.05", "--set", "data.augment_erasing=0.25",
                "--set", "data.augment_mixup=true", "--set", "data.augment_cutmix=true"]

        def rows(folder):
            return self.rows(folder, ["kind", "step", "epoch", "train_loss", "lr", "grad_norm", "eval_loss",
                                      "eval_accuracy"])

        code, text, whole = self.train("whole", *args)
        self.assertEqual(code, 0, text)
        killed = self.killed("killed", "train-step:8", *args)
        code, text = run(CLI, "resume", killed)
        self.assertEqual(code, 0, text)
        self.assertEqual(rows(killed), rows(whole))
        self.assertEqual([r[:3] for r in rows(whole) if r[0] == "unfreeze"],
                         [["unfreeze", "5", "1"], ["unfreeze", "10", "2"]])

    def test_a_fine_tune_killed_before_its_first_checkpoint_starts_again_from_the_weights(self):
        # Killed (SIGKILL) at step 3, before its first checkpoint (step 6): resume trains again from step 0, and
        # from model.weights, not from random weights. With the backbone frozen (and its BatchNorm statistics kept)
        # for both epochs, conv1.weight ends equal to the file's, and every row equals an uninterrupted run's.
        args = ["--set", f"model.weights={self.weights}", "--set", "train.epochs=2", "--set", "train.finetune.freeze_epochs=2",
                "--set", "train.finetune.freeze_batchnorm=true", "--set", "output.checkpoint_every_steps=6",
                "--set", "train.log_every_steps=1", *self.HALF]

        def rows(folder):
            return self.rows(folder, ["kind", "step", "epoch", "train_loss", "lr"])

        code, text, whole = self.train("whole-frozen", *args)
        self.assertEqual(code, 0, text)
        killed = self.killed("killed-early", "train-step:3", *args)
        self.assertFalse(os.path.exists(os.path.join(killed, "checkpoints", "last.ckpt")))
        code, text = run(CLI, "resume", killed)
        self.assertEqual(code, 0, text)
        self.assertIn("training again from step 0", text)
        self.assertEqual(rows(killed), rows(whole))
        export = os.path.join(self.tmp.name, "killed-early-export")
        code, text = run(CLI, "export", killed, "--which", "last", "--out", export)
        self.assertEqual(code, 0, text)
        exported = load_file(os.path.join(export, "model.safetensors"))
        self.assertTrue(torch.equal(exported["conv1.weight"], self.state["conv1.weight"]))

    def bad(self, name, expect, *settings):
        code, text, folder = self.train(name, "--set", "train.epochs=1", *settings)
        self.assertEqual(code, 2, text)
        self.assertIn(expect, text)
        # A refused weights file: the run had not begun, so it leaves no folder (issue 41, item 16).
        self.assertIsNone(folder, f"{name}: a refused model.weights left {folder}")

    def test_bad_weights_say_what_is_wrong(self):
        other = os.path.join(self.tmp.name, "resnet34.pth")
        torch.save(torchvision.models.resnet34(weights=None).state_dict(), other)
        self.bad("architecture", f"model.weights {other} does not fit model.kind resnet18", "--set",
                 f"model.weights={other}")
        self.bad("keys", "it has layer1.2.conv1.weight", "--set", f"model.weights={other}")

        with open(self.weights, "rb") as f:
            whole = f.read()
        truncated = os.path.join(self.tmp.name, "truncated.pth")
        with open(truncated, "wb") as f:
            f.write(whole[: len(whole) // 2])
        self.bad("truncated", f"model.weights {truncated}", "--set", f"model.weights={truncated}")

        lying = os.path.join(self.tmp.name, "lying.safetensors")
        save_file({k: v.contiguous() for k, v in self.state.items()}, lying)
        with open(lying, "r+b") as f:
            n = struct.unpack("<Q", f.read(8))[0]
            header = json.loads(f.read(n))
            header["fc.bias"]["data_offsets"][1] += 4 * 1000  # more bytes than the shape needs
            text = json.dumps(header, separators=(",", ":")).encode()
            text += b" " * (n - len(text)) if len(text) <= n else b""
            self.assertEqual(len(text), n)
            f.seek(8)
            f.write(text)
        self.bad("lying", "the header lies", "--set", f"model.weights={lying}", "--set", "model.keep_head=true")

        class Payload:  # what a malicious .pth does: call a function while it is unpickled
            def __reduce__(self):
                return (os.system, ("echo pwned",))
        hostile = os.path.join(self.tmp.name, "hostile.pth")
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr("archive/data.pkl", pickle.dumps({"fc.weight": Payload()}, protocol=2))
            z.writestr("archive/byteorder", "little")
            z.writestr("archive/version", "3\n")
        with open(hostile, "wb") as f:
            f.write(buf.getvalue())
        self.bad("hostile", "system, which a state dict of tensors never does", "--set", f"model.weights={hostile}")

        self.bad("head", "model.keep_head: the classifier of", "--set", f"model.weights={self.weights}",
                 "--set", "model.keep_head=true")
        code, text, _ = self.train("scale", "--set", "data.augment_resized_crop=true",
                                   "--set", "data.augment_crop_scale_min=1.5")
        self.assertEqual(code, 2, text)
        self.assertIn("data.augment_crop_scale_min", text)
        code, text, _ = self.train("alpha", "--set", "data.augment_mixup=true", "--set", "data.mixup_alpha=0")
        self.assertEqual(code, 2, text)
        self.assertIn("data.mixup_alpha", text)
        code, text, _ = self.train("url", "--set",
                                   "model.weights=https://download.pytorch.org/models/resnet18-f37072fd.pth")
        self.assertEqual(code, 2, text)
        self.assertIn("model.weights must be a file on this machine", text)

    def test_hostile_weights_files_are_refused_before_they_cost(self):
        torch.save(self.state, self.path_in("plain.pth"))
        with zipfile.ZipFile(self.path_in("plain.pth")) as z:
            entries = [(i.filename, z.read(i.filename)) for i in z.infolist()]
        storage = next(n for n, _ in entries if n.endswith("/data/0"))  # conv1.weight's 9408 floats

        # A zip bomb: conv1.weight's entry inflates to 1 GiB of zeros (1 MiB in the file). Refused on the sizes
        # the archive declares, before anything is inflated: the CLI's peak memory stays far below 1 GiB.
        bomb = self.path_in("bomb.pth")
        with zipfile.ZipFile(bomb, "w") as z:
            for name, data in entries:
                if name != storage:
                    z.writestr(name, data)
                    continue
                info = zipfile.ZipInfo(name)
                info.compress_type = zipfile.ZIP_DEFLATED
                with z.open(info, "w", force_zip64=True) as w:
                    zero = bytes(1 << 24)
                    for _ in range(64):
                        w.write(zero)
        z_info = zipfile.ZipFile(bomb).getinfo(storage)
        self.assertEqual(z_info.file_size, 1 << 30)
        measure = ("import resource, subprocess, sys; p = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
                   "print(p.returncode); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); "
                   "print(p.stdout + p.stderr)")
        out = os.path.join(self.tmp.name, "bomb-runs")
        p = subprocess.run([sys.executable, "-c", measure, CLI, "train", "--preset", "finetune-photos",
                            "--set", f"data.root={self.folder}", "--set", self.SIZE,
                            "--set", "train.epochs=1", "--set", f"model.weights={bomb}", "--out", out],
                           capture_output=True, text=True, timeout=HANG_LIMIT_S)
        code, peak_kib, text = p.stdout.split("\n", 2)
        print(f"zip bomb (1 GiB inflated): refused with a peak of {int(peak_kib) / 1024:.0f} MiB")
        self.assertEqual(int(code), 2, text)
        self.assertIn(f"holds {1 << 30} bytes, not the 9408 elements its pickle says", text)
        self.assertLess(int(peak_kib), 1 << 20)  # KiB: below the 1 GiB an inflated entry would take

        # Two entries named data.pkl, the second a payload: the readers disagree on which is meant, so refused.
        class Payload:
            def __reduce__(self):
                return (os.system, ("echo pwned",))
        twice = self.path_in("twice.pth")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # zipfile warns of the duplicate name, as it should
            with zipfile.ZipFile(twice, "w") as z:
                for name, data in entries:
                    z.writestr(name, data)
                    if name.endswith("/data.pkl"):
                        z.writestr(name, pickle.dumps({"fc.weight": Payload()}, protocol=2))
        self.bad("twice", "holds two entries named data.pkl", "--set", f"model.weights={twice}")

        # safetensors whose tensors overlap, or one shifted by a byte: the safetensors library refuses both.
        for case in ("overlap", "shifted"):
            path = self.path_in(f"{case}.safetensors")
            save_file({k: v.contiguous() for k, v in self.state.items()}, path)
            with open(path, "r+b") as f:
                n = struct.unpack("<Q", f.read(8))[0]
                header = json.loads(f.read(n))
                named = sorted((v["data_offsets"][0], k) for k, v in header.items() if k != "__metadata__")
                first, second = named[10][1], named[11][1]
                if case == "overlap":  # the second tensor's bytes start inside the first's
                    size = header[second]["data_offsets"][1] - header[second]["data_offsets"][0]
                    header[second]["data_offsets"] = [header[first]["data_offsets"][0],
                                                      header[first]["data_offsets"][0] + size]
                else:
                    header[first]["data_offsets"] = [o + 1 for o in header[first]["data_offsets"]]
                text = json.dumps(header, separators=(",", ":")).encode()
                self.assertLessEqual(len(text), n)
                f.seek(8)
                f.write(text + b" " * (n - len(text)))
            with self.assertRaises(Exception):  # the reference: the safetensors library itself
                load_file(path)
            self.bad(case, "the safetensors library refuses it too", "--set", f"model.weights={path}")

        # NaN among the weights: named when the file is read, not blamed on the learning rate at step 1.
        nan = {k: v.clone() for k, v in self.state.items()}
        nan["layer2.0.conv1.weight"][0, 0, 0, 0] = float("nan")
        torch.save(nan, self.path_in("nan.pth"))
        self.bad("nan", 'tensor "layer2.0.conv1.weight" holds 1 of', "--set", f"model.weights={self.path_in('nan.pth')}")

    def path_in(self, name):
        return os.path.join(self.tmp.name, name)


if __name__ == "__main__":
    unittest.main(verbosity=2)
