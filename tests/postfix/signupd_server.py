"""signupd as the mail-server tests beside it run it (tests/postfix/relay.py, exim.py, bounce.py):
its configuration, `serve` started and waited for, its signup form, its command line, the
`mail.alert_webhook` it posts to, waiting with a deadline, and a test's run as root in a temporary
directory of its own. What the mail server in front of it is (Postfix, Exim) is the script's.

Python 3 standard library only. A script beside it imports it (its own folder is on the path):

    from signupd_server import Alerts, Signupd, run_as_root, smtp_mail, wait_until
"""

import http.client
import http.server
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
import traceback
import urllib.parse
from collections.abc import Callable
from pathlib import Path

from harness import Checks, Processes, free_port

# How long a test waits for what signupd or the mail server should do, unless it says otherwise.
DEADLINE = 60.0


def wait_until(checks: Checks, what: str, condition, context: Callable[[], str], timeout: float = DEADLINE):
    """Polls `condition` until it returns something true; the check `what` passes with that. On
    the deadline, fails with `context()`."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            checks.check(True, what)
            return value
        if time.monotonic() > deadline:
            raise checks.failure(f"not within {timeout:.0f} s: {what}\n{context()}")
        time.sleep(0.2)


class Alerts:
    """What `mail.alert_webhook` received: the JSON bodies, in order."""

    def __init__(self):
        self.received: list[dict] = []
        alerts = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                try:
                    alerts.received.append(json.loads(body))
                except ValueError:
                    alerts.received.append({"unreadable": body.decode(errors="replace")})
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def relay_refused(self) -> list[dict]:
        return [alert for alert in list(self.received) if alert.get("event") == "relay_refused"]

    def clear(self) -> None:
        self.received.clear()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def smtp_mail(alerts: Alerts, port: int, security: str, smtp: dict[str, str] | None = None) -> str:
    """The `[mail]` lines of a signupd sending to a mail server on 127.0.0.1:`port`, retrying
    after 1 s, alerting `alerts`; `smtp` adds lines to `[mail.smtp]` (`username`, `ca_file`, …)."""
    extra = "".join(f'{key} = "{value}"\n' for key, value in (smtp or {}).items())
    return f"""[mail]
transport = "smtp"
retry_base = "1s"
alert_webhook = "http://127.0.0.1:{alerts.port}/alert"
[mail.smtp]
host = "127.0.0.1"
port = {port}
security = "{security}"
timeout = "10s"
{extra}"""


class Signupd:
    """One signupd: its configuration `signupd.toml`, data directory `data` and log `signupd.log`
    under `root`; no rate limits; its one list `default` sending from `sender`; `mail` its
    `[mail]` lines (`smtp_mail`, or none where a test appends its own). `env` adds to its
    environment; `user` runs `serve` as that user, who owns the data directory. `peer_tail` is
    the mail server's log tail, for a failure's message."""

    def __init__(self, binary: str, root: Path, checks: Checks, processes: Processes, *, sender: str,
                 list_name: str, peer_tail: Callable[[], str], mail: str = "", env: dict[str, str] | None = None,
                 user: str | None = None):
        self.binary = binary
        self.root = root
        self.checks = checks
        self.processes = processes
        self.peer_tail = peer_tail
        self.user = user
        self.data_dir = root / "data"
        self.data_dir.mkdir(mode=0o700)
        if user is not None:
            shutil.chown(self.data_dir, user, user)
        self.config = root / "signupd.toml"
        self.log = root / "signupd.log"
        self.http_port = free_port()
        self.env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", **(env or {})}
        self.config.write_text(
            f"""[server]
listen = "127.0.0.1:{self.http_port}"
public_url = "http://127.0.0.1:{self.http_port}"
[storage]
data_dir = "{self.data_dir}"
[signup]
rate_limits = []
network_rate_limits = []
{mail}[[lists]]
id = "default"
name = "{list_name}"
from = "Newsletter <{sender}>"
"""
        )
        self.config.chmod(0o644)
        self.server: subprocess.Popen | None = None

    def context(self) -> str:
        """What a failure shows: the mail server's log tail and signupd's."""
        return f"{self.peer_tail()}\n   signupd's log:\n{self.log_text()[-4000:]}"

    def log_text(self) -> str:
        try:
            return self.log.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def start(self) -> None:
        """`signupd serve` (as `user`, if given), waited for until `/readyz` answers 200, for 60 s at most."""
        as_user = {} if self.user is None else {"user": self.user, "group": self.user, "extra_groups": []}
        self.server = self.processes.spawn(
            [self.binary, "serve", "--config", str(self.config)], self.log, cwd=self.root, env=self.env, **as_user
        )
        deadline = time.monotonic() + 60
        while not self.ready():
            if self.server.poll() is not None:
                raise self.checks.failure(
                    f"signupd exited ({self.server.returncode}) during start-up:\n{self.context()}"
                )
            if time.monotonic() > deadline:
                raise self.checks.failure(f"signupd was not ready within 60 s:\n{self.context()}")
            time.sleep(0.05)

    def ready(self) -> bool:
        connection = http.client.HTTPConnection("127.0.0.1", self.http_port, timeout=5)
        try:
            connection.request("GET", "/readyz")
            return connection.getresponse().status == 200
        except OSError:
            return False
        finally:
            connection.close()

    def stop(self) -> None:
        """SIGTERM; the check that signupd exits 0."""
        if self.server is not None:
            self.processes.stop(self.server)
            self.checks.check(self.server.returncode == 0, f"signupd exits 0 on SIGTERM ({self.server.returncode})")

    def post_signup(self, address: str) -> int:
        """The form's POST of `address` to the list, with consent: the answer's status."""
        body = urllib.parse.urlencode({"list": "default", "email": address, "consent": "yes"}).encode()
        connection = http.client.HTTPConnection("127.0.0.1", self.http_port, timeout=10)
        try:
            connection.request("POST", "/api/signup", body, {"Content-Type": "application/x-www-form-urlencoded"})
            response = connection.getresponse()
            response.read()
            return response.status
        finally:
            connection.close()

    def cli(self, *args: str) -> subprocess.CompletedProcess:
        """A signupd subcommand with this configuration and environment."""
        return subprocess.run(
            [self.binary, *args, "--config", str(self.config)],
            capture_output=True, text=True, timeout=120, cwd=self.root, env=self.env,
        )

    def lookup(self, address: str) -> dict:
        result = self.cli("lookup", "--json", address)
        if result.returncode != 0:
            raise self.checks.failure(f"signupd lookup exited {result.returncode}: {result.stderr.strip()}")
        return json.loads(result.stdout)

    def pending_with_mail(self, address: str) -> bool:
        """`signupd lookup`: the address's row is pending and its confirmation is queued."""
        found = self.lookup(address)
        return [row["status"] for row in found["rows"]] == ["pending"] and len(found["queued_mail"]) == 1


def run_as_root(checks: Checks, why_root: str, prefix: str, test: Callable[[Path], None], *, keep: bool = False,
                context: Callable[[], str] = lambda: "") -> int:
    """A script's run: as root (`why_root` says why it must be), `test` given a fresh temporary
    directory (named `prefix…`, 0755: the mail server's daemons go through it), which is removed
    if every check passed (and not `keep`) and kept, named, if one failed. An exception other
    than the test's own failure is printed with its traceback and `context()`. The exit status."""
    if os.geteuid() != 0:
        checks.say(f"FAILED: run as root ({why_root})")
        return 1
    started = time.monotonic()
    base = Path(tempfile.mkdtemp(prefix=prefix))
    base.chmod(0o755)
    try:
        test(base)
    except checks.failure as failure:
        checks.say(f"FAILED: {failure}")
        checks.say(f"files kept in {base}")
        return 1
    except Exception:  # noqa: BLE001  (smtplib's and the like: the logs tell why)
        checks.say(f"FAILED:\n{traceback.format_exc()}{context()}")
        checks.say(f"files kept in {base}")
        return 1
    if not keep:
        shutil.rmtree(base, ignore_errors=True)
    checks.say(f"all {checks.passed} checks passed in {time.monotonic() - started:.0f} s")
    return 0
