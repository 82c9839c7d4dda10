#!/usr/bin/env python3
"""A real Exim refusing signupd as it does by default: its default configuration's RCPT ACL
(`require message = relay not permitted` / `domains = +local_domains : +relay_to_domains`)
answers `550 relay not permitted` to every recipient of a client that neither logged in nor is
in `relay_from_hosts`, which reads like a missing mailbox. signupd must read it as the relay's
refusal of signupd itself: the signups stay pending with their mail queued, the operator gets
one `relay_refused` alert (stage `rcpt`, 550), and once the operator lets signupd relay (Exim's
`relay_from_hosts`, Exim restarted) every held confirmation arrives, once.

Debian's exim4-daemon-light conflicts with Postfix, which the same CI stage installs, so .ci/postfix
does not install it: it unpacks the package (`apt-get download`, `dpkg-deb -x`), installs the one
library it lacks by name and creates the `Debian-exim` user its binary was built for. This test
runs that binary with a configuration of its own (`-C`), in the foreground (`-bdf`), on a free
loopback port, keeping what it accepts in its own queue; a system mail server is left alone. By hand, as root:

    python3 tests/postfix/exim.py --signupd target/debug/signupd --exim DIR/usr/sbin/exim4
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.parse
import http.client
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import Checks, Processes, free_port  # noqa: E402
from relay import Alerts  # noqa: E402  (tests/postfix/relay.py)

SENDER = "newsletter@signupd.test"
READERS = "readers.test"
DEADLINE = 60.0


class EximFailed(Exception):
    pass


checks = Checks("exim relay", EximFailed)
say, check = checks.say, checks.check
processes = Processes()


def wait_until(what: str, condition, context, timeout: float = DEADLINE):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            check(True, what)
            return value
        if time.monotonic() > deadline:
            raise EximFailed(f"not within {timeout:.0f} s: {what}\n{context()}")
        time.sleep(0.2)


class Exim:
    """Exim 4 with a configuration of its own: the default configuration's RCPT ACL; what it
    accepts stays in its queue."""

    def __init__(self, binary: str, root: Path):
        self.binary = binary
        self.root = root
        self.port = free_port()
        self.config = root / "exim.conf"
        self.spool = root / "spool"
        self.logs = root / "log"
        self.process: subprocess.Popen | None = None

    def configure(self, relay_from_hosts: str) -> None:
        for directory in (self.spool, self.logs):
            directory.mkdir(parents=True, exist_ok=True)
            shutil.chown(directory, "Debian-exim")
        self.config.write_text(
            f"""# tests/postfix/exim.py: Exim on loopback, refusing to relay as its default configuration does.
primary_hostname = exim.signupd.test
domainlist local_domains = exim.signupd.test
domainlist relay_to_domains =
hostlist relay_from_hosts = {relay_from_hosts}
daemon_smtp_ports = {self.port}
local_interfaces = 127.0.0.1
spool_directory = {self.spool}
log_file_path = {self.logs}/%slog
keep_environment =
acl_smtp_rcpt = acl_check_rcpt
# What it accepts stays in its queue: the test reads its log, and Exim never re-executes itself
# (it would run /usr/sbin/exim4, which an unpacked package does not have).
queue_only

begin acl

# As Exim's default configuration has it.
acl_check_rcpt:
  accept  hosts = :
  accept  hosts = +relay_from_hosts
  accept  authenticated = *
  require message = relay not permitted
          domains = +local_domains : +relay_to_domains
  accept

begin routers

begin transports
"""
        )

    def start(self) -> None:
        self.process = processes.spawn(
            [self.binary, "-C", str(self.config), "-bdf", "-oX", str(self.port)], self.root / "exim.out", append=True
        )
        wait_until(f"Exim {self.version()} answers on 127.0.0.1:{self.port}", self.answers, self.tail)

    def version(self) -> str:
        result = subprocess.run([self.binary, "-C", str(self.config), "-bV"], capture_output=True, text=True)
        first = (result.stdout or result.stderr).splitlines()
        return next((line.split()[2] for line in first if line.startswith("Exim version")), "?")

    def answers(self) -> bool:
        import socket

        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=2) as connection:
                return connection.recv(100).startswith(b"220")
        except OSError:
            return False

    def restart(self) -> None:
        """The daemon stopped and started again with the configuration as it is now. (SIGHUP
        would re-execute the binary from its built-in path, /usr/sbin/exim4, which an unpacked
        package does not have.)"""
        self.stop()
        self.start()

    def accepted(self) -> int:
        """Messages Exim took (`<=` lines of its main log)."""
        try:
            return (self.logs / "mainlog").read_text(errors="replace").count(f" <= {SENDER} ")
        except FileNotFoundError:
            return 0

    def refusals(self) -> int:
        """`relay not permitted` refusals in Exim's reject log."""
        try:
            return (self.logs / "rejectlog").read_text(errors="replace").count("relay not permitted")
        except FileNotFoundError:
            return 0

    def tail(self) -> str:
        text = ""
        for name in ("mainlog", "rejectlog", "paniclog"):
            try:
                lines = (self.logs / name).read_text(errors="replace").splitlines()[-20:]
            except FileNotFoundError:
                continue
            text += "".join(f"   exim {name}| {line}\n" for line in lines)
        return text

    def stop(self) -> None:
        if self.process is not None:
            processes.stop(self.process)
            self.process = None


class Signupd:
    def __init__(self, binary: str, root: Path, exim: Exim, alerts: Alerts):
        self.binary = binary
        self.root = root
        self.exim = exim
        self.http_port = free_port()
        self.log = root / "signupd.log"
        self.config = root / "signupd.toml"
        data = root / "data"
        data.mkdir(mode=0o700)
        self.env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
        self.config.write_text(
            f"""[server]
listen = "127.0.0.1:{self.http_port}"
public_url = "http://127.0.0.1:{self.http_port}"
[storage]
data_dir = "{data}"
[signup]
rate_limits = []
network_rate_limits = []
[mail]
transport = "smtp"
retry_base = "1s"
alert_webhook = "http://127.0.0.1:{alerts.port}/alert"
[mail.smtp]
host = "127.0.0.1"
port = {exim.port}
security = "none"
timeout = "10s"
[[lists]]
id = "default"
name = "Exim test"
from = "Newsletter <{SENDER}>"
"""
        )
        self.server: subprocess.Popen | None = None

    def context(self) -> str:
        try:
            server = self.log.read_text(errors="replace")[-4000:]
        except FileNotFoundError:
            server = ""
        return f"{self.exim.tail()}\n   signupd's log:\n{server}"

    def start(self) -> None:
        self.server = processes.spawn([self.binary, "serve", "--config", str(self.config)], self.log, cwd=self.root,
                                      env=self.env)

        def ready() -> bool:
            connection = http.client.HTTPConnection("127.0.0.1", self.http_port, timeout=5)
            try:
                connection.request("GET", "/readyz")
                return connection.getresponse().status == 200
            except OSError:
                return False
            finally:
                connection.close()

        wait_until("signupd serve is ready", ready, self.context)

    def signup(self, address: str) -> None:
        body = urllib.parse.urlencode({"list": "default", "email": address, "consent": "yes"}).encode()
        connection = http.client.HTTPConnection("127.0.0.1", self.http_port, timeout=10)
        try:
            connection.request("POST", "/api/signup", body, {"Content-Type": "application/x-www-form-urlencoded"})
            response = connection.getresponse()
            response.read()
            status = response.status
        finally:
            connection.close()
        check(status == 303, f"POST /api/signup answers 303 ({status})")

    def pending_with_mail(self, address: str) -> bool:
        result = subprocess.run([self.binary, "lookup", "--json", address, "--config", str(self.config)],
                                capture_output=True, text=True, timeout=120, cwd=self.root, env=self.env)
        if result.returncode != 0:
            raise EximFailed(f"signupd lookup exited {result.returncode}: {result.stderr.strip()}")
        found = json.loads(result.stdout)
        return [row["status"] for row in found["rows"]] == ["pending"] and len(found["queued_mail"]) == 1

    def stop(self) -> None:
        if self.server is not None:
            processes.stop(self.server)
            check(self.server.returncode == 0, f"signupd exits 0 on SIGTERM ({self.server.returncode})")


def test(signupd_binary: str, exim_binary: str, base: Path) -> None:
    alerts = Alerts()
    exim = Exim(exim_binary, base / "exim")
    (base / "exim").mkdir()
    (base / "signupd").mkdir()
    server = None
    try:
        exim.configure(relay_from_hosts="")
        exim.start()
        server = Signupd(signupd_binary, base / "signupd", exim, alerts)
        server.start()
        addresses = [f"reader-{number}@{READERS}" for number in range(1, 4)]
        for address in addresses:
            server.signup(address)
        wait_until("the relay_refused alert comes", lambda: alerts.relay_refused(), server.context)
        wait_until(
            "signupd tries again (four `relay not permitted` in Exim's reject log)",
            lambda: exim.refusals() >= 4,
            server.context,
        )
        refused = alerts.relay_refused()
        check(len(refused) == 1, f"exactly one relay_refused alert ({len(refused)})")
        check(refused[0].get("stage") == "rcpt", f"... stage 'rcpt' ({refused[0].get('stage')!r})")
        check(refused[0].get("smtp_code") == 550, f"... smtp_code 550 ({refused[0].get('smtp_code')!r})")
        detail = str(refused[0].get("detail", ""))
        check("relay not permitted" in detail, f"... Exim's words: {detail}")
        check(not any(address in detail for address in addresses), "... and no address")
        check(not [a for a in alerts.received if a.get("event") == "confirmation_undeliverable"],
              "no confirmation_undeliverable: nobody's address is blamed")
        for number, address in enumerate(addresses, 1):
            check(server.pending_with_mail(address), f"signup {number} is pending, its confirmation queued")
        check(exim.accepted() == 0, "Exim took nothing")

        exim.configure(relay_from_hosts="127.0.0.1")
        exim.restart()
        fixed = time.monotonic()
        wait_until(
            "signupd's host allowed to relay (relay_from_hosts, Exim restarted), Exim takes every held confirmation",
            lambda: exim.accepted() >= len(addresses),
            server.context,
            timeout=DEADLINE * 2,
        )
        say(f"exim: held mails taken {time.monotonic() - fixed:.1f} s after the fix")
        time.sleep(2)
        check(exim.accepted() == len(addresses), f"... each once ({exim.accepted()})")
        check(len(alerts.relay_refused()) == 1, "no further alert")
        log = server.log.read_text(errors="replace")
        check(not any(address in log for address in addresses), "signupd's log holds no address")
    finally:
        if server is not None:
            server.stop()
        exim.stop()
        alerts.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--signupd", required=True)
    parser.add_argument("--exim", required=True, help="the exim4 binary unpacked from exim4-daemon-light")
    args = parser.parse_args()
    if os.geteuid() != 0:
        say("FAILED: run as root (Exim's daemon runs as root, its spool Debian-exim's)")
        return 1
    started = time.monotonic()
    base = Path(tempfile.mkdtemp(prefix="signupd-exim-"))
    base.chmod(0o755)
    try:
        test(str(Path(args.signupd).resolve()), str(Path(args.exim).resolve()), base)
    except EximFailed as failure:
        say(f"FAILED: {failure}\nfiles kept in {base}")
        return 1
    except Exception:  # noqa: BLE001
        say(f"FAILED:\n{traceback.format_exc()}files kept in {base}")
        return 1
    shutil.rmtree(base, ignore_errors=True)
    say(f"all {checks.passed} checks passed in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
