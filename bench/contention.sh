#!/usr/bin/env bash
# Where does a signup's time go under load? Runs signupd under strace (seccomp-bpf filter: only
# fsync/fdatasync/clock_nanosleep stop the process, so the overhead is small; strace still slows
# it, so compare shares, not absolute rates), drives it with the benchmark's wrk command, and
# prints per thread: fsync count and time, and sleeps — SQLite's busy handler sleeps 1, 2, 5, 10,
# 15, 20, 25, 25, 25, 50, 50, 100 ms … between attempts while another connection holds the write
# lock; nothing else in signupd calls clock_nanosleep on these threads.
# Then, on a server not started under strace, a 3 s sample in the middle of the same load with
# strace attached (fcntl, pwrite64, fsync): every write transaction per thread, from taking
# SQLite's WAL write lock (fcntl F_WRLCK on byte 120 of the -shm file) to releasing it, and
# whether it wrote anything. Attaching slows the server a lot, so only the counts matter.
# Last, the same load with the database on tmpfs (/dev/shm: fsync is free) for comparison.
#
#   bash bench/contention.sh   # needs strace, wrk, sqlite3; SIGNUPD=path (default target/release/signupd)
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
DURATION=${DURATION:-20s}
PORT=18083
SIGNUPD=${SIGNUPD:-target/release/signupd}
TMP=$(mktemp -d /tmp/signupd-contention.XXXXXX)
SHM=$(mktemp -d /dev/shm/signupd-contention.XXXXXX)
PID=
cleanup() {
    [[ -n $PID ]] && kill -TERM "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
    rm -rf "$TMP" "$SHM"
}
trap cleanup EXIT

config() { # DATA_DIR
    mkdir -p "$1/mail"
    cat >"$1/config.toml" <<EOF
[server]
listen = "127.0.0.1:$PORT"
[storage]
data_dir = "$1"
[mail]
file_dir = "$1/mail"
[signup]
rate_limits = [ { window = "1m", max = 100000000 } ]
resend_cooldown = "10m"
[[lists]]
id = "news"
EOF
}

up() {
    for _ in $(seq 1 300); do curl -s -o /dev/null "http://127.0.0.1:$PORT/healthz" && return 0; sleep 0.1; done
    return 1
}

drive() { # DATA_DIR -> wrk summary line, intake backlog
    wrk -t2 -c64 -d3s -s bench/signup.lua "http://127.0.0.1:$PORT/api/signup" >/dev/null
    wrk -t2 -c64 -d"$DURATION" -s bench/signup.lua --latency "http://127.0.0.1:$PORT/api/signup" | grep '^SUMMARY'
    echo "intake backlog when wrk stopped: $(sqlite3 "$1/signupd.sqlite3" 'SELECT count(*) FROM intake')"
}

echo "== signupd under strace, database on $(df --output=source "$TMP" | tail -1)"
config "$TMP/data"
RUST_LOG=warn strace -f --seccomp-bpf -qq -ttt -T -e trace=fsync,fdatasync,clock_nanosleep -o "$TMP/strace.txt" \
    "$SIGNUPD" serve --config "$TMP/data/config.toml" 2>"$TMP/stderr.log" &
PID=$!
up
sleep 0.5
SERVER=$(pgrep -P "$PID")
for task in /proc/"$SERVER"/task/*; do echo "$(basename "$task") $(tr ' ' _ <"$task/comm")"; done >"$TMP/threads.txt"
T0=$(date +%s.%N)
drive "$TMP/data"
T1=$(date +%s.%N)
for task in /proc/"$SERVER"/task/*; do echo "$(basename "$task") $(tr ' ' _ <"$task/comm")"; done >>"$TMP/threads.txt"
kill -TERM "$SERVER" # strace exits with it
wait "$PID" 2>/dev/null || true
PID=
echo "\"database is locked\" errors: $(grep -c 'database is locked' "$TMP/stderr.log" || true)"
python3 - "$TMP/strace.txt" "$TMP/threads.txt" "$T0" "$T1" <<'EOF'
import collections, re, sys
trace, threads, t0, t1 = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
names = dict(line.split(maxsplit=1) for line in open(threads))
names = {tid: name.strip() for tid, name in names.items()}
stats = collections.defaultdict(lambda: collections.Counter())
line_re = re.compile(r"^(\d+) +([\d.]+) (?:<\.\.\. )?(\w+)\(?.*<([\d.]+)>$")
for line in open(trace):
    m = line_re.match(line.strip())
    if not m or "unfinished" in line:
        continue
    tid, ts, call, dur = m.group(1), float(m.group(2)), m.group(3), float(m.group(4))
    if not (t0 <= ts <= t1):
        continue
    stats[tid][call + "_n"] += 1
    stats[tid][call + "_s"] += dur
wall = t1 - t0
print(f"during the measured {wall:.1f} s (warm-up included):")
print(f"{'thread':<26}{'fsyncs':>8}{'fsync s':>9}{'fsync avg':>11}{'sleeps':>8}{'sleep s':>9}{'sleep % of wall':>17}")
total = collections.Counter()
for tid, c in sorted(stats.items(), key=lambda kv: -kv[1]["fsync_n"]):
    n = c["fsync_n"] + c["fdatasync_n"]
    s = c["fsync_s"] + c["fdatasync_s"]
    total.update(c)
    print(f"{names.get(tid, '?') + ' ' + tid:<26}{n:>8}{s:>9.2f}{(s / n * 1e3 if n else 0):>9.2f}ms"
          f"{c['clock_nanosleep_n']:>8}{c['clock_nanosleep_s']:>9.2f}{100 * c['clock_nanosleep_s'] / wall:>16.0f}%")
print(f"{'all threads':<26}{total['fsync_n'] + total['fdatasync_n']:>8}"
      f"{total['fsync_s'] + total['fdatasync_s']:>9.2f}{'':>11}{total['clock_nanosleep_n']:>8}{total['clock_nanosleep_s']:>9.2f}")
EOF

echo
echo "== write transactions per thread: 3 s sample with strace attached, after 10 s of load"
config "$TMP/locks"
RUST_LOG=warn "$SIGNUPD" serve --config "$TMP/locks/config.toml" 2>"$TMP/locks.log" &
PID=$!
up
wrk -t2 -c64 -d16s -s bench/signup.lua "http://127.0.0.1:$PORT/api/signup" >/dev/null &
WRK=$!
sleep 10
for task in /proc/"$PID"/task/*; do echo "$(basename "$task") $(tr ' ' _ <"$task/comm")"; done >"$TMP/threads2.txt"
timeout 3 strace -f -qq -e trace=fcntl,fsync,pwrite64 -p "$PID" -o "$TMP/locks.txt" || true
wait "$WRK"
kill -TERM "$PID"
wait "$PID" 2>/dev/null || true
PID=
python3 - "$TMP/locks.txt" "$TMP/threads2.txt" <<'EOF'
import collections, sys
names = {}
for line in open(sys.argv[2]):
    tid, name = line.split(maxsplit=1)
    names[tid] = name.strip()
open_txn = {}  # tid -> wrote anything
stats = collections.defaultdict(collections.Counter)
for line in open(sys.argv[1]):
    parts = line.split(maxsplit=1)
    if len(parts) < 2:
        continue
    tid, rest = parts
    if rest.startswith("fcntl") and "l_start=120," in rest:
        if "F_WRLCK" in rest and rest.rstrip().endswith("= 0"):
            open_txn[tid] = False
        elif "F_UNLCK" in rest and tid in open_txn:
            stats[tid]["writing" if open_txn.pop(tid) else "empty"] += 1
    elif rest.startswith(("pwrite64", "fsync")) and tid in open_txn:
        open_txn[tid] = True
total = collections.Counter()
print(f"{'thread':<28}{'write txns':>11}{'wrote':>8}{'empty':>8}")
for tid, c in sorted(stats.items(), key=lambda kv: -(kv[1]["writing"] + kv[1]["empty"])):
    total.update(c)
    print(f"{names.get(tid, '?') + ' ' + tid:<28}{c['writing'] + c['empty']:>11}{c['writing']:>8}{c['empty']:>8}")
n = total["writing"] + total["empty"]
print(f"{'all threads':<28}{n:>11}{total['writing']:>8}{total['empty']:>8}"
      f"   ({100 * total['empty'] / max(1, n):.0f} % of write transactions wrote nothing)")
EOF

echo
echo "== the same load, database on tmpfs ($SHM: fsync costs nothing), no strace"
config "$SHM/data"
RUST_LOG=warn "$SIGNUPD" serve --config "$SHM/data/config.toml" 2>"$SHM/stderr.log" &
PID=$!
up
drive "$SHM/data"
kill -TERM "$PID"
wait "$PID" 2>/dev/null || true
PID=
echo "\"database is locked\" errors: $(grep -c 'database is locked' "$SHM/stderr.log" || true)"
