# shellcheck shell=bash
# Variables set here are read by the scripts that source this file.
# shellcheck disable=SC2034
# Shell helpers shared by the benchmark scripts (load.sh, http-load.sh, soak.sh): sourced, not
# run. The caller sets `set -euo pipefail` and changes to the repository root first; sourcing
# this file makes the work directory WORK and installs the traps that clean up on exit: servers
# started with start_server stop, schemas made with new_schema are dropped, a command run with
# fg_run is stopped, and the function `cleanup_hook`, if the caller defines one, runs first.
# WORK is removed after a successful run and kept (its logs named) after a failure, or always
# with KEEP_WORK=1 (to read a passing run's server log).
#
# Environment read here:
#   BENCH_DATABASE_URL, else TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test
#                          the PostgreSQL server for the pg scenarios (psql_run, new_schema)
#   SERVE_FLAGS            extra flags for every `vrs serve`, e.g. "--epoch-ms 2000"
#   CARGO_TARGET_DIR       where cargo builds (default: target)
#   READY_TIMEOUT=120      seconds to wait for a server to answer /health
#   INSTANT_FILL=160000 POOL_T=64   the pool fill_pool prepares for instant bets
#
# Every `vrs serve` gets `--rate-limit 0` (unless SERVE_FLAGS names --rate-limit): the load
# comes from one loopback address, which the per-client write limit would otherwise cap at
# 100 requests/s.

DB_URL="${BENCH_DATABASE_URL:-${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}}"
READY_TIMEOUT="${READY_TIMEOUT:-120}"
TARGET_DIR="${CARGO_TARGET_DIR:-target}"
read -r -a SERVE_EXTRA <<<"${SERVE_FLAGS:-}"
SCRIPT_NAME="${0##*/}"

log() { printf '%s\n' "$SCRIPT_NAME: $*" >&2; }
die() {
    log "error: $*"
    exit 1
}

# --- state cleaned up on exit ------------------------------------------------------------------
WORK="$(mktemp -d "${TMPDIR:-/tmp}/vrs-${SCRIPT_NAME%.sh}.XXXXXX")"
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

# Stops one process started by this script: SIGTERM, then SIGKILL after 10 s.
stop_pid() {
    local pid=$1 what=$2 i
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        log "$what $pid did not stop within 10 s of SIGTERM: killing it"
        kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
}

stop_servers() {
    local pid
    for pid in ${PIDS[@]+"${PIDS[@]}"}; do
        kill -TERM "$pid" 2>/dev/null || true
    done
    for pid in ${PIDS[@]+"${PIDS[@]}"}; do
        stop_pid "$pid" server
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
    if declare -F cleanup_hook >/dev/null; then
        cleanup_hook || true
    fi
    stop_servers
    local s
    for s in ${SCHEMAS[@]+"${SCHEMAS[@]}"}; do
        drop_schema "$s"
    done
    if [[ ($status -ne 0 || ${KEEP_WORK:-0} == 1) && -d "$WORK" ]]; then
        log "logs kept in $WORK"
    else
        rm -rf "$WORK"
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- build -------------------------------------------------------------------------------------

# Builds the given packages (release) and sets VRS and LOADGEN to the binaries' absolute paths.
build_release() {
    local p args=()
    for p in "$@"; do
        args+=(-p "$p")
    done
    log "building (release) into $TARGET_DIR"
    cargo build --release "${args[@]}"
    VRS="$TARGET_DIR/release/vrs"
    LOADGEN="$TARGET_DIR/release/vrs-loadgen"
    [[ $VRS == /* ]] || VRS="$PWD/$VRS"
    [[ $LOADGEN == /* ]] || LOADGEN="$PWD/$LOADGEN"
    [[ -x $VRS ]] || die "built binary not found: $VRS"
    command -v curl >/dev/null || die "curl is needed to poll /health"
}

# --- PostgreSQL schemas ------------------------------------------------------------------------

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

# Fails unless psql reaches DB_URL.
require_pg() {
    command -v psql >/dev/null || die "PostgreSQL scenarios need psql"
    psql_run 'SELECT 1' >/dev/null 2>&1 || die "PostgreSQL not reachable at $DB_URL"
}

# A fresh store for one scenario, the embedded store in a new directory under WORK or, with
# STORE=pg, a new PostgreSQL schema: sets STORE_ARGS, the `vrs serve` flags that select it.
DATA_DIR=""
store_begin() {
    if [[ ${STORE:-sqlite} == pg ]]; then
        new_schema "$1"
        STORE_ARGS=(--database-url "$(url_with_schema "$SCHEMA")")
    else
        DATA_DIR="$(mktemp -d "$WORK/data-$1.XXXXXX")"
        if [[ "$(stat -f -c %T "$DATA_DIR" 2>/dev/null)" == tmpfs ]]; then
            log "warning: $DATA_DIR is on tmpfs, where fsync costs nothing: set TMPDIR to a disk"
        fi
        STORE_ARGS=(--data-dir "$DATA_DIR")
    fi
}

# Stops the servers and removes the store store_begin made.
store_end() {
    stop_servers
    if [[ ${STORE:-sqlite} == pg ]]; then
        end_schema "$SCHEMA"
    else
        rm -rf "$DATA_DIR"
    fi
}

# --- servers -----------------------------------------------------------------------------------

# Starts `vrs serve` on a free port with the given extra arguments and waits until /health says
# ok. Sets SERVER_URL, SERVER_PID (the vrs process itself) and METRICS_URL (empty without
# --metrics-addr).
start_server() {
    local name=$1
    shift
    local log_file="$WORK/$name.log" pid deadline url="" limit=(--rate-limit 0) f
    for f in ${SERVE_EXTRA[@]+"${SERVE_EXTRA[@]}"}; do
        if [[ $f == --rate-limit || $f == --rate-limit=* ]]; then
            limit=()
        fi
    done
    : >"$log_file" # exists before the server opens it: polled below
    # DATABASE_URL from the caller's environment would turn the embedded scenario into a
    # Postgres one: the store is chosen only by the flags below.
    (cd "$WORK" && exec env -u DATABASE_URL "$VRS" serve --addr 127.0.0.1:0 ${limit[@]+"${limit[@]}"} \
        "$@" ${SERVE_EXTRA[@]+"${SERVE_EXTRA[@]}"}) >"$log_file" 2>&1 &
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
    SERVER_PID="$pid"
    METRICS_URL="$(sed -n 's|^vrs metrics listening on \(http://[^ ]*\)$|\1|p' "$log_file" |
        head -n 1 || true)"
}

# A number from a one-line JSON object (vrs-loadgen's report): json_num KEY FILE.
json_num() {
    sed -n "s/.*\"$1\":\([-0-9.eE+]*\).*/\1/p" "$2" | head -n 1
}

# --- instant bets ------------------------------------------------------------------------------

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

# --- notary ------------------------------------------------------------------------------------

NOTARY_BODY='{"schema":"sha256","payload_hash":"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08","metadata":{"load":1}}'
# Makes an API key on the store given by the flags ("--data-dir D" or "--database-url U");
# sets NOTARY_KEY.
notary_key() {
    local out
    out="$(env -u DATABASE_URL "$VRS" keys create --json --name load "$@" 2>"$WORK/keys.log")" || {
        cat "$WORK/keys.log" >&2
        die "vrs keys create failed"
    }
    NOTARY_KEY="$(printf '%s\n' "$out" | sed -n 's/.*"key":"\([^"]*\)".*/\1/p' | head -n 1)"
    [[ -n $NOTARY_KEY ]] || die "no key in the output of vrs keys create --json: $out"
}

# --- a witnessed server --------------------------------------------------------------------------

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Starts `vrs serve` on the embedded store in $WORK/$1 with its log (origin $2) pushed to three
# `vrs witness` processes on loopback (keys and state in $WORK/w1..w3), the remaining arguments
# added to `vrs serve`'s; waits until all three cosign. Sets WITNESSED_URL.
start_witnessed() {
    local name=$1 origin=$2 port key wport log_key i deadline
    shift 2
    local wflags=() wports=()
    port="$(free_port)"
    for i in 1 2 3; do
        mkdir -p "$WORK/w$i"
        key="$("$VRS" witness --name "bench/w$i" --state-dir "$WORK/w$i" --print-key)"
        wport="$(free_port)"
        wports+=("$wport")
        wflags+=(--witness "$key http://127.0.0.1:$wport")
    done
    mkdir -p "$WORK/$name"
    (cd "$WORK" && exec env -u DATABASE_URL "$VRS" serve --addr "127.0.0.1:$port" --rate-limit 0 \
        --data-dir "$WORK/$name" --log-origin "$origin" "${wflags[@]}" "$@") >"$WORK/$name.log" 2>&1 &
    PIDS+=("$!")
    WITNESSED_URL="http://127.0.0.1:$port"
    deadline=$((SECONDS + READY_TIMEOUT))
    until curl -fsS --max-time 2 "$WITNESSED_URL/health" 2>/dev/null | grep -q '"status":"ok"'; do
        ((SECONDS < deadline)) || die "the witnessed server did not start: $(tail -n 20 "$WORK/$name.log")"
        sleep 0.2
    done
    log_key="$(sed -n "s|^vrs log $origin key \(.*\)$|\1|p" "$WORK/$name.log" | head -n 1)"
    [[ -n $log_key ]] || die "the server printed no log key"
    for i in 1 2 3; do
        "$VRS" witness --name "bench/w$i" --state-dir "$WORK/w$i" --addr "127.0.0.1:${wports[$((i - 1))]}" \
            --log "$log_key $WITNESSED_URL/log/" >"$WORK/w$i.log" 2>&1 &
        PIDS+=("$!")
    done
    deadline=$((SECONDS + 60))
    until [[ $(curl -fsS "$WITNESSED_URL/log/checkpoint" | grep -c '^— bench/w') == 3 ]]; do
        ((SECONDS < deadline)) || die "the witnesses did not cosign: $(tail -n 5 "$WORK"/w*.log)"
        sleep 0.2
    done
}
