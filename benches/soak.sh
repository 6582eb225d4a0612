#!/usr/bin/env bash
# Soak test of `vrs serve`: DURATION seconds (10 minutes by default) of durable bets at a fixed
# rate, half of what the service sustains, watching its memory and its latency.
#
#   1. Builds vrs and vrs-loadgen (release) and starts one `vrs serve` on a fresh store
#      (RSA-2048, T calibrated at start-up, so one core runs the epoch VDF throughout), with
#      --metrics-addr on a free loopback port.
#   2. Unless RATE is given: measures the closed-loop durable-bet throughput on that server
#      (vrs-loadgen, CONNECTIONS connections, MEASURE seconds after 2 s of warm-up) and takes
#      RATE = FRACTION (0.5) of it. A minute, not seconds: a burst of a few seconds sees no
#      large epoch settled and lets the load borrow the VDF's core (the epoch just runs late),
#      so it measured 8 685 bets/s where a minute measured 5 587 on the same machine, and half
#      of the burst figure overloaded it (docs/PERFORMANCE.md, "Soak").
#   3. Open loop: vrs-loadgen --rate RATE for DURATION seconds (requests on a fixed schedule,
#      each timed from when it was due, so stalls are not hidden), printing p50/p99 every
#      INTERVAL seconds. Meanwhile the server's resident memory (VmRSS in /proc/PID/status)
#      is sampled every SAMPLE_EVERY seconds. /metrics is scraped before and after.
#   4. Prints a summary: RSS after the first minute (BASELINE seconds; half of DURATION when
#      that is shorter) and at the end, and its growth; p50/p99 per interval, first against
#      last (steady: no upward trend); accepted against scheduled.
#
# RSS rises and falls with each epoch by the prover's checkpoints (T/stride values of 256
# bytes, about 80 MiB at T = 3.3 million; freed once the proof is made), so two single samples
# can differ by tens of %, and samples taken at a period near a multiple of the epoch's catch
# it at the same phase every time. So RSS is sampled every second, and the growth that decides
# is that of the peaks: the largest sample in the BASELINE seconds after the first BASELINE
# seconds against the largest in the last BASELINE seconds (goal < 10 %). The troughs (the
# smallest samples of the same windows, memory without the prover's buffer) are printed too.
#
# With STORE=pg it also measures the yardstick (PGBENCH=on): PostgreSQL's own rate of single-row
# inserts shaped like a bet, with pgbench, CONNECTIONS clients for MEASURE seconds, into a table
# made LIKE the service's games table INCLUDING ALL (its indexes and checks, not its foreign
# key) in a schema of its own on the same server, while the service runs idle beside it; and it
# prints the closed-loop rate against it. PG_STATS=on collects the server's statistics over the
# soak (benches/pg-stats.sh: table and index growth, HOT updates, WAL and full-page images,
# checkpoints, waits, and per-statement times where pg_stat_statements is loaded).
#
# Exits 1 if the RSS peaks grew by RSS_LIMIT (10) % or more, if the last interval's p99 exceeds
# the first's by more than P99_LIMIT (20) %, if any request failed (a status other than 202, or
# an I/O error), or if a request due during the run had no answer within vrs-loadgen's drain
# (10 s after the end).
#
# Environment:
#   DURATION=600           seconds of fixed-rate load
#   RATE                   requests/s for the soak; unset: FRACTION of a closed-loop measurement
#   FRACTION=0.5 MEASURE=60   the share of the measured throughput, and the measuring seconds
#   CONNECTIONS=64         vrs-loadgen connections, in both phases
#   INTERVAL=60            seconds per latency line (per minute by default)
#   SAMPLE_EVERY=1         seconds between RSS samples
#   BASELINE=60            RSS growth counts from the first sample at or after this second
#   RSS_LIMIT=10           largest RSS growth accepted, in %
#   P99_LIMIT=20           largest growth of p99 from the first interval to the last, in %
#   STORE=sqlite           or pg: PostgreSQL at BENCH_DATABASE_URL / TEST_DATABASE_URL, in a
#                          new schema dropped afterwards
#   PG_STATS=on PGBENCH=on  with STORE=pg: the statistics and the yardstick above (off: skip)
#   GENERATOR=off          on: keep the pool generator running (off: --pool-threads 0, the
#                          steady state where the pool is full; durable bets never draw on it)
#   SERVE_FLAGS, CARGO_TARGET_DIR, READY_TIMEOUT: as in load.sh (benches/lib.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION="${DURATION:-600}"
RATE="${RATE:-}"
FRACTION="${FRACTION:-0.5}"
MEASURE="${MEASURE:-60}"
CONNECTIONS="${CONNECTIONS:-64}"
INTERVAL="${INTERVAL:-60}"
SAMPLE_EVERY="${SAMPLE_EVERY:-1}"
BASELINE="${BASELINE:-60}"
RSS_LIMIT="${RSS_LIMIT:-10}"
P99_LIMIT="${P99_LIMIT:-20}"
PG_STATS="${PG_STATS:-on}"
PGBENCH="${PGBENCH:-on}"
STORE="${STORE:-sqlite}"
GENERATOR="${GENERATOR:-off}"
# shellcheck source=benches/lib.sh
source benches/lib.sh
# shellcheck source=benches/pg-stats.sh
source benches/pg-stats.sh

num='^[0-9]+([.][0-9]+)?$'
for v in DURATION FRACTION MEASURE INTERVAL SAMPLE_EVERY BASELINE RSS_LIMIT P99_LIMIT; do
    [[ ${!v} =~ $num ]] || die "$v must be a number, got ${!v}"
done
[[ -z $RATE || $RATE =~ $num ]] || die "RATE must be a number of requests per second"
[[ $CONNECTIONS =~ ^[1-9][0-9]*$ ]] || die "CONNECTIONS must be a positive number"
[[ $STORE == sqlite || $STORE == pg ]] || die "STORE must be sqlite or pg"
[[ $GENERATOR == on || $GENERATOR == off ]] || die "GENERATOR must be on or off"
[[ $PG_STATS == on || $PG_STATS == off ]] || die "PG_STATS must be on or off"
[[ $PGBENCH == on || $PGBENCH == off ]] || die "PGBENCH must be on or off"
[[ $STORE == pg ]] || { PG_STATS=off; PGBENCH=off; }
[[ $PGBENCH == off ]] || command -v pgbench >/dev/null ||
    die "PGBENCH=on needs pgbench (Debian: postgresql-contrib or postgresql-client)"
[[ $STORE == sqlite ]] || require_pg
# A short run measures growth from its middle instead of from the first minute.
BASELINE="$(awk -v b="$BASELINE" -v d="$DURATION" 'BEGIN { print (b < d / 2 ? b : d / 2) }')"

build_release vrs vrs-benches
[[ -x $LOADGEN ]] || die "built binary not found: $LOADGEN"

DURABLE_BODY='{"bet_type":"over7","amount":1.5,"player_seed":"soak","instant":false}'
GEN_ARGS=()
[[ $GENERATOR == on ]] || GEN_ARGS=(--pool-threads 0)
metrics_flag=(--metrics-addr 127.0.0.1:0)
for f in ${SERVE_EXTRA[@]+"${SERVE_EXTRA[@]}"}; do
    [[ $f != --metrics-addr* ]] || metrics_flag=()
done

store_begin soak
start_server soak "${STORE_ARGS[@]}" ${GEN_ARGS[@]+"${GEN_ARGS[@]}"} \
    ${metrics_flag[@]+"${metrics_flag[@]}"}
scrape() {
    if [[ -n $METRICS_URL ]]; then
        curl -fsS --max-time 5 "$METRICS_URL" >"$WORK/metrics-$1.txt" 2>/dev/null ||
            log "could not scrape $METRICS_URL"
    fi
}
scrape start

# --- the rate ----------------------------------------------------------------------------------
if [[ -z $RATE ]]; then
    log "measuring closed-loop throughput: $CONNECTIONS connections, ${MEASURE} s after 2 s warm-up"
    fg_run "$LOADGEN" --json --connections "$CONNECTIONS" --duration "$MEASURE" --warmup 2 \
        --body "$DURABLE_BODY" --url "$SERVER_URL" >"$WORK/measure.json" || {
        cat "$WORK/measure.json" >&2
        die "the closed-loop measurement failed"
    }
    measured="$(json_num accepted_per_s "$WORK/measure.json")"
    other="$(json_num non_202_total "$WORK/measure.json")"
    errors="$(json_num errors "$WORK/measure.json")"
    [[ $other == 0 && $errors == 0 ]] ||
        die "the closed-loop measurement saw $other non-202 answers and $errors I/O errors: $(cat "$WORK/measure.json")"
    RATE="$(awk -v m="$measured" -v f="$FRACTION" 'BEGIN { printf "%.1f", m * f }')"
    log "closed loop: $measured accepted/s; soak rate $RATE/s ($FRACTION of it)"
    rate_source="$FRACTION × $measured/s measured closed-loop (${MEASURE} s, $CONNECTIONS connections)"
else
    rate_source="given (RATE)"
fi

# --- the yardstick: PostgreSQL's own single-row insert rate -----------------------------------
yardstick=""
if [[ $PGBENCH == on ]]; then
    store_schema=$SCHEMA
    new_schema yard
    psql_run "CREATE TABLE $SCHEMA.games (LIKE $store_schema.games INCLUDING ALL)" >/dev/null
    cat >"$WORK/bet-insert.sql" <<'SQL'
INSERT INTO games (epoch, game_id, request_id, game, bet_type, amount, player_id, player_seed,
    operator_key, created_at_ms, leaf, acceptance_key, acceptance_sig)
VALUES (1, md5(random()::text), md5(random()::text), 'dice', 'over7', '1.5', 'anonymous', 'soak',
    'default', (extract(epoch FROM clock_timestamp()) * 1000)::bigint,
    sha256(random()::text::bytea), sha256('key'), sha512(random()::text::bytea));
SQL
    log "yardstick: pgbench, single-row bet inserts, $CONNECTIONS clients for ${MEASURE} s"
    fg_run pgbench -n -M prepared -c "$CONNECTIONS" -j 2 -T "$MEASURE" -f "$WORK/bet-insert.sql" \
        "$(url_with_schema "$SCHEMA")" >"$WORK/pgbench.txt" 2>&1 || {
        cat "$WORK/pgbench.txt" >&2
        die "pgbench failed"
    }
    yardstick="$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$WORK/pgbench.txt" | head -n 1)"
    [[ -n $yardstick ]] || die "no tps in pgbench's output: $(cat "$WORK/pgbench.txt")"
    end_schema "$SCHEMA"
    SCHEMA=$store_schema
    log "yardstick: $yardstick single-row inserts/s"
fi

# --- the soak ----------------------------------------------------------------------------------
rss_kb() {
    awk '/^VmRSS:/ { print $2 }' "/proc/$SERVER_PID/status" 2>/dev/null || true
}
# A number from one JSON line: jnum KEY LINE (empty for null or absent).
jnum() {
    sed -n "s/.*\"$1\":\([-0-9.eE+]*\).*/\1/p" <<<"$2" | head -n 1
}

log "soak: $RATE requests/s for ${DURATION} s over $CONNECTIONS connections;" \
    "RSS every ${SAMPLE_EVERY} s, latency every ${INTERVAL} s"
"$LOADGEN" --json --connections "$CONNECTIONS" --rate "$RATE" --duration "$DURATION" \
    --warmup 0 --report-every "$INTERVAL" --body "$DURABLE_BODY" --url "$SERVER_URL" \
    >"$WORK/soak.jsonl" 2>"$WORK/soak.err" &
CHILD=$!
start_ns="$(date +%s%N)"
[[ $PG_STATS == off ]] || pg_stats_begin
: >"$WORK/rss.tsv"
sample=0
shown=0
while :; do
    now_ns="$(date +%s%N)"
    t="$(awk -v a="$now_ns" -v b="$start_ns" 'BEGIN { printf "%.1f", (a - b) / 1e9 }')"
    kill -0 "$SERVER_PID" 2>/dev/null || die "the server exited during the soak (log: $WORK/soak.log)"
    kb="$(rss_kb)"
    printf '%s\t%s\n' "$t" "$kb" >>"$WORK/rss.tsv"
    # Progress: the interval lines that arrived since the last look.
    lines="$(grep -c '"t":' "$WORK/soak.jsonl" || true)"
    while ((shown < lines)); do
        shown=$((shown + 1))
        l="$(grep '"t":' "$WORK/soak.jsonl" | sed -n "${shown}p")"
        [[ $PG_STATS == off ]] || pg_stats_snapshot "$(jnum t "$l")"
        log "t=$(jnum t "$l") s: accepted $(jnum accepted "$l") of $(jnum scheduled "$l")" \
            "scheduled, other $(jnum other "$l"), errors $(jnum errors "$l"), p50" \
            "$(jnum p50_ms "$l") ms, p99 $(jnum p99_ms "$l") ms; RSS $((${kb:-0} / 1024)) MiB"
    done
    kill -0 "$CHILD" 2>/dev/null || break
    sample=$((sample + 1))
    # Sleep to the next multiple of SAMPLE_EVERY since the start, or until the load ends.
    wake_ns="$(awk -v s="$start_ns" -v n="$sample" -v e="$SAMPLE_EVERY" 'BEGIN { printf "%.0f", s + n * e * 1e9 }')"
    while kill -0 "$CHILD" 2>/dev/null && (($(date +%s%N) < wake_ns)); do
        sleep 0.2
    done
done
status=0
wait "$CHILD" || status=$?
CHILD=""
scrape end
if [[ $PG_STATS == on ]]; then
    pg_stats_end
    pg_stats_explain end
    [[ -z ${WITH_POSTGRES_LOG:-} ]] || cp "$WITH_POSTGRES_LOG" "$PG_STATS_DIR/server.log" 2>/dev/null || true
fi
final="$(grep -v '"t":' "$WORK/soak.jsonl" | grep '"accepted_per_s"' | tail -n 1 || true)"
[[ -n $final ]] || {
    cat "$WORK/soak.err" >&2
    die "vrs-loadgen gave no report (exit status $status)"
}

# --- summary -----------------------------------------------------------------------------------
accepted="$(jnum accepted "$final")"
scheduled="$(jnum scheduled "$final")"
unfinished="$(jnum unfinished "$final")"
other="$(jnum non_202_total "$final")"
errors="$(jnum errors "$final")"
read -r base_t base_kb end_t end_kb < <(awk -F'\t' -v b="$BASELINE" '
    $2 != "" { if (bt == "" && $1 + 0 >= b) { bt = $1; bk = $2 } et = $1; ek = $2 }
    END { print (bt == "" ? et : bt), (bt == "" ? ek : bk), et, ek }' "$WORK/rss.tsv")
growth="$(awk -v a="$base_kb" -v b="$end_kb" 'BEGIN { printf "%.1f", (b - a) * 100 / a }')"
# Peaks: the largest sample in [BASELINE, 2 BASELINE) and in the last BASELINE seconds.
read -r peak_a peak_b < <(awk -F'\t' -v b="$BASELINE" -v e="$end_t" '
    $2 != "" && $1 + 0 >= b && $1 + 0 < 2 * b && $2 + 0 > pa { pa = $2 + 0 }
    $2 != "" && $1 + 0 > e - b && $2 + 0 > pb { pb = $2 + 0 }
    END { print pa + 0, pb + 0 }' "$WORK/rss.tsv")
((peak_a > 0)) || peak_a=$base_kb
((peak_b > 0)) || peak_b=$end_kb
peak_growth="$(awk -v a="$peak_a" -v b="$peak_b" 'BEGIN { printf "%.1f", (b - a) * 100 / a }')"
# Troughs: the smallest samples of the same two windows.
read -r trough_a trough_b < <(awk -F'\t' -v b="$BASELINE" -v e="$end_t" '
    $2 != "" && $1 + 0 >= b && $1 + 0 < 2 * b && (ta == "" || $2 + 0 < ta) { ta = $2 + 0 }
    $2 != "" && $1 + 0 > e - b && (tb == "" || $2 + 0 < tb) { tb = $2 + 0 }
    END { print ta + 0, tb + 0 }' "$WORK/rss.tsv")
((trough_a > 0)) || trough_a=$base_kb
((trough_b > 0)) || trough_b=$end_kb

cpu="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)"
store_label="embedded store (SQLite)"
[[ $STORE == pg ]] && store_label="PostgreSQL, 1 replica"
echo
echo "vrs soak, $(date -u +%Y-%m-%d), commit $(git describe --always --dirty 2>/dev/null || echo "?"):" \
    "${cpu:-unknown CPU}, $(nproc 2>/dev/null || echo '?') cores; durable bets, $store_label;" \
    "$RATE requests/s open-loop ($rate_source) for ${DURATION} s, $CONNECTIONS connections"
echo
echo '```sh'
echo "DURATION=$DURATION ${RATE:+RATE=$RATE }CONNECTIONS=$CONNECTIONS INTERVAL=$INTERVAL STORE=$STORE" \
    "GENERATOR=$GENERATOR ${SERVE_FLAGS:+SERVE_FLAGS=\"$SERVE_FLAGS\" }benches/soak.sh"
echo '```'
echo
echo "| t (s) | scheduled | accepted (202) | other | errors | p50 (ms) | p99 (ms) | RSS (MiB) |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|"
grep '"t":' "$WORK/soak.jsonl" | while IFS= read -r l; do
    t="$(jnum t "$l")"
    # The RSS sample nearest the interval's end.
    rss="$(awk -F'\t' -v t="$t" '$2 != "" { d = $1 - t; if (d < 0) d = -d; if (best == "" || d < best) { best = d; k = $2 } }
        END { printf "%.1f", k / 1024 }' "$WORK/rss.tsv")"
    p50="$(jnum p50_ms "$l")"
    p99="$(jnum p99_ms "$l")"
    echo "| $t | $(jnum scheduled "$l") | $(jnum accepted "$l") | $(jnum other "$l") |" \
        "$(jnum errors "$l") | ${p50:-–} | ${p99:-–} | $rss |"
done
first="$(grep '"t":' "$WORK/soak.jsonl" | head -n 1)"
last="$(grep '"t":' "$WORK/soak.jsonl" | tail -n 1)"
echo
echo "latency, first interval vs last: p50 $(jnum p50_ms "$first") → $(jnum p50_ms "$last") ms," \
    "p99 $(jnum p99_ms "$first") → $(jnum p99_ms "$last") ms" \
    "(whole run: p50 $(jnum p50 "$final") ms, p99 $(jnum p99 "$final") ms, max $(jnum max "$final") ms;" \
    "timed from when each request was due)"
echo "requests: $accepted accepted (202) of $scheduled scheduled; $other other statuses," \
    "$errors I/O errors, $unfinished unanswered 10 s after the end"
awk -v bt="$base_t" -v bk="$base_kb" -v et="$end_t" -v ek="$end_kb" -v g="$growth" \
    'BEGIN { printf "RSS samples: %.1f MiB at %s s, %.1f MiB at %s s: %+.1f %%\n",
        bk / 1024, bt, ek / 1024, et, g }'
awk -v a="$peak_a" -v b="$peak_b" -v w="$BASELINE" -v g="$peak_growth" -v l="$RSS_LIMIT" \
    'BEGIN { printf "RSS peaks: %.1f MiB in [%g, %g) s, %.1f MiB in the last %g s: %+.1f %% (goal < %s %%)\n",
        a / 1024, w, 2 * w, b / 1024, w, g, l }'
awk -v a="$trough_a" -v b="$trough_b" -v w="$BASELINE" \
    'BEGIN { printf "RSS troughs: %.1f MiB in [%g, %g) s, %.1f MiB in the last %g s: %+.1f %%\n",
        a / 1024, w, 2 * w, b / 1024, w, (b - a) * 100 / a }'
if [[ -n $yardstick ]]; then
    awk -v m="${measured:-}" -v y="$yardstick" 'BEGIN {
        if (m == "") printf "yardstick: pgbench %.0f single-row bet inserts/s (RATE was given: no closed-loop figure to compare)\n", y
        else printf "durable bets closed-loop %.0f/s against pgbench %.0f single-row bet inserts/s: %.2f× (goal ≥ 0.6×)\n", m, y, m / y }'
fi
[[ $PG_STATS == off ]] || pg_stats_report
if [[ -s $WORK/metrics-start.txt && -s $WORK/metrics-end.txt ]]; then
    echo
    echo "metrics that changed (start → end, histogram buckets left out):"
    awk 'FNR == NR { if ($0 !~ /^#/ && $1 !~ /_bucket/) a[$1] = $2; next }
        $0 !~ /^#/ && $1 !~ /_bucket/ && (!($1 in a) || a[$1] != $2) {
            printf "  %s %s → %s\n", $1, ($1 in a ? a[$1] : "-"), $2 }' \
        "$WORK/metrics-start.txt" "$WORK/metrics-end.txt"
fi

failures=()
if awk -v g="$peak_growth" -v l="$RSS_LIMIT" 'BEGIN { exit !(g >= l) }'; then
    failures+=("the RSS peaks grew by $peak_growth % (limit $RSS_LIMIT %)")
fi
[[ $other == 0 && $errors == 0 ]] ||
    failures+=("$other answers other than 202 and $errors I/O errors: $(grep -o '"non_202":{[^}]*}' <<<"$final"), $(grep -o '"error_kinds":{[^}]*}' <<<"$final")")
p99_first="$(jnum p99_ms "$first")"
p99_last="$(jnum p99_ms "$last")"
if [[ -n $p99_first && -n $p99_last ]] &&
    awk -v a="$p99_first" -v b="$p99_last" -v l="$P99_LIMIT" 'BEGIN { exit !(b > a * (1 + l / 100)) }'; then
    failures+=("p99 went from $p99_first ms in the first interval to $p99_last ms in the last (limit +$P99_LIMIT %)")
fi
((${unfinished:-0} == 0)) ||
    failures+=("$unfinished requests due during the run had no answer 10 s after its end")
((${accepted:-0} > 0)) || failures+=("no request was accepted")
[[ $status == 0 ]] || failures+=("vrs-loadgen exited with status $status")
echo
if ((${#failures[@]})); then
    for f in "${failures[@]}"; do
        echo "FAILED: $f"
    done
    exit 1
fi
echo "PASSED: RSS peaks grew $peak_growth % (< $RSS_LIMIT %); p99 $p99_first → $p99_last ms (≤ +$P99_LIMIT %); every request answered 202"
