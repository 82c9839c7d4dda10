# shellcheck shell=bash
# Shared by bench/growth.sh, bench/shutdown.sh and bench/cache.sh (sourced): the release binary
# copied aside, so a rebuild during a run cannot replace it; a temporary directory removed on exit
# (KEEP_TMP=1 keeps it); the configuration every run uses (one list `news`, rate limits raised, the
# file mail transport); waiting for /healthz. Set PORT, then call `bench_setup NAME`.
# bench/signup.sh and bench/webhooks.sh keep their own set-up and configuration and take only
# peak_rss_mib and cache_mib_toml from here.
#
# CACHE_MIB=N (unset by default): `[storage] cache_mib = N` in every configuration written here
# (and by signup.sh, webhooks.sh), the writer connection's SQLite page cache in MiB; unset, the
# key is left out (signupd's own default; a binary older than the key rejects it).

# Builds the binary (unless BUILD=0 and it exists) and copies it; sets TMP, SIGNUPD, REVISION.
# `PID` is the running signupd, if any: stopped on exit.
bench_setup() { # NAME
    BENCH_SIGNUPD=${BENCH_SIGNUPD:-target/release/signupd}
    if [[ ${BUILD:-1} == 1 || ! -x $BENCH_SIGNUPD ]]; then
        cargo build --release --locked --bin signupd
    fi
    TMP=$(mktemp -d "${TMPDIR:-/tmp}/signupd-$1.XXXXXX")
    PID=
    trap bench_cleanup EXIT
    trap 'exit 130' INT TERM
    mkdir -p "$TMP/bin"
    cp "$BENCH_SIGNUPD" "$TMP/bin/signupd"
    # shellcheck disable=SC2034 # used by the scripts that source this file
    SIGNUPD=$TMP/bin/signupd
    # What the binary was built from; BENCH_REVISION names it when BENCH_SIGNUPD is not this tree's build.
    # shellcheck disable=SC2034
    REVISION=${BENCH_REVISION:-"$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src Cargo.toml Cargo.lock || echo '+uncommitted')"}
}

bench_cleanup() {
    if [[ -n ${PID:-} ]]; then kill -TERM "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; fi
    if [[ ${KEEP_TMP:-0} == 1 ]]; then echo "bench: kept $TMP" >&2; else rm -rf "$TMP"; fi
}

log() { echo "== $*" >&2; }

# Installs with apt-get whichever of the named commands is missing.
require_tools() { # TOOL...
    local tool missing=()
    for tool in "$@"; do command -v "$tool" >/dev/null || missing+=("$tool"); done
    if ((${#missing[@]} > 0)); then
        echo "== installing ${missing[*]} (apt-get)" >&2
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
}

# The `[storage]` line for CACHE_MIB, or nothing when it is unset.
cache_mib_toml() {
    if [[ -n ${CACHE_MIB:-} ]]; then echo "cache_mib = $CACHE_MIB"; fi
}
if [[ -n ${CACHE_MIB:-} && ! $CACHE_MIB =~ ^[0-9]+$ ]]; then
    echo "bench: CACHE_MIB must be a whole number of MiB, not '$CACHE_MIB'" >&2
    exit 2
fi

# A process's peak resident set so far (VmHWM in /proc/PID/status) in MiB with one decimal; "n/a"
# when the process is gone. Read it right after the measured load, before stopping the process.
peak_rss_mib() { # PID
    local kb
    kb=$(awk '/^VmHWM:/ { print $2 }' "/proc/$1/status" 2>/dev/null) || true
    if [[ -n $kb ]]; then awk -v kb="$kb" 'BEGIN { printf "%.1f\n", kb / 1024 }'; else echo n/a; fi
}

# A data directory's config, DATA_DIR.toml (every copy of a template gets its own: the data_dir
# differs); prints its path.
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
[signup]
rate_limits = [ { window = "1m", max = 100000000 } ]
network_rate_limits = [ { window = "1m", max = 100000000 } ]
resend_cooldown = "10m"
[[lists]]
id = "news"
TOML
    echo "$1.toml"
}

# Until /healthz answers; fails if signupd ($PID) exited first.
wait_up() { # LOGFILE
    local _
    for _ in $(seq 1 600); do
        curl -s -o /dev/null "http://127.0.0.1:$PORT/healthz" && return 0
        kill -0 "$PID" 2>/dev/null || { echo "bench: signupd exited during start-up; see $1" >&2; return 1; }
        sleep 0.05
    done
    echo "bench: signupd did not come up" >&2
    return 1
}

# --- runs on copies of template data directories (growth.sh, cache.sh) -------------------------

field() { sed -n "s/.*\\b$2=\\([^ ]*\\).*/\\1/p" <<<"$1"; } # LINE KEY
sql() { sqlite3 -cmd '.timeout 30000' "$1" "$2"; }           # DB SQL

# Before a phase, waits up to QUIET_WAIT s until the machine is at most QUIET_MAX % busy; a phase
# that never got that quiet is named in $TMP/notquiet.
wait_quiet() { # PHASE
    local start=$SECONDS busy
    while :; do
        busy=$(python3 -c '
import time
def s():
    v = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    return sum(v), v[3] + v[4]
a, b = s(); time.sleep(2); c, d = s()
print(round(100 * (1 - (d - b) / max(1, c - a))))')
        ((busy <= QUIET_MAX)) && return 0
        if ((SECONDS - start >= QUIET_WAIT)); then
            log "machine still ${busy}% busy; measuring $1 anyway"
            echo "$1: NOT QUIET (${busy}% busy)" >>"$TMP/notquiet"
            return 0
        fi
        log "machine ${busy}% busy; waiting before $1"
        sleep 10
    done
}

# signupd serving DATA_DIR (config DATA_DIR.toml, log DATA_DIR.log) as $PID; serve_stop fails
# unless it exits with status 0.
serve_start() { # DATA_DIR
    RUST_LOG=warn "$SIGNUPD" serve --config "$(config "$1")" 2>"$1.log" &
    PID=$!
    wait_up "$1.log" || exit 1
}

serve_stop() {
    local rc=0
    kill -TERM "$PID"
    wait "$PID" || rc=$?
    PID=
    ((rc == 0)) || { echo "bench: signupd exited with status $rc" >&2; exit 1; }
}

# Templates: the database and secrets created by the binary's first start, then rows added by
# bench/seed_tool.py while signupd is stopped; every run gets a fresh copy.
template_init() { # DIR
    serve_start "$1"
    serve_stop
}

template_rows() { # DIR N: N more subscribers of list `news`, 80 % confirmed, 20 % pending
    python3 "$REPO/bench/seed_tool.py" subscribers --data-dir "$1" -n "$2" >&2
}

template_seal() { # NAME DIR: the WAL checkpointed into the file; prints what the template holds
    sql "$2/signupd.sqlite3" 'PRAGMA wal_checkpoint(TRUNCATE)' >/dev/null
    echo "$1: $(sql "$2/signupd.sqlite3" 'SELECT count(*) FROM subscribers') subscriber rows, $(du -h "$2/signupd.sqlite3" | cut -f1)"
}

fresh_copy() { # TEMPLATE_DIR -> a copy as $TMP/run, synced to disk (no write-back of it lands in the run)
    local dir=$TMP/run
    rm -rf "$dir" "$dir.toml" "$dir.log"
    cp -a "$1" "$dir"
    sync
    echo "$dir"
}

# bench/signup.sh's maximum-rate run on a fresh copy of TEMPLATE_DIR: `wrk -t$THREADS -c$CONNS
# -d$DURATION --timeout 30s -s bench/signup.lua --latency` (a unique address per request) after a
# $WARMUP warm-up; then signupd's peak RSS, the intake backlog and its drain time. Appends
# "signup LABEL SUMMARY ... rss_mib=M" to $TMP/runs. URL is signupd's base URL.
signup_run() { # TEMPLATE_DIR LABEL
    local dir before t0 t1 t2 backlog after summary rss answer
    dir=$(fresh_copy "$1")
    wait_quiet "signup $2"
    serve_start "$dir"
    answer=$(curl -s -o /dev/null -w '%{http_code}' --data "email=check-$RANDOM%40example.com&consent=yes&list=news" "$URL/api/signup")
    [[ $answer == 303 ]] || { echo "bench: signup answered $answer" >&2; exit 1; }
    wrk -t"$THREADS" -c"$CONNS" -d"$WARMUP" -s bench/signup.lua "$URL/api/signup" >/dev/null
    before=$(($(sql "$dir/signupd.sqlite3" 'SELECT count(*) FROM subscribers') + $(sql "$dir/signupd.sqlite3" 'SELECT count(*) FROM intake')))
    t0=$(date +%s.%N)
    wrk -t"$THREADS" -c"$CONNS" -d"$DURATION" --timeout 30s -s bench/signup.lua --latency "$URL/api/signup" >"$TMP/wrk.txt"
    t1=$(date +%s.%N)
    rss=$(peak_rss_mib "$PID")
    backlog=$(sql "$dir/signupd.sqlite3" 'SELECT count(*) FROM intake')
    while [[ $(sql "$dir/signupd.sqlite3" 'SELECT count(*) FROM intake') != 0 ]]; do sleep 0.05; done
    t2=$(date +%s.%N)
    after=$(sql "$dir/signupd.sqlite3" 'SELECT count(*) FROM subscribers')
    serve_stop
    summary=$(grep '^SUMMARY' "$TMP/wrk.txt")
    echo "signup $2 $summary backlog=$backlog drain_s=$(awk -v a="$t1" -v b="$t2" 'BEGIN { printf "%.2f", b - a }') e2e_rps=$(awk -v a="$t0" -v b="$t2" -v r="$((after - before))" 'BEGIN { printf "%.0f", r / (b - a) }') rows=$after rss_mib=$rss" | tee -a "$TMP/runs" >&2
}
