#!/usr/bin/env bash
# A search that learns against the grid (issue 28): 20 TPE trials with
# Hyperband pruning against the 20-run grid over the same space (the
# learning rate from 1e-5 to 0.1, at 5 points for the grid, and the MLP's
# width from 16 to 512, at 4 for the grid; TPE draws the rate from the whole
# log range and the width from its powers of two), on the same short
# Fashion-MNIST runs, one trial at a time; then the same TPE search with two
# trials at once (the cores divided). Prints each search's wall time, the
# best it found, and when each first came within 0.5 points of the grid's
# best. bench/search_compare.py reads the studies with Optuna.
# Usage: bench/search_bench.sh [BUILD_DIR]
# BENCH_SMOKE=1 (make bench-smoke): tiny sizes and one round, to show it still runs.
set -euo pipefail
BUILD=${1:-build}
CLI=$BUILD/app/training-studio-cli
PY=${STUDIO_PYTHON:-python3}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
here=$(cd "$(dirname "$0")" && pwd)
if [ -n "${BENCH_SMOKE:-}" ]; then TRIALS=2 LIMIT=1024 EPOCHS=1; else TRIALS=20 LIMIT=16384 EPOCHS=4; fi
export TRIALS
trial=(--preset fashion-mnist-mlp --set data.train_limit=$LIMIT --set data.test_limit=2000 --set train.epochs=$EPOCHS
       --set evaluation.every_steps=32 --set schedule.warmup_steps=0 --out "$WORK/runs")
t0=$(date +%s.%N)
"$CLI" search "${trial[@]}" --name grid --sampler grid --pruner none --trials "$TRIALS" \
  --space optimizer.lr=choice:0.00001,0.0001,0.001,0.01,0.1 --space model.width=choice:16,64,256,512 > "$WORK/grid.log"
t1=$(date +%s.%N)
tpe=(--sampler tpe --pruner hyperband --trials "$TRIALS" --seed 0
     --space optimizer.lr=float:0.00001:0.1:log --space model.width=int:16:512:pow2)
"$CLI" search "${trial[@]}" --name tpe "${tpe[@]}" > "$WORK/tpe.log"
t2=$(date +%s.%N)
"$CLI" search "${trial[@]}" --name tpe2 "${tpe[@]}" --parallel 2 > "$WORK/tpe2.log"
t3=$(date +%s.%N)
STUDIO_STUDIES="$WORK/runs" "$PY" "$here/search_compare.py" "$t0" "$t1" "$t2" "$t3"
