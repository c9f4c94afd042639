# What the bench scripts share (sourced, not run): PY, the studio's Python,
# must be set first.
#
# peak FILE COMMAND...: runs COMMAND, its output passed on, and appends its
# peak resident memory in MiB (getrusage of the waited-for child) to FILE.
peak() {
  local file=$1; shift
  "$PY" -c 'import resource, subprocess, sys
code = subprocess.run(sys.argv[2:]).returncode
open(sys.argv[1], "a").write("%.0f\n" % (resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024))
sys.exit(code)' "$file" "$@"
}
# median X...: the median of the numbers (the mean of the middle two for an even count).
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { printf "%g\n", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
