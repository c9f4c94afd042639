#!/usr/bin/env bash
# The GPU measurements of bench/RESULTS.md, as one command for a GPU server
# without Qt (the device tool's H100): the Debian libraries unpacked under
# /opt/deps (../shared/device/pack.sh with the extra packages below), then
#   bash .carry/unpack.sh && source .carry/deps.env && bash bench/gpu_run.sh
# Extra packages for pack.sh: libpng-dev libpng16-16 libturbojpeg0-dev
# libturbojpeg0 libjpeg62-turbo-dev libjpeg62-turbo libcsv-dev libcsv3
# libssl-dev libssl3 libprotobuf-dev libprotobuf32 protobuf-compiler libprotoc32
# libcrcutil-dev libcrcutil0 (the last six since the TensorBoard writer; not yet
# run on a device). Without libgoogle-perftools-dev the build keeps glibc's
# heap (CMake says so); add it and libtcmalloc-minimal4 to measure with tcmalloc.
# MODE=test|bench|start runs one part (default: all).
# Writes its logs into $OUT (the device tool's folder) or ./gpu-run-out.
# Device run: build headless, GPU suite, benchmarks, default-preset timings.
set -uo pipefail
OUT=${OUT:-$PWD/gpu-run-out}; mkdir -p "$OUT"
mkdir -p /usr/share/datasets && ln -sfn /opt/deps/usr/share/datasets/fashion-mnist /usr/share/datasets/fashion-mnist
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > $OUT/gpu.txt 2>&1
for f in /opt/deps/usr/lib/x86_64-linux-gnu/lib{jpeg,turbojpeg,csv,protobuf,protoc,crcutil}.*; do [ -e /usr/lib/x86_64-linux-gnu/$(basename $f) ] || cp -a $f /usr/lib/x86_64-linux-gnu/; done
PY=$(which python3)
t0=$(date +%s)
cmake --preset headless -DCMAKE_PREFIX_PATH="$CMAKE_PREFIX_PATH" -DSTUDIO_CSV_INCLUDE=/opt/deps/usr/include -DSTUDIO_CSV_LIBRARY=/usr/lib/x86_64-linux-gnu/libcsv.so.3 -DSTUDIO_PYTHON=$PY -Dlibjpeg-turbo_DIR=/opt/deps/usr/lib/x86_64-linux-gnu/cmake/libjpeg-turbo -DProtobuf_PROTOC_EXECUTABLE=/opt/deps/usr/bin/protoc -DProtobuf_INCLUDE_DIR=/opt/deps/usr/include -DProtobuf_LIBRARY=/usr/lib/x86_64-linux-gnu/libprotobuf.so -DSTUDIO_CRCUTIL_INCLUDE=/opt/deps/usr/include/crcutil -DSTUDIO_CRCUTIL_LIBRARY=/usr/lib/x86_64-linux-gnu/libcrcutil.so > $OUT/configure.log 2>&1 || { tail -40 $OUT/configure.log; exit 1; }
cmake --build build-headless -j16 > $OUT/build.log 2>&1 || { grep -B5 -A20 "error" $OUT/build.log | head -80; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s"
cd build-headless
MODE=${MODE:-all}
if [ "$MODE" = all ] || [ "$MODE" = test ]; then
  ctest --output-on-failure -R test_cuda_graphs --timeout 600 > $OUT/gpu-tests.log 2>&1; echo "ctest rc $?"
  tail -40 $OUT/gpu-tests.log
fi
if [ "$MODE" = all ] || [ "$MODE" = bench ]; then
  # torch.compile takes tens of seconds per process: 2 rounds fit one 10-minute device call.
  ./bench/bench_engine --device cuda --matrix --rounds ${ROUNDS:-2} > $OUT/bench.log 2>&1; echo "bench rc $?"
  cat $OUT/bench.log
  ./bench/bench_memory --device cuda > $OUT/bench-memory.log 2>&1; echo "bench_memory rc $?"
  cat $OUT/bench-memory.log
  ./bench/bench_engine --device cuda --rounds 2 --steps 1000 --no-compile --set schedule.onecycle.cycle_momentum=false > $OUT/bench-nocycle.log 2>&1
  grep -E "engine|ratio" $OUT/bench-nocycle.log
  ./bench/bench_engine --device cuda --rounds 2 --steps 1000 --no-compile --set performance.cudnn_benchmark=true > $OUT/bench-cudnnbench.log 2>&1
  grep -E "engine|ratio" $OUT/bench-cudnnbench.log
  # What pooling before the ReLU (the engine's CNN) is worth to Python's graphed step.
  for f in "" --pool-first "" --pool-first; do
    echo "reference_loop.py --mode graph $f: $($PY ../bench/reference_loop.py --device cuda --mode graph --steps 1000 $f 2>/dev/null | tail -1)"
  done > $OUT/pool-first.log 2>&1
  cat $OUT/pool-first.log
  # Operators per step outside the replayed graph (host work) and in the eager step.
  ./bench/bench_engine --device cuda --ops --case cnn:128:0:1000 > $OUT/bench-ops.log 2>&1
  cat $OUT/bench-ops.log
fi
if [ "$MODE" = all ] || [ "$MODE" = start ]; then
  for i in 1 2 3 4 5; do
    extra=""; [ $i -ge 4 ] && extra="--set performance.cudnn_benchmark=true"
    echo "run $i $extra"
    /usr/bin/time -f "process wall %e s" ./app/training-studio-cli train --preset fashion-mnist-cnn --set output.dir=\"/tmp/runs\" $extra > /tmp/cli$i.log 2>&1
    tail -22 /tmp/cli$i.log
  done > $OUT/start.log
  cat $OUT/start.log | grep -E "^run|process wall|test accuracy|samples/s|time spent|CUDA graphs|wall time"
  for d in /tmp/runs/*/; do head -12 $d/log.txt; done > $OUT/logs.txt
  for d in /tmp/runs/*/; do cat $d/summary.json; done > $OUT/summaries.json
fi
