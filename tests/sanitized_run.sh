#!/usr/bin/env bash
# Runs one suite of a sanitizer build (tests/CMakeLists.txt, STUDIO_SANITIZE)
# and, when it does not pass, says how it ended, so that a failure in CI
# explains itself even when the suite could not:
# - its exit status, or the signal that ended it (a SIGKILL leaves no report:
#   it comes from the kernel's out-of-memory killer or from an outside limit);
# - its peak resident memory, the memory still available and the free disk;
# - and, if its memory grows past 3/4 of the machine's, every thread's stack
#   (gdb) before it is ended with SIGABRT, instead of a silent kill by the
#   kernel.
set -u
"$@" &
pid=$!
trap 'kill -TERM "$pid" 2>/dev/null' TERM INT
suite=$(basename "$1")
limit_kb=$(($(awk '/^MemTotal:/ {print $2}' /proc/meminfo) * 3 / 4))
[ -n "${SANITIZED_RUN_LIMIT_MIB:-}" ] && limit_kb=$((SANITIZED_RUN_LIMIT_MIB * 1024))  # to try it
peak_kb=0
while kill -0 "$pid" 2>/dev/null; do
  rss_kb=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null)
  rss_kb=${rss_kb:-0}
  ((rss_kb > peak_kb)) && peak_kb=$rss_kb
  if ((rss_kb > limit_kb)); then
    echo "sanitized_run: $suite holds $((rss_kb / 1024)) MiB, over its limit of $((limit_kb / 1024)) MiB (3/4 of this machine's memory); its threads' stacks:"
    if command -v gdb > /dev/null; then
      gdb -p "$pid" -batch -ex 'thread apply all bt' 2>&1 | grep -E '^(Thread|#)'
    fi
    kill -ABRT "$pid" 2>/dev/null
    break
  fi
  sleep 0.5
done
wait "$pid"
rc=$?
if ((rc != 0)); then
  if ((rc > 128)); then
    how="was ended by signal $((rc - 128)) (SIG$(kill -l $((rc - 128)) 2>/dev/null))"
    ((rc == 137)) && how+=", which leaves no report: the kernel's out-of-memory killer or an outside limit sends it"
  else
    how="exited with status $rc"
  fi
  available=$(awk '/^MemAvailable:/ {print int($2 / 1024)}' /proc/meminfo)
  disk=$(df -Pm . 2> /dev/null | awk 'NR == 2 {print $4}')
  tmp=$(df -Pm "${TMPDIR:-/tmp}" 2> /dev/null | awk 'NR == 2 {print $4}')
  echo "sanitized_run: $suite $how; its peak resident memory $((peak_kb / 1024)) MiB;" \
    "memory available now ${available:-?} MiB; free disk ${disk:-?} MiB here, ${tmp:-?} MiB in ${TMPDIR:-/tmp}"
fi
exit "$rc"
