#!/usr/bin/env bash
# Subscription bombing against signupd (docs/operations.md "Under attack"): flood levels, each
# from a botnet of /24s and from one IPv6 /48, against a paced budget and surge mode, while ten
# visitors from their own networks sign up (and press when asked); what the visitors wait for
# their mail, what the flood gets answered and mailed, and what is kept and what expires.
# BENCHMARKS.md, "Under attack", has the figures and how to read them.
#
#   bash bench/flood.sh        # ~15 minutes (6 runs of ~2.5 min); everything on 127.0.0.1
#   LEVELS=L3 SHAPES=v4 bash bench/flood.sh     # a subset
#
# Levels (LEVELS, in this order by default; each against every shape):
#   L0  direct POSTs, the answer never followed: wrk -t$THREADS -c$CONNS with bench/flood.lua, the
#       highest rate the machine gives (25,400 POSTs/s from the botnet, 28,800/s from the /48 on
#       the 2-core machine of BENCHMARKS.md, shared with signupd, c7c856c)
#   L1  GET /signup?list=ID (the hosted form) and then the POST, as one client, answer not
#       followed: bench/flood_tool.py flood over $PY_CONNS keep-alive connections in one asyncio
#       loop (~7,900 rounds/s there, 15,800 requests/s)
#   L3  a headless-browser-shaped flood: as L1, and when the answer is the surge redirect (303 to
#       /check-inbox?list=ID&send=TOKEN) it GETs that page and presses, POST /api/send with the
#       token (the same client; ~8,800 rounds/s there, 18,400 requests/s, mostly 429 rounds of
#       two requests; each accepted one costs four)
# Shapes (SHAPES):
#   v4  a botnet: FLOOD_NETS (250) IPv4 /24s, 254 clients each (10.100.<k>.<h>), taken in turn
#   v6  one IPv6 /48: each request from its own /64 (2001:db8:1:<x>::1), thousands of them
# SCENARIOS="L0-v4 L3-v6 ..." names runs explicitly instead (level-shape).
#
# Each run: a fresh data directory, the release binary, default limits (3 per client per 10 min
# and 10 per day, 100 per /24 or /48 per 10 min and 1,000 per day, 3 confirmation mails per
# address per day) except: server.trusted_proxies = ["127.0.0.1"] (every request carries its
# client in CF-Connecting-IP); mail.max_mails_per_hour = BUDGET (360) with mail.burst = BURST
# (unset: signupd's default, max/60 = 6), so at most BURST + T x BUDGET/3600 mails in any T s;
# signup.surge_alert = { window = SURGE_WINDOW (10m), max = SURGE_MAX (100) }; a short confirm
# window, signup.confirm_ttl = SHORT_TTL s (75) with the cleanup every 5 s, so that held and
# never-mailed rows expire within the run (75 s is longer than the flood: nothing expires before
# it ends); mail.transport = "smtp" to bench/flood_sink.py (records each recipient's arrival
# time; also receives mail.alert_webhook); five lists. The flood runs
# FLOOD_SECS (60); a quarter of its signups name one of three repeated victims, each going
# through the five lists (the per-address cap), the others a new address each. The visitors
# (bench/flood_tool.py visitors) sign up on list `news` from 198.18.<i>.10, spread from 2 s after
# the flood began to 2 s before it ends (~6 s apart: ten visitors within a few seconds would
# outrun a budget of 360 an hour, one mail per 10 s, by themselves); a visitor sent to
# the surge page presses at once; each waits up to MAIL_WAIT (60) s from its press (or its
# signup, when not asked) for its mail. The run ends SHORT_TTL + 7 s after the flood stopped,
# when every flood row's confirm window has ended and a cleanup has run.
#
# signupd runs under libfaketime (LD_PRELOAD, monotonic clock untouched), its clock starting at
# minute 20 of the current UTC hour, so that no 10-minute window of the limits and of the surge
# alert turns during a run (each would admit a second round). Only signupd sees the faked clock;
# every time measured here is the real one. FAKE_CLOCK=0 runs signupd on the real clock.
#
# Knobs (environment, defaults shown):
#   FLOOD_SECS=60 THREADS=2 CONNS=64 PY_CONNS=64 BUDGET=360 BURST= SURGE_MAX=100 SURGE_WINDOW=10m
#   FLOOD_NETS=250 LISTS="news l2 l3 l4 l5" REPEAT_EVERY=4 REPEAT_VICTIMS=3 VISITORS=10
#   MAIL_WAIT=60 SHORT_TTL=75 LEVELS="L0 L1 L3" SHAPES="v4 v6" SCENARIOS= FAKE_CLOCK=1
#   QUIET_MAX=25 QUIET_WAIT=300: before each run, wait up to QUIET_WAIT s until other processes
#     use at most QUIET_MAX % of the CPUs (the summary names those that did not)
#   SUMMARY_OUT=file (and file.jsonl, file.md: every run's figures, the table), and
#   bench/common.sh's BUILD=1 KEEP_TMP=0 BENCH_SIGNUPD BENCH_REVISION
# Needs wrk, sqlite3, curl, faketime (apt-get install when missing), python3 (3.11), cargo.
# Listens on 127.0.0.1 only: signupd 18100, its metrics 18101, the sink's SMTP 2526 and HTTP 18102.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

FLOOD_SECS=${FLOOD_SECS:-60}
THREADS=${THREADS:-2}
CONNS=${CONNS:-64}
PY_CONNS=${PY_CONNS:-64}
BUDGET=${BUDGET:-360}
BURST=${BURST:-}
SURGE_MAX=${SURGE_MAX:-100}
SURGE_WINDOW=${SURGE_WINDOW:-10m}
FLOOD_NETS=${FLOOD_NETS:-250}
LISTS=${LISTS:-news l2 l3 l4 l5}
REPEAT_EVERY=${REPEAT_EVERY:-4}
REPEAT_VICTIMS=${REPEAT_VICTIMS:-3}
VISITORS=${VISITORS:-10}
MAIL_WAIT=${MAIL_WAIT:-60}
SHORT_TTL=${SHORT_TTL:-75}
LEVELS=${LEVELS:-L0 L1 L3}
SHAPES=${SHAPES:-v4 v6}
SCENARIOS=${SCENARIOS:-}
FAKE_CLOCK=${FAKE_CLOCK:-1}
QUIET_MAX=${QUIET_MAX:-25}
QUIET_WAIT=${QUIET_WAIT:-300}
# What signupd makes of an unset burst: a minute's share, at least 1.
BURST_EFF=${BURST:-$((BUDGET / 60 > 0 ? BUDGET / 60 : 1))}
if [[ -z $SCENARIOS ]]; then
    for level in $LEVELS; do for shape in $SHAPES; do SCENARIOS+="$level-$shape "; done; done
fi

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
    counts=$(sql "$db" "SELECT (SELECT count(*) FROM subscribers), (SELECT count(*) FROM subscribers WHERE status = 'pending' AND confirmation_sent_at IS NULL), (SELECT count(*) FROM outbox), (SELECT count(*) FROM intake), (SELECT count(*) FROM address_mails), (SELECT count(*) FROM rate_limits), (SELECT count(*) FROM outbox WHERE held = 1), (SELECT count(*) FROM outbox WHERE pressed = 1), (SELECT count(*) FROM intake WHERE send_id IS NOT NULL);")
    pages=$(sql "$db" "SELECT page_count, freelist_count, page_size FROM pragma_page_count(), pragma_freelist_count(), pragma_page_size();")
    python3 - "$counts" "$pages" "$db" <<'EOF'
import json, os, sys
c = [int(x) for x in sys.argv[1].split("|")]
p = [int(x) for x in sys.argv[2].split("|")]
size = lambda path: os.path.getsize(path) if os.path.exists(path) else 0
db = sys.argv[3]
print(json.dumps({"subscribers": c[0], "never_mailed": c[1], "outbox": c[2], "intake": c[3],
                  "address_mails": c[4], "rate_limit_rows": c[5], "outbox_held": c[6],
                  "outbox_pressed": c[7], "intake_surge": c[8],
                  "db_bytes": size(db), "wal_bytes": size(db + "-wal"), "shm_bytes": size(db + "-shm"),
                  "pages": p[0], "free_pages": p[1], "page_size": p[2]}))
EOF
}

write_config() { # DIR
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
${BURST:+burst = $BURST}
alert_webhook = "http://127.0.0.1:$HTTP_PORT/alert"
[mail.smtp]
host = "127.0.0.1"
port = $SMTP_PORT
security = "none"
timeout = "10s"
[signup]
surge_alert = { window = "$SURGE_WINDOW", max = $SURGE_MAX }
confirm_ttl = "${SHORT_TTL}s"
[cleanup]
schedule = "*/5 * * * * *"
EOF
        for list in $LISTS; do printf '[[lists]]\nid = "%s"\n' "$list"; done
    } >"$dir/config.toml"
}

# --- one run --------------------------------------------------------------------------------------
RESULTS=$TMP/results.jsonl
: >"$RESULTS"
run_scenario() { # LEVEL SHAPE
    local level=$1 mode=$2 name=$1-$2 dir=$TMP/$1-$2 fake sink_pid pid visitors_pid t0 t1 flood list_csv
    mkdir -p "$dir/data" "$dir/sink"
    write_config "$dir"
    wait_quiet "$name"
    log "$name: $QUIET_NOTE"

    python3 "$REPO/bench/flood_sink.py" --smtp-port "$SMTP_PORT" --http-port "$HTTP_PORT" --out "$dir/sink" 2>"$dir/sink.log" &
    sink_pid=$!
    PIDS+=("$sink_pid")
    wait_for "$sink_pid" listens "$SMTP_PORT"

    # signupd's clock: minute 20 of this hour, so no 10-minute window turns during the run.
    fake="$(date -u +%F) $(date -u +%H):20:00"
    local clock_env=(LD_PRELOAD="$FAKETIME_LIB" FAKETIME="@$fake" FAKETIME_DONT_FAKE_MONOTONIC=1)
    if [[ $FAKE_CLOCK == 0 ]]; then
        clock_env=()
        fake="$(date -u '+%F %T') (real clock)"
    fi
    env "${clock_env[@]}" RUST_LOG=warn "$SIGNUPD" serve --config "$dir/config.toml" 2>"$dir/signupd.log" &
    pid=$!
    PIDS+=("$pid")
    wait_for "$pid" answers "http://127.0.0.1:$PORT/healthz"
    log "$name: signupd started with its clock at $fake UTC"

    list_csv=$(tr ' ' ',' <<<"$LISTS")
    t0=$(date +%s.%N)
    "${TOOL[@]}" visitors --url "http://127.0.0.1:$PORT/api/signup" --sink-dir "$dir/sink" --n "$VISITORS" \
        --first 2 --last "$((FLOOD_SECS - 2))" --wait "$MAIL_WAIT" --tag "$name" --out "$dir/visitors.json" \
        >"$dir/visitors.line" 2>"$dir/visitors.err" &
    visitors_pid=$!
    PIDS+=("$visitors_pid")
    if [[ $level == L0 ]]; then
        FLOOD_MODE=$mode FLOOD_NETS=$FLOOD_NETS FLOOD_THREADS=$THREADS FLOOD_LISTS=$list_csv \
            REPEAT_EVERY=$REPEAT_EVERY REPEAT_VICTIMS=$REPEAT_VICTIMS \
            wrk -t"$THREADS" -c"$CONNS" -d"${FLOOD_SECS}s" --timeout 30s -s bench/flood.lua \
            "http://127.0.0.1:$PORT/api/signup" >"$dir/flood.txt" 2>&1
    else
        "${TOOL[@]}" flood --url "http://127.0.0.1:$PORT" --level "$level" --mode "$mode" --secs "$FLOOD_SECS" \
            --conns "$PY_CONNS" --nets "$FLOOD_NETS" --lists "$list_csv" --repeat-every "$REPEAT_EVERY" \
            --repeat-victims "$REPEAT_VICTIMS" >"$dir/flood.txt" 2>&1
    fi
    t1=$(date +%s.%N)
    flood=$(grep '^FLOOD' "$dir/flood.txt" || { cat "$dir/flood.txt" >&2; echo "FLOOD failed"; })
    wait_intake "$dir/data/signupd.sqlite3"
    db_state "$dir/data" >"$dir/at_flood_end.json"
    "${TOOL[@]}" metrics --url "http://127.0.0.1:$METRICS_PORT/metrics" >"$dir/metrics_flood_end.json"
    log "$name: $flood"
    log "$name: at the flood's end: $(cat "$dir/at_flood_end.json")"

    # Every flood row's window (SHORT_TTL after its signup, or after its mail) has ended and a
    # cleanup (every 5 s) has run since; the visitors have their mail or gave up.
    local until
    until=$(python3 -c "print($t1 + $SHORT_TTL + 7)")
    while python3 -c "import sys, time; sys.exit(0 if time.time() < $until else 1)"; do sleep 0.5; done
    stop "$visitors_pid" 0
    ((STOPPED == 0)) || { echo "bench: visitors failed: $(cat "$dir/visitors.err")" >&2; exit 1; }
    local t_end
    t_end=$(date +%s.%N)
    db_state "$dir/data" >"$dir/at_end.json"
    "${TOOL[@]}" metrics --url "http://127.0.0.1:$METRICS_PORT/metrics" >"$dir/metrics_end.json"
    "${TOOL[@]}" sink --sink-dir "$dir/sink" --t0 "$t0" --until "$t_end" >"$dir/sink.json"
    stop "$pid"
    db_state "$dir/data" >"$dir/after_stop.json"
    stop "$sink_pid"
    # ERROR lines other than the expected surge alerts, and panics.
    local errors
    errors=$(grep -E 'ERROR|panic' "$dir/signupd.log" | grep -vc 'signup surge' || true)
    python3 - "$name" "$level" "$mode" "$flood" "$t0" "$t1" "$t_end" "$QUIET_NOTE" "$errors" "$dir" "$fake" "$FLOOD_NETS" >>"$RESULTS" <<'EOF'
import json, sys
name, level, mode, flood, t0, t1, t_end, quiet, errors, d, fake, nets = sys.argv[1:]
fields = dict(kv.split("=", 1) for kv in flood.split()[1:] if "=" in kv)
load = lambda f: json.load(open(f"{d}/{f}"))
print(json.dumps({
    "name": name, "level": level, "mode": mode, "nets": int(nets), "fake_start": fake,
    "flood": {k: float(v) for k, v in fields.items()}, "flood_secs": round(float(t1) - float(t0), 1),
    "run_secs": round(float(t_end) - float(t0), 1),
    "visitors": load("visitors.json"), "at_flood_end": load("at_flood_end.json"), "at_end": load("at_end.json"),
    "after_stop": load("after_stop.json"), "metrics_flood_end": load("metrics_flood_end.json"),
    "metrics_end": load("metrics_end.json"), "sink": load("sink.json"), "quiet": quiet,
    "signupd_log_error_lines": int(errors),
}))
EOF
    log "$name: done; visitors: $(cat "$dir/visitors.line")"
}

# --- run ------------------------------------------------------------------------------------------
log "parameters: flood ${FLOOD_SECS}s (L0: wrk -t$THREADS -c$CONNS; L1, L3: flood_tool.py over $PY_CONNS connections), budget $BUDGET mails/hour, burst $BURST_EFF, surge past $SURGE_MAX per $SURGE_WINDOW, botnet $FLOOD_NETS /24s, lists: $LISTS, every ${REPEAT_EVERY}th signup one of $REPEAT_VICTIMS repeated victims, $VISITORS visitors (wait up to ${MAIL_WAIT}s), confirm window ${SHORT_TTL}s, runs: $SCENARIOS"
log "signupd $REVISION, built $BUILT_AT; $(nproc) CPUs, $(uname -r); signupd's clock: $([[ $FAKE_CLOCK == 1 ]] && echo "libfaketime" || echo real)"
for scenario in $SCENARIOS; do
    case $scenario in
        L0-v4 | L0-v6 | L1-v4 | L1-v6 | L3-v4 | L3-v6) run_scenario "${scenario%-*}" "${scenario#*-}" ;;
        *) echo "bench: unknown run $scenario (LEVEL-SHAPE: L0, L1, L3 and v4, v6)" >&2; exit 2 ;;
    esac
done

# --- summary --------------------------------------------------------------------------------------
if [[ -n ${SUMMARY_OUT:-} ]]; then mkdir -p "$(dirname "$SUMMARY_OUT")"; fi
{
    echo
    echo "signupd flood benchmark — $(date -u +%Y-%m-%dT%H:%MZ)"
    echo "signupd $REVISION (built $BUILT_AT); $(machine)"
    echo "budget $BUDGET mails/hour, burst $BURST_EFF; surge past $SURGE_MAX per $SURGE_WINDOW; confirm window ${SHORT_TTL}s; lists: $LISTS;"
    echo "  flood ${FLOOD_SECS}s; every ${REPEAT_EVERY}th signup names one of $REPEAT_VICTIMS repeated victims; $VISITORS visitors from their own /24s, 2..$((FLOOD_SECS - 2)) s into the flood"
    python3 - "$RESULTS" "$BUDGET" "$BURST_EFF" "${SUMMARY_OUT:+${SUMMARY_OUT%.*}.md}" <<'EOF'
import json, sys
budget, burst = int(sys.argv[2]), int(sys.argv[3])
md_path = sys.argv[4]
pace = budget / 3600
mb = lambda b: f"{b / 1048576:.2f} MiB"
bound = lambda secs: burst + secs * pace
runs = [json.loads(line) for line in open(sys.argv[1])]
shape = lambda r: {"v6": "one IPv6 /48, a /64 per request", "v4": f"{r['nets']} IPv4 /24s x 254 clients"}[r["mode"]]
for r in runs:
    f, v, s = r["flood"], r["visitors"], r["sink"]
    print()
    print(f"[{r['name']}] {shape(r)}  ({r['quiet']}; signupd clock from {r['fake_start']} UTC)")
    print(f"  flood: {int(f['requests'])} signup POSTs in {r['flood_secs']} s = {f['rps']:.0f}/s"
          + (f" ({int(f['http_requests'])} requests, {f['http_rps']:.0f}/s: {int(f['gets'])} GETs, {int(f['presses'])} presses, {int(f.get('press_303', 0))} answered 303)" if "http_requests" in f else "")
          + f"; 303: {int(f['s303'])} (to the surge page {int(f['s303_send'])}), 429: {int(f['s429'])}, other: {int(f['other'])}, socket errors {int(f['socket_errors'])}; POST p50 {f['p50_us']/1000:.1f} ms, p99 {f['p99_us']/1000:.1f} ms")
    m = r["metrics_end"]
    print(f"  signupd counted: signups {m.get('signupd_signups_total', {})}; mails {m.get('signupd_mails_total', {})}; surge alerts {m.get('signupd_surge_alerts_total', {})}")
    el = r["run_secs"]
    print(f"  sink: {s['mails']} mails in {el} s ({s['flood_mails']} to the flood's victims, {s['visitor_mails']} to visitors; bound {bound(el):.1f}); flood mails in the first 60 s {s.get('flood_mails_first_60s', 0)} (bound {bound(60):.0f}), in the first 10 s {s.get('flood_mails_first_10s', 0)}; repeated victims got {s['repeat_victim_mails']}; most to one address {s['max_mails_one_address']}; alert webhook POSTs {s['alerts']}")
    print("    mails at (s after the flood began; V = a visitor's): " + " ".join(f"{t:.1f}{'V' if k == 'visitor' else ''}" for t, k in s.get("mail_times_s", [])))
    lat = [x["mail_after_s"] for x in v["visitors"]]
    print(f"  visitors: {v['answered_303']}/{len(lat)} answered 303, {v['asked_to_press']} asked to press ({v['press_answered_303']} presses answered 303); mail arrived for {v['mailed']} ({v['mailed_within_60s']} within 60 s), waited up to {v['waited_s_after_last_press']} s after the last press")
    print("    press (or signup) -> mail (s): " + ", ".join("none" if x is None else f"{x:.2f}" for x in lat))
    print("    signed up at (s into the flood): " + ", ".join(f"{x['sent_at_s']:.1f}" for x in v["visitors"]))
    a, e = r["at_flood_end"], r["at_end"]
    print(f"  held (surge, unpressed) outbox rows: {a['outbox_held']} when the flood stopped, {e['outbox_held']} at the end: {a['outbox_held'] - e['outbox_held']} expired unsent; pressed rows {a['outbox_pressed']} -> {e['outbox_pressed']}")
    for key, label in (("at_flood_end", "when the flood stopped (intake drained)"), ("at_end", "at the end (after the confirm window)"), ("after_stop", "after signupd stopped")):
        d = r[key]
        print(f"  {label:40} subscribers {d['subscribers']} (never mailed {d['never_mailed']}), outbox {d['outbox']} (held {d['outbox_held']}, pressed {d['outbox_pressed']}), intake {d['intake']}, address_mails {d['address_mails']}, rate_limits {d['rate_limit_rows']}; db {mb(d['db_bytes'])} + wal {mb(d['wal_bytes'])} (pages {d['pages']}, free {d['free_pages']})")
    print(f"  run {r['run_secs']} s; signupd log lines with ERROR (other than the surge alert) or panic: {r['signupd_log_error_lines']}")

# The table for BENCHMARKS.md: one column per run.
def cell(r, what):
    f, v, s, a, e = r["flood"], r["visitors"], r["sink"], r["at_flood_end"], r["at_end"]
    lat = [x["mail_after_s"] for x in v["visitors"] if x["mail_after_s"] is not None]
    el = r["run_secs"]
    return {
        "rate": f"{int(f['requests']):,} POSTs, {f['rps']:,.0f}/s" + (f" ({f['http_rps']:,.0f} req/s in all)" if "http_rps" in f else ""),
        "303": f"{int(f['s303']):,} ({int(f['s303_send']):,} to the surge page)",
        "429": f"{int(f['s429']):,}",
        "presses": f"{int(f['presses']):,}" if "presses" in f else "—",
        "asked": f"{v['asked_to_press']} of {len(v['visitors'])}",
        "visitors": (f"**{min(lat):.1f}–{max(lat):.1f} s**, {v['mailed_within_60s']} of {len(v['visitors'])} within 60 s" if lat else f"**none** within {v['waited_s_after_last_press']:.0f} s") + ("" if len(lat) in (0, len(v["visitors"])) else f" ({len(v['visitors']) - len(lat)} none)"),
        "first60": f"{s.get('flood_mails_first_60s', 0)} / {bound(60):.0f} = {s.get('flood_mails_first_60s', 0) / bound(60):.2f}",
        "total": f"{s['flood_mails']} / {bound(el):.1f} = {s['flood_mails'] / bound(el):.2f} (in {el:.0f} s)",
        "all": f"{s['mails']} / {bound(el):.1f} = {s['mails'] / bound(el):.2f}",
        "held": f"held {a['outbox_held']:,} → {e['outbox_held']:,}, pressed {a['outbox_pressed']:,} → {e['outbox_pressed']:,}: **{a['outbox_held'] + a['outbox_pressed'] - e['outbox_held'] - e['outbox_pressed']:,} gone**",
        "end": f"{e['subscribers']:,} / {e['outbox']:,} / {e['intake']:,}",
        "alerts": f"{s['alerts']}",
        "maxone": f"{s['max_mails_one_address']}",
    }[what]
rows = [("flood signup POSTs (rate)", "rate"), ("… answered 303", "303"), ("… answered 429", "429"),
        ("… presses (POST /api/send)", "presses"), ("surge alerts (webhook POSTs)", "alerts"),
        ("visitors asked to press", "asked"), ("**visitors: press (or 303) → mail**", "visitors"),
        ("flood mails, first 60 s ÷ bound (6 + 60 × 0.1)", "first60"), ("flood mails, whole run ÷ bound", "total"),
        ("all mails, whole run ÷ bound", "all"), ("most mails to one address", "maxone"),
        ("surge rows (held, pressed) at the flood's end → end of run", "held"),
        ("end of run: subscribers / outbox / intake", "end")]
lines = ["| | " + " | ".join(r["name"] for r in runs) + " |", "| --- |" + " ---: |" * len(runs)]
for label, key in rows:
    lines.append(f"| {label} | " + " | ".join(cell(r, key) for r in runs) + " |")
print()
print("\n".join(lines))
if md_path:
    open(md_path, "w").write("\n".join(lines) + "\n")
EOF
    busy_phases "runs started on a busy machine:"
} | tee "${SUMMARY_OUT:-/dev/null}"
if [[ -n ${SUMMARY_OUT:-} ]]; then cp "$RESULTS" "${SUMMARY_OUT%.*}.jsonl"; fi
