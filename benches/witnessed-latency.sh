#!/usr/bin/env bash
# The latency of a result when T is sized for verifiers with bound S (docs/PERFORMANCE.md,
# "Latency at a verifier's S"): an epoch passes `witnessed` only when T >= S x (its window +
# 1 s + delta) (docs/PROTOCOL.md section 21), so S sets T, and T at this CPU's rate sets when a
# result comes. In one run: the default server (the yardstick: one lane, T for --epoch-ms at
# the measured rate, no log), then a server with three `vrs witness` processes on loopback whose
# margin makes T = A x R x window reach S x (window + 3 s), with --max-rate S. For each, BETS
# bets one a second, the time from each 202 to its resolved result (p50, p99), and for the
# witnessed one how many of its games the server's own `witnessed` check passed.
#
# Environment:
#   VRS_BIN            the vrs binary (default: a release build)
#   S                  the verifiers' bound, squarings a second (default: this CPU's measured
#                      rate R, "no faster than one of our cores"); the script says when no
#                      margin this machine's cores can run reaches it
#   EPOCH_MS=6000      the witnessed server's --epoch-ms
#   BETS=20
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=benches/lib.sh
source benches/lib.sh

EPOCH_MS="${EPOCH_MS:-6000}"
BETS="${BETS:-20}"
if [[ -n ${VRS_BIN:-} ]]; then
    VRS="$VRS_BIN"
else
    build_release vrs
fi

# Places $BETS bets on $1, one a second, then waits for each result; writes one line per game
# (game id, seconds from the 202 to the resolved result) to $WORK/$2.txt.
measure() {
    python3 - "$1" "$BETS" >"$WORK/$2.txt" <<'EOF'
import json, sys, time, urllib.request, urllib.error
url, n = sys.argv[1], int(sys.argv[2])
def call(path, body=None):
    while True:
        req = urllib.request.Request(url + path, data=None if body is None else json.dumps(body).encode(),
                                     headers={"content-type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, json.load(r)
        except urllib.error.HTTPError as e:
            if e.code == 503:
                time.sleep(float(e.headers.get("Retry-After", "1")))
                continue
            return e.code, json.load(e)
games = []
for i in range(n):
    status, r = call("/api/v1/games/dice/bet", {"bet_type": "odd", "amount": 1, "player_seed": f"lat {i}"})
    assert status == 202, r
    games.append((r["game_id"], time.monotonic()))
    time.sleep(1)
pending = dict(games)
done = {}
deadline = time.monotonic() + 600
while pending and time.monotonic() < deadline:
    for gid, t0 in list(pending.items()):
        status, r = call(f"/api/v1/games/{gid}")
        if status == 200 and r.get("status") == "resolved":
            done[gid] = time.monotonic() - t0
            del pending[gid]
    time.sleep(0.1)
assert not pending, f"{len(pending)} games never resolved"
for gid, _ in games:
    print(gid, f"{done[gid]:.3f}")
EOF
}

# p50 and p99 of the seconds in $WORK/$1.txt.
quantiles() {
    python3 - "$WORK/$1.txt" <<'EOF'
import sys
xs = sorted(float(l.split()[1]) for l in open(sys.argv[1]))
q = lambda p: xs[min(len(xs) - 1, int(p * len(xs)))]
print(f"p50 {q(0.5):.2f} s, p99 {q(0.99):.2f} s, max {xs[-1]:.2f} s over {len(xs)} games")
EOF
}

# The yardstick: the default server.
start_server default --data-dir "$WORK/default"
rate="$(sed -n 's/.*; \([0-9]*\) squarings\/s on this CPU.*/\1/p' "$WORK/default.log" | head -n 1)"
[[ -n $rate ]] || die "the server printed no rate: $(head -n 5 "$WORK/default.log")"
measure "$SERVER_URL" default
stop_servers

S="${S:-$rate}"
cores="$(nproc)"
# A with T = A R w >= S (w + 3 s), w = EPOCH_MS; the lanes it takes, ceil(1.1 A) above 1.8.
read -r margin lanes < <(python3 -c "
import math
s, r, w = $S, $rate, $EPOCH_MS / 1000
a = math.ceil(100 * s * (w + 3) / (r * w)) / 100
a = max(a, 1.81)
print(f'{a:.2f}', math.ceil(11 * round(a * 100) / 1000))")
echo "CPU: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1) ($cores cores)"
echo "R = $rate squarings/s (this CPU, one core); S = $S; window $EPOCH_MS ms: margin $margin, $lanes VDF lanes"
if ((lanes > cores)); then
    echo "default (yardstick): $(quantiles default)"
    echo "S = $S needs $lanes lanes side by side on $cores cores: not attainable here (every lane needs a core)"
    exit 0
fi

start_witnessed witnessed "bench.vrs/latency" --epoch-ms "$EPOCH_MS" --security-margin "$margin" \
    --max-rate "$S"
url="$WITNESSED_URL"
grep -i "warning" "$WORK/witnessed.log" | head -n 3 || true
measure "$url" witnessed
passed=0
while read -r gid _; do
    if curl -fsS "$url/api/v1/verify/$gid" | python3 -c '
import json, sys
v = json.load(sys.stdin)
c = [c for c in v["checks"] if c["name"] == "witnessed"]
if c and c[0]["passed"]:
    sys.exit(0)
print("not witnessed:", v["game_id"], (c[0]["detail"] if c else "no check")[:300], file=sys.stderr)
sys.exit(1)'; then
        passed=$((passed + 1))
    fi
done <"$WORK/witnessed.txt"
stop_servers

echo "default (yardstick): $(quantiles default)"
echo "witnessed at S = $S: $(quantiles witnessed); witnessed passed $passed of $BETS"
