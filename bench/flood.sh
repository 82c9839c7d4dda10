#!/usr/bin/env bash
# Subscription bombing against signupd (SPEC "Under attack"): a flood of signups for victims'
# addresses through a trusted proxy, while ten visitors from their own networks sign up; what the
# visitors wait for their mail, what the flood gets answered and mailed, and what is kept.
# BENCHMARKS.md, "Under attack", has the figures and how to read them.
#
#   bash bench/flood.sh        # ~6 minutes after the release build; everything on 127.0.0.1
#
# Each scenario runs on a fresh data directory with the release binary, the default limits
# (3 per client per 10 min and 10 per day, 100 per /24 or /48 per 10 min and 1,000 per day,
# 3 confirmation mails per address per day, surge alert 500 per list per 10 min) except:
# server.trusted_proxies = ["127.0.0.1"] (every request carries its client in CF-Connecting-IP),
# mail.max_mails_per_hour = BUDGET (200), mail.transport = "smtp" to bench/flood_sink.py
# (records each recipient's arrival time; also receives mail.alert_webhook), five lists.
# The flood is wrk with bench/flood.lua at the highest rate the machine gives for FLOOD_SECS;
# a quarter of its requests name one of three repeated victims, each going through the five
# lists (the per-address cap); the others a new address each. The visitors
# (bench/flood_tool.py visitors) sign up from 198.18.<i>.10, spread from 2 s after the flood
# began to 2 s before it ends, and wait up to MAIL_WAIT s for their mail.
#
# Scenarios (SCENARIOS, in this order by default):
#   v6         one IPv6 /48: each request from its own /64 (2001:db8:1:<x>::1), thousands of them
#   v6-window  the same with confirm_ttl = SHORT_TTL and the cleanup every 5 s: rows and file
#              size once every flood row's confirm window has ended (the privacy and disk bound)
#   v4         a botnet: 200 IPv4 /24s (FLOOD_NETS), 254 clients each, taken in turn
#   v4-window  the botnet with the short confirm window
#   v4-hour    the botnet again, with signupd's clock set (libfaketime) so that the clock hour
#              turns HOUR_TURN_AFTER s after the flood ended: what the next hour's budget goes to
# Every scenario runs under libfaketime (LD_PRELOAD, monotonic clock untouched) so that where
# the clock hour turns is chosen, not left to when the script happens to run: the others start
# at minute 20 of the current UTC hour. Only signupd sees the faked clock; every time measured
# here is the real one. FAKE_CLOCK=0 runs signupd on the real clock instead (then v4-hour is
# skipped, and a run that crosses a clock hour gets a fresh budget part-way).
#
# Knobs (environment, defaults shown):
#   FLOOD_SECS=20 THREADS=2 CONNS=64 BUDGET=200 FLOOD_NETS=200 LISTS="news l2 l3 l4 l5"
#   REPEAT_EVERY=4 REPEAT_VICTIMS=3 VISITORS=10 MAIL_WAIT=60 SHORT_TTL=30 (seconds)
#   HOUR_TURN_AFTER=10 SCENARIOS="v6 v6-window v4 v4-window v4-hour"
#   QUIET_MAX=25 QUIET_WAIT=300: before each scenario, wait up to QUIET_WAIT s until other
#     processes use at most QUIET_MAX % of the CPUs (the summary names those that did not)
#   SUMMARY_OUT=file, and bench/common.sh's BUILD=1 KEEP_TMP=0 BENCH_SIGNUPD BENCH_REVISION
# Needs wrk, sqlite3, curl, faketime (apt-get install when missing), python3 (3.11), cargo.
# Listens on 127.0.0.1 only: signupd 18100, its metrics 18101, the sink's SMTP 2526 and HTTP 18102.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

FLOOD_SECS=${FLOOD_SECS:-20}
THREADS=${THREADS:-2}
CONNS=${CONNS:-64}
BUDGET=${BUDGET:-200}
FLOOD_NETS=${FLOOD_NETS:-200}
LISTS=${LISTS:-news l2 l3 l4 l5}
REPEAT_EVERY=${REPEAT_EVERY:-4}
REPEAT_VICTIMS=${REPEAT_VICTIMS:-3}
VISITORS=${VISITORS:-10}
MAIL_WAIT=${MAIL_WAIT:-60}
SHORT_TTL=${SHORT_TTL:-30}
HOUR_TURN_AFTER=${HOUR_TURN_AFTER:-10}
SCENARIOS=${SCENARIOS:-v6 v6-window v4 v4-window v4-hour}
FAKE_CLOCK=${FAKE_CLOCK:-1}
QUIET_MAX=${QUIET_MAX:-25}
QUIET_WAIT=${QUIET_WAIT:-300}

PORT=18100
METRICS_PORT=18101
SMTP_PORT=2526
HTTP_PORT=18102
TOOL=(python3 "$REPO/bench/flood_tool.py")
FAKETIME_LIB=${FAKETIME_LIB:-/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1}

require_tools wrk sqlite3 curl python3 "faketime:$FAKETIME_LIB"
ports_free "$PORT" "$METRICS_PORT" "$SMTP_PORT" "$HTTP_PORT"
bench_tmp flood
release_binaries

# Rows and bytes kept: one JSON object.
db_state() { # DATA_DIR
    local db=$1/signupd.sqlite3 counts pages
    counts=$(sql "$db" "SELECT (SELECT count(*) FROM subscribers), (SELECT count(*) FROM subscribers WHERE status = 'pending' AND confirmation_sent_at IS NULL), (SELECT count(*) FROM outbox), (SELECT count(*) FROM intake), (SELECT count(*) FROM address_mails), (SELECT count(*) FROM rate_limits);")
    pages=$(sql "$db" "SELECT page_count, freelist_count, page_size FROM pragma_page_count(), pragma_freelist_count(), pragma_page_size();")
    python3 - "$counts" "$pages" "$db" <<'EOF'
import json, os, sys
c = [int(x) for x in sys.argv[1].split("|")]
p = [int(x) for x in sys.argv[2].split("|")]
size = lambda path: os.path.getsize(path) if os.path.exists(path) else 0
db = sys.argv[3]
print(json.dumps({"subscribers": c[0], "never_mailed": c[1], "outbox": c[2], "intake": c[3],
                  "address_mails": c[4], "rate_limit_rows": c[5],
                  "db_bytes": size(db), "wal_bytes": size(db + "-wal"), "shm_bytes": size(db + "-shm"),
                  "pages": p[0], "free_pages": p[1], "page_size": p[2]}))
EOF
}

write_config() { # DIR SHORT_WINDOW(0|1)
    local dir=$1 list
    {
        cat <<EOF
[server]
listen = "127.0.0.1:$PORT"
public_url = "http://127.0.0.1:$PORT"
trusted_proxies = ["127.0.0.1"]
metrics_listen = "127.0.0.1:$METRICS_PORT"
[storage]
data_dir = "$dir/data"
[mail]
transport = "smtp"
max_mails_per_hour = $BUDGET
alert_webhook = "http://127.0.0.1:$HTTP_PORT/alert"
[mail.smtp]
host = "127.0.0.1"
port = $SMTP_PORT
security = "none"
timeout = "10s"
EOF
        if [[ $2 == 1 ]]; then
            printf '[signup]\nconfirm_ttl = "%ss"\n[cleanup]\nschedule = "*/5 * * * * *"\n' "$SHORT_TTL"
        fi
        for list in $LISTS; do printf '[[lists]]\nid = "%s"\n' "$list"; done
    } >"$dir/config.toml"
}

# --- one scenario ---------------------------------------------------------------------------------
RESULTS=$TMP/results.jsonl
: >"$RESULTS"
run_scenario() { # NAME MODE(v6|v4) SHORT_WINDOW(0|1) HOUR_TURN(0|1)
    local name=$1 mode=$2 short=$3 hour=$4 dir=$TMP/$1 fake lead sink_pid pid visitors_pid t_exec t0 t1 flood
    mkdir -p "$dir/data" "$dir/sink"
    write_config "$dir" "$short"
    wait_quiet "$name"
    log "$name: $QUIET_NOTE"

    python3 "$REPO/bench/flood_sink.py" --smtp-port "$SMTP_PORT" --http-port "$HTTP_PORT" --out "$dir/sink" 2>"$dir/sink.log" &
    sink_pid=$!
    PIDS+=("$sink_pid")
    wait_for "$sink_pid" listens "$SMTP_PORT"

    # signupd's clock: the hour turns HOUR_TURN_AFTER s after the flood's end, or minute 20.
    if [[ $hour == 1 ]]; then
        lead=$((FLOOD_SECS + 1 + HOUR_TURN_AFTER))
        fake="$(date -u +%F) $(date -u +%H):$(printf '%02d:%02d' $(((3600 - lead) / 60 % 60)) $(((3600 - lead) % 60)))"
    else
        lead=2400
        fake="$(date -u +%F) $(date -u +%H):20:00"
    fi
    local clock_env=(LD_PRELOAD="$FAKETIME_LIB" FAKETIME="@$fake" FAKETIME_DONT_FAKE_MONOTONIC=1)
    if [[ $FAKE_CLOCK == 0 ]]; then
        clock_env=()
        fake="$(date -u '+%F %T') (real clock)"
    fi
    t_exec=$(date +%s.%N)
    env "${clock_env[@]}" RUST_LOG=warn "$SIGNUPD" serve --config "$dir/config.toml" 2>"$dir/signupd.log" &
    pid=$!
    PIDS+=("$pid")
    wait_for "$pid" answers "http://127.0.0.1:$PORT/healthz"
    local clock
    clock=$(sql "$dir/data/signupd.sqlite3" "SELECT datetime(last_run_at, 'unixepoch') FROM service_runs WHERE name = 'cleanup'" 2>/dev/null || true)
    log "$name: signupd started with its clock at $fake UTC (its start-up cleanup stamped ${clock:-?})"

    local list_csv
    list_csv=$(tr ' ' ',' <<<"$LISTS")
    t0=$(date +%s.%N)
    "${TOOL[@]}" visitors --url "http://127.0.0.1:$PORT/api/signup" --sink-dir "$dir/sink" --n "$VISITORS" \
        --first 2 --last "$((FLOOD_SECS - 2))" --wait "$MAIL_WAIT" --tag "$name" --out "$dir/visitors.json" \
        >"$dir/visitors.line" 2>"$dir/visitors.err" &
    visitors_pid=$!
    PIDS+=("$visitors_pid")
    FLOOD_MODE=$mode FLOOD_NETS=$FLOOD_NETS FLOOD_THREADS=$THREADS FLOOD_LISTS=$list_csv \
        REPEAT_EVERY=$REPEAT_EVERY REPEAT_VICTIMS=$REPEAT_VICTIMS \
        wrk -t"$THREADS" -c"$CONNS" -d"${FLOOD_SECS}s" --timeout 30s -s bench/flood.lua \
        "http://127.0.0.1:$PORT/api/signup" >"$dir/wrk.txt" 2>&1
    t1=$(date +%s.%N)
    flood=$(grep '^FLOOD' "$dir/wrk.txt" || { cat "$dir/wrk.txt" >&2; echo "FLOOD failed"; })
    db_state "$dir/data" >"$dir/at_flood_end.json"
    "${TOOL[@]}" metrics --url "http://127.0.0.1:$METRICS_PORT/metrics" >"$dir/metrics_flood_end.json"
    log "$name: $flood"
    log "$name: at the flood's end: $(cat "$dir/at_flood_end.json")"

    stop "$visitors_pid" 0
    ((STOPPED == 0)) || { echo "bench: visitors failed: $(cat "$dir/visitors.err")" >&2; exit 1; }
    if [[ $short == 1 ]]; then
        # Every flood row's window (SHORT_TTL after its signup, or after its mail) has ended and
        # a cleanup (every 5 s) has run since.
        local until
        until=$(python3 -c "print($t1 + $SHORT_TTL + 7)")
        while python3 -c "import sys, time; sys.exit(0 if time.time() < $until else 1)"; do sleep 0.5; done
    fi
    local t_end
    t_end=$(date +%s.%N)
    db_state "$dir/data" >"$dir/at_end.json"
    "${TOOL[@]}" metrics --url "http://127.0.0.1:$METRICS_PORT/metrics" >"$dir/metrics_end.json"
    local hour_turn=null turn_args=()
    if [[ $hour == 1 ]]; then
        hour_turn=$(python3 -c "print(round($t_exec + $lead - $t1, 1))")
        turn_args=(--hour-turn "$(python3 -c "print($t_exec + $lead)")")
    fi
    "${TOOL[@]}" sink --sink-dir "$dir/sink" --t0 "$t0" "${turn_args[@]}" >"$dir/sink.json"
    stop "$pid"
    db_state "$dir/data" >"$dir/after_stop.json"
    stop "$sink_pid"
    # ERROR lines other than the expected surge alerts, and panics.
    local errors
    errors=$(grep -E 'ERROR|panic' "$dir/signupd.log" | grep -vc 'signup surge' || true)
    python3 - "$name" "$mode" "$short" "$hour" "$flood" "$t0" "$t1" "$t_end" "$hour_turn" "$QUIET_NOTE" "$errors" "$dir" "$fake" "$FLOOD_NETS" >>"$RESULTS" <<'EOF'
import json, sys
name, mode, short, hour, flood, t0, t1, t_end, hour_turn, quiet, errors, d, fake, nets = sys.argv[1:]
fields = dict(kv.split("=", 1) for kv in flood.split()[1:] if "=" in kv)
load = lambda f: json.load(open(f"{d}/{f}"))
visitors = load("visitors.json")
print(json.dumps({
    "name": name, "mode": mode, "nets": int(nets), "short_window": short == "1", "hour_turn": hour == "1", "fake_start": fake,
    "flood": {k: float(v) for k, v in fields.items()}, "flood_secs": round(float(t1) - float(t0), 1),
    "run_secs": round(float(t_end) - float(t0), 1),
    "hour_turned_s_after_flood_end": None if hour_turn == "null" else float(hour_turn),
    "visitors": visitors, "at_flood_end": load("at_flood_end.json"), "at_end": load("at_end.json"),
    "after_stop": load("after_stop.json"), "metrics_flood_end": load("metrics_flood_end.json"),
    "metrics_end": load("metrics_end.json"), "sink": load("sink.json"), "quiet": quiet,
    "signupd_log_error_lines": int(errors),
}))
EOF
    log "$name: done; visitors: $(cat "$dir/visitors.line")"
}

# --- run ------------------------------------------------------------------------------------------
log "parameters: flood ${FLOOD_SECS}s, wrk -t$THREADS -c$CONNS, budget $BUDGET mails/hour, botnet $FLOOD_NETS /24s, lists: $LISTS, every ${REPEAT_EVERY}th request one of $REPEAT_VICTIMS repeated victims, $VISITORS visitors (wait up to ${MAIL_WAIT}s), short confirm window ${SHORT_TTL}s, scenarios: $SCENARIOS"
log "signupd $REVISION, built $BUILT_AT; $(nproc) CPUs, $(uname -r); signupd's clock: $([[ $FAKE_CLOCK == 1 ]] && echo "libfaketime" || echo real)"
for scenario in $SCENARIOS; do
    case $scenario in
        v6) run_scenario v6 v6 0 0 ;;
        v6-window) run_scenario v6-window v6 1 0 ;;
        v4) run_scenario v4 v4 0 0 ;;
        v4-window) run_scenario v4-window v4 1 0 ;;
        v4-hour)
            if [[ $FAKE_CLOCK == 0 ]]; then log "v4-hour needs FAKE_CLOCK=1; skipped"; else run_scenario v4-hour v4 0 1; fi ;;
        *) echo "bench: unknown scenario $scenario" >&2; exit 2 ;;
    esac
done

# --- summary --------------------------------------------------------------------------------------
{
    echo
    echo "signupd flood benchmark — $(date -u +%Y-%m-%dT%H:%MZ)"
    echo "signupd $REVISION (built $BUILT_AT); $(machine)"
    echo "flood: wrk -t$THREADS -c$CONNS -d${FLOOD_SECS}s -s bench/flood.lua; budget $BUDGET mails/hour; lists: $LISTS;"
    echo "  every ${REPEAT_EVERY}th request names one of $REPEAT_VICTIMS repeated victims; $VISITORS visitors from their own /24s, 2..$((FLOOD_SECS - 2)) s into the flood"
    python3 - "$RESULTS" "$MAIL_WAIT" <<'EOF'
import json, sys
wait = sys.argv[2]
mb = lambda b: f"{b / 1048576:.2f} MiB"
for line in open(sys.argv[1]):
    r = json.loads(line)
    f, v, s = r["flood"], r["visitors"], r["sink"]
    print()
    what = {"v6": "one IPv6 /48, a /64 per request", "v4": f"{r['nets']} IPv4 /24s x 254 clients"}[r["mode"]]
    extra = []
    if r["short_window"]:
        extra.append("confirm_ttl short, cleanup every 5 s")
    if r["hour_turn"]:
        extra.append(f"signupd's clock hour turned {r['hour_turned_s_after_flood_end']} s after the flood ended")
    print(f"[{r['name']}] {what}{'; ' + '; '.join(extra) if extra else ''}  ({r['quiet']}; signupd clock from {r['fake_start']} UTC)")
    print(f"  flood: {int(f['requests'])} requests in {r['flood_secs']} s = {f['rps']:.0f} req/s; 303: {int(f['s303'])}, 429: {int(f['s429'])}, other: {int(f['other'])}, socket errors {int(f['socket_errors'])}; p50 {f['p50_us']/1000:.1f} ms, p99 {f['p99_us']/1000:.1f} ms")
    m = r["metrics_end"]
    print(f"  signupd counted: signups {m.get('signupd_signups_total', {})}; mails {m.get('signupd_mails_total', {})}; surge alerts {m.get('signupd_surge_alerts_total', {})}")
    print(f"  sink: {s['mails']} mails ({s['flood_mails']} to the flood's victims, {s['visitor_mails']} to visitors); repeated victims got {s['repeat_victim_mails']}; most to one address {s['max_mails_one_address']}; alert webhook POSTs {s['alerts']} {s['alert_bodies'][:2]}")
    if "mails_after_hour_turn" in s:
        print(f"  hour turn: {s['mails_before_hour_turn']} mails before it, {s['mails_after_hour_turn']} after; visitors' places among those after: {s['visitor_places_after_hour_turn']}")
    lat = [x["mail_after_s"] for x in v["visitors"]]
    print(f"  visitors: {v['answered_303']}/{len(lat)} answered 303; mail arrived for {v['mailed']} ({v['mailed_within_60s']} within 60 s), waited up to {v['waited_s_after_last_answer']} s after the last answer")
    print("    303 -> mail (s): " + ", ".join("none" if x is None else f"{x:.2f}" for x in lat))
    print("    signed up at (s into the flood): " + ", ".join(f"{x['sent_at_s']:.1f}" for x in v["visitors"]))
    for key, label in (("at_flood_end", "when the flood stopped"), ("at_end", "at the end of the run" + (" (after the window)" if r["short_window"] else "")), ("after_stop", "after signupd stopped")):
        d = r[key]
        print(f"  {label:38} subscribers {d['subscribers']} (never mailed {d['never_mailed']}), outbox {d['outbox']}, intake {d['intake']}, address_mails {d['address_mails']}, rate_limits {d['rate_limit_rows']}; db {mb(d['db_bytes'])} + wal {mb(d['wal_bytes'])} (pages {d['pages']}, free {d['free_pages']})")
    print(f"  run {r['run_secs']} s; signupd log lines with ERROR (other than the surge alert) or panic: {r['signupd_log_error_lines']}")
EOF
    busy_phases "scenarios started on a busy machine:"
} | tee "${SUMMARY_OUT:-/dev/null}"
if [[ -n ${SUMMARY_OUT:-} ]]; then cp "$RESULTS" "${SUMMARY_OUT%.*}.jsonl"; fi
