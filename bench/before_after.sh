#!/usr/bin/env bash
# Signup req/s and mail drain of two builds, interleaved (A, B, A, B, ...) so that drift of a
# shared machine falls on both: each tree's own bench/signup.sh (maximum-rate phase only) and
# bench/mail.sh (queue drain and end to end, no diagnostics), run from that tree against that
# tree's release binaries, so each run's configuration fits its binary (a binary rejects keys it
# does not know). Medians per side and the ratios B / A. BENCHMARKS.md has the figures.
#
#   BASE_TREE=../wt-baseline bash bench/before_after.sh     # ~10 minutes with ROUNDS=3
#
# BASE_TREE (required): a work tree of the "before" commit whose release binaries are built
# (cargo build --release --locked --bin signupd --example bench_ceiling; bench/signup.sh also
# wants its bench/loadgen build in target/bench-loadgen, built on first use). NEW_TREE defaults
# to this tree. Knobs: ROUNDS=3 DURATION=20s (signup.sh's wrk run) MAIL_N=10000 MAIL_REPEAT=3
# E2E_N=10000 QUIET_WAIT=300 OUT=dir (default: a temporary directory, printed).
# The trees first: relative to the caller's directory (common.sh changes it).
set -euo pipefail
BASE_TREE=$(cd "${BASE_TREE:?set BASE_TREE to the work tree of the before commit}" && pwd)
NEW_TREE=$(cd "${NEW_TREE:-$(dirname "${BASH_SOURCE[0]}")/..}" && pwd)
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-20s}
MAIL_N=${MAIL_N:-10000}
MAIL_REPEAT=${MAIL_REPEAT:-3}
E2E_N=${E2E_N:-10000}
QUIET_WAIT=${QUIET_WAIT:-300}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/signupd-before-after.XXXXXX")}
mkdir -p "$OUT"

for tree in "$BASE_TREE" "$NEW_TREE"; do
    for bin in target/release/signupd target/release/examples/bench_ceiling; do
        [[ -x $tree/$bin ]] || { echo "bench: $tree/$bin is missing; build it first" >&2; exit 1; }
    done
done
side_name() { git -C "$1" rev-parse --short HEAD; }
A=$(side_name "$BASE_TREE")
B=$(side_name "$NEW_TREE")
log "before: $A ($BASE_TREE), after: $B ($NEW_TREE), $ROUNDS rounds; results in $OUT"

for round in $(seq "$ROUNDS"); do
    for side in A B; do
        if [[ $side == A ]]; then tree=$BASE_TREE; else tree=$NEW_TREE; fi
        log "round $round, $side ($(side_name "$tree")): signup.sh (max phase, one run) — load $(cut -d' ' -f1-3 /proc/loadavg)"
        (cd "$tree" && BUILD=0 PHASES=max REPEAT=1 LOG_COMPARE=0 DURATION=$DURATION QUIET_WAIT=$QUIET_WAIT \
            SUMMARY_OUT="$OUT/signup-$side-$round.txt" bash bench/signup.sh >"$OUT/signup-$side-$round.log" 2>&1)
        log "round $round, $side: mail.sh (DIAG=0, $MAIL_REPEAT drains of $MAIL_N, end to end $E2E_N) — load $(cut -d' ' -f1-3 /proc/loadavg)"
        (cd "$tree" && BUILD=0 DIAG=0 N=$MAIL_N REPEAT=$MAIL_REPEAT LOG_N=1000 E2E_N=$E2E_N QUIET_WAIT=$QUIET_WAIT \
            SUMMARY_OUT="$OUT/mail-$side-$round.txt" bash bench/mail.sh >"$OUT/mail-$side-$round.log" 2>&1)
    done
done

python3 - "$OUT" "$ROUNDS" "$A" "$B" <<'EOF'
import re, statistics, sys
out, rounds, a, b = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
def signup(side, r):
    text = open(f"{out}/signup-{side}-{r}.txt").read()
    m = re.search(r"signupd warn #1\s+(\d+) req/s.*?p99\s+([\d.]+) ms.*?other CPU (\S+) %", text)
    d = re.search(r"backlog (\d+), drained in ([\d.]+) s, end-to-end (\d+) rows/s = ([\d.]+)", text)
    busy = "NOT QUIET" in text
    return {"rps": int(m.group(1)), "p99_ms": float(m.group(2)), "other_cpu": m.group(3),
            "drain_s": float(d.group(2)), "applied": float(d.group(4)), "busy": busy}
def mail(side, r):
    text = open(f"{out}/mail-{side}-{r}.txt").read()
    drains = [float(x) for x in re.findall(r"^drain-warn-\d+\s+([\d.]+) mails/s", text, re.M)]
    e2e = re.search(r"^e2e\s+([\d.]+) mails/s", text, re.M)
    busy = "busy machine" in text
    return {"drains": drains, "e2e": float(e2e.group(1)), "busy": busy}
rows = {s: {"signup": [], "mail": []} for s in "AB"}
print(f"\nbefore (A) = {a}, after (B) = {b}; {rounds} rounds, interleaved A B A B ...")
print(f"{'round':>5} {'side':>4} {'signup req/s':>12} {'p99 ms':>7} {'other CPU %':>11} {'drain s':>7} {'applied':>7} {'mail drains (mails/s)':>32} {'e2e mails/s':>11} quiet")
for r in range(1, rounds + 1):
    for s in "AB":
        su, ma = signup(s, r), mail(s, r)
        rows[s]["signup"].append(su)
        rows[s]["mail"].append(ma)
        drains = " / ".join(f"{x:.0f}" for x in ma["drains"])
        print(f"{r:>5} {s:>4} {su['rps']:>12} {su['p99_ms']:>7.1f} {su['other_cpu']:>11} {su['drain_s']:>7.2f} {su['applied']:>7.3f} {drains:>32} {ma['e2e']:>11.0f} {'no' if su['busy'] or ma['busy'] else 'yes'}")
med = {}
for s in "AB":
    med[s] = {
        "signup": statistics.median(x["rps"] for x in rows[s]["signup"]),
        "p99": statistics.median(x["p99_ms"] for x in rows[s]["signup"]),
        "applied": statistics.median(x["applied"] for x in rows[s]["signup"]),
        "drain": statistics.median(d for x in rows[s]["mail"] for d in x["drains"]),
        "e2e": statistics.median(x["e2e"] for x in rows[s]["mail"]),
    }
print()
for key, label in (("signup", "signup req/s (median of runs)"), ("p99", "signup p99 ms"), ("applied", "applied / answered"),
                   ("drain", "mail drain mails/s (median of all drains)"), ("e2e", "end to end mails/s")):
    ratio = med["B"][key] / med["A"][key] if med["A"][key] else float("nan")
    print(f"{label:45} A {med['A'][key]:>10.1f}   B {med['B'][key]:>10.1f}   B/A {ratio:.3f}")
EOF
