#!/usr/bin/env bash
# How much does the writer's page cache buy? signupd's `[storage] cache_mib` (the page cache of the
# one connection that writes, in MiB) against the signup rate, its p99 and signupd's peak memory,
# with an empty database and with ROWS subscriber rows.
#
#   bash bench/cache.sh     # ~9 minutes after the release build (6 sizes x 2 databases x ~30 s,
#                           # plus ~1 minute for the 1,000,000-row template)
#
# Templates (bench/common.sh, as bench/growth.sh builds them: the database and secrets created by
# the release binary's first start, rows added by bench/seed_tool.py while signupd is stopped):
#   empty   nothing but the schema;
#   big     ROWS (1,000,000) rows of list `news`, 80 % confirmed, 20 % pending.
# For each CACHE_SWEEP value and each template, a fresh server on a fresh copy of the template
# with `cache_mib = VALUE` in its configuration runs the signup run of bench/growth.sh, which is
# bench/signup.sh's maximum-rate run (common.sh's signup_run): `wrk -t2 -c64 -d20s --timeout 30s
# -s bench/signup.lua --latency` (a unique address per request) after a 3 s warm-up, rate limits
# raised, file transport, RUST_LOG=warn. Right after the measured run, before signupd is stopped,
# its peak RSS: VmHWM from /proc/PID/status. One line per (cache_mib, rows): req/s, p99, peak RSS
# (medians of REPEAT runs; the peak RSS is the highest run's).
#
# Knobs (environment, defaults shown):
#   CACHE_SWEEP="2 4 8 16 32 64": cache_mib values; `default` runs without the key (signupd's own
#     default, and the only value a signupd older than the key accepts)
#   ROWS=1000000 REPEAT=1 THREADS=2 CONNS=64 DURATION=20s WARMUP=3s
#   QUIET_MAX=10 QUIET_WAIT=600: before each run, wait up to QUIET_WAIT s until the machine is at
#     most QUIET_MAX % busy; the summary names runs that never got that quiet
#   SUMMARY_OUT=file, and bench/common.sh's BUILD=1 KEEP_TMP=0 BENCH_SIGNUPD BENCH_REVISION
#   (CACHE_MIB from the environment is ignored: the sweep sets it.)
# Every value is checked with `signupd check-config` before the templates are built, so a binary
# that does not know `cache_mib` fails at once. Needs wrk, sqlite3, curl (installed with apt-get
# when missing), python3. Port 18087; data in $TMPDIR (default /tmp; ~1 GB at 1,000,000 rows).
CACHE_MIB= # the sweep sets it
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

CACHE_SWEEP=${CACHE_SWEEP:-2 4 8 16 32 64}
ROWS=${ROWS:-1000000}
REPEAT=${REPEAT:-1}
THREADS=${THREADS:-2}
CONNS=${CONNS:-64}
DURATION=${DURATION:-20s}
WARMUP=${WARMUP:-3s}
QUIET_MAX=${QUIET_MAX:-10}
QUIET_WAIT=${QUIET_WAIT:-600}
PORT=18087

for value in $CACHE_SWEEP; do
    [[ $value == default || $value =~ ^[0-9]+$ ]] || { echo "bench: CACHE_SWEEP: '$value' is neither a number of MiB nor 'default'" >&2; exit 2; }
done

require_tools wrk sqlite3 curl

bench_tmp cache
release_binaries

cache_for() { # SWEEP-VALUE -> CACHE_MIB (empty for `default`)
    if [[ $1 == default ]]; then echo; else echo "$1"; fi
}

# The configuration without the key first, so an error names the right cause.
for value in default $CACHE_SWEEP; do
    CACHE_MIB=$(cache_for "$value")
    if ! "$SIGNUPD" check-config --config "$(config "$TMP/check")" >/dev/null 2>"$TMP/check.err"; then
        echo "bench: this signupd rejects the configuration with cache_mib = $value: $(cat "$TMP/check.err")" >&2
        exit 1
    fi
done
CACHE_MIB=

# --- templates ----------------------------------------------------------------------------------
log "templates: creating the database and secrets with the release binary"
init_data "$TMP/empty"
cp -a "$TMP/empty" "$TMP/big"
log "templates: $ROWS subscriber rows (python, one bulk load)"
template_rows "$TMP/big" "$ROWS"
for t in empty big; do template_seal "$t" "$TMP/$t" >>"$TMP/templates.txt"; done
cat "$TMP/templates.txt" >&2

# --- runs ---------------------------------------------------------------------------------------
: >"$TMP/runs"
for run in $(seq 1 "$REPEAT"); do
    for value in $CACHE_SWEEP; do
        for t in empty big; do
            log "run $run/$REPEAT: cache_mib = $value, template $t"
            CACHE_MIB=$(cache_for "$value")
            signup_run "$TMP/$t" "$value/$t"
        done
    done
done
CACHE_MIB=

{
    echo
    echo "signupd page-cache sweep — $(date -u +%FT%TZ), signupd $REVISION"
    echo "machine: $(machine), data on $(df --output=source "$TMP" | tail -1)"
    echo "wrk: $(wrk_cmd), after a $WARMUP warm-up; fresh server and copy each run"
    echo "templates:"; sed 's/^/  /' "$TMP/templates.txt"
    busy_phases "runs on a busy machine:"
    cat "$TMP/runs"
    python3 - "$TMP/runs" "$ROWS" "$CACHE_SWEEP" <<'EOF'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    parts = line.split()
    runs.setdefault(parts[1], []).append(dict(kv.split("=", 1) for kv in parts[3:]))
print(f"per cache_mib and database (median of {len(next(iter(runs.values())))} run(s); peak RSS = VmHWM, highest run):")
for value in sys.argv[3].split():
    for template, rows in (("empty", "0"), ("big", sys.argv[2])):
        rs = runs[f"{value}/{template}"]
        rps = statistics.median(float(r["rps"]) for r in rs)
        p99 = statistics.median(float(r["p99_us"]) for r in rs) / 1000
        rss = [r["rss_mib"] for r in rs]
        rss = "n/a" if "n/a" in rss else f"{max(float(v) for v in rss):.1f}"
        errors = sum(int(r["socket_errors"]) + int(r["status_errors"]) for r in rs)
        print(f"  cache_mib {value:>7}  rows {rows:>8}  {rps:8.0f} req/s  p99 {p99:7.1f} ms  peak RSS {rss:>6} MiB  errors {errors}")
EOF
} | tee "${SUMMARY_OUT:-/dev/null}"
