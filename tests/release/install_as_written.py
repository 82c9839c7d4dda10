#!/usr/bin/env python3
"""docs/install.md's "Install from the tarball", run as written, against the release tarball.

    python3 tests/release/install_as_written.py [DIST]

DIST (default dist/) holds the files tests/release/check.sh leaves there: SHA256SUMS and the
tarballs it names; the x86_64 one is installed (with several, only it is copied beside
SHA256SUMS, as an operator downloads one). Run from anywhere; needs no root and changes nothing
outside a temporary directory, which is removed at the end (CI: .ci/run, right after the
"release files" stage).

What it does, in order:

1. Reads the section's blocks with tests/package/guide.py (the markers the package test reads):
   every block marked <!-- ci: run --> is run, in order, in ONE bash session (`set -euo
   pipefail`), as an operator pastes them into one terminal, so the `cd` into the unpacked
   directory carries over. What the operator types (<!-- ci: run, input: smtp-password -->) is
   that block's standard input. The guide's tarball name is replaced by the one built here.
2. The scratch root. Every absolute path the blocks name under /etc, /usr, /var, /lib, /run,
   /opt or /srv is rewritten to the same path under SCRATCH/root (which starts with what every
   Debian system has: /etc/systemd/system, /usr/bin, /usr/share/man/man8, /var/lib, ...). The
   rewrite is textual and happens before anything runs; a block naming an absolute path anywhere
   else (except /dev) fails the test rather than touching this machine, so the guide cannot
   write outside the scratch root even when the test runs as root. The guide's commands are
   never edited and show no variable: the rewrite is the test's business.
3. Stand-ins, first on PATH, for what needs root or systemd as PID 1, each checking what the
   guide asked for:
   - `sudo` runs its command as the user running the test (any option is refused: the guide
     uses none); an owner or group `signupd` in `install -o/-g` or `chown` becomes that user,
     who plays the system user;
   - `useradd` creates no account: it checks the arguments (a system user named as the unit,
     with its own group, no home directory made, the data directory as home, a shell that
     refuses logins) and records the user in SCRATCH/root/etc/passwd.
   The edit (the block marked show that runs `sudoedit`) is made by this script at that point:
   the values marked FILL IN, for a test relay on 127.0.0.1 (tests/package/smtp_catcher.py,
   which accepts mail only after a login with the password the guide wrote), and the scratch
   root's data directory and a free port. The start (`systemctl`, needs systemd as PID 1) is
   not run: see 5.
4. Checks the result: each file where the guide says, with its mode, the same bytes as in the
   tarball; the credentials directory and every directory the unit's LoadCredential= names,
   0700; the secrets 0600; `systemd-analyze verify --root` on the installed unit (its
   ExecStart= binary must be there).
5. Starts signupd as the unit describes it (read from the installed unit, paths rewritten as
   above): LoadCredential= copies each file, or each file of a directory as <id>_<file name>,
   into a private credentials directory (a missing source fails, as it fails systemd's start);
   Environment=, WorkingDirectory= and ExecStart=. Waits for /readyz (a deadline, no fixed
   sleep), posts one signup as a JSON client, expects 202 {"ok":true,"next":"confirm_email"},
   waits for the confirmation mail at the test relay, finds the address pending with
   `sudo signupd lookup --config SCRATCH/root/etc/signupd/signupd.toml` (the operator's command,
   reading the credentials beside the configuration), and stops signupd with SIGTERM (exit 0).

Tools: bash, tar, gzip, sha256sum, install (coreutils) and systemd-analyze; each is checked
first. Python 3 standard library only.
"""

import importlib.util
import json
import os
import re
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from checks import Checks

REPO = Path(__file__).resolve().parents[2]
GUIDE = REPO / "docs/install.md"
SECTION = "release-files"
# The tarball the guide names: Cargo.toml's version, for the usual VPS.
GUIDE_TARGET = "x86_64-unknown-linux-gnu"
# Top directories the scratch root takes over; /dev stays (/dev/null, /dev/urandom).
REWRITTEN = ("etc", "usr", "var", "lib", "run", "opt", "srv")
KEPT = ("dev",)
# What the operator types: the SMTP password, then Enter (Ctrl-D is the end of the input).
SMTP_USER = "news@newsletter-operator.net"
SMTP_PASSWORD = "smtp password of the tarball test"
INPUTS = {"smtp-password": SMTP_PASSWORD + "\n"}
SUBSCRIBER = "reader@newsletter-operator.net"
TOOLS = {
    "bash": "apt-get install bash",
    "tar": "apt-get install tar",
    "gzip": "apt-get install gzip",
    "sha256sum": "apt-get install coreutils",
    "install": "apt-get install coreutils",
    "systemd-analyze": "apt-get install systemd",
}

check = Checks("install-as-written")
failures = check.failures


def fatal(message):
    print(f"install-as-written: FAIL {message}", file=sys.stderr)
    sys.exit(1)


def load_guide_reader():
    spec = importlib.util.spec_from_file_location("guide", REPO / "tests/package/guide.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Rewriter:
    """Absolute paths of the guide -> the same paths under the scratch root."""

    PATH = re.compile(r"(?<![\w.~$/:-])/([A-Za-z_][\w.-]*)")

    def __init__(self, root):
        if not re.fullmatch(r"/[A-Za-z0-9/._-]+", root):
            fatal(f"the scratch root {root!r} holds characters a shell would read: set TMPDIR to a plain path")
        self.root = root

    def __call__(self, text, where):
        problems = []

        def move(m):
            top = m.group(1)
            if top in REWRITTEN:
                return self.root + m.group(0)
            if top not in KEPT:
                problems.append(f"{where}: the absolute path /{top}… is outside what the scratch root takes over")
            return m.group(0)

        return self.PATH.sub(move, text), problems


def shims(directory, root, player):
    """The stand-ins for sudo and useradd (see the module's doc)."""
    directory.mkdir()
    sudo = f"""#!/usr/bin/env bash
# Stand-in for sudo (tests/release/install_as_written.py): runs the command as this user, who
# plays root in the scratch root; the system user signupd is played by this user too.
set -euo pipefail
if [[ $# -eq 0 || $1 == -* ]]; then echo "sudo stand-in: the guide passes sudo no option: $*" >&2; exit 2; fi
args=()
for arg in "$@"; do
    case "$arg" in
        signupd) [[ -f {root}/etc/passwd ]] && grep -q '^signupd:' {root}/etc/passwd && [[ $1 == install || $1 == chown ]] && arg={player} ;;
        signupd:signupd) [[ $1 == chown ]] && grep -q '^signupd:' {root}/etc/passwd && arg={player}:{player} ;;
    esac
    args+=("$arg")
done
exec "${{args[@]}}"
"""
    useradd = f"""#!/usr/bin/env python3
# Stand-in for useradd (tests/release/install_as_written.py): checks what the guide asks for
# and records the user in the scratch root's /etc/passwd; no account is made on this machine.
import sys
args = sys.argv[1:]
root = {root!r}
problems = []
def value(flag):
    if flag not in args or args.index(flag) + 1 >= len(args):
        problems.append("no " + flag)
        return ""
    return args[args.index(flag) + 1]
for flag in ("--system", "--user-group", "--no-create-home"):
    if flag not in args:
        problems.append("no " + flag)
home, shell = value("--home-dir"), value("--shell")
if home != root + "/var/lib/signupd":
    problems.append("--home-dir is " + home.replace(root, "") + ", not the data directory /var/lib/signupd")
if shell.replace(root, "") not in ("/usr/sbin/nologin", "/bin/false"):
    problems.append("--shell " + shell.replace(root, "") + " lets the user log in")
name = args[-1] if args else ""
if name != "signupd":
    problems.append("the user is " + repr(name) + ", not signupd, the unit's name (DynamicUser= takes it)")
if problems:
    print("useradd stand-in: " + "; ".join(problems), file=sys.stderr)
    sys.exit(2)
with open(root + "/etc/passwd", "a") as f:
    f.write("signupd:x:999:999::/var/lib/signupd:/usr/sbin/nologin\\n")
print("useradd stand-in: system user signupd recorded (" + " ".join(a.replace(root, "") for a in args) + ")")
"""
    for name, text in (("sudo", sudo), ("useradd", useradd)):
        path = directory / name
        path.write_text(text)
        path.chmod(0o755)


def fill(config, root, smtp_port, http_port):
    """The one edit, as the operator makes it in sudoedit: each shipped line -> the test's."""
    pairs = [
        ('public_url = "https://signup.example.com"', 'public_url = "https://signup.newsletter-operator.net"'),
        ('listen = "127.0.0.1:8080"', f'listen = "127.0.0.1:{http_port}"'),
        ('data_dir = "/var/lib/signupd"', f'data_dir = "{root}/var/lib/signupd"'),
        ('host = "smtp.example.com"', 'host = "127.0.0.1"'),
        ("port = 587", f"port = {smtp_port}"),
        ('security = "starttls"', 'security = "none"'),
        ('username = "newsletter@example.com"', f'username = "{SMTP_USER}"'),
        ('from = "Newsletter <newsletter@example.com>"', f'from = "Newsletter <{SMTP_USER}>"'),
    ]
    lines = config.read_text().split("\n")
    for old, new in pairs:
        hits = [i for i, line in enumerate(lines) if line == old]
        if len(hits) != 1:
            fatal(f"the edit: the shipped configuration has {len(hits)} lines {old!r}, not one (update the test's edit)")
        lines[hits[0]] = new
    config.write_text("\n".join(lines))


def mode(path):
    return stat.S_IMODE(path.stat().st_mode)


def free_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def unit_directives(text):
    found = {}
    for line in text.splitlines():
        m = re.fullmatch(r"([A-Za-z]+)=(.*)", line.strip())
        if m:
            found.setdefault(m.group(1), []).append(m.group(2))
    return found


def wait_until(deadline_s, probe, alive=lambda: True):
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        result = probe()
        if result:
            return result
        if not alive():
            return None
        time.sleep(0.1)
    return None


def main(argv):
    dist = Path(argv[0]).resolve() if argv else REPO / "dist"
    for tool, line in TOOLS.items():
        if not shutil.which(tool):
            fatal(f"{tool} is not installed: {line}")

    sums = dist / "SHA256SUMS"
    if not sums.is_file():
        fatal(f"no {sums}: build the release files first (BUILD=0 bash tests/release/check.sh)")
    names = [line.split()[-1].lstrip("*") for line in sums.read_text().splitlines() if line.strip()]
    # The guide's machine is x86_64: with several targets' tarballs, that one is downloaded beside
    # SHA256SUMS (which `sha256sum -c --ignore-missing` then checks alone), as an operator would.
    if len(names) > 1:
        names = [n for n in names if n.endswith(f"-{GUIDE_TARGET}.tar.gz")]
    if len(names) != 1:
        fatal(f"{sums} names no single tarball for {GUIDE_TARGET}")
    tarball = dist / names[0]
    name = names[0].removesuffix(".tar.gz")
    version = re.search(r'^version = "(.*)"$', (REPO / "Cargo.toml").read_text(), re.M).group(1)
    guide_name = f"signupd-{version}-{GUIDE_TARGET}"

    scratch = Path(tempfile.mkdtemp(prefix="signupd-install-"))
    root = scratch / "root"
    server = catcher = None
    try:
        rewrite = Rewriter(str(root))
        for d in ("etc/systemd/system", "usr/bin", "usr/sbin", "usr/share/man/man8", "usr/share/doc", "var/lib", "run"):
            (root / d).mkdir(parents=True)
        download = scratch / "download"
        download.mkdir()
        shutil.copy(tarball, download)
        shutil.copy(sums, download)
        player = subprocess.run(["id", "-un"], capture_output=True, text=True, check=True).stdout.strip()
        shims(scratch / "shims", str(root), player)

        # The test relay, and the port signupd will listen on.
        mailbox = scratch / "mailbox"
        port_file = scratch / "smtp.port"
        catcher_log = open(scratch / "smtp.log", "w")
        catcher = subprocess.Popen(
            [sys.executable, str(REPO / "tests/package/smtp_catcher.py"), "--dir", str(mailbox),
             "--port-file", str(port_file), "--user", SMTP_USER, "--password", SMTP_PASSWORD],
            stdout=catcher_log, stderr=subprocess.STDOUT, start_new_session=True,
        )
        if not wait_until(30, port_file.is_file, lambda: catcher.poll() is None):
            fatal(f"the test relay did not start: {(scratch / 'smtp.log').read_text()}")
        smtp_port = int(port_file.read_text())
        http_port = free_port()

        # 1-3: the section's blocks, in one bash session, with the edit where the guide shows it.
        reader = load_guide_reader()
        text = GUIDE.read_text()
        try:
            chosen = reader.select(str(GUIDE), SECTION, reader.blocks(str(GUIDE), text), text)
        except reader.Problem as problem:
            fatal(str(problem))
        problems = reader.check_markers(str(GUIDE), chosen)
        script = ["set -euo pipefail", "set -x", f"cd {download}"]
        ran, shown, substituted = 0, [], 0
        blocks_dir = scratch / "blocks"
        blocks_dir.mkdir()
        for block in chosen:
            if block["marker"] is None:
                continue
            kind, argument = block["marker"]
            where = f"docs/install.md:{block['line']}"
            if kind == "show":
                if "sudoedit" in block["body"]:
                    script.append(f"{shlex.quote(sys.executable)} {shlex.quote(__file__)} --edit "
                                  f"{root}/etc/signupd/signupd.toml {smtp_port} {http_port}  # {where}: the edit")
                    shown.append(f"{where}: made by the test (the values marked FILL IN, for its relay)")
                else:
                    shown.append(f"{where}: not run ({argument})")
                continue
            if kind != "run":
                problems.append(f"{where}: <!-- ci: {kind} --> is not a kind this test runs")
                continue
            body = reader.commands(block)
            substituted += body.count(guide_name)
            body = body.replace(guide_name, name)
            body, moved = rewrite(body, where)
            problems += moved
            # config.example.toml is a file of the tarball, not a placeholder domain `*.example`.
            left = reader.PLACEHOLDER.search(body.replace("config.example.toml", ""))
            if left:
                problems.append(f"{where}: the block still holds the placeholder {left.group(0)!r}")
            path = blocks_dir / f"{ran + 1:02d}.sh"
            path.write_text(body)
            stdin = "/dev/null"
            if argument is not None:
                if argument not in INPUTS:
                    problems.append(f"{where}: the input {argument!r} is not one this test types")
                    continue
                (blocks_dir / f"{ran + 1:02d}.input").write_text(INPUTS[argument])
                stdin = blocks_dir / f"{ran + 1:02d}.input"
            script.append(f"echo '--- {where}' >&2")
            script.append(f"source {path} <{stdin}")
            ran += 1
        if substituted == 0:
            problems.append(f"no block names the tarball {guide_name}: the guide's name is not Cargo.toml's version's")
        if problems:
            for problem in problems:
                print(f"install-as-written: {problem}", file=sys.stderr)
            fatal("the guide's section cannot be run as written")
        for line in shown:
            print(f"install-as-written: {line}")

        env = {
            "PATH": f"{scratch / 'shims'}:{root / 'usr/sbin'}:{root / 'usr/bin'}:{os.environ['PATH']}",
            "HOME": str(scratch),
            "LANG": "C.UTF-8",
            "TERM": "dumb",
        }
        (scratch / "guide.sh").write_text("\n".join(script) + "\n")
        result = subprocess.run(["bash", str(scratch / "guide.sh")], env=env, cwd=scratch,
                                stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
        output = result.stdout + result.stderr
        print("\n".join("   | " + line for line in output.splitlines()[-60:]))
        if not check(f"the {ran} blocks of \"Install from the tarball\" run as written, in one shell", result.returncode == 0):
            fatal("a block failed (its output is above)")

        # 4: what the guide installed.
        unpacked = download / name
        expect_files = {
            "usr/bin/signupd": (0o755, unpacked / "signupd"),
            "usr/share/man/man8/signupd.8": (0o644, unpacked / "signupd.8"),
            "usr/share/doc/signupd/README.md": (0o644, unpacked / "README.md"),
            "usr/share/doc/signupd/install.md": (0o644, unpacked / "docs/install.md"),
            "usr/share/doc/signupd/examples/config.example.toml": (0o644, unpacked / "config.example.toml"),
            "etc/systemd/system/signupd.service": (0o644, unpacked / "signupd.service"),
        }
        for path, (want, source) in expect_files.items():
            target = root / path
            check(f"/{path} is installed, mode {want:04o}, as the tarball has it",
                  target.is_file() and mode(target) == want and target.read_bytes() == source.read_bytes(),
                  f"{oct(mode(target)) if target.exists() else 'missing'}")
        config = root / "etc/signupd/signupd.toml"
        check("/etc/signupd/signupd.toml is installed, mode 0644", config.is_file() and mode(config) == 0o644)
        unit_text = (root / "etc/systemd/system/signupd.service").read_text()
        directives = unit_directives(unit_text)
        credentials = root / "etc/signupd/credentials"
        check("/etc/signupd/credentials is a directory, mode 0700", credentials.is_dir() and mode(credentials) == 0o700)
        sources = []
        for entry in directives.get("LoadCredential", []):
            ident, _, source = entry.partition(":")
            moved, _ = rewrite(source, "the unit")
            sources.append((ident, Path(moved)))
            rel = source
            if not Path(moved).exists():
                check(f"LoadCredential={ident}: {rel} exists (systemd does not start the unit without it)", False, "missing")
            elif Path(moved).is_dir():
                check(f"LoadCredential={ident}: {rel} is a directory, mode 0700", mode(Path(moved)) == 0o700,
                      oct(mode(Path(moved))))
            else:
                check(f"LoadCredential={ident}: {rel} is a file, mode 0600",
                      Path(moved).is_file() and mode(Path(moved)) == 0o600,
                      "missing" if not Path(moved).exists() else oct(mode(Path(moved))))
        password = credentials / "smtp/password"
        check("smtp/password holds what the operator typed, mode 0600",
              password.is_file() and mode(password) == 0o600 and password.read_text() == INPUTS["smtp-password"])
        data = root / "var/lib/signupd"
        passwd = root / "etc/passwd"
        check("the system user signupd was asked for (useradd stand-in)",
              passwd.is_file() and "signupd:" in passwd.read_text())
        check(f"/var/lib/signupd is a directory, mode 0700, of the system user (played by {player})",
              data.is_dir() and mode(data) == 0o700 and data.stat().st_uid == os.getuid())
        verify = subprocess.run(
            ["systemd-analyze", "verify", "--man=no", "--recursive-errors=no", f"--root={root}",
             "/etc/systemd/system/signupd.service"], capture_output=True, text=True)
        check("systemd-analyze verify --root accepts the installed unit (ExecStart='s binary is there)",
              verify.returncode == 0, (verify.stdout + verify.stderr).strip())

        # 5: start it as the unit describes it.
        run_credentials = root / "run/credentials/signupd.service"
        run_credentials.mkdir(parents=True, mode=0o700)
        for ident, source in sources:
            if source.is_dir():
                for file in sorted(source.iterdir()):
                    if file.is_file():
                        shutil.copy(file, run_credentials / f"{ident}_{file.name}")
            elif source.is_file():
                shutil.copy(source, run_credentials / ident)
            else:
                fatal(f"the unit would not start: LoadCredential={ident}:{source} does not exist")
        unit_env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "CREDENTIALS_DIRECTORY": str(run_credentials)}
        for entry in directives.get("Environment", []):
            for pair in shlex.split(entry):
                key, _, value = pair.partition("=")
                unit_env[key] = rewrite(value, "the unit")[0]
        workdir = Path(rewrite(directives["WorkingDirectory"][0], "the unit")[0])
        exec_start = [rewrite(word, "the unit")[0] for word in shlex.split(directives["ExecStart"][0])]
        check("ExecStart= runs the binary the guide installed",
              exec_start[0] == str(root / "usr/bin/signupd"), exec_start[0])
        serve_log = open(scratch / "serve.log", "w")
        server = subprocess.Popen(exec_start, env=unit_env, cwd=workdir, stdin=subprocess.DEVNULL,
                                  stdout=serve_log, stderr=subprocess.STDOUT, start_new_session=True)
        base = f"http://127.0.0.1:{http_port}"

        def ready():
            try:
                with urllib.request.urlopen(f"{base}/readyz", timeout=2) as response:
                    return response.status == 200
            except OSError:
                return False

        up = wait_until(120, ready, lambda: server.poll() is None)
        if not check(f"signupd serve, started as the unit would, answers {base}/readyz", bool(up)):
            fatal(f"serve did not become ready; its log:\n{(scratch / 'serve.log').read_text()}")

        request = urllib.request.Request(
            f"{base}/api/signup",
            data=json.dumps({"list": "default", "email": SUBSCRIBER, "consent": True, "website": ""}).encode(),
            headers={"Content-Type": "application/json", "Accept": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                status, body = response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            status, body = error.code, error.read().decode()
        check("POST /api/signup answers 202 {\"ok\":true,\"next\":\"confirm_email\"}",
              status == 202 and json.loads(body or "null") == {"ok": True, "next": "confirm_email"},
              f"{status} {body}")

        mail = wait_until(120, lambda: sorted(mailbox.glob("*.eml")) if mailbox.is_dir() else None,
                          lambda: server.poll() is None)
        check("the confirmation mail reached the test relay, after a login with the password the guide wrote",
              bool(mail) and SUBSCRIBER in mail[0].read_text(errors="replace"),
              (scratch / "smtp.log").read_text()[-800:])

        # The operator's command, as root would run it: the credentials beside the configuration.
        lookup = subprocess.run(["sudo", "signupd", "lookup", SUBSCRIBER, "--json", "--config", str(config)],
                                env=env, cwd=download, capture_output=True, text=True, timeout=60)
        try:
            rows = json.loads(lookup.stdout).get("rows", [])
        except ValueError:
            rows = []
        check("`sudo signupd lookup ADDRESS --config /etc/signupd/signupd.toml` finds it stored: pending on the list default",
              lookup.returncode == 0 and any(row.get("list") == "default" and row.get("status") == "pending" for row in rows),
              (lookup.stdout + lookup.stderr).strip()[:800])

        server.send_signal(signal.SIGTERM)
        try:
            status = server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            status = "still running after 60 s"
        server = None
        check("signupd exits 0 on SIGTERM", status == 0, str(status))
        if failures:
            print((scratch / "serve.log").read_text()[-3000:], file=sys.stderr)
    finally:
        for process in (server, catcher):
            if process is not None and process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait()
        shutil.rmtree(scratch, ignore_errors=True)

    if failures:
        print(f"install-as-written: {len(failures)} check(s) failed", file=sys.stderr)
        return 1
    print("install-as-written: all checks passed")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--edit"]:
        config, smtp_port, http_port = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
        root = config[: config.index("/etc/signupd/")]
        fill(Path(config), root, smtp_port, http_port)
        print(f"the edit: {config} filled in for the test relay on 127.0.0.1:{smtp_port}")
        sys.exit(0)
    sys.exit(main(sys.argv[1:]))
