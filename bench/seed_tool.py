#!/usr/bin/env python3
"""Seeding and counting helpers for bench/growth.sh, cache.sh, export.sh, shutdown.sh and webhooks.sh.
Standard library only.
signupd must be stopped while a seed command runs (it writes the database directly).

    seed_tool.py subscribers --data-dir DIR -n N [--pending-share 0.2] [--prefix P]
        N rows in `subscribers` of list `news`, as signupd would have left them: a UUID id, the
        removal hash derived from the instance's hash key as RemovalToken::derive does, a share
        pending (a confirmation sent an hour ago, a live confirm hash of a random token nobody
        knows), the rest confirmed (hash cleared, as the cleanup leaves them).

    seed_tool.py confirmable --data-dir DIR -n N --tokens-out FILE [--prefix P]
        N pending rows whose confirm tokens are known: a random 43-character base64url token per
        row, its SHA-256 hex stored as confirm_hash, expiring in 24 h; the tokens go to FILE, one
        a line, in random order (for bench/confirm.lua).

    seed_tool.py intake --data-dir DIR -n N [--prefix P]
        N accepted signup requests in `intake` (unique new addresses), as POST /api/signup
        leaves them before the intake worker applies them.

    seed_tool.py deliveries --data-dir DIR -n N [--endpoint bench]
        N due `subscriber.confirmed` events in `webhook_deliveries` for ENDPOINT, one subscriber
        id each, as confirming queues them.

    seed_tool.py count --data-dir DIR
        One JSON object: rows in subscribers, intake, outbox, and pending rows that have neither
        a sent confirmation nor a queued one (a lost signup; must be 0).

The seed commands write with journal_mode = DELETE and synchronous = OFF (a bulk load, not what
is measured) and switch the file back to WAL, which is what signupd uses and sets again at start.
"""

import argparse
import base64
import hashlib
import json
import os
import random
import sqlite3
import sys
import time
import uuid

# The secret reading and the removal hash are mail_tool.py's (same directory, on sys.path).
from mail_tool import DB_NAME, read_secret, removal_hash  # noqa: E402

BATCH = 50_000


def open_for_load(data_dir):
    db = sqlite3.connect(os.path.join(data_dir, DB_NAME), isolation_level=None)
    db.execute("PRAGMA journal_mode = DELETE")
    db.execute("PRAGMA synchronous = OFF")
    db.execute("PRAGMA cache_size = -1000000")  # 1 GB: the indexes stay in memory while loading
    return db


def close_after_load(db):
    db.execute("PRAGMA journal_mode = WAL")
    db.close()


INSERT = (
    "INSERT INTO subscribers (id, list_id, email, status, consent_version, created_at, confirmation_sent_at,"
    " confirm_hash, confirm_expires_at, confirmed_at, confirm_method, confirm_delay_secs, removal_hash)"
    " VALUES (?1, 'news', ?2, ?3, 'v1', ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"
)


def insert_rows(db, rows):
    for start in range(0, len(rows), BATCH):
        db.execute("BEGIN")
        db.executemany(INSERT, rows[start : start + BATCH])
        db.execute("COMMIT")


def cmd_subscribers(args):
    hash_key = read_secret(os.path.join(args.data_dir, "hash_key"))
    now = int(time.time())
    prefix = args.prefix or f"g{now:x}"
    rng = random.Random(args.seed)
    started = time.monotonic()
    rows = []
    for i in range(args.n):
        sid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        created = now - rng.randrange(86400, 3 * 365 * 86400)
        if rng.random() < args.pending_share:
            sent = now - 3600
            # a live link whose token nobody knows (the hash of random bytes)
            confirm_hash = hashlib.sha256(rng.getrandbits(256).to_bytes(32, "big")).hexdigest()
            row = (sid, f"{prefix}-{i}@example.com", "pending", sent - 1, sent, confirm_hash, sent + 48 * 3600,
                   None, None, None, removal_hash(hash_key, sid))
        else:
            sent = created + 1
            row = (sid, f"{prefix}-{i}@example.com", "confirmed", created, sent, None, None,
                   sent + 60, "button", 60, removal_hash(hash_key, sid))
        rows.append(row)
    generated = time.monotonic()
    db = open_for_load(args.data_dir)
    insert_rows(db, rows)
    close_after_load(db)
    print(json.dumps({"seeded": args.n, "generate_secs": round(generated - started, 1),
                      "insert_secs": round(time.monotonic() - generated, 1)}))


def cmd_confirmable(args):
    hash_key = read_secret(os.path.join(args.data_dir, "hash_key"))
    now = int(time.time())
    prefix = args.prefix or f"c{now:x}"
    rows, tokens = [], []
    for i in range(args.n):
        sid = str(uuid.uuid4())
        token = base64.urlsafe_b64encode(os.urandom(32)).rstrip(b"=").decode()
        assert len(token) == 43
        tokens.append(token)
        sent = now - 60
        rows.append((sid, f"{prefix}-{i}@example.com", "pending", sent - 1, sent,
                     hashlib.sha256(token.encode()).hexdigest(), now + 24 * 3600, None, None, None,
                     removal_hash(hash_key, sid)))
    db = open_for_load(args.data_dir)
    insert_rows(db, rows)
    close_after_load(db)
    random.shuffle(tokens)
    with open(args.tokens_out, "w") as f:
        f.write("\n".join(tokens) + "\n")
    print(json.dumps({"seeded": args.n, "tokens": args.tokens_out}))


def cmd_intake(args):
    now = int(time.time())
    prefix = args.prefix or f"i{now:x}"
    db = open_for_load(args.data_dir)
    db.execute("BEGIN")
    db.executemany(
        "INSERT INTO intake (list_id, email, consent_version, received_at) VALUES ('news', ?1, 'v1', ?2)",
        ((f"{prefix}-{i}@example.com", now) for i in range(args.n)),
    )
    db.execute("COMMIT")
    close_after_load(db)
    print(json.dumps({"seeded": args.n}))


def cmd_deliveries(args):
    now = int(time.time())
    rows = []
    for i in range(args.n):
        sid = str(uuid.uuid4())
        body = json.dumps({"type": "subscriber.confirmed", "timestamp": "2026-11-30T00:00:00Z",
                           "data": {"list": "news", "email": f"b{i}@example.com", "subscriber_id": sid}})
        rows.append((args.endpoint, f"evt_{uuid.uuid4().hex}", "subscriber.confirmed", sid, body, now, now))
    db = open_for_load(args.data_dir)
    db.execute("BEGIN")
    db.executemany(
        "INSERT INTO webhook_deliveries (endpoint, event_id, event_type, subscriber_id, payload, created_at, next_attempt_at)"
        " VALUES (?,?,?,?,?,?,?)",
        rows,
    )
    db.execute("COMMIT")
    close_after_load(db)
    print(json.dumps({"seeded": args.n}))


def cmd_count(args):
    db = sqlite3.connect(f"file:{os.path.join(args.data_dir, DB_NAME)}?mode=ro", uri=True, timeout=30)
    (subscribers, intake, outbox, lost) = db.execute(
        "SELECT (SELECT count(*) FROM subscribers), (SELECT count(*) FROM intake), (SELECT count(*) FROM outbox),"
        " (SELECT count(*) FROM subscribers s WHERE s.status = 'pending' AND s.confirmation_sent_at IS NULL"
        "  AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.subscriber_id = s.id))"
    ).fetchone()
    db.close()
    print(json.dumps({"subscribers": subscribers, "intake": intake, "outbox": outbox,
                      "pending_without_mail": lost}))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("subscribers")
    s.add_argument("--data-dir", required=True)
    s.add_argument("-n", type=int, required=True)
    s.add_argument("--pending-share", type=float, default=0.2)
    s.add_argument("--prefix")
    s.add_argument("--seed", type=int, default=1)
    s = sub.add_parser("confirmable")
    s.add_argument("--data-dir", required=True)
    s.add_argument("-n", type=int, required=True)
    s.add_argument("--tokens-out", required=True)
    s.add_argument("--prefix")
    s = sub.add_parser("intake")
    s.add_argument("--data-dir", required=True)
    s.add_argument("-n", type=int, required=True)
    s.add_argument("--prefix")
    s = sub.add_parser("deliveries")
    s.add_argument("--data-dir", required=True)
    s.add_argument("-n", type=int, required=True)
    s.add_argument("--endpoint", default="bench")
    s = sub.add_parser("count")
    s.add_argument("--data-dir", required=True)
    args = p.parse_args()
    commands = {"subscribers": cmd_subscribers, "confirmable": cmd_confirmable, "intake": cmd_intake,
                "deliveries": cmd_deliveries, "count": cmd_count}
    commands[args.cmd](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
