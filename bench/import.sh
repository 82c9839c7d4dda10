#!/usr/bin/env bash
# `signupd import` of 1,000,000 rows: wall time, rows/s and peak RSS of a release build, first
# alone into a fresh database, then beside `serve` taking signups at full speed (wrk), which must
# answer every one of them with its usual 303 (no 503 while the import holds the write lock); the
# same signup load without an import, for its latencies.
#
#   bash bench/import.sh            # ROWS=1000000; a few minutes on 2 cores after the build
#
# The file: ROWS CSV records with confirmed_at, source, tags and a consent_version of their own,
# written by awk. Each database is made by one short `serve` (schema, secrets, the list's consent
# text). Knobs: ROWS=1000000, QUIET_MAX=10 QUIET_WAIT=60, DURATION of the wrk phase (defaults to 120s, cut short when the
# import ends), and bench/common.sh's BUILD, BENCH_SIGNUPD, BENCH_REVISION, KEEP_TMP.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

ROWS=${ROWS:-1000000}
PORT=18089
# Before each phase, wait up to QUIET_WAIT s for the machine to be at most QUIET_MAX % busy.
QUIET_MAX=${QUIET_MAX:-10}
QUIET_WAIT=${QUIET_WAIT:-60}
CONFIG_MORE='tags = ["beta"]'
require_tools time:/usr/bin/time wrk curl
bench_tmp import
release_binaries

FILE=$TMP/list.csv
awk -v rows="$ROWS" 'BEGIN {
    print "email,confirmed_at,source,tags,consent_version,first_name"
    for (n = 0; n < rows; n++) printf "subscriber-%07d@example.com,2025-01-01T00:00:00Z,old-site,beta,import-2025,Name %d\n", n, n
}' >"$FILE"

# IMPORT DIR: runs the import under GNU time; prints its counts, seconds, rows/s and peak RSS.
import() {
    /usr/bin/time -f "%e %M" -o "$1/time.txt" \
        "$SIGNUPD" import "$FILE" --list news --consent-text "Old newsletter, monthly." --config "$1.toml" \
        >"$1/import.out" 2>"$1/import.err"
    read -r seconds rss_kib <"$1/time.txt"
    printf 'import of %s rows: %s\n  %.2f s, %.0f rows/s, peak RSS %.1f MiB\n' "$ROWS" "$(tail -n 1 "$1/import.out")" \
        "$seconds" "$(awk -v s="$seconds" -v n="$ROWS" 'BEGIN { print n / s }')" \
        "$(awk -v kib="$rss_kib" 'BEGIN { print kib / 1024 }')"
}

echo "== import: commit $REVISION (built $BUILT_AT), $(machine), $(date -u +%FT%TZ), file $(stat -c %s "$FILE") bytes"

dir=$TMP/alone
init_data "$dir"
wait_quiet "alone"
echo "-- alone, fresh database ($QUIET_NOTE)"
import "$dir"

# The same signup load without an import, for comparison.
dir=$TMP/baseline
init_data "$dir"
serve_start "$dir"
wait_quiet "baseline"
echo "-- serve alone under the same signup load, 20 s, no import ($QUIET_NOTE)"
wrk -t1 -c16 -d20s --timeout 30s --latency -s bench/signup.lua "http://127.0.0.1:$PORT/api/signup" >"$dir/wrk.txt" 2>&1
grep -E 'Requests/sec|Non-2xx|Socket errors|requests in|Latency  |  99%' "$dir/wrk.txt" | sed 's/^/  wrk: /'
serve_stop

dir=$TMP/beside
init_data "$dir"
serve_start "$dir"
wait_quiet "beside serve"
echo "-- beside serve under a signup load: wrk -t1 -c16 ($QUIET_NOTE)"
wrk -t1 -c16 -d"${DURATION:-120s}" --timeout 30s --latency -s bench/signup.lua "http://127.0.0.1:$PORT/api/signup" >"$dir/wrk.txt" 2>&1 &
WRK=$!
PIDS+=("$WRK")
import "$dir"
stop "$WRK" INT
# The slowest signup bounds how long the server's writer waited for the import's lock.
grep -E 'Requests/sec|Non-2xx|Socket errors|requests in|Latency  |  99%' "$dir/wrk.txt" | sed 's/^/  wrk: /'
# wrk prints this line only when there were such answers; a 503 would be one.
grep -q 'Non-2xx' "$dir/wrk.txt" || echo "  wrk: Non-2xx or 3xx responses: 0"
serve_stop
echo "  rows after: $(sql "$dir/signupd.sqlite3" "SELECT count(*) FROM subscribers WHERE confirm_method = 'import'") imported, $(sql "$dir/signupd.sqlite3" "SELECT count(*) FROM subscribers WHERE confirm_method IS NOT 'import'") signups' rows"
