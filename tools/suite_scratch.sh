#!/bin/sh
# suite_scratch.sh COMMAND...: runs COMMAND (make test's and make sanitize's
# ctest) with TMPDIR a new folder in the machine's tmpfs where it is large
# enough, and removes that folder after; elsewhere COMMAND runs as it is.
#
# The suites write about 17 GB of run folders, checkpoints and state dicts
# that they delete again. On an ext4 disk each new page costs the kernel about
# 1 ms/MB (2-core VM: a 1 GB dd took 0.85-1.5 s of system CPU), in a tmpfs
# about 0.36: make test's suites at -j2 went from 402 s to 377 s with nothing
# else changed. At most 4.6 GB lie there at once (measured, make test at
# -j2), so the tmpfs is used only where it has SUITE_SCRATCH_MIN_GB free and
# the machine as much available memory besides; otherwise (a container's 64 MB
# /dev/shm, a small machine) the suites write where they always did.
# SUITE_SCRATCH=disk keeps them there anyway.
set -u
shm=/dev/shm
need_gb=${SUITE_SCRATCH_MIN_GB:-8}

scratch_folder() {
  [ "${SUITE_SCRATCH:-}" = disk ] && return 0
  [ -d "$shm" ] && [ -w "$shm" ] || return 0
  [ "$(stat -f -c %T "$shm" 2>/dev/null)" = tmpfs ] || return 0
  free_kb=$(df -Pk "$shm" | awk 'NR == 2 { print $4 }')
  avail_kb=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)
  need_kb=$((need_gb * 1024 * 1024))
  [ "${free_kb:-0}" -ge "$need_kb" ] && [ "${avail_kb:-0}" -ge $((2 * need_kb)) ] || return 0
  dir=$(mktemp -d "$shm/training-studio-suites.XXXXXX") || return 0
  chmod 1777 "$dir"  # as /tmp: test_search_shared's PostgreSQL runs as nobody in it
  echo "$dir"
}

scratch=$(scratch_folder)
if [ -z "$scratch" ]; then
  exec "$@"
fi
echo "suites' scratch files in $scratch (tmpfs; SUITE_SCRATCH=disk keeps them on the disk)"
trap 'rm -rf "$scratch"' EXIT
trap 'exit 130' INT TERM
TMPDIR=$scratch "$@"
