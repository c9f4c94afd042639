#!/usr/bin/env python3
"""Training Studio's export check, run by `training-studio-cli export` in the
studio's Python (packaging/setup.sh installs torch, onnx, onnxscript and
onnxruntime there).

Every file of the export is loaded as a person would in Python and run on the
run's own examples (the examples file the studio wrote: raw pixels or
features, and the studio's outputs on them; a segmenter's: test images cut
square to base_size and its "out" logits, compared pixel by pixel),
preprocessed as preprocessing.json says:
  - model.safetensors with model.py's build(), and model.pt (a state dict),
    or model.ts (TorchScript) for a TorchScript model, in PyTorch;
  - with --format onnx: model.onnx, written here by torch.onnx.export (the
    TorchScript exporter; the dynamo one for a module it cannot trace)
    with a dynamic batch axis (a segmenter's height and width too), in
    ONNX Runtime;
  - with --quantize int8: model.int8.onnx by ONNX Runtime's static
    quantization (QDQ), calibrated on the run's training examples, and both
    ONNX models' test figure and CPU speed.
The figures go to export.json. Exit 0: every file answers as the studio does;
1: one does not (the largest difference over --tolerance), the files kept;
2: bad input (a module missing, an opset the exporter refuses).
"""
import argparse
import contextlib
import io
import json
import os
import sys
import time
import warnings

EXPORT_FORMAT = 1


def fail(code, message):
    print(f"error: {message}", flush=True)
    sys.exit(code)


try:
    import numpy as np
    import torch
    from safetensors import safe_open
    from safetensors.torch import load_file
except ImportError as e:
    fail(2, f"export check: {e.name} is not installed in {sys.executable}: run packaging/setup.sh, or set "
            "STUDIO_PYTHON to a Python that has torch, safetensors, onnx and onnxruntime")


def need_onnx():
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
        import onnxscript  # noqa: F401
    except ImportError as e:
        fail(2, f"export --format onnx: {e.name} is not installed in {sys.executable}: run packaging/setup.sh "
                "(it installs onnx, onnxscript and onnxruntime), or set STUDIO_PYTHON to a Python that has them")


def preprocess(pre, raw):
    """preprocessing.json's recipe on the raw examples: float32 model input."""
    norm = pre.get("normalization") or {}
    if pre["input"] == "table":
        x = raw.astype(np.float32)
        mean = np.asarray(norm.get("mean", [0.0] * x.shape[1]), np.float64)
        std = np.asarray(norm.get("std", [1.0] * x.shape[1]), np.float64)
        return ((x - mean) / std).astype(np.float32)
    x = raw
    if "center_crop" in pre:  # torchvision's CenterCrop offsets on the stored pixels
        h, w = pre["center_crop"]
        top, left = int(round((x.shape[2] - h) / 2.0)), int(round((x.shape[3] - w) / 2.0))
        x = x[:, :, top:top + h, left:left + w]
    c = x.shape[1]
    mean = np.asarray(norm.get("mean", [0.0] * c), np.float32).reshape(1, c, 1, 1)
    std = np.asarray(norm.get("std", [1.0] * c), np.float32).reshape(1, c, 1, 1)
    return ((x.astype(np.float32) / np.float32(255.0)) - mean) / std


def agreement(pre, a, b):
    """The share of examples on which two outputs decide the same (top-1, every label's decision, or a
    segmenter's class per pixel: the arg-max over axis 1 of [N, classes, H, W] as well)."""
    task = pre.get("task", "classification")
    if task == "regression":
        return None
    if task == "multilabel":
        t = np.asarray(pre["targets"]["thresholds"], np.float64)
        da, db = 1 / (1 + np.exp(-a.astype(np.float64))) >= t, 1 / (1 + np.exp(-b.astype(np.float64))) >= t
        return float(np.mean(np.all(da == db, axis=1)))
    return float(np.mean(a.argmax(1) == b.argmax(1)))


def figure(pre, out, y):
    """The test figure: accuracy (classes), R² averaged over the targets (regression), or the share of label
    decisions that are right (multi-label)."""
    task = pre.get("task", "classification")
    if task == "regression":
        t = pre["targets"]
        values = out.astype(np.float64) * np.asarray(t["std"]) + np.asarray(t["mean"])
        y = y.astype(np.float64)
        ss_res = ((y - values) ** 2).sum(0)
        ss_tot = ((y - y.mean(0)) ** 2).sum(0)
        return "r2", float(np.mean(1 - ss_res / np.where(ss_tot == 0, 1, ss_tot)))
    if task == "multilabel":
        t = np.asarray(pre["targets"]["thresholds"], np.float64)
        decided = 1 / (1 + np.exp(-out.astype(np.float64))) >= t
        return "label_accuracy", float(np.mean(decided == (y >= 0.5)))
    return "accuracy", float(np.mean(out.argmax(1) == y))


class Checker:
    def __init__(self, pre, x, want, tolerance):
        self.pre, self.x, self.want, self.tolerance = pre, x, want, tolerance
        self.rows, self.failed = [], []

    def check(self, file, how, got):
        got = np.asarray(got, np.float32)
        diff = float(np.abs(got - self.want).max()) if got.shape == self.want.shape else float("inf")
        agree = agreement(self.pre, got, self.want) if got.shape == self.want.shape else 0.0
        ok = diff <= self.tolerance
        self.rows.append({"file": file, "loaded_with": how, "examples": int(self.x.shape[0]),
                          "largest_difference": diff, "top1_agreement": agree, "passed": ok})
        unit = "of the pixels' classes agree" if got.ndim == 4 else "top-1 agreement"
        said = f"{agree * 100:.2f} % {unit}" if agree is not None else "values"
        print(f"check: {file} ({how}) on {self.x.shape[0]} examples: largest difference {diff:.3g}, {said}"
              + ("" if ok else f": over the tolerance {self.tolerance:g}"), flush=True)
        if not ok:
            self.failed.append(f"{file}: largest difference {diff:.3g} over the tolerance {self.tolerance:g}"
                               + (f", top-1 agreement {agree * 100:.2f} %" if agree is not None else ""))


def torch_models(folder, pre):
    """The export's PyTorch files, each loaded as its README says: (file, how, module)."""
    out = []
    if os.path.exists(os.path.join(folder, "model.ts")):
        out.append(("model.ts", "torch.jit.load", torch.jit.load(os.path.join(folder, "model.ts"), map_location="cpu")))
        return out
    scope = {"__name__": "model", "__file__": os.path.join(folder, "model.py")}
    with open(os.path.join(folder, "model.py")) as f:
        exec(compile(f.read(), os.path.join(folder, "model.py"), "exec"), scope)
    for file, how, load in (("model.safetensors", "model.py build() + safetensors load_file", load_file),
                            ("model.pt", "model.py build() + torch.load", lambda p: torch.load(p, map_location="cpu"))):
        if not os.path.exists(os.path.join(folder, file)):  # a segmenter's export has no model.pt
            continue
        m = scope["build"]()
        m.load_state_dict(load(os.path.join(folder, file)), strict=True)
        out.append((file, how, Out(m).eval() if pre.get("task") == "segmentation" else m.eval()))
    return out


class Out(torch.nn.Module):
    """A torchvision segmenter's "out" logits (it answers a dict of "out" and "aux")."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


def export_onnx(module, x, path, opset, output, spatial=False):
    """torch.onnx.export with the batch axis dynamic (and height and width, spatial); the exporter's
    chatter kept out of the log. The TorchScript exporter first: on this project's 2-core VM it took
    0.03 s for the Fashion-MNIST CNN, 0.41 s for a ResNet-18 and 0.47 s for LRASPP, where the dynamo
    exporter took 1.9, 2.7 and 13.7 s, with the same outputs in ONNX Runtime (within 2e-6); its trace
    keeps a segmenter's interpolation sizes as shape operations, so any height and width run. A module
    it cannot trace goes through the dynamo exporter (a TorchScript model has no other)."""
    sample = torch.from_numpy(x[:2].copy())
    scripted = isinstance(module, torch.jit.ScriptModule)
    chatter = io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(chatter), contextlib.redirect_stderr(chatter):
        warnings.simplefilter("ignore")
        axes = {0: "batch", 2: "height", 3: "width"} if spatial else {0: "batch"}
        try:
            torch.onnx.export(module, (sample,), path, input_names=["input"], output_names=[output],
                              dynamic_axes={"input": axes, output: axes}, opset_version=opset, dynamo=False)
            return "TorchScript"
        except Exception:
            if scripted:
                raise
        dims = {0: torch.export.Dim("batch", min=1, max=1 << 16)}
        if spatial:  # 32 px at least: MobileNetV3's and ResNet's strides
            dims.update({2: torch.export.Dim("height", min=32, max=1 << 14),
                         3: torch.export.Dim("width", min=32, max=1 << 14)})
        program = torch.onnx.export(module, (sample,), None, input_names=["input"], output_names=[output],
                                    dynamic_shapes=(dims,), opset_version=opset, dynamo=True)
        program.save(path)
    return "dynamo"


def ort_session(path, threads=0):
    import onnxruntime as ort
    options = ort.SessionOptions()
    if threads:
        options.intra_op_num_threads = threads
    options.log_severity_level = 3
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def run_ort(session, x, batch=256):
    batch = max(1, min(batch, (64 << 20) // max(1, x[:1].nbytes)))  # a segmenter's large images a few at a time
    return np.concatenate([session.run(None, {"input": x[i:i + batch]})[0] for i in range(0, len(x), batch)])


def speed(session, x, window_s=0.3):
    """CPU speed in ONNX Runtime: batch 1's median latency (ms) over 50 runs and batch 32's examples
    per second over window_s (5 runs at least). 0.3 s, not 1 s: an int8 export measured both models
    for 2 s of its 11 (a Fashion-MNIST CNN, 2-core VM); int8's batch-32 ratio to fp32 was 0.49x
    with 1 s, 0.52x to 0.54x in three exports with 0.3 s."""
    one, many = x[:1], np.resize(x, (32,) + x.shape[1:]).astype(np.float32)
    for _ in range(5):
        session.run(None, {"input": one})
    times = []
    for _ in range(50):
        t = time.perf_counter()
        session.run(None, {"input": one})
        times.append(time.perf_counter() - t)
    session.run(None, {"input": many})
    t, rounds = time.perf_counter(), 0
    while rounds < 5 or time.perf_counter() - t < window_s:
        session.run(None, {"input": many})
        rounds += 1
    return {"batch1_latency_ms": float(np.median(times) * 1000),
            "batch32_examples_per_second": float(32 * rounds / (time.perf_counter() - t))}


def quantize(fp32, path, calibration, method):
    from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType,
                                          quantize_static)
    from onnxruntime.quantization.shape_inference import quant_pre_process

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.batches = iter([calibration[i:i + 1] for i in range(len(calibration))])

        def get_next(self):
            b = next(self.batches, None)
            return None if b is None else {"input": b}

    prepared = path + ".prepared.onnx"
    chatter = io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(chatter), contextlib.redirect_stderr(chatter):
        warnings.simplefilter("ignore")
        try:
            quant_pre_process(fp32, prepared, skip_symbolic_shape=True)
            source = prepared
        except Exception:  # the pre-processing is an optimisation; quantize the model as it is
            source = fp32
        methods = {"minmax": CalibrationMethod.MinMax, "entropy": CalibrationMethod.Entropy,
                   "percentile": CalibrationMethod.Percentile}
        # Activations uint8, weights int8 per channel (U8S8): on x86-64 ONNX Runtime's int8 kernels are the
        # unsigned-by-signed products (VNNI); int8 activations (S8S8) ran slower than fp32 here (resnet18 at
        # 224 px, 2-core Xeon: 13.7 ms against 12.0 ms at batch 1; U8S8 5.0 ms).
        quantize_static(source, path, Reader(), quant_format=QuantFormat.QDQ, activation_type=QuantType.QUInt8,
                        weight_type=QuantType.QInt8, per_channel=True, calibrate_method=methods[method])
    if os.path.exists(prepared):
        os.remove(prepared)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--export")
    p.add_argument("--examples")
    p.add_argument("--format", choices=["torch", "onnx"], default="torch")
    p.add_argument("--opset", type=int, default=18)
    p.add_argument("--quantize", choices=["none", "int8"], default="none")
    p.add_argument("--calibration", choices=["minmax", "entropy", "percentile"], default="minmax")
    p.add_argument("--tolerance", type=float, default=1e-4)
    p.add_argument("--max-drop", type=float, default=1.0)
    a = p.parse_args()
    if a.format == "onnx":
        need_onnx()  # exit 2 naming what is missing: the studio writes nothing then
    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    folder = a.export
    with open(os.path.join(folder, "preprocessing.json")) as f:
        pre = json.load(f)
    with safe_open(a.examples, "np") as f:
        tensors = {k: f.get_tensor(k) for k in f.keys()}
        meta = f.metadata() or {}
    x = preprocess(pre, tensors["parity_x"])
    checker = Checker(pre, x, tensors["studio_outputs"], a.tolerance)
    report = {"format": EXPORT_FORMAT, "tolerance": a.tolerance, "examples_from": meta.get("split", "test"),
              "torch": torch.__version__}
    modules = torch_models(folder, pre)
    with torch.no_grad():
        for file, how, module in modules:
            checker.check(file, how, module(torch.from_numpy(x)).numpy())
    if a.format == "onnx":
        import onnx
        import onnxruntime as ort
        names = pre["onnx"]  # the input's and output's names and meaning, as the studio wrote them
        output = names["output"]
        path = os.path.join(folder, "model.onnx")
        try:
            exporter = export_onnx(modules[0][2], x, path, a.opset, output,
                                   spatial=pre.get("task") == "segmentation")
        except Exception as e:
            fail(2, f"export --format onnx: torch.onnx.export could not export this model with opset {a.opset}: "
                    f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
        onnx.checker.check_model(path)
        fp32 = ort_session(path)
        checker.check("model.onnx", f"onnxruntime {ort.__version__}", run_ort(fp32, x))
        report["onnx"] = {**names, "opset": a.opset, "exporter": exporter, "onnx": onnx.__version__,
                          "onnxruntime": ort.__version__}
        if a.quantize == "int8" and not checker.failed:
            test_x, test_y = preprocess(pre, tensors["test_x"]), tensors["test_y"]
            int8_path = os.path.join(folder, "model.int8.onnx")
            quantize(path, int8_path, preprocess(pre, tensors["calibration_x"]), a.calibration)
            int8 = ort_session(int8_path)
            name, f32 = figure(pre, run_ort(fp32, test_x), test_y)
            _, i8 = figure(pre, run_ort(int8, test_x), test_y)
            drop = (f32 - i8) * 100
            report["int8"] = {"file": "model.int8.onnx", "method": "static QDQ: uint8 activations, per-channel int8 "
                              "weights", "calibration": a.calibration,
                              "calibration_examples": int(len(tensors["calibration_x"])), "figure": name,
                              "examples": int(len(test_x)), "split": meta.get("split", "test"),
                              "split_size": int(meta.get("split_size", len(test_x))), "fp32": f32, "int8": i8,
                              "drop_points": drop, "max_drop_points": a.max_drop, "drop_too_large": drop > a.max_drop,
                              "speed_fp32": speed(fp32, test_x), "speed_int8": speed(int8, test_x)}
            q = report["int8"]
            print(f"int8: {name} {f32 * 100:.2f} % in fp32, {i8 * 100:.2f} % in int8 on {len(test_x)} "
                  f"{q['split']} examples ({-drop:+.2f} points)" if name != "r2" else
                  f"int8: R² {f32:.4f} in fp32, {i8:.4f} in int8 on {len(test_x)} {q['split']} examples", flush=True)
            for kind in ("fp32", "int8"):
                s = q[f"speed_{kind}"]
                print(f"int8: {kind} on the CPU in ONNX Runtime: batch 1 {s['batch1_latency_ms']:.3f} ms, "
                      f"batch 32 {s['batch32_examples_per_second']:.0f} examples/s", flush=True)
            f, i = q["speed_fp32"], q["speed_int8"]
            q["speedup_batch1"] = f["batch1_latency_ms"] / i["batch1_latency_ms"]
            q["speedup_batch32"] = i["batch32_examples_per_second"] / f["batch32_examples_per_second"]
            print(f"int8: {q['speedup_batch1']:.2f}x fp32's speed at batch 1, {q['speedup_batch32']:.2f}x at batch 32",
                  flush=True)
            if drop > a.max_drop:
                print(f"warning: int8 loses {drop:.2f} points of {name}, more than --max-drop {a.max_drop:g}: "
                      "use model.onnx, or calibrate on more examples or by another --calibration", flush=True)
    report["checks"] = checker.rows
    report["passed"] = not checker.failed
    with open(os.path.join(folder, "export.json"), "w") as f:
        json.dump(report, f, indent=2)
        f.write("\n")
    if checker.failed:
        fail(1, "export check failed: the exported files do not answer as the studio does: "
                + "; ".join(checker.failed))


if __name__ == "__main__":
    main()
