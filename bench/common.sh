# shellcheck shell=bash disable=SC2034 # the variables set here are read by the scripts that source this file
# What every bench/*.sh shares, once. Each script starts with
#   source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# and keeps only what it measures. Sourcing sets `-euo pipefail`, REPO (this tree, which becomes
# the working directory) and checks CACHE_MIB.
#
# Knobs read here (environment):
#   BUILD=1: build the release binaries first (0: use them as they are; built only when missing)
#   BENCH_SIGNUPD, BENCH_CEILING, BENCH_RECEIVER=path: other binaries than target/release/signupd
#     and target/release/examples/bench_{ceiling,receiver}
#   BENCH_REVISION=name: what BENCH_SIGNUPD was built from (default: this tree's HEAD)
#   KEEP_TMP=0 (1: keep the temporary directory)
#   CACHE_MIB=N (unset): `[storage] cache_mib = N` in every configuration `config` writes (the
#     writer connection's SQLite page cache, MiB); unset, the key is left out (signupd's default,
#     and a binary older than the key accepts the configuration)
#   QUIET_MAX, QUIET_WAIT (defaults are the script's): see wait_quiet
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"

if [[ -n ${CACHE_MIB:-} && ! $CACHE_MIB =~ ^[0-9]+$ ]]; then
    echo "bench: CACHE_MIB must be a whole number of MiB, not '$CACHE_MIB'" >&2
    exit 2
fi

log() { echo "== $*" >&2; }

# Installs with apt-get whatever is missing, then fails if something still is. An item is a
# command, or PACKAGE:PATH for a file a package provides (postfix:/usr/sbin/smtp-sink).
require_tools() { # ITEM...
    local item missing=()
    for item; do has_tool "$item" || missing+=("${item%%:*}"); done
    if ((${#missing[@]} > 0)); then
        log "installing ${missing[*]} (apt-get)"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
    for item; do has_tool "$item" || { echo "bench: ${item#*:} is required (apt-get install ${item%%:*})" >&2; exit 1; }; done
}
has_tool() { if [[ $1 == *:* ]]; then [[ -e ${1#*:} ]]; else command -v "$1" >/dev/null; fi; } # ITEM

# --- temporary directory, processes, binaries ---------------------------------------------------
PIDS=() # started in the background and not stopped yet: stopped on exit
PID=    # the signupd serve_start started last
SHM=

# TMP, a fresh directory in $TMPDIR (default /tmp), removed on exit with SHM (shm_tmp), after
# every process in PIDS has been stopped.
bench_tmp() { # NAME
    TMP=$(mktemp -d "${TMPDIR:-/tmp}/signupd-$1.XXXXXX")
    : >"$TMP/quiet.txt"
    trap bench_cleanup EXIT
    trap 'exit 130' INT TERM
}
shm_tmp() { SHM=$(mktemp -d "/dev/shm/signupd-$1.XXXXXX"); } # NAME: on tmpfs, where fsync costs nothing

bench_cleanup() {
    local pid
    for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
    if [[ -n $SHM ]]; then rm -rf "$SHM"; fi
    if [[ ${KEEP_TMP:-0} == 1 ]]; then echo "bench: kept $TMP" >&2; else rm -rf "$TMP"; fi
}

# Signals PID (SIGTERM unless told; 0 only waits), waits for it and drops it from PIDS; STOPPED is
# its exit status. Runs in this shell, the process's parent.
stop() { # PID [SIGNAL]
    local pid pids=()
    kill -"${2:-TERM}" "$1" 2>/dev/null || true
    STOPPED=0
    wait "$1" 2>/dev/null || STOPPED=$?
    for pid in "${PIDS[@]}"; do [[ $pid == "$1" ]] || pids+=("$pid"); done
    PIDS=("${pids[@]}")
}

# signupd and the named examples of this tree, built with one cargo call when BUILD=1 or one of
# them is missing, then copied into $TMP/bin (SIGNUPD, $TMP/bin/EXAMPLE) so that a rebuild in the
# work tree during a run cannot swap a binary underneath. Sets REVISION and BUILT_AT (signupd's).
# shellcheck disable=SC2120 # examples are optional
release_binaries() { # [EXAMPLE...]
    local names=(signupd "$@") built=("${BENCH_SIGNUPD:-target/release/signupd}") args=(--bin signupd) build=${BUILD:-1} name var i
    for name; do
        var=BENCH_${name#bench_}
        var=${var^^}
        built+=("${!var:-target/release/examples/$name}")
        args+=(--example "$name")
    done
    for i in "${!built[@]}"; do [[ -x ${built[i]} ]] || build=1; done
    if [[ $build == 1 ]]; then
        log "building: cargo build --release --locked ${args[*]}"
        cargo build --release --locked "${args[@]}"
    fi
    mkdir -p "$TMP/bin"
    for i in "${!built[@]}"; do cp "${built[i]}" "$TMP/bin/${names[i]}"; done
    SIGNUPD=$TMP/bin/signupd
    REVISION=${BENCH_REVISION:-"$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- src Cargo.toml Cargo.lock 2>/dev/null || echo '+uncommitted')"}
    BUILT_AT=$(date -r "${built[0]}" -u +%FT%TZ)
}

# --- the machine ----------------------------------------------------------------------------------
cpu_model() { grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs; }
machine() { echo "$(nproc) CPUs, $(cpu_model), $(uname -r)"; }

# The machine's CPU use over 2 s in % of all CPUs (/proc/stat: all but idle and iowait).
cpu_busy() {
    local a b
    a=$(head -1 /proc/stat)
    sleep 2
    b=$(head -1 /proc/stat)
    awk -v a="$a" -v b="$b" 'BEGIN { n = split(a, x); split(b, y)
        for (i = 2; i <= n; i++) all += y[i] - x[i]
        printf "%.0f\n", 100 * (1 - (y[5] + y[6] - x[5] - x[6]) / (all > 0 ? all : 1)) }'
}

# Before a phase: waits up to QUIET_WAIT s until the machine is at most QUIET_MAX % busy. Notes how
# busy it was in QUIET_NOTE and as a line of $TMP/quiet.txt; one that never got that quiet says
# NOT QUIET (busy_phases).
wait_quiet() { # PHASE
    local start=$SECONDS busy
    while :; do
        busy=$(cpu_busy)
        if ((busy <= QUIET_MAX)); then
            QUIET_NOTE="machine ${busy}% busy before, load $(cut -d' ' -f1-3 /proc/loadavg)"
            break
        elif ((SECONDS - start >= QUIET_WAIT)); then
            QUIET_NOTE="NOT QUIET: machine ${busy}% busy before (waited $((SECONDS - start))s), load $(cut -d' ' -f1-3 /proc/loadavg)"
            log "$1: machine still ${busy}% busy; measuring anyway"
            break
        fi
        log "$1: machine ${busy}% busy (other processes); waiting"
        sleep 8
    done
    echo "$1: $QUIET_NOTE" >>"$TMP/quiet.txt"
}

# HEADING and the phases that started on a busy machine; nothing when there were none.
busy_phases() { # HEADING
    if grep -q 'NOT QUIET' "$TMP/quiet.txt"; then echo "$1"; grep 'NOT QUIET' "$TMP/quiet.txt" | sed 's/^/  /'; fi
}

# --- signupd --------------------------------------------------------------------------------------
# The configuration for DATA_DIR, written to DATA_DIR.toml (prints its path): listening on $PORT,
# rate limits raised, the file transport into DATA_DIR/mail, one list `news`, CACHE_MIB;
# CONFIG_MAIL adds [mail] keys, CONFIG_MORE tables at the end.
config() { # DATA_DIR
    mkdir -p "$1/mail"
    cat >"$1.toml" <<TOML
[server]
listen = "127.0.0.1:$PORT"
[storage]
data_dir = "$1"
$(cache_mib_toml)
[mail]
file_dir = "$1/mail"
${CONFIG_MAIL:-}
[signup]
rate_limits = [ { window = "1m", max = 100000000 } ]
network_rate_limits = [ { window = "1m", max = 100000000 } ]
resend_cooldown = "10m"
# Throughput runs sign up thousands at once: surge mode would hold their mail for a press.
surge_alert = { window = "10m", max = 0 }
[[lists]]
id = "news"
${CONFIG_MORE:-}
TOML
    echo "$1.toml"
}

# The `[storage]` line for CACHE_MIB, or nothing when it is unset.
cache_mib_toml() { if [[ -n ${CACHE_MIB:-} ]]; then echo "cache_mib = $CACHE_MIB"; fi; }

# Until CMD succeeds (every 20 ms, for up to 30 s); fails if PID exits first.
wait_for() { # PID CMD...
    local pid=$1 _
    shift
    for _ in $(seq 1500); do
        "$@" && return 0
        kill -0 "$pid" 2>/dev/null || { echo "bench: process $pid exited; $* never succeeded" >&2; return 1; }
        sleep 0.02
    done
    echo "bench: $* did not succeed within 30 s" >&2
    return 1
}
answers() { curl -s -o /dev/null "$1"; }          # URL: any HTTP answer
listens() { ss -ltn | grep -q "127.0.0.1:$1\b"; } # PORT

ports_free() { # PORT...
    local p
    for p; do if listens "$p"; then echo "bench: port $p is already in use" >&2; exit 1; fi; done
}

# signupd (RUST_LOG=warn unless given) serving DATA_DIR with config DATA_DIR.toml, its log
# appended to DATA_DIR.log, as $PID once /healthz answers. serve_stop fails unless it exits with 0.
serve_start() { # DATA_DIR [RUST_LOG]
    RUST_LOG=${2:-warn} "$SIGNUPD" serve --config "$(config "$1")" 2>>"$1.log" &
    PID=$!
    PIDS+=("$PID")
    wait_for "$PID" answers "http://127.0.0.1:$PORT/healthz" || { echo "bench: see $1.log" >&2; exit 1; }
}

serve_stop() {
    stop "$PID"
    PID=
    ((STOPPED == 0)) || { echo "bench: signupd exited with status $STOPPED after SIGTERM" >&2; exit 1; }
}

# A data directory as the first start of signupd leaves it: the database, the secrets, the lists'
# consent texts.
init_data() { # DATA_DIR
    serve_start "$1"
    serve_stop
}

sql() { sqlite3 -cmd '.timeout 30000' "$1" "$2"; }           # DB SQL
field() { sed -n "s/.*\\b$2=\\([^ ]*\\).*/\\1/p" <<<"$1"; } # LINE KEY: the value of KEY=value

# A process's peak resident set so far (VmHWM in /proc/PID/status) in MiB with one decimal; "n/a"
# when the process is gone. Read it right after the measured load, before stopping the process.
peak_rss_mib() { # PID
    local kb
    kb=$(awk '/^VmHWM:/ { print $2 }' "/proc/$1/status" 2>/dev/null) || true
    if [[ -n $kb ]]; then awk -v kb="$kb" 'BEGIN { printf "%.1f\n", kb / 1024 }'; else echo n/a; fi
}

# Mail files the file transport wrote into DIR (each mail one `<uuid v7>.eml`).
mail_files() { find "$1" -maxdepth 1 -name '*.eml' -printf . | wc -c; } # DIR

# The intake worker applies `intake` on a jittered tick (~250 ms), so this polls (every 50 ms).
wait_intake() { # DB
    local _
    for _ in $(seq 6000); do
        [[ $(sql "$1" 'SELECT count(*) FROM intake') == 0 ]] && return 0
        sleep 0.05
    done
    echo "bench: intake did not drain within 300 s" >&2
    return 1
}

# --- bench/signup.sh's maximum-rate run (signup.sh, growth.sh, cache.sh, contention.sh) ---------------
# wrk with a unique address per request (bench/signup.lua), THREADS threads, CONNS connections;
# the warm-up for WARMUP, the measured run for DURATION (--timeout 30s: wrk's default of 2 s drops
# slower answers from the latency figures). wrk_cmd names it for the logs.
wrk_cmd() { echo "wrk -t$THREADS -c$CONNS -d$DURATION --timeout 30s -s bench/signup.lua --latency"; }
wrk_measured() { local cmd; read -ra cmd <<<"$(wrk_cmd)"; "${cmd[@]}" "$1"; }      # URL
wrk_warmup() { wrk -t"$THREADS" -c"$CONNS" -d"$WARMUP" -s bench/signup.lua "$1"; } # URL

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

# Against the signupd ($PID) serving DATA_DIR: the answer checked, the warm-up, the measured run
# (wrk's output in DATA_DIR.wrk.txt, its SUMMARY line in RUN_SUMMARY); right after it signupd's
# peak RSS (RUN_RSS) and the intake rows left (RUN_BACKLOG), then the seconds until the intake
# worker has applied them (RUN_DRAIN_S). RUN_ROWS: subscribers then; RUN_E2E_RPS: rows applied per
# second from the start of the measured run until intake was empty; RUN_APPLIED_RATIO: that over
# wrk's answered req/s; RUN_ANSWERED: every request sent; RUN_MAILS_1S: mail files written from
# the start of the measured run until 1 s after it, RUN_MAILS_TOTAL: in the directory then.
# Runs in this shell, not in $(...).
max_run() { # DATA_DIR
    local db=$1/signupd.sqlite3 url=http://127.0.0.1:$PORT/api/signup before mails0 mails_job t0 t1 t2
    check_answer "$url"
    wrk_warmup "$url" >"$1.warmup.txt"
    before=$(($(sql "$db" 'SELECT count(*) FROM subscribers') + $(sql "$db" 'SELECT count(*) FROM intake')))
    mails0=$(mail_files "$1/mail")
    t0=$(date +%s.%N)
    wrk_measured "$url" >"$1.wrk.txt"
    t1=$(date +%s.%N)
    (sleep 1; mail_files "$1/mail") >"$1.mails" &
    mails_job=$!
    RUN_RSS=$(peak_rss_mib "$PID")
    RUN_BACKLOG=$(sql "$db" 'SELECT count(*) FROM intake')
    wait_intake "$db"
    t2=$(date +%s.%N)
    RUN_ROWS=$(sql "$db" 'SELECT count(*) FROM subscribers')
    wait "$mails_job"
    RUN_SUMMARY=$(grep '^SUMMARY' "$1.wrk.txt")
    RUN_ANSWERED=$(($(field "$(grep '^SUMMARY' "$1.warmup.txt")" requests) + $(field "$RUN_SUMMARY" requests) + 1))
    RUN_MAILS_TOTAL=$(cat "$1.mails")
    RUN_MAILS_1S=$((RUN_MAILS_TOTAL - mails0))
    read -r RUN_DRAIN_S RUN_E2E_RPS RUN_APPLIED_RATIO < <(awk -v t0="$t0" -v t1="$t1" -v t2="$t2" -v rows="$((RUN_ROWS - before))" \
        -v rps="$(field "$RUN_SUMMARY" rps)" 'BEGIN { e2e = rows / (t2 - t0); printf "%.2f %.0f %.3f\n", t2 - t1, e2e, e2e / rps }')
}

# --- templates: data directories copied for each run (growth.sh, cache.sh) -------------------------
# A template is init_data's directory plus rows added by bench/seed_tool.py while signupd is stopped.
template_rows() { # DIR N: N more subscribers of list `news`, 80 % confirmed, 20 % pending
    python3 "$REPO/bench/seed_tool.py" subscribers --data-dir "$1" -n "$2" >&2
}

template_seal() { # NAME DIR: the WAL checkpointed into the file; prints what the template holds
    sql "$2/signupd.sqlite3" 'PRAGMA wal_checkpoint(TRUNCATE)' >/dev/null
    echo "$1: $(sql "$2/signupd.sqlite3" 'SELECT count(*) FROM subscribers') subscriber rows, $(du -h "$2/signupd.sqlite3" | cut -f1)"
}

fresh_copy() { # TEMPLATE_DIR -> a copy as $TMP/run, synced to disk (no write-back of it lands in the run)
    local dir=$TMP/run
    rm -rf "$dir" "$dir".*
    cp -a "$1" "$dir"
    sync
    echo "$dir"
}

# max_run on a fresh copy of TEMPLATE_DIR after wait_quiet; appends "signup LABEL SUMMARY ...
# rss_mib=M" to $TMP/runs. THREADS, CONNS, DURATION, WARMUP are the script's.
signup_run() { # TEMPLATE_DIR LABEL
    local dir
    dir=$(fresh_copy "$1")
    wait_quiet "signup $2"
    serve_start "$dir"
    max_run "$dir"
    serve_stop
    echo "signup $2 $RUN_SUMMARY backlog=$RUN_BACKLOG drain_s=$RUN_DRAIN_S e2e_rps=$RUN_E2E_RPS rows=$RUN_ROWS rss_mib=$RUN_RSS" | tee -a "$TMP/runs" >&2
}
