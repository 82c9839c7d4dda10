#!/usr/bin/env bash
# How fast `GET /status` renders on the metrics listener with the rollups full: 400 days of hourly
# rollups for 3 lists and the service-wide series (the most the hourly cleanup keeps).
#
#   bash bench/status.sh                                               # release build
#   BUILD=0 BENCH_SIGNUPD=target/debug/signupd bash bench/status.sh    # the debug build as it is
#
# Creates the database with one short `serve`, fills `rollups` with sqlite3 (every hour of the
# last 400 days: per list 6 signup outcomes, confirmations and the odd surge alert; service-wide
# 4 mail results, 3 webhook results and 6 queue gauges), starts `serve` with the metrics listener
# and times the page in each range with wrk over one connection (one request after another, so
# the figures are render times, not queueing): requests, median, p99. Then one more request of
# each range with curl, for its size.
# With SOURCES=1 (the default) it also fills `source_rollups` at its bound: every hour of the 31
# days kept, 102 rows a list (100 sources by name, none, other); SOURCES=0 leaves it empty. Where
# the schema has `source_rollups_daily` (version 16 on), its days are filled from those hours as
# the writer would have added them (the same 102 sources every hour, so each day keeps all 102);
# an older binary's database has no such table and reads the hours only, so one script measures
# both sides.
# Knobs: SECONDS_EACH=10, SOURCES=1, and bench/common.sh's BUILD, BENCH_SIGNUPD, BENCH_REVISION, KEEP_TMP.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

SECONDS_EACH=${SECONDS_EACH:-10}
SOURCES=${SOURCES:-1}
PORT=18094
METRICS_PORT=18095
require_tools wrk sqlite3 curl
bench_tmp status
release_binaries
ports_free "$PORT" "$METRICS_PORT"

export CONFIG_MORE='[[lists]]
id = "offers"
[[lists]]
id = "club"'
export SIGNUPD_SERVER__METRICS_LISTEN="127.0.0.1:$METRICS_PORT"

dir="$TMP/data"
init_data "$dir"
now_hour=$(($(date +%s) / 3600))
first_hour=$((now_hour - 400 * 24 + 1))
# One INSERT … SELECT per series over a recursive CTE of the hours; values vary with the hour.
fill() { # LIST SERIES MODULUS
    echo "INSERT INTO rollups (hour, list, series, value)
          WITH RECURSIVE h(hour) AS (SELECT $first_hour UNION ALL SELECT hour + 1 FROM h WHERE hour < $now_hour)
          SELECT hour, '$1', '$2', (hour * 7919) % $3 FROM h WHERE (hour * 7919) % $3 > 0;"
}
{
    echo "BEGIN;"
    for list in news offers club; do
        for outcome in accepted:40 invalid_email:6 consent_required:4 rate_limited:9 honeypot:3 domain_not_allowed:2; do
            fill "$list" "signups.${outcome%%:*}" "${outcome##*:}"
        done
        fill "$list" confirmations 25
        fill "$list" surge_alerts 2
    done
    for series in mails.sent:120 mails.retry:5 mails.failed:3 mails.capped:2 webhooks.delivered:60 webhooks.retry:4 \
        webhooks.dropped:2 queue.intake.depth:30 queue.intake.oldest_secs:5 queue.mail.depth:200 \
        queue.mail.oldest_secs:900 queue.webhook.depth:20 queue.webhook.oldest_secs:60; do
        fill "" "${series%%:*}" "${series##*:}"
    done
    # The table by source at its bound in every hour it keeps (31 days): per list 100 sources by
    # name, signups without a source and the sources past the bound, each with its confirmations.
    if [ "$SOURCES" = 1 ]; then
        for list in news offers club; do
            echo "INSERT INTO source_rollups (hour, list, source, signups, confirmations)
                  WITH RECURSIVE h(hour) AS (SELECT $((now_hour - 31 * 24 + 1)) UNION ALL SELECT hour + 1 FROM h WHERE hour < $now_hour),
                       s(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM s WHERE n < 101)
                  SELECT hour, '$list', CASE n WHEN 100 THEN '' WHEN 101 THEN '(other)' ELSE printf('campaign-%03d', n) END,
                         1 + (hour * 31 + n) % 7, (hour * 31 + n) % 4 FROM h, s;"
        done
        if [ "$(sql "$dir/signupd.sqlite3" "SELECT count(*) FROM sqlite_schema WHERE name = 'source_rollups_daily'")" = 1 ]; then
            echo "INSERT INTO source_rollups_daily (day, list, source, signups, confirmations)
                  SELECT hour / 24, list, source, sum(signups), sum(confirmations) FROM source_rollups
                  GROUP BY hour / 24, list, source;"
        fi
    fi
    echo "COMMIT;"
} | sqlite3 -cmd '.timeout 30000' "$dir/signupd.sqlite3"
rows=$(sql "$dir/signupd.sqlite3" "SELECT count(*) FROM rollups")
source_rows=$(sql "$dir/signupd.sqlite3" "SELECT count(*) FROM source_rollups")
daily_rows=$(sql "$dir/signupd.sqlite3" "SELECT count(*) FROM sqlite_schema WHERE name = 'source_rollups_daily'")
if [ "$daily_rows" = 1 ]; then
    daily_rows=$(sql "$dir/signupd.sqlite3" "SELECT count(*) FROM source_rollups_daily")
else
    daily_rows="(no such table)"
fi
hours=$(sql "$dir/signupd.sqlite3" "SELECT count(DISTINCT hour) FROM rollups")
bytes=$(stat -c %s "$dir/signupd.sqlite3")

echo "== status page: commit $REVISION (binary built $BUILT_AT, $SIGNUPD), $(machine), $(date -u +%FT%TZ)"
echo "rollups: $rows rows over $hours hours (400 days), source_rollups: $source_rows rows, source_rollups_daily: $daily_rows rows, database $((bytes / 1024 / 1024)) MiB"
serve_start "$dir"
wait_for "$PID" answers "http://127.0.0.1:$METRICS_PORT/status"
for range in 48h 30d; do
    url="http://127.0.0.1:$METRICS_PORT/status?range=$range"
    size=$(curl -s -o /dev/null -w '%{size_download}' "$url")
    wrk -t1 -c1 -d"${SECONDS_EACH}s" --latency "$url" >"$TMP/wrk-$range.txt"
    requests=$(awk '/requests in/ { print $1 }' "$TMP/wrk-$range.txt")
    p50=$(awk '$1 == "50%" { print $2 }' "$TMP/wrk-$range.txt")
    p99=$(awk '$1 == "99%" { print $2 }' "$TMP/wrk-$range.txt")
    printf 'range %-3s  %6s requests in %ss, one after another  median %8s  p99 %8s  page %s bytes\n' \
        "$range" "$requests" "$SECONDS_EACH" "$p50" "$p99" "$size"
done
echo "peak RSS of serve: $(peak_rss_mib "$PID") MiB"
serve_stop
