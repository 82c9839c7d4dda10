#!/usr/bin/env python3
"""Helpers for bench/flood.sh. Python 3.11 standard library only.

    flood_tool.py visitors --url URL --sink-dir DIR --n 10 --first S --last S --wait S
                           [--tag T] [--list news] --out FILE
        Ten (--n) visitors, each from its own IPv4 /24 (198.18.<i>.10, sent in CF-Connecting-IP
        through the trusted loopback proxy), sign up one address each (visitor<i>-<tag>@example.org,
        a form POST) at evenly spread times between --first and --last seconds after this command
        started (the flood starts with it). Each must be answered 303. A visitor whose 303 goes to
        the surge page (Location with `send=`) presses at once, as a person would: POST /api/send
        with the token, from the same address; that must be answered 303 too. Then it waits until
        every visitor's confirmation has reached the sink (DIR/mails.jsonl, written by
        flood_sink.py) or --wait seconds have passed since the last visitor's press (or answer),
        and writes one JSON object to --out: per visitor the answers, whether it was asked to
        press, when (seconds after the start) and the seconds from its press (from its signup's
        303 when it was not asked) to the mail's arrival (null: none arrived).

    flood_tool.py flood --url URL --level L1|L3 --mode v4|v6 --secs S [--conns 64] [--nets 250]
                        [--lists news,l2] [--repeat-every 4] [--repeat-victims 3]
        The flood levels a client that reads the answers is needed for (L0 is wrk with
        bench/flood.lua), over --conns HTTP/1.1 keep-alive connections in one asyncio loop, for
        --secs seconds. Clients and victims as in flood.lua (v4: hosts .1-.254 of --nets /24s
        10.100.<k>.<h>, taken in turn; v6: the /64s 2001:db8:1:<x>::1 of one /48; one request in
        --repeat-every names one of --repeat-victims fixed addresses). Each round, as one client:
          L1: GET /signup?list=ID (the hosted form), then POST /api/signup (form), the 303 not
              followed;
          L3: as L1, and when the 303 goes to the surge page (`send=` in Location) it GETs that
              page and presses: POST /api/send with the token, like a headless browser would.
        Prints one line like flood.lua's: FLOOD requests=<signup POSTs> rps=<POSTs/s> s303=N
        s303_send=N (surge answers) s429=N other=N socket_errors=N p50_us p99_us (the POSTs'),
        http_requests=N (all, GETs and presses included) http_rps, gets=N presses=N press_303=N.

    flood_tool.py sink --sink-dir DIR [--t0 EPOCH] [--until EPOCH] [--hour-turn EPOCH]
        Counts what the sink received (visitors' mails, flood mails, mails per repeated victim,
        the most mails any one address got) and the alert webhook's POSTs; with --t0, the flood's
        mails in the first minute after it and the seconds after it of every mail (visitors'
        marked); with --hour-turn, the mails before and after it and the visitors' places among
        those after; one JSON object.

    flood_tool.py metrics --url URL
        The Prometheus text from signupd's metrics listener, reduced to the signup outcomes,
        mail results and surge alerts (sums over lists); one JSON object.
"""

import argparse
import asyncio
import collections
import http.client
import json
import os
import random
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


def post_form(url, path, fields, client):
    """One form POST through the trusted proxy header: (status, Location or None)."""
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    try:
        conn.request("POST", path, body=urllib.parse.urlencode(fields), headers={
            "Content-Type": "application/x-www-form-urlencoded",
            "CF-Connecting-IP": client,
        })
        response = conn.getresponse()
        response.read()
        return response.status, response.getheader("Location")
    except OSError as error:
        return f"error: {error}", None
    finally:
        conn.close()


def send_token(location):
    """The send token of a surge redirect (`/check-inbox?list=ID&send=TOKEN`), or None."""
    if not location:
        return None
    return urllib.parse.parse_qs(urllib.parse.urlsplit(location).query).get("send", [None])[0]


def visitors(args):
    url = urllib.parse.urlsplit(args.url)
    start = time.time()
    results = [None] * args.n
    tag = args.tag or f"{int(start):x}"

    def visit(i):
        due = start + args.first + (args.last - args.first) * (i / max(1, args.n - 1))
        time.sleep(max(0.0, due - time.time()))
        email = f"visitor{i}-{tag}@example.org"
        client = f"198.18.{i + 1}.10"
        sent = time.time()
        status, location = post_form(url, url.path, {"email": email, "consent": "yes", "list": args.list}, client)
        answered = time.time()
        token = send_token(location)
        r = {"visitor": i, "email": email, "client": client, "status": status, "location": location,
             "asked_to_press": token is not None, "sent_at_s": round(sent - start, 3),
             "answer_ms": round((answered - sent) * 1000, 1), "answered_epoch": answered,
             "press_status": None, "press_location": None, "pressed_at_s": None}
        r["from_epoch"] = answered  # the press, or the signup's answer when not asked
        if token is not None:
            press_status, press_location = post_form(url, "/api/send", {"send": token}, client)
            pressed = time.time()
            r.update(press_status=press_status, press_location=press_location,
                     pressed_at_s=round(pressed - start, 3), from_epoch=pressed)
        results[i] = r

    threads = [threading.Thread(target=visit, args=(i,)) for i in range(args.n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    last = max(r["from_epoch"] for r in results)
    deadline = last + args.wait
    mails_path = os.path.join(args.sink_dir, "mails.jsonl")
    arrived = {}
    while True:
        for m in read_jsonl(mails_path):
            arrived.setdefault(m["rcpt"].lower(), m["t"])  # signupd writes the address lowercased
        if all(r["email"].lower() in arrived for r in results) or time.time() >= deadline:
            break
        time.sleep(0.1)
    for r in results:
        t = arrived.get(r["email"].lower())
        r["mail_after_s"] = None if t is None else round(t - r["from_epoch"], 3)
        r["mail_at_s"] = None if t is None else round(t - start, 3)
    got = [r["mail_after_s"] for r in results if r["mail_after_s"] is not None]
    summary = {
        "start_epoch": start,
        "visitors": results,
        "answered_303": sum(1 for r in results if r["status"] == 303),
        "asked_to_press": sum(1 for r in results if r["asked_to_press"]),
        "press_answered_303": sum(1 for r in results if r["press_status"] == 303),
        "mailed": len(got),
        "mailed_within_60s": sum(1 for x in got if x <= 60),
        "max_mail_after_s": max(got) if got else None,
        "median_mail_after_s": sorted(got)[len(got) // 2] if got else None,
        "waited_s_after_last_press": round(min(time.time(), deadline) - last, 1),
    }
    with open(args.out, "w") as f:
        json.dump(summary, f, indent=1)
    print(json.dumps({k: v for k, v in summary.items() if k != "visitors"}))


class Flood:
    """The state the flood's connections share (one asyncio loop, so no locks)."""

    def __init__(self, args):
        self.args = args
        self.lists = [x for x in args.lists.split(",") if x]
        self.run = f"{int(time.time()):x}{os.getpid() & 0xffff:04x}"
        self.n = 0
        self.r = 0
        self.counts = collections.Counter()
        self.latencies = []

    def client(self, g):
        if self.args.mode == "v4":
            k = g % self.args.nets
            host = g // self.args.nets % 254 + 1
            return f"10.{100 + k // 256}.{k % 256}.{host}"
        return f"2001:db8:1:{g % 65536:x}::1"

    def next_signup(self):
        """(client, email, list) of the next signup, as flood.lua picks them."""
        self.n += 1
        g = self.n
        if self.args.repeat_every > 0 and random.randrange(self.args.repeat_every) == 0:
            self.r += 1
            email = f"repeat-{self.r % self.args.repeat_victims}@example.net"
            lst = self.lists[self.r // self.args.repeat_victims % len(self.lists)]
        else:
            email = f"victim-{self.run}-{self.n}@example.net"
            lst = self.lists[self.n % len(self.lists)]
        return self.client(g), email, lst


async def http_exchange(reader, writer, method, target, host, client, body=None):
    """One HTTP/1.1 request on a keep-alive connection: (status, headers, keep_alive)."""
    head = [f"{method} {target} HTTP/1.1", f"Host: {host}", f"CF-Connecting-IP: {client}",
            "User-Agent: signupd-flood"]
    data = b""
    if body is not None:
        data = urllib.parse.urlencode(body).encode()
        head += ["Content-Type: application/x-www-form-urlencoded", f"Content-Length: {len(data)}"]
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + data)
    raw = await reader.readuntil(b"\r\n\r\n")
    lines = raw.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name:
            headers[name.strip().lower()] = value.strip()
    if "content-length" in headers:
        await reader.readexactly(int(headers["content-length"]))
    elif headers.get("transfer-encoding", "").lower() == "chunked":
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            await reader.readexactly(size + 2)
            if size == 0:
                break
    keep = headers.get("connection", "").lower() != "close"
    return status, headers, keep


async def flood_connection(state, host, port, deadline):
    args, c = state.args, state.counts
    reader = writer = None
    while time.monotonic() < deadline:
        try:
            if writer is None:
                reader, writer = await asyncio.open_connection(host, port)
            client, email, lst = state.next_signup()
            keep = True
            if args.level in ("L1", "L3"):
                status, _, keep = await http_exchange(reader, writer, "GET", f"/signup?list={lst}", host, client)
                c["gets"] += 1
                c[f"get_{status}"] += 1
                if not keep:
                    writer.close()
                    reader, writer = await asyncio.open_connection(host, port)
            t = time.monotonic()
            status, headers, keep = await http_exchange(
                reader, writer, "POST", "/api/signup", host, client, {"email": email, "consent": "yes", "list": lst})
            state.latencies.append(time.monotonic() - t)
            c["requests"] += 1
            location = headers.get("location")
            token = send_token(location)
            if status == 303:
                c["s303"] += 1
                if token is not None:
                    c["s303_send"] += 1
            elif status == 429:
                c["s429"] += 1
            else:
                c["other"] += 1
            if args.level == "L3" and token is not None:
                if not keep:
                    writer.close()
                    reader, writer = await asyncio.open_connection(host, port)
                page = urllib.parse.urlsplit(location)
                status, _, keep = await http_exchange(reader, writer, "GET", f"{page.path}?{page.query}", host, client)
                c["gets"] += 1
                c[f"get_{status}"] += 1
                if not keep:
                    writer.close()
                    reader, writer = await asyncio.open_connection(host, port)
                status, _, keep = await http_exchange(reader, writer, "POST", "/api/send", host, client, {"send": token})
                c["presses"] += 1
                c["press_303" if status == 303 else "press_other"] += 1
            if not keep:
                writer.close()
                reader = writer = None
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError, IndexError):
            c["socket_errors"] += 1
            if writer is not None:
                writer.close()
            reader = writer = None
            await asyncio.sleep(0.01)
    if writer is not None:
        writer.close()


def flood(args):
    url = urllib.parse.urlsplit(args.url)
    state = Flood(args)

    async def run():
        deadline = time.monotonic() + args.secs
        await asyncio.gather(*(flood_connection(state, url.hostname, url.port, deadline) for _ in range(args.conns)))

    t0 = time.monotonic()
    asyncio.run(run())
    secs = time.monotonic() - t0
    c = state.counts
    lat = sorted(state.latencies) or [0.0]
    pct = lambda q: int(lat[min(len(lat) - 1, int(q * len(lat)))] * 1e6)
    http_requests = c["requests"] + c["gets"] + c["presses"]
    extra = " ".join(f"{k}={v}" for k, v in sorted(c.items()) if k.startswith(("get_", "press_")))
    print(f"FLOOD requests={c['requests']} duration_us={int(secs * 1e6)} rps={c['requests'] / secs:.1f} "
          f"s303={c['s303']} s303_send={c['s303_send']} s429={c['s429']} other={c['other']} "
          f"socket_errors={c['socket_errors']} p50_us={pct(0.5)} p99_us={pct(0.99)} "
          f"http_requests={http_requests} http_rps={http_requests / secs:.1f} gets={c['gets']} "
          f"presses={c['presses']} {extra}".rstrip())


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
        flood_times = sorted(m["t"] - args.t0 for m in mails if not m["rcpt"].startswith("visitor"))
        out["flood_mails_first_60s"] = sum(1 for t in flood_times if t <= 60)
        out["flood_mails_first_10s"] = sum(1 for t in flood_times if t <= 10)
        out["mail_times_s"] = [[round(m["t"] - args.t0, 2), "visitor" if m["rcpt"].startswith("visitor") else "flood"]
                               for m in sorted(mails, key=lambda m: m["t"])]
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
    p = sub.add_parser("flood")
    p.add_argument("--url", required=True, help="signupd's base URL")
    p.add_argument("--level", choices=("L1", "L3"), required=True)
    p.add_argument("--mode", choices=("v4", "v6"), required=True)
    p.add_argument("--secs", type=float, required=True)
    p.add_argument("--conns", type=int, default=64)
    p.add_argument("--nets", type=int, default=250)
    p.add_argument("--lists", default="news")
    p.add_argument("--repeat-every", type=int, default=4)
    p.add_argument("--repeat-victims", type=int, default=3)
    p = sub.add_parser("sink")
    p.add_argument("--sink-dir", required=True)
    p.add_argument("--t0", type=float, default=0)
    p.add_argument("--until", type=float, default=0)
    p.add_argument("--hour-turn", type=float, default=0, help="epoch when signupd's clock hour turned")
    p = sub.add_parser("metrics")
    p.add_argument("--url", required=True)
    args = parser.parse_args()
    {"visitors": visitors, "flood": flood, "sink": sink, "metrics": metrics}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
