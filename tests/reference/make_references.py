#!/usr/bin/env python3
"""Golden numbers for the engine's numerics tests, computed by the installed
PyTorch (the same 2.11 whose LibTorch the engine links).

Writes into OUT_DIR:
  schedules.json    learning rate (and momentum) per optimizer step of
                    StepLR, CosineAnnealingLR, LinearLR, SequentialLR warm-up,
                    OneCycleLR and CyclicLR for several settings
  optimizers.json   parameters after each of a few SGD / Adam / AdamW steps
  loss_scaler.json  GradScaler's scale, skipped steps and parameters for a
                    scripted run of finite and inf/NaN gradients
  coco_eval.json    pycocotools' COCOeval figures on a detection fixture
                    (coco_reference.py)
  coco_segm_eval.json  the same with iouType "segm": the fixture's masks
                    (coco_reference.py)
  coco_mask.json    pycocotools' mask API on seeded masks, polygons and
                    boxes: counts text, area, box, IoU (coco_mask_reference.py)
  detection_ops.json  torchvision.ops' nms, batched_nms and roi_align (and
                    its gradient) on seeded inputs (detection_ops_reference.py)
  box_annotations/  the same boxes as COCO, YOLO and Pascal VOC files, and
                    broken ones (box_annotations_reference.py)
  segmentation/     PNG masks of every kind with Pillow's values, and
                    torchvision's references/segmentation ConfusionMatrix
                    figures on mask pairs (segmentation_reference.py)
  augment.json      torchvision.transforms.v2.functional's resized_crop,
                    rotate, adjust_brightness/contrast/saturation/hue on
                    fixed images
  data_statistics.json  Fashion-MNIST's pixel mean and std, exactly
  tasks.json        each task's loss and its gradient (loss.kind: mse, l1,
                    huber, smooth_l1, cross_entropy, focal, bce) on the same
                    outputs and targets, by torch.nn.functional
  builtin_cnn.json  the built-in CNN written in the usual order (conv, BN,
                    ReLU, max-pool per stage): its weights, a batch, and the
                    logits, loss, gradients and BatchNorm statistics of one
                    training pass, then logits in eval mode
Usage: make_references.py OUT_DIR
"""
import gzip
import json
import math
import os
import sys
from fractions import Fraction

import numpy as np
import torch
from torch import nn

from coco_mask_reference import make_coco_masks
from coco_reference import make_coco_eval, make_coco_segm_eval
from detection_ops_reference import make_detection_ops
from box_annotations_reference import write_box_annotations
from segmentation_reference import write_segmentation


def tolist(t):
    return t.detach().double().flatten().tolist()


# ---------------------------------------------------------------- schedules
def schedule_cases():
    """(name, settings for TrainConfig.schedule, base lr, total steps, optimizer kind, factory)."""
    S = torch.optim.lr_scheduler
    cases = []

    def add(name, schedule, base_lr, total, kind, make):
        cases.append((name, schedule, base_lr, total, kind, make))

    add("constant", {"kind": "constant"}, 0.05, 20, "sgd", None)
    for step_size, gamma in [(7, 0.1), (3, 0.5)]:
        add(f"step_{step_size}_{gamma}", {"kind": "step", "step": {"step_size": step_size, "gamma": gamma}},
            0.1, 30, "sgd", lambda o, s=step_size, g=gamma: S.StepLR(o, step_size=s, gamma=g))
    for t_max, eta_min in [(25, 0.0), (10, 0.001)]:
        add(f"cosine_{t_max}_{eta_min}", {"kind": "cosine", "cosine": {"t_max": t_max, "eta_min": eta_min}},
            0.1, 40, "sgd", lambda o, t=t_max, e=eta_min: S.CosineAnnealingLR(o, T_max=t, eta_min=e))
    add("cosine_auto_tmax", {"kind": "cosine"}, 0.02, 33, "sgd",
        lambda o: S.CosineAnnealingLR(o, T_max=33, eta_min=0.0))
    for sf, ef, it in [(1 / 3, 1.0, 5), (0.1, 0.5, 12), (1.0, 0.2, 8)]:
        add(f"linear_{sf:.3f}_{ef}_{it}",
            {"kind": "linear", "linear": {"start_factor": sf, "end_factor": ef, "total_iters": it}},
            0.1, 20, "sgd", lambda o, a=sf, b=ef, c=it: S.LinearLR(o, start_factor=a, end_factor=b, total_iters=c))
    # Linear warm-up then the main schedule, as SequentialLR composes them.
    add("warmup_cosine", {"kind": "cosine", "warmup_steps": 5, "warmup_start_factor": 0.1,
                          "cosine": {"t_max": 20, "eta_min": 0.0}}, 0.1, 25, "sgd",
        lambda o: S.SequentialLR(o, [S.LinearLR(o, start_factor=0.1, end_factor=1.0, total_iters=5),
                                     S.CosineAnnealingLR(o, T_max=20)], milestones=[5]))
    add("warmup_step", {"kind": "step", "warmup_steps": 4, "warmup_start_factor": 0.25,
                        "step": {"step_size": 5, "gamma": 0.5}}, 0.2, 20, "sgd",
        lambda o: S.SequentialLR(o, [S.LinearLR(o, start_factor=0.25, end_factor=1.0, total_iters=4),
                                     S.StepLR(o, step_size=5, gamma=0.5)], milestones=[4]))
    onecycles = [
        dict(max_lr=0.1, pct_start=0.3, anneal="cos", div_factor=25.0, final_div_factor=1e4, three_phase=False),
        dict(max_lr=0.5, pct_start=0.25, anneal="linear", div_factor=10.0, final_div_factor=100.0, three_phase=False),
        dict(max_lr=0.05, pct_start=0.4, anneal="cos", div_factor=5.0, final_div_factor=50.0, three_phase=True),
        dict(max_lr=0.2, pct_start=0.2, anneal="linear", div_factor=25.0, final_div_factor=1e4, three_phase=True),
    ]
    for i, oc in enumerate(onecycles):
        for kind in ["sgd", "adam"]:
            add(f"onecycle_{i}_{kind}", {"kind": "onecycle", "onecycle": dict(oc, total_steps=50)}, 0.01, 50, kind,
                lambda o, c=oc: S.OneCycleLR(o, max_lr=c["max_lr"], total_steps=50, pct_start=c["pct_start"],
                                             anneal_strategy=c["anneal"], div_factor=c["div_factor"],
                                             final_div_factor=c["final_div_factor"],
                                             three_phase=c["three_phase"]))
    # total_steps 0 means "the run's steps"
    add("onecycle_auto_total", {"kind": "onecycle", "onecycle": {"max_lr": 0.1}}, 0.01, 37, "sgd",
        lambda o: S.OneCycleLR(o, max_lr=0.1, total_steps=37))
    add("onecycle_no_momentum", {"kind": "onecycle", "onecycle": {"max_lr": 0.1, "cycle_momentum": False,
                                                                  "total_steps": 30}}, 0.01, 30, "sgd",
        lambda o: S.OneCycleLR(o, max_lr=0.1, total_steps=30, cycle_momentum=False))
    cyclics = [
        dict(base_lr=0.001, max_lr=0.1, step_size_up=5, step_size_down=0, mode="triangular", gamma=1.0),
        dict(base_lr=0.01, max_lr=0.2, step_size_up=4, step_size_down=7, mode="triangular2", gamma=1.0),
        dict(base_lr=0.001, max_lr=0.05, step_size_up=6, step_size_down=3, mode="exp_range", gamma=0.97),
    ]
    for i, cy in enumerate(cyclics):
        for kind in ["sgd", "adam"]:
            add(f"cyclic_{i}_{kind}", {"kind": "cyclic", "cyclic": cy}, 0.01, 40, kind,
                lambda o, c=cy: S.CyclicLR(o, base_lr=c["base_lr"], max_lr=c["max_lr"],
                                           step_size_up=c["step_size_up"],
                                           step_size_down=c["step_size_down"] or None, mode=c["mode"],
                                           gamma=c["gamma"], base_momentum=0.8, max_momentum=0.9))
    return cases


def make_schedules():
    out = []
    for name, schedule, base_lr, total, kind, make in schedule_cases():
        p = torch.nn.Parameter(torch.zeros(1))
        if kind == "sgd":
            opt = torch.optim.SGD([p], lr=base_lr, momentum=0.9)
        else:
            opt = torch.optim.Adam([p], lr=base_lr, betas=(0.9, 0.999))
        sched = make(opt) if make else None
        lrs, moms = [], []
        for _ in range(total):
            g = opt.param_groups[0]
            lrs.append(g["lr"])
            moms.append(g["momentum"] if kind == "sgd" else g["betas"][0])
            p.grad = torch.zeros(1)
            opt.step()
            if sched:
                sched.step()
        out.append({"name": name, "schedule": schedule, "base_lr": base_lr, "total_steps": total,
                    "optimizer": kind, "lr": lrs, "momentum": moms})
    return out


# --------------------------------------------------------------- optimizers
def make_optimizers():
    torch.manual_seed(0)
    shapes = [(4, 3), (3,), (2, 2, 3)]
    steps = 4
    params0 = [torch.randn(s, dtype=torch.float32) for s in shapes]
    grads = [[torch.randn(s, dtype=torch.float32) for s in shapes] for _ in range(steps)]
    lrs = [0.1, 0.05, 0.08, 0.02]
    configs = [
        {"kind": "sgd", "momentum": 0.0, "nesterov": False, "weight_decay": 0.0},
        {"kind": "sgd", "momentum": 0.9, "nesterov": False, "weight_decay": 0.0},
        {"kind": "sgd", "momentum": 0.9, "nesterov": True, "weight_decay": 5e-4},
        {"kind": "sgd", "momentum": 0.5, "nesterov": False, "weight_decay": 0.01},
        {"kind": "adam", "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.0},
        {"kind": "adam", "beta1": 0.8, "beta2": 0.99, "eps": 1e-6, "weight_decay": 0.01},
        {"kind": "adamw", "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.01},
        {"kind": "adamw", "beta1": 0.85, "beta2": 0.95, "eps": 1e-7, "weight_decay": 0.1},
    ]
    cases = []
    for cfg in configs:
        for fused in [False, True]:
            ps = [torch.nn.Parameter(p.clone()) for p in params0]
            if cfg["kind"] == "sgd":
                opt = torch.optim.SGD(ps, lr=lrs[0], momentum=cfg["momentum"], nesterov=cfg["nesterov"],
                                      weight_decay=cfg["weight_decay"], fused=fused)
            else:
                cls = torch.optim.Adam if cfg["kind"] == "adam" else torch.optim.AdamW
                opt = cls(ps, lr=lrs[0], betas=(cfg["beta1"], cfg["beta2"]), eps=cfg["eps"],
                          weight_decay=cfg["weight_decay"], fused=fused)
            after = []
            for s in range(steps):
                for g in opt.param_groups:
                    g["lr"] = lrs[s]
                for p, gr in zip(ps, grads[s]):
                    p.grad = gr.clone()
                opt.step()
                after.append([tolist(p) for p in ps])
            cases.append({"optimizer": cfg, "fused": fused, "after": after})
    # Parameter groups (train.finetune's discriminative rates): the first
    # tensor at the step's rate, the others at a tenth of it, as two PyTorch
    # parameter groups whose lr the schedule sets to lr * factor.
    factors = [1.0, 0.1, 0.1]
    for cfg in (configs[2], configs[6], configs[7]):
        ps = [torch.nn.Parameter(p.clone()) for p in params0]
        groups = [{"params": [ps[0]], "factor": 1.0}, {"params": ps[1:], "factor": 0.1}]
        if cfg["kind"] == "sgd":
            opt = torch.optim.SGD(groups, lr=lrs[0], momentum=cfg["momentum"], nesterov=cfg["nesterov"],
                                  weight_decay=cfg["weight_decay"], fused=True)
        else:
            opt = torch.optim.AdamW(groups, lr=lrs[0], betas=(cfg["beta1"], cfg["beta2"]), eps=cfg["eps"],
                                    weight_decay=cfg["weight_decay"], fused=True)
        after = []
        for s in range(steps):
            for g in opt.param_groups:
                g["lr"] = lrs[s] * g["factor"]
            for p, gr in zip(ps, grads[s]):
                p.grad = gr.clone()
            opt.step()
            after.append([tolist(p) for p in ps])
        cases.append({"optimizer": cfg, "fused": True, "factors": factors, "after": after})
    return {"shapes": [list(s) for s in shapes], "params0": [tolist(p) for p in params0],
            "grads": [[tolist(g) for g in step] for step in grads], "lrs": lrs, "cases": cases}


# -------------------------------------------------------------- loss scaler
def make_loss_scaler():
    torch.manual_seed(1)
    # growth after 3 clean steps, backoff on inf and NaN, several in a row
    pattern = ["ok", "ok", "ok", "ok", "inf", "ok", "ok", "ok", "ok", "nan", "inf", "ok", "ok", "ok", "ok", "ok",
               "ok", "ok", "inf", "ok"]
    cfg = {"init_scale": 1024.0, "growth_factor": 2.0, "backoff_factor": 0.5, "growth_interval": 3}
    p = torch.nn.Parameter(torch.randn(5))
    p0 = p.detach().clone()
    opt = torch.optim.SGD([p], lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=cfg["init_scale"], growth_factor=cfg["growth_factor"],
                                  backoff_factor=cfg["backoff_factor"], growth_interval=cfg["growth_interval"])
    grads, scales, params, skipped = [], [], [], []
    for kind in pattern:
        g = torch.randn(5)
        if kind == "inf":
            g[2] = math.inf
        elif kind == "nan":
            g[0] = math.nan
        grads.append([float(x) for x in g.tolist()])
        # d/dp of (p . g) is g; backward of the scaled loss leaves g * scale
        scaler.scale((p * g).sum()).backward()
        before = p.detach().clone()
        scaler.step(opt)
        scaler.update()
        skipped.append(bool(torch.equal(before, p.detach())))
        scales.append(scaler.get_scale())
        params.append(tolist(p))
        opt.zero_grad(set_to_none=True)
    return {"config": cfg, "pattern": pattern, "params0": tolist(p0), "grads": grads, "scales": scales,
            "skipped": skipped, "params": params, "lr": 0.1}


def make_data_statistics():
    """Fashion-MNIST's training images: the mean and unbiased std of the pixels
    in [0, 1], as the studio normalises with. Exact: integer sums by torch in
    int64, then rational arithmetic (torch's float64 std() of the 47 million
    pixels is 1.4e-10 off, more than the studio's own error)."""
    path = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"
    with gzip.open(path, "rb") as f:
        raw = np.frombuffer(f.read(), dtype=np.uint8, offset=16)
    v = torch.from_numpy(raw.copy()).to(torch.int64)
    n, s, q = v.numel(), int(v.sum()), int((v * v).sum())
    mean = Fraction(s, 255 * n)
    var = (Fraction(q, 255 * 255) - Fraction(s, 255) * mean) / (n - 1)
    return {"path": path, "count": n, "mean": float(mean), "std": math.sqrt(var)}


def make_builtin_cnn():
    """The studio's CNN (model.kind cnn, width 8, depth 3, 1x28x28 input, 10
    classes) as PyTorch users write it: Conv2d-BatchNorm2d-ReLU-MaxPool2d per
    stage. The studio pools before the ReLU; its results must be these."""
    torch.manual_seed(3)
    layers, c = [], 1
    for i in range(3):
        out = 8 << i
        layers += [nn.Conv2d(c, out, 3, padding=1, bias=False), nn.BatchNorm2d(out), nn.ReLU(), nn.MaxPool2d(2)]
        c = out
    model = nn.Sequential(*layers, nn.Flatten(), nn.Linear(c * 3 * 3, 10))
    state = {k: tolist(v) for k, v in model.state_dict().items() if v.is_floating_point()}
    shapes = {k: list(v.shape) for k, v in model.state_dict().items() if v.is_floating_point()}
    x = torch.randn(16, 1, 28, 28)
    y = torch.randint(0, 10, (16,))
    model.train()
    logits = model(x)
    loss = nn.functional.cross_entropy(logits, y)
    loss.backward()
    grads = {k: tolist(p.grad) for k, p in model.named_parameters()}
    running = {k: tolist(v) for k, v in model.state_dict().items() if "running" in k}
    model.eval()
    with torch.no_grad():
        eval_logits = model(x)
    return {"width": 8, "depth": 3, "state": state, "shapes": shapes, "x": tolist(x), "y": y.tolist(),
            "logits": tolist(logits), "loss": loss.item(), "grads": grads, "running": running,
            "eval_logits": tolist(eval_logits)}


def make_tasks():
    """Losses of the tasks (mean over the batch, as the engine's step takes
    them) and their gradients with respect to the outputs."""
    F = torch.nn.functional
    g = torch.Generator().manual_seed(26)
    shape = [16, 3]
    out = (torch.randn(shape, generator=g) * 2).double()
    target = torch.randn(shape, generator=g).double()
    labels = torch.randint(0, 3, (16,), generator=g)
    cases = []
    for name, fn in [("mse", lambda o: F.mse_loss(o, target)), ("l1", lambda o: F.l1_loss(o, target)),
                     ("huber", lambda o: F.huber_loss(o, target, delta=0.7)),
                     ("smooth_l1", lambda o: F.smooth_l1_loss(o, target, beta=0.7)),
                     ("cross_entropy", lambda o: F.cross_entropy(o, labels))]:
        o = out.clone().float().requires_grad_(True)
        loss = fn(o.double() if name != "cross_entropy" else o)
        loss.backward()
        cases.append({"loss": name, "delta": 0.7, "value": loss.item(), "grad": tolist(o.grad)})
    # Classification's options: class weights, label smoothing, focal loss
    # (-(1 - p_y)^gamma log p_y, the mean weighted by the labels' weights as
    # cross_entropy's weight= weighs it; Lin et al. 2017).
    weights = torch.tensor([0.5, 2.0, 1.25])

    def focal(o, gamma, w=None):
        logp = F.log_softmax(o, 1).gather(1, labels.unsqueeze(1)).squeeze(1)
        f = (1 - logp.exp()) ** gamma * -logp
        if w is None:
            return f.mean()
        wy = w[labels]
        return (f * wy).sum() / wy.sum()

    for name, extra, fn in [
            ("cross_entropy", {"class_weights": "0.5, 2, 1.25"}, lambda o: F.cross_entropy(o, labels, weight=weights)),
            ("cross_entropy", {"label_smoothing": 0.1}, lambda o: F.cross_entropy(o, labels, label_smoothing=0.1)),
            ("cross_entropy", {"class_weights": "0.5, 2, 1.25", "label_smoothing": 0.2},
             lambda o: F.cross_entropy(o, labels, weight=weights, label_smoothing=0.2)),
            ("focal", {"focal_gamma": 2.0}, lambda o: focal(o, 2.0)),
            ("focal", {"focal_gamma": 0.0}, lambda o: focal(o, 0.0)),
            ("focal", {"focal_gamma": 1.5, "class_weights": "0.5, 2, 1.25"}, lambda o: focal(o, 1.5, weights))]:
        o = out.clone().float().requires_grad_(True)
        loss = fn(o)
        loss.backward()
        cases.append({"loss": name, "delta": 0.7, **extra, "value": loss.item(), "grad": tolist(o.grad)})
    # Multi-label: binary cross-entropy with logits on 0/1 targets, with and
    # without pos_weight.
    tags = (target > 0).float()
    pos_weight = torch.tensor([0.5, 2.0, 3.0])
    for extra, fn in [({}, lambda o: F.binary_cross_entropy_with_logits(o, tags)),
                      ({"pos_weight": "0.5, 2, 3"},
                       lambda o: F.binary_cross_entropy_with_logits(o, tags, pos_weight=pos_weight))]:
        o = out.clone().float().requires_grad_(True)
        loss = fn(o)
        loss.backward()
        cases.append({"loss": "bce", "delta": 0.7, **extra, "value": loss.item(), "grad": tolist(o.grad)})
    return {"shape": shape, "output": tolist(out.float()), "target": tolist(target.float()),
            "tags": tolist(tags), "labels": labels.tolist(), "cases": cases}


# ------------------------------------------------------------ augmentations
def make_augment():
    """torchvision.transforms.v2.functional on fixed float images in [0, 1]."""
    import torchvision.transforms.v2.functional as TF
    g = torch.Generator().manual_seed(5)
    rgb = torch.rand(3, 20, 24, generator=g)
    gray = torch.rand(1, 20, 24, generator=g)
    square = torch.rand(3, 16, 16, generator=g)
    cases = []

    def add(name, image, op, params, out):
        cases.append({"name": name, "image": image, "op": op, "params": params,
                      "shape": list(out.shape), "out": tolist(out.contiguous())})

    for img_name, img in (("rgb", rgb), ("gray", gray)):
        add(f"resized_crop {img_name}", img_name, "resized_crop", [2, 3, 10, 14, 20, 24],
            TF.resized_crop(img, 2, 3, 10, 14, [20, 24], antialias=True))
        add(f"resized_crop down {img_name}", img_name, "resized_crop", [0, 1, 18, 20, 9, 11],
            TF.resized_crop(img, 0, 1, 18, 20, [9, 11], antialias=True))
        for deg in (30.0, -73.5, 180.0, 12.25):
            add(f"rotate {deg} {img_name}", img_name, "rotate", [deg], TF.rotate(img, deg, fill=0))
        for f in (0.0, 0.6, 1.3):
            add(f"brightness {f} {img_name}", img_name, "brightness", [f], TF.adjust_brightness(img, f))
            add(f"contrast {f} {img_name}", img_name, "contrast", [f], TF.adjust_contrast(img, f))
            add(f"saturation {f} {img_name}", img_name, "saturation", [f], TF.adjust_saturation(img, f))
        for h in (-0.35, 0.2, 0.5):
            add(f"hue {h} {img_name}", img_name, "hue", [h], TF.adjust_hue(img, h))
    add("rotate 90 square", "square", "rotate", [90.0], TF.rotate(square, 90.0, fill=0))
    # RandAugment's and TrivialAugmentWide's operations through torchvision's
    # own dispatcher (_apply_image_or_video_transform: nearest, fill None),
    # at magnitudes of their tables; and the tables themselves.
    from torchvision.transforms import v2 as T2
    ra, ta = T2.RandAugment(), T2.TrivialAugmentWide()
    names = list(ra._AUGMENTATION_SPACE.keys())
    h, w = rgb.shape[-2:]
    policies = {}
    for policy, t in (("randaugment", ra), ("trivialaugment", ta)):
        table = {}
        for name, (fn, signed) in t._AUGMENTATION_SPACE.items():
            m = fn(31, h, w)
            table[name] = {"signed": signed, "magnitudes": None if m is None else [float(v) for v in m]}
        policies[policy] = table
    picks = {"ShearX": [0.3, -0.99, 0.5], "ShearY": [-0.3, 0.99], "TranslateX": [10.87, -7.6, 32.0],
             "TranslateY": [-9.06, 5.0], "Rotate": [30.0, -135.0, 12.5], "Brightness": [0.9, -0.6],
             "Color": [0.99, -0.33], "Contrast": [0.6, -0.99], "Sharpness": [0.9, -0.9, 0.33],
             "Posterize": [8.0, 6.0, 4.0, 2.0], "Solarize": [1.0, 0.6, 0.1333, 0.0], "AutoContrast": [0.0],
             "Equalize": [0.0], "Identity": [0.0]}
    for img_name, img in (("rgb", rgb), ("gray", gray)):
        for name, mags in picks.items():
            for m in mags:
                out = ra._apply_image_or_video_transform(img, name, m, interpolation=ra.interpolation,
                                                         fill=ra._fill)
                add(f"{name} {m} {img_name}", img_name, "auto", [names.index(name), m], out)
    # Equalize and AutoContrast on flat and low-contrast images (their special cases).
    flat = torch.full((3, 8, 9), 0.4)
    low = 0.3 + 0.2 * torch.rand(3, 12, 10, generator=g)
    for img_name, img in (("flat", flat), ("low", low)):
        for name in ("Equalize", "AutoContrast"):
            out = ra._apply_image_or_video_transform(img, name, 0.0, interpolation=ra.interpolation, fill=ra._fill)
            add(f"{name} {img_name}", img_name, "auto", [names.index(name), 0.0], out)
    # MixUp and CutMix draw their share inside the transform: it is read back
    # from the targets (example 0's class, which example 3 rolled onto it has
    # not), and CutMix's box from the pixels that changed.
    from torchvision.transforms import v2
    batch = torch.rand(4, 3, 10, 12, generator=g)
    labels = torch.tensor([0, 2, 1, 2])
    mixes = []
    for kind, make in (("mixup", lambda: v2.MixUp(alpha=1.0, num_classes=3)),
                       ("cutmix", lambda: v2.CutMix(alpha=1.0, num_classes=3))):
        for seed in (1, 2, 3):
            torch.manual_seed(seed)
            out, targets = make()(batch, labels)
            case = {"kind": kind, "lam": float(targets[0, 0]), "out": tolist(out), "targets": tolist(targets)}
            if kind == "cutmix":
                changed = (out != batch).any(dim=0).any(dim=0)
                rows, cols = changed.any(dim=1).nonzero().flatten(), changed.any(dim=0).nonzero().flatten()
                case["box"] = [int(rows[0]), int(rows[-1]) + 1, int(cols[0]), int(cols[-1]) + 1] if len(rows) else [0, 0, 0, 0]
            mixes.append(case)
    return {"images": {"rgb": {"shape": list(rgb.shape), "data": tolist(rgb)},
                       "gray": {"shape": list(gray.shape), "data": tolist(gray)},
                       "square": {"shape": list(square.shape), "data": tolist(square)},
                       "flat": {"shape": list(flat.shape), "data": tolist(flat)},
                       "low": {"shape": list(low.shape), "data": tolist(low)}},
            "policy_ops": names, "policies": policies, "cases": cases, "batch": tolist(batch), "labels": labels.tolist(), "mixes": mixes}


def to_json(value):
    # inf/NaN are not JSON: write them as strings the tests parse back.
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, list):
        return [to_json(v) for v in value]
    if isinstance(value, dict):
        return {k: to_json(v) for k, v in value.items()}
    return value


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "reference"
    os.makedirs(out, exist_ok=True)
    torch.set_num_threads(1)
    for name, data in [("schedules", make_schedules()), ("optimizers", make_optimizers()),
                       ("loss_scaler", make_loss_scaler()), ("data_statistics", make_data_statistics()),
                       ("builtin_cnn", make_builtin_cnn()), ("tasks", make_tasks()),
                       ("augment", make_augment()), ("coco_eval", make_coco_eval()), ("coco_segm_eval", make_coco_segm_eval()),
                       ("coco_mask", make_coco_masks()),
                       ("detection_ops", make_detection_ops())]:
        with open(os.path.join(out, name + ".json"), "w") as f:
            json.dump({"torch_version": torch.__version__, "data": to_json(data)}, f)
        print(f"wrote {out}/{name}.json (torch {torch.__version__})")
    print(f"wrote {write_box_annotations(out)['folder']} (COCO, YOLO and VOC files)")
    print(f"wrote {write_segmentation(out)} (masks and their figures)")


if __name__ == "__main__":
    main()
