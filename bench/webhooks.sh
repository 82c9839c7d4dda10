#!/usr/bin/env bash
# Webhook and destination delivery: how many events per second reach a local receiver that
# answers at once (examples/bench_receiver.rs), and whether the confirm path is slower with an
# endpoint or destination configured (confirming queues the event in the same transaction).
#
#   bash bench/webhooks.sh                      # a [[webhooks]] endpoint; ~3 minutes after the build
#   SINK=destination bash bench/webhooks.sh     # a [[destinations]] table of kind listmonk instead
#
# With SINK=destination the receiver stands in for listmonk: the destination's call for a
# subscriber.confirmed event is POST /api/subscribers, which it answers 204 (a 2xx: delivered),
# so the figures are signupd's cost of a destination, not a sender's.
#
# Delivery: N events (default 20,000, one subscriber each) are seeded into webhook_deliveries
# of a fresh database while signupd is stopped; then signupd starts with the one endpoint or
# destination and the time from its first answer on /healthz until the receiver counted N is the
# delivery time. REPEAT runs (fresh database each); the median is reported.
# Confirm: bench/growth.sh's confirm run (`wrk -t2 -c64 -d10s -s bench/confirm.lua` on tokens
# of seeded pending rows, each request a different token) without and with the sink,
# alternating (CONFIRM_ORDER="0 1 2 0 1 2 0 1 2": 0 without, 1 with, 2 with a sink that
# refuses connections: the event rows are written in the confirm's commit as with 1, but the
# delivery worker does next to nothing, which tells the commit's share from the delivery's),
# each on a fresh copy. Each run with the sink is also divided by the run without it just before,
# and the median of those ratios reported: on a shared machine the speed drifts between runs
# (CONFIRM_ORDER="0 1 0 1 …" pairs them all; TMPDIR=/dev/shm keeps the disk's fsyncs out).
# Every delivery and confirm run reports signupd's peak RSS (VmHWM from /proc/PID/status, MiB,
# bench/common.sh's peak_rss_mib), read when the receiver has counted N / when wrk ends, before
# signupd is stopped; the summary gives the medians and the highest peak RSS.
#
# Knobs: SINK=webhook|destination N=20000 REPEAT=3 CONFIRM_N=200000 CONFIRM_ORDER="0 1 2 0 1 2 0 1 2"
#   CONFIRM_DURATION=10s and bench/common.sh's BUILD=1 KEEP_TMP=0 BENCH_SIGNUPD BENCH_RECEIVER
#   BENCH_REVISION CACHE_MIB
# Needs wrk, sqlite3, curl, python3. Ports 18086 (signupd) and 18082 (receiver).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

SINK=${SINK:-webhook}
[[ $SINK == webhook || $SINK == destination ]] || { echo "bench: SINK is webhook or destination" >&2; exit 2; }
N=${N:-20000}
REPEAT=${REPEAT:-3}
CONFIRM_N=${CONFIRM_N:-200000}
CONFIRM_DURATION=${CONFIRM_DURATION:-10s}
PORT=18086
RECEIVER=127.0.0.1:18082
URL=http://127.0.0.1:$PORT
TOOL=(python3 "$REPO/bench/seed_tool.py")

require_tools wrk sqlite3 curl python3
bench_tmp webhooks
release_binaries bench_receiver
echo "whsec_$(head -c 32 /dev/urandom | base64 -w0)" >"$TMP/secret"

# Nothing listens here: deliveries to it fail at once and back off.
REFUSING=127.0.0.1:18099
CONFIG_MAIL='max_mails_per_hour = 1000000'
echo "bench:listmonk-token" >"$TMP/credential"
start() { # DATA_DIR WEBHOOK(0 none|1 receiver|2 refusing)
    local hook=$RECEIVER toml=
    if [[ $2 == 2 ]]; then hook=$REFUSING; fi
    if [[ $2 != 0 && $SINK == webhook ]]; then
        toml=$(printf '[[webhooks]]\nname = "bench"\nurl = "http://%s/hook"\nsecret_file = "%s"' "$hook" "$TMP/secret")
    elif [[ $2 != 0 ]]; then
        toml=$(printf '[[destinations]]\nname = "bench"\nkind = "listmonk"\nurl = "http://%s"\ncredential_file = "%s"\ntarget = "3"' "$hook" "$TMP/credential")
    fi
    CONFIG_MORE=$toml serve_start "$1"
}

"$TMP/bin/bench_receiver" "$RECEIVER" &
PIDS+=("$!")
wait_for "$!" answers "http://$RECEIVER/count"

echo "== webhooks (sink: $SINK): signupd $REVISION, $(nproc) CPUs, $(date -u +%FT%TZ)"
rates=()
rss_delivery=()
for run in $(seq 1 "$REPEAT"); do
    dir="$TMP/delivery-$run"
    init_data "$dir"
    "${TOOL[@]}" deliveries --data-dir "$dir" -n "$N" >/dev/null
    before=$(curl -s "http://$RECEIVER/count")
    start "$dir" 1
    started=$(date +%s.%N)
    while (($(curl -s "http://$RECEIVER/count") - before < N)); do sleep 0.02; done
    finished=$(date +%s.%N)
    rss=$(peak_rss_mib "$PID")
    rss_delivery+=("$rss")
    serve_stop
    left=$(sql "$dir/signupd.sqlite3" 'SELECT count(*) FROM webhook_deliveries')
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
init_data "$template"
"${TOOL[@]}" confirmable --data-dir "$template" -n "$CONFIRM_N" --tokens-out "$TMP/tokens" >/dev/null
confirm_rps=("" "" "") # per endpoint setting (0, 1, 2): the runs' req/s, space-separated
paired=""              # each run with a sink ÷ the run without it just before: the machine's speed drifts
confirm_rss=("" "" "")
endpoint() { case $1 in 0) echo none ;; 1) echo configured ;; 2) echo "configured, refusing" ;; esac; }
for webhook in ${CONFIRM_ORDER:-0 1 2 0 1 2 0 1 2}; do
    dir="$TMP/confirm-$webhook-$RANDOM"
    cp -a "$template" "$dir"
    start "$dir" "$webhook"
    WRK_THREADS=2 wrk -t2 -c64 -d"$CONFIRM_DURATION" --timeout 30s -s bench/confirm.lua --latency "$URL/api/confirm" -- "$TMP/tokens" >"$dir.wrk"
    rss=$(peak_rss_mib "$PID")
    serve_stop
    rps=$(grep 'Requests/sec' "$dir.wrk" | awk '{print $2}')
    confirm_rps[webhook]+="$rps "
    if [[ $webhook == 0 ]]; then last_none=$rps; elif [[ $webhook == 1 && -n ${last_none:-} ]]; then
        paired+="$(python3 -c "print(round($rps / $last_none, 3))") "
    fi
    confirm_rss[webhook]+="$rss "
    echo "confirm, $SINK $(endpoint "$webhook"): $rps req/s, p50 $(awk '/ 50%/ {print $2}' "$dir.wrk"), p99 $(awk '/ 99%/ {print $2}' "$dir.wrk"); events queued: $(sql "$dir/signupd.sqlite3" 'SELECT count(*) FROM webhook_deliveries'); peak RSS $rss MiB"
    rm -rf "$dir" "$dir".*
done
if [[ -n $paired ]]; then
    # shellcheck disable=SC2086 # a space-separated list of numbers
    echo "confirm, $SINK configured ÷ none run just before: $paired(median $(median $paired))"
fi
for webhook in 0 1 2; do
    [[ -n ${confirm_rps[webhook]} ]] || continue
    # shellcheck disable=SC2086 # the lists are space-separated numbers
    echo "confirm median, $SINK $(endpoint "$webhook"): $(median ${confirm_rps[webhook]}) req/s; peak RSS highest $(highest ${confirm_rss[webhook]}) MiB"
done
