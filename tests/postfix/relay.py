#!/usr/bin/env python3
"""A real submission relay, as operators run one, in front of the real signupd: Postfix with
STARTTLS required (and a second, implicit-TLS listener), SASL AUTH from a Cyrus sasldb, and
sender ownership (`reject_sender_login_mismatch`), relaying what it accepts to an SMTP server the
test runs itself. Its certificate is one of a private CA's, a self-signed one, or one of a CA
signupd does not trust; signupd trusts the relay by `mail.smtp.ca_file`, by the system store
(`SSL_CERT_FILE`), or by the pin `mail.smtp.certificate_sha256` — and when the relay refuses
signupd itself (its certificate, its login, its sender), nothing is lost: the mail and the pending
signup wait, the operator gets one alert, and the held mail goes out once the relay is fixed.

Run by .ci/postfix (which installs Postfix, Cyrus SASL and openssl, and builds signupd first); by
hand, as root:

    python3 tests/postfix/relay.py --signupd target/debug/signupd

Everything is the test's own and on 127.0.0.1: a CA, certificates and keys made with `openssl`
under a temporary directory; a Postfix instance with its own configuration directory and queue
(`postfix -c DIR`) on free ports, a system Postfix left alone; the SMTP server Postfix relays to
(`relayhost`), and the HTTP server `mail.alert_webhook` posts to, both in this process; for each
case a fresh signupd (`serve`, its own data directory and configuration, the password in
`SIGNUPD_MAIL__SMTP__PASSWORD`).

0. The relay, with Python's smtplib: STARTTLS verified with the private CA, AUTH, a mail that
   arrives; implicit TLS the same; a wrong password is 535; a sender the login does not own is
   553 5.7.1 at MAIL FROM.
1. Private CA by `ca_file` (STARTTLS): a signup's confirmation arrives through the relay
   (ESMTPSA, TLS, the confirmation link). `signupd doctor` finds no problem: the relay answers,
   its certificate's fingerprint and days left, the login accepted; and it sends nothing.
2. Private CA through the system store (`SSL_CERT_FILE`, no `ca_file`): it arrives. Implicit TLS
   (`security = "tls"`, the wrapper-mode port, `ca_file`): it arrives.
3. A self-signed certificate pinned by the fingerprint the operations guide's openssl command
   prints (its lines for 587 and 465, read from docs/operations.md, run against the test's
   ports): it arrives.
4. A certificate of a CA signupd does not trust: `send-test-mail` fails naming the issuer and the
   fingerprint; a signup stays pending with its mail queued; one `relay_refused` alert (tls);
   `signupd doctor` exits 1 with that one problem.
5. A wrong pin: `send-test-mail` says the certificate does not match the pin.
6. A wrong password: signups stay pending; "refused the login (AUTH)", 535; one alert (auth,
   535); `signupd doctor` exits 1 with that one problem. The password fixed at the relay (saslpasswd2; signupd keeps running), every held
   confirmation arrives; the seconds that took are printed; "the relay accepts mail again".
7. A list whose `from` the login does not own: "refused the sender (MAIL FROM)", 553; pending.
8. A closed port: `send-test-mail` says "connection refused by 127.0.0.1:PORT".
9. The sender-login refusal reported at RCPT TO (`reject_sender_login_mismatch` in
   `smtpd_recipient_restrictions`, `smtpd_delay_reject = yes`): every recipient refused the same
   way, so it is the relay's: signups stay pending, one alert (rcpt, 553); the sender allowed at
   the relay, every held confirmation arrives.
10. A relay-wide `defer` at RCPT TO (450): the same, one alert (rcpt, 450), and all arrives once
   it is lifted.
11. Postfix's own `User unknown in local recipient table` (`local_recipient_maps`, 550 5.1.1) for
   one address while it relays the others: that pending signup alone is deleted (and suppressed),
   the others arrive, no relay_refused alert.

Each error text signupd gave is printed once, as `relay error seen: …`. No address is printed on
success; on failure the tails of signupd's and Postfix's logs are.
"""

import argparse
import email
import email.policy
import functools
import hashlib
import json
import shutil
import smtplib
import socketserver
import ssl
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import signupd_server  # noqa: E402  (tests/postfix/signupd_server.py)
from harness import Checks, Processes, free_port  # noqa: E402
from instance import PostfixInstance  # noqa: E402  (tests/postfix/instance.py)
from signupd_server import DEADLINE, Alerts, run_as_root, smtp_mail  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "operations.md"
# The relay the guide's openssl commands ask.
GUIDE_RELAY = "relay.example.net"
DOMAIN = "signupd.test"
REALM = DOMAIN
LOGIN = "signupd"
PASSWORD = "correct horse battery staple"
WRONG_PASSWORD = "not the password"
FROM = f"newsletter@{DOMAIN}"
# A sender the relay's login does not own (smtpd_sender_login_maps).
FOREIGN_FROM = f"someone-else@{DOMAIN}"
READERS = "readers.test"
# The relay's own local domain (local_recipient_maps).
LOCAL_DOMAIN = f"local.{DOMAIN}"
REFUSAL_LOG = "the relay refuses signupd's mail; every mail waits in the queue"
AGAIN_LOG = "the relay accepts mail again"


class RelayFailed(Exception):
    pass


checks = Checks("postfix relay", RelayFailed)
say, check = checks.say, checks.check
processes = Processes()
errors_seen: list[str] = []
# Every address the test signed up or sent to: none may be printed, or be in signupd's log.
addresses_used: list[str] = []


def error_seen(text: str) -> None:
    """The CI log quotes each error text signupd gave, once (never an address)."""
    text = " ".join(text.split()).removeprefix("signupd: error: ")
    check(not any(address in text for address in addresses_used), "signupd's error text holds no address")
    if text not in errors_seen:
        errors_seen.append(text)
        say(f"relay error seen: {text}")


def run(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(args, capture_output=True, text=True, timeout=60, **kwargs)
    if result.returncode != 0:
        raise RelayFailed(f"{' '.join(args)} exited {result.returncode}: {result.stderr.strip()}")
    return result


wait_until = functools.partial(signupd_server.wait_until, checks)


# --- certificates -----------------------------------------------------------------------------


class Certificates:
    """A private CA and the relay's certificate from it (127.0.0.1 and localhost); a self-signed
    certificate; a certificate of another CA that nothing trusts. Each `name` has `name.key` and
    `name.pem` in `directory`."""

    def __init__(self, directory: Path):
        self.dir = directory
        directory.mkdir()

    def path(self, name: str, kind: str = "pem") -> Path:
        return self.dir / f"{name}.{kind}"

    def ca(self, name: str, subject: str) -> None:
        run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "30", "-sha256",
             "-keyout", str(self.path(name, "key")), "-out", str(self.path(name)), "-subj", subject,
             "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"])

    def server(self, name: str, subject: str, issuer: str | None) -> None:
        """A server certificate for 127.0.0.1 and localhost, signed by `issuer`, or by itself."""
        key, cert = self.path(name, "key"), self.path(name)
        extensions = self.dir / f"{name}.ext"
        extensions.write_text(
            "basicConstraints=critical,CA:FALSE\n"
            "keyUsage=critical,digitalSignature,keyEncipherment\n"
            "extendedKeyUsage=serverAuth\n"
            "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
        )
        if issuer is None:
            run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "30", "-sha256",
                 "-keyout", str(key), "-out", str(cert), "-subj", subject,
                 "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost", "-addext", "extendedKeyUsage=serverAuth"])
            return
        request = self.dir / f"{name}.csr"
        run(["openssl", "req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(request),
             "-subj", subject])
        run(["openssl", "x509", "-req", "-in", str(request), "-CA", str(self.path(issuer)),
             "-CAkey", str(self.path(issuer, "key")), "-CAcreateserial", "-days", "30", "-sha256",
             "-extfile", str(extensions), "-out", str(cert)])

    def fingerprint(self, name: str) -> str:
        """As `openssl x509 -noout -fingerprint -sha256` prints it, after the `=`."""
        out = run(["openssl", "x509", "-noout", "-fingerprint", "-sha256", "-in", str(self.path(name))]).stdout
        return out.strip().split("=", 1)[1]

    def make(self) -> None:
        self.ca("ca", "/O=signupd CI/CN=signupd relay test CA")
        self.server("relay", "/O=signupd CI/CN=localhost", "ca")
        self.server("self-signed", "/O=signupd CI/CN=self-signed relay", None)
        self.ca("other-ca", "/O=Elsewhere/CN=a CA signupd does not trust")
        self.server("untrusted", "/O=Elsewhere/CN=localhost", "other-ca")
        for name in ("ca", "other-ca", "relay", "self-signed", "untrusted"):
            self.path(name, "key").chmod(0o600)


def fingerprint_of(der: bytes) -> str:
    """As openssl prints it: the SHA-256 of the DER, uppercase hex with colons."""
    return ":".join(f"{byte:02X}" for byte in hashlib.sha256(der).digest())


# --- the SMTP server Postfix relays to --------------------------------------------------------


class Capture:
    """What Postfix delivered to `relayhost`: (envelope sender, recipients, message) per mail."""

    def __init__(self):
        self.mails: list[tuple[str, list[str], email.message.Message]] = []
        self.lock = threading.Lock()
        capture = self

        class Handler(socketserver.StreamRequestHandler):
            def reply(self, line: str) -> None:
                self.wfile.write(line.encode() + b"\r\n")
                self.wfile.flush()

            def handle(self) -> None:
                self.reply("220 capture.test ESMTP the relay test's capture")
                sender, recipients = "", []
                while True:
                    line = self.rfile.readline()
                    if not line:
                        return
                    command = line.decode(errors="replace").strip()
                    verb = command[:4].upper()
                    if verb == "EHLO":
                        self.reply("250-capture.test")
                        self.reply("250 8BITMIME")
                    elif verb == "HELO":
                        self.reply("250 capture.test")
                    elif verb == "MAIL":
                        sender, recipients = command.split(":", 1)[1].split()[0].strip("<>"), []
                        self.reply("250 2.1.0 ok")
                    elif verb == "RCPT":
                        recipients.append(command.split(":", 1)[1].split()[0].strip("<>"))
                        self.reply("250 2.1.5 ok")
                    elif verb == "DATA":
                        self.reply("354 go on")
                        lines = []
                        while True:
                            data = self.rfile.readline()
                            if not data or data in (b".\r\n", b".\n"):
                                break
                            lines.append(data[1:] if data.startswith(b"..") else data)
                        message = email.message_from_bytes(b"".join(lines), policy=email.policy.default)
                        with capture.lock:
                            capture.mails.append((sender, recipients, message))
                        self.reply("250 2.0.0 captured")
                    elif verb == "QUIT":
                        self.reply("221 2.0.0 bye")
                        return
                    else:
                        self.reply("250 2.0.0 ok")

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True

        self.server = Server(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def to(self, address: str) -> list[tuple[str, list[str], email.message.Message]]:
        with self.lock:
            return [mail for mail in self.mails if address in mail[1]]

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# --- the relay --------------------------------------------------------------------------------


class Relay(PostfixInstance):
    """The test's own Postfix (tests/postfix/instance.py): `postfix -c etc`, its queue, sasldb and
    certificates under `root`. Submission (STARTTLS required) on `port`, implicit TLS on
    `tls_port`; both require AUTH and relay to `relayhost`."""

    def __init__(self, root: Path, certificates: Certificates, capture_port: int):
        super().__init__(root, free_port(), RelayFailed)
        # Debian's Postfix reads smtpd.conf from $config_directory/sasl whatever
        # cyrus_sasl_config_path says; the test sets both.
        self.sasl = self.etc / "sasl"
        self.sasldb = self.sasl / "sasldb2"
        self.certificates = certificates
        self.capture_port = capture_port
        self.tls_port = free_port()
        self.certificate = "relay"

    def configure(self) -> None:
        self.make_directories(self.sasl)
        (self.sasl / "smtpd.conf").write_text(
            f"pwcheck_method: auxprop\nauxprop_plugin: sasldb\nmech_list: PLAIN LOGIN\nsasldb_path: {self.sasldb}\n"
        )
        self.set_password(PASSWORD)
        key, cert = self.certificates.path(self.certificate, "key"), self.certificates.path(self.certificate)
        (self.etc / "main.cf").write_text(
            f"""# The relay test's own Postfix (tests/postfix/relay.py): a submission relay on loopback.
{self.own_files()}
syslog_name = postfix-relay-ci
myhostname = relay.{DOMAIN}
mydomain = {DOMAIN}
myorigin = $mydomain
# One local domain, whose only user is postmaster: any other is Postfix's own "User unknown in
# local recipient table" (case 11).
mydestination = {LOCAL_DOMAIN}
local_recipient_maps = inline:{{ postmaster=postmaster }}
alias_maps =
alias_database =
inet_interfaces = loopback-only
inet_protocols = ipv4
# No client relays by its address: only a SASL login does.
mynetworks =
# Everything accepted goes to the test's capture server.
relayhost = [127.0.0.1]:{self.capture_port}
smtp_tls_security_level = none
notify_classes =
biff = no

# TLS: the certificate the test switches (private CA, self-signed, another CA's).
smtpd_tls_chain_files = {key}, {cert}
smtpd_tls_security_level = encrypt
smtpd_tls_auth_only = yes
smtpd_tls_received_header = yes
smtpd_tls_loglevel = 1

# SASL: Cyrus, the sasldb of saslpasswd2.
smtpd_sasl_auth_enable = yes
smtpd_sasl_type = cyrus
smtpd_sasl_path = smtpd
cyrus_sasl_config_path = {self.sasl}
# The login names a user of this realm: smtpd calls it LOGIN@REALM.
smtpd_sasl_local_domain = {REALM}
smtpd_sasl_security_options = noanonymous
smtpd_sasl_tls_security_options = noanonymous
broken_sasl_auth_clients = no

# A login sends only from the addresses it owns; refused at MAIL FROM (not delayed to RCPT).
smtpd_delay_reject = no
smtpd_sender_login_maps = inline:{{ {FROM}={LOGIN}@{REALM} }}
smtpd_sender_restrictions = reject_sender_login_mismatch
smtpd_relay_restrictions = permit_sasl_authenticated, reject
smtpd_recipient_restrictions = permit_sasl_authenticated, reject
"""
        )
        (self.etc / "master.cf").write_text(
            f"""127.0.0.1:{self.port} inet n - n - - smtpd
  -o syslog_name=postfix-relay-ci/submission
127.0.0.1:{self.tls_port} inet n - n - - smtpd
  -o syslog_name=postfix-relay-ci/submissions
  -o smtpd_tls_wrappermode=yes
"""
            + self.services("tlsmgr", "smtp", "relay")
        )

    def set_password(self, password: str) -> None:
        """`saslpasswd2`, as an operator sets a login's password; smtpd reads the database at each
        AUTH, so no reload."""
        run(["saslpasswd2", "-p", "-c", "-f", str(self.sasldb), "-u", REALM, LOGIN], input=password)
        shutil.chown(self.sasldb, "postfix", "postfix")
        self.sasldb.chmod(0o600)

    def start(self) -> None:
        warnings = self.warnings()
        check(not warnings, f"postconf knows every parameter of main.cf and master.cf ({warnings or 'no warnings'})")
        super().start()
        check(True, f"the relay answers on {self.listeners()}")

    def answers(self) -> bool:
        """Both listeners show a certificate."""
        return self.presented(self.port) is not None and self.presented(self.tls_port, implicit=True) is not None

    def listeners(self) -> str:
        return f"127.0.0.1:{self.port} (STARTTLS) and 127.0.0.1:{self.tls_port} (implicit TLS)"

    def presented(self, port: int, implicit: bool = False) -> bytes | None:
        """The certificate the relay shows now (DER), unverified; None if it does not answer."""
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        try:
            if implicit:
                with smtplib.SMTP_SSL("127.0.0.1", port, timeout=5, context=context) as smtp:
                    return smtp.sock.getpeercert(binary_form=True)
            with smtplib.SMTP("127.0.0.1", port, timeout=5) as smtp:
                smtp.starttls(context=context)
                return smtp.sock.getpeercert(binary_form=True)
        except (OSError, smtplib.SMTPException):
            return None

    def use_certificate(self, name: str) -> None:
        """main.cf's smtpd_tls_chain_files switched, `postfix reload`, and waited for until both
        listeners show it."""
        if name == self.certificate:
            return
        key, cert = self.certificates.path(name, "key"), self.certificates.path(name)
        self.command("postconf", "-e", f"smtpd_tls_chain_files = {key}, {cert}")
        self.command("postfix", "reload")
        self.certificate = name
        wanted = self.certificates.fingerprint(name)

        def shown() -> bool:
            return all(
                (der := self.presented(port, implicit)) is not None and fingerprint_of(der) == wanted
                for port, implicit in ((self.port, False), (self.tls_port, True))
            )

        wait_until(f"the relay shows the {name} certificate (postfix reload)", shown, self.tail, timeout=30)

    def reconfigure(self, *settings: str) -> None:
        """main.cf changed with `postconf -e`, and `postfix reload`."""
        self.command("postconf", "-e", *settings)
        self.command("postfix", "reload")

    def restore(self) -> None:
        """The restrictions as `configure` writes them, reloaded."""
        self.reconfigure(
            "smtpd_delay_reject = no",
            f"smtpd_sender_login_maps = inline:{{ {FROM}={LOGIN}@{REALM} }}",
            "smtpd_sender_restrictions = reject_sender_login_mismatch",
            "smtpd_recipient_restrictions = permit_sasl_authenticated, reject",
        )

    def rcpt_answer(self, sender: str, recipient: str) -> int:
        """What the relay answers now to `RCPT TO` after a login and `MAIL FROM` (smtplib)."""
        context = ssl.create_default_context(cafile=str(self.certificates.path("ca")))
        try:
            with smtplib.SMTP("127.0.0.1", self.port, timeout=10) as smtp:
                smtp.starttls(context=context)
                smtp.login(LOGIN, PASSWORD)
                smtp.mail(sender)
                code, _ = smtp.rcpt(recipient)
                smtp.rset()
                return code
        except (OSError, smtplib.SMTPException):
            return 0

    def rcpt_refusals(self, since: int) -> int:
        """`RCPT TO` refusals the relay logged after log line `since`."""
        return sum("NOQUEUE: reject: RCPT" in line for line in self.lines()[since:])

    def submission_connects(self, since: int) -> int:
        """Clients that connected to the submission listeners after log line `since`."""
        return sum("/smtpd[" in line and ": connect from " in line for line in self.lines()[since:])


# --- signupd ----------------------------------------------------------------------------------


class Signupd(signupd_server.Signupd):
    """One case's signupd (tests/postfix/signupd_server.py) under `root/name`, logging in to the
    relay as LOGIN with `password` (in `SIGNUPD_MAIL__SMTP__PASSWORD`)."""

    def __init__(self, binary: str, root: Path, relay: Relay, alerts: Alerts, name: str, *,
                 port: int | None = None, security: str = "starttls", password: str = PASSWORD,
                 smtp: dict[str, str] | None = None, env: dict[str, str] | None = None, sender: str = FROM):
        (root / name).mkdir()
        super().__init__(
            binary, root / name, checks, processes, sender=sender, list_name="Relay test", peer_tail=relay.tail,
            mail=smtp_mail(alerts, port or relay.port, security, {"username": LOGIN, **(smtp or {})}),
            env={"SIGNUPD_MAIL__SMTP__PASSWORD": password, **(env or {})},
        )

    def signup(self, address: str) -> None:
        status = self.post_signup(address)
        if status != 303:
            raise RelayFailed(f"POST /api/signup answered {status}, not 303\n{self.context()}")

    def send_test_mail(self, to: str) -> tuple[int, str]:
        result = self.cli("send-test-mail", "--to", to)
        return result.returncode, (result.stdout + result.stderr).strip()

    def doctor(self) -> tuple[int, list[dict]]:
        """`signupd doctor`, printed as an operator sees it, and its `--json` checks of the relay.
        The DNS checks ask a closed port (nothing on 127.0.0.1 serves this test's domain)."""
        dns = {"SIGNUPD_SIGNUP__DNS_SERVERS": f'["127.0.0.1:{free_port()}"]'}
        printed = subprocess.run(
            [self.binary, "doctor", "--config", str(self.config)],
            capture_output=True, text=True, timeout=120, cwd=self.root, env={**self.env, **dns},
        )
        for line in (printed.stdout + printed.stderr).splitlines():
            say(f"doctor: {line}")
        result = subprocess.run(
            [self.binary, "doctor", "--json", "--config", str(self.config)],
            capture_output=True, text=True, timeout=120, cwd=self.root, env={**self.env, **dns},
        )
        check(result.returncode == printed.returncode, f"doctor --json exits as doctor does ({result.returncode})")
        return result.returncode, [c for c in json.loads(result.stdout)["checks"] if c["area"] == "relay"]


# --- the test ---------------------------------------------------------------------------------


class Test:
    def __init__(self, binary: str, base: Path):
        self.binary = binary
        self.base = base
        self.certificates = Certificates(base / "tls")
        self.capture = Capture()
        self.alerts = Alerts()
        self.relay = Relay(base / "postfix", self.certificates, self.capture.port)
        self.current: Signupd | None = None
        self.number = 0

    def context(self) -> str:
        return self.current.context() if self.current else self.relay.tail()

    def address(self) -> str:
        self.number += 1
        address = f"reader-{self.number}@{READERS}"
        addresses_used.append(address)
        return address

    def signupd(self, name: str, **kwargs) -> Signupd:
        self.alerts.clear()
        self.current = Signupd(self.binary, self.base / "signupd", self.relay, self.alerts, name, **kwargs)
        self.current.start()
        return self.current

    def arrived(self, address: str, server: Signupd, label: str) -> None:
        """The confirmation to `address` came through the relay: once, from signupd's list
        address, relayed after TLS and AUTH, with the confirmation link."""
        mails = wait_until(
            f"{label}: the confirmation arrives through the relay", lambda: self.capture.to(address), server.context
        )
        check(len(mails) == 1, f"... once ({len(mails)})")
        sender, _, message = mails[0]
        received = " ".join(str(value) for value in message.get_all("Received", []))
        check("with ESMTPSA" in received, "... Postfix took it over TLS after a SASL login (ESMTPSA)")
        check("using TLS" in received, "... and its Received line names the TLS session")
        check(FROM in str(message["From"]), "... from the list's address")
        body = message.get_body(preferencelist=("plain", "html"))
        text = body.get_content() if body is not None else ""
        check(f"http://127.0.0.1:{server.http_port}/confirm?token=" in text, "... with its confirmation link")
        check(sender != "", "... with an envelope sender")

    def one_alert(self, server: Signupd, stage: str, code: int | None, since: int) -> dict:
        """Exactly one relay_refused alert, though signupd tried again (three more connections at
        the relay since log line `since`)."""
        wait_until(
            "signupd tried the relay again (four connections since the signup)",
            lambda: self.relay.submission_connects(since) >= 4,
            server.context,
        )
        alerts = self.alerts.relay_refused()
        check(len(alerts) == 1, f"alert_webhook got exactly one relay_refused for the episode ({len(alerts)})")
        alert = alerts[0]
        check(alert.get("stage") == stage, f"... stage {stage!r} ({alert.get('stage')!r})")
        check(alert.get("smtp_code") == code, f"... smtp_code {code} ({alert.get('smtp_code')!r})")
        error_seen(str(alert.get("detail", "")))
        return alert

    # --- the cases ---

    def relay_itself(self) -> None:
        say("---- 0. the relay itself, with smtplib")
        context = ssl.create_default_context(cafile=str(self.certificates.path("ca")))
        address = self.address()

        def submit(smtp: smtplib.SMTP, sender: str) -> None:
            smtp.login(LOGIN, PASSWORD)
            smtp.sendmail(sender, [address], f"From: {sender}\r\nTo: {address}\r\nSubject: relay check\r\n\r\nhi\r\n")

        with smtplib.SMTP("127.0.0.1", self.relay.port, timeout=10) as smtp:
            smtp.ehlo()
            check("auth" not in smtp.esmtp_features, "before STARTTLS the relay offers no AUTH")
            code, _ = smtp.mail(FROM)
            check(code == 530, f"before STARTTLS it takes no mail ({code})")
            smtp.rset()
            smtp.starttls(context=context)
            smtp.ehlo()
            check("PLAIN" in smtp.esmtp_features.get("auth", ""), "STARTTLS verified with the private CA; AUTH PLAIN")
            submit(smtp, FROM)
        wait_until("... a mail from the login's own address arrives", lambda: self.capture.to(address), self.context)
        with smtplib.SMTP_SSL("127.0.0.1", self.relay.tls_port, timeout=10, context=context) as smtp:
            submit(smtp, FROM)
        wait_until("implicit TLS the same", lambda: len(self.capture.to(address)) == 2, self.context)
        with smtplib.SMTP("127.0.0.1", self.relay.port, timeout=10) as smtp:
            smtp.starttls(context=context)
            try:
                smtp.login(LOGIN, WRONG_PASSWORD)
                refused = 0
            except smtplib.SMTPAuthenticationError as error:
                refused = error.smtp_code
            check(refused == 535, f"a wrong password is refused ({refused})")
        self.relay.set_password(WRONG_PASSWORD)
        with smtplib.SMTP("127.0.0.1", self.relay.port, timeout=10) as smtp:
            smtp.starttls(context=context)
            try:
                smtp.login(LOGIN, PASSWORD)
                refused = 0
            except smtplib.SMTPAuthenticationError as error:
                refused = error.smtp_code
            check(refused == 535, f"saslpasswd2 changes the password at once, no reload: the old one is refused ({refused})")
        self.relay.set_password(PASSWORD)
        with smtplib.SMTP("127.0.0.1", self.relay.port, timeout=10) as smtp:
            smtp.starttls(context=context)
            code, _ = smtp.login(LOGIN, PASSWORD)
            check(code == 235, f"... and set back, it is taken again ({code})")
        with smtplib.SMTP("127.0.0.1", self.relay.port, timeout=10) as smtp:
            smtp.starttls(context=context)
            smtp.login(LOGIN, PASSWORD)
            code, reply = smtp.mail(FOREIGN_FROM)
            check(
                code == 553 and reply.startswith(b"5.7.1"),
                f"a sender the login does not own is refused at MAIL FROM ({code} {reply[:5].decode()})",
            )

    def trusted_by_ca_file(self) -> None:
        say("---- 1. the private CA by mail.smtp.ca_file, STARTTLS")
        server = self.signupd("ca-file", smtp={"ca_file": str(self.certificates.path("ca"))})
        address = self.address()
        server.signup(address)
        self.arrived(address, server, "ca_file")
        before = len(self.capture.to(address))
        status, relay = server.doctor()
        check(status == 0, f"signupd doctor: no problem (exit {status})")
        statuses = {c["name"].split(" (")[0]: c["status"] for c in relay}
        check(statuses.get(f"127.0.0.1:{self.relay.port}") == "ok", f"doctor: the relay answered: {relay}")
        certificate = next((c for c in relay if c["name"] == "certificate"), {})
        check(
            certificate.get("status") == "ok" and self.certificates.fingerprint("relay") in certificate.get("saw", "")
            and "expires in" in certificate.get("saw", ""),
            f"doctor: the certificate's fingerprint and days left: {certificate}",
        )
        check(statuses.get("login") == "ok", "doctor: AUTH accepted")
        check(len(self.capture.to(address)) == before, "doctor sent no mail")
        server.stop()

    def trusted_by_system_store(self) -> None:
        say("---- 2. the private CA through the system store (SSL_CERT_FILE); implicit TLS")
        server = self.signupd("system-store", env={"SSL_CERT_FILE": str(self.certificates.path("ca"))})
        address = self.address()
        server.signup(address)
        self.arrived(address, server, "SSL_CERT_FILE, no ca_file")
        server.stop()
        server = self.signupd(
            "implicit-tls", port=self.relay.tls_port, security="tls", smtp={"ca_file": str(self.certificates.path("ca"))}
        )
        address = self.address()
        server.signup(address)
        self.arrived(address, server, f'security = "tls" on port {self.relay.tls_port}')
        server.stop()

    def guide_fingerprint(self, port: int, implicit: bool) -> str:
        """The operations guide's command for reading the relay's fingerprint (its line for 587
        with `-starttls smtp`, or for 465 without), run as written against the test's relay."""
        relay_port = "465" if implicit else "587"
        written = [
            line.strip()
            for line in GUIDE.read_text(encoding="utf-8").splitlines()
            if line.strip().startswith(f"openssl s_client -connect {GUIDE_RELAY}:{relay_port} ")
        ]
        if len(written) != 1:
            raise RelayFailed(
                f"docs/operations.md has {len(written)} lines `openssl s_client -connect {GUIDE_RELAY}:{relay_port} …`;"
                " the test runs exactly one"
            )
        command = written[0].replace(f"{GUIDE_RELAY}:{relay_port}", f"127.0.0.1:{port}")
        check(("-starttls smtp" in command) != implicit, f"the guide's command for {relay_port}: {written[0]}")
        result = subprocess.run(["bash", "-o", "pipefail", "-c", command], capture_output=True, text=True, timeout=60)
        printed = result.stdout.strip()
        check(
            result.returncode == 0 and printed.startswith("sha256 Fingerprint="),
            f"... run against the relay's port {port}, it prints {printed!r}",
        )
        return printed.split("=", 1)[1]

    def pinned(self) -> None:
        say("---- 3. a self-signed certificate, pinned")
        self.relay.use_certificate("self-signed")
        pin = self.guide_fingerprint(self.relay.port, implicit=False)
        check(pin == self.certificates.fingerprint("self-signed"), "... the self-signed certificate's fingerprint")
        check(
            self.guide_fingerprint(self.relay.tls_port, implicit=True) == pin,
            "... and the same on the implicit-TLS port",
        )
        server = self.signupd("pinned", smtp={"certificate_sha256": pin})
        address = self.address()
        server.signup(address)
        self.arrived(address, server, "certificate_sha256")
        server.stop()

    def wrong_pin(self) -> None:
        say("---- 5. a wrong pin")
        self.relay.use_certificate("self-signed")
        server = self.signupd("wrong-pin", smtp={"certificate_sha256": self.certificates.fingerprint("relay")})
        status, said = server.send_test_mail(self.address())
        check(status != 0, f"send-test-mail exits non-zero ({status})")
        error_seen(said)
        check("does not match mail.smtp.certificate_sha256" in said, "... the certificate does not match the pin")
        shown = self.certificates.fingerprint("self-signed")
        check(shown in said, "... and it names the fingerprint the relay showed")
        server.stop()

    def untrusted(self) -> None:
        say("---- 4. a certificate of a CA signupd does not trust")
        self.relay.use_certificate("untrusted")
        server = self.signupd("untrusted")
        since = len(self.relay.lines())
        address = self.address()
        server.signup(address)
        wait_until(
            "the relay_refused alert comes", lambda: self.alerts.relay_refused(), server.context
        )
        self.one_alert(server, "tls", None, since)
        check(server.pending_with_mail(address), "signupd lookup: the signup is pending, its confirmation queued")
        log = server.log_text()
        check(REFUSAL_LOG in log, f'the log says "{REFUSAL_LOG}"')
        check("the certificate's issuer is not trusted" in log, "... with why: the certificate's issuer is not trusted")
        check(not self.capture.to(address), "nothing arrived")
        status, said = server.send_test_mail(self.address())
        check(status != 0, f"send-test-mail exits non-zero ({status})")
        error_seen(said)
        check("issuer is not trusted" in said, '... "the certificate\'s issuer is not trusted"')
        check(self.certificates.fingerprint("untrusted") in said, "... with the certificate's SHA-256 fingerprint")
        check(server.pending_with_mail(address), "the signup is still pending")
        status, relay = server.doctor()
        problems = [c for c in relay if c["status"] == "problem"]
        check(status == 1, f"signupd doctor exits 1 ({status})")
        check(
            len(problems) == 1 and "issuer is not trusted" in problems[0]["saw"]
            and self.certificates.fingerprint("untrusted") in problems[0]["saw"],
            f"doctor: one relay problem, the untrusted certificate with its fingerprint: {problems}",
        )
        server.stop()

    def wrong_password(self) -> None:
        say("---- 6. a wrong password; then fixed at the relay")
        self.relay.use_certificate("relay")
        self.relay.set_password(WRONG_PASSWORD)
        server = self.signupd("wrong-password", smtp={"ca_file": str(self.certificates.path("ca"))})
        since = len(self.relay.lines())
        addresses = [self.address() for _ in range(4)]
        for address in addresses:
            server.signup(address)
        wait_until("the relay_refused alert comes", lambda: self.alerts.relay_refused(), server.context)
        self.one_alert(server, "auth", 535, since)
        log = server.log_text()
        check("refused the login (AUTH)" in log and "535" in log, 'the log says "refused the login (AUTH)" and 535')
        check(REFUSAL_LOG in log, f'... and "{REFUSAL_LOG}"')
        for number, address in enumerate(addresses, 1):
            check(server.pending_with_mail(address), f"signup {number} is pending, its confirmation queued")
        check(not any(self.capture.to(address) for address in addresses), "nothing arrived")
        status, relay = server.doctor()
        problems = [c for c in relay if c["status"] == "problem"]
        check(status == 1, f"signupd doctor exits 1 ({status})")
        check(
            len(problems) == 1 and "refused the login (AUTH)" in problems[0]["saw"] and "(auth)" in problems[0]["name"],
            f"doctor: one relay problem, the refused login: {problems}",
        )
        self.relay.set_password(PASSWORD)
        fixed = time.monotonic()
        wait_until(
            "the password fixed at the relay (saslpasswd2), every held confirmation arrives",
            lambda: all(self.capture.to(address) for address in addresses),
            server.context,
            timeout=DEADLINE * 2,
        )
        took = time.monotonic() - fixed
        say(f"relay: held mails delivered {took:.1f} s after the password was fixed")
        for address in addresses:
            self.arrived(address, server, "held, then sent")
        wait_until(f'the log says "{AGAIN_LOG}"', lambda: AGAIN_LOG in server.log_text(), server.context)
        check(server.log_text().count(AGAIN_LOG) == 1, "... once")
        check(len(self.alerts.relay_refused()) == 1, "no further alert")
        server.stop()

    def refused_sender(self) -> None:
        say("---- 7. a list address the login does not own")
        self.relay.use_certificate("relay")
        server = self.signupd(
            "refused-sender", sender=FOREIGN_FROM, smtp={"ca_file": str(self.certificates.path("ca"))}
        )
        since = len(self.relay.lines())
        address = self.address()
        server.signup(address)
        wait_until("the relay_refused alert comes", lambda: self.alerts.relay_refused(), server.context)
        self.one_alert(server, "mail_from", 553, since)
        log = server.log_text()
        check("refused the sender (MAIL FROM)" in log and "553" in log, 'the log says "refused the sender (MAIL FROM)", 553')
        check(server.pending_with_mail(address), "the signup is pending, its confirmation queued")
        check(not self.capture.to(address), "nothing arrived")
        server.stop()

    def closed_port(self) -> None:
        say("---- 8. a closed port")
        port = free_port()
        server = self.signupd("closed-port", port=port)
        status, said = server.send_test_mail(self.address())
        check(status != 0, f"send-test-mail exits non-zero ({status})")
        error_seen(said)
        check(f"connection refused by 127.0.0.1:{port}" in said, f'... "connection refused by 127.0.0.1:{port}"')
        server.stop()

    def refused_everyone_at_rcpt(self, label: str, server: Signupd, code: int, since: int) -> list[str]:
        """Signups while the relay refuses every recipient with `code`: they stay pending, and
        signupd keeps trying (the relay logs more refusals) with one relay_refused alert."""
        addresses = [self.address() for _ in range(3)]
        for address in addresses:
            server.signup(address)
        wait_until(f"{label}: the relay_refused alert comes", lambda: self.alerts.relay_refused(), server.context)
        wait_until(
            f"{label}: signupd tries the relay again (four refused recipients at the relay)",
            lambda: self.relay.rcpt_refusals(since) >= 4,
            server.context,
        )
        alerts = self.alerts.relay_refused()
        check(len(alerts) == 1, f"{label}: exactly one relay_refused alert ({len(alerts)})")
        check(alerts[0].get("stage") == "rcpt", f"... stage 'rcpt' ({alerts[0].get('stage')!r})")
        check(alerts[0].get("smtp_code") == code, f"... smtp_code {code} ({alerts[0].get('smtp_code')!r})")
        error_seen(str(alerts[0].get("detail", "")))
        for number, address in enumerate(addresses, 1):
            check(server.pending_with_mail(address), f"{label}: signup {number} is pending, its confirmation queued")
        check(not any(self.capture.to(address) for address in addresses), f"{label}: nothing arrived")
        return addresses

    def sender_refused_at_rcpt(self) -> None:
        say("---- 9. the sender-login refusal, reported at RCPT TO; then the sender allowed")
        self.relay.use_certificate("relay")
        self.relay.reconfigure(
            "smtpd_delay_reject = yes",
            "smtpd_sender_restrictions =",
            "smtpd_recipient_restrictions = reject_sender_login_mismatch, permit_sasl_authenticated, reject",
        )
        wait_until(
            "the relay refuses the login's foreign sender at RCPT TO now (553)",
            lambda: self.relay.rcpt_answer(FOREIGN_FROM, f"probe@{READERS}") == 553,
            self.relay.tail,
        )
        server = self.signupd(
            "sender-at-rcpt", sender=FOREIGN_FROM, smtp={"ca_file": str(self.certificates.path("ca"))}
        )
        since = len(self.relay.lines())
        addresses = self.refused_everyone_at_rcpt("sender at RCPT", server, 553, since)
        self.relay.reconfigure(f"smtpd_sender_login_maps = inline:{{ {FROM}={LOGIN}@{REALM}, {FOREIGN_FROM}={LOGIN}@{REALM} }}")
        wait_until(
            "the sender allowed at the relay, every held confirmation arrives",
            lambda: all(self.capture.to(address) for address in addresses),
            server.context,
            timeout=DEADLINE * 2,
        )
        check(all(len(self.capture.to(address)) == 1 for address in addresses), "... each once")
        check(len(self.alerts.relay_refused()) == 1, "no further alert")
        server.stop()
        self.relay.restore()

    def deferred_everyone(self) -> None:
        say("---- 10. a relay-wide defer at RCPT TO; then lifted")
        self.relay.use_certificate("relay")
        self.relay.reconfigure("smtpd_recipient_restrictions = defer")
        wait_until(
            "the relay defers every recipient now (450)",
            lambda: self.relay.rcpt_answer(FROM, f"probe@{READERS}") == 450,
            self.relay.tail,
        )
        server = self.signupd("defer", smtp={"ca_file": str(self.certificates.path("ca"))})
        since = len(self.relay.lines())
        addresses = self.refused_everyone_at_rcpt("defer", server, 450, since)
        self.relay.restore()
        wait_until(
            "the defer lifted, every held confirmation arrives",
            lambda: all(self.capture.to(address) for address in addresses),
            server.context,
            timeout=DEADLINE * 2,
        )
        for address in addresses:
            self.arrived(address, server, "deferred, then sent")
        check(len(self.alerts.relay_refused()) == 1, "no further alert")
        server.stop()

    def unknown_local_user(self) -> None:
        say("---- 11. Postfix's own unknown user, for one address")
        self.relay.use_certificate("relay")
        check(
            self.relay.rcpt_answer(FROM, f"nobody@{LOCAL_DOMAIN}") == 550,
            "the relay refuses an unknown user of its own domain (550, local_recipient_maps)",
        )
        server = self.signupd("unknown-user", smtp={"ca_file": str(self.certificates.path("ca"))})
        unknown = f"nobody@{LOCAL_DOMAIN}"
        addresses_used.append(unknown)
        server.signup(unknown)
        # The signup is taken from the intake a moment after it is answered: before that, no row
        # is there, which must not pass for one the settlement deleted.
        wait_until("the unknown user's signup is pending", lambda: server.lookup(unknown)["rows"], server.context)
        # Visitors keep coming: the relay taking the next recipient settles whose refusal it was
        # (with none queued, the refused mail waits with its own backoff).
        readers: list[str] = []

        def settled() -> bool:
            if not server.lookup(unknown)["rows"]:
                return True
            address = self.address()
            readers.append(address)
            server.signup(address)
            return False

        wait_until("the unknown user's pending signup is deleted", settled, server.context)
        for address in readers:
            wait_until("... a visitor's confirmation arrives", lambda a=address: self.capture.to(a), server.context)
        check(not self.alerts.relay_refused(), "no relay_refused alert: the relay took the others")
        suppressions = wait_until(
            "the address is suppressed (after the settlement)",
            lambda: server.lookup(unknown).get("suppressions"),
            server.context,
        )
        check(
            [(found.get("list"), found.get("reason")) for found in suppressions] == [("default", "bounced")],
            f"... as bounced, on the mail's list only ({suppressions})",
        )
        server.stop()

    def no_addresses_logged(self) -> None:
        for directory in sorted((self.base / "signupd").iterdir()):
            log = (directory / "signupd.log").read_text(errors="replace")
            check(
                not any(address in log for address in addresses_used), f"{directory.name}: signupd's log holds no address"
            )

    def run(self) -> None:
        self.certificates.make()
        check(True, "openssl made a CA and the relay's certificate, a self-signed one, another CA's")
        (self.base / "signupd").mkdir()
        self.relay.configure()
        self.relay.start()
        self.relay_itself()
        self.trusted_by_ca_file()
        self.trusted_by_system_store()
        self.pinned()
        self.untrusted()
        self.wrong_pin()
        self.wrong_password()
        self.refused_sender()
        self.closed_port()
        self.sender_refused_at_rcpt()
        self.deferred_everyone()
        self.unknown_local_user()
        self.no_addresses_logged()

    def stop(self) -> None:
        processes.stop_all()
        self.relay.stop()
        self.capture.stop()
        self.alerts.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--signupd", default=str(ROOT / "target" / "debug" / "signupd"))
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    parser.add_argument("--relay-only", action="store_true", help="only step 0: the relay, with smtplib")
    args = parser.parse_args()
    binary = str(Path(args.signupd).resolve())
    tests: list[Test] = []

    def run(base: Path) -> None:
        version = subprocess.run(["postconf", "-d", "-h", "mail_version"], capture_output=True, text=True).stdout.strip()
        say(f"Postfix {version}; signupd {binary}")
        test = Test(binary, base)
        tests.append(test)
        try:
            if args.relay_only:
                test.certificates.make()
                test.relay.configure()
                test.relay.start()
                test.relay_itself()
                for name in ("self-signed", "untrusted", "relay"):
                    test.relay.use_certificate(name)
            else:
                test.run()
        finally:
            test.stop()

    # Postfix's daemons read the sasldb and write the queue under the temporary directory.
    return run_as_root(checks, "it starts a Postfix instance", "signupd-relay-", run, keep=args.keep,
                       context=lambda: tests[0].context() if tests else "")


if __name__ == "__main__":
    sys.exit(main())
