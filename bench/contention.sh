#!/usr/bin/env bash
# Where does a signup's time go under load? Since 14b35a4 one writer thread ("signupd-writer")
# runs every write in group-committed batches, so the questions are: how busy is that thread,
# how many commands share a commit, what the fsyncs cost it, and who else uses the two CPUs.
# Every part drives signupd with bench/signup.sh's wrk command (after a 3 s warm-up):
#
#  1. no tracer: CPU seconds per thread over the measured run (/proc/PID/task/*/stat), next to
#     the load generator's own CPU; what the writer thread does with its wall time;
#  2. strace with a seccomp-bpf filter (only fsync/fdatasync stop the process, so the overhead
#     is small; compare shares, not rates): commits (fsyncs) per second and per thread, their
#     time, and commands per commit = (answered requests + intake chunks) / WAL commits;
#  3. perf, in the middle of a run: the writer thread's CPU, fsyncs and page writes (perf stat
#     -t on syscall tracepoints); samples of every CPU by thread and binary (signupd's own code,
#     the kernel, libc; the release binary has no symbols, so user time is split by thread, not
#     by function); the writer thread's samples by kernel symbol (where its system time goes);
#  4. the same load with the database on tmpfs (/dev/shm: fsync is free), no tracer.
#
#   bash bench/contention.sh   # ~2.5 minutes; PARTS="1 2 3 4" picks parts; needs strace, perf (optional), wrk, sqlite3;
#                              # BENCH_SIGNUPD=path (default target/release/signupd, built only when
#                              # missing; BUILD=1 rebuilds it), DURATION=20s, KEEP_TMP=0
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
DURATION=${DURATION:-20s}
PARTS=${PARTS:-1 2 3 4}
part() { [[ " $PARTS " == *" $1 "* ]]; }
PORT=18083
URL=http://127.0.0.1:$PORT/api/signup
THREADS=2 CONNS=64 WARMUP=3s # bench/signup.sh's defaults
BENCH_SIGNUPD=${BENCH_SIGNUPD:-${SIGNUPD:-target/release/signupd}}
BUILD=${BUILD:-0}

require_tools wrk sqlite3 strace curl
bench_tmp contention
shm_tmp contention
release_binaries

measured() { wrk_measured "$URL" | grep '^SUMMARY'; }
backlog() { echo "intake backlog when wrk stopped: $(sql "$1/signupd.sqlite3" 'SELECT count(*) FROM intake')"; }

# tid comm utime+stime (ticks) for every thread of PID
threads() { # PID
    local task
    for task in /proc/"$1"/task/*; do
        awk -v tid="$(basename "$task")" '{ sub(/^[^)]*\) /, ""); print tid, $12 + $13 }' "$task/stat" 2>/dev/null |
            paste -d' ' - <(tr ' ' _ <"$task/comm" 2>/dev/null || echo '?')
    done
}

# --- 1. per-thread CPU, no tracer ---------------------------------------------------------------
if part 1; then
echo "== 1. CPU per thread, no tracer, database on $(df --output=source "$TMP" | tail -1)"
serve_start "$TMP/cpu"
wrk_warmup "$URL" >/dev/null
threads "$PID" >"$TMP/threads0"
cp /proc/"$PID"/io "$TMP/io0"
DB_BYTES0=$(stat -c %s "$TMP/cpu/signupd.sqlite3")
ROWS0=$(sql "$TMP/cpu/signupd.sqlite3" 'SELECT count(*) FROM subscribers')
T0=$(date +%s.%N)
times >"$TMP/times0"
measured >"$TMP/cpu.summary"
times >"$TMP/times1"
T1=$(date +%s.%N)
threads "$PID" >"$TMP/threads1"
cp /proc/"$PID"/io "$TMP/io1"
ROWS1=$(sql "$TMP/cpu/signupd.sqlite3" 'SELECT count(*) FROM subscribers')
cat "$TMP/cpu.summary"
backlog "$TMP/cpu"
serve_stop
# Bytes signupd wrote (write(2)/pwrite(2) totals, and what reached the block layer) per answered
# request and per row applied to `subscribers` during the run; the database file's growth for scale.
python3 - "$TMP/io0" "$TMP/io1" "$(sed -n 's/.*requests=\([0-9]*\).*/\1/p' "$TMP/cpu.summary")" "$ROWS0" "$ROWS1" \
    "$DB_BYTES0" "$(stat -c %s "$TMP/cpu/signupd.sqlite3")" <<'EOF2'
import sys
def io(path):
    return {k: int(v) for k, v in (line.split(": ") for line in open(path))}
a, b = io(sys.argv[1]), io(sys.argv[2])
requests, applied = int(sys.argv[3]), int(sys.argv[5]) - int(sys.argv[4])
d = {k: b[k] - a[k] for k in a}
print(f"I/O over the run: {requests} answered, {applied} rows applied to subscribers; "
      f"written by write/pwrite {d['wchar'] / 1e6:.0f} MB ({d['wchar'] / max(1, requests) / 1024:.1f} KiB per answered request, "
      f"{d['syscw']} write calls), reached the disk {d['write_bytes'] / 1e6:.0f} MB; database file grew "
      f"{(int(sys.argv[7]) - int(sys.argv[6])) / 1e6:.0f} MB ({(int(sys.argv[7]) - int(sys.argv[6])) / max(1, applied):.0f} bytes per applied row)")
EOF2
python3 - "$TMP/threads0" "$TMP/threads1" "$T0" "$T1" "$(getconf CLK_TCK)" "$TMP/times0" "$TMP/times1" <<'EOF'
import collections, re, sys
def load(path):
    out = {}
    for line in open(path):
        tid, ticks, name = line.split()
        out[tid] = (int(ticks), name)
    return out
a, b = load(sys.argv[1]), load(sys.argv[2])
wall, hz = float(sys.argv[4]) - float(sys.argv[3]), int(sys.argv[5])
groups = collections.defaultdict(lambda: [0.0, 0])
for tid, (ticks, name) in b.items():
    cpu = (ticks - a.get(tid, (0, name))[0]) / hz
    key = re.sub(r"[-_]?\d+$", "", name)
    groups[key][0] += cpu
    groups[key][1] += 1
def children(path):  # bash `times`, second line: children's user and system time
    u, s = open(path).read().splitlines()[1].split()
    f = lambda t: float(t.split("m")[0]) * 60 + float(t.split("m")[1].rstrip("s"))
    return f(u) + f(s)
wrk = children(sys.argv[7]) - children(sys.argv[6])
total = sum(v[0] for v in groups.values())
print(f"over the measured {wall:.1f} s (2 CPUs = {2 * wall:.1f} CPU s):")
print(f"{'thread (group)':<28}{'threads':>8}{'CPU s':>8}{'% of one core':>15}")
for name, (cpu, n) in sorted(groups.items(), key=lambda kv: -kv[1][0]):
    if cpu >= 0.05:
        print(f"{name:<28}{n:>8}{cpu:>8.2f}{100 * cpu / wall:>14.0f}%")
print(f"{'signupd, all threads':<28}{'':>8}{total:>8.2f}{100 * total / wall:>14.0f}%")
print(f"{'wrk (load generator)':<28}{'':>8}{wrk:>8.2f}{100 * wrk / wall:>14.0f}%")
EOF

fi

# --- 2. commits: fsyncs per thread under a seccomp-filtered strace --------------------------------
if part 2; then
echo
echo "== 2. commits (fsync/fdatasync) per thread, strace with a seccomp filter"
RUST_LOG=warn strace -f --seccomp-bpf -qq -y -ttt -T -e trace=fsync,fdatasync -o "$TMP/strace.txt" \
    "$SIGNUPD" serve --config "$(config "$TMP/data")" 2>"$TMP/stderr.log" &
STRACE=$!
PIDS+=("$STRACE")
wait_for "$STRACE" answers "http://127.0.0.1:$PORT/healthz"
sleep 0.5
SERVER=$(pgrep -P "$STRACE")
wrk_warmup "$URL" >/dev/null
for task in /proc/"$SERVER"/task/*; do echo "$(basename "$task") $(tr ' ' _ <"$task/comm")"; done >"$TMP/threads.txt"
T0=$(date +%s.%N)
measured | tee "$TMP/strace.summary"
T1=$(date +%s.%N)
backlog "$TMP/data"
sleep 1
for task in /proc/"$SERVER"/task/*; do echo "$(basename "$task") $(tr ' ' _ <"$task/comm")"; done >>"$TMP/threads.txt"
kill -TERM "$SERVER"
stop "$STRACE" 0 # strace exits with it
python3 - "$TMP/strace.txt" "$TMP/threads.txt" "$T0" "$T1" "$(sed -n 's/.*requests=\([0-9]*\).*/\1/p' "$TMP/strace.summary")" <<'EOF'
import collections, re, sys
trace, threads, t0, t1, requests = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
names = {}
for line in open(threads):
    tid, name = line.split(maxsplit=1)
    names[tid] = name.strip()
stats = collections.defaultdict(collections.Counter)
by_file = collections.defaultdict(list)
wal_commits = []  # completion times of WAL fsyncs: one per commit of the writer
pending = {}
line_re = re.compile(r"^(\d+) +([\d.]+) (?:<\.\.\. )?(\w+)\(?.*<([\d.]+)>$")
file_re = re.compile(r"\(\d+<([^>]*)>")
for line in open(trace):
    line = line.strip()
    if line.endswith("<unfinished ...>"):
        f = file_re.search(line)
        pending[line.split()[0]] = f.group(1) if f else "?"
        continue
    m = line_re.match(line)
    if not m:
        continue
    tid, ts, call, dur = m.group(1), float(m.group(2)), m.group(3), float(m.group(4))
    f = file_re.search(line)
    path = f.group(1) if f else pending.pop(tid, "?")
    if not (t0 <= ts <= t1):
        continue
    stats[tid]["n"] += 1
    stats[tid]["s"] += dur
    by_file[path.rsplit("/", 1)[-1]].append(dur)
    if path.endswith("-wal"):
        wal_commits.append(ts + dur)
wall = t1 - t0
print(f"during the measured {wall:.1f} s: {requests} answered requests ({requests / wall:.0f}/s)")
print(f"{'thread':<28}{'fsyncs':>8}{'per s':>8}{'fsync s':>9}{'avg':>9}{'% of wall':>11}")
writer = 0
for tid, c in sorted(stats.items(), key=lambda kv: -kv[1]["n"]):
    name = names.get(tid, "?")
    if name.startswith("signupd-writer"):
        writer += c["n"]
    print(f"{name + ' ' + tid:<28}{c['n']:>8}{c['n'] / wall:>8.0f}{c['s']:>9.2f}{c['s'] / c['n'] * 1e3:>7.2f}ms{100 * c['s'] / wall:>10.0f}%")
for name, xs in sorted(by_file.items(), key=lambda kv: -len(kv[1])):
    xs.sort()
    q = lambda f: xs[min(len(xs) - 1, int(f * len(xs)))] * 1e3  # noqa: E731
    print(f"  {name:<24} {len(xs):>6} fsyncs, {sum(xs):.2f} s; p50 {q(0.5):.2f} ms, p99 {q(0.99):.2f} ms, max {xs[-1] * 1e3:.1f} ms")
wal_commits.sort()
gaps = sorted(b - a for a, b in zip(wal_commits, wal_commits[1:]))
if gaps:
    q = lambda f: gaps[min(len(gaps) - 1, int(f * len(gaps)))] * 1e3  # noqa: E731
    long = [g for g in gaps if g > 0.010]
    print(f"time between two WAL commits (one batch: its commands, its page writes, its fsync): p50 {q(0.5):.2f} ms, "
          f"p90 {q(0.9):.2f} ms, p99 {q(0.99):.2f} ms, max {gaps[-1] * 1e3:.1f} ms; {len(long)} gaps over 10 ms "
          f"take {100 * sum(long) / wall:.0f} % of the wall time")
if writer:
    print(f"writer fsyncs {writer} (WAL commits, plus the checkpoints' database-file fsyncs): "
          f"at most {requests / writer:.1f} signups per fsync on average, and more per commit")
EOF

fi

# --- 3. perf: samples per thread and binary; the writer thread's syscalls and kernel paths -------
echo
if ! part 3; then
    :
elif command -v perf >/dev/null && perf record -o /dev/null -- true 2>/dev/null; then
    echo "== 3. perf, three 5 s windows in the middle of a 25 s run"
    serve_start "$TMP/perf"
    wrk_warmup "$URL" >/dev/null
    wrk -t2 -c64 -d25s -s bench/signup.lua "$URL" >"$TMP/perf.wrk" &
    WRK=$!
    sleep 4
    WRITER=$(grep -l '^signupd-writer' /proc/"$PID"/task/*/comm | head -1 | cut -d/ -f5)
    echo "-- a. the writer thread ($WRITER): perf stat -t, 5 s"
    perf stat -x, -t "$WRITER" -e task-clock,syscalls:sys_enter_fsync,syscalls:sys_enter_fdatasync,syscalls:sys_enter_pwrite64,syscalls:sys_enter_pread64 \
        -o "$TMP/writer.stat" -- sleep 5 2>/dev/null
    echo "-- b. every CPU, 5 s (-F 999), samples by thread and binary, and by function if the binary has symbols"
    perf record -q -F 999 -a -o "$TMP/perf.data" -- sleep 5 2>/dev/null
    echo "-- c. the writer thread with call graphs, 5 s"
    perf record -q -F 999 -g -t "$WRITER" -o "$TMP/writer.data" -- sleep 5 2>/dev/null
    wait "$WRK"
    SERVED=$PID
    serve_stop
    RPS=$(awk '/Requests\/sec/ { print $2 }' "$TMP/perf.wrk")
    echo "wrk over the 25 s: $RPS req/s"
    python3 - "$TMP/writer.stat" "$RPS" <<'EOF2'
import sys
counts = {}
for line in open(sys.argv[1]):
    parts = line.strip().split(",")
    if len(parts) > 2 and not line.startswith("#"):
        try:
            counts[parts[2].split(":")[-1].replace("sys_enter_", "")] = float(parts[0])
        except ValueError:
            pass
rps = float(sys.argv[2])
secs = 5.0
cpu = counts.get("task-clock", 0) / 1000
syncs = counts.get("fsync", 0) + counts.get("fdatasync", 0)
print(f"writer thread over 5 s: CPU {cpu:.2f} s ({100 * cpu / secs:.0f} % of one core); fsync+fdatasync {syncs:.0f} ({syncs / secs:.0f}/s); "
      f"pwrite64 {counts.get('pwrite64', 0):.0f} ({counts.get('pwrite64', 0) / max(1, syncs):.1f} per fsync); pread64 {counts.get('pread64', 0):.0f}")
if syncs:
    print(f"at the run's average {rps:.0f} req/s: {rps * secs / syncs:.1f} signups per fsync (a commit is one fsync of the WAL; checkpoints add some)")
EOF2
    perf report -i "$TMP/perf.data" --stdio --sort comm,dso 2>/dev/null | grep -v '^#' | grep -v '^$' | head -16 || true
    echo "-- signupd's own threads, by thread and function (self), top 40 (function names need a binary"
    echo "   built with symbols: CARGO_PROFILE_RELEASE_STRIP=false CARGO_PROFILE_RELEASE_DEBUG=line-tables-only):"
    perf report -i "$TMP/perf.data" --stdio --no-children --pid "$SERVED" \
        --sort comm,sym 2>/dev/null | grep -v '^#' | grep -v '^$' | head -40 || true
    echo "-- the writer thread's own time, by symbol (self), top 25:"
    perf report -i "$TMP/writer.data" --stdio --no-children --sort dso,sym -g none 2>/dev/null | grep -v '^#' | grep -v '^$' | head -25 || true
else
    echo "== 3. perf not available; skipped"
fi

# --- 4. tmpfs ------------------------------------------------------------------------------------
part 4 || exit 0
echo
echo "== 4. the same load, database on tmpfs ($SHM: fsync costs nothing), no tracer"
serve_start "$SHM/data"
wrk_warmup "$URL" >/dev/null
measured
backlog "$SHM/data"
serve_stop
