#!/usr/bin/env python3
"""The alert rules of docs/operations.md, in a real Prometheus scraping a real signupd: each rule
that describes an event fires on the first such event, not the second.

Run by .ci/prometheus (which installs Debian's prometheus and builds signupd first); by hand:

    python3 tests/prometheus/alerts.py --signupd target/debug/signupd

What it does, in order:

1. Extracts every alert rule the guide shows (the YAML blocks of "Monitoring and alerts": the
   group, then the blocks of more rules for the same group) and checks that no `- alert:` of the
   guide was left out; `promtool check rules` must pass.
2. `promtool test rules` runs tests/prometheus/rules_test.yml against the extracted rules:
   synthetic series for every rule, including the ones whose `for:` or threshold take longer than
   a test can wait (a queue stuck for 15 minutes, a confirmation rate low for an hour, the
   target down for 5 minutes).
3. Starts signupd (SMTP to a relay of this script's on loopback that refuses `bounce@` for good
   with 550 and keeps the mail it accepts, surge alert at 5 signups in 10 minutes, 3 signups per
   client per 10 minutes, one destination of kind brevo whose API is a stand-in of this script's
   on loopback that refuses every call with 400 `invalid_parameter`), and `promtool check
   metrics` must find nothing in its first exposition: every metric has help text, and the
   counters an alert reads are there at 0 before anything happened.
4. Starts Prometheus with the guide's scrape job (its target and interval changed to this
   signupd and one second), evaluating the rules every second, and causes
   the first event of each rule that can be caused on loopback, one at a time. Before each, that
   rule must not be firing; after it, it must fire (or, for a rule with `for:`, be pending —
   the `for:` itself is step 2's):
   - SignupdMailFailures: one signup whose confirmation the relay refuses with 550 5.1.1, which
     counts against the address only once the relay takes another recipient in the same batch
     (signupd's rule of whose refusal it is), so both are queued while the relay turns away
     every sender for a moment (a hold), then sent together;
   - SignupdStorageErrors: one signup while another connection holds SQLite's write lock (503);
   - SignupdSignupSurge: accepted signups of one list passing the surge alert once;
   - SignupdFlooded: one client sending 110 signups, so more than 100 are refused 429;
   - SignupdDestinationDropped: one subscriber confirming (the token from the mail the relay
     kept), whose event the stand-in Brevo refuses with 400, so it is dropped at once;
   - SignupdConfirmationRateCollapsed: enough accepted signups and that one confirmation
     (pending);
   - SignupdDown: signupd stopped (pending).
   The two stuck-queue rules need an item older than 15 minutes or an hour and are step 2's only;
   that they stay quiet while the queues drain is checked here.

Everything listens on and talks to 127.0.0.1. Visitors are told apart by `CF-Connecting-IP`
from the trusted loopback peer, as behind a tunnel. Made-up addresses only.
"""

import argparse
import email
import email.message
import email.policy
import http.server
import json
import os
import re
import shutil
import socketserver
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from harness import Checks, Processes, free_port  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "operations.md"
RULES_TEST = Path(__file__).resolve().parent / "rules_test.yml"
SURGE_MAX = 5
# The destination of the config, and its stand-in's list id and key.
DESTINATION = "sender"
BREVO_LIST = "7"
BREVO_KEY = "xkeysib-alerts-test-key"
# Long enough for a scrape (1 s), an evaluation (1 s) and a mail worker's round.
FIRE_WITHIN = 30.0


class AlertsFailed(Exception):
    pass


checks = Checks("prometheus alerts", AlertsFailed)
say, check = checks.say, checks.check
processes = Processes()


# --- the guide's rules ------------------------------------------------------------------------


def guide_rules() -> tuple[str, list[str]]:
    """The rules file the guide's YAML blocks make, and the alert names in it."""
    text = GUIDE.read_text()
    section = re.search(r"^## Monitoring and alerts\n(.*?)^## ", text, re.S | re.M)
    if section is None:
        raise AlertsFailed("docs/operations.md has no section 'Monitoring and alerts'")
    blocks = [b for b in re.findall(r"```yaml\n(.*?)```", section.group(1), re.S) if "- alert:" in b]
    if not blocks or not blocks[0].startswith("groups:"):
        raise AlertsFailed("the guide's first rule block does not start a group (groups:)")
    for block in blocks[1:]:
        if not block.startswith("      - alert:"):
            raise AlertsFailed(f"a later rule block is not rules of the same group:\n{block[:200]}")
    rules = "".join(blocks)
    names = re.findall(r"^\s*- alert: (\w+)$", rules, re.M)
    everywhere = re.findall(r"^\s*- alert: (\w+)$", text, re.M)
    check(
        sorted(names) == sorted(everywhere),
        f"the extracted rules are every rule the guide shows ({len(names)}: {', '.join(names)})",
    )
    return rules, names


def promtool(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["promtool", *args], input=stdin, capture_output=True)


# --- a relay that refuses one address for good ------------------------------------------------


class Relay(socketserver.StreamRequestHandler):
    """Plain SMTP: `bounce@…` is refused with 550 at RCPT, every other recipient accepted, and
    each mail accepted kept (`server.mails`, as (recipients, message))."""

    def reply(self, text: str) -> None:
        self.wfile.write(text.encode() + b"\r\n")

    def handle(self) -> None:
        self.reply("220 relay ESMTP")
        recipients: list[str] = []
        try:
            while True:
                raw = self.rfile.readline(65536)
                if not raw:
                    return
                verb, _, args = raw.decode("utf-8", "replace").rstrip("\r\n").partition(" ")
                verb = verb.upper()
                if verb == "EHLO":
                    self.reply("250-relay")
                    self.reply("250 8BITMIME")
                elif verb == "MAIL":
                    recipients = []
                    self.server.mail_froms += 1
                    self.reply(self.server.mail_answer or "250 2.1.0 ok")
                elif verb == "RCPT":
                    recipient = args.split(":", 1)[-1].strip().strip("<>")
                    if recipient.startswith("bounce@"):
                        self.server.refused += 1
                        self.reply("550 5.1.1 no such user")
                    else:
                        recipients.append(recipient)
                        self.reply("250 2.1.5 ok")
                elif verb == "DATA":
                    self.reply("354 end with <CRLF>.<CRLF>")
                    lines = []
                    while (line := self.rfile.readline(1 << 20)) not in (b".\r\n", b".\n", b""):
                        lines.append(line[1:] if line.startswith(b"..") else line)
                    message = email.message_from_bytes(b"".join(lines), policy=email.policy.default)
                    self.server.mails.append((recipients, message))
                    self.server.accepted += 1
                    self.reply("250 2.0.0 queued")
                elif verb == "QUIT":
                    self.reply("221 2.0.0 bye")
                    return
                else:  # HELO, RSET, NOOP
                    self.reply("250 2.0.0 ok")
        except OSError:
            return


class RelayServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    refused = 0
    accepted = 0
    mail_froms = 0
    # While set, every sender is refused with it: the relay refusing signupd itself.
    mail_answer: str | None = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.mails: list[tuple[list[str], email.message.EmailMessage]] = []

    def confirm_token(self, recipient: str) -> str | None:
        """The token of the last confirmation link mailed to `recipient`, if one came."""
        for recipients, message in reversed(self.mails):
            if recipient not in recipients:
                continue
            for part in message.walk():
                if part.get_content_type() in ("text/plain", "text/html"):
                    found = re.search(r"/confirm\?token=([A-Za-z0-9_-]{43})\b", part.get_content())
                    if found:
                        return found.group(1)
        return None


# --- a stand-in for Brevo's API that refuses every call -----------------------------------------


class RefusingBrevo(http.server.BaseHTTPRequestHandler):
    """Answers every request 400 `invalid_parameter`, as Brevo answers a call it will never take
    (an unknown list, say), and keeps each request (`server.calls`: method, path, headers, body).
    Only the read of the account's contact attributes (which signupd makes before it hands on a
    language) is answered as a new account's, and not kept among the calls."""

    def answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if (self.command, self.path) == ("GET", "/v3/contacts/attributes"):
            self.reply(200, {"attributes": [{"name": "FIRSTNAME", "category": "normal", "type": "text"}]})
            return
        self.server.calls.append((self.command, self.path, dict(self.headers), body))
        self.reply(400, {"code": "invalid_parameter", "message": "listIds: list 7 does not exist"})

    def reply(self, status: int, document: dict) -> None:
        reply = json.dumps(document).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = answer

    def log_message(self, *args) -> None:
        pass


class BrevoServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.calls: list[tuple[str, str, dict, bytes]] = []


# --- signupd ----------------------------------------------------------------------------------


def signupd_config(
    path: Path, data_dir: Path, port: int, metrics_port: int, relay_port: int, brevo_port: int, brevo_key: Path
) -> None:
    path.write_text(
        f"""[server]
listen = "127.0.0.1:{port}"
public_url = "http://127.0.0.1:{port}"
metrics_listen = "127.0.0.1:{metrics_port}"
trusted_proxies = ["127.0.0.1/32"]
client_ip_header = "CF-Connecting-IP"
[storage]
data_dir = "{data_dir}"
[signup]
rate_limits = [{{ window = "10m", max = 3 }}]
network_rate_limits = []
surge_alert = {{ window = "10m", max = {SURGE_MAX} }}
[mail]
transport = "smtp"
retry_base = "1s"
[mail.smtp]
host = "127.0.0.1"
port = {relay_port}
security = "none"
[[lists]]
id = "news"
[[lists]]
id = "launch"
[[lists]]
id = "members"
[[destinations]]
name = "{DESTINATION}"
kind = "brevo"
url = "http://127.0.0.1:{brevo_port}/v3"
credential_file = "{brevo_key}"
target = "{BREVO_LIST}"
"""
    )


def http(url: str, body: bytes | None = None, headers=None, timeout: float = 10) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=body, headers=headers or {}, method="POST" if body else "GET")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


urllib.request.install_opener(urllib.request.build_opener(NoRedirect))


class Visitors:
    """Signups from made-up visitors, each its own client (a /24 of its own)."""

    def __init__(self, port: int):
        self.port = port
        self.sent = 0

    def signup(self, email: str | None = None, list_id: str = "news", client: str | None = None) -> int:
        self.sent += 1
        client = client or f"10.{self.sent // 250}.{self.sent % 250}.1"
        email = email or f"visitor-{self.sent}@example.com"
        body = urllib.parse.urlencode({"email": email, "consent": "yes", "list": list_id}).encode()
        headers = {"CF-Connecting-IP": client, "Content-Type": "application/x-www-form-urlencoded"}
        status, _ = http(f"http://127.0.0.1:{self.port}/api/signup", body, headers)
        return status


def wait_for(predicate, what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.25)
    raise AlertsFailed(f"{what}: not within {timeout:.0f} s")


# --- Prometheus -------------------------------------------------------------------------------


class Prometheus:
    def __init__(self, port: int):
        self.port = port

    def api(self, path: str) -> dict:
        status, body = http(f"http://127.0.0.1:{self.port}/api/v1/{path}")
        if status != 200:
            raise AlertsFailed(f"Prometheus /api/v1/{path} answered {status}")
        return json.loads(body)["data"]

    def states(self) -> dict[str, str]:
        """Each alert that is pending or firing, by name (firing wins)."""
        states: dict[str, str] = {}
        for alert in self.api("alerts")["alerts"]:
            name = alert["labels"]["alertname"]
            if states.get(name) != "firing":
                states[name] = alert["state"]
        return states

    def value(self, query: str) -> list:
        return self.api("query?" + urllib.parse.urlencode({"query": query}))["result"]

    def target_up(self) -> bool:
        targets = self.api("targets")["activeTargets"]
        return any(t["labels"].get("job") == "signupd" and t["health"] == "up" for t in targets)


def guide_scrape_config() -> str:
    """The guide's scrape job, as written."""
    section = re.search(r"^## Monitoring and alerts\n(.*?)^## ", GUIDE.read_text(), re.S | re.M)
    blocks = [b for b in re.findall(r"```yaml\n(.*?)```", section.group(1), re.S) if b.startswith("scrape_configs:")]
    if len(blocks) != 1:
        raise AlertsFailed(f"the guide shows {len(blocks)} scrape configurations, not one")
    return blocks[0]


def prometheus_config(path: Path, rules: Path, metrics_port: int) -> None:
    """The guide's scrape job pointed at this signupd, scraped and evaluated every second."""
    scrape = guide_scrape_config()
    changes = [("127.0.0.1:9464", f"127.0.0.1:{metrics_port}"), ("scrape_interval: 15s", "scrape_interval: 1s")]
    for documented, here in changes:
        if documented not in scrape:
            raise AlertsFailed(f"the guide's scrape job no longer has {documented!r}:\n{scrape}")
        scrape = scrape.replace(documented, here)
    path.write_text(
        f"""global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: ["{rules}"]
{scrape}"""
    )


def expect_quiet(prometheus: Prometheus, names: list[str], when: str) -> None:
    states = prometheus.states()
    loud = {name: state for name, state in states.items() if name in names}
    check(not loud, f"{when}: {', '.join(names)} neither pending nor firing (found {loud or 'none'})")


def expect_state(prometheus: Prometheus, name: str, state: str, cause: str) -> None:
    started = time.monotonic()
    wait_for(lambda: prometheus.states().get(name) == state, f"{name} {state} after {cause}", FIRE_WITHIN)
    check(True, f"{name} is {state} {time.monotonic() - started:.1f} s after {cause}")


# --- the run ----------------------------------------------------------------------------------


def run(signupd: str, work: Path) -> None:
    rules_text, names = guide_rules()
    rules = work / "signupd-rules.yml"
    rules.write_text(rules_text)
    checked = promtool("check", "rules", str(rules))
    check(checked.returncode == 0, f"promtool check rules passes:\n{checked.stdout.decode()}{checked.stderr.decode()}")

    unit = work / "unit"
    unit.mkdir()
    (unit / "signupd-rules.yml").write_text(re.sub(r"^\s*annotations:.*\n", "", rules_text, flags=re.M))
    shutil.copy(RULES_TEST, unit / "rules_test.yml")
    tested = promtool("test", "rules", str(unit / "rules_test.yml"))
    output = tested.stdout.decode() + tested.stderr.decode()
    check(tested.returncode == 0, f"promtool test rules passes for every rule:\n{output}")
    tested_names = set(re.findall(r"alertname: (\w+)", RULES_TEST.read_text()))
    untested = set(names) - tested_names
    check(not untested, f"rules_test.yml tests every rule (missing {untested or 'none'})")

    relay = RelayServer(("127.0.0.1", 0), Relay)
    threading.Thread(target=relay.serve_forever, daemon=True).start()
    brevo = BrevoServer(("127.0.0.1", 0), RefusingBrevo)
    threading.Thread(target=brevo.serve_forever, daemon=True).start()
    brevo_key = work / "brevo-key"
    brevo_key.write_text(BREVO_KEY + "\n")
    brevo_key.chmod(0o600)
    port, metrics_port, prometheus_port = free_port(), free_port(), free_port()
    data_dir = work / "data"
    data_dir.mkdir()
    config = work / "signupd.toml"
    signupd_config(
        config, data_dir, port, metrics_port, relay.server_address[1], brevo.server_address[1], brevo_key
    )
    env = {**os.environ, "RUST_LOG": "warn"}
    server = processes.spawn([signupd, "serve", "--config", str(config)], work / "signupd.log", env=env)
    wait_for(lambda: _ready(port, server, work), "signupd ready", 60)

    status, exposition = http(f"http://127.0.0.1:{metrics_port}/metrics")
    check(status == 200, "GET /metrics answers 200")
    linted = promtool("check", "metrics", stdin=exposition)
    problems = (linted.stdout + linted.stderr).decode().strip()
    check(
        linted.returncode == 0 and not problems,
        f"promtool check metrics finds nothing (found: {problems or 'nothing'})",
    )
    text = exposition.decode()
    for series in [
        'signupd_mails_total{kind="confirmation",result="failed"} 0',
        'signupd_signups_total{list="news",outcome="storage_unavailable"} 0',
        'signupd_signups_total{list="news",outcome="rate_limited"} 0',
        'signupd_surge_alerts_total{list="launch"} 0',
        'signupd_confirmations_total{list="news",method="button"} 0',
        f'signupd_destinations_total{{destination="{DESTINATION}",result="dropped"}} 0',
    ]:
        name, labels = series.split("{")[0], re.findall(r'(\w+)="(\w+)"', series)
        found = any(
            line.startswith(name + "{") and line.endswith(" 0") and all(f'{k}="{v}"' in line for k, v in labels)
            for line in text.splitlines()
        )
        check(found, f"before any event the first exposition has {series}")

    prometheus_config(work / "prometheus.yml", rules, metrics_port)
    prometheus = Prometheus(prometheus_port)
    processes.spawn(
        [
            "prometheus",
            f"--config.file={work / 'prometheus.yml'}",
            f"--storage.tsdb.path={work / 'tsdb'}",
            f"--web.listen-address=127.0.0.1:{prometheus_port}",
        ],
        work / "prometheus.log",
    )
    wait_for(lambda: _try(prometheus.target_up), "Prometheus scraping signupd", 60)
    # A few scrapes of the zeros, so every later event is an increase over a sample.
    wait_for(
        lambda: _try(lambda: len(prometheus.value('signupd_mails_total{result="failed"}[3s]')) > 0),
        "samples of the counters at zero",
        30,
    )
    check(True, "Prometheus scrapes signupd every second and holds the counters at zero")
    expect_quiet(prometheus, names, "before any event")

    visitors = Visitors(port)

    # 1. The first mail refused for good. A recipient's refusal counts against the address only
    # when the relay takes another recipient right after it; so both visitors' mails are queued
    # while the relay refuses every sender (the queue holds), and leave in one batch once it
    # takes them again, the refused address first.
    relay.mail_answer = "451 4.3.0 try again later"
    check(visitors.signup("bounce@example.com") == 303, "a signup to an address the relay refuses is accepted (303)")
    wait_for(lambda: relay.mail_froms >= 1, "signupd meeting the relay refusing every sender", 30)
    # (On members, not news: news must stay below its surge alert until step 6.)
    settles = visitors.signup("settles@example.com", list_id="members")
    check(settles == 303, f"a second visitor's signup, held behind it, is accepted ({settles})")
    # The signup is applied, and its mail queued, a moment after the answer: the relay takes mail
    # again only once both mails wait, so they leave together and the second settles the first.
    wait_for(
        lambda: _try(lambda: mail_queue_depth(metrics_port) >= 2),
        "both visitors' mails queued while the relay refuses every sender",
        30,
    )
    relay.mail_answer = None
    wait_for(lambda: relay.refused >= 1, "the relay refusing the confirmation", 30)
    wait_for(lambda: relay.confirm_token("settles@example.com") is not None, "the relay taking the next recipient", 30)
    expect_state(prometheus, "SignupdMailFailures", "firing", "the first mail refused with 550")
    expect_quiet(
        prometheus,
        ["SignupdStorageErrors", "SignupdSignupSurge", "SignupdFlooded", "SignupdDestinationDropped"],
        "after one failed mail",
    )

    # 2. The first signup refused because SQLite cannot be written.
    blocker = sqlite3.connect(data_dir / "signupd.sqlite3", timeout=5, isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")
    try:
        status = visitors.signup()
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    check(status == 503, f"a signup while another connection holds the write lock is refused 503 (got {status})")
    expect_state(prometheus, "SignupdStorageErrors", "firing", "the first signup refused for storage")
    expect_quiet(
        prometheus, ["SignupdSignupSurge", "SignupdFlooded", "SignupdDestinationDropped"], "after one storage error"
    )

    # 3. The first surge: accepted signups of "launch" pass the alert's max once.
    for _ in range(SURGE_MAX + 1):
        status = visitors.signup(list_id="launch")
        check(status == 303, f"a signup to launch is accepted ({status})")
    expect_state(prometheus, "SignupdSignupSurge", "firing", f"{SURGE_MAX + 1} accepted signups in the window")
    expect_quiet(prometheus, ["SignupdFlooded", "SignupdDestinationDropped"], "after the surge")

    # 4. The first flood: one client, 110 signups, 3 allowed.
    statuses = [visitors.signup(client="192.0.2.1") for _ in range(110)]
    check(statuses.count(429) == 107, f"one client's 110 signups: 107 refused 429 ({statuses.count(429)})")
    expect_state(prometheus, "SignupdFlooded", "firing", "the first flood (107 refused)")
    expect_quiet(prometheus, ["SignupdDestinationDropped"], "after the flood")

    # 5. The first subscriber event a destination gives up: one subscriber confirms, and the
    # stand-in Brevo refuses the call with a 400 that no retry would change. The signup goes to
    # "members", a list of its own: launch is in surge mode since step 3 and news is close to it
    # (4 of 5), and surge mode would hold the confirmation mail until a button nobody presses.
    member = "member@example.com"
    check(visitors.signup(member, list_id="members") == 303, "a signup to members is accepted (303)")
    wait_for(lambda: relay.confirm_token(member) is not None, "the confirmation mail at the relay", 30)
    token = relay.confirm_token(member)
    check(True, "the relay got the confirmation mail, with a /confirm?token= link")
    status, _ = http(
        f"http://127.0.0.1:{port}/api/confirm",
        urllib.parse.urlencode({"token": token}).encode(),
        {"Content-Type": "application/x-www-form-urlencoded"},
    )
    check(status == 303, f"POST /api/confirm with the mail's token confirms (got {status})")
    wait_for(lambda: len(brevo.calls) >= 1, "the destination calling the stand-in Brevo", 30)
    method, path, headers, body = brevo.calls[0]
    sent = json.loads(body or b"{}")
    check(
        (method, path) == ("POST", "/v3/contacts")
        and headers.get("api-key") == BREVO_KEY
        and (sent.get("email"), sent.get("listIds"), sent.get("updateEnabled")) == (member, [int(BREVO_LIST)], True),
        f"the destination posts the subscriber to /v3/contacts with the key of credential_file "
        f"({method} {path}, {sent})",
    )
    expect_state(prometheus, "SignupdDestinationDropped", "firing", "the first event refused with 400")
    series = prometheus.value("signupd_destinations_total")
    counts = {s["metric"]["result"]: s["value"][1] for s in series if s["metric"].get("destination") == DESTINATION}
    check(
        counts == {"delivered": "0", "retry": "0", "dropped": "1"} and len(brevo.calls) == 1,
        f"dropped at once: one call, no retry (calls {len(brevo.calls)}, signupd_destinations_total {counts})",
    )

    # 6. Accepted signups and almost no confirmation. The rule needs more than 0.001 signups a
    # second over 6 hours (21.6) and fewer than 5 confirmations in 100. Accepted so far: 1 (the
    # refused mail and the one held behind it) + 6 (launch) + 3 (the flood's) + 1 (members) = 12, with
    # step 5's one confirmation; 30 more from their own clients make 42, and 1/42 = 0.024 < 0.05. (Both
    # counters start at 0 in the same scrapes, so rate()'s extrapolation scales them alike and
    # the ratio is that of the counts.) Step 5 comes before this one so that its confirmation is
    # counted here: the rule must fire on a rate that collapsed, not only on none at all.
    expect_quiet(prometheus, ["SignupdConfirmationRateCollapsed"], "with few signups")
    statuses = [visitors.signup() for _ in range(30)]
    accepted_now = statuses.count(303)
    check(accepted_now == 30, f"30 more signups to news, each from its own client, accepted ({accepted_now})")
    expect_state(
        prometheus, "SignupdConfirmationRateCollapsed", "pending", "30 more accepted signups, one confirmation in 42"
    )
    # The rule may turn pending before Prometheus has scraped the last of the 30 (1 in 25 is
    # already below 0.05): the counts are read once its scrapes have caught up.
    expected = "42"

    def rule_counts() -> list[str]:
        confirmed = prometheus.value("sum(signupd_confirmations_total)")
        accepted = prometheus.value('sum(signupd_signups_total{outcome="accepted"})')
        return [found[0]["value"][1] if found else "none" for found in (confirmed, accepted)]

    deadline = time.monotonic() + FIRE_WITHIN
    while (counted := rule_counts()) != ["1", expected] and time.monotonic() < deadline:
        time.sleep(0.25)
    check(
        counted == ["1", expected],
        f"the rule saw 1 confirmation and {expected} accepted signups ({' and '.join(counted)})",
    )

    # The queues drained: nothing waits long, so the stuck-queue rules stay quiet.
    expect_quiet(prometheus, ["SignupdMailQueueStuck", "SignupdWebhookQueueStuck"], "with the queues moving")

    # 7. signupd gone.
    expect_quiet(prometheus, ["SignupdDown"], "while signupd runs")
    processes.stop(server)
    check(server.returncode == 0, f"signupd stops on SIGTERM with 0 ({server.returncode})")
    expect_state(prometheus, "SignupdDown", "pending", "signupd stopped")
    relay.shutdown()
    brevo.shutdown()


def _ready(port: int, process: subprocess.Popen, work: Path) -> bool:
    if process.poll() is not None:
        raise AlertsFailed(f"signupd exited ({process.returncode}):\n{(work / 'signupd.log').read_text()[-2000:]}")
    try:
        return http(f"http://127.0.0.1:{port}/readyz", timeout=2)[0] == 200
    except OSError:
        return False


def mail_queue_depth(metrics_port: int) -> float:
    """The mails waiting in signupd's queue, from its own exposition."""
    status, exposition = http(f"http://127.0.0.1:{metrics_port}/metrics")
    found = re.search(r'^signupd_queue_depth\{queue="mail"\} (\S+)$', exposition.decode(), re.M)
    return float(found.group(1)) if status == 200 and found else 0.0


def _try(predicate) -> bool:
    try:
        return predicate()
    except (OSError, AlertsFailed, KeyError, ValueError):
        return False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--signupd", default=str(ROOT / "target" / "debug" / "signupd"))
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args()
    version = subprocess.run(["prometheus", "--version"], capture_output=True, text=True)
    say(f"{(version.stdout or version.stderr).splitlines()[0]}; signupd {args.signupd}")
    work = Path(tempfile.mkdtemp(prefix="signupd-prometheus-"))
    failed = False
    try:
        run(args.signupd, work)
    except AlertsFailed as failure:
        failed = True
        say(f"FAILED: {failure}")
        say(f"logs kept in {work}")
    finally:
        processes.stop_all()
    if failed:
        return 1
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    say(f"all {checks.passed} checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
