#!/usr/bin/env bash
# Webhook delivery: how many events per second reach a local receiver that answers 204 at once
# (examples/bench_receiver.rs), and whether the confirm path is slower with an endpoint
# configured (confirming queues the event in the same transaction).
#
#   bash bench/webhooks.sh       # ~3 minutes after the release build
#
# Delivery: N events (default 20,000, one subscriber each) are seeded into webhook_deliveries
# of a fresh database while signupd is stopped; then signupd starts with one [[webhooks]]
# endpoint and the time from its first answer on /healthz until the receiver counted N is the
# delivery time. REPEAT runs (fresh database each); the median is reported.
# Confirm: bench/growth.sh's confirm run (`wrk -t2 -c64 -d10s -s bench/confirm.lua` on tokens
# of seeded pending rows, each request a different token) without and with the endpoint,
# alternating (CONFIRM_ORDER="0 1 2 0 1 2 0 1 2": 0 without, 1 with, 2 with an endpoint that
# refuses connections: the event rows are written in the confirm's commit as with 1, but the
# delivery worker does next to nothing, which tells the commit's share from the delivery's),
# each on a fresh copy.
# Every delivery and confirm run reports signupd's peak RSS (VmHWM from /proc/PID/status, MiB,
# bench/common.sh's peak_rss_mib), read when the receiver has counted N / when wrk ends, before
# signupd is stopped; the summary gives the medians and the highest peak RSS.
#
# Knobs: N=20000 REPEAT=3 CONFIRM_N=200000 CONFIRM_ORDER="0 1 2 0 1 2 0 1 2" CONFIRM_DURATION=10s
#   BUILD=1 (0: use the binaries as they are) BENCH_SIGNUPD=path BENCH_RECEIVER=path (default
#   target/release/signupd and target/release/examples/bench_receiver; BUILD=1 builds those)
#   BENCH_REVISION=name (what BENCH_SIGNUPD was built from; default this tree's HEAD)
#   CACHE_MIB=N (unset): `[storage] cache_mib = N` in signupd's config (the writer connection's
#     SQLite page cache, MiB; needs a signupd that knows the key); unset, the key is left out
# Needs wrk, sqlite3, curl, python3. Ports 18086 (signupd) and 18082 (receiver).
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
# peak_rss_mib, cache_mib_toml (this script keeps its own set-up, config, start, stop and cleanup).
source "$REPO/bench/common.sh"

N=${N:-20000}
REPEAT=${REPEAT:-3}
CONFIRM_N=${CONFIRM_N:-200000}
CONFIRM_DURATION=${CONFIRM_DURATION:-10s}
BENCH_SIGNUPD=${BENCH_SIGNUPD:-target/release/signupd}
BENCH_RECEIVER=${BENCH_RECEIVER:-target/release/examples/bench_receiver}
PORT=18086
RECEIVER=127.0.0.1:18082
URL=http://127.0.0.1:$PORT
TOOL=(python3 "$REPO/bench/seed_tool.py")

for tool in wrk sqlite3 curl; do
    command -v "$tool" >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$tool" >/dev/null; }
done
if [[ ${BUILD:-1} == 1 || ! -x $BENCH_SIGNUPD || ! -x $BENCH_RECEIVER ]]; then
    cargo build --release --locked --bin signupd --example bench_receiver
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/signupd-webhooks.XXXXXX")
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$TMP"
}
trap cleanup EXIT
mkdir -p "$TMP/bin"
cp "$BENCH_SIGNUPD" "$TMP/bin/signupd"
cp "$BENCH_RECEIVER" "$TMP/bin/bench_receiver"
SIGNUPD=$TMP/bin/signupd
echo "whsec_$(head -c 32 /dev/urandom | base64 -w0)" >"$TMP/secret"

# Nothing listens here: deliveries to it fail at once and back off.
REFUSING=127.0.0.1:18099
config() { # DATA_DIR WEBHOOK(0 none|1 receiver|2 refusing) -> config path
    mkdir -p "$1/mail"
    {
        printf '[server]\nlisten = "127.0.0.1:%s"\n[storage]\ndata_dir = "%s"\n%s\n[mail]\nfile_dir = "%s/mail"\nmax_mails_per_hour = 1000000\n' "$PORT" "$1" "$(cache_mib_toml)" "$1"
        printf '[signup]\nrate_limits = [ { window = "1m", max = 100000000 } ]\nnetwork_rate_limits = [ { window = "1m", max = 100000000 } ]\n[[lists]]\nid = "news"\n'
        if [[ $2 != 0 ]]; then
            printf '[[webhooks]]\nname = "bench"\nurl = "http://%s/hook"\nsecret_file = "%s"\n' "$([[ $2 == 1 ]] && echo "$RECEIVER" || echo "$REFUSING")" "$TMP/secret"
        fi
    } >"$1.toml"
    echo "$1.toml"
}
start() { # DATA_DIR WEBHOOK
    RUST_LOG=warn "$SIGNUPD" serve --config "$(config "$1" "$2")" 2>"$1.log" &
    SERVER=$!
    PIDS+=("$SERVER")
    for _ in $(seq 1 600); do curl -s -o /dev/null "$URL/healthz" && return 0; sleep 0.02; done
    echo "bench: signupd did not come up; see $1.log" >&2
    exit 1
}
stop() { kill -TERM "$SERVER"; wait "$SERVER" || true; }
fresh() { # DIR: a database with schema and secrets, signupd stopped
    mkdir -p "$1"
    start "$1" 0
    stop
}

"$TMP/bin/bench_receiver" "$RECEIVER" &
PIDS+=("$!")
sleep 0.5

echo "== webhooks: signupd ${BENCH_REVISION:-commit $(git rev-parse --short HEAD)}, $(nproc) CPUs, $(date -u +%FT%TZ)"
rates=()
rss_delivery=()
for run in $(seq 1 "$REPEAT"); do
    dir="$TMP/delivery-$run"
    fresh "$dir"
    python3 - "$dir/signupd.sqlite3" "$N" <<'PY'
import json, sqlite3, sys, time, uuid
db = sqlite3.connect(sys.argv[1]); now = int(time.time())
rows = []
for i in range(int(sys.argv[2])):
    sid = str(uuid.uuid4())
    body = json.dumps({"type": "subscriber.confirmed", "timestamp": "2026-11-30T00:00:00Z",
                       "data": {"list": "news", "email": f"b{i}@example.com", "subscriber_id": sid}})
    rows.append(("bench", f"evt_{uuid.uuid4().hex}", "subscriber.confirmed", sid, body, now, now))
db.executemany("INSERT INTO webhook_deliveries (endpoint, event_id, event_type, subscriber_id, payload, created_at, next_attempt_at) VALUES (?,?,?,?,?,?,?)", rows)
db.commit()
PY
    before=$(curl -s "http://$RECEIVER/count")
    start "$dir" 1
    started=$(date +%s.%N)
    while (($(curl -s "http://$RECEIVER/count") - before < N)); do sleep 0.02; done
    finished=$(date +%s.%N)
    rss=$(peak_rss_mib "$SERVER")
    rss_delivery+=("$rss")
    stop
    left=$(sqlite3 "$dir/signupd.sqlite3" 'SELECT count(*) FROM webhook_deliveries')
    rate=$(python3 -c "print(round($N / ($finished - $started)))")
    rates+=("$rate")
    echo "delivery run $run: $N events in $(python3 -c "print(round($finished - $started, 2))") s = $rate events/s; left in queue after stop: $left; peak RSS $rss MiB"
done
# The median of numbers, and the highest ("n/a" when one could not be read).
median() { printf '%s\n' "$@" | sort -n | sed -n "$((($# + 1) / 2))p"; }
highest() { if [[ " $* " == *" n/a "* ]]; then echo n/a; else printf '%s\n' "$@" | sort -g | tail -1; fi; }
echo "delivery median: $(median "${rates[@]}") events/s; peak RSS highest $(highest "${rss_delivery[@]}") MiB"

# Confirm latency without and with an endpoint, each on a fresh copy of the same seeded rows.
template="$TMP/confirm-template"
fresh "$template"
"${TOOL[@]}" confirmable --data-dir "$template" -n "$CONFIRM_N" --tokens-out "$TMP/tokens" >/dev/null
confirm_rps=("" "" "") # per endpoint setting (0, 1, 2): the runs' req/s, space-separated
confirm_rss=("" "" "")
endpoint() { case $1 in 0) echo none ;; 1) echo configured ;; 2) echo "configured, refusing" ;; esac; }
for webhook in ${CONFIRM_ORDER:-0 1 2 0 1 2 0 1 2}; do
    dir="$TMP/confirm-$webhook-$RANDOM"
    cp -a "$template" "$dir"
    start "$dir" "$webhook"
    WRK_THREADS=2 wrk -t2 -c64 -d"$CONFIRM_DURATION" --timeout 30s -s bench/confirm.lua --latency "$URL/api/confirm" -- "$TMP/tokens" >"$dir.wrk"
    rss=$(peak_rss_mib "$SERVER")
    stop
    rps=$(grep 'Requests/sec' "$dir.wrk" | awk '{print $2}')
    confirm_rps[webhook]+="$rps "
    confirm_rss[webhook]+="$rss "
    echo "confirm, webhook endpoint $(endpoint "$webhook"): $rps req/s, p50 $(awk '/ 50%/ {print $2}' "$dir.wrk"), p99 $(awk '/ 99%/ {print $2}' "$dir.wrk"); events queued: $(sqlite3 "$dir/signupd.sqlite3" 'SELECT count(*) FROM webhook_deliveries'); peak RSS $rss MiB"
    rm -rf "$dir"
done
for webhook in 0 1 2; do
    [[ -n ${confirm_rps[webhook]} ]] || continue
    # shellcheck disable=SC2086 # the lists are space-separated numbers
    echo "confirm median, webhook endpoint $(endpoint "$webhook"): $(median ${confirm_rps[webhook]}) req/s; peak RSS highest $(highest ${confirm_rss[webhook]}) MiB"
done
