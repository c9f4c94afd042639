#!/usr/bin/env python3
"""Reads a run's TensorBoard event files with TensorBoard's own reader
(EventAccumulator, which checks each record's CRC-32C) and compares them with
the run's files: every metrics.csv value is the scalar of its step under the
metric's tag (group/id), the "settings" text is settings.json's settings,
the hparams session start holds them as hyperparameters, the session end
its status, and the final figures summary.json's.
Usage: check_tensorboard.py RUN_DIR EXPECTED_STATUS(1 success, 2 failure, 0 unknown)
"""
import csv
import json
import math
import sys

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.plugins.hparams import plugin_data_pb2

EVAL = {"eval_loss", "eval_accuracy", "ema_eval_loss", "ema_eval_accuracy"}


def close(a, b):
    return math.isclose(a, b, rel_tol=2e-7, abs_tol=1e-30)


def main():
    run, status = sys.argv[1], int(sys.argv[2])
    ea = EventAccumulator(f"{run}/tensorboard", size_guidance={"scalars": 0, "tensors": 0})
    ea.Reload()
    scalars = {}
    for tag in ea.Tags()["scalars"]:
        scalars[tag.split("/", 1)[1] if not tag.startswith("final/") else tag] = {
            e.step: e.value for e in ea.Scalars(tag)}
    rows = list(csv.DictReader(open(f"{run}/metrics.csv")))
    compared = 0
    for column in rows[0].keys():
        if column in ("kind", "step", "epoch"):
            continue
        kind = "eval" if column in EVAL else "train"
        want = {int(r["step"]): float(r[column]) for r in rows
                if r["kind"] == kind and r[column] != "" and math.isfinite(float(r[column]))}
        if not want:
            continue
        got = scalars.get(column)
        if got is None:
            raise SystemExit(f"metrics.csv column {column} has no TensorBoard scalar")
        if sorted(got) != sorted(want):
            raise SystemExit(f"{column}: steps differ: {sorted(got)[:10]}... vs {sorted(want)[:10]}...")
        for step, value in want.items():
            if not close(got[step], value):
                raise SystemExit(f"{column} at step {step}: {got[step]} in TensorBoard, {value} in metrics.csv")
            compared += 1

    settings = json.load(open(f"{run}/settings.json"))
    settings.pop("run_info")
    text = ea.Tensors("settings")[0].tensor_proto.string_val[0].decode()
    if json.loads(text) != settings:
        raise SystemExit("the settings text differs from settings.json")

    content = ea.PluginTagToContent("hparams")
    start = plugin_data_pb2.HParamsPluginData.FromString(content["_hparams_/session_start_info"])
    hp = start.session_start_info.hparams
    for key, value in [("optimizer.lr", settings["optimizer"]["lr"]), ("train.batch_size", settings["train"]["batch_size"])]:
        if not close(hp[key].number_value, value):
            raise SystemExit(f"hparam {key}: {hp[key]} vs {value}")
    if hp["model.kind"].string_value != settings["model"]["kind"]:
        raise SystemExit(f"hparam model.kind: {hp['model.kind']}")
    end = plugin_data_pb2.HParamsPluginData.FromString(content["_hparams_/session_end_info"])
    if end.session_end_info.status != status:
        raise SystemExit(f"session end status {end.session_end_info.status}, expected {status}")

    summary = json.load(open(f"{run}/summary.json"))
    for key, value in summary.items():  # every figure of summary.json is a final/ scalar
        if key.startswith(("test_", "best_eval_")) and isinstance(value, (int, float)):
            got = list(scalars[f"final/{key}"].values())[-1]
            if not close(got, summary[key]):
                raise SystemExit(f"final/{key}: {got} vs {summary[key]}")
    print(f"{compared} values of {len(rows)} metrics.csv rows equal in TensorBoard; {len(hp)} hparams; "
          f"{len(ea.Tags()['scalars'])} scalar tags")
    print("tensorboard ok")


if __name__ == "__main__":
    main()
