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
DB_URL="${BENCH_DATABASE_URL:-${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}}"
READY_TIMEOUT="${READY_TIMEOUT:-120}"
TARGET_DIR="${CARGO_TARGET_DIR:-target}"
read -r -a SERVE_EXTRA <<<"${SERVE_FLAGS:-}"

log() { printf '%s\n' "load.sh: $*" >&2; }
die() {
    log "error: $*"
    exit 1
}

# --- state cleaned up on exit ------------------------------------------------------------------
WORK="$(mktemp -d "${TMPDIR:-/tmp}/vrs-load.XXXXXX")"
RUN_ID="$$"
PIDS=()
SCHEMAS=()
CHILD=""

# Runs a command in the background and waits for it, so that a signal to this script is handled
# at once (cleanup stops the command) instead of when the command ends.
fg_run() {
    local status=0
    "$@" &
    CHILD=$!
    wait "$CHILD" || status=$?
    CHILD=""
    return "$status"
}

stop_servers() {
    local pid i
    for pid in ${PIDS[@]+"${PIDS[@]}"}; do
        kill -TERM "$pid" 2>/dev/null || true
    done
    for pid in ${PIDS[@]+"${PIDS[@]}"}; do
        for ((i = 0; i < 100; i++)); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        if kill -0 "$pid" 2>/dev/null; then
            log "server $pid did not stop within 10 s of SIGTERM: killing it"
            kill -KILL "$pid" 2>/dev/null || true
        fi
        wait "$pid" 2>/dev/null || true
    done
    PIDS=()
}

psql_run() {
    psql "$DB_URL" -X -q -A -t -v ON_ERROR_STOP=1 -c "$1"
}

drop_schema() {
    psql_run "DROP SCHEMA IF EXISTS $1 CASCADE" >/dev/null 2>&1 ||
        log "could not drop schema $1: drop it by hand"
}

cleanup() {
    local status=$?
    trap - EXIT INT TERM
    if [[ -n $CHILD ]]; then
        kill -TERM "$CHILD" 2>/dev/null || true
        wait "$CHILD" 2>/dev/null || true
    fi
    stop_servers
    local s
    for s in ${SCHEMAS[@]+"${SCHEMAS[@]}"}; do
        drop_schema "$s"
    done
    if [[ $status -ne 0 && -d "$WORK" ]]; then
        log "logs kept in $WORK"
    else
        rm -rf "$WORK"
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- helpers -----------------------------------------------------------------------------------

# A fresh schema, dropped on exit (or by end_schema). Sets SCHEMA.
new_schema() {
    SCHEMA="vrs_bench_${RUN_ID}_$1"
    psql_run "CREATE SCHEMA $SCHEMA" >/dev/null || die "cannot create schema $SCHEMA in $DB_URL"
    SCHEMAS+=("$SCHEMA")
}

end_schema() {
    drop_schema "$1"
    local keep=() s
    for s in ${SCHEMAS[@]+"${SCHEMAS[@]}"}; do
        [[ $s == "$1" ]] || keep+=("$s")
    done
    SCHEMAS=(${keep[@]+"${keep[@]}"})
}

# DB_URL with the search_path set to one schema (the service creates its tables there).
url_with_schema() {
    local sep='?'
    [[ $DB_URL == *\?* ]] && sep='&'
    printf '%s%soptions=-csearch_path%%3D%s' "$DB_URL" "$sep" "$1"
}

# Starts `vrs serve` on a free port with the given extra arguments and waits until /health says
# ok. Sets SERVER_URL.
start_server() {
    local name=$1
    shift
    local log_file="$WORK/$name.log" pid deadline url=""
    : >"$log_file" # exists before the server opens it: polled below
    # DATABASE_URL from the caller's environment would turn the embedded scenario into a
    # Postgres one: the store is chosen only by the flags below.
    (cd "$WORK" && exec env -u DATABASE_URL "$VRS" serve --addr 127.0.0.1:0 "$@" \
        ${SERVE_EXTRA[@]+"${SERVE_EXTRA[@]}"}) >"$log_file" 2>&1 &
    pid=$!
    PIDS+=("$pid")
    deadline=$((SECONDS + READY_TIMEOUT))
    while :; do
        if ! kill -0 "$pid" 2>/dev/null; then
            tail -n 20 "$log_file" >&2 || true
            die "server $name exited during start-up (log above)"
        fi
        if [[ -z $url ]]; then
            url="$(sed -n 's|^vrs listening on \(http://[^ ]*\)$|\1|p' "$log_file" | head -n 1 || true)"
        fi
        if [[ -n $url ]] && curl -fsS --max-time 2 "$url/health" 2>/dev/null |
            grep -q '"status":"ok"'; then
            break
        fi
        if ((SECONDS >= deadline)); then
            tail -n 20 "$log_file" >&2 || true
            die "server $name not healthy after ${READY_TIMEOUT} s (log above)"
        fi
        sleep 0.2
    done
    log "$name ready at $url"
    SERVER_URL="$url"
}

# A number from vrs-loadgen's one-line JSON report.
json_num() {
    sed -n "s/.*\"$1\":\([-0-9.eE+]*\).*/\1/p" "$2" | head -n 1
}

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

# Instant scenarios: fill the pool (all threads), then restart the same store without a
# generator, so that serving is measured alone (`vrs bench pool` measures generation).
INSTANT_FILL="${INSTANT_FILL:-160000}"
POOL_T="${POOL_T:-64}"
fill_pool() {
    local name=$1
    shift
    start_server "$name-fill" "$@" --pool-iterations "$POOL_T" --pool-depth "$INSTANT_FILL" \
        --pool-low-water "$INSTANT_FILL" --pool-batch 4096 --pool-threads "$(nproc)"
    log "$name: filling the pool to $INSTANT_FILL entries (T_pool = $POOL_T)"
    local depth=0
    while ((depth < INSTANT_FILL)); do
        sleep 2
        depth="$(curl -fsS --max-time 5 "$SERVER_URL/api/v1/stats" |
            sed -n 's/.*"pool":{[^}]*"depth":\([0-9]*\).*/\1/p')"
        depth="${depth:-0}"
    done
    stop_servers
    start_server "$name" "$@" --pool-threads 0
}
INSTANT_ARGS=(--accept-status 200
    --body '{"bet_type":"over7","amount":1.5,"player_seed":"load","instant":true}')

# Runs pgbench with $1 clients and $2 threads; sets TPS (the figure without initial
# connection time where pgbench prints both).
NOTARY_BODY='{"schema":"sha256","payload_hash":"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08","metadata":{"load":1}}'
# Makes an API key on the store given by the flags ("--data-dir D" or "--database-url U") and
# points the load at the notary with it.
notary_key() {
    local key
    key="$(env -u DATABASE_URL "$VRS" keys create --name load "$@" 2>/dev/null)" ||
        die "vrs keys create failed"
    NOTARY_KEY="$key"
    LOAD_ARGS=(--path /v1/notarize --body "$NOTARY_BODY" --header "Authorization: Bearer $key")
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
log "building (release) into $TARGET_DIR"
cargo build --release -p vrs -p vrs-benches
VRS="$TARGET_DIR/release/vrs"
LOADGEN="$TARGET_DIR/release/vrs-loadgen"
[[ $VRS == /* ]] || VRS="$PWD/$VRS"
[[ $LOADGEN == /* ]] || LOADGEN="$PWD/$LOADGEN"
[[ -x $VRS && -x $LOADGEN ]] || die "built binaries not found in $TARGET_DIR/release"
command -v curl >/dev/null || die "curl is needed to poll /health"

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
        notary_key --data-dir "$data_dir"
        load sqlite-notary "$SERVER_URL"
        LOAD_ARGS=()
        seal_latency sqlite-notary
        stop_servers
        rm -rf "$data_dir"
        ;;
    pg1-notary)
        new_schema pg1n
        start_server pg1-notary --database-url "$(url_with_schema "$SCHEMA")"
        notary_key --database-url "$(url_with_schema "$SCHEMA")"
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
