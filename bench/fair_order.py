#!/usr/bin/env python3
"""The cost of one read of the fair order (src/storage/outbox.rs, `fair_order`) on a synthetic
queue: the whole-queue scan it replaced (a window function and a sort over every due item)
against the walk by network along `outbox_by_network`, both through Python's sqlite3 on a fresh
in-memory database with signupd's migrations. Also checks that both give the same order.

    python3 bench/fair_order.py [NETWORKS ...]     # default: 1 250 20000; 300,000 items each

Python's per-statement overhead makes the walk look slower than in signupd (which runs the same
statements from Rust); the scan is one statement, so its figure is SQLite's own.
"""
import glob
import os
import random
import sqlite3
import sys
import time

ITEMS = 300_000
LIMIT = 32
NOW = 10**6
DUE = "next_attempt_at <= ?1 AND (lease_until IS NULL OR lease_until <= ?1) AND held = 0"
SCAN = f"""SELECT item.id FROM (
  SELECT id, next_attempt_at, network, kind, pressed,
         row_number() OVER (PARTITION BY coalesce(network, 'item/' || id), pressed ORDER BY next_attempt_at, id) AS place
  FROM outbox WHERE {DUE}) AS item
LEFT JOIN (SELECT network, count(*) AS mails FROM network_mails WHERE sent_at > ?1 - 3600 GROUP BY network) AS recent
  ON recent.network = item.network
ORDER BY CASE WHEN item.pressed = 1 OR item.kind = 'welcome' THEN 0 ELSE 2 END,
 coalesce(recent.mails, 0) + item.place, item.next_attempt_at, item.id LIMIT ?2"""
NEXT_NETWORK = "SELECT network FROM outbox WHERE held = 0 AND pressed = ?1 AND network > ?2 ORDER BY network LIMIT 1"
NETWORK_QUEUE = f"""SELECT id, next_attempt_at FROM outbox INDEXED BY outbox_by_network
  WHERE pressed = ?4 AND network = ?3 AND {DUE} ORDER BY next_attempt_at, id LIMIT ?2 OFFSET ?5"""


def walk(conn, limit):
    """The two passes of `fair_order` (without reputation and unnetworked items: none here)."""
    recent = dict(conn.execute("SELECT network, count(*) FROM network_mails WHERE sent_at > ? GROUP BY network", (NOW - 3600,)))
    waiting = []
    for pressed in (1, 0):
        after = ""
        while (row := conn.execute(NEXT_NETWORK, (pressed, after)).fetchone()) is not None:
            waiting.append((0 if pressed else 2, row[0], pressed, recent.get(row[0], 0)))
            after = row[0]

    def items(network, skip, places):
        cls, name, pressed, mails = network
        rows = conn.execute(NETWORK_QUEUE, (NOW, places, name, pressed, skip))
        return [(cls, mails + skip + place, due, id_) for place, (id_, due) in enumerate(rows, 1)]

    ranked = [item for network in waiting for item in items(network, 0, 1)]
    ranked.sort()
    bound = ranked[limit - 1][:2] if len(ranked) >= limit else None
    for network in waiting:
        cls, _, _, mails = network
        if bound is None or cls < bound[0]:
            places = limit
        elif cls == bound[0]:
            places = min(limit, bound[1] - mails)
        else:
            places = 0
        if places > 1:
            ranked.extend(items(network, 1, places - 1))
    ranked.sort()
    return [item[3] for item in ranked[:limit]]


def main():
    migrations = sorted(glob.glob(os.path.join(os.path.dirname(__file__), "..", "src", "storage", "migrations", "*.sql")))
    for networks in map(int, sys.argv[1:] or ["1", "250", "20000"]):
        conn = sqlite3.connect(":memory:")
        for migration in migrations:
            conn.executescript(open(migration).read())
        conn.execute("PRAGMA foreign_keys = OFF")
        rng = random.Random(networks)
        conn.executemany(
            "INSERT INTO outbox (kind, subscriber_id, created_at, next_attempt_at, network) VALUES ('confirm', 's', 0, ?, ?)",
            ((NOW - ITEMS + i, f"n{rng.randrange(networks):06d}") for i in range(ITEMS)))
        conn.executemany("INSERT INTO network_mails VALUES (?, ?)",
                         ((f"n{rng.randrange(networks):06d}", NOW - rng.randrange(3600)) for _ in range(1000)))
        conn.commit()
        start = time.perf_counter()
        scanned = [row[0] for row in conn.execute(SCAN, (NOW, LIMIT))]
        scan_s = time.perf_counter() - start
        start = time.perf_counter()
        walked = walk(conn, LIMIT)
        walk_s = time.perf_counter() - start
        print(f"{ITEMS} items in {networks} networks: scan {scan_s * 1000:.1f} ms, walk {walk_s * 1000:.1f} ms, "
              f"ratio {walk_s / scan_s:.4f}, same order: {scanned == walked}")
        if scanned != walked:
            sys.exit(1)


if __name__ == "__main__":
    main()
