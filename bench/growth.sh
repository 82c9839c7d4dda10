#!/usr/bin/env bash
# Does signupd slow down as the database grows? The signup benchmark of bench/signup.sh against
# an empty database and against one with 1,000,000 more subscriber rows, and the confirm path
# (POST /api/confirm of pending rows with known tokens) against a database holding only those
# rows and against the same plus the 1,000,000.
#
#   bash bench/growth.sh     # ~4 minutes after the release build
#
# Templates (data directories; the database is created by the release binary's first start,
# which also generates the secrets, then the rows are added by bench/seed_tool.py while signupd
# is stopped):
#   empty   nothing but the schema;
#   tokens  CONFIRM_N pending rows whose confirm tokens are known (written to token files; the
#           stored confirm_hash is the SHA-256 hex of the 43-character token, as signupd stores it);
#   big     tokens + ROWS (1,000,000) rows of list `news`, 80 % confirmed, 20 % pending (a live
#           confirm hash of an unknown token), removal hashes derived as signupd derives them.
# Every run starts a fresh server on a fresh copy of its template (copied and synced to disk
# first, so no write-back of the copy lands in the run). Runs alternate (empty, big, empty, big),
# REPEAT of each; the median is reported and the ratio big / small.
#  - signup: exactly bench/signup.sh's run: `wrk -t2 -c64 -d20s --timeout 30s -s bench/signup.lua`
#    after a 3 s warm-up, the same configuration (rate limits raised, file transport, RUST_LOG=warn);
#    afterwards the intake backlog and its drain time;
#  - confirm: `wrk -t2 -c64 -d10s --timeout 30s -s bench/confirm.lua` after a 2 s warm-up on
#    tokens of its own, every request a different token (each run on a fresh copy, so the same
#    tokens are pending again); the welcome mail each confirm queues is sent by the file
#    transport within the default hourly budget of 1,000.
# After each measured wrk run, before signupd is stopped, its peak RSS (VmHWM from /proc/PID/status,
# MiB): rss_mib= in each run's line; the summary gives the highest run of each kind (target for the
# signup run at 1,000,000 rows: <= 64 MiB).
#
# Knobs: ROWS=1000000 CONFIRM_N=300000 CONFIRM_WARM_N=60000 REPEAT=2 DURATION=20s WARMUP=3s
#   CONFIRM_DURATION=10s CONFIRM_WARMUP=2s QUIET_MAX=10 QUIET_WAIT=600 SUMMARY_OUT=file, and
#   bench/common.sh's BUILD=1 KEEP_TMP=0 BENCH_SIGNUPD BENCH_REVISION CACHE_MIB
# Needs wrk, sqlite3, curl (installed with apt-get when missing), python3. Port 18085; data in
# $TMPDIR (default /tmp; the big template and one copy take about 1.5 GB).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

ROWS=${ROWS:-1000000}
CONFIRM_N=${CONFIRM_N:-300000}
CONFIRM_WARM_N=${CONFIRM_WARM_N:-60000}
REPEAT=${REPEAT:-2}
THREADS=2
CONNS=64
DURATION=${DURATION:-20s}
WARMUP=${WARMUP:-3s}
CONFIRM_DURATION=${CONFIRM_DURATION:-10s}
CONFIRM_WARMUP=${CONFIRM_WARMUP:-2s}
QUIET_MAX=${QUIET_MAX:-10}
QUIET_WAIT=${QUIET_WAIT:-600}
PORT=18085
URL=http://127.0.0.1:$PORT
TOOL=(python3 "$REPO/bench/seed_tool.py")

require_tools wrk sqlite3 curl

bench_tmp growth
release_binaries

# --- templates ----------------------------------------------------------------------------------
log "templates: creating the database and secrets with the release binary"
init_data "$TMP/empty"
cp -a "$TMP/empty" "$TMP/tokens"
log "templates: $CONFIRM_N pending rows with known confirm tokens"
"${TOOL[@]}" confirmable --data-dir "$TMP/tokens" -n "$CONFIRM_N" --tokens-out "$TMP/tokens.all" >&2
head -n "$CONFIRM_WARM_N" "$TMP/tokens.all" >"$TMP/tokens.warm"
tail -n +"$((CONFIRM_WARM_N + 1))" "$TMP/tokens.all" >"$TMP/tokens.main"
cp -a "$TMP/tokens" "$TMP/big"
log "templates: $ROWS more subscriber rows (python, one bulk load)"
template_rows "$TMP/big" "$ROWS"
for t in empty tokens big; do template_seal "$t" "$TMP/$t" >>"$TMP/templates.txt"; done
cat "$TMP/templates.txt" >&2

# --- runs ---------------------------------------------------------------------------------------
# signup_run is bench/common.sh's (bench/cache.sh runs it too).
confirm_run() { # TEMPLATE_DIR LABEL
    local dir summary confirmed rss
    dir=$(fresh_copy "$1")
    wait_quiet "confirm $2"
    serve_start "$dir"
    WRK_THREADS=$THREADS wrk -t"$THREADS" -c"$CONNS" -d"$CONFIRM_WARMUP" -s bench/confirm.lua "$URL/api/confirm" -- "$TMP/tokens.warm" >/dev/null
    WRK_THREADS=$THREADS wrk -t"$THREADS" -c"$CONNS" -d"$CONFIRM_DURATION" --timeout 30s -s bench/confirm.lua --latency \
        "$URL/api/confirm" -- "$TMP/tokens.main" >"$TMP/wrk.txt"
    rss=$(peak_rss_mib "$PID")
    serve_stop
    confirmed=$(sql "$dir/signupd.sqlite3" "SELECT count(*) FROM subscribers WHERE confirm_method = 'button' AND confirmed_at > strftime('%s', 'now') - 600")
    summary=$(grep '^SUMMARY' "$TMP/wrk.txt")
    echo "confirm $2 $summary confirmed_rows=$confirmed rss_mib=$rss" | tee -a "$TMP/runs" >&2
}

: >"$TMP/runs"
for run in $(seq 1 "$REPEAT"); do
    log "signup run $run/$REPEAT: empty database"
    signup_run "$TMP/empty" empty
    log "signup run $run/$REPEAT: $ROWS more rows"
    signup_run "$TMP/big" big
done
for run in $(seq 1 "$REPEAT"); do
    log "confirm run $run/$REPEAT: only the $CONFIRM_N rows with known tokens"
    confirm_run "$TMP/tokens" small
    log "confirm run $run/$REPEAT: the same plus $ROWS rows"
    confirm_run "$TMP/big" big
done

{
    echo
    echo "signupd growth benchmark — $(date -u +%FT%TZ), signupd $REVISION"
    echo "machine: $(machine), data on $(df --output=source "$TMP" | tail -1)"
    echo "templates:"; sed 's/^/  /' "$TMP/templates.txt"
    busy_phases "phases on a busy machine:"
    cat "$TMP/runs"
    python3 - "$TMP/runs" "$ROWS" <<'EOF'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    parts = line.split()
    kind, label = parts[0], parts[1]
    runs.setdefault((kind, label), []).append(dict(kv.split("=", 1) for kv in parts[3:]))
def med(kind, label, key):
    return statistics.median(float(r[key]) for r in runs[(kind, label)])
def peak_rss(kind, label):
    """The highest VmHWM (MiB) over the runs, None when one could not be read."""
    values = [r.get("rss_mib", "n/a") for r in runs[(kind, label)]]
    return None if "n/a" in values else max(float(v) for v in values)
def mib(v):
    return "n/a" if v is None else f"{v:.1f} MiB"
def show(kind, small, big, what):
    a, b = med(kind, small, "rps"), med(kind, big, "rps")
    pa, pb = med(kind, small, "p99_us") / 1000, med(kind, big, "p99_us") / 1000
    errors = sum(int(r["status_errors"]) + int(r["socket_errors"]) for k in ((kind, small), (kind, big)) for r in runs[k])
    print(f"{what}: {a:.0f} req/s ({small}) vs {b:.0f} req/s ({big}); ratio {b / a:.3f}; p99 {pa:.1f} vs {pb:.1f} ms; errors {errors};"
          f" peak RSS (VmHWM, highest run) {mib(peak_rss(kind, small))} vs {mib(peak_rss(kind, big))}")
    return b / a
r = show("signup", "empty", "big", f"signup, empty vs +{sys.argv[2]} rows")
show("confirm", "small", "big", f"confirm, known-token rows only vs +{sys.argv[2]} rows")
rss_big = peak_rss("signup", "big")
repeated = sum(int(r.get("repeated_tokens", 0)) for k, v in runs.items() if k[0] == "confirm" for r in v)
if repeated:
    print(f"WARNING: {repeated} confirm requests reused a token (CONFIRM_N too small for the rate)")
print(f"target signup ratio >= 0.9: {'MET' if r >= 0.9 else 'MISSED'}")
print(f"target signup peak RSS <= 64 MiB at +{sys.argv[2]} rows: {mib(rss_big)}"
      f" {'(not read)' if rss_big is None else 'MET' if rss_big <= 64 else 'MISSED'}")
EOF
} | tee "${SUMMARY_OUT:-/dev/null}"
