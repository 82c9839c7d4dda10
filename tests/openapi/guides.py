#!/usr/bin/env python3
"""The operator API's guides, run as written: every command block of "Operator API" in
docs/http-api.md and of "Answering the people on the list", "Automation tools" and "A form from
the configuration" in docs/operations.md, in order, against a real signupd on 127.0.0.1, and what each prints must be
what the guide shows.

Run by .ci/openapi after tests/openapi/check.py (which builds signupd first); by hand:

    python3 tests/openapi/guides.py --signupd target/debug/signupd

The blocks carry the markers of tests/package/guide.py (`<!-- ci: run -->`, `background`, `file`,
`append`, `show (REASON)`), read with its reader: every shell block of the two sections must be
marked, every substitution below must be used, and no block that runs may keep a placeholder
(`example.com`, `<name>`). The guides are never edited for the test: what differs on a CI machine
goes through each part's table of substitutions.

The blocks of one section run in one bash (`set -euo pipefail`), as an operator's terminal would
run them, so a variable set by one block (`TOKEN=…`) is there for the next. Each command of a
```console block is run on its own, and its standard output must match the lines the guide shows
under it: exactly, except that `…` stands for any text (what differs from run to run: times,
hashes, ids), and that a command the guide shows without output must print nothing. A ```sh
block must exit 0. A `background` block is started apart and must listen where its marker says;
a `show` block is only shown, except `sudo systemctl restart signupd`, where the test restarts
its own signupd as systemd would.

1. docs/http-api.md#operator-api, the quick-start server: a fresh working directory, the
   quick-start's `cargo run --release --` replaced by the built binary, and the server on a free
   port instead of 8080 (`SIGNUPD_SERVER__LISTEN` and `__PUBLIC_URL` in every block's
   environment, `127.0.0.1:8080` through the table). Addresses at example.com become
   `@signupd.test`.
2. docs/operations.md#answering-the-people-on-the-list (lookup, the audit log, the admin page's
   token and its sign-in challenge on the metrics listener, `127.0.0.1:9464` through the table)
   and then #automation-tools, on a Debian install in miniature under a temporary
   directory: `/etc/signupd/` becomes `<tmp>/etc/signupd/` (a filled-in signupd.toml with the
   list `news`, the generated secrets and an empty `credentials/api_token/` as the package makes
   them), the service is `signupd serve --config …/signupd.toml` started by the test (so the
   credentials are found beside the configuration, as the guide's commands find them), and the
   public URL `https://signup.example.com` is that server. Two confirmed subscribers are
   imported with `signupd import` first. `sudo` and `signupd` on the blocks' PATH are the test's:
   a `sudo` that runs its command as the calling user (everything it touches is the test's) and
   the built binary.
3. docs/operations.md#a-form-from-the-configuration on the same machine: `signupd snippet`
   prints the list's form, its `--return-to` on the site the list allows
   (`https://www.example.com` through the table; tests/api/snippet.rs checks what it prints).

Python 3 standard library only. Prints one line per check; exits 1 at the first that fails, with
what the block printed.
"""

import argparse
import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "package"))
import guide  # noqa: E402  (tests/package/guide.py: the markers' reader)
from harness import Checks, Processes, free_port  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
HTTP_API = ROOT / "docs" / "http-api.md"
OPERATIONS = ROOT / "docs" / "operations.md"
# What a block may take before it counts as hung.
BLOCK_TIMEOUT = 120.0
# The site the miniature machine's list allows (allowed_origins), for a form's return_to.
SITE = "https://www.signupd.test"
# The `show` blocks the test does instead of showing: the body, and what the test does.
RESTART = "sudo systemctl restart signupd"


class GuideFailed(Exception):
    pass


checks = Checks("guides", GuideFailed)
say, check = checks.say, checks.check
processes = Processes()


# --- the guide's blocks -----------------------------------------------------------------------


def section_blocks(path: Path, anchor: str, substitutions: list[tuple[str, str]]) -> list[dict]:
    """The blocks of the `##` section `anchor` of `path`, in order, each with its marker and its
    body substituted. The rules of tests/package/guide.py: every shell block is marked, every
    substitution is used, no placeholder is left in a block that runs."""
    text = path.read_text(encoding="utf-8")
    name = path.relative_to(ROOT)
    try:
        chosen = guide.select(str(name), anchor, guide.blocks(str(name), text), text)
    except guide.Problem as problem:
        raise GuideFailed(str(problem)) from None
    problems = guide.check_markers(str(name), chosen)
    used = {source: 0 for source, _ in substitutions}

    def substitute(body: str) -> str:
        for source, target in substitutions:
            if source in body:
                used[source] += 1
                body = body.replace(source, target)
        return body

    out = []
    for block in chosen:
        where = f"{name}:{block['line']}"
        kind, argument = block["marker"] if block["marker"] else (None, None)
        if kind is None:
            continue
        if kind == "run" and argument is not None:
            problems.append(f"{where}: <!-- ci: run, input: … --> is not one this test runs")
            continue
        body = block["body"] if kind == "show" else substitute(block["body"])
        if kind in ("background", "append"):
            argument = substitute(argument)
        runs = guide.commands({**block, "body": body}) if kind in ("run", "background") else body
        left = guide.PLACEHOLDER.search(runs) if kind != "show" else None
        if left:
            problems.append(f"{where}: the block still holds the placeholder {left.group(0)!r}: add it to the table")
        out.append({"kind": kind, "argument": argument, "lang": block["lang"], "body": body, "where": where})
    problems += [f"the substitution of {source!r} matches no block of {name}#{anchor}" for source, n in used.items() if n == 0]
    if problems:
        raise GuideFailed(f"{name}#{anchor}:\n  " + "\n  ".join(problems))
    return out


def console_commands(body: str) -> list[tuple[str, str]]:
    """A ```console block's commands, each with the output the guide shows under it."""
    commands: list[tuple[list[str], list[str]]] = []
    continued = False
    for line in body.rstrip("\n").split("\n"):
        if continued:
            commands[-1][0].append(line)
            continued = line.endswith("\\")
        elif line.startswith("$ "):
            commands.append(([line[2:]], []))
            continued = line.endswith("\\")
        elif commands:
            commands[-1][1].append(line)
        elif line.strip():
            raise GuideFailed(f"a console block starts with output, not a command: {line!r}")
    return [("\n".join(command), "\n".join(output)) for command, output in commands]


def matches(shown: str, printed: str) -> bool:
    """Whether `printed` is what the guide `shown`: equal, `…` standing for any text."""
    shown = "\n".join(line.rstrip() for line in shown.strip("\n").split("\n")) if shown.strip() else ""
    printed = "\n".join(line.rstrip() for line in printed.replace("\r", "").strip("\n").split("\n"))
    pattern = ".*?".join(re.escape(piece) for piece in shown.split("…"))
    return re.fullmatch(pattern, printed, flags=re.DOTALL) is not None


# --- running them -----------------------------------------------------------------------------


class Shell:
    """One bash for a section's blocks: each unit runs in it with its output in files of its own,
    so variables carry from block to block and a failing command ends the shell (`set -e`)."""

    def __init__(self, cwd: Path, env: dict[str, str], logs: Path):
        self.logs = logs
        self.count = 0
        self.process = subprocess.Popen(
            ["bash", "--noprofile", "--norc"],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.send("set -euo pipefail\n")
        self.buffer = b""

    def send(self, text: str) -> None:
        self.process.stdin.write(text.encode())
        self.process.stdin.flush()

    def run(self, script: str) -> tuple[int, str, str]:
        """Runs `script`; its exit status (the shell's, if it ended), standard output and error."""
        self.count += 1
        out, err = self.logs / f"{self.count:02d}.out", self.logs / f"{self.count:02d}.err"
        done = f"__unit_done__ {self.count}"
        # Standard input from /dev/null: a command must not read the rest of this script.
        self.send(f"{{\n{script.rstrip()}\n}} >{out} 2>{err} </dev/null\necho '{done}'\n")
        deadline = time.monotonic() + BLOCK_TIMEOUT
        status = None
        while status is None:
            left = deadline - time.monotonic()
            if left <= 0:
                os.killpg(self.process.pid, signal.SIGKILL)
                raise GuideFailed(f"no answer within {BLOCK_TIMEOUT:.0f} s:\n{script}\n{read(err)}")
            ready, _, _ = select.select([self.process.stdout], [], [], left)
            if not ready:
                continue
            chunk = os.read(self.process.stdout.fileno(), 65536)
            if not chunk:
                status = self.process.wait(timeout=10)
                break
            self.buffer += chunk
            if f"{done}\n".encode() in self.buffer:
                self.buffer = b""
                status = 0
        return status, read(out), read(err)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.close()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)


def read(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""


def tail(text: str, lines: int = 30) -> str:
    return "\n".join(f"   | {line}" for line in text.rstrip("\n").split("\n")[-lines:])


def first_line(text: str) -> str:
    line = next((line for line in text.split("\n") if line.strip() and not line.startswith("#")), "")
    return line[:70] + ("…" if len(line) > 70 else "")


def listening(address: str) -> bool:
    host, port = address.rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=1):
            return True
    except OSError:
        return False


def wait_listening(address: str, process: subprocess.Popen, log: Path, what: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise GuideFailed(f"{what} exited with {process.returncode}:\n{tail(read(log))}")
        if listening(address):
            check(True, f"{what} listens on {address}")
            return
        time.sleep(0.1)
    raise GuideFailed(f"{what} does not listen on {address} within 60 s:\n{tail(read(log))}")


def stop_group(process: subprocess.Popen) -> int:
    """SIGTERM to the process group of a process this test started, as a service manager stops
    a service; SIGKILL after 15 s."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
    return process.returncode


def run_section(blocks: list[dict], cwd: Path, env: dict[str, str], logs: Path, restart=None) -> list[subprocess.Popen]:
    """Every block of a section, in order; the background processes it started."""
    shell = Shell(cwd, env, logs)
    background: list[subprocess.Popen] = []
    try:
        for block in blocks:
            kind, where = block["kind"], block["where"]
            if kind == "show":
                if block["body"].strip() == RESTART and restart is not None:
                    restart(where)
                else:
                    say(f"shown only: {where} ({block['argument']})")
                continue
            if kind == "file":
                (cwd / block["argument"]).write_text(block["body"])
                check(True, f"{where}: written to {block['argument']}")
                continue
            if kind == "append":
                target = Path(block["argument"])
                before = target.read_text() if target.exists() else ""
                target.write_text(before + ("" if before.endswith("\n") or not before else "\n") + "\n" + block["body"])
                check(True, f"{where}: appended to {block['argument']}")
                continue
            if kind == "background":
                log = logs / f"background-{where.rsplit(':', 1)[1]}.log"
                script = logs / f"background-{where.rsplit(':', 1)[1]}.sh"
                script.write_text(guide.commands(block))
                process = processes.spawn(["bash", "-euo", "pipefail", str(script)], log, cwd=cwd, env=env, start_new_session=True)
                background.append(process)
                wait_listening(block["argument"], process, log, f"{where} ({first_line(block['body'])})")
                continue
            if block["lang"] == "console":
                for command, shown in console_commands(block["body"]):
                    status, out, err = shell.run(command)
                    label = f"{where}: $ {first_line(command)}"
                    if status != 0:
                        raise GuideFailed(f"{label} exits {status}:\n{tail(out + err)}")
                    if not matches(shown, out):
                        raise GuideFailed(f"{label} prints what the guide does not show:\n{tail(out)}\n  the guide shows:\n{tail(shown)}")
                    check(True, f"{label} prints what the guide shows")
            else:
                status, out, err = shell.run(block["body"])
                label = f"{where} ({first_line(block['body'])})"
                if status != 0:
                    raise GuideFailed(f"{label} exits {status}:\n{tail(out + err)}")
                check(True, f"{label} runs as written")
    finally:
        shell.close()
    return background


def clean_env(**extra: str) -> dict[str, str]:
    """The blocks' environment: no SIGNUPD_* or credentials of the caller's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIGNUPD_") and k != "CREDENTIALS_DIRECTORY"}
    env.update(LANG="C.UTF-8", RUST_LOG="warn", **extra)
    return env


# --- 1. the quick-start server ----------------------------------------------------------------


def quick_start(signupd: str, work: Path) -> None:
    say("docs/http-api.md#operator-api: the quick-start server")
    port = free_port()
    cwd, logs = work / "quick-start", work / "quick-start-logs"
    cwd.mkdir()
    logs.mkdir()
    substitutions = [
        ("cargo run --release --", signupd),
        ("127.0.0.1:8080", f"127.0.0.1:{port}"),
        ("@example.com", "@signupd.test"),
    ]
    blocks = section_blocks(HTTP_API, "operator-api", substitutions)
    env = clean_env(SIGNUPD_SERVER__LISTEN=f"127.0.0.1:{port}", SIGNUPD_SERVER__PUBLIC_URL=f"http://127.0.0.1:{port}")
    background = run_section(blocks, cwd, env, logs)
    check(len(background) == 1, f"the section starts one server ({len(background)})")
    # Its bash is stopped with it, so the status is not signupd's; check.py checks that one.
    for process in background:
        stop_group(process)


# --- 2. the packaged machine ------------------------------------------------------------------


class Service:
    """The machine's signupd, as the unit runs it: `serve --config /etc/signupd/signupd.toml`."""

    def __init__(self, signupd: str, config: Path, address: str, logs: Path):
        self.signupd, self.config, self.address, self.logs = signupd, config, address, logs
        self.process: subprocess.Popen | None = None
        self.starts = 0

    def start(self, why: str) -> None:
        self.starts += 1
        log = self.logs / f"service-{self.starts}.log"
        self.process = processes.spawn([self.signupd, "serve", "--config", str(self.config)], log, env=clean_env(), start_new_session=True)
        wait_listening(self.address, self.process, log, f"signupd ({why})")

    def stop(self) -> None:
        if self.process is not None:
            status = stop_group(self.process)
            check(status == 0, f"signupd stops on SIGTERM with 0 ({status})")

    def restart(self, where: str) -> None:
        say(f"{where}: {RESTART} — the test restarts its signupd, as systemd would")
        self.stop()
        self.start(f"restarted at {where}")


def packaged_machine(signupd: str, work: Path) -> None:
    say("docs/operations.md: a Debian install in miniature")
    port, metrics_port = free_port(), free_port()
    root, logs = work / "machine", work / "machine-logs"
    etc = root / "etc" / "signupd"
    credentials = etc / "credentials"
    cwd, bin_dir = root / "operator", root / "bin"
    for directory in (credentials / "api_token", cwd, bin_dir, logs / "answering", logs / "automation", logs / "snippet"):
        directory.mkdir(parents=True)
    for directory in (credentials, credentials / "api_token"):
        directory.chmod(0o700)
    for secret in ("token_secret", "hash_key"):
        with open(credentials / secret, "w") as handle:
            subprocess.run([signupd, "gen-secret"], stdout=handle, check=True)
        (credentials / secret).chmod(0o600)
    config = etc / "signupd.toml"
    config.write_text(
        f"""# The package's signupd.toml, filled in (tests/openapi/guides.py).
[server]
listen = "127.0.0.1:{port}"
public_url = "http://127.0.0.1:{port}"
metrics_listen = "127.0.0.1:{metrics_port}"

[storage]
data_dir = "{root / 'data'}"

[mail]
transport = "file"
file_dir = "{root / 'mail'}"

[[lists]]
id = "news"
name = "News"
consent_text = "Email me the news. I can unsubscribe at any time."
allowed_origins = ["{SITE}"]
"""
    )
    # The blocks' sudo and signupd: see the module's doc.
    (bin_dir / "sudo").write_text('#!/bin/sh\nexec "$@"\n')
    (bin_dir / "sudo").chmod(0o755)
    (bin_dir / "signupd").symlink_to(signupd)
    env = clean_env(PATH=f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}")

    migrate = subprocess.run([signupd, "migrate", "--config", str(config)], env=clean_env(), capture_output=True, text=True)
    check(migrate.returncode == 0, f"signupd migrate ({migrate.returncode}) {migrate.stderr.strip()[-200:]}")
    records = root / "subscribers.jsonl"
    records.write_text('{"email":"ann@signupd.test"}\n{"email":"bob@signupd.test"}\n')
    imported = subprocess.run(
        [signupd, "import", str(records), "--list", "news", "--consent-text", "Email me the news.", "--config", str(config)],
        env=clean_env(),
        capture_output=True,
        text=True,
    )
    check(
        imported.returncode == 0 and "imported 2" in imported.stdout,
        f"two confirmed subscribers of news imported ({imported.stdout.strip()})",
    )

    service = Service(signupd, config, f"127.0.0.1:{port}", logs)
    service.start("the installed service, without [[api_tokens]]")
    status = http_status(port, "/api/v1/stats")
    check(status == 404, f"without [[api_tokens]] /api/v1/stats is 404 ({status})")

    say("docs/operations.md#answering-the-people-on-the-list: a subject access request, the audit log, the admin page")
    substitutions = [
        ("/etc/signupd/", f"{etc}/"),
        ("127.0.0.1:9464", f"127.0.0.1:{metrics_port}"),
        ("@example.com", "@signupd.test"),
    ]
    blocks = section_blocks(OPERATIONS, "answering-the-people-on-the-list", substitutions)
    background = run_section(blocks, cwd, env, logs / "answering", restart=service.restart)
    check(not background, "the section starts no server of its own")
    check(service.starts == 2, f"the test restarted signupd where the guide says to, once ({service.starts - 1})")
    looked_up = json.loads((cwd / "ann.json").read_text())
    check(
        looked_up["email"] == "ann@signupd.test" and [row["status"] for row in looked_up["rows"]] == ["confirmed"],
        "the lookup's JSON file holds ann's confirmed row",
    )
    status = http_status(port, "/admin")
    check(status == 404, f"the admin page is not on the public listener ({status})")

    say("docs/operations.md#automation-tools: tokens for tools, the API through the public URL")
    substitutions = [
        ("/etc/signupd/", f"{etc}/"),
        ("https://signup.example.com", f"http://127.0.0.1:{port}"),
        ("@example.com", "@signupd.test"),
    ]
    blocks = section_blocks(OPERATIONS, "automation-tools", substitutions)
    background = run_section(blocks, cwd, env, logs / "automation", restart=service.restart)
    check(not background, "the section starts no server of its own")
    check(service.starts == 4, f"the test restarted signupd where the guide says to, twice more ({service.starts - 2})")

    say("docs/operations.md#a-form-from-the-configuration: the list's form, printed from the configuration")
    substitutions = [
        ("/etc/signupd/", f"{etc}/"),
        ("https://www.example.com", SITE),
    ]
    blocks = section_blocks(OPERATIONS, "a-form-from-the-configuration", substitutions)
    background = run_section(blocks, cwd, env, logs / "snippet")
    check(not background, "the section starts no server of its own")
    printed = (logs / "snippet" / "01.out").read_text()
    check(
        f'action="http://127.0.0.1:{port}/api/signup"' in printed and f'name="return_to" value="{SITE}/thanks"' in printed,
        "the printed form posts to the service's public URL and returns to the site",
    )
    service.stop()


def http_status(port: int, path: str) -> int:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
        conn.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        head = conn.recv(64).decode(errors="replace")
    found = re.match(r"HTTP/1\.1 (\d{3})", head)
    return int(found.group(1)) if found else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--signupd", default=str(ROOT / "target" / "debug" / "signupd"))
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args()
    signupd = str(Path(args.signupd).resolve())
    work = Path(tempfile.mkdtemp(prefix="signupd-guides-"))
    failed = None
    try:
        quick_start(signupd, work)
        packaged_machine(signupd, work)
    except GuideFailed as failure:
        failed = str(failure)
    finally:
        for process in processes.children:
            if process.poll() is None:
                stop_group(process)
    if failed is not None:
        say(f"FAILED: {failed}")
        say(f"{checks.passed} checks passed before; everything is kept in {work}")
        return 1
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    say(f"{checks.passed} checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
