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
status=0
for target in fuzz_settings fuzz_idx fuzz_image fuzz_csv fuzz_run_files fuzz_checkpoint fuzz_weights; do
  bin="$build/tests/fuzz/$target"
  if [ -d "$here/regressions/$target" ]; then
    if ! "$bin" "$here"/regressions/$target/* > "$build/$target-regressions.log" 2>&1; then
      echo "$target: a regression input fails again:"; tail -20 "$build/$target-regressions.log"; status=1; continue
    fi
  fi
  mkdir -p "$build/corpus/$target"
  # fuzz_checkpoint: no leak check after each input, only LeakSanitizer's at
  # the end. LibTorch's zip reader leaks its miniz state whenever it refuses a
  # damaged archive (suppressed in lsan-libtorch.supp), so libFuzzer checked
  # after nearly every input, scanning LibTorch's ~1 GB heap each time: 114
  # inputs a second instead of 12,600 on the 2-core VM.
  leaks=1
  [ "$target" = fuzz_checkpoint ] || [ "$target" = fuzz_weights ] && leaks=0
  "$bin" "$build/corpus/$target" "$here/corpus/$target" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 \
      -detect_leaks=$leaks -print_final_stats=1 -artifact_prefix="$build/artifacts/$target-" > "$build/$target.log" 2>&1
  rc=$?
  runs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$build/$target.log" | awk '{print $2}')
  if [ $rc -ne 0 ]; then
    echo "$target: FAILED after ${runs:-?} executions:"; grep -E "ERROR|SUMMARY|runtime error" "$build/$target.log" | head -5
    status=1
  else
    echo "$target: ${runs:-?} executions in ${seconds} s ($(( ${runs:-0} / seconds )) a second), no crash"
  fi
done
exit $status
