#!/usr/bin/env bash
# A study in PostgreSQL (issue 46): 16 trials with one runner against the same
# 16 with two runners joined to one study, on the same machine, each runner
# --parallel 1; wall time and the best value of each. PostgreSQL is started
# here on 127.0.0.1 in a temporary folder (as nobody when run as root) and
# stopped at the end.
# Usage: bench/search_shared_bench.sh [BUILD_DIR]
# BENCH_SMOKE=1 (make bench-smoke): 4 trials, to show it still runs.
set -euo pipefail
BUILD=${1:-build}
CLI=$(realpath "$BUILD/app/training-studio-cli")
TRIALS=16
[ -n "${BENCH_SMOKE:-}" ] && TRIALS=4
WORK=$(mktemp -d)
chmod 755 "$WORK"
bin=$(dirname "$(ls /usr/lib/postgresql/*/bin/initdb | tail -1)")
as=()
[ "$(id -u)" -eq 0 ] && { chown nobody "$WORK"; as=(runuser -u nobody --); }
export PGPASSWORD="bench-$RANDOM$RANDOM"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
echo "$PGPASSWORD" > "$WORK/pw"
[ "$(id -u)" -eq 0 ] && chown nobody "$WORK/pw"
"${as[@]}" "$bin/initdb" -D "$WORK/data" -U studio --pwfile="$WORK/pw" -A scram-sha-256 > /dev/null
rm "$WORK/pw"
"${as[@]}" "$bin/pg_ctl" -D "$WORK/data" -o "-p $port -k $WORK -c listen_addresses=127.0.0.1" -l "$WORK/log" -w start > /dev/null
trap '"${as[@]}" "$bin/pg_ctl" -D "$WORK/data" -m fast stop > /dev/null; rm -rf "$WORK"' EXIT
"$bin/createdb" -h 127.0.0.1 -p "$port" -U studio study
url="postgresql://studio@127.0.0.1:$port/study"
trial=(--preset fashion-mnist-mlp --set data.train_limit=8000 --set data.test_limit=1000 --set train.epochs=2
       --set evaluation.every_steps=16 --set performance.threads=1 --trials "$TRIALS" --pruner none --seed 0
       --space optimizer.lr=float:0.0003:0.3:log --space model.width=int:32:256:pow2)
best() { grep -h "^best:" "$@" | head -1; }
t0=$(date +%s.%N)
"$CLI" search "${trial[@]}" --storage "$url" --name one --out "$WORK/one" > "$WORK/one.log" 2>&1
t1=$(date +%s.%N)
echo "one runner: $TRIALS trials in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s; $(best "$WORK/one.log")"
t0=$(date +%s.%N)
STUDIO_MACHINE=a "$CLI" search "${trial[@]}" --storage "$url" --name two --out "$WORK/a" > "$WORK/a.log" 2>&1 &
first=$!
until grep -q "^search two:" "$WORK/a.log" 2>/dev/null; do sleep 0.2; done  # the study is made
STUDIO_MACHINE=b "$CLI" search --join --storage "$url" --study two --out "$WORK/b" > "$WORK/b.log" 2>&1
wait "$first"
t1=$(date +%s.%N)
a=$(grep -c "^trial .*: started" "$WORK/a.log" || true) b=$(grep -c "^trial .*: started" "$WORK/b.log" || true)
echo "two runners: $TRIALS trials in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s ($a and $b trials); $(best "$WORK/a.log")"
