"""Schemathesis hooks for tests/openapi/fuzz.py (loaded through SCHEMATHESIS_HOOKS; not a test of
its own).

- Authentication: each request carries the next of the run's admin tokens, and claims a client
  address of its own in `CF-Connecting-IP` (the fuzzed signupd trusts the loopback proxy). A
  token may make 600 calls a minute and a client 20 failed authentications: the run makes
  thousands of calls, and its probes without a token (the `ignored_auth` check) would fill one
  client's window and be answered 429, which is right but not what the probe asks. The windows
  themselves are checked by tests/openapi/check.py.
- JSON lines: the import's body is one generated line (`ImportLine`, the schema of one line),
  written as JSON and a line break; the export's answer is read as the list of its lines, which
  fuzz.py's copy of the description gives as an array of the line schema.

The tokens come from the file named by FUZZ_TOKENS_FILE, one a line.
"""

import itertools
import json
import os
import threading

import schemathesis

_TOKENS = itertools.cycle(open(os.environ["FUZZ_TOKENS_FILE"], encoding="utf-8").read().split())
_CLIENTS = itertools.count(1)
_LOCK = threading.Lock()
JSON_LINES = ("application/x-ndjson", "application/jsonl", "application/json-lines")


def _next_client() -> str:
    """198.18.0.0/15, the benchmarking range: 131,072 addresses, each its own client network."""
    with _LOCK:
        number = next(_CLIENTS) % (1 << 17)
    return f"198.{18 + (number >> 16)}.{(number >> 8) & 0xFF}.{number & 0xFF}"


@schemathesis.auth(refresh_interval=None, retry_on=[])
class RotatingBearer:
    def get(self, case, ctx):
        with _LOCK:
            return next(_TOKENS)

    def set(self, case, data, ctx):
        case.headers = case.headers or {}
        case.headers["Authorization"] = f"Bearer {data}"


@schemathesis.hook
def before_call(context, case, kwargs):
    """Every request, with a token or without (a probe, a case that leaves it out)."""
    case.headers = {**(case.headers or {}), "CF-Connecting-IP": _next_client()}


@schemathesis.serializer(*JSON_LINES)
def one_json_line(ctx, value):
    return (json.dumps(value, ensure_ascii=False) + "\n").encode("utf-8")


@schemathesis.deserializer(*JSON_LINES)
def json_lines(ctx, response):
    return [json.loads(line) for line in response.content.decode("utf-8").splitlines() if line]
