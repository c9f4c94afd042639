#!/usr/bin/env bash
# Fixed-seed CPU runs that a change meant to keep behaviour must leave
# exactly as they were: record them with one build's CLI, record them again
# with another's, and compare.
#   bench/same_runs.sh record CLI OUT_DIR   (about two minutes on 2 cores)
#   bench/same_runs.sh compare DIR_A DIR_B  (exit 1 when anything differs)
# The runs: the default CNN with accumulation and clipping; a ResNet with
# EMA, early stopping and on_nonfinite skip; a run whose learning rate
# grows too high, rolling back three times; a crash and its resume; two
# forks (the same optimizer, another one); a continue; lr-find; batch-find.
# Compared: metrics.csv without the wall-time and memory columns, every
# eval/step-N.json and thumbnail, summary.json and settings.json without
# timings and folder names, and every checkpoint's tensors and counters
# (torch.load, in Python) but its wall time.
set -euo pipefail

record() {
  local cli=$1 out=$2
  rm -rf "$out"
  mkdir -p "$out"
  local common=(--set data.train_limit=3000 --set data.test_limit=400 --set train.log_every_steps=5)
  run() {  # name, then the CLI's arguments
    local name=$1
    shift
    "$cli" "$@" >"$out/$name.log" 2>&1 || echo "$name exited $?" >>"$out/exits.txt"
  }
  run cnn train --preset fashion-mnist-cnn --out "$out/runs" "${common[@]}" --set name=cnn \
    --set train.accumulation_steps=2 --set train.grad_clip_norm=1 --set train.max_steps=24 \
    --set evaluation.every_steps=8 --set data.val_fraction=0.1
  run resnet train --preset fashion-mnist-cnn --out "$out/runs" "${common[@]}" --set name=resnet \
    --set model.kind=resnet --set model.width=8 --set model.depth=1 --set train.ema.decay=0.9 \
    --set train.ema.start_step=3 --set train.early_stopping.metric=eval_loss --set train.early_stopping.patience=1 \
    --set train.on_nonfinite=skip --set train.max_steps=40 --set evaluation.every_steps=4 \
    --set optimizer.kind=adamw --set optimizer.lr=0.05 --set schedule.kind=constant
  run rollback train --preset fashion-mnist-mlp --out "$out/runs" "${common[@]}" --set name=rollback \
    --set train.on_nonfinite=rollback --set train.max_rollbacks=3 --set train.rollback_lr_factor=0.3 \
    --set train.max_steps=40 --set schedule.kind=onecycle --set schedule.warmup_steps=0 \
    --set schedule.onecycle.max_lr=3000 --set schedule.onecycle.pct_start=0.9 --set output.checkpoint_every_steps=5
  STUDIO_CRASH_AT=train-step:17 run crash train --preset fashion-mnist-cnn --out "$out/runs" "${common[@]}" \
    --set name=crash --set train.max_steps=30 --set output.checkpoint_every_steps=5 --set evaluation.every_steps=10
  local crashed cnn
  crashed=$(ls -d "$out"/runs/*-crash)
  cnn=$(ls -d "$out"/runs/*-cnn)
  run resume resume "$crashed"
  run fork fork "$cnn" --from last --set train.max_steps=40 --set optimizer.lr=0.05 --set name=forked --out "$out/runs"
  run fork-adam fork "$cnn" --from last --set train.max_steps=30 --set optimizer.kind=adam --set name=forked-adam \
    --out "$out/runs"
  run continue continue "$crashed" --epochs 1 --schedule constant
  run lrfind lr-find --preset fashion-mnist-mlp --out "$out/runs" "${common[@]}" --set name=lrfind --steps 30
  run batchfind batch-find --preset fashion-mnist-mlp --out "$out/runs" "${common[@]}" --set name=batchfind --max 256
  # Run folders are named by their start time: give them their names alone.
  for d in "$out"/runs/*; do
    [ -d "$d" ] || continue
    mv "$d" "$out/runs/${d##*-[0-9][0-9][0-9][0-9][0-9][0-9]-}"
  done
}

compare() {
  "${STUDIO_PYTHON:-${STUDIO_CACHE:-$HOME/.cache/training-studio}/venv/bin/python}" - "$1" "$2" <<'PY'
import csv, json, pathlib, sys
import torch

a, b = (pathlib.Path(p) for p in sys.argv[1:3])
bad = []
timing = ("wall", "samples_per_s", "step_ms", "mem_", "memory", "seconds")

def rows(path):
    with open(path) as f:
        r = list(csv.reader(f))
    keep = [i for i, name in enumerate(r[0]) if not name.startswith(timing)]
    return [[row[i] for i in keep if i < len(row)] for row in r]

def strip(j):
    if isinstance(j, dict):
        return {k: strip(v) for k, v in j.items()
                if not any(t in k for t in timing) and k not in ("run_dir", "run", "dir", "run_id")}
    if isinstance(j, list):
        return [strip(v) for v in j]
    return j

def same(x, y, where):
    if isinstance(x, torch.Tensor):
        ok = isinstance(y, torch.Tensor) and x.shape == y.shape and x.dtype == y.dtype
        if ok and x.is_floating_point():
            ok = bool(((x == y) | (x.isnan() & y.isnan())).all())
        elif ok:
            ok = torch.equal(x, y)
        if not ok:
            bad.append(where)
    elif isinstance(x, dict):
        keys = lambda d: sorted(str(k) for k in d if k != "run_id")  # random per run (issue 30)
        if not isinstance(y, dict) or keys(x) != keys(y):
            bad.append(where + " (keys)")
            return
        for k in x:
            if k not in ("wall_seconds", "run_id"):
                same(x[k], y[k], f"{where}/{k}")
    elif isinstance(x, (list, tuple)):
        if not isinstance(y, (list, tuple)) or len(x) != len(y):
            bad.append(where + " (length)")
            return
        for i, (u, v) in enumerate(zip(x, y)):
            same(u, v, f"{where}[{i}]")
    elif x != y and not (x != x and y != y):
        bad.append(f"{where}: {x} vs {y}")

files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
other = sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
for p in sorted(set(files) ^ set(other)):
    if p.suffix not in (".log", ".tmp") and p.name not in ("log.txt",) and "tensorboard" not in str(p):
        bad.append(f"only in one: {p}")
for p in files:
    pa, pb = a / p, b / p
    if not pb.exists():
        continue
    if p.name == "metrics.csv":
        if rows(pa) != rows(pb):
            bad.append(str(p))
    elif p.name == "exits.txt":
        if pa.read_text() != pb.read_text():
            bad.append(str(p))
    elif p.suffix == ".json":
        if strip(json.loads(pa.read_text())) != strip(json.loads(pb.read_text())):
            bad.append(str(p))
    elif p.suffix == ".ckpt":
        same(torch.load(pa, weights_only=True), torch.load(pb, weights_only=True), str(p))
    elif p.suffix == ".png":
        if pa.read_bytes() != pb.read_bytes():
            bad.append(str(p))
checked = sum(1 for p in files if p.suffix in (".csv", ".json", ".ckpt", ".png"))
print(f"compared {checked} files of {len(list(a.glob('runs/*')))} runs")
for line in bad:
    print("DIFFERS:", line)
sys.exit(1 if bad else 0)
PY
}

case "${1:-}" in
  record) record "$2" "$3" ;;
  compare) compare "$2" "$3" ;;
  *) echo "usage: $0 record CLI OUT_DIR | compare DIR_A DIR_B" >&2; exit 2 ;;
esac
