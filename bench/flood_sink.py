#!/usr/bin/env python3
"""SMTP sink and alert-webhook receiver for bench/flood.sh. Python 3.11 standard library only.

    flood_sink.py --smtp-port P --http-port Q --out DIR

SMTP (no TLS, no AUTH) on 127.0.0.1:P: accepts every message and appends one JSON line per
recipient to DIR/mails.jsonl as the message's final "." arrives:
    {"t": <epoch seconds, float>, "rcpt": "<address>", "bytes": N}
HTTP on 127.0.0.1:Q: every POST body is appended to DIR/alerts.jsonl with its arrival time
({"t": ..., "body": <parsed JSON or the raw text>}) and answered 204.
Both files are flushed per line, so a reader sees each arrival at once. Stops on SIGTERM/SIGINT.
"""

import argparse
import asyncio
import json
import os
import signal
import time


class Recorder:
    def __init__(self, path):
        self.file = open(path, "a", buffering=1)  # line-buffered

    def write(self, record):
        self.file.write(json.dumps(record) + "\n")


async def smtp_session(reader, writer, mails):
    def send(line):
        writer.write(line.encode() + b"\r\n")

    send("220 flood-sink ESMTP")
    await writer.drain()
    rcpts = []
    try:
        while True:
            line = await reader.readline()
            if not line:
                return
            command = line.decode("latin-1").rstrip("\r\n")
            verb = command[:4].upper()
            if verb in ("EHLO", "HELO"):
                send("250-flood-sink" if verb == "EHLO" else "250 flood-sink")
                if verb == "EHLO":
                    send("250-8BITMIME")
                    send("250-PIPELINING")
                    send("250 SMTPUTF8")
            elif verb == "MAIL":
                rcpts = []
                send("250 2.1.0 ok")
            elif verb == "RCPT":
                address = command.split(":", 1)[1].strip() if ":" in command else ""
                address = address.split()[0] if address else ""
                rcpts.append(address.strip("<>"))
                send("250 2.1.5 ok")
            elif verb == "DATA":
                send("354 go ahead")
                await writer.drain()
                size = 0
                while True:
                    data = await reader.readline()
                    if not data:
                        return
                    if data in (b".\r\n", b".\n"):
                        break
                    size += len(data)
                now = time.time()
                for rcpt in rcpts:
                    mails.write({"t": now, "rcpt": rcpt, "bytes": size})
                rcpts = []
                send("250 2.0.0 queued")
            elif verb == "QUIT":
                send("221 2.0.0 bye")
                await writer.drain()
                return
            elif verb == "RSET":
                rcpts = []
                send("250 2.0.0 ok")
            else:  # NOOP and anything else
                send("250 2.0.0 ok")
            await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError):
        return
    finally:
        writer.close()


async def http_session(reader, writer, alerts):
    try:
        head = await reader.readuntil(b"\r\n\r\n")
        length = 0
        for line in head.decode("latin-1").split("\r\n")[1:]:
            name, _, value = line.partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        body = await reader.readexactly(length) if length else b""
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = body.decode("utf-8", "replace")
        alerts.write({"t": time.time(), "body": parsed})
        writer.write(b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
        await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
        pass
    finally:
        writer.close()


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--smtp-port", type=int, required=True)
    parser.add_argument("--http-port", type=int, required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    mails = Recorder(os.path.join(args.out, "mails.jsonl"))
    alerts = Recorder(os.path.join(args.out, "alerts.jsonl"))
    smtp = await asyncio.start_server(lambda r, w: smtp_session(r, w, mails), "127.0.0.1", args.smtp_port)
    http = await asyncio.start_server(lambda r, w: http_session(r, w, alerts), "127.0.0.1", args.http_port)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with smtp, http:
        await stop.wait()


if __name__ == "__main__":
    asyncio.run(main())
