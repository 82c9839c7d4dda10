#!/usr/bin/env python3
"""A smoke of the real server from one binary, as a person would try it on a new machine: the
zero-setup serve in an empty directory, a signup posted as a form and one as JSON, the
confirmation mail written as a file, its link confirmed, then `check-config`, `stats` and
`doctor --json` on the data it made. For the ARM binaries, which run here under qemu-user
(`.ci/cross test`), so the binary that ships is the one that ran: the unit tests check the code,
this checks that the cross-compiled program starts, serves, writes SQLite and mail, and stops.

    python3 tests/release/smoke.py BINARY [--runner qemu-aarch64-static]

Exits non-zero when any check fails; prints one line a check.
"""

import argparse
import email
import email.policy
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from checks import Checks

# Emulation makes every step slower (a start under qemu-arm takes seconds on a busy machine).
DEADLINE_S = 120

check = Checks("smoke")
failures = check.failures


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(probe, alive=lambda: True):
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline and alive():
        found = probe()
        if found:
            return found
        time.sleep(0.2)
    return None


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


OPENER = urllib.request.build_opener(NoRedirect)


def post(url, data, headers):
    request = urllib.request.Request(url, data=data, headers=headers, method="POST")
    try:
        with OPENER.open(request, timeout=60) as response:
            return response.status, response.headers, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read().decode()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary", type=Path)
    parser.add_argument("--runner", default="")
    args = parser.parse_args()
    command = ([args.runner] if args.runner else []) + [str(args.binary.resolve())]

    work = Path(tempfile.mkdtemp(prefix="signupd-smoke."))
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIGNUPD_") and k not in ("RUST_LOG", "CREDENTIALS_DIRECTORY")}
    env["SIGNUPD_SERVER__LISTEN"] = f"127.0.0.1:{port}"
    base = f"http://127.0.0.1:{port}"

    def run(*words):
        return subprocess.run(command + list(words), cwd=work, env=env, capture_output=True, text=True, timeout=DEADLINE_S)

    version = run("--version")
    check(f"{' '.join(command)} --version runs", version.returncode == 0 and version.stdout.startswith("signupd "),
          version.stdout + version.stderr)

    log = open(work / "serve.log", "w")
    server = subprocess.Popen(command + ["serve"], cwd=work, env=env, stdout=log, stderr=log, start_new_session=True)
    try:
        alive = lambda: server.poll() is None
        ready = wait_until(lambda: run("healthcheck").returncode == 0, alive)
        if not check("the zero-setup serve answers its own healthcheck", bool(ready)):
            return
        check("it made ./data/signupd.sqlite3", (work / "data/signupd.sqlite3").is_file())

        form = urllib.parse.urlencode({"email": "ann@example.com", "consent": "yes"}).encode()
        status, headers, _ = post(f"{base}/api/signup", form, {"Content-Type": "application/x-www-form-urlencoded"})
        check("a form signup: 303 to /check-inbox", status == 303 and "/check-inbox" in headers.get("Location", ""),
              f"{status} {headers.get('Location')}")

        body = json.dumps({"list": "default", "email": "bob@example.com", "consent": True, "website": ""}).encode()
        status, _, text = post(f"{base}/api/signup", body, {"Content-Type": "application/json"})
        check("a JSON signup: 202 confirm_email", status == 202 and json.loads(text).get("next") == "confirm_email",
              f"{status} {text}")

        mailbox = work / "data/mail"
        mails = wait_until(lambda: sorted(mailbox.glob("*.eml")) if len(list(mailbox.glob("*.eml"))) >= 2 else None, alive)
        check("both confirmation mails written as files in ./data/mail", bool(mails) and len(mails) == 2,
              str(list(mailbox.glob("*")) if mailbox.is_dir() else "no ./data/mail"))
        token = None
        for path in mails or []:
            message = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
            if "ann@example.com" not in str(message["To"]):
                continue
            text = message.get_body(preferencelist=("plain",)).get_content()
            found = re.search(r"/confirm\?token=([A-Za-z0-9_\-.~%]+)", text)
            token = found and urllib.parse.unquote(found.group(1))
        if check("Ann's mail has a confirm link", bool(token)):
            status, headers, text = post(f"{base}/api/confirm", urllib.parse.urlencode({"token": token}).encode(),
                                         {"Content-Type": "application/x-www-form-urlencoded"})
            check("confirming it: 303 to /confirmed", status == 303 and "/confirmed" in headers.get("Location", ""),
                  f"{status} {headers.get('Location')} {text[:200]}")

        config = run("check-config")
        check("check-config accepts the zero-setup configuration", config.returncode == 0, config.stdout + config.stderr)
        stats = run("stats")
        check("stats runs", stats.returncode == 0, stats.stdout + stats.stderr)

        doctor = run("doctor", "--json")
        try:
            report = json.loads(doctor.stdout)
        except ValueError:
            report = None
        check("doctor --json answers JSON (exit 0, or 1 for a problem it names)",
              report is not None and doctor.returncode in (0, 1), doctor.stdout[-500:] + doctor.stderr[-500:])

        server.send_signal(signal.SIGTERM)
        try:
            status = server.wait(timeout=DEADLINE_S)
        except subprocess.TimeoutExpired:
            status = "still running"
        check("serve exits 0 on SIGTERM", status == 0, str(status))
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        log.close()
        if failures:
            print((work / "serve.log").read_text()[-3000:], file=sys.stderr)
        subprocess.run(["rm", "-rf", str(work)], check=False)


if __name__ == "__main__":
    main()
    if failures:
        print(f"smoke: {len(failures)} check(s) failed", file=sys.stderr)
        sys.exit(1)
    print("smoke: all checks passed")
