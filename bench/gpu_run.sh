#!/usr/bin/env bash
# The GPU measurements of bench/RESULTS.md, as one command for a GPU server
# without Qt (the device tool's H100): the Debian libraries unpacked under
# /opt/deps (../shared/device/pack.sh with the extra packages below), then
#   bash .carry/unpack.sh && source .carry/deps.env && bash bench/gpu_run.sh
# Extra packages for pack.sh: libpng-dev libpng16-16 libturbojpeg0-dev
# libturbojpeg0 libjpeg62-turbo-dev libjpeg62-turbo libcsv-dev libcsv3
# libssl-dev libssl3 libprotobuf-dev libprotobuf32 protobuf-compiler libprotoc32
# libcrcutil-dev libcrcutil0 libgoogle-perftools-dev libtcmalloc-minimal4
# libgoogle-perftools4 (without those three the build keeps glibc's heap),
# libgloo-dev libgloo0 (the headers c10d's declarations include),
# libyaml-cpp-dev libyaml-cpp0.7 libtinyxml2-dev libtinyxml2-9 (detection's
# annotation readers).
# The search part needs Optuna in the machine's Python: carry its wheels in
# .whl (optuna alembic colorlog mako sqlalchemy greenlet) and install them
# into /tmp/site with PYTHONPATH set, as the device tool's README says.
#
# PARTS (default: all, in this order) chooses what runs:
#   test      the GPU suite (test_cuda_graphs)
#   detect    test_detectors on CUDA: the detectors' boxes, losses and
#             gradients against torchvision's CUDA kernels
#   start     the default preset's whole run, five times (the 2.0 s goal)
#   step      the recorded step against Python's graphed step (the 1.0x goal),
#             its variants and the operators per step
#   finetune  bench/finetune_bench.sh at 64 px on the GPU
#   predict   bench/predict_bench.sh on the GPU
#   search    one GPU packed with trials: --parallel 1, 2 and 4
#   audit     bench/audit_bench.sh (10,000 images, 5 folds), the folds one
#             after another and all five at once on the one GPU
#   nccl      torchrun with one process per GPU (NCCL's set-up and collectives)
#   matrix    bench_engine --matrix (COMPILE=1 adds torch.compile: minutes)
# Each part has its own time limit; logs go to $OUT/gpu-run.tgz (the device
# tool's folder) or ./gpu-run-out, packed again after each part, so a part cut
# short loses nothing measured before it.
set -uo pipefail
OUT=${OUT:-$PWD/gpu-run-out}; mkdir -p "$OUT"
LOGS=/tmp/gpu-run-logs; rm -rf $LOGS; mkdir -p $LOGS
PARTS=${PARTS:-test detect start step finetune predict search audit nccl matrix}
pack() { tar -czf "$OUT/gpu-run.tgz" -C /tmp gpu-run-logs; }
mkdir -p /usr/share/datasets && ln -sfn /opt/deps/usr/share/datasets/fashion-mnist /usr/share/datasets/fashion-mnist
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > $LOGS/gpu.txt 2>&1
cat $LOGS/gpu.txt
for f in /opt/deps/usr/lib/x86_64-linux-gnu/lib{jpeg,turbojpeg,csv,protobuf,protoc,crcutil,tcmalloc,yaml-cpp,tinyxml2}*; do [ -e /usr/lib/x86_64-linux-gnu/$(basename $f) ] || cp -a $f /usr/lib/x86_64-linux-gnu/; done
PY=$(which python3)
export STUDIO_PYTHON=$PY
t0=$(date +%s)
cmake --preset headless -DCMAKE_PREFIX_PATH="$CMAKE_PREFIX_PATH" -DSTUDIO_CSV_INCLUDE=/opt/deps/usr/include -DSTUDIO_CSV_LIBRARY=/usr/lib/x86_64-linux-gnu/libcsv.so.3 -DSTUDIO_PYTHON=$PY -Dlibjpeg-turbo_DIR=/opt/deps/usr/lib/x86_64-linux-gnu/cmake/libjpeg-turbo -DProtobuf_PROTOC_EXECUTABLE=/opt/deps/usr/bin/protoc -DProtobuf_INCLUDE_DIR=/opt/deps/usr/include -DProtobuf_LIBRARY=/usr/lib/x86_64-linux-gnu/libprotobuf.so -DSTUDIO_CRCUTIL_INCLUDE=/opt/deps/usr/include/crcutil -DSTUDIO_CRCUTIL_LIBRARY=/usr/lib/x86_64-linux-gnu/libcrcutil.so -DSTUDIO_GLOO_INCLUDE=/opt/deps/usr/include > $LOGS/configure.log 2>&1 || { tail -40 $LOGS/configure.log; pack; exit 1; }
{ cmake --build build-headless -j16 && cmake --build build-headless -j16 --target benchmarks; } > $LOGS/build.log 2>&1 || { grep -B5 -A20 "error" $LOGS/build.log | head -80; pack; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s"; grep -E "C heap|NCCL" $LOGS/configure.log
cd build-headless
CLI=$PWD/app/training-studio-cli
part() {  # part NAME SECONDS: whether to run NAME; prints its header
  [[ " $PARTS " == *" $1 "* ]] || return 1
  echo "== $1 (at most $2 s, $(( $(date +%s) - t0 )) s in)"; LIMIT=$2
}

if part test 150; then
  timeout $LIMIT ctest --output-on-failure -R test_cuda_graphs --timeout $LIMIT > $LOGS/gpu-tests.log 2>&1; echo "ctest rc $?"
  grep -E "largest|identical|passed|failed|Failed|PASS|FAIL" $LOGS/gpu-tests.log | tail -30; pack
fi

if part detect 240; then
  STUDIO_DETECTOR_DEVICE=cuda timeout $LIMIT ctest --output-on-failure -V -R test_detectors --timeout $LIMIT > $LOGS/gpu-detectors.log 2>&1; echo "ctest rc $?"
  grep -E "boxes equal|loss_classifier|^ok|OK|FAIL|Error" $LOGS/gpu-detectors.log | tail -30; pack
fi

if part start 90; then
  # The floor: a Python process that only starts CUDA.
  /usr/bin/time -f "python3, import torch and one CUDA tensor: %e s" $PY -c "import torch; torch.zeros(1, device='cuda')" 2>&1 | tail -1
  /usr/bin/time -f "training-studio-cli --version: %e s" $CLI --version 2>&1 | tail -1
  for i in 1 2 3 4 5; do
    echo "run $i"
    timeout 30 /usr/bin/time -f "process wall %e s" $CLI train --preset fashion-mnist-cnn --set output.dir=\"/tmp/runs\" > /tmp/cli$i.log 2>&1
    tail -22 /tmp/cli$i.log
  done > $LOGS/start.log
  grep -E "^run|process wall|  test:|samples/s|time spent|CUDA graphs|wall time" $LOGS/start.log
  for d in /tmp/runs/*/; do cat $d/log.txt; done > $LOGS/run-logs.txt
  for d in /tmp/runs/*/; do cat $d/summary.json; echo; done > $LOGS/summaries.json
  head -30 $LOGS/run-logs.txt; pack
fi

if part step 150; then
  timeout $LIMIT ./bench/bench_engine --device cuda --rounds 3 --steps 1000 --no-compile --case cnn:128:0:1000 > $LOGS/bench-step.log 2>&1
  echo "bench_engine rc $?"; cat $LOGS/bench-step.log | tail -15
  timeout 40 ./bench/bench_engine --device cuda --rounds 2 --steps 1000 --no-compile --case cnn:128:0:1000 \
    --set schedule.onecycle.cycle_momentum=false > $LOGS/bench-nocycle.log 2>&1
  echo "cycle_momentum=false:"; grep -E "engine|ratio" $LOGS/bench-nocycle.log | tail -4
  for f in "" --pool-first "" --pool-first; do
    echo "reference_loop.py --mode graph $f: $(timeout 30 $PY ../bench/reference_loop.py --device cuda --mode graph --steps 1000 $f 2>/dev/null | tail -1)"
  done > $LOGS/pool-first.log 2>&1
  cat $LOGS/pool-first.log
  timeout 60 ./bench/bench_engine --device cuda --ops --case cnn:128:0:1000 > $LOGS/bench-ops.log 2>&1
  tail -8 $LOGS/bench-ops.log; pack
fi

if part finetune 120; then
  # Ten epochs: two of these 1,500 images take a GPU about a second, and the
  # studio's figure counts its first steps (cuDNN's and CUDA's first calls).
  EPOCHS=${FT_EPOCHS:-10} ROUNDS=${FT_ROUNDS:-3} FINETUNE_LOG=$LOGS/finetune-run-log.txt timeout $LIMIT \
    bash ../bench/finetune_bench.sh . 64 cuda > $LOGS/finetune.log 2>&1; echo "finetune rc $?"
  tail -3 $LOGS/finetune.log; grep -E "plan|CUDA graphs|finished|cuDNN" $LOGS/finetune-run-log.txt; pack
fi

if part predict 90; then
  timeout $LIMIT bash ../bench/predict_bench.sh . 16 cuda > $LOGS/predict.log 2>&1; echo "predict rc $?"
  tail -3 $LOGS/predict.log; pack
fi

if part search 120; then
  if $PY -c "import optuna" 2>/dev/null; then
    trial=(--preset fashion-mnist-mlp --set data.train_limit=16384 --set data.test_limit=2000 --set train.epochs=4
           --set evaluation.every_steps=32 --set schedule.warmup_steps=0 --set performance.device=cuda --out /tmp/search)
    for p in 1 2 4; do
      s0=$(date +%s.%N)
      timeout 60 $CLI search "${trial[@]}" --name p$p --sampler tpe --pruner none --trials 8 --seed 0 \
        --space optimizer.lr=float:0.00001:0.1:log --space model.width=int:16:512:pow2 --parallel $p > $LOGS/search-p$p.log 2>&1
      rc=$?; s1=$(date +%s.%N)
      awk -v p=$p -v rc=$rc -v a=$s0 -v b=$s1 'BEGIN { printf "--parallel %d: 8 trials in %.1f s (%.0f trials/hour), rc %d\n", p, b - a, 8 * 3600 / (b - a), rc }'
      grep -iE "at once|best:" $LOGS/search-p$p.log | tail -3
    done
  else
    echo "no optuna in $PY: carry its wheels (see the top of this script)"
  fi
  pack
fi

if part audit 200; then
  for p in 1 5; do
    (cd .. && PARALLEL=$p STUDIO_PYTHON=$PY timeout 95 bash bench/audit_bench.sh build-headless) > $LOGS/audit-p$p.log 2>&1
    echo "audit --parallel $p rc $?"; tail -6 $LOGS/audit-p$p.log
  done
  pack
fi

if part nccl 60; then
  timeout $LIMIT $PY -m torch.distributed.run --standalone --nproc-per-node 1 --no-python $CLI train --preset fashion-mnist-cnn \
    --set train.epochs=1 --set output.dir=\"/tmp/dist\" > $LOGS/nccl.log 2>&1; echo "torchrun rc $?"
  cat /tmp/dist/*/log.txt >> $LOGS/nccl.log
  grep -iE "nccl|gloo|rank|samples/s|error" $LOGS/nccl.log | head -12; pack
fi

if part matrix 200; then
  compile=--no-compile; [ -n "${COMPILE:-}" ] && compile=
  timeout $LIMIT ./bench/bench_engine --device cuda --matrix --rounds ${ROUNDS:-1} $compile > $LOGS/matrix.log 2>&1; echo "matrix rc $?"
  tail -20 $LOGS/matrix.log; pack
fi
echo "done in $(( $(date +%s) - t0 )) s"
