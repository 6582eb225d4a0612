#!/usr/bin/env bash
# The batch backends on this CPU against the goals of docs/PERFORMANCE.md, "Batch squaring on
# CPUs with AVX-512 IFMA": simd at least 2x cpu at 4 096 and 65 536 values and at least 1.5x
# at 256, and the same ratio for pool generation and batch verification (what `vrs audit`
# runs). Every ratio is against the cpu backend in the same run.
#
#   1. Prints the CPU (model, family/model/stepping, cores, threads per core, IFMA or not).
#   2. Builds vrs (release) unless VRS is set to a binary.
#   3. Runs, one after the other (about 2 minutes on 2 cores):
#        vrs bench vdf     fast (the kernel the cpu backend runs on each value) and fast-mulx;
#        vrs bench batch   cpu and both IFMA kernels of simd (avx512ifma: zmm registers,
#                          avx512ifma-256: ymm registers) at 256, 4 096 and 65 536 values;
#        vrs bench verify  the same backends, batches of 256 and 4 096 proofs of T = 1024;
#        vrs bench pool    batches of 256 entries on the batch backends cpu and simd (the
#                          kernel batch::fastest picks, as the service's pool generator does).
#   4. Prints each goal with its ratio and PASS or FAIL.
#
# Exits 0 when every goal passed, 1 when one failed, 2 when the CPU has no AVX-512 IFMA.
# A build from scratch takes about 6 minutes on 2 cores; the whole script stays under 10.
#
# Environment: SECONDS_PER_ROW=1 (each measurement), VRS (a built binary), CARGO_TARGET_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_PER_ROW="${SECONDS_PER_ROW:-1}"

echo "== CPU"
lscpu | grep -E '^(Model name|CPU family|Model|Stepping|CPU\(s\)|Thread\(s\) per core|Core\(s\) per socket)' || true
if ! grep -qw avx512ifma /proc/cpuinfo; then
  echo "this CPU has no AVX-512 IFMA: nothing to measure here" >&2
  exit 2
fi

if [ -z "${VRS:-}" ]; then
  cargo build --release -p vrs >&2
  VRS="${CARGO_TARGET_DIR:-target}/release/vrs"
fi

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

echo "== vrs bench vdf (ns per squaring of one chain: what the cpu backend runs per value)"
"$VRS" bench vdf --backends fast,fast-mulx --seconds "$SECONDS_PER_ROW"
echo "== vrs bench batch, verify and pool (the rows and the ratios follow)"
"$VRS" bench batch --backend cpu,simd --simd-kernel avx512ifma,avx512ifma-256 \
  --sizes 256,4096,65536 --seconds "$SECONDS_PER_ROW" --json > "$out/batch.json"
"$VRS" bench verify --backend cpu,simd --simd-kernel avx512ifma,avx512ifma-256 \
  --sizes 256,4096 --seconds "$SECONDS_PER_ROW" --json > "$out/verify.json"
"$VRS" bench pool --backends fast --batch cpu,simd --seconds "$((SECONDS_PER_ROW * 2))" \
  --json > "$out/pool.json"

python3 - "$out" <<'EOF'
import json, sys
d = sys.argv[1]
load = lambda name: json.load(open(f"{d}/{name}.json"))
failed = False

for name, key in [("batch", "squarings_per_s"), ("verify", "proofs_per_s")]:
    print(f"-- {name}: {key}")
    for r in load(name):
        print(f"   {r['backend']:<20} {r['batch']:>6} {r[key]:>14.0f}")
print("-- pool: entries_per_s")
for r in load("pool"):
    print(f"   {r['backend']:<20} {r['threads']:>6} threads {r['entries_per_s']:>9.0f}")
print("== goals (ratio to cpu in the same run)")

def goal(what, ratio, floor):
    global failed
    ok = ratio >= floor
    failed |= not ok
    print(f"{'PASS' if ok else 'FAIL'}  {what}: {ratio:.2f}x (goal >= {floor}x)")

def best_simd(rows, key, batch):
    simd = [r for r in rows if r["backend"].startswith("simd") and r["batch"] == batch]
    return max(simd, key=lambda r: r[key])

for name, key, floors in [("batch", "squarings_per_s", {256: 1.5, 4096: 2.0, 65536: 2.0}),
                          ("verify", "proofs_per_s", {256: 1.5, 4096: 2.0})]:
    rows = load(name)
    for batch, floor in floors.items():
        cpu = next(r for r in rows if r["backend"] == "cpu" and r["batch"] == batch)
        for r in rows:
            if r["backend"].startswith("simd") and r["batch"] == batch:
                print(f"      {name} {batch}: {r['backend']} {r[key] / cpu[key]:.2f}x")
        best = best_simd(rows, key, batch)
        goal(f"{name} at {batch} ({best['backend']})", best[key] / cpu[key], floor)

pool = {r["backend"]: r for r in load("pool")}
goal("pool generation, batches of 256",
     pool["batch:simd"]["entries_per_s"] / pool["batch:cpu"]["entries_per_s"], 2.0)
sys.exit(1 if failed else 0)
EOF
