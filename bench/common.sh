# Shared by bench/growth.sh and bench/shutdown.sh (sourced): the release binary copied aside, so
# a rebuild during a run cannot replace it; a temporary directory removed on exit (KEEP_TMP=1
# keeps it); the configuration every run uses (one list `news`, rate limits raised, the file
# mail transport); waiting for /healthz. Set PORT, then call `bench_setup NAME`.

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
    SIGNUPD=$TMP/bin/signupd
    # What the binary was built from; BENCH_REVISION names it when BENCH_SIGNUPD is not this tree's build.
    REVISION=${BENCH_REVISION:-"$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src Cargo.toml Cargo.lock || echo '+uncommitted')"}
}

bench_cleanup() {
    if [[ -n ${PID:-} ]]; then kill -TERM "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; fi
    if [[ ${KEEP_TMP:-0} == 1 ]]; then echo "bench: kept $TMP" >&2; else rm -rf "$TMP"; fi
}

log() { echo "== $*" >&2; }

# A data directory's config, DATA_DIR.toml (every copy of a template gets its own: the data_dir
# differs); prints its path.
config() { # DATA_DIR
    mkdir -p "$1/mail"
    cat >"$1.toml" <<TOML
[server]
listen = "127.0.0.1:$PORT"
[storage]
data_dir = "$1"
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
    local i
    for i in $(seq 1 600); do
        curl -s -o /dev/null "http://127.0.0.1:$PORT/healthz" && return 0
        kill -0 "$PID" 2>/dev/null || { echo "bench: signupd exited during start-up; see $1" >&2; return 1; }
        sleep 0.05
    done
    echo "bench: signupd did not come up" >&2
    return 1
}
