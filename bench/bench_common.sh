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
# segmentation_scenes IMAGES MASKS N: N synthetic scenes (tests/reference/segmentation_scenes.py: a
# square and a disc on noisy 48-80 px canvases) and their PNG masks with a classes.txt; needs here=.
segmentation_scenes() {
  "$PY" -c 'import sys; sys.path.insert(0, sys.argv[1])
from segmentation_scenes import make_scenes
make_scenes(sys.argv[2], sys.argv[3], int(sys.argv[4]), seed=2)
open(sys.argv[3] + "/classes.txt", "w").write("background\nsquare\ndisc\n")' "$here/../tests/reference" "$@"
}
