#!/usr/bin/env python3
"""The operator API fuzzed against its OpenAPI description (docs/openapi.yaml) by Schemathesis, on
a real signupd of its own: every operation is called with generated data, valid (each answer must
be a documented success) and invalid (each must be refused), and every check Schemathesis has
runs on every answer. Any finding fails.

Run by .ci/openapi after tests/openapi/check.py, with the pinned Schemathesis it installs; by hand:

    python3 tests/openapi/fuzz.py --signupd target/debug/signupd --schemathesis PATH/bin/schemathesis

What it does:

1. Starts signupd with the lists of tests/openapi/server.py (`news`, `other`), its own
   data directory, and 20 admin tokens. The run's removals, suppressions and imports reach
   only this server, so they can make no other check flaky.
2. Imports two confirmed addresses and signs one up (pending), so that the lookup's and the
   export's answers carry rows to validate.
3. Writes the description of this deployment beside it: docs/openapi.yaml as it is, except that
   a list id is one of the two configured ones (`enum`; the file gives the rule every id
   follows, and a well-formed id of no configured list is a `400` the file documents), and that
   a JSON-lines answer is given as the array of its lines (the file gives the schema of one
   line; tests/openapi/fuzz_hooks.py reads the answer line by line).
4. Runs `schemathesis run` on it: `--checks all`, `--mode all` (positive and negative), at
   most `--max-examples` cases an operation in each phase, the examples, coverage and fuzzing
   phases (stateful testing needs links, which the file does not have). The hooks give each
   request the next token and a client address of its own (fuzz_hooks.py says why); no case
   generates an `Authorization` of its own (check.py covers the refusals of a wrong one, and
   Schemathesis's `ignored_auth` check still calls each operation without a token and with a
   wrong one). tests/openapi/schemathesis.toml makes a warning fail the run too, and counts a
   413 (a generated body over the suppression's 4096 bytes) as a refusal of invalid data.
5. signupd must still be running and answer /readyz, and its log must hold no panic.

Prints Schemathesis's report and, last, its summary line; exits 1 if anything was found.
"""

import argparse
import copy
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from harness import Processes, free_port, require  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from server import LIST_IDS, NotReady, config_toml, serve  # noqa: E402

yaml = require("yaml", "python3 -m pip install PyYAML==6.0.3", ".ci/openapi")

ROOT = Path(__file__).resolve().parents[2]
SPEC_PATH = ROOT / "docs" / "openapi.yaml"
TOKEN_COUNT = 20
JSON_LINES = ("application/x-ndjson", "application/jsonl", "application/json-lines")

processes = Processes()


def say(message: str) -> None:
    print(f"openapi-fuzz: {message}", flush=True)


class Stop(Exception):
    """The run cannot go on."""


def write_config(base: Path, port: int) -> tuple[Path, Path]:
    """The configuration, and the file of the tokens (one a line) for the hooks."""
    entries = []
    tokens = []
    for number in range(1, TOKEN_COUNT + 1):
        token = f"fuzz{number}-{secrets.token_urlsafe(32)}"
        file = base / f"api_token_fuzz{number}"
        file.write_text(token + "\n")
        file.chmod(0o600)
        tokens.append(token)
        entries.append(f'[[api_tokens]]\nname = "fuzz{number}"\ntoken_file = "{file}"\nscopes = ["admin"]\n')
    token_list = base / "tokens"
    token_list.write_text("\n".join(tokens) + "\n")
    token_list.chmod(0o600)
    config = base / "signupd.toml"
    config.write_text(config_toml(port, base / "data", base / "mail", sections="".join(entries)))
    return config, token_list


def request(port: int, method: str, target: str, token: str | None = None, body: bytes | None = None, content_type: str | None = None) -> tuple[int, bytes]:
    headers = {"CF-Connecting-IP": "192.0.2.1"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    if content_type:
        headers["Content-Type"] = content_type
    req = urllib.request.Request(f"http://127.0.0.1:{port}{target}", data=body, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=30) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()
    except OSError:
        return 0, b""


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def start(signupd: str, base: Path) -> tuple[int, object, Path, Path]:
    port = free_port()
    config, token_list = write_config(base, port)
    log = base / "signupd.log"
    try:
        process = serve(processes, signupd, config, log, lambda: request(port, "GET", "/readyz")[0] == 200, "fuzzed")
    except NotReady as error:
        raise Stop(str(error)) from None
    say(f"signupd is ready on 127.0.0.1:{port} (lists {', '.join(LIST_IDS)}; {TOKEN_COUNT} admin tokens)")
    return port, process, token_list, log


def seed(port: int, token: str) -> None:
    """Rows for the lookup and the export to answer with: two imported, one pending."""
    lines = (
        b'{"email": "ann@example.com", "source": "homepage", "tags": ["beta"], "fields": {"first_name": "Ann"}}\n'
        b'{"email": "dan@example.com", "confirmed_at": "2026-01-02T03:04:05Z"}\n'
    )
    status, body = request(port, "POST", "/api/v1/import?list=news&consent_text=Yes%2C%20email%20me.", token, lines, "application/x-ndjson")
    imported = json.loads(body).get("imported") if status == 200 else None
    if imported != 2:
        raise Stop(f"seeding: the import answered {status} {body[:200]!r}")
    form = b"email=bob%40example.com&consent=yes&list=news&list=other"
    opener = urllib.request.build_opener(NoRedirect)
    req = urllib.request.Request(f"http://127.0.0.1:{port}/api/signup", data=form, method="POST", headers={"Content-Type": "application/x-www-form-urlencoded", "CF-Connecting-IP": "192.0.2.2"})
    try:
        status = opener.open(req, timeout=30).status
    except urllib.error.HTTPError as error:
        status = error.code
    if status != 303:
        raise Stop(f"seeding: the signup of bob@example.com answered {status}")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        status, body = request(port, "GET", "/api/v1/export?status=all", token)
        if status == 200 and body.count(b"\n") == 4:
            say("seeded: ann and dan imported on news, bob pending on news and other")
            return
        time.sleep(0.2)
    raise Stop(f"seeding: the export does not show the 4 rows ({status} {body[:300]!r})")


def deployment(doc: dict) -> dict:
    """Step 3: the description of this signupd."""
    doc = copy.deepcopy(doc)
    doc["components"]["schemas"]["ListId"]["enum"] = LIST_IDS
    for item in doc["paths"].values():
        for operation in item.values():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            for response in operation["responses"].values():
                for media, content in response.get("content", {}).items():
                    if media in JSON_LINES and "schema" in content:
                        content["schema"] = {"type": "array", "items": content["schema"]}
    return doc


def run(args, work: Path) -> int:
    port, process, token_list, log = start(str(Path(args.signupd).resolve()), work)
    first_token = token_list.read_text().split()[0]
    seed(port, first_token)
    spec = work / "openapi.json"
    spec.write_text(json.dumps(deployment(yaml.safe_load(Path(args.spec).read_text()))))

    command = [
        args.schemathesis,
        "--config-file", str(Path(__file__).resolve().parent / "schemathesis.toml"),
        "run", str(spec),
        "--url", f"http://127.0.0.1:{port}",
        "--checks", "all",
        "--mode", "all",
        "--phases", "examples,coverage,fuzzing",
        "--max-examples", str(args.max_examples),
        "--workers", str(args.workers),
        # The hooks give the token (step 4): a generated one is a 401 before the endpoint looks
        # at anything, and would take a third of the cases.
        "--generation-with-security-parameters", "false",
        "--generation-database", "none",
        "--request-timeout", "30",
        "--no-color",
    ]
    if args.seed is not None:
        command += ["--seed", str(args.seed)]
    command += args.extra
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("SIGNUPD_")},
        "SCHEMATHESIS_HOOKS": "fuzz_hooks",
        "PYTHONPATH": str(Path(__file__).resolve().parent),
        "FUZZ_TOKENS_FILE": str(token_list),
    }
    say(f"schemathesis run (--checks all --mode all --max-examples {args.max_examples}) against 127.0.0.1:{port}")
    started = time.monotonic()
    result = subprocess.run(command, env=env, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    took = time.monotonic() - started
    print(result.stdout, flush=True)
    summary = [line for line in result.stdout.splitlines() if re.fullmatch(r"=+ .+ in [0-9.]+s =+", line.strip())]

    problems = []
    if result.returncode != 0:
        problems.append(f"schemathesis exited {result.returncode}")
    if process.poll() is not None or request(port, "GET", "/readyz")[0] != 200:
        problems.append("signupd is no longer running or ready after the run")
    processes.stop(process)
    text = log.read_text(errors="replace")
    if "panicked" in text:
        problems.append("signupd's log holds a panic:\n" + text[-3000:])
    say(f"schemathesis ran {took:.0f} s; " + ("; ".join(f"FAIL {problem}" for problem in problems) or "signupd still ready, no panic in its log"))
    say(f"summary: {summary[-1].strip() if summary else '(no summary line)'}")
    return 1 if problems else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--signupd", default=str(ROOT / "target" / "debug" / "signupd"))
    parser.add_argument("--spec", default=str(SPEC_PATH), help="the OpenAPI file (default: docs/openapi.yaml)")
    parser.add_argument("--schemathesis", default="schemathesis", help="the schemathesis command")
    parser.add_argument("--max-examples", type=int, default=50, help="cases an operation in each phase")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, help="Schemathesis's seed, to repeat a run (it prints the one it used)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    parser.add_argument("extra", nargs="*", help="after --: more options for schemathesis run (--report har)")
    args = parser.parse_args()
    if shutil.which(args.schemathesis) is None:
        say(f"no schemathesis at {args.schemathesis} (.ci/openapi installs the pinned one)")
        return 2
    work = Path(tempfile.mkdtemp(prefix="signupd-openapi-fuzz-"))
    try:
        code = run(args, work)
    except Stop as stop:
        say(f"FAIL {stop}")
        code = 1
    finally:
        processes.stop_all()
    if code or args.keep:
        say(f"the server's files are kept in {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
