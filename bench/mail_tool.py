#!/usr/bin/env python3
"""Helpers for bench/mail.sh (the mail-queue benchmark). Standard library only.

    mail_tool.py seed    --data-dir DIR -n N [--list news] [--prefix P]
        Inserts N pending subscribers and one due 'confirm' outbox item each, in one transaction,
        exactly as the intake worker would leave them (removal_hash derived from the hash key the
        way RemovalToken::derive does). signupd must be stopped.

    mail_tool.py drain   --data-dir DIR -n N --t0 EPOCH [--pid PID] [--timeout S] [--interval S]
        Polls the queue every --interval seconds (one connection, autocommit, so no read
        transaction is held open) until intake and outbox are empty and at least N subscribers
        exist; prints one JSON object: seconds from --t0 to the first sent mail and to the empty
        queue, and the CPU seconds signupd (--pid) used in between.

    mail_tool.py signups --url URL -n N [-c CONNS] [--prefix P]
        N POST /api/signup (urlencoded, unique addresses) over CONNS keep-alive connections, as
        fast as signupd answers; prints one JSON object. Every answer must be 303.

    mail_tool.py fsync   --dir DIR [-n N]
        Latency of 4 KiB write + fdatasync in DIR, appending and overwriting (what one SQLite WAL
        commit under synchronous=FULL costs at least).

    mail_tool.py perfcount FILE -n MAILS
        Events per mail and CPU per mail from `perf stat -x,` output.

    mail_tool.py stracecount FILE -n MAILS
        Calls per mail and wall-clock time per syscall from a `strace -f -c -w` summary.

    mail_tool.py smtpwait FILE
        From `strace -f -tt -T -e trace=sendto,recvfrom` of signupd: per mail, the time from
        writing the end-of-data "\\r\\n.\\r\\n" to reading the server's 250, and from the
        354 to the 250 (the whole DATA phase). Prints one JSON object with medians.

    mail_tool.py sinkcount FILE
        The message count from smtp-sink -c output (its last "mesg=N").
"""

import argparse
import asyncio
import base64
import hashlib
import hmac
import json
import os
import re
import sqlite3
import statistics
import sys
import time
import uuid

DB_NAME = "signupd.sqlite3"


def read_secret(path):
    with open(path, "rb") as f:
        data = f.read()
    if data.endswith(b"\n"):
        data = data[:-1]
        if data.endswith(b"\r"):
            data = data[:-1]
    return data


def removal_hash(hash_key, subscriber_id):
    tag = hmac.new(hash_key, f"signupd/removal/v1\n{subscriber_id}".encode(), hashlib.sha256).digest()
    token = base64.urlsafe_b64encode(tag).rstrip(b"=")
    return hashlib.sha256(token).hexdigest()


def cmd_seed(args):
    hash_key = read_secret(os.path.join(args.data_dir, "hash_key"))
    db = sqlite3.connect(os.path.join(args.data_dir, DB_NAME), isolation_level=None)
    db.execute("PRAGMA foreign_keys = ON")
    now = int(time.time())
    prefix = args.prefix or f"m{now:x}"
    rows = []
    for i in range(args.n):
        sid = str(uuid.uuid4())
        rows.append((sid, args.list, f"{prefix}-{i}@example.com", now, removal_hash(hash_key, sid)))
    started = time.monotonic()
    db.execute("BEGIN IMMEDIATE")
    db.executemany(
        "INSERT INTO subscribers (id, list_id, email, status, consent_version, created_at, removal_hash)"
        " VALUES (?1, ?2, ?3, 'pending', 'v1', ?4, ?5)",
        rows,
    )
    db.executemany(
        "INSERT INTO outbox (kind, subscriber_id, created_at, next_attempt_at) VALUES ('confirm', ?1, ?2, ?2)",
        [(r[0], now) for r in rows],
    )
    db.execute("COMMIT")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    (queued,) = db.execute("SELECT count(*) FROM outbox").fetchone()
    db.close()
    print(json.dumps({"seeded": args.n, "outbox": queued, "secs": round(time.monotonic() - started, 3)}))


def cpu_secs(pid):
    if not pid:
        return None
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def cmd_drain(args):
    path = os.path.join(args.data_dir, DB_NAME)
    while not os.path.exists(path):
        time.sleep(0.01)
    db = sqlite3.connect(path, isolation_level=None, timeout=5)
    query = (
        "SELECT (SELECT count(*) FROM outbox), (SELECT count(*) FROM intake),"
        " (SELECT count(*) FROM subscribers), (SELECT count(*) FROM subscribers WHERE confirmation_sent_at IS NOT NULL)"
    )
    cpu_start = cpu_secs(args.pid)
    sink_start = cpu_secs(args.sink_pid)
    first = None
    samples = []
    deadline = time.time() + args.timeout
    while True:
        now = time.time()
        outbox, intake, subscribers, mailed = db.execute(query).fetchone()
        samples.append((round(now - args.t0, 3), outbox, mailed))
        if first is None and mailed > 0:
            first = now
        if outbox == 0 and intake == 0 and subscribers >= args.n:
            done = now
            break
        if now > deadline:
            errors = db.execute(
                "SELECT last_error, count(*) FROM outbox WHERE last_error IS NOT NULL GROUP BY 1"
            ).fetchall()
            print(json.dumps({"timeout": True, "outbox": outbox, "intake": intake, "subscribers": subscribers,
                              "mailed": mailed, "errors": errors}))
            sys.exit(1)
        time.sleep(args.interval)
    cpu_end = cpu_secs(args.pid)
    sink_end = cpu_secs(args.sink_pid)
    (mailed,) = db.execute("SELECT count(*) FROM subscribers WHERE confirmation_sent_at IS NOT NULL").fetchone()
    db.close()
    drain = done - args.t0
    active = done - first if first else None
    result = {
        "n": args.n,
        "mailed": mailed,
        "drain_secs": round(drain, 3),
        "first_mail_secs": round(first - args.t0, 3) if first else None,
        "active_secs": round(active, 3) if active else None,
        "mails_per_sec": round(args.n / drain, 1),
        "mails_per_sec_active": round(args.n / active, 1) if active else None,
        "cpu_secs": round(cpu_end - cpu_start, 2) if cpu_start is not None and cpu_end is not None else None,
    }
    if result["cpu_secs"] is not None:
        result["cpu_us_per_mail"] = round(result["cpu_secs"] / args.n * 1e6)
        result["cpu_util_pct_of_one_core"] = round(100 * result["cpu_secs"] / drain, 1)
    if sink_start is not None and sink_end is not None:
        result["sink_cpu_secs"] = round(sink_end - sink_start, 2)
    if args.samples:
        with open(args.samples, "w") as f:
            for s in samples:
                f.write("%s %s %s\n" % s)
    print(json.dumps(result))


async def signup_conn(host, port, path, bodies, results):
    reader, writer = await asyncio.open_connection(host, port)
    try:
        for body in bodies:
            writer.write(
                b"POST " + path + b" HTTP/1.1\r\nHost: " + host.encode() + b"\r\n"
                b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: "
                + str(len(body)).encode() + b"\r\n\r\n" + body
            )
            head = await reader.readuntil(b"\r\n\r\n")
            status = int(head.split(b" ", 2)[1])
            match = re.search(rb"(?i)\r\ncontent-length:\s*(\d+)", head)
            if match and int(match.group(1)):
                await reader.readexactly(int(match.group(1)))
            results[status] = results.get(status, 0) + 1
    finally:
        writer.close()


async def signups(args):
    from urllib.parse import urlsplit

    url = urlsplit(args.url)
    prefix = args.prefix or f"e{int(time.time()):x}"
    bodies = [f"email={prefix}-{i}%40example.com&consent=yes&list=news".encode() for i in range(args.n)]
    chunks = [bodies[i :: args.c] for i in range(args.c)]
    results = {}
    started = time.time()
    await asyncio.gather(
        *(signup_conn(url.hostname, url.port, url.path.encode(), chunk, results) for chunk in chunks)
    )
    secs = time.time() - started
    print(json.dumps({"requests": args.n, "conns": args.c, "secs": round(secs, 3),
                      "rps": round(args.n / secs, 1), "status": results, "t_start": started}))
    return 0 if set(results) == {303} else 1


def cmd_fsync(args):
    """4 KiB writes + fdatasync: appending (the file grows, so the journal commits metadata too)
    and overwriting a preallocated region (how a reused WAL file is written)."""
    path = os.path.join(args.dir, "fsync-probe.tmp")
    block = os.urandom(4096)
    out = {"n": args.n}
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        for mode in ("append", "overwrite"):
            if mode == "overwrite":
                os.fsync(fd)
            lat = []
            for i in range(args.n):
                t = time.perf_counter()
                os.pwrite(fd, block, i * 4096)
                os.fdatasync(fd)
                lat.append((time.perf_counter() - t) * 1e6)
            lat.sort()
            out[mode + "_median_us"] = round(statistics.median(lat))
            out[mode + "_p90_us"] = round(lat[int(len(lat) * 0.9)])
    finally:
        os.close(fd)
        os.unlink(path)
    print(json.dumps(out))


def cmd_stracecount(args):
    """`strace -c -w` summary -> calls per mail and wall-clock seconds per syscall."""
    out = {"mails": args.n}
    with open(args.file, errors="replace") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 5 and parts[-1].isidentifier() and parts[0].replace(".", "").isdigit():
                name, secs, calls = parts[-1], float(parts[1]), int(parts[3])
                if name == "total":
                    continue
                out[name + "_per_mail"] = round(calls / args.n, 2)
                out[name + "_secs"] = round(secs, 3)
                if calls:
                    out[name + "_avg_us"] = round(secs / calls * 1e6)
    print(json.dumps(out))


def cmd_perfcount(args):
    """`perf stat -x,` output -> events per mail, CPU milliseconds per mail."""
    out = {"mails": args.n}
    with open(args.file) as f:
        for line in f:
            parts = line.strip().split(",")
            if len(parts) < 3 or line.startswith("#"):
                continue
            try:
                value = float(parts[0])
            except ValueError:
                continue
            event = parts[2].split(":")[-1].replace("sys_enter_", "")
            if event == "task-clock":
                out["cpu_ms_per_mail"] = round(value / args.n, 3)
                out["cpu_secs"] = round(value / 1000, 2)
            else:
                out[event + "_per_mail"] = round(value / args.n, 2)
    print(json.dumps(out))


STRACE_LINE = re.compile(r"^(?:\[pid\s+(\d+)\] )?(\d+):(\d+):(\d+\.\d+) (sendto|recvfrom)\((\d+), \"([^\"]*)\"")


def cmd_smtpwait(args):
    dot_wait, data_phase = [], []
    dot_at, data_at = {}, {}
    with open(args.file, errors="replace") as f:
        for line in f:
            m = STRACE_LINE.match(line)
            if not m:
                continue
            _, h, mi, sec, call, fd, data = m.groups()
            t = int(h) * 3600 + int(mi) * 60 + float(sec)
            if call == "sendto" and data == "\\r\\n.\\r\\n":
                dot_at[fd] = t
            elif call == "recvfrom" and data.startswith("354"):
                data_at[fd] = t
            elif call == "recvfrom" and data.startswith("250") and fd in dot_at:
                dot_wait.append((t - dot_at.pop(fd)) * 1e3)
                if fd in data_at:
                    data_phase.append((t - data_at.pop(fd)) * 1e3)
    out = {"mails": len(dot_wait)}
    if dot_wait:
        dot_wait.sort()
        out["dot_to_250_ms_median"] = round(statistics.median(dot_wait), 2)
        out["dot_to_250_ms_p10"] = round(dot_wait[len(dot_wait) // 10], 2)
        out["dot_to_250_ms_p90"] = round(dot_wait[len(dot_wait) * 9 // 10], 2)
    if data_phase:
        out["354_to_250_ms_median"] = round(statistics.median(data_phase), 2)
    print(json.dumps(out))


def cmd_sinkcount(args):
    try:
        with open(args.file, "rb") as f:
            text = f.read().decode(errors="replace")
    except OSError:
        text = ""
    counts = re.findall(r"mesg=(\d+)", text)
    print(counts[-1] if counts else 0)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("seed")
    s.add_argument("--data-dir", required=True)
    s.add_argument("-n", type=int, required=True)
    s.add_argument("--list", default="news")
    s.add_argument("--prefix")
    s = sub.add_parser("drain")
    s.add_argument("--data-dir", required=True)
    s.add_argument("-n", type=int, required=True)
    s.add_argument("--t0", type=float, required=True)
    s.add_argument("--pid", type=int)
    s.add_argument("--timeout", type=float, default=900)
    s.add_argument("--interval", type=float, default=0.1)
    s.add_argument("--samples")
    s.add_argument("--sink-pid", type=int)
    s = sub.add_parser("signups")
    s.add_argument("--url", required=True)
    s.add_argument("-n", type=int, required=True)
    s.add_argument("-c", type=int, default=16)
    s.add_argument("--prefix")
    s = sub.add_parser("fsync")
    s.add_argument("--dir", required=True)
    s.add_argument("-n", type=int, default=1000)
    s = sub.add_parser("perfcount")
    s.add_argument("file")
    s.add_argument("-n", type=int, required=True)
    s = sub.add_parser("stracecount")
    s.add_argument("file")
    s.add_argument("-n", type=int, required=True)
    s = sub.add_parser("smtpwait")
    s.add_argument("file")
    s = sub.add_parser("sinkcount")
    s.add_argument("file")
    args = p.parse_args()
    if args.cmd == "seed":
        cmd_seed(args)
    elif args.cmd == "drain":
        cmd_drain(args)
    elif args.cmd == "signups":
        sys.exit(asyncio.run(signups(args)))
    elif args.cmd == "fsync":
        cmd_fsync(args)
    elif args.cmd == "perfcount":
        cmd_perfcount(args)
    elif args.cmd == "stracecount":
        cmd_stracecount(args)
    elif args.cmd == "smtpwait":
        cmd_smtpwait(args)
    elif args.cmd == "sinkcount":
        cmd_sinkcount(args)


if __name__ == "__main__":
    main()
