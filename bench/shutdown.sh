#!/usr/bin/env bash
# SIGTERM with a large intake backlog: how long signupd takes to exit, and that nothing is lost.
#
#   bash bench/shutdown.sh     # ~1 minute after the release build
#
# Each run, on a fresh data directory:
#  1. `signupd migrate` (the release binary) creates the database; bench/seed_tool.py appends
#     BACKLOG (100,000) accepted signups to `intake`, as POST /api/signup leaves them;
#  2. `signupd serve` starts; once /healthz answers and the intake worker has applied some rows
#     (SETTLE seconds), SIGTERM; the time from the signal to the process's exit is measured, and
#     its exit status must be 0;
#  3. with signupd stopped: subscribers + intake must equal BACKLOG (every row either applied or
#     still queued), and no pending row may be without a sent or queued confirmation;
#  4. `signupd serve` again: intake must drain to 0 with subscribers = BACKLOG; then SIGTERM
#     (timed too: an idle stop).
#
# Knobs: BACKLOG=100000 REPEAT=3 SETTLE=1 RUST_LOG_SERVE=info SUMMARY_OUT=file, and
#   bench/common.sh's BUILD=1 KEEP_TMP=0 BENCH_SIGNUPD BENCH_REVISION CACHE_MIB
# Needs sqlite3, curl (installed with apt-get when missing), python3. Listens on 127.0.0.1:18084.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

BACKLOG=${BACKLOG:-100000}
REPEAT=${REPEAT:-3}
SETTLE=${SETTLE:-1}
RUST_LOG_SERVE=${RUST_LOG_SERVE:-info}
PORT=18084
TOOL=(python3 "$REPO/bench/seed_tool.py")

require_tools sqlite3 curl

bench_tmp shutdown
release_binaries

count() { "${TOOL[@]}" count --data-dir "$1"; }
jget() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }

# Sends SIGTERM and sets STOP_SECS to the seconds until the process has exited; fails on a
# non-zero exit status. Must run in this shell (not in $(...)), which is the process's parent.
stop_timed() { # LOGFILE
    local t0 t1
    t0=$(date +%s.%N)
    stop "$PID"
    t1=$(date +%s.%N)
    PID=
    ((STOPPED == 0)) || { echo "bench: signupd exited with status $STOPPED after SIGTERM; see $1" >&2; return 1; }
    STOP_SECS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
}

: >"$TMP/runs"
for run in $(seq 1 "$REPEAT"); do
    data=$TMP/run-$run
    cfg=$(config "$data")
    RUST_LOG=warn "$SIGNUPD" migrate --config "$cfg" >/dev/null
    log "run $run/$REPEAT: seeding $BACKLOG intake rows"
    "${TOOL[@]}" intake --data-dir "$data" -n "$BACKLOG" >/dev/null
    seeded=$(count "$data")
    [[ $(jget "$seeded" intake) == "$BACKLOG" ]] || { echo "bench: seeding failed: $seeded" >&2; exit 1; }
    sync

    log "run $run: serve, SIGTERM ${SETTLE}s after /healthz answers"
    t_start=$(date +%s.%N)
    serve_start "$data" "$RUST_LOG_SERVE"
    t_up=$(date +%s.%N)
    sleep "$SETTLE"
    at_term=$(sql "$data/signupd.sqlite3" 'SELECT count(*) FROM intake')
    stop_timed "$data.log"
    stop_secs=$STOP_SECS
    after=$(count "$data")
    subs=$(jget "$after" subscribers)
    left=$(jget "$after" intake)
    lost=$(jget "$after" pending_without_mail)
    ok=yes
    (( subs + left == BACKLOG && lost == 0 )) || ok=no
    log "run $run: exited ${stop_secs}s after SIGTERM; intake at SIGTERM ~$at_term; after exit: $after; nothing lost: $ok"

    log "run $run: restart, wait for intake to drain"
    t_restart=$(date +%s.%N)
    serve_start "$data"
    drained=no
    wait_intake "$data/signupd.sqlite3" && drained=yes
    t_drained=$(date +%s.%N)
    stop_timed "$data.log"
    idle_stop=$STOP_SECS
    final=$(count "$data")
    fsubs=$(jget "$final" subscribers)
    flost=$(jget "$final" pending_without_mail)
    final_ok=yes
    [[ $drained == yes ]] && (( fsubs == BACKLOG && $(jget "$final" intake) == 0 && flost == 0 )) || final_ok=no
    awk -v run="$run" -v up="$(awk -v a="$t_start" -v b="$t_up" 'BEGIN { print b - a }')" -v at="$at_term" -v stop="$stop_secs" \
        -v subs="$subs" -v left="$left" -v ok="$ok" -v lost="$lost" -v drain="$(awk -v a="$t_restart" -v b="$t_drained" 'BEGIN { print b - a }')" \
        -v fsubs="$fsubs" -v fok="$final_ok" -v idle="$idle_stop" -v n="$BACKLOG" 'BEGIN {
        printf "run=%s start_to_healthz_s=%.2f intake_at_sigterm=%s sigterm_to_exit_s=%s applied_before_stop=%s left_in_intake=%s sum_ok=%s pending_without_mail=%s restart_drain_s=%.2f final_subscribers=%s/%s final_ok=%s idle_sigterm_to_exit_s=%s\n",
            run, up, at, stop, subs, left, ok, lost, drain, fsubs, n, fok, idle }' | tee -a "$TMP/runs" >&2
done

{
    echo
    echo "signupd SIGTERM with a ${BACKLOG}-row intake backlog — $(date -u +%FT%TZ), signupd $REVISION"
    echo "machine: $(machine), data on $(df --output=source "$TMP" | tail -1)"
    cat "$TMP/runs"
    python3 - "$TMP/runs" "$BACKLOG" <<'EOF'
import statistics, sys
runs = [dict(kv.split("=", 1) for kv in line.split()) for line in open(sys.argv[1]) if line.strip()]
stops = [float(r["sigterm_to_exit_s"]) for r in runs]
ok = all(r["sum_ok"] == "yes" and r["final_ok"] == "yes" for r in runs)
print(f"SIGTERM to exit: median {statistics.median(stops):.2f} s, max {max(stops):.2f} s over {len(runs)} runs; "
      f"nothing lost (subscribers + intake = {sys.argv[2]} after the stop, all applied after restart): {'yes' if ok else 'NO'}")
print(f"target <= 10 s and nothing lost: {'MET' if max(stops) <= 10 and ok else 'MISSED'}")
EOF
} | tee "${SUMMARY_OUT:-/dev/null}"
