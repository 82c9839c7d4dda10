#!/usr/bin/env bash
# End-to-end signup benchmark for signupd; BENCHMARKS.md has the figures and how to read them.
#
#   bash bench/signup.sh      # ~11.5 minutes on an idle 2-core machine, after the release build
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
#    answer itself and the one after it) and with a pause between them;
# 4b. (phase `multistates`) the same with every request naming several lists (MULTI_LISTS: two of
#    one sender, one of another) and the address's states mixed across them; for each gap right
#    after the one-list run, so the two are measured side by side on the same machine.
# Every phase reports the server's peak RSS (VmHWM from /proc/PID/status, MiB, bench/common.sh's
# peak_rss_mib), read right after the measured load ends, before the server is stopped.
#
# Knobs (environment, defaults shown):
#   THREADS=2 CONNS=64 DURATION=20s WARMUP=3s REPEAT=3 LOG_COMPARE=1
#   PACED_SECS=30 PACED_WARMUP=5 PACED_CONNS=64 SWEEP_FRACTIONS="0.25 0.75" (of the median
#   maximum rate; SWEEP_RATES="r1 r2 ..." gives absolute rates instead) SWEEP_SECS=20
#   STATES_N=600 STATES_GAPS="0 20" (ms between requests; both for 4. and 4b.)
#   MULTI_LISTS=news,offers,club: the lists of 4b., in the order the requests name them;
#     MULTI_OWN_SENDER="club": those of them with a sender of their own (Club
#     <letter@club.example>), the others share news's (the default `from`); MULTI_MIX: the state
#     of each list in 4b.'s `mixed` state (states.py --mix; default confirmed,pending_past,unknown)
#   QUIET_MAX=10 QUIET_WAIT=900: before each phase, wait up to QUIET_WAIT s until the machine is
#     at most QUIET_MAX % busy; the summary names phases that never got that quiet
#   SUMMARY_OUT=file, and bench/common.sh's BUILD=1 KEEP_TMP=0 BENCH_SIGNUPD BENCH_CEILING
#   BENCH_REVISION CACHE_MIB (other binaries, what they were built from, `[storage] cache_mib`)
#   PHASES="ceiling max mail paced sweep states multistates": the parts to run; without `max`, PACED_RATE=r
#     gives the paced rate (otherwise half the median maximum) and the sweep uses fractions of 2r;
#     only `ceiling` and `paced` need the ceiling binary, only `paced` and `sweep` the load generator
#   MAIL_PER_HOUR=100000000: the mail phase's [mail] max_mails_per_hour (REPEAT runs, like max)
#   BENCH_LOADGEN=path: another load generator than target/bench-loadgen/release/signupd-loadgen
# Needs wrk, sqlite3, curl, python3 (installed with apt-get when missing), cargo. Everything
# listens on 127.0.0.1 (ports 18080-18082).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

THREADS=${THREADS:-2}
CONNS=${CONNS:-64}
DURATION=${DURATION:-20s}
WARMUP=${WARMUP:-3s}
PACED_SECS=${PACED_SECS:-30}
PACED_WARMUP=${PACED_WARMUP:-5}
PACED_CONNS=${PACED_CONNS:-64}
STATES_N=${STATES_N:-600}
STATES_GAPS=${STATES_GAPS:-0 20}
MULTI_LISTS=${MULTI_LISTS:-news,offers,club}
MULTI_OWN_SENDER=${MULTI_OWN_SENDER:-club}
MULTI_MIX=${MULTI_MIX:-}
SWEEP_FRACTIONS=${SWEEP_FRACTIONS:-0.25 0.75}
SWEEP_RATES=${SWEEP_RATES:-}
SWEEP_SECS=${SWEEP_SECS:-20}
REPEAT=${REPEAT:-3}
QUIET_MAX=${QUIET_MAX:-10}
QUIET_WAIT=${QUIET_WAIT:-900}
LOG_COMPARE=${LOG_COMPARE:-1}
PHASES=${PHASES:-ceiling max mail paced sweep states multistates}
PACED_RATE=${PACED_RATE:-}
MAIL_PER_HOUR=${MAIL_PER_HOUR:-100000000}
has() { [[ " $PHASES " == *" $1 "* ]]; }
if ! has max && { has paced || has sweep; } && [[ -z $PACED_RATE && -z $SWEEP_RATES ]]; then
    echo "bench: without the max phase, set PACED_RATE (and/or SWEEP_RATES)" >&2
    exit 2
fi

PORT=18080 # signupd's
CEILING_PORT=18081
STATES_PORT=18082

# Debian packages for the tools (wrk 4.1.0 on bookworm; there is no wrk2).
require_tools wrk sqlite3 curl python3
bench_tmp bench

# --- build --------------------------------------------------------------------------------------
# Only `ceiling` and `paced` need the ceiling, only `paced` and `sweep` the load generator.
if has ceiling || has paced; then release_binaries bench_ceiling; else release_binaries; fi
CEILING=$TMP/bin/bench_ceiling
LOADGEN=$TMP/bin/signupd-loadgen
if has paced || has sweep; then
    LOADGEN_TARGET=target/bench-loadgen
    BUILT_LOADGEN=${BENCH_LOADGEN:-$LOADGEN_TARGET/release/signupd-loadgen}
    if [[ ! -x $BUILT_LOADGEN ]]; then
        log "building the paced load generator (bench/loadgen)"
        CARGO_TARGET_DIR=$LOADGEN_TARGET cargo build --release --locked --manifest-path bench/loadgen/Cargo.toml
    fi
    cp "$BUILT_LOADGEN" "$LOADGEN"
fi

# --- helpers ------------------------------------------------------------------------------------
start_ceiling() { # as CEILING_PID
    "$CEILING" "127.0.0.1:$CEILING_PORT" 2>>"$TMP/ceiling.log" &
    CEILING_PID=$!
    PIDS+=("$CEILING_PID")
    # Any answer (404 on GET /) means it is listening.
    wait_for "$CEILING_PID" answers "http://127.0.0.1:$CEILING_PORT/"
}

run_wrk() { # NAME URL -> prints the SUMMARY line
    check_answer "$2"
    wrk_warmup "$2" >"$TMP/$1.warmup.txt"
    wrk_measured "$2" >"$TMP/$1.wrk.txt"
    cat "$TMP/$1.wrk.txt" >&2
    grep '^SUMMARY' "$TMP/$1.wrk.txt"
}

# Every server phase's peak RSS, for the summary's highest one.
: >"$TMP/rss.txt"
note_rss() { # LABEL MIB
    echo "$2 $1" >>"$TMP/rss.txt"
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
phase_begin() { # PHASE: after wait_quiet
    wait_quiet "$1"
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
    echo "cpus:   $(nproc) ($(cpu_model))"
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
    phase_begin "ceiling run $run"
    log "1. ceiling run $run/$REPEAT: bench_ceiling, $(wrk_cmd)"
    start_ceiling
    run_wrk "ceiling-$run" "http://127.0.0.1:$CEILING_PORT/api/signup" >"$TMP/line"
    rss=$(peak_rss_mib "$CEILING_PID")
    stop "$CEILING_PID"
    phase_end
    echo "$(cat "$TMP/line") foreign_cpu=$PH_FOREIGN rss_mib=$rss" >>"$TMP/ceiling.runs"
done

# --- 2. signupd, maximum rate ----------------------------------------------------------------------
# common.sh's max_run on a fresh server and database: after each run signupd's peak RSS, how far
# the intake worker is behind (intake rows left when wrk stops), how long it then needs to catch
# up, the end-to-end rate (rows applied to `subscribers` from the start of the measured run until
# intake is empty, over that time), and the mail files written from the start of the measured run
# until 1 s after it (mails_1s; in the directory then, with the warm-up's: mails_total).
# CONFIG_MAIL="max_mails_per_hour = N" changes the budget (default: signupd's 1,000).
signupd_max_run() { # NAME RUST_LOG RUNS-FILE PHASE: appends the SUMMARY line + backlog fields
    local dir=$TMP/$1
    phase_begin "$4"
    serve_start "$dir" "$2"
    max_run "$dir"
    cat "$dir.wrk.txt" >&2
    serve_stop
    phase_end
    note_rss "$1" "$RUN_RSS"
    echo "$RUN_SUMMARY backlog=$RUN_BACKLOG drain_s=$RUN_DRAIN_S e2e_rps=$RUN_E2E_RPS applied_ratio=$RUN_APPLIED_RATIO rows=$RUN_ROWS answered=$RUN_ANSWERED" \
        "locked_errors=$(grep -c 'database is locked' "$dir.log" || true) foreign_cpu=$PH_FOREIGN mails_1s=$RUN_MAILS_1S" \
        "mails_total=$RUN_MAILS_TOTAL rss_mib=$RUN_RSS" | tee -a "$3" >&2
}

: >"$TMP/signupd.runs"
for run in $(has max && seq 1 "$REPEAT"); do
    log "2. signupd run $run/$REPEAT (RUST_LOG=warn), $(wrk_cmd)"
    signupd_max_run "max-$run" warn "$TMP/signupd.runs" "signupd run $run"
done
CEIL=$(median_run "$TMP/ceiling.runs")
MAX=$(median_run "$TMP/signupd.runs")

INFO=
if [[ $LOG_COMPARE == 1 ]] && has max; then
    log "2b. signupd with the default log filter (info: one access-log line per request)"
    signupd_max_run info info "$TMP/info.runs" "signupd info run"
    INFO=$(cat "$TMP/info.runs")
fi

# --- 2c. the maximum rate with the mail budget out of the way --------------------------------------
: >"$TMP/mail.runs"
for run in $(has mail && seq 1 "$REPEAT"); do
    log "2c. signupd mail run $run/$REPEAT with max_mails_per_hour = $MAIL_PER_HOUR (mail written during the load), $(wrk_cmd)"
    CONFIG_MAIL="max_mails_per_hour = $MAIL_PER_HOUR" signupd_max_run "mail-$run" warn "$TMP/mail.runs" "signupd mail run $run"
done
MAIL=$(median_run "$TMP/mail.runs")

# --- 3. half the maximum rate, paced -------------------------------------------------------------
# signupd on a fresh database NAME paced at RATE for SECS after WARMUP s by the load generator:
# its line in PACED_LINE, then the peak RSS (PACED_RSS, noted as LABEL) and the intake backlog.
paced_signupd() { # NAME LABEL RATE SECS WARMUP
    phase_begin "$2"
    serve_start "$TMP/$1"
    check_answer "http://127.0.0.1:$PORT/api/signup"
    PACED_LINE=$("$LOADGEN" "127.0.0.1:$PORT" /api/signup "$3" "$4" "$PACED_CONNS" "$5")
    PACED_RSS=$(peak_rss_mib "$PID")
    note_rss "$2" "$PACED_RSS"
    PACED_BACKLOG=$(sql "$TMP/$1/signupd.sqlite3" 'SELECT count(*) FROM intake')
    wait_intake "$TMP/$1/signupd.sqlite3"
    serve_stop
    phase_end
}

HALF=${PACED_RATE:-$(awk -v r="$(field "$MAX" rps)" 'BEGIN { printf "%d", r / 2 }')}
PACED=
PACED_CEIL=
if has paced; then
    log "3. signupd paced at $HALF req/s (half of the median maximum), $PACED_CONNS connections, ${PACED_SECS}s + ${PACED_WARMUP}s warm-up"
    paced_signupd paced paced "$HALF" "$PACED_SECS" "$PACED_WARMUP"
    PACED="$PACED_LINE backlog=$PACED_BACKLOG locked_errors=$(grep -c 'database is locked' "$TMP/paced.log" || true) foreign_cpu=$PH_FOREIGN rss_mib=$PACED_RSS"
    echo "$PACED" >&2

    log "3b. ceiling paced at the same $HALF req/s"
    phase_begin "paced ceiling"
    start_ceiling
    PACED_CEIL=$("$LOADGEN" "127.0.0.1:$CEILING_PORT" /api/signup "$HALF" "$PACED_SECS" "$PACED_CONNS" "$PACED_WARMUP")
    rss=$(peak_rss_mib "$CEILING_PID")
    stop "$CEILING_PID"
    phase_end
    PACED_CEIL="$PACED_CEIL foreign_cpu=$PH_FOREIGN rss_mib=$rss"
    echo "$PACED_CEIL" >&2
fi

# --- 3c. paced sweep -----------------------------------------------------------------------------
if [[ -z $SWEEP_RATES ]]; then
    SWEEP_RATES=$(for f in $SWEEP_FRACTIONS; do awk -v r="$((2 * HALF))" -v f="$f" 'BEGIN { printf "%d ", r * f }'; done)
fi
: >"$TMP/sweep.runs"
for rate in $(has sweep && echo "$SWEEP_RATES"); do
    log "3c. signupd paced at $rate req/s, ${SWEEP_SECS}s + 3s warm-up"
    paced_signupd "sweep-$rate" "sweep $rate/s" "$rate" "$SWEEP_SECS" 3
    echo "$PACED_LINE backlog=$PACED_BACKLOG foreign_cpu=$PH_FOREIGN rss_mib=$PACED_RSS" | tee -a "$TMP/sweep.runs" >&2
done

# --- 4. four address states; 4b. the same across several lists -----------------------------------
# The [[lists]] tables of MULTI_LISTS besides `news` (which config always writes), for CONFIG_MORE.
multi_lists_toml() {
    local name
    for name in ${MULTI_LISTS//,/ }; do
        [[ $name == news ]] && continue
        echo "[[lists]]"
        echo "id = \"$name\""
        if [[ " $MULTI_OWN_SENDER " == *" $name "* ]]; then
            echo 'from = "Club <letter@club.example>"'
        else
            echo 'from = "Newsletter <no-reply@example.com>"' # news's (the default): one sender
        fi
    done
}
# One states.py run on a fresh server: KIND `states` (one list) or `multistates` (MULTI_LISTS).
states_run() { # KIND GAP
    local kind=$1 gap=$2 name=$1-$2 more= args=() heading="requests ${2} ms apart:"
    if [[ $kind == multistates ]]; then
        more=$(multi_lists_toml)
        args=(--lists "$MULTI_LISTS")
        [[ -n $MULTI_MIX ]] && args+=(--mix "$MULTI_MIX")
        heading="lists $MULTI_LISTS in every request (own sender: $MULTI_OWN_SENDER), requests ${gap} ms apart:"
        log "4b. answer timing by mix of address states over $MULTI_LISTS ($STATES_N samples per state, one keep-alive connection, ${gap} ms between requests)"
    else
        log "4. answer timing by address state ($STATES_N samples per state, one keep-alive connection, ${gap} ms between requests)"
    fi
    phase_begin "$kind, gap $gap ms"
    CONFIG_MORE=$more PORT=$STATES_PORT serve_start "$TMP/$name"
    python3 bench/states.py --port "$STATES_PORT" --db "$TMP/$name/signupd.sqlite3" \
        --n "$STATES_N" --gap-ms "$gap" "${args[@]}" --json "$TMP/$name.json" >"$TMP/$name.txt" || true
    rss=$(peak_rss_mib "$PID")
    note_rss "$kind, gap $gap ms" "$rss"
    serve_stop
    phase_end
    {
        echo "$heading"
        sed 's/^/  /' "$TMP/$name.txt"
        echo "  \"database is locked\" errors: $(grep -c 'database is locked' "$TMP/$name.log" || true); other CPU $PH_FOREIGN %; signupd peak RSS $rss MiB"
    } >>"$TMP/states.out"
    cat "$TMP/$name.txt" >&2
}
# The kinds of state run, in the order they alternate (for each gap, one list then several).
STATE_KINDS=$(for kind in states multistates; do if has "$kind"; then echo "$kind"; fi; done)
: >"$TMP/states.out"
for gap in $([[ -n $STATE_KINDS ]] && echo "$STATES_GAPS"); do
    for kind in $STATE_KINDS; do states_run "$kind" "$gap"; done
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
    local gap kind line
    for kind in $STATE_KINDS; do
        if [[ $kind == multistates ]]; then echo "    lists $MULTI_LISTS in every request, states mixed across them:"; fi
        for gap in $STATES_GAPS; do
            line=$(grep '^STATES_RESULT' "$TMP/$kind-$gap.txt" || echo 'STATES_RESULT target_met=no (states.py failed)')
            printf '    %5s ms apart: the answer: median spread %s %% (random-relabelling p %s), min KS p vs unknown %s  %s\n' "$gap" \
                "$(field "$line" median_spread_pct)" "$(field "$line" median_spread_perm_p)" \
                "$(field "$line" min_ks_p_vs_unknown)" "$([[ $(field "$line" answer_met) == yes ]] && echo MET || echo MISSED)"
            printf '    %5s           the next answer: median spread %s %% (random-relabelling p %s), min KS p vs after-unknown %s  %s; state table actions as expected: %s\n' "" \
                "$(field "$line" lag1_median_spread_pct)" "$(field "$line" lag1_spread_perm_p)" "$(field "$line" min_ks_p_lag1)" \
                "$([[ $(field "$line" lag1_met) == yes ]] && echo MET || echo MISSED)" "$(field "$line" paths_ok)"
        done
    done
}

{
    echo
    echo "=================================== signupd signup benchmark ==================================="
    cat "$TMP/machine.txt"
    echo "signupd:      $REVISION, built $BUILT_AT"
    echo "wrk command:  $(wrk_cmd) URL   (each run on a fresh server and database, after a ${WARMUP} warm-up)"
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
    for gap in $STATES_GAPS; do
        for kind in states multistates; do cp "$TMP/$kind-$gap.json" "${SUMMARY_OUT%.*}.$kind-$gap.json" 2>/dev/null || true; done
    done
fi
