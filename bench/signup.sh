#!/usr/bin/env bash
# End-to-end signup benchmark for signupd; BENCHMARKS.md has the figures and how to read them.
#
#   bash bench/signup.sh      # ~9.5 minutes on an idle 2-core machine, after the release build
#
# 1. ceiling: examples/bench_ceiling.rs (actix-web, parses the same form, answers 303), wrk;
# 2. signupd POST /api/signup, unique addresses, rate limits raised, RUST_LOG=warn, the same wrk
#    command; then once with the default log level (one access-log line per request);
#    After each signupd run: the intake rows left when wrk stopped, how long the intake worker
#    (jittered ~250 ms tick) needs to apply them, and applied rows/s / answered req/s;
#    then (phase `mail`) the same run with the mail budget out of the way (max_mails_per_hour =
#    MAIL_PER_HOUR, file transport), so the mail workers write the confirmation mails during the
#    load as in a real wave (with the default budget of 1,000 the warm-up spends it): the same
#    figures and the mail files written from the start of the measured run until 1 s after it;
# 3. signupd paced open loop by bench/loadgen (wrk cannot pace, Debian has no wrk2) at half the
#    median maximum rate of 2., the ceiling at the same rate, and a sweep of other fractions of
#    the maximum;
# 4. answer timing for the four address states (bench/states.py), requests back to back (the
#    answer itself and the one after it) and with a pause between them.
# Every phase reports the server's peak RSS (VmHWM from /proc/PID/status, MiB, bench/common.sh's
# peak_rss_mib), read right after the measured load ends, before the server is stopped.
#
# Knobs (environment, defaults shown):
#   THREADS=2 CONNS=64 DURATION=20s WARMUP=3s REPEAT=3 LOG_COMPARE=1
#   PACED_SECS=30 PACED_WARMUP=5 PACED_CONNS=64 SWEEP_FRACTIONS="0.25 0.75" (of the median
#   maximum rate; SWEEP_RATES="r1 r2 ..." gives absolute rates instead) SWEEP_SECS=20
#   STATES_N=600 STATES_GAPS="0 20" (ms between requests)
#   QUIET_MAX=10 QUIET_WAIT=900: before each phase, wait up to QUIET_WAIT s until the machine is
#     at most QUIET_MAX % busy; the summary names phases that never got that quiet
#   BUILD=1 (0: use the binaries already in target/release) KEEP_TMP=0 SUMMARY_OUT=file
#   BENCH_SIGNUPD=path BENCH_CEILING=path: other binaries than target/release/{signupd,examples/bench_ceiling}
#   PHASES="ceiling max mail paced sweep states": the parts to run; without `max`, PACED_RATE=r
#     gives the paced rate (otherwise half the median maximum) and the sweep uses fractions of 2r;
#     only `ceiling` and `paced` need the ceiling binary, only `paced` and `sweep` the load generator
#   MAIL_PER_HOUR=100000000: the mail phase's [mail] max_mails_per_hour (REPEAT runs, like max)
#   BENCH_LOADGEN=path: another load generator than target/bench-loadgen/release/signupd-loadgen
#   BENCH_REVISION=name: what BENCH_SIGNUPD was built from (default: this tree's HEAD)
#   CACHE_MIB=N (unset): `[storage] cache_mib = N` in every signupd config (the writer connection's
#     SQLite page cache, MiB; needs a signupd that knows the key); unset, the key is left out
# Needs wrk, sqlite3, curl (installed with apt-get when missing), python3, cargo. Everything
# listens on 127.0.0.1 (ports 18080-18082).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
# peak_rss_mib, cache_mib_toml (this script keeps its own set-up, log, cleanup and helpers).
source "$REPO/bench/common.sh"

THREADS=${THREADS:-2}
CONNS=${CONNS:-64}
DURATION=${DURATION:-20s}
WARMUP=${WARMUP:-3s}
PACED_SECS=${PACED_SECS:-30}
PACED_WARMUP=${PACED_WARMUP:-5}
PACED_CONNS=${PACED_CONNS:-64}
STATES_N=${STATES_N:-600}
STATES_GAPS=${STATES_GAPS:-0 20}
SWEEP_FRACTIONS=${SWEEP_FRACTIONS:-0.25 0.75}
SWEEP_RATES=${SWEEP_RATES:-}
SWEEP_SECS=${SWEEP_SECS:-20}
REPEAT=${REPEAT:-3}
QUIET_MAX=${QUIET_MAX:-10}
QUIET_WAIT=${QUIET_WAIT:-900}
LOG_COMPARE=${LOG_COMPARE:-1}
KEEP_TMP=${KEEP_TMP:-0}
PHASES=${PHASES:-ceiling max mail paced sweep states}
PACED_RATE=${PACED_RATE:-}
MAIL_PER_HOUR=${MAIL_PER_HOUR:-100000000}
has() { [[ " $PHASES " == *" $1 "* ]]; }
if ! has max && { has paced || has sweep; } && [[ -z $PACED_RATE && -z $SWEEP_RATES ]]; then
    echo "bench: without the max phase, set PACED_RATE (and/or SWEEP_RATES)" >&2
    exit 2
fi

SIGNUPD_PORT=18080
CEILING_PORT=18081
STATES_PORT=18082

BUILT_SIGNUPD=${BENCH_SIGNUPD:-target/release/signupd}
BUILT_CEILING=${BENCH_CEILING:-target/release/examples/bench_ceiling}
LOADGEN_TARGET=target/bench-loadgen
BUILT_LOADGEN=${BENCH_LOADGEN:-$LOADGEN_TARGET/release/signupd-loadgen}
NEED_CEILING=0; if has ceiling || has paced; then NEED_CEILING=1; fi
NEED_LOADGEN=0; if has paced || has sweep; then NEED_LOADGEN=1; fi

# Debian packages for the tools (wrk 4.1.0 on bookworm; there is no wrk2).
require_tools wrk sqlite3 curl
for tool in wrk python3 sqlite3 curl cargo; do
    command -v "$tool" >/dev/null || { echo "bench: $tool is required" >&2; exit 1; }
done

TMP=$(mktemp -d /tmp/signupd-bench.XXXXXX)
PIDS=()
cleanup() {
    local pid
    for pid in "${PIDS[@]}"; do
        kill -TERM "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    if [[ $KEEP_TMP == 1 ]]; then
        echo "bench: kept $TMP" >&2
    else
        rm -rf "$TMP"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { echo "== $*" >&2; }

# --- build --------------------------------------------------------------------------------------
# cargo only rebuilds what changed; BUILD=0 uses the binaries already in target/release.
if [[ ${BUILD:-1} == 1 || ! -x $BUILT_SIGNUPD ]] || { ((NEED_CEILING)) && [[ ! -x $BUILT_CEILING ]]; }; then
    log "building release binaries (signupd, bench_ceiling)"
    cargo build --release --locked --bin signupd --example bench_ceiling
fi
if ((NEED_LOADGEN)) && [[ ! -x $BUILT_LOADGEN ]]; then
    log "building the paced load generator (bench/loadgen)"
    CARGO_TARGET_DIR=$LOADGEN_TARGET cargo build --release --locked --manifest-path bench/loadgen/Cargo.toml
    [[ -x $BUILT_LOADGEN ]] || { echo "bench: no load generator at $BUILT_LOADGEN" >&2; exit 1; }
fi
# Run copies, so a rebuild in the working tree during the run cannot swap a binary underneath.
mkdir -p "$TMP/bin"
cp "$BUILT_SIGNUPD" "$TMP/bin/signupd"
if ((NEED_CEILING)); then cp "$BUILT_CEILING" "$TMP/bin/bench_ceiling"; fi
if ((NEED_LOADGEN)); then cp "$BUILT_LOADGEN" "$TMP/bin/signupd-loadgen"; fi
SIGNUPD=$TMP/bin/signupd
CEILING=$TMP/bin/bench_ceiling
LOADGEN=$TMP/bin/signupd-loadgen
# What the binary was built from; BENCH_REVISION names it when BENCH_SIGNUPD is not this tree's build.
if [[ -n ${BENCH_REVISION:-} ]]; then
    REVISION=$BENCH_REVISION
else
    REVISION=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
    if [[ -n $(git status --porcelain -- src Cargo.toml Cargo.lock 2>/dev/null) ]]; then
        REVISION="$REVISION + uncommitted changes in src/"
    fi
fi
BUILT_AT=$(date -r "$BUILT_SIGNUPD" -u +%FT%TZ)

# --- helpers ------------------------------------------------------------------------------------
wait_http() { # URL
    local i
    for i in $(seq 1 300); do
        curl -s -o /dev/null "$1" && return 0
        sleep 0.1
    done
    echo "bench: $1 did not come up" >&2
    return 1
}

START_PID=
start_signupd() { # NAME PORT RUST_LOG [MAX_MAILS_PER_HOUR]
    local dir=$TMP/$1
    mkdir -p "$dir/data/mail"
    cat >"$dir/config.toml" <<EOF
[server]
listen = "127.0.0.1:$2"
[storage]
data_dir = "$dir/data"
$(cache_mib_toml)
[mail]
transport = "file"
file_dir = "$dir/data/mail"
${4:+max_mails_per_hour = $4}
[signup]
rate_limits = [ { window = "1m", max = 100000000 } ]
network_rate_limits = [ { window = "1m", max = 100000000 } ]
resend_cooldown = "10m"
[[lists]]
id = "news"
EOF
    RUST_LOG=$3 "$SIGNUPD" serve --config "$dir/config.toml" 2>"$dir/stderr.log" &
    START_PID=$!
    PIDS+=("$START_PID")
    wait_http "http://127.0.0.1:$2/healthz"
}

start_ceiling() {
    "$CEILING" "127.0.0.1:$CEILING_PORT" 2>"$TMP/ceiling.log" &
    START_PID=$!
    PIDS+=("$START_PID")
    # Any answer (404 on GET /) means it is listening.
    wait_http "http://127.0.0.1:$CEILING_PORT/"
}

stop() { # PID
    kill -TERM "$1"
    wait "$1" 2>/dev/null || true
    local pids=() pid
    for pid in "${PIDS[@]}"; do [[ $pid == "$1" ]] || pids+=("$pid"); done
    PIDS=("${pids[@]}")
}

# Checks that the target answers the benchmark request with 303 to /check-inbox?list=news.
check_answer() { # URL
    local answer
    answer=$(curl -s -o /dev/null -w '%{http_code} %{redirect_url}' \
        -H 'Content-Type: application/x-www-form-urlencoded' \
        --data "email=check-$RANDOM%40example.com&consent=yes&list=news" "$1")
    [[ $answer == "303 http://127.0.0.1:"*"/check-inbox?list=news" ]] || {
        echo "bench: $1 answered '$answer', expected 303 to /check-inbox?list=news" >&2
        exit 1
    }
}

# --timeout 30s: wrk's default (2 s) drops slower answers from the latency figures.
WRK_CMD=(wrk -t"$THREADS" -c"$CONNS" -d"$DURATION" --timeout 30s -s bench/signup.lua --latency)
run_wrk() { # NAME URL -> prints the SUMMARY line
    check_answer "$2"
    wrk -t"$THREADS" -c"$CONNS" -d"$WARMUP" -s bench/signup.lua "$2" >"$TMP/$1.warmup.txt"
    "${WRK_CMD[@]}" "$2" >"$TMP/$1.wrk.txt"
    cat "$TMP/$1.wrk.txt" >&2
    grep '^SUMMARY' "$TMP/$1.wrk.txt"
}

field() { # LINE KEY
    sed -n "s/.*\\b$2=\\([^ ]*\\).*/\\1/p" <<<"$1"
}

sql() { # DB SQL
    sqlite3 -cmd '.timeout 30000' "$1" "$2"
}

# Mail files the file transport wrote into DIR (each mail one `<uuid v7>.eml`).
mail_files() { # DIR
    find "$1" -maxdepth 1 -name '*.eml' -printf . | wc -c
}

# Every server phase's peak RSS, for the summary's highest one.
: >"$TMP/rss.txt"
note_rss() { # LABEL MIB
    echo "$2 $1" >>"$TMP/rss.txt"
}

# The intake worker applies `intake` on a jittered tick (~250 ms), so this polls (every 50 ms).
wait_intake() { # DB
    local i
    for i in $(seq 1 6000); do
        [[ $(sql "$1" 'SELECT count(*) FROM intake') == 0 ]] && return 0
        sleep 0.05
    done
    echo "bench: intake did not drain" >&2
    return 1
}

# CPU use of the whole machine over 2 s, in % of all CPUs (our servers are idle between phases).
cpu_busy() {
    python3 - <<'EOF'
import time
def sample():
    with open("/proc/stat") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    return sum(values), values[3] + values[4]
t0, i0 = sample()
time.sleep(2)
t1, i1 = sample()
print(f"{100 * (1 - (i1 - i0) / max(1, t1 - t0)):.0f}")
EOF
}

: >"$TMP/quiet.txt"
wait_quiet() { # PHASE
    local start=$SECONDS busy
    while :; do
        busy=$(cpu_busy)
        if ((busy <= QUIET_MAX)); then
            echo "$1: machine ${busy}% busy before the phase" >>"$TMP/quiet.txt"
            return 0
        fi
        if ((SECONDS - start >= QUIET_WAIT)); then
            echo "$1: NOT QUIET, machine ${busy}% busy before the phase (waited ${QUIET_WAIT}s)" >>"$TMP/quiet.txt"
            log "machine still ${busy}% busy; measuring $1 anyway"
            return 0
        fi
        log "machine ${busy}% busy (other processes); waiting before $1"
        sleep 15
    done
}

# CPU used by processes other than this script's children (servers, wrk, load generator,
# sqlite3, ...) during a phase, in % of all CPUs: busy time from /proc/stat minus the CPU time of
# our reaped children (bash `times`). Reported next to every figure; > QUIET_MAX means another
# workload shared the machine and the figure is suspect.
CLK_TCK=$(getconf CLK_TCK)
NCPU=$(nproc)
busy_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }
children_cpu() { # our reaped children's user + system seconds (must run in the main shell)
    times >"$TMP/times"
    awk 'NR == 2 { split($1, u, "m"); split($2, s, "m"); printf "%.3f", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$TMP/times"
}
phase_begin() {
    PH_BUSY0=$(busy_ticks)
    children_cpu >"$TMP/cpu0"
    PH_T0=$(date +%s.%N)
}
phase_end() { # sets PH_FOREIGN: foreign CPU in % of all CPUs over the phase (call in this shell)
    local busy1 t1
    busy1=$(busy_ticks)
    children_cpu >"$TMP/cpu1"
    t1=$(date +%s.%N)
    PH_FOREIGN=$(awk -v b0="$PH_BUSY0" -v b1="$busy1" -v hz="$CLK_TCK" -v c0="$(cat "$TMP/cpu0")" -v c1="$(cat "$TMP/cpu1")" \
        -v t0="$PH_T0" -v t1="$t1" -v n="$NCPU" 'BEGIN {
        f = (b1 - b0) / hz - (c1 - c0); if (f < 0) f = 0
        printf "%.0f", 100 * f / ((t1 - t0) * n) }')
}

# --- machine ------------------------------------------------------------------------------------
log "machine"
{
    echo "cpus:   $(nproc) ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'))"
    echo "memory: $(free -h | awk '/^Mem:/ {print $2}')"
    echo "kernel: $(uname -sr)"
    disk=$(df --output=source "$TMP" | tail -1)
    echo "disk:   $TMP on $disk, $(lsblk -dno ROTA,SIZE "$disk" 2>/dev/null | awk '{print ($1 ? "rotational (as reported)" : "non-rotational"), $2}')"
    echo "fsync:  $(python3 - "$TMP" <<'EOF'
import os, statistics, sys, time
path = os.path.join(sys.argv[1], "fsync-probe")
fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
xs = []
for i in range(200):
    os.pwrite(fd, os.urandom(4096), (i % 16) * 4096)
    t = time.perf_counter()
    os.fsync(fd)
    xs.append((time.perf_counter() - t) * 1e6)
os.close(fd)
os.unlink(path)
xs.sort()
print(f"4 KiB write+fsync: median {statistics.median(xs):.0f} us, p99 {xs[int(0.99 * len(xs))]:.0f} us")
EOF
)"
    echo "tools:  $(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2), $(python3 --version), $(rustc --version | cut -d' ' -f1-2)"
} | tee "$TMP/machine.txt" >&2

# --- 1. ceiling -----------------------------------------------------------------------------------
median_run() { # FILE-WITH-SUMMARY-LINES -> the line with the median rps
    sed 's/.* rps=\([^ ]*\).*/\1 &/' "$1" | sort -g | awk '{ line[NR] = $0 } END { print line[int((NR + 1) / 2)] }' | cut -d' ' -f2-
}

: >"$TMP/ceiling.runs"
for run in $(has ceiling && seq 1 "$REPEAT"); do
    wait_quiet "ceiling run $run"
    log "1. ceiling run $run/$REPEAT: bench_ceiling, ${WRK_CMD[*]}"
    phase_begin
    start_ceiling
    CEILING_PID=$START_PID
    run_wrk "ceiling-$run" "http://127.0.0.1:$CEILING_PORT/api/signup" >"$TMP/line"
    rss=$(peak_rss_mib "$CEILING_PID")
    stop "$CEILING_PID"
    phase_end
    echo "$(cat "$TMP/line") foreign_cpu=$PH_FOREIGN rss_mib=$rss" >>"$TMP/ceiling.runs"
done

# --- 2. signupd, maximum rate ----------------------------------------------------------------------
# After each run: signupd's peak RSS, how far the intake worker is behind (intake rows left when
# wrk stops), how long it then needs to catch up, the end-to-end rate (rows applied to
# `subscribers` from the start of the measured run until intake is empty, over that time), and
# the mail files written from the start of the measured run until 1 s after it (mails_1s; in the
# directory then, with the warm-up's: mails_total). MAX_MAILS_PER_HOUR: [mail] max_mails_per_hour
# (default: signupd's 1,000).
signupd_max_run() { # NAME RUST_LOG [MAX_MAILS_PER_HOUR] -> SUMMARY line + backlog fields
    local name=$1 dir=$TMP/$1 db before t0 t1 t2 backlog after foreign rss mails0 mails_job
    phase_begin
    start_signupd "$name" "$SIGNUPD_PORT" "$2" "${3:-}"
    local pid=$START_PID
    db=$dir/data/signupd.sqlite3
    check_answer "http://127.0.0.1:$SIGNUPD_PORT/api/signup"
    wrk -t"$THREADS" -c"$CONNS" -d"$WARMUP" -s bench/signup.lua "http://127.0.0.1:$SIGNUPD_PORT/api/signup" >"$TMP/$name.warmup.txt"
    before=$(($(sql "$db" 'SELECT count(*) FROM subscribers') + $(sql "$db" 'SELECT count(*) FROM intake')))
    mails0=$(mail_files "$dir/data/mail")
    t0=$(date +%s.%N)
    "${WRK_CMD[@]}" "http://127.0.0.1:$SIGNUPD_PORT/api/signup" >"$TMP/$name.wrk.txt"
    t1=$(date +%s.%N)
    (sleep 1; mail_files "$dir/data/mail") >"$TMP/$name.mails" &
    mails_job=$!
    rss=$(peak_rss_mib "$pid")
    cat "$TMP/$name.wrk.txt" >&2
    backlog=$(sql "$db" 'SELECT count(*) FROM intake')
    wait_intake "$db"
    t2=$(date +%s.%N)
    after=$(sql "$db" 'SELECT count(*) FROM subscribers')
    wait "$mails_job"
    stop "$pid"
    phase_end
    foreign=$PH_FOREIGN
    local summary sent locked
    summary=$(grep '^SUMMARY' "$TMP/$name.wrk.txt")
    sent=$(($(field "$(grep '^SUMMARY' "$TMP/$name.warmup.txt")" requests) + $(field "$summary" requests) + 1))
    locked=$(grep -c 'database is locked' "$dir/stderr.log" || true)
    # applied_ratio: rows applied per second (from the start of the measured run until intake is
    # empty) over answers per second (wrk's count over its duration).
    awk -v s="$summary" -v b="$backlog" -v t0="$t0" -v t1="$t1" -v t2="$t2" -v before="$before" -v after="$after" \
        -v rows="$after" -v sent="$sent" -v locked="$locked" -v foreign="$foreign" -v rps="$(field "$summary" rps)" \
        -v rss="$rss" -v mails0="$mails0" -v mails="$(cat "$TMP/$name.mails")" 'BEGIN {
        e2e = (after - before) / (t2 - t0)
        printf "%s backlog=%d drain_s=%.2f e2e_rps=%.0f applied_ratio=%.3f rows=%d answered=%d locked_errors=%d foreign_cpu=%s mails_1s=%d mails_total=%d rss_mib=%s\n",
            s, b, t2 - t1, e2e, e2e / rps, rows, sent, locked, foreign, mails - mails0, mails, rss }'
    note_rss "$name" "$rss"
}

: >"$TMP/signupd.runs"
for run in $(has max && seq 1 "$REPEAT"); do
    wait_quiet "signupd run $run"
    log "2. signupd run $run/$REPEAT (RUST_LOG=warn), ${WRK_CMD[*]}"
    # Redirected, not piped, so the function runs in this shell (cleanup trap, CPU accounting).
    signupd_max_run "max-$run" warn >"$TMP/line"
    tee -a "$TMP/signupd.runs" <"$TMP/line" >&2
done
CEIL=$(median_run "$TMP/ceiling.runs")
MAX=$(median_run "$TMP/signupd.runs")

INFO=
if [[ $LOG_COMPARE == 1 ]] && has max; then
    wait_quiet "signupd info run"
    log "2b. signupd with the default log filter (info: one access-log line per request)"
    signupd_max_run info info >"$TMP/line"
    INFO=$(cat "$TMP/line")
    echo "$INFO" >&2
fi

# --- 2c. the maximum rate with the mail budget out of the way --------------------------------------
: >"$TMP/mail.runs"
for run in $(has mail && seq 1 "$REPEAT"); do
    wait_quiet "signupd mail run $run"
    log "2c. signupd mail run $run/$REPEAT with max_mails_per_hour = $MAIL_PER_HOUR (mail written during the load), ${WRK_CMD[*]}"
    signupd_max_run "mail-$run" warn "$MAIL_PER_HOUR" >"$TMP/line"
    tee -a "$TMP/mail.runs" <"$TMP/line" >&2
done
MAIL=$(median_run "$TMP/mail.runs")

# --- 3. half the maximum rate, paced -------------------------------------------------------------
HALF=${PACED_RATE:-$(awk -v r="$(field "$MAX" rps)" 'BEGIN { printf "%d", r / 2 }')}
PACED=
PACED_CEIL=
if has paced; then
wait_quiet "paced signupd"
log "3. signupd paced at $HALF req/s (half of the median maximum), $PACED_CONNS connections, ${PACED_SECS}s + ${PACED_WARMUP}s warm-up"
phase_begin
start_signupd paced "$SIGNUPD_PORT" warn
SIGNUPD_PID=$START_PID
check_answer "http://127.0.0.1:$SIGNUPD_PORT/api/signup"
PACED=$("$LOADGEN" "127.0.0.1:$SIGNUPD_PORT" /api/signup "$HALF" "$PACED_SECS" "$PACED_CONNS" "$PACED_WARMUP")
PACED_RSS=$(peak_rss_mib "$SIGNUPD_PID")
note_rss paced "$PACED_RSS"
PACED_BACKLOG=$(sql "$TMP/paced/data/signupd.sqlite3" 'SELECT count(*) FROM intake')
wait_intake "$TMP/paced/data/signupd.sqlite3"
PACED_LOCKED=$(grep -c 'database is locked' "$TMP/paced/stderr.log" || true)
stop "$SIGNUPD_PID"
phase_end
PACED="$PACED backlog=$PACED_BACKLOG locked_errors=$PACED_LOCKED foreign_cpu=$PH_FOREIGN rss_mib=$PACED_RSS"
echo "$PACED" >&2

wait_quiet "paced ceiling"
log "3b. ceiling paced at the same $HALF req/s"
phase_begin
start_ceiling
CEILING_PID=$START_PID
PACED_CEIL=$("$LOADGEN" "127.0.0.1:$CEILING_PORT" /api/signup "$HALF" "$PACED_SECS" "$PACED_CONNS" "$PACED_WARMUP")
PACED_CEIL_RSS=$(peak_rss_mib "$CEILING_PID")
stop "$CEILING_PID"
phase_end
PACED_CEIL="$PACED_CEIL foreign_cpu=$PH_FOREIGN rss_mib=$PACED_CEIL_RSS"
echo "$PACED_CEIL" >&2

fi

# --- 3c. paced sweep -----------------------------------------------------------------------------
if [[ -z $SWEEP_RATES ]]; then
    SWEEP_RATES=$(for f in $SWEEP_FRACTIONS; do awk -v r="$((2 * HALF))" -v f="$f" 'BEGIN { printf "%d ", r * f }'; done)
fi
: >"$TMP/sweep.runs"
for rate in $(has sweep && echo "$SWEEP_RATES"); do
    wait_quiet "sweep $rate req/s"
    log "3c. signupd paced at $rate req/s, ${SWEEP_SECS}s + 3s warm-up"
    phase_begin
    start_signupd "sweep-$rate" "$SIGNUPD_PORT" warn
    SIGNUPD_PID=$START_PID
    line=$("$LOADGEN" "127.0.0.1:$SIGNUPD_PORT" /api/signup "$rate" "$SWEEP_SECS" "$PACED_CONNS" 3)
    rss=$(peak_rss_mib "$SIGNUPD_PID")
    note_rss "sweep $rate/s" "$rss"
    backlog=$(sql "$TMP/sweep-$rate/data/signupd.sqlite3" 'SELECT count(*) FROM intake')
    wait_intake "$TMP/sweep-$rate/data/signupd.sqlite3"
    stop "$SIGNUPD_PID"
    phase_end
    echo "$line backlog=$backlog foreign_cpu=$PH_FOREIGN rss_mib=$rss" | tee -a "$TMP/sweep.runs" >&2
done

# --- 4. four address states ----------------------------------------------------------------------
: >"$TMP/states.out"
for gap in $(has states && echo "$STATES_GAPS"); do
    wait_quiet "states, gap $gap ms"
    log "4. answer timing by address state ($STATES_N samples per state, one keep-alive connection, ${gap} ms between requests)"
    phase_begin
    start_signupd "states-$gap" "$STATES_PORT" warn
    SIGNUPD_PID=$START_PID
    python3 bench/states.py --port "$STATES_PORT" --db "$TMP/states-$gap/data/signupd.sqlite3" \
        --n "$STATES_N" --gap-ms "$gap" --json "$TMP/states-$gap.json" >"$TMP/states-$gap.txt" || true
    rss=$(peak_rss_mib "$SIGNUPD_PID")
    note_rss "states, gap $gap ms" "$rss"
    locked=$(grep -c 'database is locked' "$TMP/states-$gap/stderr.log" || true)
    stop "$SIGNUPD_PID"
    phase_end
    {
        echo "requests ${gap} ms apart:"
        sed 's/^/  /' "$TMP/states-$gap.txt"
        echo "  \"database is locked\" errors: $locked; other CPU $PH_FOREIGN %; signupd peak RSS $rss MiB"
    } >>"$TMP/states.out"
    cat "$TMP/states-$gap.txt" >&2
done

# --- summary -------------------------------------------------------------------------------------
ms() { awk -v us="$1" 'BEGIN { printf "%7.2f ms", us / 1000 }'; }
verdict() { if [[ $1 == 1 ]]; then echo "MET"; elif [[ $1 == n/a ]]; then echo "(not run)"; else echo "MISSED"; fi; }
wrk_line() { # LABEL SUMMARY
    printf '  %-24s %8.0f req/s  p50 %s  p90 %s  p99 %s  max %s  errors %s/%s  other CPU %s %%  peak RSS %s MiB' "$1" "$(field "$2" rps)" \
        "$(ms "$(field "$2" p50_us)")" "$(ms "$(field "$2" p90_us)")" "$(ms "$(field "$2" p99_us)")" \
        "$(ms "$(field "$2" max_us)")" "$(field "$2" socket_errors)" "$(field "$2" status_errors)" "$(field "$2" foreign_cpu)" \
        "$(field "$2" rss_mib)"
    if [[ $2 == *backlog=* ]]; then
        local stored=ok
        (($(field "$2" rows) >= $(field "$2" answered))) || stored="MISMATCH: fewer rows than 303 answers"
        printf '\n  %-24s backlog %s, drained in %s s, end-to-end %s rows/s = %s of the answered rate, rows %s, answered %s (%s), "database is locked" %s' \
            "" "$(field "$2" backlog)" "$(field "$2" drain_s)" "$(field "$2" e2e_rps)" "$(field "$2" applied_ratio)" "$(field "$2" rows)" \
            "$(field "$2" answered)" "$stored" "$(field "$2" locked_errors)"
        printf '\n  %-24s mail files by 1 s after the load: %s written since the measured run began (%s per answered request of it), %s in all' \
            "" "$(field "$2" mails_1s)" "$(awk -v m="$(field "$2" mails_1s)" -v r="$(field "$2" requests)" 'BEGIN { if (r > 0) printf "%.3f", m / r; else print "n/a" }')" \
            "$(field "$2" mails_total)"
    fi
    echo
}
paced_line() { # LABEL LINE
    printf '  %-8s %7.0f req/s  p50 %s  p90 %s  p99 %s  p99.9 %s  max %s  (service time p50 %s p99 %s)  statuses %s  other CPU %s %%  peak RSS %s MiB\n' "$1" \
        "$(field "$2" achieved_rps)" "$(ms "$(field "$2" p50_us)")" "$(ms "$(field "$2" p90_us)")" \
        "$(ms "$(field "$2" p99_us)")" "$(ms "$(field "$2" p999_us)")" "$(ms "$(field "$2" max_us)")" \
        "$(ms "$(field "$2" svc_p50_us)")" "$(ms "$(field "$2" svc_p99_us)")" "$(field "$2" statuses)" "$(field "$2" foreign_cpu)" \
        "$(field "$2" rss_mib)"
}

C_RPS=$(field "$CEIL" rps)
S_RPS=$(field "$MAX" rps)
RATIO=$(awk -v s="$S_RPS" -v c="$C_RPS" 'BEGIN { if (s > 0 && c > 0) printf "%.3f", s / c; else print "n/a" }')
RATIO_OK=$(awk -v r="$RATIO" 'BEGIN { print (r == "n/a") ? "n/a" : (r >= 1/3) ? 1 : 0 }')
E2E_RATIO=$(awk -v s="$(field "$MAX" e2e_rps)" -v c="$C_RPS" 'BEGIN { if (s > 0 && c > 0) printf "%.3f", s / c; else print "n/a" }')
APPLIED=$(field "$MAX" applied_ratio)
APPLIED_OK=$(awk -v r="$APPLIED" -v d="$(field "$MAX" drain_s)" 'BEGIN { print (r == "") ? "n/a" : (r >= 0.95 && d < 1) ? 1 : 0 }')
P99=$(field "$PACED" p99_us)
P99_OK=$(awk -v p="$P99" 'BEGIN { print (p == "") ? "n/a" : (p <= 10000) ? 1 : 0 }')
# The highest signupd peak RSS over the phases ("n/a" values left out), and its phase.
RSS_TOP=$(awk '$1 != "n/a"' "$TMP/rss.txt" | sort -g | tail -1 | awk '{ mib = $1; $1 = ""; printf "%s MiB (%s)", mib, substr($0, 2) }')
RSS_OK=$(awk '$1 != "n/a"' "$TMP/rss.txt" | sort -g | tail -1 | awk '{ v = $1 } END { print (NR == 0) ? "n/a" : (v <= 64) ? 1 : 0 }')
[[ -n $RSS_TOP ]] || RSS_TOP="not read"
states_verdicts() {
    local gap line
    for gap in $(has states && echo "$STATES_GAPS"); do
        line=$(grep '^STATES_RESULT' "$TMP/states-$gap.txt" || echo 'STATES_RESULT target_met=no (states.py failed)')
        printf '    %5s ms apart: the answer: median spread %s %% (random-relabelling p %s), min KS p vs unknown %s  %s\n' "$gap" \
            "$(field "$line" median_spread_pct)" "$(field "$line" median_spread_perm_p)" \
            "$(field "$line" min_ks_p_vs_unknown)" "$([[ $(field "$line" answer_met) == yes ]] && echo MET || echo MISSED)"
        printf '    %5s           the next answer: median spread %s %% (random-relabelling p %s), min KS p vs after-unknown %s  %s; state table actions as expected: %s\n' "" \
            "$(field "$line" lag1_median_spread_pct)" "$(field "$line" lag1_spread_perm_p)" "$(field "$line" min_ks_p_lag1)" \
            "$([[ $(field "$line" lag1_met) == yes ]] && echo MET || echo MISSED)" "$(field "$line" paths_ok)"
    done
}

{
    echo
    echo "=================================== signupd signup benchmark ==================================="
    cat "$TMP/machine.txt"
    echo "signupd:      $REVISION, built $BUILT_AT"
    echo "wrk command:  ${WRK_CMD[*]} URL   (each run on a fresh server and database, after a ${WARMUP} warm-up)"
    echo "quiet check:  $(grep -c 'NOT QUIET' "$TMP/quiet.txt") of $(grep -c . "$TMP/quiet.txt") phases started on a busy machine (other processes > ${QUIET_MAX}% CPU)"
    grep 'NOT QUIET' "$TMP/quiet.txt" | sed 's/^/              /' || true
    echo
    echo "maximum rate, $REPEAT runs each (the median run is used below):"
    i=0; while read -r line; do i=$((i + 1)); wrk_line "ceiling #$i" "$line"; done <"$TMP/ceiling.runs"
    i=0; while read -r line; do i=$((i + 1)); wrk_line "signupd warn #$i" "$line"; done <"$TMP/signupd.runs"
    [[ -n $INFO ]] && wrk_line "signupd info (access log)" "$INFO"
    echo
    if has mail; then
        echo "maximum rate with max_mails_per_hour = $MAIL_PER_HOUR (mail written during the load), $REPEAT runs:"
        i=0; while read -r line; do i=$((i + 1)); wrk_line "signupd mail #$i" "$line"; done <"$TMP/mail.runs"
        echo "  median run: $(field "$MAIL" rps) req/s answered, p99 $(ms "$(field "$MAIL" p99_us)"), applied/answered $(field "$MAIL" applied_ratio), $(field "$MAIL" mails_1s) mail files by 1 s after the load, peak RSS $(field "$MAIL" rss_mib) MiB"
        echo
    fi
    if has paced; then
        echo "paced at $HALF req/s (bench/loadgen, open loop, $PACED_CONNS connections, latency from the scheduled send time):"
        paced_line signupd "$PACED"
        echo "           intake backlog when the load stopped: $(field "$PACED" backlog); \"database is locked\" errors: $(field "$PACED" locked_errors)"
        paced_line ceiling "$PACED_CEIL"
        echo
    fi
    echo "paced sweep (same load generator and connections, fresh server each):"
    while read -r line; do
        paced_line "$(field "$line" target_rps)/s" "$line"
        echo "           intake backlog when the load stopped: $(field "$line" backlog)"
    done <"$TMP/sweep.runs"
    echo
    echo "answer timing by address state:"
    sed 's/^/  /' "$TMP/states.out"
    echo
    echo "targets:"
    echo "  throughput >= 1/3 of the ceiling:  median signupd / median ceiling = $RATIO  $(verdict "$RATIO_OK")  (end-to-end rows/s / ceiling = $E2E_RATIO)"
    echo "  applied rows/s / answered req/s >= 0.95, backlog drained in < 1 s:  $APPLIED, drained in $(field "$MAX" drain_s) s  $(verdict "$APPLIED_OK")"
    echo "  p99 <= 10 ms at half the maximum rate:  p99 $(ms "$P99")  $(verdict "$P99_OK")"
    echo "  states: medians within 5 %, KS p >= 0.01 vs unknown (the answer, and the answer after it):"
    states_verdicts
    echo "  signupd peak RSS (VmHWM) <= 64 MiB in every phase:  $RSS_TOP  $(verdict "$RSS_OK")"
    echo "================================================================================================="
} | tee "$TMP/summary.txt"
if [[ -n ${SUMMARY_OUT:-} ]]; then
    cp "$TMP/summary.txt" "$SUMMARY_OUT"
    for gap in $STATES_GAPS; do cp "$TMP/states-$gap.json" "${SUMMARY_OUT%.*}.states-$gap.json" 2>/dev/null || true; done
fi
