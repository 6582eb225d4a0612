#!/usr/bin/env bash
# Durable-bet throughput of `vrs serve`, the reproducible benchmark behind docs/PERFORMANCE.md.
#
# Builds vrs and vrs-loadgen (release), then runs each scenario against fresh state:
#   sqlite  the embedded store, in a new temporary directory
#   pg1     PostgreSQL, one replica, in a new schema
#   pg3     PostgreSQL, three replicas sharing one new schema; load spread over the three
#   sqlite-notary, pg1-notary
#           notarizations (POST /v1/notarize with an API key made by `vrs keys create`), then
#           SEAL_SAMPLES receipts timed from their 202 to status "sealed" (--notary-batch-ms
#           default, 1000)
#   sqlite-instant, pg1-instant
#           instant (pool-served) bets, answered 200 already resolved: the pool is filled
#           first (INSTANT_FILL entries at T_pool = POOL_T), then the store is served without
#           a generator running
# vrs-loadgen keeps CONNECTIONS closed-loop keep-alive connections busy posting dice bets and
# counts only 202 (the bet is stored) as accepted. The yardstick, measured in the same run on
# the same database, is pgbench's single-row INSERT rate with 64 clients and with 1.
#
# Each server calibrates its VDF for about a second at start-up and then keeps one core busy
# with the VDF: intended, the benchmark measures the service as it really runs.
# Every server runs with `--rate-limit 0`: all the load comes from one loopback address. The
# helpers shared with http-load.sh and soak.sh live in benches/lib.sh.
#
# Environment:
#   DURATION=10            measured seconds per scenario (also pgbench's -T, rounded)
#   WARMUP=2               seconds of load before measuring
#   CONNECTIONS=64         vrs-loadgen connections
#   SCENARIOS="sqlite pg1 pg3 sqlite-instant pg1-instant sqlite-notary pg1-notary"
#   SEAL_SAMPLES=20        receipts timed from 202 to sealed after each notary scenario
#   INSTANT_FILL=160000 POOL_T=64   pool prepared for the instant scenarios
#   BENCH_DATABASE_URL, else TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test
#                          (needs psql and pgbench; each scenario gets its own schema, dropped
#                          afterwards)
#   SERVE_FLAGS            extra flags for every `vrs serve`, e.g. "--epoch-ms 2000"
#   CARGO_TARGET_DIR       where cargo builds (default: target)
#   READY_TIMEOUT=120      seconds to wait for a server to answer /health
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION="${DURATION:-10}"
WARMUP="${WARMUP:-2}"
CONNECTIONS="${CONNECTIONS:-64}"
SCENARIOS="${SCENARIOS:-sqlite pg1 pg3 sqlite-instant pg1-instant sqlite-notary pg1-notary}"
SEAL_SAMPLES="${SEAL_SAMPLES:-20}"
# shellcheck source=benches/lib.sh
source benches/lib.sh

# --- helpers -----------------------------------------------------------------------------------

# Runs vrs-loadgen on the given URLs; the JSON report goes to $WORK/$name.json.
load() {
    local name=$1
    shift
    local args=() u
    for u in "$@"; do
        args+=(--url "$u")
    done
    log "$name: $CONNECTIONS connections, ${WARMUP} s warm-up, ${DURATION} s measured"
    if ! fg_run "$LOADGEN" --json --connections "$CONNECTIONS" --duration "$DURATION" \
        --warmup "$WARMUP" "${args[@]}" ${LOAD_ARGS[@]+"${LOAD_ARGS[@]}"} >"$WORK/$name.json"; then
        cat "$WORK/$name.json" >&2 || true
        for u in "$WORK/$name"*.log; do
            log "tail of $u:"
            tail -n 20 "$u" >&2 || true
        done
        die "$name: vrs-loadgen failed"
    fi
    local other errors
    other="$(json_num non_202_total "$WORK/$name.json")"
    errors="$(json_num errors "$WORK/$name.json")"
    if [[ $other != 0 || $errors != 0 ]]; then
        NOTES+=("$name: $other non-202 responses, $errors I/O errors: $(cat "$WORK/$name.json")")
    fi
    RESULTS+=("$name")
}

INSTANT_ARGS=(--accept-status 200
    --body '{"bet_type":"over7","amount":1.5,"player_seed":"load","instant":true}')

# Points the load at the notary with an API key made on the store given by the flags.
notary_load() {
    notary_key "$@"
    LOAD_ARGS=(--path /v1/notarize --body "$NOTARY_BODY" --header "Authorization: Bearer $NOTARY_KEY")
}
# Times SEAL_SAMPLES receipts from their 202 to status "sealed" (polled every 10 ms); records
# the mean and the largest in SEAL_<scenario>.
seal_latency() {
    local name=$1 i id t0 t1 status total=0 worst=0 ms
    for ((i = 0; i < SEAL_SAMPLES; i++)); do
        id="$(curl -fsS -X POST -H "Authorization: Bearer $NOTARY_KEY" \
            -H 'Content-Type: application/json' --data "$NOTARY_BODY" "$SERVER_URL/v1/notarize" |
            sed -n 's/.*"receipt_id":"\([0-9a-f]*\)".*/\1/p')"
        t0="$(date +%s%N)"
        [[ -n $id ]] || die "$name: a notarization was refused"
        while :; do
            status="$(curl -fsS "$SERVER_URL/v1/notarize/$id" | sed -n 's/.*"status":"\([a-z]*\)".*/\1/p' | head -n 1)"
            [[ $status == pending ]] || break
            sleep 0.01
        done
        t1="$(date +%s%N)"
        ms=$(((t1 - t0) / 1000000))
        total=$((total + ms))
        ((ms > worst)) && worst=$ms
    done
    SEAL["$name"]="mean $((total / SEAL_SAMPLES)) ms, max $worst ms over $SEAL_SAMPLES receipts"
}
declare -A SEAL=()

# Runs pgbench with $1 clients and $2 threads; sets TPS (the figure without initial
# connection time where pgbench prints both).
pgbench_tps() {
    local clients=$1 threads=$2 out="$WORK/pgbench-c$1.log" tps
    log "pgbench: single-row INSERT, $clients client(s), ${PGBENCH_SECS} s"
    fg_run pgbench -n -f "$WORK/insert.sql" -c "$clients" -j "$threads" -T "$PGBENCH_SECS" \
        "$DB_URL" >"$out" 2>&1 || {
        cat "$out" >&2
        die "pgbench failed"
    }
    tps="$(sed -n 's/^tps = \([0-9.]*\) (\(without initial connection time\|excluding connections establishing\)).*/\1/p' "$out" | head -n 1)"
    [[ -n $tps ]] || tps="$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$out" | head -n 1)"
    [[ -n $tps ]] || {
        cat "$out" >&2
        die "no tps line in pgbench's output"
    }
    TPS="$tps"
}

# --- build ---------------------------------------------------------------------------------------
build_release vrs vrs-benches
[[ -x $LOADGEN ]] || die "built binary not found: $LOADGEN"

# --- pgbench yardstick ---------------------------------------------------------------------------
needs_pg=0
for s in $SCENARIOS; do
    if [[ $s == pg* ]]; then needs_pg=1; fi
done
PGBENCH_SECS="$(printf '%.0f' "$DURATION")"
((PGBENCH_SECS >= 1)) || PGBENCH_SECS=1
TPS64="" TPS1=""
if command -v psql >/dev/null && command -v pgbench >/dev/null &&
    psql_run 'SELECT 1' >/dev/null 2>&1; then
    new_schema pgbench
    psql_run "CREATE TABLE $SCHEMA.vrs_bench_pgbench (id bigserial PRIMARY KEY, v text NOT NULL)" \
        >/dev/null
    printf "INSERT INTO %s.vrs_bench_pgbench (v) VALUES ('x');\n" "$SCHEMA" >"$WORK/insert.sql"
    pgbench_tps 64 2
    TPS64="$TPS"
    pgbench_tps 1 1
    TPS1="$TPS"
    end_schema "$SCHEMA"
elif ((needs_pg)); then
    die "PostgreSQL scenarios need psql, pgbench and a reachable $DB_URL"
else
    log "no PostgreSQL at $DB_URL (or no psql/pgbench): skipping the pgbench yardstick"
fi

# --- scenarios -----------------------------------------------------------------------------------
RESULTS=()
NOTES=()
declare -A LABEL=(
    [sqlite]="embedded store (SQLite)"
    [pg1]="PostgreSQL, 1 replica"
    [pg3]="PostgreSQL, 3 replicas"
    [sqlite-instant]="instant (pool-served), embedded store"
    [pg1-instant]="instant (pool-served), PostgreSQL, 1 replica"
    [sqlite-notary]="notarizations (API key), embedded store"
    [pg1-notary]="notarizations (API key), PostgreSQL, 1 replica"
)
for s in $SCENARIOS; do
    case $s in
    sqlite)
        data_dir="$(mktemp -d "$WORK/sqlite-data.XXXXXX")"
        if [[ "$(stat -f -c %T "$data_dir" 2>/dev/null)" == tmpfs ]]; then
            log "warning: $data_dir is on tmpfs, where fsync costs nothing: set TMPDIR to a disk"
        fi
        start_server sqlite --data-dir "$data_dir"
        load sqlite "$SERVER_URL"
        stop_servers
        rm -rf "$data_dir"
        ;;
    pg1)
        new_schema pg1
        start_server pg1 --database-url "$(url_with_schema "$SCHEMA")"
        load pg1 "$SERVER_URL"
        stop_servers
        end_schema "$SCHEMA"
        ;;
    pg3)
        new_schema pg3
        # The first replica applies the migrations and takes the lead of the epoch chain;
        # the other two start once it is up.
        start_server pg3-a --database-url "$(url_with_schema "$SCHEMA")"
        urls=("$SERVER_URL")
        start_server pg3-b --database-url "$(url_with_schema "$SCHEMA")"
        urls+=("$SERVER_URL")
        start_server pg3-c --database-url "$(url_with_schema "$SCHEMA")"
        urls+=("$SERVER_URL")
        load pg3 "${urls[@]}"
        stop_servers
        end_schema "$SCHEMA"
        ;;
    sqlite-instant)
        data_dir="$(mktemp -d "$WORK/sqlite-data.XXXXXX")"
        fill_pool sqlite-instant --data-dir "$data_dir"
        LOAD_ARGS=("${INSTANT_ARGS[@]}")
        load sqlite-instant "$SERVER_URL"
        LOAD_ARGS=()
        stop_servers
        rm -rf "$data_dir"
        ;;
    pg1-instant)
        new_schema pg1i
        fill_pool pg1-instant --database-url "$(url_with_schema "$SCHEMA")"
        LOAD_ARGS=("${INSTANT_ARGS[@]}")
        load pg1-instant "$SERVER_URL"
        LOAD_ARGS=()
        stop_servers
        end_schema "$SCHEMA"
        ;;
    sqlite-notary)
        data_dir="$(mktemp -d "$WORK/sqlite-data.XXXXXX")"
        start_server sqlite-notary --data-dir "$data_dir"
        notary_load --data-dir "$data_dir"
        load sqlite-notary "$SERVER_URL"
        LOAD_ARGS=()
        seal_latency sqlite-notary
        stop_servers
        rm -rf "$data_dir"
        ;;
    pg1-notary)
        new_schema pg1n
        start_server pg1-notary --database-url "$(url_with_schema "$SCHEMA")"
        notary_load --database-url "$(url_with_schema "$SCHEMA")"
        load pg1-notary "$SERVER_URL"
        LOAD_ARGS=()
        seal_latency pg1-notary
        stop_servers
        end_schema "$SCHEMA"
        ;;
    *) die "unknown scenario $s (known: sqlite pg1 pg3 sqlite-instant pg1-instant sqlite-notary pg1-notary)" ;;
    esac
done

# --- report --------------------------------------------------------------------------------------
cpu="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)"
echo
echo "vrs durable writes, $(date -u +%Y-%m-%d), $(git describe --always --dirty 2>/dev/null || echo "?"):" \
    "${cpu:-unknown CPU}, $(nproc 2>/dev/null || echo '?') cores;" \
    "$CONNECTIONS connections, ${DURATION} s after ${WARMUP} s warm-up"
echo
echo "| scenario | accepted (202) per s | p50 (ms) | p99 (ms) | ratio to pgbench (64 clients) tps |"
echo "|---|---:|---:|---:|---:|"
for s in ${RESULTS[@]+"${RESULTS[@]}"}; do
    f="$WORK/$s.json"
    rate="$(json_num accepted_per_s "$f")"
    p50="$(json_num p50 "$f")"
    p99="$(json_num p99 "$f")"
    if [[ -n $TPS64 ]]; then
        ratio="$(awk -v a="$rate" -v b="$TPS64" 'BEGIN { printf "%.2f", a / b }')"
    else
        ratio="n/a"
    fi
    awk -v l="${LABEL[$s]}" -v r="$rate" -v p50="$p50" -v p99="$p99" -v q="$ratio" \
        'BEGIN { printf "| %s | %.0f | %.2f | %.2f | %s |\n", l, r, p50, p99, q }'
done
echo
if [[ -n $TPS64 ]]; then
    awk -v a="$TPS64" -v b="$TPS1" -v t="$PGBENCH_SECS" 'BEGIN {
        printf "pgbench, single-row INSERT on the same database (-T %d): %.0f tps with 64 clients, %.0f tps with 1 client\n", t, a, b }'
else
    echo "pgbench: not run (no PostgreSQL)"
fi
for s in "${!SEAL[@]}"; do
    echo "202 to sealed, ${LABEL[$s]}: ${SEAL[$s]}"
done
for n in ${NOTES[@]+"${NOTES[@]}"}; do
    echo
    echo "note: $n"
done
