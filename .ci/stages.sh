# Sourced by .ci/run: runs each stage timed, starts the long builds in the background, and prints
# a table of every stage's wall time when the run ends, pass or fail, so a slow or failing stage
# is named in the log.
#
#   stage NAME COMMAND...        runs COMMAND in the foreground; a failure ends the run
#   background [--never-stop] NAME COMMAND...
#                                starts COMMAND at the lowest CPU priority (nice 19), so it uses
#                                only what the foreground stages leave idle; output to a log. If
#                                the run ends first, it is stopped — or, with --never-stop (an
#                                apt-get that must not be cut off mid-install), waited for
#   finish NAME                  waits for it; its log's tail is printed, a failure ends the run
#
# COMMAND is a program or script, never a shell function: bash ignores `set -e` inside a function
# whose caller tests its status, so a failing step in the middle of one would go unnoticed.

CI_LOGS=${CI_LOGS:-$(mktemp -d "${TMPDIR:-/tmp}/signupd-ci.XXXXXX")}
CI_STARTED=$SECONDS
CI_ROWS=()
declare -A CI_PID CI_STARTED_AT CI_LOG CI_NEVER_STOP

ci_row() { # NAME SECONDS RESULT
    CI_ROWS+=("$(printf '%7s  %-8s  %s' "$2" "$3" "$1")")
}

stage() { # NAME COMMAND...
    local name=$1 start=$SECONDS rc=0
    shift
    echo "== $name"
    "$@" || rc=$?
    local took=$((SECONDS - start))
    if ((rc == 0)); then
        ci_row "$name" "$took" ok
        echo "-- $name: ok, ${took} s"
    else
        ci_row "$name" "$took" "FAILED $rc"
        echo "-- $name: FAILED (exit $rc) after ${took} s"
        exit "$rc"
    fi
}

background() { # [--never-stop] NAME COMMAND...
    local never_stop=false name log
    if [[ $1 == --never-stop ]]; then never_stop=true; shift; fi
    name=$1
    shift
    $never_stop && CI_NEVER_STOP[$name]=1
    log="$CI_LOGS/$(tr -c 'a-zA-Z0-9\n' '-' <<<"$name").log"
    echo "== $name: started in the background at nice 19 (log: $log)"
    CI_LOG[$name]=$log
    CI_STARTED_AT[$name]=$SECONDS
    # setsid: its own process group, so an interrupted run can stop all of it. A new session is
    # also a new scheduler autogroup where the kernel has them (sched_autogroup_enabled): the
    # scheduler then shares the CPUs between the groups first, whatever their processes' nice
    # value, and the job would take half the machine from the foreground. So the job lowers its
    # group to nice 19 too. It writes how long it ran beside its log, since it may end long
    # before it is waited for.
    # shellcheck disable=SC2016 # expanded by the job's own shell
    nice -n 19 setsid bash -c '[[ ! -w /proc/self/autogroup ]] || echo 19 >/proc/self/autogroup
        start=$SECONDS; rc=0; "${@:2}" || rc=$?; echo $((SECONDS - start)) >"$1.seconds"; exit $rc' \
        job "$log" "$@" >"$log" 2>&1 </dev/null &
    CI_PID[$name]=$!
}

finish() { # NAME
    local name=$1 start=$SECONDS rc=0
    echo "== $name: waiting for the background job"
    wait "${CI_PID[$name]}" || rc=$?
    unset "CI_PID[$name]"
    local ran waited=$((SECONDS - start))
    ran=$(cat "${CI_LOG[$name]}.seconds" 2>/dev/null || echo $((SECONDS - CI_STARTED_AT[$name])))
    if ((rc == 0)); then
        tail -n 15 "${CI_LOG[$name]}" | sed 's/^/   | /'
        ci_row "$name (background; waited ${waited} s)" "$ran" ok
        echo "-- $name: ok, ${ran} s in the background, ${waited} s of it waited for"
    else
        tail -n 120 "${CI_LOG[$name]}" | sed 's/^/   | /'
        ci_row "$name (background; waited ${waited} s)" "$ran" "FAILED $rc"
        echo "-- $name: FAILED (exit $rc); its whole log: ${CI_LOG[$name]}"
        exit "$rc"
    fi
}

ci_finish() {
    local rc=$? name
    for name in "${!CI_PID[@]}"; do
        local pid=${CI_PID[$name]} status=0
        if [[ -n ${CI_NEVER_STOP[$name]:-} ]] && kill -0 "$pid" 2>/dev/null; then
            echo "== $name: waiting for it to end before stopping (log: ${CI_LOG[$name]})"
            wait "$pid" || status=$?
            ci_row "$name (background, not awaited)" "$((SECONDS - CI_STARTED_AT[$name]))" "exit $status"
        elif kill -0 "$pid" 2>/dev/null; then
            kill -TERM -- "-$pid" 2>/dev/null || true
            ci_row "$name (background, stopped unfinished)" "$((SECONDS - CI_STARTED_AT[$name]))" "stopped"
        else
            wait "$pid" || status=$?
            ci_row "$name (background, not awaited; log: ${CI_LOG[$name]})" "-" "exit $status"
        fi
    done
    echo
    echo "== stage times ($( ((rc == 0)) && echo passed || echo "FAILED, exit $rc"))"
    printf '%7s  %-8s  %s\n' seconds result stage
    printf '%s\n' "${CI_ROWS[@]}"
    printf '%7s  %-8s  %s\n' "$((SECONDS - CI_STARTED))" "" total
}
trap ci_finish EXIT
