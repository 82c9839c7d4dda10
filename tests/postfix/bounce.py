#!/usr/bin/env python3
"""A real Postfix in front of the real signupd: a hard bounce of a confirmation mail comes back
as a delivery status notification, Postfix hands it to `signupd ingest-mail` through the pipe
transport of docs/operations.md ("Your own Postfix: signupd ingest-mail"), and the address is
suppressed; a forged bounce changes nothing; a bounce that cannot be recorded waits in Postfix's
queue and is recorded once it can.

Run by .ci/postfix (which installs Postfix and builds signupd first); by hand, as root:

    python3 tests/postfix/bounce.py --signupd target/debug/signupd

The guide is run as written: its blocks between the heading "### Your own Postfix: signupd
ingest-mail" and the next heading (the signupd.toml lines, the main.cf and master.cf lines, and
its commands) are read with the markers of tests/package/guide.py, and what an operator would
replace goes through the test's table of substitutions (`Test.substitutions`), never by
editing the guide.

Everything is the test's own and on 127.0.0.1: a Postfix instance with its own configuration
directory, queue and data directory under a temporary directory (`postfix -c DIR`), smtpd on a
free port; a system user `signupd-ci` (created if missing) that signupd and the pipe run as,
since pipe(8) runs no command as root; signupd serving a fresh data directory that user owns. A
system Postfix, if there is one, is left alone. Postfix delivers nothing off the machine:
`nobody-here@signupd.test` is an unknown local user, so local(8) bounces the confirmation
(5.1.1) after smtpd accepted it (`local_recipient_maps =`), and the bounce comes as a DSN.

1. The guide's check: the pipe's user runs `ingest-mail` with an empty mail: exit 0, "ignored".
2. The guide's signup of `nobody-here@…` (303); then, within 60 s, the every-list suppression
   `bounced`, no subscriber row, no queued mail, no pending intake; Postfix's log shows the
   rewritten envelope sender, local(8)'s 5.1.1 and the pipe's `status=sent` with signupd's
   "handled", which the guide's `grep` finds. A new signup of the address sends nothing.
3. Forged reports about `still-here@…` (a pending signup whose confirmation the test holds in
   Postfix's hold queue, so its real mail is at hand): a bounce without the reference, one with a
   made-up `v1.AAAA…`, and a soft bounce (4.2.2) that quotes the real reference. Each piped into
   `ingest-mail` as the pipe's user (exit 0), and each sent from outside over SMTP to the bounce
   address (accepted through the guide's relay_domains; another address at that domain is
   refused at RCPT): nothing changes. The control: the same hard bounce with the real reference
   suppresses `still-here@…`.
4. signupd stops (SIGTERM, exit 0); no database file (the database, `-wal`, `-shm`) holds a
   bounced address or its local part (while a pending one is found there); signupd's log holds
   none of the addresses.
5. The database made unwritable, `gone-later@…`'s held confirmation is released and bounces:
   `ingest-mail` exits 75, Postfix keeps the DSN deferred. Made writable again, `postqueue -f`
   delivers it, and the address is suppressed and gone from the files.

No address from signupd's or Postfix's logs is printed on success; on failure the tails of both
logs are.
"""

import argparse
import email
import email.policy
import functools
import pwd
import re
import shutil
import smtplib
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "package"))
import guide  # noqa: E402  (tests/package/guide.py: the markers' reader)
import signupd_server  # noqa: E402  (tests/postfix/signupd_server.py)
from harness import Checks, Processes, free_port  # noqa: E402
from instance import PostfixInstance  # noqa: E402  (tests/postfix/instance.py)
from signupd_server import Signupd, run_as_root  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "operations.md"
HEADING = "### Your own Postfix: signupd ingest-mail"
USER = "signupd-ci"
DOMAIN = "signupd.test"
FROM = f"newsletter@{DOMAIN}"
BOUNCE_ADDRESS = f"bounces@bounce.{DOMAIN}"
# The address the guide signs up (nobody-here@example.com, substituted): no such local user.
BOUNCED = f"nobody-here@{DOMAIN}"
# Held in Postfix (smtpd's HOLD below), so their rows stay pending and their mail is at hand.
KEPT = f"still-here@{DOMAIN}"
LATER = f"gone-later@{DOMAIN}"


class BounceFailed(Exception):
    pass


checks = Checks("postfix bounce", BounceFailed)
say, check = checks.say, checks.check
processes = Processes()
wait_until = functools.partial(signupd_server.wait_until, checks)


# --- the guide's blocks -----------------------------------------------------------------------


def guide_blocks(substitutions: list[tuple[str, str]]) -> list[dict]:
    """The blocks CI runs of the guide's subsection, in order, substituted: dicts with kind,
    argument, body and where. The rules of tests/package/guide.py: every shell block is marked,
    every substitution is used, no placeholder is left in a block that runs."""
    text = GUIDE.read_text(encoding="utf-8")
    lines = text.split("\n")
    starts = [number for number, line in enumerate(lines, 1) if line.strip() == HEADING]
    if len(starts) != 1:
        raise BounceFailed(f"docs/operations.md has {len(starts)} headings {HEADING!r}; the test reads exactly one")
    start = starts[0]
    end = len(lines) + 1
    fence = None
    for number, line in enumerate(lines[start:], start + 1):
        opener = guide.FENCE.match(line.strip())
        if fence is None and opener:
            fence = opener.group(1)
        elif fence is not None and line.strip().startswith(fence):
            fence = None
        elif fence is None and re.match(r"#{1,3} ", line):
            end = number
            break
    try:
        found = guide.blocks(str(GUIDE), text)
    except guide.Problem as problem:
        raise BounceFailed(str(problem)) from None
    chosen = [block for block in found if start < block["line"] < end]
    problems = guide.check_markers("docs/operations.md", chosen)
    used = {source: 0 for source, _ in substitutions}
    out = []
    for block in chosen:
        if block["marker"] is None or block["marker"][0] == "show":
            continue
        kind, argument = block["marker"]
        where = f"docs/operations.md:{block['line']}"
        if kind not in ("run", "append") or (kind == "run" and argument is not None):
            problems.append(f"{where}: <!-- ci: {kind} … --> is not one this test runs (run, append PATH)")
            continue
        body = guide.commands(block)
        for source, target in substitutions:
            if source in body:
                used[source] += 1
                body = body.replace(source, target)
        left = guide.PLACEHOLDER.search(body)
        if left:
            problems.append(
                f"{where}: the block still holds the placeholder {left.group(0)!r}: add it to Test.substitutions"
            )
        out.append({"kind": kind, "argument": argument, "body": body, "where": where})
    problems += [f"the substitution of {source!r} matches no block CI runs" for source, n in used.items() if n == 0]
    if problems:
        raise BounceFailed("the guide's blocks:\n  " + "\n  ".join(problems))
    return out


def run_block(block: dict, work: Path) -> subprocess.CompletedProcess:
    """A run block, as the package test runs one: bash -euxo pipefail, as root, in a clean
    environment, from a working directory of its own."""
    path = work / f"block-{block['where'].rsplit(':', 1)[1]}.sh"
    path.write_text(block["body"])
    env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root", "LANG": "C.UTF-8"}
    result = subprocess.run(
        ["bash", "-euxo", "pipefail", str(path)], cwd=work, env=env, capture_output=True, text=True, timeout=120
    )
    for line in (result.stderr + result.stdout).splitlines()[:30]:
        say(f"   | {line}")
    check(result.returncode == 0, f"{block['where']} runs as written (exit {result.returncode})")
    return result


# --- Postfix ----------------------------------------------------------------------------------


class Postfix(PostfixInstance):
    """The test's own instance (tests/postfix/instance.py): `postfix -c etc`, its queue and data
    under `root`; smtpd on `port`, local(8) bouncing what it cannot deliver."""

    def __init__(self, root: Path, port: int):
        super().__init__(root, port, BounceFailed)

    def configure(self) -> None:
        self.make_directories()
        held = ", ".join(f"{address}=HOLD" for address in (KEPT, LATER))
        (self.etc / "main.cf").write_text(
            f"""# The bounce test's own Postfix (tests/postfix/bounce.py): loopback only, nothing leaves.
{self.own_files()}
syslog_name = postfix-signupd-ci
myhostname = mx.{DOMAIN}
mydomain = {DOMAIN}
myorigin = $mydomain
mydestination = $mydomain
inet_interfaces = loopback-only
inet_protocols = ipv4
# No client may relay: a report from outside gets in only through the guide's relay_domains.
mynetworks =
# Unknown local users are accepted at RCPT and bounced by local(8): the bounce is a DSN.
local_recipient_maps =
alias_maps =
alias_database =
relayhost =
default_transport = error:the test's Postfix sends nothing off this machine
notify_classes =
biff = no
# Confirmations the test keeps at hand (the hold queue) instead of delivering.
smtpd_recipient_restrictions = check_recipient_access inline:{{ {held} }}
"""
        )
        # smtpd on the test's port instead of 25; local(8) besides the services every instance runs.
        (self.etc / "master.cf").write_text(f"127.0.0.1:{self.port} inet n - n - - smtpd\n" + self.services("local"))


# --- signupd ----------------------------------------------------------------------------------


class Database:
    """signupd's SQLite file, read-only (as root; SQLite gives any -shm it creates the
    database's owner)."""

    def __init__(self, path: Path):
        self.path = path

    def query(self, sql: str, *params) -> list[tuple]:
        connection = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=10)
        try:
            return connection.execute(sql, params).fetchall()
        finally:
            connection.close()

    def state(self) -> dict:
        """What a report could change: the rows of the test's addresses, every suppression, the
        queues."""
        return {
            "subscribers": self.query("SELECT id, list_id, email, status FROM subscribers ORDER BY email"),
            "suppressions": self.query("SELECT hash, reason, list_id FROM suppressions ORDER BY hash"),
            "outbox": self.query("SELECT id, kind, subscriber_id FROM outbox ORDER BY id"),
            "intake": self.query("SELECT count(*) FROM intake"),
        }

    def bounced(self) -> int:
        return self.query("SELECT count(*) FROM suppressions WHERE reason = 'bounced' AND list_id = '*'")[0][0]

    def rows_of(self, address: str) -> list[tuple]:
        return self.query("SELECT id, status FROM subscribers WHERE email = ?", address)


# --- reports ----------------------------------------------------------------------------------


def report(original: bytes, recipient: str, status: str, number: int) -> bytes:
    """A DSN as Postfix writes one (RFC 3464), returning `original` whole."""
    action = "failed" if status.startswith("5") else "delayed"
    boundary = f"forged-{number}.signupd.test"
    return (
        f"""From: Mail Delivery System <MAILER-DAEMON@mx.elsewhere.test>
To: {BOUNCE_ADDRESS}
Subject: Undelivered Mail Returned to Sender
Date: Thu, 03 Dec 2026 10:00:00 +0000
Message-ID: <forged-{number}-{time.time_ns()}@mx.elsewhere.test>
Auto-Submitted: auto-replied
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status; boundary="{boundary}"

--{boundary}
Content-Type: text/plain; charset=us-ascii

Your message could not be delivered.

--{boundary}
Content-Type: message/delivery-status

Reporting-MTA: dns; mx.elsewhere.test

Final-Recipient: rfc822; {recipient}
Original-Recipient: rfc822;{recipient}
Action: {action}
Status: {status}
Diagnostic-Code: smtp; {status[0]}50 {status} mailbox unavailable

--{boundary}
Content-Type: message/rfc822

""".replace("\n", "\r\n").encode()
        + original.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
        + f"\r\n--{boundary}--\r\n".encode()
    )


def with_reference(original: bytes, value: str | None) -> bytes:
    """The mail with its X-Signupd-Ref replaced by `value`, or taken out."""
    message = email.message_from_bytes(original, policy=email.policy.compat32)
    del message["X-Signupd-Ref"]
    if value is not None:
        message["X-Signupd-Ref"] = value
    return message.as_bytes()


def send_from_outside(port: int, recipient: str, mail: bytes) -> str:
    """As a remote server returns a bounce: null sender, over SMTP. Returns the queue id."""
    with smtplib.SMTP("127.0.0.1", port, timeout=10) as smtp:
        smtp.ehlo("mx.elsewhere.test")
        code, _ = smtp.mail("<>")
        if code != 250:
            raise BounceFailed(f"MAIL FROM:<> answered {code}")
        code, reply = smtp.rcpt(recipient)
        if code != 250:
            raise BounceFailed(f"RCPT TO:<{recipient}> answered {code} {reply!r}")
        code, reply = smtp.data(mail)
        match = re.search(rb"queued as ([0-9A-Za-z]+)", reply)
        if code != 250 or not match:
            raise BounceFailed(f"DATA answered {code} {reply!r}")
        return match.group(1).decode()


def pipe_line(postfix: Postfix, queue_id: str) -> str | None:
    """Postfix's log line of the pipe's delivery of one queued mail."""
    for line in postfix.lines():
        if f" {queue_id}: " in line and "relay=signupd-bounces" in line:
            return line
    return None


# --- the test ---------------------------------------------------------------------------------


def report_copy(mail: bytes, number: int) -> bytes:
    """The same report with a Message-ID of its own, so it is not taken for one read before."""
    fresh = f"Message-ID: <forged-{number}-{time.time_ns()}@".encode()
    return re.sub(rb"Message-ID: <forged-\d+-\d+@", fresh, mail, count=1)


# --- the test ---------------------------------------------------------------------------------


def ensure_user() -> bool:
    """The pipe's user; True if this run created it."""
    try:
        pwd.getpwnam(USER)
        return False
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent",
             "--shell", "/usr/sbin/nologin", USER],
            check=True,
        )
        return True


def check_no_copy(data_dir: Path, address: str, when: str) -> None:
    """No database file holds the address or its local part: deleted rows leave no bytes behind
    (the writer's PRAGMA secure_delete)."""
    local = address.split("@")[0]
    for path in database_files(data_dir):
        content = path.read_bytes()
        for needle in (address, local):
            check(
                needle.encode() not in content,
                f"{when}: {path.name} holds no copy of {needle!r} (needs PRAGMA secure_delete on the writer)",
            )


def database_files(data_dir: Path) -> list[Path]:
    """The database and its -wal and -shm, where they exist."""
    return sorted(path for path in data_dir.iterdir() if path.name.startswith("signupd.sqlite3"))


class Test:
    """One run: the files under `base`, the test's Postfix, signupd as USER."""

    def __init__(self, signupd: str, base: Path):
        self.base = base
        self.binary = base / "bin" / "signupd"
        self.binary.parent.mkdir()
        # A copy the pipe's user can run, wherever the checkout is.
        shutil.copy2(signupd, self.binary)
        self.binary.chmod(0o755)
        self.smtp_port = free_port()
        self.postfix = Postfix(base / "postfix", self.smtp_port)
        # Its mail lines are the guide's, appended by `configure`.
        (base / "signupd").mkdir()
        self.signupd = Signupd(str(self.binary), base / "signupd", checks, processes, sender=FROM,
                               list_name="Postfix bounce test", peer_tail=self.postfix.tail, user=USER)
        self.http_port, self.data_dir, self.config = self.signupd.http_port, self.signupd.data_dir, self.signupd.config
        self.work = base / "operator"
        self.db = Database(self.data_dir / "signupd.sqlite3")
        self.held: dict[str, str] = {}

    def substitutions(self) -> list[tuple[str, str]]:
        """What the guide writes -> what this test puts there."""
        return [
            ("https://signup.example.com", f"http://127.0.0.1:{self.http_port}"),
            ("newsletter@example.com", FROM),
            ("bounces@bounce.example.com", BOUNCE_ADDRESS),
            ("bounce.example.com", f"bounce.{DOMAIN}"),
            ("nobody-here@example.com", BOUNCED),
            ("port = 25", f"port = {self.smtp_port}"),
            ("user=signupd ", f"user={USER} "),
            ("sudo -u signupd ", f"sudo -u {USER} "),
            ("/usr/bin/signupd", str(self.binary)),
            ("/etc/signupd/signupd.toml", str(self.config)),
            ("postfix check", f"postfix -c {self.postfix.etc} check"),
            ("postfix reload", f"postfix -c {self.postfix.etc} reload"),
            ("/var/log/mail.log", str(self.postfix.log)),
        ]

    # --- setting up ---

    def configure(self) -> list[dict]:
        """Both configurations with the guide's lines added; the guide's command blocks."""
        self.postfix.configure()
        self.work.mkdir()
        places = {
            "/etc/signupd/signupd.toml": self.config,
            "/etc/postfix/main.cf": self.postfix.etc / "main.cf",
            "/etc/postfix/master.cf": self.postfix.etc / "master.cf",
        }
        blocks = guide_blocks(self.substitutions())
        for block in blocks:
            if block["kind"] == "append":
                target = places.get(block["argument"])
                if target is None:
                    raise BounceFailed(f"{block['where']}: the test has no stand-in for {block['argument']}")
                with open(target, "a", encoding="utf-8") as handle:
                    handle.write("\n" + block["body"])
                say(f"ok   {block['where']} is added to {block['argument']}")
        warnings = self.postfix.warnings()
        check(not warnings, f"postconf knows every parameter of main.cf and master.cf ({warnings or 'no warnings'})")
        runs = [block for block in blocks if block["kind"] == "run"]
        check(len(runs) == 3, f"the guide has the three command blocks this test runs in turn ({len(runs)})")
        return runs

    def start(self) -> None:
        self.postfix.start()
        check(True, f"the test's Postfix listens on 127.0.0.1:{self.smtp_port} ({self.postfix.etc})")
        self.signupd.start()
        check(True, f"signupd serves on 127.0.0.1:{self.http_port} as {USER}, sending to the test's Postfix")

    def wait_for(self, what: str, condition, timeout: float = signupd_server.DEADLINE) -> None:
        wait_until(what, condition, self.signupd.context, timeout)

    def ingest(self, mail: bytes) -> tuple[int, str]:
        """`ingest-mail` as the pipe runs it: as the pipe's user, the mail on standard input.
        Its exit status and what it said."""
        result = subprocess.run(
            ["runuser", "-u", USER, "--", str(self.binary), "ingest-mail", "--config", str(self.config)],
            input=mail,
            capture_output=True,
            timeout=60,
        )
        return result.returncode, (result.stdout + result.stderr).decode(errors="replace").strip()

    # --- the steps ---

    def the_guides_check(self, block: dict) -> None:
        say("---- 1. the guide's check of the pipe's user")
        result = run_block(block, self.work)
        check(
            "signupd ingest-mail: ignored: " in result.stderr,
            f"an empty mail, run as {USER}: \"ignored\", so it reads and writes all it needs",
        )

    def a_hard_bounce(self, signup_block: dict, grep_block: dict) -> None:
        say("---- 2. a hard bounce, the whole way")
        db, postfix = self.db, self.postfix
        before = db.bounced()
        answer = run_block(signup_block, self.work).stdout.strip()
        check(answer == "303", f"the guide's signup of {BOUNCED} is accepted ({answer})")
        self.wait_for(
            f"the bounce of {BOUNCED}'s confirmation suppresses it on every list (reason bounced, list '*')",
            lambda: db.bounced() == before + 1,
        )
        self.wait_for(f"{BOUNCED} has no subscriber row", lambda: not db.rows_of(BOUNCED))
        state = db.state()
        check(not state["outbox"], f"no mail is queued ({state['outbox']})")
        check(state["intake"] == [(0,)], "no signup waits in the intake")
        lines = postfix.lines()
        check(
            any(f"from=<{BOUNCE_ADDRESS}>" in line and "/qmgr[" in line for line in lines),
            f"Postfix rewrote signupd's envelope sender {FROM} to {BOUNCE_ADDRESS}",
        )
        check(
            any(
                f"to=<{BOUNCED}>" in line and "relay=local" in line and "dsn=5.1.1" in line and "status=bounced" in line
                for line in lines
            ),
            f"local(8) bounced the confirmation to {BOUNCED} (5.1.1) after smtpd accepted it",
        )
        # The pipe logs its result once ingest-mail has exited, a moment after the suppression
        # was committed: wait for the line rather than read the log once.
        self.wait_for(
            'the pipe handed the DSN to signupd ingest-mail: status=sent, "handled: a hard bounce"',
            lambda: any(
                "relay=signupd-bounces" in line and "status=sent" in line and "handled: a hard bounce" in line
                for line in postfix.lines()
            ),
        )
        found = run_block(grep_block, self.work).stdout
        check(
            "status=sent" in found and "handled: a hard bounce" in found,
            "the guide's grep finds that line in Postfix's log",
        )
        mails = sum(f"to=<{BOUNCED}>" in line for line in postfix.lines())
        check(self.signupd.post_signup(BOUNCED) == 303, f"a new signup of {BOUNCED} is answered as always (303)")
        self.wait_for("the new signup is processed", lambda: db.state()["intake"] == [(0,)])
        check(not db.rows_of(BOUNCED) and not db.state()["outbox"], "... and makes no row and queues no mail")
        check(sum(f"to=<{BOUNCED}>" in line for line in postfix.lines()) == mails, "... and Postfix got no new mail")

    def forged_reports(self) -> None:
        say("---- 3. forged reports change nothing")
        db, postfix = self.db, self.postfix
        for address in (KEPT, LATER):
            check(self.signupd.post_signup(address) == 303, f"signup of {address} (its confirmation is held in Postfix)")

        def both_held() -> bool:
            for entry in postfix.queue():
                if entry["queue_name"] == "hold":
                    for recipient in entry["recipients"]:
                        self.held[recipient["address"]] = entry["queue_id"]
            return KEPT in self.held and LATER in self.held

        self.wait_for("signupd sent both confirmations; Postfix holds them", both_held)
        original = postfix.command("postcat", "-bh", "-q", self.held[KEPT]).stdout.encode()
        reference = (email.message_from_bytes(original, policy=email.policy.compat32)["X-Signupd-Ref"] or "").strip()
        check(reference.startswith("v1."), f"{KEPT}'s confirmation carries an X-Signupd-Ref ({reference[:12]}…)")
        check([row[1] for row in db.rows_of(KEPT)] == ["pending"], f"{KEPT} is pending")
        untouched = db.state()
        made_up = "v1." + "A" * 128
        forged = [
            ("a hard bounce without a reference", report(with_reference(original, None), KEPT, "5.1.1", 1)),
            ("a hard bounce with a made-up reference", report(with_reference(original, made_up), KEPT, "5.1.1", 2)),
            ("a soft bounce (4.2.2) with the real reference", report(original, KEPT, "4.2.2", 3)),
        ]
        for name, mail in forged:
            status, said = self.ingest(mail)
            check(status == 0, f"{name}, piped into ingest-mail as {USER}: exit 0 ({said})")
            check(KEPT not in said, "... and what it says does not hold the address")
            check(db.state() == untouched, "... and nothing changed")
        for number, (name, mail) in enumerate(forged, 4):
            queue_id = send_from_outside(self.smtp_port, BOUNCE_ADDRESS, report_copy(mail, number))
            self.wait_for(
                f"{name}, sent from outside over SMTP to {BOUNCE_ADDRESS}, is piped to ingest-mail",
                lambda: pipe_line(postfix, queue_id) is not None,
            )
            line = pipe_line(postfix, queue_id) or ""
            check("status=sent" in line, f"... status={line.split('status=', 1)[-1]}")
            check(db.state() == untouched, "... and nothing changed")
        try:
            send_from_outside(self.smtp_port, f"someone-else@bounce.{DOMAIN}", forged[0][1])
            refused = ""
        except BounceFailed as failure:
            refused = str(failure)
        check("answered 550" in refused, f"another address at bounce.{DOMAIN} is refused at RCPT ({refused})")
        # The control: the reports above were read, and ignored for their reference alone.
        before = db.bounced()
        status, said = self.ingest(report(original, KEPT, "5.1.1", 7))
        check(status == 0 and "handled" in said, f"the same hard bounce with the real reference is handled ({said})")
        check(db.bounced() == before + 1 and not db.rows_of(KEPT), f"... and suppresses {KEPT}")

    def stopped(self) -> None:
        say("---- 4. signupd stops; the files hold no copy of a bounced address")
        self.signupd.stop()
        check(
            any(LATER.encode() in path.read_bytes() for path in database_files(self.data_dir)),
            f"the database files hold {LATER}, whose row is pending (the search below can see an address)",
        )
        check_no_copy(self.data_dir, BOUNCED, "after the bounce")
        check_no_copy(self.data_dir, KEPT, "after the control's bounce")
        log = self.signupd.log_text()
        check(
            all(address not in log for address in (BOUNCED, KEPT, LATER)), "signupd's log holds none of the addresses"
        )

    def deferred_until_writable(self) -> None:
        say("---- 5. a bounce that cannot be recorded waits in Postfix's queue")
        db, postfix = self.db, self.postfix
        database = self.data_dir / "signupd.sqlite3"
        check([row[1] for row in db.rows_of(LATER)] == ["pending"], f"{LATER} is pending")
        self.data_dir.chmod(0o500)
        database.chmod(0o400)
        postfix.command("postsuper", "-H", self.held[LATER])
        postfix.command("postqueue", "-f")

        def deferred() -> dict | None:
            for entry in postfix.queue():
                recipients = [recipient["address"] for recipient in entry["recipients"]]
                if entry["queue_name"] == "deferred" and BOUNCE_ADDRESS in recipients:
                    return entry
            return None

        self.wait_for(
            f"with the database not writable, the bounce of {LATER}'s confirmation is deferred (ingest-mail exit 75)",
            lambda: deferred() is not None,
        )
        reason = " ".join(r.get("delay_reason", "") for r in (deferred() or {}).get("recipients", []))
        check("temporary failure" in reason and "cannot record the report" in reason, f"... Postfix's reason: {reason}")
        check(LATER not in reason, "... which does not hold the address")
        check(db.rows_of(LATER) != [], f"... and {LATER} is still there")
        self.data_dir.chmod(0o700)
        database.chmod(0o600)
        before = db.bounced()
        postfix.command("postqueue", "-f")
        self.wait_for(
            f"writable again and flushed (postqueue -f), the bounce suppresses {LATER}",
            lambda: db.bounced() == before + 1 and not db.rows_of(LATER),
        )
        self.wait_for("Postfix's queue holds no deferred report", lambda: deferred() is None)
        owners = {path.name: pwd.getpwuid(path.stat().st_uid).pw_name for path in self.data_dir.iterdir()}
        check(set(owners.values()) == {USER}, f"every file of the data directory belongs to {USER} ({owners})")
        check_no_copy(self.data_dir, LATER, "after the deferred bounce")
        check_no_copy(self.data_dir, BOUNCED, "still")

    def nothing_said_of_addresses(self) -> None:
        pipe = "relay=signupd-bounces"
        said = [line.split(pipe, 1)[1] for line in self.postfix.lines() if pipe in line]
        check(
            all(address not in line for line in said for address in (BOUNCED, KEPT, LATER)),
            f"what ingest-mail said to Postfix's log ({len(said)} deliveries) holds none of the addresses",
        )

    def run(self, deferral: bool) -> None:
        check_block, signup_block, grep_block = self.configure()
        self.start()
        self.the_guides_check(check_block)
        self.a_hard_bounce(signup_block, grep_block)
        self.forged_reports()
        self.stopped()
        if deferral:
            self.deferred_until_writable()
        self.nothing_said_of_addresses()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--signupd", default=str(ROOT / "target" / "debug" / "signupd"))
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    parser.add_argument("--skip-deferral", action="store_true", help="leave out step 5 (exit 75 and the queue)")
    args = parser.parse_args()
    tests: list[Test] = []

    def run(base: Path) -> None:
        version = subprocess.run(["postconf", "-d", "-h", "mail_version"], capture_output=True, text=True).stdout.strip()
        say(f"Postfix {version}; signupd {args.signupd}")
        created = ensure_user()
        try:
            tests.append(Test(args.signupd, base))
            tests[0].run(deferral=not args.skip_deferral)
        finally:
            processes.stop_all()
            if tests:
                tests[0].postfix.stop()
            if created:
                subprocess.run(["userdel", USER], check=False)

    # Postfix's daemons and the pipe's user go through the temporary directory.
    return run_as_root(checks, "it starts a Postfix instance and runs commands as another user", "signupd-postfix-",
                       run, keep=args.keep, context=lambda: tests[0].signupd.context() if tests else "")


if __name__ == "__main__":
    sys.exit(main())
