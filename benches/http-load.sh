#!/usr/bin/env bash
# Loopback HTTP load on `vrs serve` with a real load generator (wrk), and nginx on the same
# machine, in the same run, as the yardstick for the read path.
#
# Builds vrs (release; RSA-2048, T calibrated at start-up as in load.sh, so one core runs the
# epoch VDF throughout), then runs each scenario against a fresh store:
#   entropy   GET /api/v1/entropy on vrs (200), then the same JSON body, fetched once from the
#             running vrs, served by nginx as a static file (Content-Type: application/json)
#             with the same wrk settings. vrs keeps running (its VDF busy) while nginx is
#             measured, so both are measured on the same machine state. Ratio vrs / nginx:
#             goal ≥ 0.5.
#   durable   POST /api/v1/games/dice/bet with "instant": false (202: the bet is stored)
#   instant   POST /api/v1/games/dice/bet with "instant": true (200: answered resolved from the
#             pool). The pool is filled first (INSTANT_FILL entries at T_pool = POOL_T, all
#             threads), then the store is served without a generator, as load.sh does.
#   notary    POST /v1/notarize with an API key made by `vrs keys create --json` (202)
# wrk runs a warm-up of WARMUP seconds (discarded), then DURATION seconds measured with
# --latency. benches/wrk.lua sets the method, body and headers and counts every response's
# status: only the scenario's success status counts in requests/s, and a scenario whose answers
# are not all that status (or that saw socket errors) is flagged under the table. The p50 and
# p99 are wrk's, over all responses of the measured run.
#
# nginx runs unprivileged in its own prefix under the work directory (its own config, logs,
# temporary paths and pid file; nothing of the system's nginx is read or changed) on a free
# port above 20000, with `-g 'daemon off;'`. NGINX_WORKERS=1 by default: vrs serves HTTP on one
# worker thread on this kind of machine (--http-threads defaults to all cores but the VDF's),
# so one nginx worker is the like-for-like yardstick; NGINX_WORKERS=auto gives nginx a worker
# per core. Run as root, nginx's workers run as nobody (the served file is made readable).
#
# By default the pool generator is off for the entropy, durable and notary scenarios
# (--pool-threads 0): in steady state the pool is full and the generator idle, and those
# requests never draw from it; GENERATOR=on leaves the service's default (it then fills the
# pool, on all cores but the VDF's, during the measurement).
#
# Needs wrk and nginx (Debian packages `wrk` and `nginx`): when one is missing it is installed
# with apt-get if this runs as root (or with passwordless sudo) and INSTALL=1 (the default);
# otherwise the script says what to install and stops. On a machine with systemd, installing
# the nginx package also starts the system's nginx on port 80: this script never uses it.
#
# Environment:
#   DURATION=10 WARMUP=2   measured and warm-up seconds per wrk run (whole seconds)
#   THREADS=2 CONNECTIONS=64   wrk -t and -c (the same for every run, nginx included)
#   SCENARIOS="entropy durable instant notary"
#   STORE=sqlite           or pg: PostgreSQL at BENCH_DATABASE_URL / TEST_DATABASE_URL, a new
#                          schema per scenario, dropped afterwards
#   NGINX_WORKERS=1        nginx worker_processes (a number, or auto)
#   GENERATOR=off          on: keep the pool generator running (see above)
#   INSTALL=1              0: never install wrk or nginx
#   INSTANT_FILL=160000 POOL_T=64, SERVE_FLAGS, CARGO_TARGET_DIR, READY_TIMEOUT: as in
#                          load.sh (benches/lib.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION="${DURATION:-10}"
WARMUP="${WARMUP:-2}"
THREADS="${THREADS:-2}"
CONNECTIONS="${CONNECTIONS:-64}"
SCENARIOS="${SCENARIOS:-entropy durable instant notary}"
STORE="${STORE:-sqlite}"
NGINX_WORKERS="${NGINX_WORKERS:-1}"
GENERATOR="${GENERATOR:-off}"
INSTALL="${INSTALL:-1}"
# shellcheck source=benches/lib.sh
source benches/lib.sh

[[ $DURATION =~ ^[1-9][0-9]*$ ]] || die "DURATION must be a whole number of seconds, 1 or more"
[[ $WARMUP =~ ^[0-9]+$ ]] || die "WARMUP must be a whole number of seconds"
[[ $THREADS =~ ^[1-9][0-9]*$ && $CONNECTIONS =~ ^[1-9][0-9]*$ ]] ||
    die "THREADS and CONNECTIONS must be positive numbers"
((CONNECTIONS >= THREADS)) || die "CONNECTIONS must be at least THREADS (wrk's rule)"
[[ $NGINX_WORKERS =~ ^([1-9][0-9]*|auto)$ ]] || die "NGINX_WORKERS must be a number or auto"
[[ $STORE == sqlite || $STORE == pg ]] || die "STORE must be sqlite or pg"
[[ $GENERATOR == on || $GENERATOR == off ]] || die "GENERATOR must be on or off"
for s in $SCENARIOS; do
    case $s in
    entropy | durable | instant | notary) ;;
    *) die "unknown scenario $s (known: entropy durable instant notary)" ;;
    esac
done

# --- tools -------------------------------------------------------------------------------------
NGINX="$(command -v nginx || true)"
[[ -n $NGINX || ! -x /usr/sbin/nginx ]] || NGINX=/usr/sbin/nginx
missing=()
command -v wrk >/dev/null || missing+=(wrk)
[[ -n $NGINX ]] || missing+=(nginx)
if ((${#missing[@]})); then
    sudo=()
    if ((EUID != 0)) && command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
        sudo=(sudo -n)
    fi
    if [[ $INSTALL == 1 ]] && command -v apt-get >/dev/null && ((EUID == 0 || ${#sudo[@]})); then
        log "installing ${missing[*]} (Debian packages) with apt-get"
        export DEBIAN_FRONTEND=noninteractive
        ${sudo[@]+"${sudo[@]}"} apt-get install -y --no-install-recommends "${missing[@]}" ||
            { ${sudo[@]+"${sudo[@]}"} apt-get update && ${sudo[@]+"${sudo[@]}"} apt-get install -y \
                --no-install-recommends "${missing[@]}"; } ||
            die "could not install ${missing[*]}"
        NGINX="$(command -v nginx || echo /usr/sbin/nginx)"
        if ! command -v wrk >/dev/null || [[ ! -x $NGINX ]]; then
            die "wrk or nginx still missing after apt-get install"
        fi
    else
        die "needs ${missing[*]}: install the Debian package(s) (apt-get install ${missing[*]}) or" \
            "put them on PATH (INSTALL=1 and root or passwordless sudo installs them)"
    fi
fi
WRK_LUA="$PWD/benches/wrk.lua"

build_release vrs

# --- nginx -------------------------------------------------------------------------------------
NGINX_PID=""
NGINX_URL=""
NGINX_DIR="$WORK/nginx"

cleanup_hook() {
    [[ -z $NGINX_PID ]] || stop_pid "$NGINX_PID" nginx
}

# Starts nginx serving $NGINX_DIR/html/api/v1/entropy on a free port; sets NGINX_URL.
start_nginx() {
    local conf="$NGINX_DIR/nginx.conf" user="" try port t
    mkdir -p "$NGINX_DIR/tmp" "$NGINX_DIR/logs"
    if ((EUID == 0)); then
        # Workers drop to nobody: let them reach the served file (WORK is private otherwise).
        user="user nobody $(id -gn nobody);"
        chmod o+x "$WORK"
        chmod -R a+rX "$NGINX_DIR/html"
    fi
    for ((try = 0; try < 10; try++)); do
        port=$((20000 + RANDOM % 40000))
        cat >"$conf" <<EOF
$user
worker_processes $NGINX_WORKERS;
pid $NGINX_DIR/nginx.pid;
lock_file $NGINX_DIR/nginx.lock;
error_log $NGINX_DIR/logs/error.log warn;
events { worker_connections $((CONNECTIONS * 2 > 1024 ? CONNECTIONS * 2 : 1024)); }
http {
    access_log off;
    types { }
    default_type application/json;
    sendfile on;
    tcp_nodelay on;
    keepalive_timeout 65;
    # Unlimited in practice, as vrs's keep-alive (nginx's default closes after 1000 requests).
    keepalive_requests 100000000;
    client_body_temp_path $NGINX_DIR/tmp/body;
    proxy_temp_path $NGINX_DIR/tmp/proxy;
    fastcgi_temp_path $NGINX_DIR/tmp/fastcgi;
    uwsgi_temp_path $NGINX_DIR/tmp/uwsgi;
    scgi_temp_path $NGINX_DIR/tmp/scgi;
    server {
        listen 127.0.0.1:$port;
        root $NGINX_DIR/html;
        location = /api/v1/entropy { }
    }
}
EOF
        "$NGINX" -p "$NGINX_DIR" -c "$conf" -e "$NGINX_DIR/logs/error.log" -g 'daemon off;' \
            >>"$NGINX_DIR/logs/stdout.log" 2>&1 &
        NGINX_PID=$!
        for ((t = 0; t < 100; t++)); do
            if ! kill -0 "$NGINX_PID" 2>/dev/null; then
                break
            fi
            if curl -fsS --max-time 2 -o /dev/null "http://127.0.0.1:$port/api/v1/entropy" 2>/dev/null; then
                NGINX_URL="http://127.0.0.1:$port"
                log "nginx ($NGINX_WORKERS worker(s)) ready at $NGINX_URL"
                return 0
            fi
            sleep 0.1
        done
        stop_pid "$NGINX_PID" nginx
        NGINX_PID=""
        grep -q 'Address already in use' "$NGINX_DIR/logs/error.log" 2>/dev/null ||
            {
                tail -n 20 "$NGINX_DIR/logs/error.log" "$NGINX_DIR/logs/stdout.log" >&2 || true
                die "nginx did not start (log above)"
            }
        : >"$NGINX_DIR/logs/error.log"
    done
    die "no free port for nginx after 10 tries"
}

stop_nginx() {
    [[ -z $NGINX_PID ]] || stop_pid "$NGINX_PID" nginx
    NGINX_PID=""
}

# --- scenarios ---------------------------------------------------------------------------------
GEN_ARGS=()
[[ $GENERATOR == on ]] || GEN_ARGS=(--pool-threads 0)
# A field of wrk.lua's result line: kv KEY LINE.
kv() {
    sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $2"
}

declare -A RESULT=()
RESULTS=()
NOTES=()
# run_wrk NAME URL EXPECT [METHOD [BODY [HEADER...]]]: a warm-up, then the measured run, whose
# result line goes to RESULT[NAME].
run_wrk() {
    local name=$1 url=$2 out="$WORK/$1.wrk" line
    shift 2
    if ((WARMUP > 0)); then
        log "$name: ${WARMUP} s warm-up"
        fg_run wrk -t "$THREADS" -c "$CONNECTIONS" -d "${WARMUP}s" --timeout 10s -s "$WRK_LUA" \
            "$url" -- "$@" >"$WORK/$name.warmup.wrk" 2>&1 || {
            cat "$WORK/$name.warmup.wrk" >&2
            die "$name: wrk failed"
        }
    fi
    log "$name: $THREADS threads, $CONNECTIONS connections, ${DURATION} s measured"
    fg_run wrk -t "$THREADS" -c "$CONNECTIONS" -d "${DURATION}s" --timeout 10s --latency \
        -s "$WRK_LUA" "$url" -- "$@" >"$out" 2>&1 || {
        cat "$out" >&2
        die "$name: wrk failed"
    }
    line="$(sed -n 's/^wrk-result //p' "$out" | head -n 1)"
    [[ -n $line ]] || {
        cat "$out" >&2
        die "$name: no result line in wrk's output"
    }
    RESULT["$name"]="$line"
    RESULTS+=("$name")
    local requests ok socket=0 k v
    requests="$(kv requests "$line")"
    ok="$(kv ok "$line")"
    for k in connect read write timeout; do
        v="$(kv "$k" "$line")"
        socket=$((socket + ${v:-0}))
    done
    if [[ $ok != "$requests" || $socket != 0 || $ok == 0 ]]; then
        local note="$name: $ok of $requests answers were the success status $1; statuses"
        note+=" $(kv statuses "$line"); socket errors: connect $(kv connect "$line"), read"
        note+=" $(kv read "$line"), write $(kv write "$line"), timeout $(kv timeout "$line")"
        NOTES+=("$note")
    fi
}

DURABLE_BODY='{"bet_type":"over7","amount":1.5,"player_seed":"load","instant":false}'
INSTANT_BODY='{"bet_type":"over7","amount":1.5,"player_seed":"load","instant":true}'

for s in $SCENARIOS; do
    case $s in
    entropy)
        store_begin entropy
        start_server entropy "${STORE_ARGS[@]}" ${GEN_ARGS[@]+"${GEN_ARGS[@]}"}
        mkdir -p "$NGINX_DIR/html/api/v1"
        body="$NGINX_DIR/html/api/v1/entropy"
        log "entropy: waiting for the first epoch to resolve"
        deadline=$((SECONDS + READY_TIMEOUT))
        until [[ "$(curl -sS --max-time 5 -o "$body" -w '%{http_code}' \
            "$SERVER_URL/api/v1/entropy")" == 200 ]]; do
            ((SECONDS < deadline)) || die "no entropy (200) from $SERVER_URL after ${READY_TIMEOUT} s"
            sleep 0.5
        done
        start_nginx
        ctype="$(curl -fsS -o /dev/null -w '%{content_type}' "$NGINX_URL/api/v1/entropy")"
        [[ $ctype == application/json* ]] || die "nginx answers Content-Type $ctype"
        cmp -s "$body" <(curl -fsS "$NGINX_URL/api/v1/entropy") ||
            die "nginx does not serve the body fetched from vrs"
        log "entropy: body of $(wc -c <"$body") bytes, served by both"
        run_wrk entropy "$SERVER_URL/api/v1/entropy" 200
        run_wrk nginx "$NGINX_URL/api/v1/entropy" 200
        stop_nginx
        store_end
        ;;
    durable)
        store_begin durable
        start_server durable "${STORE_ARGS[@]}" ${GEN_ARGS[@]+"${GEN_ARGS[@]}"}
        run_wrk durable "$SERVER_URL/api/v1/games/dice/bet" 202 POST "$DURABLE_BODY"
        store_end
        ;;
    instant)
        store_begin instant
        fill_pool instant "${STORE_ARGS[@]}"
        run_wrk instant "$SERVER_URL/api/v1/games/dice/bet" 200 POST "$INSTANT_BODY"
        depth="$(curl -fsS --max-time 5 "$SERVER_URL/api/v1/stats" |
            sed -n 's/.*"pool":{[^}]*"depth":\([0-9]*\).*/\1/p')"
        if [[ ${depth:-0} == 0 ]]; then
            NOTES+=("instant: the pool ran dry during the run: raise INSTANT_FILL")
        fi
        store_end
        ;;
    notary)
        store_begin notary
        start_server notary "${STORE_ARGS[@]}" ${GEN_ARGS[@]+"${GEN_ARGS[@]}"}
        notary_key "${STORE_ARGS[@]}"
        run_wrk notary "$SERVER_URL/v1/notarize" 202 POST "$NOTARY_BODY" \
            "Authorization: Bearer $NOTARY_KEY"
        store_end
        ;;
    esac
done

# --- report ------------------------------------------------------------------------------------
cpu="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)"
commit="$(git describe --always --dirty 2>/dev/null || echo "?")"
store_label="embedded store (SQLite)"
[[ $STORE == pg ]] && store_label="PostgreSQL, 1 replica"
declare -A LABEL=(
    [entropy]="GET /api/v1/entropy, vrs"
    [nginx]="GET /api/v1/entropy, nginx static file ($NGINX_WORKERS worker(s))"
    [durable]="durable bets (202), $store_label"
    [instant]="instant bets (200), $store_label"
    [notary]="notarizations (202, API key), $store_label"
)
nginx_rate=""
[[ -n ${RESULT[nginx]:-} ]] && nginx_rate="$(kv ok_per_s "${RESULT[nginx]}")"

echo
echo "vrs under wrk, $(date -u +%Y-%m-%d), commit $commit: ${cpu:-unknown CPU}," \
    "$(nproc 2>/dev/null || echo '?') cores; wrk -t $THREADS -c $CONNECTIONS, ${DURATION} s after" \
    "${WARMUP} s warm-up; $(wrk --version 2>&1 | head -n 1 | cut -d' ' -f1-2), $("$NGINX" -v 2>&1)"
echo
echo '```sh'
echo "DURATION=$DURATION WARMUP=$WARMUP THREADS=$THREADS CONNECTIONS=$CONNECTIONS" \
    "SCENARIOS=\"$SCENARIOS\" STORE=$STORE NGINX_WORKERS=$NGINX_WORKERS GENERATOR=$GENERATOR" \
    "${SERVE_FLAGS:+SERVE_FLAGS=\"$SERVE_FLAGS\" }benches/http-load.sh"
echo "# each run: wrk -t $THREADS -c $CONNECTIONS -d ${DURATION}s --timeout 10s --latency" \
    "-s benches/wrk.lua URL -- STATUS [METHOD BODY [HEADER]]"
echo '```'
echo
echo "| scenario | requests/s (success status only) | p50 (ms) | p99 (ms) | ratio to nginx |"
echo "|---|---:|---:|---:|---:|"
for s in ${RESULTS[@]+"${RESULTS[@]}"}; do
    line="${RESULT[$s]}"
    rate="$(kv ok_per_s "$line")"
    ratio="–"
    if [[ ($s == entropy || $s == nginx) && -n $nginx_rate ]]; then
        ratio="$(awk -v a="$rate" -v b="$nginx_rate" 'BEGIN { printf "%.2f", a / b }')"
    fi
    awk -v l="${LABEL[$s]}" -v r="$rate" -v p50="$(kv p50_ms "$line")" \
        -v p99="$(kv p99_ms "$line")" -v q="$ratio" \
        'BEGIN { printf "| %s | %.0f | %.2f | %.2f | %s |\n", l, r, p50, p99, q }'
done
if [[ -n ${RESULT[entropy]:-} && -n $nginx_rate ]]; then
    echo
    awk -v a="$(kv ok_per_s "${RESULT[entropy]}")" -v b="$nginx_rate" 'BEGIN {
        r = a / b
        printf "entropy, vrs / nginx: %.2f (goal >= 0.5: %s)\n", r, (r >= 0.5 ? "met" : "NOT met") }'
fi
[[ $GENERATOR == on ]] || echo "pool generator off (--pool-threads 0) outside the instant scenario"
for n in ${NOTES[@]+"${NOTES[@]}"}; do
    echo
    echo "FLAGGED: $n"
done
((${#NOTES[@]} == 0)) || exit 2
