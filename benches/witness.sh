#!/usr/bin/env bash
# What witnessing costs (docs/PERFORMANCE.md, "Witnessed epochs"): durable bets/s and bet
# latency of `vrs serve` on the embedded store with its witnessed log pushed to three
# `vrs witness` processes on loopback, against the same service without a log, in one run; and
# each witness's add-checkpoint round trip, p50 and p99, from the service's
# vrs_witness_cosign_seconds histogram (interpolated within its buckets).
#
# Environment:
#   DURATION=10 WARMUP=2 CONNECTIONS=64   as in load.sh
#   VRS_BIN, LOADGEN_BIN   binaries to use instead of building them (release)
#   SERVE_FLAGS            extra flags for every `vrs serve`, e.g. "--epoch-ms 2000"
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION="${DURATION:-10}"
WARMUP="${WARMUP:-2}"
CONNECTIONS="${CONNECTIONS:-64}"
# shellcheck source=benches/lib.sh
source benches/lib.sh

if [[ -n ${VRS_BIN:-} && -n ${LOADGEN_BIN:-} ]]; then
    VRS="$VRS_BIN"
    LOADGEN="$LOADGEN_BIN"
else
    build_release vrs vrs-loadgen
fi

# Runs vrs-loadgen against $1; the one-line JSON report goes to $WORK/$2.json.
load() {
    log "$2: $CONNECTIONS connections, ${WARMUP} s warm-up, ${DURATION} s measured"
    fg_run "$LOADGEN" --json --connections "$CONNECTIONS" --duration "$DURATION" \
        --warmup "$WARMUP" --url "$1" >"$WORK/$2.json" ||
        die "$2: vrs-loadgen failed: $(cat "$WORK/$2.json")"
}

# p50 and p99 of a Prometheus histogram family's samples in file $1 (name $2, label filter $3).
quantiles() {
    python3 - "$1" "$2" "$3" <<'EOF'
import re, sys
path, name, want = sys.argv[1:]
buckets = {}
for line in open(path):
    m = re.match(name + r'_bucket\{(.*)\} (\S+)$', line.strip())
    if not m or want not in m.group(1):
        continue
    le = re.search(r'le="([^"]+)"', m.group(1)).group(1)
    buckets[float("inf") if le == "+Inf" else float(le)] = float(m.group(2))
edges = sorted(buckets)
total = buckets[edges[-1]] if edges else 0
def q(p):
    target, lo, below = p * total, 0.0, 0.0
    for e in edges:
        if buckets[e] >= target:
            if e == float("inf"):
                return f"> {lo * 1000:g} ms"
            share = (target - below) / max(buckets[e] - below, 1e-9)
            return f"{(lo + share * (e - lo)) * 1000:.2f} ms"
        lo, below = e, buckets[e]
    return "-"
print(f"{int(total)} round trips, p50 {q(0.5)}, p99 {q(0.99)}")
EOF
}

# Without a log.
start_server plain --data-dir "$WORK/plain"
load "$SERVER_URL" plain
stop_servers

# With the log and three witnesses.
mport="$(free_port)"
start_witnessed witnessed "bench.vrs/log" --metrics-addr "127.0.0.1:$mport" \
    ${SERVE_EXTRA[@]+"${SERVE_EXTRA[@]}"}
url="$WITNESSED_URL"
load "$url" witnessed
curl -fsS "http://127.0.0.1:$mport/metrics" >"$WORK/metrics.txt"
stop_servers

cpu="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
echo "CPU: $cpu ($(nproc) cores)"
echo "load: $CONNECTIONS connections, $DURATION s; embedded store"
for run in plain witnessed; do
    printf '%-10s %10s bets/s   p50 %s ms   p99 %s ms\n' "$run" \
        "$(json_num accepted_per_s "$WORK/$run.json")" \
        "$(json_num p50 "$WORK/$run.json")" "$(json_num p99 "$WORK/$run.json")"
done
for i in 1 2 3; do
    echo "witness bench/w$i: $(quantiles "$WORK/metrics.txt" vrs_witness_cosign_seconds "witness=\"bench/w$i\"")"
done
grep '^vrs_witness_refusals_total\|^vrs_witness_cosigned_size\|^vrs_log_size' "$WORK/metrics.txt" || true
