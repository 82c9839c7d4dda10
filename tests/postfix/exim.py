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
import functools
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import signupd_server  # noqa: E402  (tests/postfix/signupd_server.py)
from harness import Checks, Processes, free_port  # noqa: E402
from signupd_server import DEADLINE, Alerts, Signupd, run_as_root, smtp_mail  # noqa: E402

SENDER = "newsletter@signupd.test"
READERS = "readers.test"


class EximFailed(Exception):
    pass


checks = Checks("exim relay", EximFailed)
say, check = checks.say, checks.check
processes = Processes()
wait_until = functools.partial(signupd_server.wait_until, checks)


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


def test(signupd_binary: str, exim_binary: str, base: Path) -> None:
    alerts = Alerts()
    exim = Exim(exim_binary, base / "exim")
    (base / "exim").mkdir()
    (base / "signupd").mkdir()
    server = None
    try:
        exim.configure(relay_from_hosts="")
        exim.start()
        server = Signupd(signupd_binary, base / "signupd", checks, processes, sender=SENDER, list_name="Exim test",
                         peer_tail=exim.tail, mail=smtp_mail(alerts, exim.port, "none"))
        server.start()
        check(True, "signupd serve is ready")
        addresses = [f"reader-{number}@{READERS}" for number in range(1, 4)]
        for address in addresses:
            status = server.post_signup(address)
            check(status == 303, f"POST /api/signup answers 303 ({status})")
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
    signupd, exim = str(Path(args.signupd).resolve()), str(Path(args.exim).resolve())
    return run_as_root(checks, "Exim's daemon runs as root, its spool Debian-exim's", "signupd-exim-",
                       lambda base: test(signupd, exim, base))


if __name__ == "__main__":
    sys.exit(main())
