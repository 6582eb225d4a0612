#!/usr/bin/env bash
# Write latency under verification load: durable bets at a fixed rate, alone and beside
# READERS connections verifying games back to back (docs/PERFORMANCE.md, "Verification under
# load").
#
#   1. Builds vrs and vrs-loadgen (release) and starts `vrs serve` on a fresh store (RSA-2048,
#      T calibrated at start-up, so one core runs the epoch VDF throughout), with the extra
#      flags of the scenario.
#   2. Places GAMES bets as fast as 16 connections allow, so that most of them land in one or
#      two large epochs, and waits until the last one is resolved.
#   3. Three phases of DURATION seconds on that server, each after WARMUP seconds:
#        alone     vrs-loadgen --rate RATE: durable bets on a fixed schedule (open loop: each
#                  timed from when it was due);
#        readers   the same bets, and READERS connections walking GET /api/v1/verify/{id}
#                  over the placed games, back to back (closed loop), or READ_RATE
#                  verifications per second in all (open loop) when READ_RATE is set;
#      and prints one JSON line per phase: bets/s, bet p50/p99, verifies/s, verify p50/p99.
#   Scenarios (SCENARIOS="cached uncached"): `cached` is the default service; `uncached` runs
#   with --verify-cache 0, so every verification is recomputed from the store.
#
# Exits 1 if any bet or verification got another status or an I/O error.
#
# Environment:
#   RATE=200 DURATION=10 WARMUP=2 READERS=16 GAMES=1200 SCENARIOS="cached uncached" READ_RATE
#   READERS_NICE=10        the readers' load generator runs at this nice value: readers are
#                          other machines in production, and here they share the two cores with
#                          the VDF, which a flood at full priority slows (its epochs run late)
#   STORE=sqlite (or pg), SERVE_FLAGS, CARGO_TARGET_DIR, READY_TIMEOUT: as in benches/lib.sh
set -euo pipefail
cd "$(dirname "$0")/.."

RATE="${RATE:-200}"
DURATION="${DURATION:-10}"
WARMUP="${WARMUP:-2}"
READERS="${READERS:-16}"
GAMES="${GAMES:-1200}"
SCENARIOS="${SCENARIOS:-cached uncached}"
READERS_NICE="${READERS_NICE:-10}"
STORE="${STORE:-sqlite}"
# shellcheck source=benches/lib.sh
source benches/lib.sh

num='^[0-9]+([.][0-9]+)?$'
for v in RATE DURATION WARMUP; do
    [[ ${!v} =~ $num ]] || die "$v must be a number, got ${!v}"
done
[[ $READERS =~ ^[1-9][0-9]*$ ]] || die "READERS must be a positive number"
[[ $GAMES =~ ^[1-9][0-9]*$ ]] || die "GAMES must be a positive number"
[[ $STORE == sqlite || $STORE == pg ]] || die "STORE must be sqlite or pg"
[[ $STORE == sqlite ]] || require_pg

build_release vrs vrs-benches
[[ -x $LOADGEN ]] || die "built binary not found: $LOADGEN"
BODY='{"bet_type":"over7","amount":1.5,"player_seed":"read-load","instant":false}'

# Places GAMES bets on 16 keep-alive connections and writes one verify path per game to $2.
place_games() {
    python3 - "$1" "$2" "$GAMES" "$BODY" <<'EOF'
import http.client, json, sys, threading, time, urllib.parse
url, out, n, body = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4].encode()
host = urllib.parse.urlsplit(url).netloc
ids, lock, errors = [], threading.Lock(), []
def worker(count):
    c = http.client.HTTPConnection(host, timeout=30)
    for _ in range(count):
        c.request("POST", "/api/v1/games/dice/bet", body,
                  {"Content-Type": "application/json"})
        r = c.getresponse()
        doc = json.loads(r.read())
        if r.status != 202:
            errors.append(f"{r.status} {doc}")
            return
        with lock:
            ids.append(doc["game_id"])
threads = [threading.Thread(target=worker, args=(n // 16 + (i < n % 16),)) for i in range(16)]
for t in threads: t.start()
for t in threads: t.join()
if errors:
    sys.exit(f"placing games failed: {errors[0]}")
# Wait until the last one placed is resolved (200 from its verification).
deadline = time.time() + 120
c = http.client.HTTPConnection(host, timeout=30)
while True:
    c.request("GET", f"/api/v1/verify/{ids[-1]}")
    r = c.getresponse(); r.read()
    if r.status == 200: break
    if time.time() > deadline: sys.exit("the placed games did not resolve within 120 s")
    time.sleep(0.5)
with open(out, "w") as f:
    f.writelines(f"/api/v1/verify/{i}\n" for i in ids)
EOF
}

bets() {
    "$LOADGEN" --json ${REPORT_EVERY:+--report-every "$REPORT_EVERY"} --rate "$RATE" --connections 32 --duration "$DURATION" --warmup "$WARMUP" \
        --body "$BODY" --url "$SERVER_URL"
}

readers() {
    nice -n "$READERS_NICE" "$LOADGEN" --json ${READ_RATE:+--rate "$READ_RATE"} --connections "$READERS" --duration "$DURATION" --warmup "$WARMUP" \
        --get-paths "$WORK/paths.txt" --accept-status 200 --url "$SERVER_URL"
}

# One JSON line: the phase, and the bets' and the readers' figures.
summarize() {
    local scenario=$1 phase=$2 bets_file=$3 readers_file=${4:-}
    local bad=0 v
    for v in non_202_total errors; do
        [[ "$(json_num "$v" "$bets_file")" == 0 ]] || bad=1
        [[ -z $readers_file || "$(json_num "$v" "$readers_file")" == 0 ]] || bad=1
    done
    printf '{"scenario":"%s","phase":"%s","bets_per_s":%s,"bet_p50_ms":%s,"bet_p99_ms":%s' \
        "$scenario" "$phase" "$(json_num accepted_per_s "$bets_file")" \
        "$(json_num p50 "$bets_file")" "$(json_num p99 "$bets_file")"
    if [[ -n $readers_file ]]; then
        printf ',"verifies_per_s":%s,"verify_p50_ms":%s,"verify_p99_ms":%s' \
            "$(json_num accepted_per_s "$readers_file")" "$(json_num p50 "$readers_file")" \
            "$(json_num p99 "$readers_file")"
    fi
    printf '}\n'
    if ((bad)); then
        cat "$bets_file" ${readers_file:+"$readers_file"} >&2
        die "$scenario/$phase: a request failed"
    fi
}

for scenario in $SCENARIOS; do
    case $scenario in
    cached) flags=() ;;
    uncached) flags=(--verify-cache 0) ;;
    *) die "unknown scenario $scenario (cached, uncached)" ;;
    esac
    store_begin "$scenario"
    start_server "$scenario" "${STORE_ARGS[@]}" --pool-threads 0 ${flags[@]+"${flags[@]}"}
    log "$scenario: placing $GAMES games"
    place_games "$SERVER_URL" "$WORK/paths.txt"
    log "$scenario: bets alone at $RATE/s"
    fg_run bets >"$WORK/alone.json" || die "$scenario: the bets alone failed"
    summarize "$scenario" alone "$WORK/alone.json"
    log "$scenario: bets at $RATE/s beside $READERS readers"
    readers >"$WORK/readers.json" &
    reader_pid=$!
    date -u +%H:%M:%S.%N >"$WORK/readers-started"
    fg_run bets >"$WORK/bets.json" || die "$scenario: the bets beside readers failed"
    wait "$reader_pid" || die "$scenario: the readers failed"
    summarize "$scenario" readers "$WORK/bets.json" "$WORK/readers.json"
    store_end
done
