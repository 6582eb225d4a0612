# shellcheck shell=bash
# PostgreSQL statistics over a benchmark run: sourced by soak.sh after benches/lib.sh, for
# STORE=pg with PG_STATS=on. What it reads, all from the server's own views:
#
#   every second      what the service's sessions wait on (pg_stat_activity: wait event, or CPU)
#   every INTERVAL s  the games table: inserts, updates and how many were HOT, dead and live
#                     tuples, vacuums, heap/index/TOAST sizes, each index's size, and the size
#                     of game_results with its index (schema 9); the WAL written
#                     and its full-page images; checkpoints; buffer reads against hits; and, where
#                     pg_stat_statements is loaded, every statement's calls, time and buffers
#   at the start and the end   EXPLAIN (ANALYZE, BUFFERS) of the reads an epoch's close and
#                     resolution make, on the last resolved epoch
#
# pg_stat_statements needs shared_preload_libraries, which a server has to be started with; run
# the soak under scripts/with-postgres with WITH_POSTGRES_SETTINGS to get one (PERFORMANCE.md).
# pg_stats_report prints per-interval tables from what was collected.

PG_STATS_DIR=""
PG_STATS_PID=""
PG_STATEMENTS=off

# psql against the store's schema, tab-separated.
pg_stats_psql() {
    psql "$(url_with_schema "$SCHEMA")" -X -q -A -t -F $'\t' -v ON_ERROR_STOP=1 -c "$1"
}

# Starts the per-second wait sampler; takes the first snapshot as t = 0.
pg_stats_begin() {
    PG_STATS_DIR="$WORK/pg-stats"
    mkdir -p "$PG_STATS_DIR"
    # Not reset (the server may be shared): the report takes differences between snapshots.
    if pg_stats_psql "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" >/dev/null 2>&1 &&
        pg_stats_psql "SELECT 1 FROM pg_stat_statements LIMIT 1" >/dev/null 2>&1; then
        PG_STATEMENTS=on
    else
        log "pg_stat_statements is not loaded on this server: no per-statement figures" \
            "(run under scripts/with-postgres with WITH_POSTGRES_SETTINGS, see PERFORMANCE.md)"
    fi
    pg_stats_explain start
    pg_stats_snapshot 0
    (
        start=$SECONDS
        while :; do
            pg_stats_psql "SELECT $((SECONDS - start)), COALESCE(wait_event_type, 'CPU'),
                    COALESCE(wait_event, '-'), count(*)
                FROM pg_stat_activity
                WHERE datname = current_database() AND state = 'active'
                  AND pid <> pg_backend_pid() AND backend_type = 'client backend'
                GROUP BY 2, 3" >>"$PG_STATS_DIR/waits.tsv" 2>/dev/null || true
            sleep 1
        done
    ) &
    PG_STATS_PID=$!
}

pg_stats_end() {
    if [[ -n $PG_STATS_PID ]]; then
        kill "$PG_STATS_PID" 2>/dev/null || true
        wait "$PG_STATS_PID" 2>/dev/null || true
        PG_STATS_PID=""
    fi
}

# One row per table and index figure at second $1.
pg_stats_snapshot() {
    local t=$1
    pg_stats_psql "SELECT $t, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_dead_tup, n_live_tup,
            autovacuum_count + vacuum_count, autoanalyze_count + analyze_count,
            pg_relation_size(relid), pg_indexes_size(relid),
            COALESCE(pg_total_relation_size(reltoastrelid), 0),
            COALESCE(pg_total_relation_size(to_regclass('game_results')), 0)
        FROM pg_stat_user_tables t JOIN pg_class c ON c.oid = t.relid
        WHERE t.schemaname = current_schema() AND t.relname = 'games'" \
        >>"$PG_STATS_DIR/games.tsv" 2>/dev/null || true
    pg_stats_psql "SELECT $t, indexrelname, pg_relation_size(indexrelid)
        FROM pg_stat_user_indexes
        WHERE schemaname = current_schema() AND relname = 'games'" \
        >>"$PG_STATS_DIR/indexes.tsv" 2>/dev/null || true
    pg_stats_psql "SELECT $t, w.wal_records, w.wal_fpi, w.wal_bytes, b.checkpoints_timed,
            b.checkpoints_req, b.buffers_checkpoint, b.buffers_backend, d.blks_read, d.blks_hit,
            d.xact_commit
        FROM pg_stat_wal w, pg_stat_bgwriter b, pg_stat_database d
        WHERE d.datname = current_database()" >>"$PG_STATS_DIR/server.tsv" 2>/dev/null || true
    if [[ $PG_STATEMENTS == on ]]; then
        pg_stats_psql "SELECT $t, queryid, calls, total_exec_time, rows, shared_blks_hit,
                shared_blks_read, shared_blks_dirtied, shared_blks_written, wal_fpi,
                regexp_replace(left(query, 400), '\s+', ' ', 'g')
            FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
            WHERE d.datname = current_database() AND calls > 0" \
            >>"$PG_STATS_DIR/statements.tsv" 2>/dev/null || true
    fi
}

# EXPLAIN (ANALYZE, BUFFERS) of the close's and the resolution's reads, for the last resolved
# epoch, into explain-$1.txt.
pg_stats_explain() {
    local e
    e="$(pg_stats_psql "SELECT max(number) FROM epochs WHERE status = 'resolved'" 2>/dev/null)"
    [[ -n $e ]] || e=0
    {
        echo "epoch $e ($1 of the run)"
        local q
        for q in \
            "SELECT MAX(created_at_ms) FROM games WHERE epoch = $e OR bet_epoch = $e" \
            "SELECT game_id, game FROM games WHERE epoch = $e ORDER BY id" \
            "SELECT COUNT(*) FROM games WHERE bet_epoch = $e"; do
            echo
            echo "> $q"
            pg_stats_psql "EXPLAIN (ANALYZE, BUFFERS) $q" 2>&1 || true
        done
    } >"$PG_STATS_DIR/explain-$1.txt"
}

# Per-interval tables of what was collected: the table and index growth, the WAL, the waits
# and, where available, the statements whose time grew.
pg_stats_report() {
    local d=$PG_STATS_DIR
    [[ -s $d/games.tsv ]] || return 0
    echo
    echo "PostgreSQL, per interval (games table; WAL and buffers of the whole server):"
    echo
    echo "| t (s) | rows inserted | updated (HOT %) | dead tuples | vacuums | heap (MiB) | indexes (MiB) | game_results (MiB) | WAL (MiB) | full-page images per 1 000 inserts | checkpoints timed/req | blocks read / hit |"
    echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    # Each games line with the server line of the same second appended.
    awk -F'\t' 'FNR == NR { k = $1; sub(/^[^\t]*\t/, ""); s[k] = $0; next }
        ($1 in s) { print $0 "\t" s[$1] }' "$d/server.tsv" "$d/games.tsv" | awk -F'\t' '
        NR > 1 {
            ins = $2 - i; upd = $3 - u; hot = $4 - h
            printf "| %s | %d | %d (%s) | %d | %d | %.1f | %.1f | %.1f | %.1f | %s | %d/%d | %d / %d |\n",
                $1, ins, upd, (upd > 0 ? sprintf("%.0f %%", hot * 100 / upd) : "–"), $5, $7,
                $9 / 1048576, $10 / 1048576, $12 / 1048576, ($15 - wb) / 1048576,
                (ins > 0 ? sprintf("%.0f", ($14 - fpi) * 1000 / ins) : "–"),
                $16 - ct, $17 - cr, $20 - br, $21 - bh
        }
        { i = $2; u = $3; h = $4; wb = $15; fpi = $14; ct = $16; cr = $17; br = $20; bh = $21 }'
    echo
    echo "index sizes (MiB), first snapshot → last:"
    awk -F'\t' '{ if (!($2 in a)) a[$2] = $3; b[$2] = $3 }
        END { for (k in a) printf "  %s %.1f → %.1f\n", k, a[k] / 1048576, b[k] / 1048576 }' \
        "$d/indexes.tsv" | sort
    if [[ -s $d/waits.tsv ]]; then
        echo
        echo "what active sessions waited on (share of per-second samples, whole run):"
        awk -F'\t' '{ n[$2 ":" $3] += $4; all += $4 }
            END { for (k in n) printf "  %5.1f %%  %s\n", n[k] * 100 / all, k }' \
            "$d/waits.tsv" | sort -rn | head -n 8
    fi
    if [[ -s $d/statements.tsv ]]; then
        echo
        echo "statements by total time, mean ms per call in each interval (first → last):"
        awk -F'\t' '
            { t = $1; if (!(t in seen)) { seen[t] = 1; ts[++nt] = t }
              calls[$2, t] = $3; time[$2, t] = $4; q[$2] = $11; last[$2] = $4
              if (!($2 in first)) first[$2] = (t == ts[1] ? $4 : 0) }
            END {
                for (id in q) total[id] = last[id] - first[id]
                n = 0; for (id in total) ids[++n] = id
                for (a = 1; a <= n; a++) for (b = a + 1; b <= n; b++)
                    if (total[ids[b]] > total[ids[a]]) { x = ids[a]; ids[a] = ids[b]; ids[b] = x }
                for (a = 1; a <= n && a <= 8; a++) {
                    id = ids[a]; line = ""
                    for (k = 2; k <= nt; k++) {
                        dc = calls[id, ts[k]] - calls[id, ts[k - 1]]
                        dt = time[id, ts[k]] - time[id, ts[k - 1]]
                        line = line (dc > 0 ? sprintf(" %.2f", dt / dc) : " –")
                    }
                    printf "  %.0f s over the run:%s\n      %s\n", total[id] / 1000, line, substr(q[id], 1, 150)
                }
            }' "$d/statements.tsv"
    fi
}
