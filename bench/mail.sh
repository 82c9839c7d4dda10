#!/usr/bin/env bash
# Mail-queue benchmark for signupd: mails per second from the outbox to a local SMTP sink, and
# the time to drain 10,000 pending confirmations (see BENCHMARKS.md for figures).
#
#   bash bench/mail.sh              # ~1.5 minutes after the release build
#
# Phases (each with a fresh data directory on the same disk as $TMPDIR, default /tmp):
#  1. sink ceiling: postfix's smtp-source blasting N messages of signupd's size at smtp-sink,
#     over 1 and 8 persistent connections, so "limited by the sink" can be checked;
#  2. queue drain: signupd stopped, N pending subscribers + N due 'confirm' outbox items inserted
#     with sqlite3 (bench/mail_tool.py seed), smtp-sink started, signupd started; the queue is
#     polled every 100 ms until it is empty. mails/s = N / (seconds from process start to empty).
#     RUST_LOG=warn, then again with the default log level (one INFO line per mail);
#  3. end to end: N POST /api/signup as fast as signupd answers (bench/mail_tool.py signups),
#     until every confirmation has reached the sink;
#  4. diagnostics (DIAG=1): the SMTP wait per mail from strace (signupd opens its SMTP sockets
#     itself with TCP_NODELAY since 14b35a4, so the end-of-data write no longer waits for a
#     delayed ACK; this checks it); the drain with the database on tmpfs (no fsync cost); the
#     writer's commits (fsyncs) per mail from strace; syscalls and CPU per mail (perf stat on
#     syscall tracepoints) and the disk's fdatasync latency.
#
# RATIO=1 runs only the ratio phase instead of 1-4: REPEAT rounds, each of smtp-source over as
# many connections as signupd has mail workers, then a drain by BENCH_SIGNUPD_BEFORE (when set, a
# release binary of an earlier commit; BENCH_REVISION_BEFORE names it), then a drain by this
# tree's signupd; every drain is divided by its own round's smtp-source, and the medians of
# those ratios are printed. Rounds interleave the sides, so the machine's drift falls on both.
#
#   RATIO=1 REPEAT=7 BENCH_SIGNUPD_BEFORE=/path/to/old/signupd bash bench/mail.sh
#
# Knobs (environment): RATIO=0 N=10000 LOG_N=$N E2E_N=$N E2E_CONNS=16 DIAG=1 DIAG_N=$N STRACE_N=5000
# REPEAT=3 QUIET_MAX=25 QUIET_WAIT=600 DRAIN_TIMEOUT=1800 SUMMARY_OUT=file, and bench/common.sh's
# BUILD=1 KEEP_TMP=0 BENCH_SIGNUPD BENCH_REVISION CACHE_MIB.
# Before each phase the script waits (up to QUIET_WAIT s) until other processes use at most
# QUIET_MAX % of the CPUs; the summary names the phases that never got that quiet.
# Needs: smtp-sink and smtp-source (apt-get install postfix; no postfix daemon is needed),
# python3, curl, cargo; strace for DIAG=1 (all but cargo are installed with apt-get when
# missing; no postfix daemon is started). Listens on 127.0.0.1:18090 (signupd) and
# 127.0.0.1:2525 (sink) only.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

N=${N:-10000}
LOG_N=${LOG_N:-$N}
E2E_N=${E2E_N:-$N}
E2E_CONNS=${E2E_CONNS:-16}
DIAG=${DIAG:-1}
DIAG_N=${DIAG_N:-$N}
STRACE_N=${STRACE_N:-5000}
REPEAT=${REPEAT:-3}
QUIET_MAX=${QUIET_MAX:-25}
QUIET_WAIT=${QUIET_WAIT:-600}
DRAIN_TIMEOUT=${DRAIN_TIMEOUT:-1800}

PORT=18090 # signupd's
SINK_PORT=2525
SINK=${SINK:-/usr/sbin/smtp-sink}
SOURCE=${SOURCE:-/usr/sbin/smtp-source}
TOOL=(python3 "$REPO/bench/mail_tool.py")

# postfix only for smtp-sink and smtp-source: no postfix daemon is started.
tools=(curl python3 "postfix:$SINK" "postfix:$SOURCE")
if [[ $DIAG == 1 ]]; then tools+=(strace); fi
require_tools "${tools[@]}"
ports_free "$PORT" "$SINK_PORT"
bench_tmp mailbench

# --- build --------------------------------------------------------------------------------------
# What is being measured: the worker settings the source has.
BUILT_SETTINGS="mail workers $(sed -n 's/^pub const WORKERS: usize = \([0-9]*\);/\1/p' src/outbound/mail/worker.rs 2>/dev/null || true), claim batch $(sed -n 's/^pub const CLAIM_BATCH: usize = \([0-9]*\);/\1/p' src/outbound/mail/worker.rs 2>/dev/null || true), one SMTP connection per worker, one writer thread, $(sed -n 's/^const READERS: u32 = \([0-9]*\);/\1/p' src/storage/mod.rs 2>/dev/null || true) readers"
release_binaries

# --- helpers ------------------------------------------------------------------------------------
# common.sh's config, sending through smtp-sink with the hourly budget out of the way.
CONFIG_MAIL='transport = "smtp"
max_mails_per_hour = 1000000'
CONFIG_MORE="[mail.smtp]
host = \"127.0.0.1\"
port = $SINK_PORT
security = \"none\"
timeout = \"10s\""

SINK_PID=""
start_sink() { # OUTFILE [smtp-sink options]
    local out=$1
    shift
    "$SINK" -c -u root "$@" "127.0.0.1:$SINK_PORT" 1000 >"$out" 2>&1 &
    SINK_PID=$!
    PIDS+=("$SINK_PID")
    wait_for "$SINK_PID" listens "$SINK_PORT"
}
stop_sink() {
    stop "$SINK_PID"
    SINK_PID=""
}

RESULTS="$TMP/results.jsonl"
: >"$RESULTS"
record() { # NAME JSON
    python3 -c 'import json,sys; d=json.loads(sys.argv[2]); d["name"]=sys.argv[1]; print(json.dumps(d))' "$1" "$2" >>"$RESULTS"
    echo "   $1: $2" >&2
}

# One queue drain: seed N items into a stopped signupd, start the sink, start signupd, poll.
#   drain NAME BASE_DIR N RUST_LOG [WRAPPER...]
# WRAPPER (optional) is a command that gets "-p PID" appended and is stopped with SIGINT after
# the drain (strace); its output is kept in $TMP/NAME.wrap.
drain() {
    local name=$1 base=$2 n=$3 rust_log=$4
    shift 4
    local data="$base/$name" pid wrap_pid="" perf_pid="" t0 result sink_count log_lines
    mkdir -p "$base"
    rm -rf "$data" "$data".*
    init_data "$data"
    "${TOOL[@]}" seed --data-dir "$data" -n "$n" >/dev/null
    start_sink "$TMP/$name.sink"
    sync
    local launch=(env -u RUST_LOG)
    [[ -n $rust_log ]] && launch=(env RUST_LOG="$rust_log")
    launch+=("$SIGNUPD" serve --config "$data.toml")
    t0=$(date +%s.%N)
    if [[ ${1:-} == perf ]]; then
        # perf stat from the start, so every thread signupd ever spawns is counted
        shift
        perf stat -x, -o "$TMP/$name.perf" -e "$PERF_EVENTS" -- "${launch[@]}" 2>"$TMP/$name.log" &
        perf_pid=$!
        PIDS+=("$perf_pid")
        pid=""
        while [[ -z $pid ]]; do
            pid=$(pgrep -P "$perf_pid" | head -1 || true)
            [[ -z $pid ]] && sleep 0.01
        done
    else
        "${launch[@]}" 2>"$TMP/$name.log" &
        pid=$!
    fi
    PIDS+=("$pid")
    if (($# > 0)); then
        "$@" -p "$pid" >"$TMP/$name.wrap" 2>&1 &
        wrap_pid=$!
        PIDS+=("$wrap_pid")
    fi
    result=$("${TOOL[@]}" drain --data-dir "$data" -n "$n" --t0 "$t0" --pid "$pid" --sink-pid "$SINK_PID" \
        --timeout "$DRAIN_TIMEOUT" --samples "$TMP/$name.samples") || {
        echo "bench: $name did not drain: $result" >&2
        exit 1
    }
    if [[ -n $wrap_pid ]]; then stop "$wrap_pid" INT; fi
    stop "$pid"
    # signupd is perf's child, not ours: perf passes its status on
    if [[ -n $perf_pid ]]; then stop "$perf_pid" 0; fi
    ((STOPPED == 0)) || { echo "bench: signupd exited $STOPPED after SIGTERM; see $TMP/$name.log" >&2; exit 1; }
    stop_sink
    sink_count=$("${TOOL[@]}" sinkcount "$TMP/$name.sink")
    log_lines=$(wc -l <"$TMP/$name.log")
    result=$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); d["sink_received"]=int(sys.argv[2]); d["log_lines"]=int(sys.argv[3]); print(json.dumps(d))' \
        "$result" "$sink_count" "$log_lines")
    record "$name" "$result"
    ((sink_count >= n)) || { echo "bench: $name: the sink received $sink_count of $n mails" >&2; exit 1; }
}

# smtp-source alone: N messages of a confirmation's size over SESSIONS persistent connections
# into a fresh sink, recorded as NAME; sets RATE (mails/s).
#   source_ceiling NAME SESSIONS
source_ceiling() {
    local name=$1 sessions=$2 t0 t1 got
    start_sink "$TMP/$name.sink"
    t0=$(date +%s.%N)
    # -d: keep the connection (as lettre's pool does); -l: payload size (headers come on top)
    "$SOURCE" -d -s "$sessions" -m "$N" -l "$((MAIL_BYTES - 200))" \
        -f no-reply@example.com -t bench@example.com "127.0.0.1:$SINK_PORT"
    t1=$(date +%s.%N)
    stop_sink
    got=$("${TOOL[@]}" sinkcount "$TMP/$name.sink")
    RATE=$(python3 -c "print(round($N / ($t1 - $t0), 1))")
    record "$name" "{\"sessions\": $sessions, \"messages\": $N, \"sink_received\": $got, \"secs\": $(python3 -c "print(round($t1 - $t0, 3))"), \"mails_per_sec\": $RATE}"
}

MAIL_BYTES=""
PERF_EVENTS="task-clock,syscalls:sys_enter_fsync,syscalls:sys_enter_fdatasync,syscalls:sys_enter_pread64,syscalls:sys_enter_pwrite64,syscalls:sys_enter_clock_nanosleep,syscalls:sys_enter_futex,syscalls:sys_enter_sendto"
PERF_OK=0
if [[ $DIAG == 1 ]] && command -v perf >/dev/null && perf stat -x, -o /dev/null -e "$PERF_EVENTS" -- true 2>/dev/null; then
    PERF_OK=1
fi

# --- 0. the size of one confirmation as the sink receives it ------------------------------------
wait_quiet calibrate
log "calibrating: 20 confirmations into a dumping sink, to size smtp-source's messages"
mkdir -p "$TMP/dump"
CAL="$TMP/calibrate"
init_data "$CAL"
"${TOOL[@]}" seed --data-dir "$CAL" -n 20 >/dev/null
start_sink "$TMP/calibrate.sink" -d "$TMP/dump/%H%M%S."
serve_start "$CAL"
"${TOOL[@]}" drain --data-dir "$CAL" -n 20 --t0 "$(date +%s.%N)" --timeout 120 >/dev/null
serve_stop
stop_sink
# The dump holds smtp-sink's own X-* and Received: lines first; the mail starts after those.
MAIL_BYTES=$(python3 - "$TMP/dump" <<'EOF'
import os, sys
sizes = []
for name in os.listdir(sys.argv[1]):
    lines = open(os.path.join(sys.argv[1], name), "rb").read().split(b"\n")
    i = next(k for k, l in enumerate(lines) if l.startswith(b"Received:")) + 3
    sizes.append(len(b"\r\n".join(lines[i:])))
print(round(sum(sizes) / len(sizes)))
EOF
)
log "one confirmation is about $MAIL_BYTES bytes"

mkdir -p "$TMP/disk"
record "fsync-probe-start" "$("${TOOL[@]}" fsync --dir "$TMP/disk" -n 1000)"

# --- ratio phase (RATIO=1): signupd's drain ÷ smtp-source's, round by round ------------------
if [[ ${RATIO:-0} == 1 ]]; then
    WORKERS=$(sed -n 's/^pub const WORKERS: usize = \([0-9]*\);/\1/p' src/outbound/mail/worker.rs)
    AFTER=$SIGNUPD
    BEFORE=""
    if [[ -n ${BENCH_SIGNUPD_BEFORE:-} ]]; then
        BEFORE=$TMP/bin/signupd-before
        cp "$BENCH_SIGNUPD_BEFORE" "$BEFORE"
    fi
    for run in $(seq "$REPEAT"); do
        wait_quiet "ratio round $run: smtp-source"
        source_ceiling "ratio-source-$run" "$WORKERS"
        for side in before after; do
            [[ $side == before && -z $BEFORE ]] && continue
            if [[ $side == before ]]; then SIGNUPD=$BEFORE; else SIGNUPD=$AFTER; fi
            wait_quiet "ratio round $run: $side"
            drain "ratio-$side-$run" "$TMP/disk" "$N" warn
        done
    done
    SIGNUPD=$AFTER
    {
        echo
        echo "signupd mail drain ÷ smtp-source — $(date -u +%Y-%m-%dT%H:%MZ)"
        echo "machine: $(machine), data dir on $(df -T "$TMP" | awk 'NR==2 {print $2}')"
        echo "after: $REVISION ($BUILT_SETTINGS); before: ${BENCH_REVISION_BEFORE:-${BENCH_SIGNUPD_BEFORE:-none}}; one confirmation ≈ $MAIL_BYTES bytes; smtp-source over $WORKERS connections"
        echo
        python3 - "$RESULTS" <<'EOF2'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
source = {r["name"].rsplit("-", 1)[1]: r["mails_per_sec"] for r in rows if r["name"].startswith("ratio-source-")}
print(f"{'round':>5} {'smtp-source':>12} {'before':>16} {'after':>16}")
ratios = {"before": [], "after": []}
for run, ceiling in source.items():
    cells = []
    for side in ("before", "after"):
        r = next((r for r in rows if r["name"] == f"ratio-{side}-{run}"), None)
        if r is None:
            cells.append(f"{'-':>16}")
            continue
        ratios[side].append(r["mails_per_sec"] / ceiling)
        cells.append(f"{r['mails_per_sec']:>8} ({r['mails_per_sec'] / ceiling:.3f})")
    print(f"{run:>5} {ceiling:>12} {cells[0]} {cells[1]}")
print()
for side, values in ratios.items():
    if values:
        print(f"{side}: median ratio {statistics.median(values):.3f} (min {min(values):.3f}, max {max(values):.3f}, {len(values)} rounds)")
EOF2
        busy_phases "phases that ran on a busy machine:"
    } | tee "${SUMMARY_OUT:-/dev/null}"
    exit 0
fi

# --- 1. sink ceiling ----------------------------------------------------------------------------
SINK_RATES=()
for sessions in 1 8; do
    wait_quiet "sink ceiling s=$sessions"
    source_ceiling "sink-ceiling-s$sessions" "$sessions"
    SINK_RATES+=("$RATE")
done

# --- 2. queue drain -----------------------------------------------------------------------------
for run in $(seq "$REPEAT"); do
    wait_quiet "drain warn #$run"
    log "drain #$run: $N queued confirmations, RUST_LOG=warn"
    drain "drain-warn-$run" "$TMP/disk" "$N" warn
done
wait_quiet "drain default log"
log "drain: $LOG_N queued confirmations, default log level (INFO: one line per mail)"
drain "drain-info" "$TMP/disk" "$LOG_N" ""

# --- 3. end to end ------------------------------------------------------------------------------
wait_quiet "end to end"
log "end to end: $E2E_N POST /api/signup over $E2E_CONNS connections, until every mail reached the sink"
E2E="$TMP/disk/e2e"
mkdir -p "$TMP/disk"
init_data "$E2E"
start_sink "$TMP/e2e.sink"
serve_start "$E2E"
t0=$(date +%s.%N)
"${TOOL[@]}" signups --url "http://127.0.0.1:$PORT/api/signup" -n "$E2E_N" -c "$E2E_CONNS" >"$TMP/e2e.posts" &
posts_pid=$!
PIDS+=("$posts_pid")
result=$("${TOOL[@]}" drain --data-dir "$E2E" -n "$E2E_N" --t0 "$t0" --pid "$PID" --sink-pid "$SINK_PID" \
    --timeout "$DRAIN_TIMEOUT" --samples "$TMP/e2e.samples") || { echo "bench: end to end did not drain: $result" >&2; exit 1; }
stop "$posts_pid" 0
((STOPPED == 0)) || { echo "bench: a signup was not answered 303: $(cat "$TMP/e2e.posts")" >&2; exit 1; }
serve_stop
stop_sink
posts=$(cat "$TMP/e2e.posts")
record "e2e" "$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); p=json.loads(sys.argv[2]); d["post_secs"]=p["secs"]; d["post_rps"]=p["rps"]; d["post_status"]=p["status"]; d["sink_received"]=int(sys.argv[3]); print(json.dumps(d))' \
    "$result" "$posts" "$("${TOOL[@]}" sinkcount "$TMP/e2e.sink")")"

# --- 4. diagnostics -----------------------------------------------------------------------------
if [[ $DIAG == 1 ]]; then
    wait_quiet "diag smtp wait"
    log "diagnostics: per-mail SMTP wait (strace -tt -T on sendto/recvfrom, 400 mails)"
    drain "diag-smtpwait" "$TMP/disk" 400 warn strace -f -tt -T -e trace=sendto,recvfrom
    record "diag-smtpwait-summary" "$("${TOOL[@]}" smtpwait "$TMP/diag-smtpwait.wrap")"

    shm_tmp mailbench
    wait_quiet "diag tmpfs"
    log "diagnostics: data on tmpfs (fsync costs nothing), $DIAG_N mails"
    drain "diag-tmpfs" "$SHM" "$DIAG_N" warn

    wait_quiet "diag commits"
    log "diagnostics: fsyncs per mail (strace -f -c on fsync/fdatasync; attaching slows signupd, the counts matter), disk, $STRACE_N mails"
    drain "diag-commits" "$TMP/disk" "$STRACE_N" warn strace -f -c -w -e trace=fsync,fdatasync
    record "diag-commits-summary" "$("${TOOL[@]}" stracecount "$TMP/diag-commits.wrap" -n "$STRACE_N")"

    if [[ $PERF_OK == 1 ]]; then
        # perf stat's syscall tracepoints cost little; strace -c would slow the workers a lot.
        wait_quiet "diag syscalls"
        log "diagnostics: syscalls and CPU per mail (perf stat), disk, $STRACE_N mails"
        drain "diag-perf" "$TMP/disk" "$STRACE_N" warn perf
        record "diag-perf-summary" "$("${TOOL[@]}" perfcount "$TMP/diag-perf.perf" -n "$STRACE_N")"
    fi
    wait_quiet "diag fsync probe"
    record "fsync-probe-end" "$("${TOOL[@]}" fsync --dir "$TMP/disk" -n 1000)"
fi

# --- summary ------------------------------------------------------------------------------------
{
    echo
    echo "signupd mail-queue benchmark — $(date -u +%Y-%m-%dT%H:%MZ)"
    echo "machine: $(machine), data dir on $(df -T "$TMP" | awk 'NR==2 {print $2}') ($(df "$TMP" | awk 'NR==2 {print $1}'))"
    echo "signupd built from $REVISION ($BUILT_SETTINGS), lettre $(grep -A1 'name = "lettre"' Cargo.lock | sed -n 's/version = "\(.*\)"/\1/p'), one confirmation ≈ $MAIL_BYTES bytes"
    echo
    python3 - "$RESULTS" "$N" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
n = int(sys.argv[2])
def show(r):
    name = r["name"]
    if name.startswith("sink-ceiling"):
        return f"{name:26} {r['mails_per_sec']:>8} mails/s  ({r['messages']} msgs over {r['sessions']} connection(s), {r['secs']} s)"
    if "drain_secs" in r:
        extra = f"cpu {r.get('cpu_us_per_mail','?')} us/mail ({r.get('cpu_util_pct_of_one_core','?')} % of a core), sink cpu {r.get('sink_cpu_secs','?')} s"
        if "post_rps" in r:
            extra = f"POSTs {r['post_secs']} s ({r['post_rps']} req/s), " + extra
        return (f"{name:26} {r['mails_per_sec']:>8} mails/s  ({r['n']} mails, drained in {r['drain_secs']} s; "
                f"{r['mails_per_sec_active']} mails/s from the first mail; sink got {r.get('sink_received','?')}; {extra})")
    return f"{name:26} {json.dumps({k: v for k, v in r.items() if k != 'name'})}"
for r in rows:
    print(show(r))
drains = [r for r in rows if r["name"].startswith("drain-warn")]
sink = max((r["mails_per_sec"] for r in rows if r["name"].startswith("sink-ceiling")), default=0)
if drains:
    import statistics
    rate = statistics.median(r["mails_per_sec"] for r in drains)
    secs = statistics.median(r["drain_secs"] for r in drains)
    print()
    actives = [r["mails_per_sec_active"] for r in drains if r["mails_per_sec_active"]]
    active = statistics.median(actives) if actives else None
    print(f"target >= 1000 mails/s: {'MET' if rate >= 1000 else 'NOT MET'} (signupd {rate} mails/s from process start, "
          f"{active} from the first mail, median of {len(drains)} drains, RUST_LOG=warn)")
    print(f"limited by the sink: {'yes' if rate >= 0.8 * sink else 'no'} (the sink alone takes {sink} mails/s)")
    print(f"drain time for {n} pending confirmations: {secs} s (median)")
EOF
    busy_phases "phases that ran on a busy machine:"
} | tee "${SUMMARY_OUT:-/dev/null}"
