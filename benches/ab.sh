#!/usr/bin/env bash
# Same-run A/B of durable bet throughput between two release `vrs` binaries, alternating, on
# the embedded store with default settings (the numbers of docs/PERFORMANCE.md, "Signed
# acceptance"). Each run: a fresh data dir, `vrs serve --rate-limit 0 --pool-threads 0`, 8 s of
# epochs, then `vrs-loadgen --json --connections 64 --duration 10 --warmup 2`; one JSON line
# per run.
#
# Usage: benches/ab.sh BEFORE_VRS AFTER_VRS LOADGEN [ROUNDS]
#   e.g. build the older commit in a worktree (`git worktree add /tmp/base <rev>`, its own
#   CARGO_TARGET_DIR), copy its target/release/vrs aside, then build this one.
set -euo pipefail
[ $# -ge 3 ] || { sed -n '2,11p' "$0" >&2; exit 2; }
before=$1 after=$2 loadgen=$3 rounds=${4:-2}
for r in $(seq 1 "$rounds"); do
  for which in before after; do
    bin=$before
    [ "$which" = after ] && bin=$after
    dir=$(mktemp -d)
    port=$((18080 + RANDOM % 1000))
    "$bin" serve --data-dir "$dir" --addr "127.0.0.1:$port" --rate-limit 0 --pool-threads 0 \
      > "$dir/log" 2>&1 &
    pid=$!
    for _ in $(seq 1 240); do
      curl -sf "http://127.0.0.1:$port/health" > /dev/null 2>&1 && break
      sleep 0.5
    done
    sleep 8
    out=$("$loadgen" --json --connections 64 --duration 10 --warmup 2 \
      --url "http://127.0.0.1:$port" 2>/dev/null | tail -1)
    echo "round $r $which $out"
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    rm -rf "$dir"
  done
done
