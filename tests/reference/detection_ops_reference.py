"""torchvision.ops' NMS and RoIAlign on seeded inputs, for test_detection_ops
(make_references.py writes them to detection_ops.json):
  nms           boxes with overlaps, tied scores and empty ones, kept at three
                IoU thresholds by torchvision.ops.nms; an IoU exactly at the
                threshold
  batched_nms   the same per category by torchvision.ops.batched_nms, small
                (the coordinate offset) and over 4,000 numbers (per category)
  roi_align     torchvision.ops.roi_align forward and its input gradient for
                a random weighting of the output: aligned or not, sampling
                ratio 2 and adaptive (0), spatial scales 1 and 0.25, boxes
                partly outside the image and smaller than a pixel
"""
import torch
import torchvision


def tolist(t):
    return t.detach().double().flatten().tolist()


def random_boxes(g, n, size=100.0):
    xy = torch.rand(n, 2, generator=g) * size
    wh = torch.rand(n, 2, generator=g) * size / 3
    boxes = torch.cat([xy, xy + wh], 1)
    boxes[::17, 2:] = boxes[::17, :2]  # some empty boxes
    return boxes


def make_nms():
    g = torch.Generator().manual_seed(11)
    cases = []
    for n in (0, 1, 60, 400):
        boxes = random_boxes(g, n)
        scores = torch.round(torch.rand(n, generator=g) * 20) / 20  # ties
        for iou in (0.3, 0.5, 0.7):
            cases.append({"boxes": tolist(boxes), "scores": tolist(scores), "iou": iou,
                          "keep": torchvision.ops.nms(boxes, scores, iou).tolist()})
    # IoU exactly at the threshold (100 / 200): kept, as only a larger IoU suppresses.
    boxes = torch.tensor([[0.0, 0, 10, 10], [0, 0, 10, 20], [0, 0, 20, 10], [1, 1, 9, 9]])
    scores = torch.tensor([0.9, 0.8, 0.7, 0.6])
    cases.append({"boxes": tolist(boxes), "scores": tolist(scores), "iou": 0.5,
                  "keep": torchvision.ops.nms(boxes, scores, 0.5).tolist()})
    return cases


def make_batched_nms():
    g = torch.Generator().manual_seed(12)
    cases = []
    for n, classes in ((50, 3), (300, 5), (1200, 4)):  # 1200 x 4 numbers: above 4,000, per category
        boxes = random_boxes(g, n)
        scores = torch.rand(n, generator=g)
        idxs = torch.randint(0, classes, (n,), generator=g)
        for iou in (0.5,):
            cases.append({"boxes": tolist(boxes), "scores": tolist(scores), "idxs": idxs.tolist(), "iou": iou,
                          "keep": torchvision.ops.batched_nms(boxes, scores, idxs, iou).tolist()})
    return cases


def make_roi_align():
    g = torch.Generator().manual_seed(13)
    cases = []
    x = torch.randn(2, 3, 12, 16, generator=g, dtype=torch.float64)
    rois = torch.tensor([[0, 1.0, 1.0, 9.0, 7.0], [1, -3.0, 2.0, 5.0, 14.0], [0, 10.2, 3.3, 10.6, 3.5],
                         [1, 0.0, 0.0, 15.9, 11.9], [0, 14.0, 10.0, 30.0, 20.0], [1, 2.5, 4.25, 7.75, 6.5]],
                        dtype=torch.float64)
    for aligned in (False, True):
        for ratio in (2, 0):
            for scale, out in ((1.0, (3, 4)), (0.25, (7, 7))):
                r = rois.clone()
                r[:, 1:] /= scale
                inp = x.clone().requires_grad_(True)
                y = torchvision.ops.roi_align(inp, r, out, spatial_scale=scale, sampling_ratio=ratio, aligned=aligned)
                w = torch.randn(y.shape, generator=g, dtype=torch.float64)
                (y * w).sum().backward()
                cases.append({"input_shape": list(x.shape), "input": tolist(x), "rois": tolist(r),
                              "output_size": list(out), "spatial_scale": scale, "sampling_ratio": ratio,
                              "aligned": aligned, "output": tolist(y), "weight": tolist(w),
                              "grad": tolist(inp.grad)})
    return cases


def make_detection_ops():
    return {"torchvision": torchvision.__version__, "nms": make_nms(), "batched_nms": make_batched_nms(),
            "roi_align": make_roi_align()}
