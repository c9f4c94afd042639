#!/usr/bin/env bash
# Runs every fuzz target: first its regressions (inputs that once crashed it),
# then libFuzzer for SECONDS from the seed corpus (tests/fuzz/corpus/<target>)
# plus what earlier runs found (BUILD/corpus/<target>). A crash, leak, timeout
# or out-of-memory fails the run; the input is kept in BUILD/artifacts.
# Usage: run.sh BUILD SECONDS
set -uo pipefail
build=$1; seconds=$2
here=$(cd "$(dirname "$0")" && pwd)
export LSAN_OPTIONS="suppressions=$here/lsan-libtorch.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
mkdir -p "$build/artifacts"
# One target at a time per core (JOBS, default nproc): each is a single
# process, so on 2 cores two run side by side and the stage takes half as long.
jobs=${JOBS:-$(nproc)}

# fuzz TARGET: its regressions, then SECONDS of fuzzing; the verdict goes to
# BUILD/TARGET.result (the first line printed, the status on the second).
fuzz() {
  local target=$1 bin="$build/tests/fuzz/$1" result="$build/$1.result"
  if [ -d "$here/regressions/$target" ]; then
    if ! "$bin" "$here"/regressions/$target/* > "$build/$target-regressions.log" 2>&1; then
      { echo "$target: a regression input fails again:"; tail -20 "$build/$target-regressions.log"; echo 1; } > "$result"
      return
    fi
  fi
  mkdir -p "$build/corpus/$target"
  # fuzz_checkpoint: no leak check after each input, only LeakSanitizer's at
  # the end. LibTorch's zip reader leaks its miniz state whenever it refuses a
  # damaged archive (suppressed in lsan-libtorch.supp), so libFuzzer checked
  # after nearly every input, scanning LibTorch's ~1 GB heap each time: 114
  # inputs a second instead of 12,600 on the 2-core VM.
  local leaks=1
  [ "$target" = fuzz_checkpoint ] || [ "$target" = fuzz_weights ] && leaks=0
  "$bin" "$build/corpus/$target" "$here/corpus/$target" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 \
      -detect_leaks=$leaks -print_final_stats=1 -artifact_prefix="$build/artifacts/$target-" > "$build/$target.log" 2>&1
  local rc=$?
  local runs
  runs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$build/$target.log" | awk '{print $2}')
  if [ $rc -ne 0 ]; then
    { echo "$target: FAILED after ${runs:-?} executions:"; grep -E "ERROR|SUMMARY|runtime error" "$build/$target.log" | head -5; echo 1; } > "$result"
  else
    { echo "$target: ${runs:-?} executions in ${seconds} s ($(( ${runs:-0} / seconds )) a second), no crash"; echo 0; } > "$result"
  fi
}

targets=(fuzz_settings fuzz_idx fuzz_image fuzz_csv fuzz_run_files fuzz_box_annotations fuzz_checkpoint fuzz_weights)
for target in "${targets[@]}"; do
  rm -f "$build/$target.result"
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
  fuzz "$target" &
done
wait
status=0
for target in "${targets[@]}"; do
  if [ ! -f "$build/$target.result" ]; then
    echo "$target: ended without a verdict (see $build/$target.log)"; status=1; continue
  fi
  sed '$d' "$build/$target.result"
  [ "$(tail -1 "$build/$target.result")" = 0 ] || status=1
done
exit $status
