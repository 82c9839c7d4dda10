#!/usr/bin/env python3
"""Every row of the deployment table (docs/install.md, "Deployments: who the visitor is") with
a real nginx in front of the real signupd: visitors are counted apart, and none escapes their
budget by writing the header a proxy would.

Run by .ci/nginx (which installs nginx and builds signupd first); by hand:

    python3 tests/nginx/matrix.py --signupd target/debug/signupd

For each row it starts signupd (a fresh data directory, mail to files, a list limited to one
signup per client per 10 minutes) with that row's `trusted_proxies` and `client_ip_header`, and
for the rows with a proxy an nginx whose `location` is the one the table documents. Then:

- visitor A signs up (303), visitor B signs up (303): two budgets;
- A and B each sign up again (429): each budget is one;
- A, writing a made-up address into every header a proxy would set (the left of
  X-Forwarded-For, X-Real-IP, and CF-Connecting-IP where nothing in front of signupd
  overwrites it), is still A (429).

Everything listens on and talks to 127.0.0.1 (other loopback addresses stand in for visitors'
own addresses). Two things are simulated, since a test cannot own Cloudflare's addresses:

- Cloudflare's edge: the test client sends what nginx would receive from Cloudflare
  (CF-Connecting-IP, X-Forwarded-For with the visitor appended), and
- the address nginx sees the request from: nginx's realip module takes it from the test-only
  header X-Test-Peer (a Cloudflare edge address, or the visitor's own), so `$remote_addr`, and
  what `$proxy_add_x_forwarded_for` appends, is what it would be in production.

The row "Cloudflare's proxy straight to signupd" needs a peer in Cloudflare's ranges to name a
visitor; from loopback it checks the other half: a peer outside them cannot name anyone.

The shipped packaging/signupd.toml is run too: its `trusted_proxies` and `client_ip_header` lines
are read from the file, so a change there that breaks the tunnel fails here.

No address from a log is printed; the test's own made-up addresses appear in its messages.
"""

import argparse
import http.client
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from harness import Checks, Processes, free_port  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "packaging" / "signupd.toml"
LIST = "news"
EDGE = "173.245.48.1"  # in Cloudflare's published ranges
VISITOR_A = "198.51.100.7"
VISITOR_B = "203.0.113.9"
FORGED = "192.0.2.1"
# The loopback addresses the two visitors connect from where nothing in front names them.
SOURCE = {VISITOR_A: "127.0.0.2", VISITOR_B: "127.0.0.3"}


class MatrixFailed(Exception):
    pass


checks = Checks("nginx matrix", MatrixFailed)
say, check = checks.say, checks.check
processes = Processes()
stop, stop_all = processes.stop, processes.stop_all


def spawn(args: list[str], log: Path) -> subprocess.Popen:
    return processes.spawn(args, log, append=True)


# --- the rows ---------------------------------------------------------------------------------

# What nginx runs in every row, besides the row's own lines: the realip shim that stands in for
# the TCP peer (module docstring). It is not part of any documented configuration.
PEER_SHIM = """
        set_real_ip_from 127.0.0.1;
        real_ip_header X-Test-Peer;
"""


@dataclass
class Row:
    name: str
    trusted_proxies: str
    client_ip_header: str
    # The `location /` lines of the documented nginx configuration, or None: no proxy in front.
    nginx: str | None
    # Whether Cloudflare is in front (the client sends what Cloudflare would).
    cloudflare: bool
    # Whether two visitors can be told apart from loopback in this row (see the docstring).
    names_visitors: bool = True
    # Whether a visitor who bypasses Cloudflare and reaches nginx directly is counted by their own
    # address whatever they claim (true where nginx appends to X-Forwarded-For).
    bypass_is_harmless: bool = False
    notes: list[str] = field(default_factory=list)


def shipped_lines() -> tuple[str, str, str]:
    """`listen`, `trusted_proxies` and `client_ip_header` of packaging/signupd.toml's [server]."""
    values: dict[str, str] = {}
    section = None
    for line in SHIPPED.read_text().splitlines():
        header = re.fullmatch(r"\s*\[+([^\]]+)\]+\s*", line)
        if header:
            section = header.group(1).strip()
            continue
        match = re.fullmatch(r"(listen|trusted_proxies|client_ip_header)\s*=\s*(.+?)\s*", line)
        if section == "server" and match:
            values[match.group(1)] = match.group(2)
    missing = {"listen", "trusted_proxies", "client_ip_header"} - values.keys()
    if missing:
        raise MatrixFailed(f"packaging/signupd.toml has no {sorted(missing)} in [server]: update the matrix")
    return values["listen"], values["trusted_proxies"], values["client_ip_header"]


def rows() -> list[Row]:
    listen, shipped_trusted, shipped_header = shipped_lines()
    check(
        listen.strip('"').startswith("127.0.0.1:"),
        f"packaging/signupd.toml listens on loopback ({listen}), as a tunnel or local proxy needs",
    )
    pass_through = "        proxy_pass http://127.0.0.1:{upstream};\n"
    return [
        Row("Cloudflare Tunnel (cloudflared on this machine)", '["127.0.0.1", "::1"]', '"CF-Connecting-IP"', None, True),
        Row(
            "the shipped packaging/signupd.toml behind a Cloudflare Tunnel",
            shipped_trusted,
            shipped_header,
            None,
            True,
        ),
        Row(
            "nginx behind Cloudflare, CF-Connecting-IP passed on (nginx's default)",
            '["127.0.0.1", "::1"]',
            '"CF-Connecting-IP"',
            pass_through,
            True,
        ),
        Row(
            "the shipped packaging/signupd.toml behind nginx behind Cloudflare",
            shipped_trusted,
            shipped_header,
            pass_through,
            True,
        ),
        Row(
            "nginx behind Cloudflare, X-Forwarded-For appended",
            '["127.0.0.1", "::1", "cloudflare"]',
            '"X-Forwarded-For"',
            pass_through + "        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;\n",
            True,
            bypass_is_harmless=True,
        ),
        Row(
            "nginx without Cloudflare, X-Real-IP",
            '["127.0.0.1", "::1"]',
            '"X-Real-IP"',
            pass_through + "        proxy_set_header X-Real-IP $remote_addr;\n",
            False,
        ),
        Row(
            "nginx without Cloudflare, X-Forwarded-For appended",
            '["127.0.0.1", "::1"]',
            '"X-Forwarded-For"',
            pass_through + "        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;\n",
            False,
        ),
        Row(
            "Cloudflare's proxy straight to signupd",
            '["cloudflare"]',
            '"CF-Connecting-IP"',
            None,
            True,
            names_visitors=False,
            notes=["a peer outside Cloudflare's ranges names nobody; a Cloudflare peer is covered by the unit tests"],
        ),
        Row("no proxy at all", "[]", '"CF-Connecting-IP"', None, False),
    ]


# --- signupd and nginx ------------------------------------------------------------------------


def signupd_config(path: Path, data_dir: Path, port: int, row: Row) -> None:
    (data_dir / "mail").mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"""[server]
listen = "127.0.0.1:{port}"
public_url = "http://127.0.0.1:{port}"
trusted_proxies = {row.trusted_proxies}
client_ip_header = {row.client_ip_header}
[storage]
data_dir = "{data_dir}"
[mail]
transport = "file"
file_dir = "{data_dir}/mail"
[signup]
rate_limits = [{{ window = "10m", max = 1 }}]
[[lists]]
id = "{LIST}"
"""
    )


def nginx_config(path: Path, prefix: Path, port: int, upstream: int, location: str) -> None:
    # `user` only applies when started as root; the workers then need nothing but the sockets.
    user = "user nobody nogroup;\n" if os.geteuid() == 0 else ""
    path.write_text(
        f"""{user}worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 64; }}
http {{
    access_log off;
    client_body_temp_path {prefix}/client_body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    server {{
        listen 127.0.0.1:{port};
{PEER_SHIM}
        location / {{
{location.format(upstream=upstream)}        }}
    }}
}}
"""
    )


def http_status(port: int, method: str, path: str, body: bytes | None = None, headers=None, source=None) -> int:
    source_address = (source, 0) if source else None
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=source_address)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def wait_ready(port: int, process: subprocess.Popen, log: Path, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise MatrixFailed(f"{what} exited ({process.returncode}) during start-up:\n{log.read_text()[-2000:]}")
        try:
            if http_status(port, "GET", "/readyz") == 200:
                return
        except OSError:
            pass
        time.sleep(0.05)
    raise MatrixFailed(f"{what} was not ready within {timeout:.0f} s:\n{log.read_text()[-2000:]}")


# --- one row ----------------------------------------------------------------------------------


class Client:
    """Sends signups as a visitor would reach this row's front door."""

    def __init__(self, row: Row, port: int):
        self.row = row
        self.port = port
        self.sent = 0

    def headers(self, visitor: str, forged: str | None) -> tuple[dict, str | None]:
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        left = f"{forged}, " if forged else ""
        if self.row.cloudflare:
            # What Cloudflare sends on: its own CF-Connecting-IP (a visitor cannot set it), and the
            # visitor's X-Forwarded-For with the visitor's address appended.
            headers["CF-Connecting-IP"] = visitor
            headers["X-Forwarded-For"] = f"{left}{visitor}"
            peer = EDGE
        else:
            # The visitor talks to the front door itself and writes whatever it likes.
            if forged:
                headers["CF-Connecting-IP"] = forged
                headers["X-Forwarded-For"] = forged
                headers["X-Real-IP"] = forged
            peer = visitor
        if self.row.nginx is not None:
            headers["X-Test-Peer"] = peer
            return headers, None
        # Straight to signupd: a Cloudflare edge cannot be a loopback source; a visitor's own
        # address stands in as a loopback source address.
        return headers, None if self.row.cloudflare else SOURCE[visitor]

    def signup(self, visitor: str, forged: str | None = None) -> int:
        headers, source = self.headers(visitor, forged)
        return self.post(headers, source)

    def bypassing_cloudflare(self, own: str, posing_as: str) -> int:
        """A visitor at `own` who reaches nginx directly, with the headers Cloudflare would have
        sent for `posing_as`."""
        headers = {
            "Content-Type": "application/x-www-form-urlencoded",
            "CF-Connecting-IP": posing_as,
            "X-Forwarded-For": f"{posing_as}, {EDGE}",
            "X-Test-Peer": own,
        }
        return self.post(headers, None)

    def post(self, headers: dict, source: str | None) -> int:
        self.sent += 1
        body = urllib.parse.urlencode(
            {"email": f"matrix-{self.sent}@example.com", "consent": "yes", "list": LIST}
        ).encode()
        return http_status(self.port, "POST", "/api/signup", body, headers, source)


def run_row(row: Row, signupd: str, nginx: str, work: Path) -> None:
    say(f"---- {row.name}")
    for note in row.notes:
        say(f"     ({note})")
    upstream = free_port()
    data_dir = work / "data"
    config = work / "signupd.toml"
    signupd_config(config, data_dir, upstream, row)
    server_log = work / "signupd.log"
    server = spawn([signupd, "serve", "--config", str(config)], server_log)
    proxy = None
    try:
        wait_ready(upstream, server, server_log, "signupd")
        front = upstream
        if row.nginx is not None:
            front = free_port()
            prefix = work / "nginx"
            prefix.mkdir()
            nginx_conf = prefix / "nginx.conf"
            nginx_config(nginx_conf, prefix, front, upstream, row.nginx)
            nginx_log = work / "nginx.log"
            proxy = spawn(
                [nginx, "-p", str(prefix), "-c", str(nginx_conf), "-e", str(prefix / "error.log"), "-g", "daemon off;"],
                nginx_log,
            )
            wait_ready(front, proxy, nginx_log, "nginx")
        client = Client(row, front)
        a, b = VISITOR_A, VISITOR_B
        if row.names_visitors:
            check(client.signup(a) == 303, f"{row.name}: visitor A's first signup is accepted")
            check(client.signup(b) == 303, f"{row.name}: visitor B's first signup is accepted (a budget of its own)")
            check(client.signup(a) == 429, f"{row.name}: visitor A's second signup is rate limited")
            check(client.signup(b) == 429, f"{row.name}: visitor B's second signup is rate limited")
            status = client.signup(a, forged=FORGED)
            check(status == 429, f"{row.name}: visitor A writing {FORGED} into the headers is still A ({status})")
            if row.bypass_is_harmless:
                status = client.bypassing_cloudflare(FORGED, posing_as=a)
                check(status == 303, f"{row.name}: {FORGED} reaching nginx directly, posing as A, is counted as itself")
                status = client.bypassing_cloudflare(FORGED, posing_as=b)
                check(status == 429, f"{row.name}: ... and posing as B next does not buy another budget ({status})")
        else:
            check(client.signup(a) == 303, f"{row.name}: the first signup from a non-Cloudflare peer is accepted")
            status = client.signup(b)
            check(status == 429, f"{row.name}: a non-Cloudflare peer's CF-Connecting-IP names nobody ({status})")
            status = client.signup(b, forged=FORGED)
            check(status == 429, f"{row.name}: nor does a forged X-Forwarded-For ({status})")
        check(server.poll() is None, f"{row.name}: signupd is still running")
    finally:
        if proxy is not None:
            stop(proxy)
        stop(server)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--signupd", default=str(ROOT / "target" / "debug" / "signupd"))
    parser.add_argument("--nginx", default=shutil.which("nginx") or "/usr/sbin/nginx")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directories")
    args = parser.parse_args()
    version = subprocess.run([args.nginx, "-v"], capture_output=True, text=True).stderr.strip()
    say(f"{version}; signupd {args.signupd}")
    base = Path(tempfile.mkdtemp(prefix="signupd-nginx-"))
    os.chmod(base, 0o755)  # nginx's workers run as nobody
    try:
        for number, row in enumerate(rows()):
            work = base / f"row{number}"
            work.mkdir()
            run_row(row, args.signupd, args.nginx, work)
    except MatrixFailed as failure:
        say(f"FAILED: {failure}")
        say(f"logs kept in {base}")
        stop_all()
        return 1
    finally:
        stop_all()
    if not args.keep:
        shutil.rmtree(base, ignore_errors=True)
    say(f"all {checks.passed} checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
