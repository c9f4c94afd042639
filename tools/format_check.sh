#!/usr/bin/env bash
# The C++ sources as .clang-format says (clang-format 14, Debian's): every
# tracked .cpp and .h. Exits 1 naming each file that is not, with what
# clang-format would change; `tools/format_check.sh --fix` rewrites them.
# CI runs the check (.ci/run, through make format-check).
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cpp' '*.h')
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  clang-format --dry-run -Werror "$f" > /dev/null 2>&1 || bad+=("$f")
done
if ((${#bad[@]})); then
  for f in "${bad[@]}"; do (clang-format --dry-run "$f" 2>&1 || true) | head -12; done
  echo "format_check: ${#bad[@]} file(s) are not formatted as .clang-format says: ${bad[*]}" >&2
  echo "  tools/format_check.sh --fix (or make format) rewrites them." >&2
  exit 1
fi
echo "format_check: ${#files[@]} files formatted as .clang-format says"
