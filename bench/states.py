#!/usr/bin/env python3
"""Answer timing of POST /api/signup for the four states of an address (docs/http-api.md: the answer
is identical for every state, so its timing must not tell them apart either).

States, each request being a (re-)signup of an address that is in that state:
  unknown           a fresh address
  pending_cooldown  pending row, last confirmation mail sent just now, nothing queued
  pending_past      pending row, last mail an hour ago (>= resend_cooldown), nothing queued
  confirmed         confirmed row

Seeding: 3*N addresses (4*N with several lists) are signed up over HTTP, the intake worker is
awaited (intake empty), then the rows are put into their states with SQL and the outbox is
emptied. Each timed request uses an address of its own, so every sample meets its state exactly
once (a re-signup of a pending-past-cooldown address queues a mail, which would change the state
of a second one).

Timing: one keep-alive connection, requests strictly one after another, the four states
interleaved in random order, wall time from sending the request to reading the whole answer.
Reports medians, the largest pairwise median difference, and the two-sample
Kolmogorov-Smirnov statistic with its asymptotic p-value for every pair (implemented below,
no scipy). Finally it checks that the states really took different paths in the worker.

Several lists (--lists news,offers,club; default the one list `news`, as before): every timed
request names all of them (`list=news&list=offers&list=club`, docs/http-api.md "Several lists in
one form"), each list gets its own row, and the address's state is then a mix across the lists.
The four states above become "the same on every list", and a fifth joins them:
  mixed             each list in its own state (--mix, one state per list; default cycles through
                    confirmed, pending_past, unknown, pending_cooldown: with news,offers,club
                    confirmed on news, pending past cooldown on offers, unknown on club)
Seeding signs each address up over HTTP for the lists it is to have a row on, then sets every
row's state with SQL; the check afterwards counts an address as having taken its path only if
every one of its lists did. The answer redirects to the first list's check-inbox page.

Both the answer itself and the answer that FOLLOWS it are tested: with --gap-ms 0 the requests go
back to back, so the next request can meet the background work the previous one caused (the
intake worker applying the state table, the mail worker). The "lag-1" figures group each answer by
the state of the request before it on the same connection; the target (medians within 5 %, KS
p >= 0.01 against unknown) must hold for both. With --gap-ms G the client waits G ms after each
answer before the next request (not timed), which isolates the answer itself.

The intake worker applies `intake` on a jittered tick (~250 ms), not right behind each request,
so every wait for it polls the table until it is empty.

usage: states.py --port 18082 --db DATA/signupd.sqlite3 [--n 600] [--gap-ms 0] [--seed 1] [--json OUT]
                 [--lists news,offers,club [--mix confirmed,pending_past,unknown]]
"""

import argparse
import http.client
import json
import math
import random
import sqlite3
import statistics
import sys
import threading
import time

# The states of one (list, address) row; with one list they are also the address's states.
ROW_STATES = ["unknown", "pending_cooldown", "pending_past", "confirmed"]
# With several lists: the states above on every list, plus "mixed" (a state per list, --mix).
STATES = list(ROW_STATES)
# The lists every timed request names, and each state's row state per list (set in main).
LISTS = ["news"]
PATTERN = {state: [state] for state in STATES}
MIX_CYCLE = ["confirmed", "pending_past", "unknown", "pending_cooldown"]


def body(address, lists=None):
    names = "".join(f"&list={name}" for name in (LISTS if lists is None else lists))
    return f"email={address.replace('@', '%40')}&consent=yes{names}"


class Client:
    def __init__(self, port):
        self.port = port
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def signup(self, address, lists=None):
        """Times a signup of `address` for `lists` (default: every list of the run)."""
        lists = LISTS if lists is None else lists
        payload = body(address, lists)
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        start = time.perf_counter_ns()
        self.conn.request("POST", "/api/signup", payload, headers)
        response = self.conn.getresponse()
        response.read()
        elapsed = time.perf_counter_ns() - start
        location = response.getheader("Location")
        if response.status != 303 or location != f"/check-inbox?list={lists[0]}":
            raise SystemExit(f"unexpected answer {response.status} {location} for {address}")
        return elapsed


def seed_signups(port, signups, threads=8):
    """Signs up every (address, lists) of `signups` over HTTP, on `threads` connections."""
    chunks = [signups[i::threads] for i in range(threads)]
    errors = []

    def work(chunk):
        try:
            client = Client(port)
            for address, lists in chunk:
                client.signup(address, lists)
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    workers = [threading.Thread(target=work, args=(chunk,)) for chunk in chunks]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    if errors:
        raise SystemExit(f"seeding failed: {errors[0]}")


def connect(db_path):
    db = sqlite3.connect(db_path, timeout=30, isolation_level=None)
    db.execute("PRAGMA busy_timeout = 30000")
    return db


def wait_for_intake(db, timeout=120):
    deadline = time.monotonic() + timeout
    while True:
        (left,) = db.execute("SELECT count(*) FROM intake").fetchone()
        if left == 0:
            return
        if time.monotonic() > deadline:
            raise SystemExit(f"intake worker did not drain ({left} left)")
        time.sleep(0.1)


ROW_SQL = {
    "pending_cooldown": "UPDATE subscribers SET confirmation_sent_at = ?2 WHERE list_id = ?3 AND email = ?1",
    "pending_past": "UPDATE subscribers SET confirmation_sent_at = ?2 - 3600 WHERE list_id = ?3 AND email = ?1",
    "confirmed": "UPDATE subscribers SET status = 'confirmed', confirmation_sent_at = ?2 - 60, "
    "confirmed_at = ?2, confirm_method = 'button', confirm_delay_secs = 60, confirm_hash = NULL, "
    "confirm_expires_at = NULL WHERE list_id = ?3 AND email = ?1",
}


def seeded_lists(state):
    """The lists an address of `state` is signed up for before the timing (a row to set)."""
    return [name for name, row in zip(LISTS, PATTERN[state]) if row != "unknown"]


def set_states(db, groups, now):
    """Puts every row of the addresses of `groups` (state -> addresses) into its state: each
    list's row in PATTERN[state] for that list (no row where that is `unknown`)."""
    db.execute("BEGIN IMMEDIATE")
    for state, addresses in groups.items():
        for name, row in zip(LISTS, PATTERN[state]):
            if row != "unknown":
                db.executemany(ROW_SQL[row], [(address, now, name) for address in addresses])
    db.execute("DELETE FROM outbox")
    db.execute("COMMIT")
    for state, addresses in groups.items():
        marks = ",".join("?" * len(addresses))
        for name, row in zip(LISTS, PATTERN[state]):
            rows = db.execute(
                f"SELECT status, confirmation_sent_at IS NOT NULL, count(*) FROM subscribers "
                f"WHERE list_id = ? AND email IN ({marks}) GROUP BY 1, 2",
                [name, *addresses],
            ).fetchall()
            expected = [] if row == "unknown" else [("confirmed" if row == "confirmed" else "pending", 1, len(addresses))]
            if rows != expected:
                raise SystemExit(f"seeding {state} ({name} {row}): got {rows}, expected {expected}")


def median_spread(medians):
    medians = list(medians)
    return (max(medians) - min(medians)) / min(medians) * 100


def paths(db, groups, seeded_at, before=False):
    """How many addresses of each state show the state table's action for that state on every
    list (each list's row by its own state in PATTERN):
    unknown -> a new pending row; pending in cooldown -> untouched, nothing queued;
    pending past cooldown -> a resend queued (in the outbox, or already sent and re-stamped);
    confirmed -> untouched, nothing queued. With before=True: how many are in their seeded state
    on every list (no row where the list's state is unknown); the all-unknown state is left out."""
    queued = "EXISTS (SELECT 1 FROM outbox WHERE outbox.subscriber_id = subscribers.id)"
    where = {
        "unknown": "status = 'pending'",
        "pending_cooldown": f"status = 'pending' AND confirmation_sent_at = ?1 AND NOT {queued}",
        "pending_past": (
            f"status = 'pending' AND confirmation_sent_at = ?1 - 3600 AND NOT {queued}"
            if before
            else f"status = 'pending' AND (confirmation_sent_at > ?1 - 3600 OR {queued})"
        ),
        "confirmed": f"status = 'confirmed' AND NOT {queued}",
    }
    counts = {}
    for state in STATES[1:] if before else STATES:
        addresses = groups[state]
        marks = ",".join(f"?{i + 3}" for i in range(len(addresses)))
        took = set(addresses)
        for name, row in zip(LISTS, PATTERN[state]):
            if before and row == "unknown":
                having = {e for (e,) in db.execute(
                    f"SELECT email FROM subscribers WHERE list_id = ?2 AND email IN ({marks})",
                    [seeded_at, name, *addresses],
                )}
                took -= having
            else:
                took &= {e for (e,) in db.execute(
                    f"SELECT email FROM subscribers WHERE list_id = ?2 AND email IN ({marks}) AND {where[row]}",
                    [seeded_at, name, *addresses],
                )}
        counts[state] = len(took)
    return counts


def ks_2samp(a, b):
    """Two-sample Kolmogorov-Smirnov statistic D and its asymptotic two-sided p-value
    (Kolmogorov distribution with Stephens' small-sample correction, as in Numerical Recipes)."""
    a, b = sorted(a), sorted(b)
    n, m = len(a), len(b)
    i = j = 0
    d = 0.0
    while i < n and j < m:
        x = min(a[i], b[j])
        while i < n and a[i] == x:
            i += 1
        while j < m and b[j] == x:
            j += 1
        d = max(d, abs(i / n - j / m))
    en = math.sqrt(n * m / (n + m))
    lam = (en + 0.12 + 0.11 / en) * d
    return d, kolmogorov_q(lam)


def kolmogorov_q(z):
    """P(K > z) for the Kolmogorov distribution."""
    if z <= 0:
        return 1.0
    if z < 1.18:
        y = math.exp(-(math.pi**2) / (8 * z * z))
        cdf = math.sqrt(2 * math.pi) / z * (y + y**9 + y**25 + y**49)
        return min(1.0, max(0.0, 1.0 - cdf))
    x = math.exp(-2 * z * z)
    return min(1.0, max(0.0, 2 * (x - x**4 + x**9)))


def self_test():
    # Identical samples: D = 0, p = 1. Disjoint samples: D = 1, p ~ 0.
    assert ks_2samp([1, 2, 3], [1, 2, 3]) == (0.0, 1.0)
    d, p = ks_2samp(list(range(100)), list(range(100, 200)))
    assert d == 1.0 and p < 1e-30
    # D = 0.2 with n = m = 100: sqrt(50) * 0.2 = 1.414 gives p = 0.037 without Stephens'
    # correction (scipy's method="asymp"), 0.031 with it.
    d, p = ks_2samp(list(range(0, 100)), list(range(20, 120)))
    assert abs(d - 0.2) < 1e-12 and 0.02 < p < 0.05, (d, p)
    # Kolmogorov distribution: Q(1.36) ~ 0.049, Q(1.63) ~ 0.0098.
    assert abs(kolmogorov_q(1.36) - 0.0494) < 1e-3, kolmogorov_q(1.36)
    assert abs(kolmogorov_q(1.63) - 0.0098) < 1e-3, kolmogorov_q(1.63)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--db", required=True)
    parser.add_argument("--n", type=int, default=600, help="samples per state")
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--gap-ms", type=float, default=0.0, help="pause after each answer, not timed")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", help="write the raw samples and results here")
    parser.add_argument(
        "--lists", default="news", help="comma-separated: the lists every timed request names (default: news alone)"
    )
    parser.add_argument(
        "--mix",
        help="with several lists: the state of each list in the `mixed` state, comma-separated, one per list "
        f"(default: {','.join(MIX_CYCLE)} in turn)",
    )
    args = parser.parse_args()
    self_test()
    LISTS[:] = args.lists.split(",")
    if len(set(LISTS)) != len(LISTS) or not all(LISTS):
        parser.error(f"--lists {args.lists}: each list once, none empty")
    for state in ROW_STATES:
        PATTERN[state] = [state] * len(LISTS)
    if len(LISTS) > 1:
        mix = args.mix.split(",") if args.mix else [MIX_CYCLE[i % len(MIX_CYCLE)] for i in range(len(LISTS))]
        if len(mix) != len(LISTS) or not set(mix) <= set(ROW_STATES) or len(set(mix)) < 2:
            parser.error(f"--mix: one of {ROW_STATES} per list, at least two different")
        STATES.append("mixed")
        PATTERN["mixed"] = mix
    elif args.mix:
        parser.error("--mix needs several lists")

    rng = random.Random(args.seed)
    tag = f"s{int(time.time()):x}{rng.randrange(1 << 16):04x}"
    groups = {
        state: [f"{tag}-{state.replace('_', '')}-{i}@example.com" for i in range(args.n)]
        for state in STATES
    }
    db = connect(args.db)

    seeding = [(address, seeded_lists(state)) for state in STATES[1:] for address in groups[state]]
    print(f"seeding {len(seeding)} addresses on {','.join(LISTS)} ...", file=sys.stderr)
    seed_signups(args.port, seeding)
    wait_for_intake(db)
    seeded_at = int(time.time())
    set_states(db, {s: groups[s] for s in STATES[1:]}, seeded_at)
    # A batch a mail worker claimed (and stamped) before the outbox was emptied may still be
    # settling; let it finish, then set the states again.
    time.sleep(1)
    set_states(db, {s: groups[s] for s in STATES[1:]}, seeded_at)
    if paths(db, groups, seeded_at, before=True) != {state: args.n for state in STATES[1:]}:
        raise SystemExit("seeded states did not hold")

    client = Client(args.port)
    for i in range(args.warmup):
        client.signup(f"{tag}-warmup-{i}@example.com")

    schedule = [(state, address) for state in STATES for address in groups[state]]
    rng.shuffle(schedule)
    samples = {state: [] for state in STATES}
    previous = {state: [] for state in STATES}  # latency grouped by the state of the request before
    sequence = []
    last = None
    print(f"timing {len(schedule)} requests, {args.gap_ms:g} ms apart ...", file=sys.stderr)
    for state, address in schedule:
        if args.gap_ms:
            time.sleep(args.gap_ms / 1000)
        elapsed = client.signup(address) / 1000  # microseconds
        samples[state].append(elapsed)
        sequence.append((state, elapsed))
        if last is not None:
            previous[last].append(elapsed)
        last = state

    # The states must really have taken different paths in the worker. The mail worker may have
    # sent some of the mails queued meanwhile (within its hourly budget), so a queued resend
    # counts whether it is still in the outbox or already stamped as sent.
    wait_for_intake(db)
    outcome = paths(db, groups, seeded_at)
    expected = {state: args.n for state in STATES}
    paths_ok = outcome == expected

    medians = {state: statistics.median(samples[state]) for state in STATES}
    spread = median_spread(medians.values())
    # How often does a random relabelling of the same samples spread the medians this far? If
    # often, the spread is the noise of the median on this distribution, not a state effect.
    pooled = [x for state in STATES for x in samples[state]]
    perm_rng = random.Random(args.seed + 1)
    permutations = 2000
    as_far = 0
    for _ in range(permutations):
        perm_rng.shuffle(pooled)
        groups_medians = [statistics.median(pooled[i * args.n : (i + 1) * args.n]) for i in range(len(STATES))]
        as_far += median_spread(groups_medians) >= spread
    spread_p = (as_far + 1) / (permutations + 1)
    pooled.sort()
    below_1ms = sum(1 for x in pooled if x < 1000) / len(pooled) * 100
    pairs = {}
    for i, a in enumerate(STATES):
        for b in STATES[i + 1 :]:
            d, p = ks_2samp(samples[a], samples[b])
            pairs[f"{a}~{b}"] = {"D": d, "p": p}
    lag = {}
    for state in STATES[1:]:
        d, p = ks_2samp(previous["unknown"], previous[state])
        lag[f"after_unknown~after_{state}"] = {"D": d, "p": p}
    lag_all = {}
    for i, a in enumerate(STATES):
        for b in STATES[i + 1 :]:
            d, p = ks_2samp(previous[a], previous[b])
            lag_all[f"after_{a}~after_{b}"] = {"D": d, "p": p}
    lag_medians = {state: statistics.median(previous[state]) for state in STATES}
    lag_spread = median_spread(lag_medians.values())
    # The same relabelling test for the next answer's medians.
    lag_pooled = [x for state in STATES for x in previous[state]]
    bounds = [0]
    for state in STATES:
        bounds.append(bounds[-1] + len(previous[state]))
    lag_as_far = 0
    for _ in range(permutations):
        perm_rng.shuffle(lag_pooled)
        lag_as_far += median_spread(
            statistics.median(lag_pooled[bounds[i] : bounds[i + 1]]) for i in range(len(STATES))
        ) >= lag_spread
    lag_spread_p = (lag_as_far + 1) / (permutations + 1)

    if len(LISTS) > 1:
        print(
            f"lists {','.join(LISTS)} named in every request; mixed = "
            + ", ".join(f"{row} on {name}" for name, row in zip(LISTS, PATTERN["mixed"]))
        )
    print(f"{'state':<18}{'n':>6}{'median_us':>11}{'p10_us':>9}{'p90_us':>9}{'p99_us':>9}{'mean_us':>9}")
    for state in STATES:
        xs = sorted(samples[state])
        q = lambda f: xs[min(len(xs) - 1, int(f * len(xs)))]  # noqa: E731
        print(
            f"{state:<18}{len(xs):>6}{medians[state]:>11.0f}{q(0.10):>9.0f}{q(0.90):>9.0f}{q(0.99):>9.0f}"
            f"{statistics.fmean(xs):>9.0f}"
        )
    print(
        f"max pairwise median difference: {spread:.2f} % (a random relabelling of the same samples spreads "
        f"the medians at least this far with p = {spread_p:.3f}; {below_1ms:.0f} % of all answers took < 1 ms)"
    )
    for name, r in pairs.items():
        print(f"KS {name:<36} D={r['D']:.4f} p={r['p']:.4f}")
    print("the request *after* one of each state (the worker applies the state table after the answer):")
    for state in STATES:
        xs = sorted(previous[state])
        q = lambda f: xs[min(len(xs) - 1, int(f * len(xs)))]  # noqa: E731
        print(
            f"  after {state:<18} n={len(xs):>4} median_us={lag_medians[state]:>7.0f} p10_us={q(0.10):>6.0f} "
            f"p90_us={q(0.90):>6.0f} p99_us={q(0.99):>6.0f}"
        )
    print(f"  max pairwise median difference (lag-1): {lag_spread:.2f} % (random relabelling p = {lag_spread_p:.3f})")
    for name, r in lag.items():
        print(f"KS (lag-1) {name:<34} D={r['D']:.4f} p={r['p']:.4f}")
    print(f"KS (lag-1) min p over all {len(lag_all)} pairs: {min(r['p'] for r in lag_all.values()):.4f}")
    print(f"state table actions seen per state (expected {args.n} each): {outcome} {'OK' if paths_ok else 'UNEXPECTED'}")
    vs_unknown = [pairs[f"unknown~{s}"]["p"] for s in STATES[1:]]
    lag_vs_unknown = [r["p"] for r in lag.values()]
    answer_met = spread < 5 and min(vs_unknown) >= 0.01
    lag_met = lag_spread < 5 and min(lag_vs_unknown) >= 0.01
    met = answer_met and lag_met
    print(
        f"STATES_RESULT median_spread_pct={spread:.2f} median_spread_perm_p={spread_p:.3f} "
        f"min_ks_p_vs_unknown={min(vs_unknown):.4f} lag1_median_spread_pct={lag_spread:.2f} lag1_spread_perm_p={lag_spread_p:.3f} "
        f"min_ks_p_lag1={min(lag_vs_unknown):.4f} min_ks_p_lag1_all_pairs={min(r['p'] for r in lag_all.values()):.4f} "
        f"min_ks_p_all_pairs={min(r['p'] for r in pairs.values()):.4f} answer_met={'yes' if answer_met else 'no'} "
        f"lag1_met={'yes' if lag_met else 'no'} target_met={'yes' if met else 'no'} "
        f"paths_ok={'yes' if paths_ok else 'no'} lists={','.join(LISTS)}"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {"gap_ms": args.gap_ms, "lists": LISTS, "pattern": PATTERN, "samples_us": samples, "sequence": sequence, "medians_us": medians, "median_spread_pct": spread,
                 "median_spread_perm_p": spread_p, "ks": pairs, "ks_lag1": lag, "ks_lag1_all_pairs": lag_all,
                 "lag1_medians_us": lag_medians, "lag1_median_spread_pct": lag_spread, "lag1_spread_perm_p": lag_spread_p, "actions_per_state": outcome},
                f,
            )
    return 0 if paths_ok else 1


if __name__ == "__main__":
    sys.exit(main())
