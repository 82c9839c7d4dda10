#!/usr/bin/env python3
"""An SMTP catcher for the package test: the relay of the filled-in configuration, on 127.0.0.1.

It speaks plain SMTP (the configuration's `security = "none"`, which signupd allows only to a
loopback relay), offers AUTH PLAIN and LOGIN, accepts mail only after a login with the expected
user name and password (so a mail that arrives proves signupd found the SMTP password), and
writes every message to DIR/<n>.eml, with its text/plain part decoded beside it in DIR/<n>.txt.
One line per event on standard output. Python 3 standard library only.

    smtp_catcher.py --dir DIR --port-file FILE --user USER --password PASSWORD

binds a free port and writes its number to FILE once it listens; runs until killed.
"""

import argparse
import base64
import email
import email.policy
import itertools
import os
import socketserver
import sys
import threading

counter = itertools.count(1)
lock = threading.Lock()


def log(line):
    with lock:
        print(line, flush=True)


class Session(socketserver.StreamRequestHandler):
    def reply(self, text):
        self.wfile.write(text.encode() + b"\r\n")

    def line(self):
        raw = self.rfile.readline(65536)
        if not raw:
            raise ConnectionError
        return raw.decode("utf-8", "replace").rstrip("\r\n")

    def login(self, user, password):
        if user == self.server.user and password == self.server.password:
            self.authenticated = True
            log(f"AUTH ok user={user}")
            self.reply("235 2.7.0 authenticated")
        else:
            log(f"AUTH refused user={user}")
            self.reply("535 5.7.8 authentication failed")

    def auth(self, args):
        parts = args.split()
        mechanism = parts[0].upper() if parts else ""
        if mechanism == "PLAIN":
            data = parts[1] if len(parts) > 1 else (self.reply("334 ") or self.line())
            fields = base64.b64decode(data).decode("utf-8", "replace").split("\0")
            if len(fields) != 3:
                return self.reply("501 5.5.2 bad PLAIN data")
            return self.login(fields[1], fields[2])
        if mechanism == "LOGIN":
            if len(parts) > 1:
                user = base64.b64decode(parts[1]).decode("utf-8", "replace")
            else:
                self.reply("334 VXNlcm5hbWU6")
                user = base64.b64decode(self.line()).decode("utf-8", "replace")
            self.reply("334 UGFzc3dvcmQ6")
            return self.login(user, base64.b64decode(self.line()).decode("utf-8", "replace"))
        return self.reply("504 5.5.4 mechanism not supported")

    def data(self):
        self.reply("354 end with <CRLF>.<CRLF>")
        lines = []
        while True:
            line = self.rfile.readline(1 << 20)
            if not line:
                raise ConnectionError
            if line in (b".\r\n", b".\n"):
                break
            lines.append(line[1:] if line.startswith(b"..") else line)
        raw = b"".join(lines)
        number = next(counter)
        path = os.path.join(self.server.dir, f"{number}.eml")
        with open(path, "wb") as f:
            f.write(raw)
        message = email.message_from_bytes(raw, policy=email.policy.default)
        plain = message.get_body(preferencelist=("plain",))
        with open(os.path.join(self.server.dir, f"{number}.txt"), "w", encoding="utf-8") as f:
            f.write(plain.get_content() if plain is not None else "")
        log(f"MAIL {number}.eml from={self.sender} to={','.join(self.recipients)} subject={message['subject']}")
        self.reply("250 2.0.0 queued")

    def handle(self):
        self.authenticated = False
        self.sender, self.recipients = None, []
        self.reply("220 catcher ESMTP")
        try:
            while True:
                line = self.line()
                verb, _, args = line.partition(" ")
                verb = verb.upper()
                if verb == "EHLO":
                    self.reply("250-catcher")
                    self.reply("250-AUTH PLAIN LOGIN")
                    self.reply("250 8BITMIME")
                elif verb == "HELO":
                    self.reply("250 catcher")
                elif verb == "AUTH":
                    self.auth(args)
                elif verb == "MAIL":
                    if not self.authenticated:
                        log("MAIL refused: not authenticated")
                        self.reply("530 5.7.0 authentication required")
                        continue
                    self.sender, self.recipients = args.split(":", 1)[-1].strip().split(" ")[0].strip("<>"), []
                    self.reply("250 2.1.0 ok")
                elif verb == "RCPT":
                    self.recipients.append(args.split(":", 1)[-1].strip().strip("<>"))
                    self.reply("250 2.1.5 ok")
                elif verb == "DATA":
                    self.data()
                elif verb == "RSET":
                    self.sender, self.recipients = None, []
                    self.reply("250 2.0.0 ok")
                elif verb == "NOOP":
                    self.reply("250 2.0.0 ok")
                elif verb == "QUIT":
                    self.reply("221 2.0.0 bye")
                    return
                else:
                    self.reply("502 5.5.1 not implemented")
        except (ConnectionError, OSError):
            return


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", required=True)
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--user", required=True)
    parser.add_argument("--password", required=True)
    args = parser.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    server = Server(("127.0.0.1", 0), Session)
    server.dir, server.user, server.password = args.dir, args.user, args.password
    with open(args.port_file + ".tmp", "w") as f:
        f.write(f"{server.server_address[1]}\n")
    os.replace(args.port_file + ".tmp", args.port_file)
    log(f"listening on 127.0.0.1:{server.server_address[1]}")
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
