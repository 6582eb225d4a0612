#!/usr/bin/env bash
# What a larger --security-margin costs (docs/PROTOCOL.md §10, "Margin and cost"): for each
# margin, a fresh `vrs serve` (release, embedded store) at --epoch-ms EPOCH_MS, then
#   1. bet latency: LATENCY_BETS dice bets one every SPACING s, each timed from its 202 to its
#      first 200 (benches/bet_latency.py), with the effective margin of every epoch meanwhile;
#   2. durable bets per second: vrs-loadgen's closed loop, CONNECTIONS connections, DURATION s.
# Prints one line per margin and a markdown table on stdout; logs on stderr. The CPU model goes
# in the table's caption: run it on the machine whose numbers you want.
#
# Environment:
#   MARGINS="1 1.5 2.5 4"   EPOCH_MS=5000   LATENCY_BETS=20   SPACING=1
#   SETTLE_EPOCHS=3         epochs resolved before measuring (the first are planned with the
#                           start-up calibration, before any VDF has measured the real rate)
#   DURATION=10   WARMUP=2   CONNECTIONS=64   (vrs-loadgen)
#   SERVE_FLAGS, CARGO_TARGET_DIR, READY_TIMEOUT as in benches/lib.sh
set -euo pipefail
cd "$(dirname "$0")/.."

MARGINS="${MARGINS:-1 1.5 2.5 4}"
EPOCH_MS="${EPOCH_MS:-5000}"
LATENCY_BETS="${LATENCY_BETS:-20}"
SPACING="${SPACING:-1}"
SETTLE_EPOCHS="${SETTLE_EPOCHS:-3}"
DURATION="${DURATION:-10}"
WARMUP="${WARMUP:-2}"
CONNECTIONS="${CONNECTIONS:-64}"
# shellcheck source=benches/lib.sh
source benches/lib.sh

build_release vrs vrs-benches
command -v python3 >/dev/null || die "python3 is needed for the latency probe"
cpu="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
log "CPU: $cpu, $(nproc) cores; epochs of $EPOCH_MS ms; margins $MARGINS"

rows=()
for margin in $MARGINS; do
    store_begin "m${margin/./_}"
    start_server "margin-$margin" "${STORE_ARGS[@]}" --epoch-ms "$EPOCH_MS" \
        --security-margin "$margin" --pool-threads 0
    log "margin $margin: waiting for $SETTLE_EPOCHS epochs"
    until [[ "$(curl -fsS "$SERVER_URL/api/v1/stats" |
        sed -n 's/.*"last_resolved":\([0-9]*\).*/\1/p')" -ge $SETTLE_EPOCHS ]] 2>/dev/null; do
        sleep 1
    done
    log "margin $margin: latency of $LATENCY_BETS bets"
    latency="$(python3 benches/bet_latency.py "$SERVER_URL" "$LATENCY_BETS" "$SPACING")"
    log "margin $margin: $latency"
    log "margin $margin: $CONNECTIONS connections, ${WARMUP} s warm-up, ${DURATION} s measured"
    fg_run "$LOADGEN" --json --connections "$CONNECTIONS" --duration "$DURATION" \
        --warmup "$WARMUP" --url "$SERVER_URL" >"$WORK/load-$margin.json"
    rate="$(json_num accepted_per_s "$WORK/load-$margin.json")"
    store_end
    num() { sed -n "s/.*\"$1\": *\([-0-9.eE+]*\).*/\1/p" <<<"$latency" | head -n 1; }
    line="| $margin | $(num vdf_threads) | $(num window_p50_ms) | $(num latency_p50_s) | $(num latency_p95_s) | $(num latency_max_s) | ${rate%.*} | $(num effective_margin_min) – $(num effective_margin_p50) |"
    log "$line"
    rows+=("$line")
done

echo "CPU: $cpu ($(nproc) cores), --epoch-ms $EPOCH_MS, embedded store, no pool generator"
echo
echo "| margin | VDF threads | window p50 (ms) | latency p50 (s) | p95 (s) | max (s) | durable bets/s | effective margin (min – p50) |"
echo "|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
