"""A Postfix instance of a test's own (tests/postfix/bounce.py, tests/postfix/relay.py): what both
scripts need of one, whatever they configure it for.

Python 3 standard library only. A script beside it imports it (its own folder is on the path):

    from instance import PostfixInstance
"""

import json
import os
import shutil
import smtplib
import subprocess
import time
from pathlib import Path

# The services of Postfix's own master.cf that the tests use, none chrooted, in master.cf's order;
# `PostfixInstance.services` writes the ones every instance needs and those a test names.
SERVICES = {
    "pickup": "pickup    unix  n       -       n       60      1       pickup",
    "cleanup": "cleanup   unix  n       -       n       -       0       cleanup",
    "qmgr": "qmgr      unix  n       -       n       300     1       qmgr",
    "tlsmgr": "tlsmgr    unix  -       -       n       1000?   1       tlsmgr",
    "rewrite": "rewrite   unix  -       -       n       -       -       trivial-rewrite",
    "bounce": "bounce    unix  -       -       n       -       0       bounce",
    "defer": "defer     unix  -       -       n       -       0       bounce",
    "trace": "trace     unix  -       -       n       -       0       bounce",
    "verify": "verify    unix  -       -       n       -       1       verify",
    "flush": "flush     unix  n       -       n       1000?   0       flush",
    "proxymap": "proxymap  unix  -       -       n       -       -       proxymap",
    "proxywrite": "proxywrite unix -       -       n       -       1       proxymap",
    "smtp": "smtp      unix  -       -       n       -       -       smtp",
    "relay": "relay     unix  -       -       n       -       -       smtp",
    "showq": "showq     unix  n       -       n       -       -       showq",
    "error": "error     unix  -       -       n       -       -       error",
    "retry": "retry     unix  -       -       n       -       -       error",
    "discard": "discard   unix  -       -       n       -       -       discard",
    "local": "local     unix  -       n       n       -       -       local",
    "anvil": "anvil     unix  -       -       n       -       1       anvil",
    "scache": "scache    unix  -       -       n       -       1       scache",
    "postlog": "postlog   unix-dgram n  -       n       -       1       postlogd",
}
# What no instance runs without (the rest are a test's choice: tlsmgr, smtp, relay, local).
ALWAYS = {name for name in SERVICES if name not in ("tlsmgr", "smtp", "relay", "local")}


class PostfixInstance:
    """One Postfix instance, run as `postfix -c etc`, everything of it under `root`: `etc` (main.cf
    and master.cf), the queue `spool`, `data` (master(8)'s lock) and the log file `maillog`. It
    owns the plumbing: the directories, the lines of main.cf that put its files there, master.cf's
    ordinary services, its commands (`command`), start (`postfix check`, `postfix start`, then
    waited for until `answers()`), stop (`postfix stop`, `postfix abort` if need be), its queue
    and its log. What the instance is for (the rest of main.cf and master.cf, its listeners, how
    to ask it whether it answers) is the subclass's. A failure raises `failure`, the test's own
    exception, with the log's tail."""

    def __init__(self, root: Path, port: int, failure: type[Exception]):
        self.root = root
        self.etc = root / "etc"
        self.spool = root / "spool"
        self.data = root / "data"
        self.log = root / "maillog"
        self.port = port
        self.failure = failure

    # --- configuration ---

    def make_directories(self, *more: Path) -> None:
        """`etc`, `spool`, `data` and `more`; `data` belongs to the mail system owner, since
        master(8) writes its lock there as that user."""
        for directory in (self.etc, self.spool, self.data, *more):
            directory.mkdir(parents=True)
        shutil.chown(self.data, "postfix")
        self.data.chmod(0o700)

    def own_files(self) -> str:
        """main.cf's lines that keep the instance's files its own: the Postfix version it is
        written for, its queue, data directory and log file."""
        return f"""compatibility_level = 3.6
queue_directory = {self.spool}
data_directory = {self.data}
maillog_file_prefixes = {self.root}
maillog_file = {self.log}"""

    @staticmethod
    def services(*more: str) -> str:
        """master.cf's lines for the services every instance runs and the ones named in `more`,
        in master.cf's order, one a line."""
        unknown = [name for name in more if name not in SERVICES]
        if unknown:
            raise ValueError(f"no master.cf line for {unknown}")
        return "".join(f"{line}\n" for name, line in SERVICES.items() if name in ALWAYS or name in more)

    # --- running ---

    def command(self, *args: str, check_exit: bool = True) -> subprocess.CompletedProcess:
        """A Postfix command (`postfix`, `postconf`, `postqueue`, `postsuper`, `postcat`, …) with
        `-c etc`; a non-zero exit raises, unless `check_exit` is false."""
        result = subprocess.run([args[0], "-c", str(self.etc), *args[1:]], capture_output=True, text=True, timeout=60)
        if check_exit and result.returncode != 0:
            raise self.failure(f"{' '.join(args)} exited {result.returncode}: {result.stderr.strip()}\n{self.tail()}")
        return result

    def warnings(self) -> str:
        """What `postconf -n` says of main.cf and master.cf (unknown parameters): empty if all is
        well."""
        return self.command("postconf", "-n").stderr.strip()

    def start(self, timeout: float = 30.0) -> None:
        """`postfix check`, `postfix start`, and waits until `answers()`, for `timeout` s at most."""
        self.command("postfix", "check")
        self.command("postfix", "start")
        deadline = time.monotonic() + timeout
        while not self.answers():
            if time.monotonic() > deadline:
                raise self.failure(
                    f"Postfix does not answer on {self.listeners()} within {timeout:.0f} s:\n{self.tail()}"
                )
            time.sleep(0.1)

    def answers(self) -> bool:
        """Whether it answers: an SMTP NOOP on 127.0.0.1:`port`."""
        try:
            with smtplib.SMTP("127.0.0.1", self.port, timeout=5) as probe:
                probe.noop()
            return True
        except OSError:
            return False

    def listeners(self) -> str:
        """Where `answers()` asks, in words."""
        return f"127.0.0.1:{self.port}"

    def master_pid(self) -> int | None:
        try:
            return int((self.spool / "pid" / "master.pid").read_text().strip())
        except (OSError, ValueError):
            return None

    def running(self) -> bool:
        pid = self.master_pid()
        if pid is None:
            return False
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True

    def stop(self) -> None:
        """`postfix stop`, and `postfix abort` if master(8) is still there after 15 s."""
        if not self.running():
            return
        self.command("postfix", "stop", check_exit=False)
        deadline = time.monotonic() + 15
        while self.running() and time.monotonic() < deadline:
            time.sleep(0.1)
        if self.running():
            self.command("postfix", "abort", check_exit=False)

    # --- what it holds and says ---

    def queue(self) -> list[dict]:
        """`postqueue -j`: one object per queued mail."""
        out = self.command("postqueue", "-j").stdout
        return [json.loads(line) for line in out.splitlines() if line.strip()]

    def lines(self) -> list[str]:
        """Its log, a line each (none before it writes one)."""
        try:
            return self.log.read_text(errors="replace").splitlines()
        except FileNotFoundError:
            return []

    def tail(self, n: int = 40) -> str:
        """The log's last `n` lines, for a failure's message."""
        return "\n".join(f"   postfix| {line}" for line in self.lines()[-n:])
