#!/usr/bin/env python3
"""Helpers for bench/flood.sh. Python 3.11 standard library only.

    flood_tool.py visitors --url URL --sink-dir DIR --n 10 --first S --last S --wait S
                           [--tag T] [--list news] --out FILE
        Ten (--n) visitors, each from its own IPv4 /24 (198.18.<i>.10, sent in CF-Connecting-IP
        through the trusted loopback proxy), sign up one address each (visitor<i>-<tag>@example.org)
        at evenly spread times between --first and --last seconds after this command started (the
        flood starts with it). Each must be answered 303. Then it waits until every visitor's
        confirmation has reached the sink (DIR/mails.jsonl, written by flood_sink.py) or --wait
        seconds have passed since the last visitor's answer, and writes one JSON object to --out:
        per visitor the answer's status, when it came (seconds after the start) and the seconds
        from the 303 to the mail's arrival (null: none arrived).

    flood_tool.py sink --sink-dir DIR [--t0 EPOCH] [--until EPOCH] [--hour-turn EPOCH]
        Counts what the sink received (visitors' mails, flood mails, mails per repeated victim,
        the most mails any one address got) and the alert webhook's POSTs; with --hour-turn, the
        mails before and after it and the visitors' places among those after; one JSON object.

    flood_tool.py metrics --url URL
        The Prometheus text from signupd's metrics listener, reduced to the signup outcomes,
        mail results and surge alerts (sums over lists); one JSON object.
"""

import argparse
import collections
import http.client
import json
import os
import re
import sys
import threading
import time
import urllib.parse
import urllib.request


def read_jsonl(path):
    if not os.path.exists(path):
        return []
    out = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass  # a line being written
    return out


def visitors(args):
    url = urllib.parse.urlsplit(args.url)
    start = time.time()
    results = [None] * args.n
    tag = args.tag or f"{int(start):x}"

    def visit(i):
        due = start + args.first + (args.last - args.first) * (i / max(1, args.n - 1))
        time.sleep(max(0.0, due - time.time()))
        email = f"visitor{i}-{tag}@example.org"
        body = urllib.parse.urlencode({"email": email, "consent": "yes", "list": args.list})
        sent = time.time()
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
        try:
            conn.request("POST", url.path, body=body, headers={
                "Content-Type": "application/x-www-form-urlencoded",
                "CF-Connecting-IP": f"198.18.{i + 1}.10",
            })
            response = conn.getresponse()
            response.read()
            status = response.status
        except OSError as error:
            status = f"error: {error}"
        finally:
            conn.close()
        answered = time.time()
        results[i] = {"visitor": i, "email": email, "client": f"198.18.{i + 1}.10", "status": status,
                      "sent_at_s": round(sent - start, 3), "answer_ms": round((answered - sent) * 1000, 1),
                      "answered_epoch": answered}

    threads = [threading.Thread(target=visit, args=(i,)) for i in range(args.n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    last_answer = max(r["answered_epoch"] for r in results)
    deadline = last_answer + args.wait
    mails_path = os.path.join(args.sink_dir, "mails.jsonl")
    arrived = {}
    while True:
        for m in read_jsonl(mails_path):
            arrived.setdefault(m["rcpt"], m["t"])
        if all(r["email"] in arrived for r in results) or time.time() >= deadline:
            break
        time.sleep(0.1)
    for r in results:
        t = arrived.get(r["email"])
        r["mail_after_s"] = None if t is None else round(t - r["answered_epoch"], 3)
        r["mail_at_s"] = None if t is None else round(t - start, 3)
    got = [r["mail_after_s"] for r in results if r["mail_after_s"] is not None]
    summary = {
        "start_epoch": start,
        "visitors": results,
        "answered_303": sum(1 for r in results if r["status"] == 303),
        "mailed": len(got),
        "mailed_within_60s": sum(1 for x in got if x <= 60),
        "max_mail_after_s": max(got) if got else None,
        "median_mail_after_s": sorted(got)[len(got) // 2] if got else None,
        "waited_s_after_last_answer": round(min(time.time(), deadline) - last_answer, 1),
    }
    with open(args.out, "w") as f:
        json.dump(summary, f, indent=1)
    print(json.dumps({k: v for k, v in summary.items() if k != "visitors"}))


def sink(args):
    mails = read_jsonl(os.path.join(args.sink_dir, "mails.jsonl"))
    if args.until:
        mails = [m for m in mails if m["t"] <= args.until]
    per_rcpt = collections.Counter(m["rcpt"] for m in mails)
    flood = {r: c for r, c in per_rcpt.items() if not r.startswith("visitor")}
    repeat = {r: c for r, c in flood.items() if r.startswith("repeat-")}
    alerts = read_jsonl(os.path.join(args.sink_dir, "alerts.jsonl"))
    out = {
        "mails": len(mails),
        "visitor_mails": sum(c for r, c in per_rcpt.items() if r.startswith("visitor")),
        "flood_mails": sum(flood.values()),
        "repeat_victim_mails": dict(sorted(repeat.items())),
        "max_mails_one_address": max(per_rcpt.values()) if per_rcpt else 0,
        "alerts": len(alerts),
        "alert_bodies": [a["body"] for a in alerts][:10],
    }
    if args.hour_turn:
        before = [m for m in mails if m["t"] < args.hour_turn]
        after = sorted((m for m in mails if m["t"] >= args.hour_turn), key=lambda m: m["t"])
        out["mails_before_hour_turn"] = len(before)
        out["mails_after_hour_turn"] = len(after)
        out["visitor_places_after_hour_turn"] = [i + 1 for i, m in enumerate(after) if m["rcpt"].startswith("visitor")]
    if args.t0 and mails:
        out["first_mail_after_t0_s"] = round(min(m["t"] for m in mails) - args.t0, 3)
        out["last_mail_after_t0_s"] = round(max(m["t"] for m in mails) - args.t0, 3)
    print(json.dumps(out))


def metrics(args):
    text = urllib.request.urlopen(args.url, timeout=10).read().decode()
    want = {
        "signupd_signups_total": "outcome",
        "signupd_mails_total": "result",
        "signupd_surge_alerts_total": None,
    }
    out = collections.defaultdict(lambda: collections.defaultdict(float))
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        m = re.match(r"^([a-z_]+)(\{([^}]*)\})?\s+([0-9.eE+-]+)$", line)
        if not m or m.group(1) not in want:
            continue
        labels = dict(re.findall(r'([a-z_]+)="([^"]*)"', m.group(3) or ""))
        key = want[m.group(1)]
        if m.group(1) == "signupd_mails_total":
            label = f'{labels.get("kind", "")}/{labels.get("result", "")}'
        else:
            label = labels.get(key, "all") if key else "all"
        out[m.group(1)][label] += float(m.group(4))
    print(json.dumps({k: {l: int(v) for l, v in sorted(d.items())} for k, d in out.items()}))


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("visitors")
    p.add_argument("--url", required=True)
    p.add_argument("--sink-dir", required=True)
    p.add_argument("--n", type=int, default=10)
    p.add_argument("--first", type=float, required=True)
    p.add_argument("--last", type=float, required=True)
    p.add_argument("--wait", type=float, default=60)
    p.add_argument("--tag", default="")
    p.add_argument("--list", default="news")
    p.add_argument("--out", required=True)
    p = sub.add_parser("sink")
    p.add_argument("--sink-dir", required=True)
    p.add_argument("--t0", type=float, default=0)
    p.add_argument("--until", type=float, default=0)
    p.add_argument("--hour-turn", type=float, default=0, help="epoch when signupd's clock hour turned")
    p = sub.add_parser("metrics")
    p.add_argument("--url", required=True)
    args = parser.parse_args()
    {"visitors": visitors, "sink": sink, "metrics": metrics}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
