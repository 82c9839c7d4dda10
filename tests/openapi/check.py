#!/usr/bin/env python3
"""The operator API against its OpenAPI description (docs/openapi.yaml), on a real signupd: every
path, method and status the file documents is called for real, and each answer must be what the
file says.

Run by .ci/openapi (which installs the pinned PyYAML and jsonschema and builds signupd first); by
hand:

    python3 tests/openapi/check.py --signupd target/debug/signupd

What it does, in order:

1. Reads docs/openapi.yaml and checks the file itself: OpenAPI 3.1, every schema a valid JSON
   Schema 2020-12, every operation with an operationId and the scope it needs as the role of
   its bearer requirement, only the statuses the API can give, every object an answer carries
   closed (`additionalProperties: false`) with every field required (the server always writes
   every field, `null` when absent) — or a map (a list's form fields by name) whose keys and
   values have their own rules (`propertyNames`, `additionalProperties` a schema) — and `x-not-exercised` only on a 408, 429 or 503, with a
   reason.
2. Starts signupd with four tokens (`reader`: read, `writer`: write, `n8n`: read and write,
   `ops`: admin), the lists `news` and `other`, a webhook endpoint on a closed loopback port
   (so a confirmation's event stays queued), a mail budget of 2 an hour (so the third
   confirmation mail stays queued) and `server.request_timeout` of 2 s. Signs addresses up
   through `POST /api/signup`, confirms one with the token of its mail file, and waits until
   the database holds a confirmed row, a pending one that was mailed, a queued mail and a
   queued event.
3. Calls each operation for every status it documents: the right token (and admin) for 200,
   with data of every kind; no token, a wrong one and other schemes for 401; a token without
   the scope for 403; each 400 error code the file lists; another method for 405; a body that
   stops half-way for 408; too large a body, declared and chunked, for 413; the wrong content
   type for 415; 20 wrong tokens from one client, then a wrong one to each operation for 429,
   while the right one from that client is still answered 200; another
   connection holding SQLite's write lock for 503. Each answer must have the documented status,
   content type (an empty body where none is documented) and required headers, and its body must
   validate against the documented schema (for the export, each line against the record
   schema), which makes every required field present and an undocumented field a failure.
   A few checks of meaning ride along: the list filter, the removal that finds nothing, the
   audit log's actors, no audit entry for a dry run.
4. Coverage: every (path, method, status) of the file, and every error code of each 400, was
   answered at least once, except a status the file marks `x-not-exercised: "reason"`.
5. Starts a second signupd without any `[[api_tokens]]`: every documented path and method
   answers 404, as the file says.

Everything listens on and talks to 127.0.0.1; clients are told apart by `CF-Connecting-IP` from
the trusted loopback peer, so one check's failed authentications never limit another's. Made-up
addresses only. Prints one line per check and exits 1 if any failed.
"""

import argparse
import base64
import email
import email.policy
import http.client
import json
import re
import secrets
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from harness import Processes, free_port, require  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from server import NotReady, config_toml, serve  # noqa: E402

PIP = "python3 -m pip install PyYAML==6.0.3 jsonschema==4.26.0"
yaml = require("yaml", PIP, ".ci/openapi")
jsonschema = require("jsonschema", PIP, ".ci/openapi")
referencing = require("referencing", PIP, ".ci/openapi")
require("referencing.jsonschema", PIP, ".ci/openapi")

ROOT = Path(__file__).resolve().parents[2]
SPEC_PATH = ROOT / "docs" / "openapi.yaml"
BASE = "urn:signupd:openapi"
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
# The statuses the operator API can answer (404 only when it is not served at all).
KNOWN_STATUSES = {"200", "400", "401", "403", "404", "405", "408", "413", "415", "429", "503"}
# Statuses too costly to cause may be left out, with a reason; no other.
MAY_BE_SKIPPED = {"408", "429", "503"}
# Whatever the scope, these are the statuses every operation can give.
EVERY_OPERATION = {"200", "401", "403", "404", "405", "429", "503"}
SCOPES = {"read", "write"}
REQUEST_TIMEOUT_SECS = 2
MAX_SUPPRESSION_BODY = 4096
MAX_IMPORT_BODY = 8 * 1024 * 1024

TOKENS = {
    "reader": ("read",),
    "writer": ("write",),
    "n8n": ("read", "write"),
    "ops": ("admin",),
}


class Stop(Exception):
    """Nothing after this can be checked."""


# --- reporting --------------------------------------------------------------------------------


class Report:
    def __init__(self):
        self.passed = 0
        self.failed: list[str] = []

    def check(self, condition: bool, message: str) -> bool:
        if condition:
            self.passed += 1
            print(f"openapi: ok   {message}", flush=True)
        else:
            self.failed.append(message)
            print(f"openapi: FAIL {message}", flush=True)
        return condition

    @staticmethod
    def say(message: str) -> None:
        print(f"openapi: {message}", flush=True)


report = Report()
processes = Processes()


# --- the OpenAPI file -------------------------------------------------------------------------


def escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


class Spec:
    """The document, its JSON Schema registry, and what was exercised."""

    def __init__(self, path: Path):
        self.doc = yaml.safe_load(path.read_text())
        resource = referencing.jsonschema.DRAFT202012.create_resource(self.doc)
        self.registry = referencing.Registry().with_resource(BASE, resource)
        self.exercised: set[tuple[str, str, str]] = set()
        self.codes_exercised: set[tuple[str, str, str, str]] = set()

    def at(self, pointer: str):
        """The value at a JSON pointer (`/components/schemas/Error`)."""
        node = self.doc
        for part in pointer.split("/")[1:]:
            part = part.replace("~1", "/").replace("~0", "~")
            node = node[part]
        return node

    def deref(self, node: dict, pointer: str) -> tuple[dict, str]:
        """A Reference Object's target and its pointer, or the node itself."""
        seen = 0
        while isinstance(node, dict) and "$ref" in node:
            ref = node["$ref"]
            if not ref.startswith("#/"):
                raise Stop(f"{pointer}: only local references are supported ({ref})")
            pointer = ref[1:]
            node = self.at(pointer)
            seen += 1
            if seen > 10:
                raise Stop(f"{pointer}: a loop of references")
        return node, pointer

    def operations(self):
        """(path, method, operation, its pointer) for every operation, in the file's order."""
        for path, item in self.doc.get("paths", {}).items():
            for method in METHODS:
                if method in item:
                    yield path, method, item[method], f"/paths/{escape(path)}/{method}"

    def operation(self, path: str, method: str) -> tuple[dict, str]:
        return self.doc["paths"][path][method], f"/paths/{escape(path)}/{method}"

    def response(self, path: str, method: str, status: str) -> tuple[dict | None, str]:
        op, pointer = self.operation(path, method)
        entry = op.get("responses", {}).get(status)
        if entry is None:
            return None, ""
        return self.deref(entry, f"{pointer}/responses/{status}")

    def errors(self, pointer: str, instance) -> list[str]:
        """What is wrong with `instance` against the schema at `pointer`, if anything."""
        validator = jsonschema.Draft202012Validator({"$ref": f"{BASE}#{pointer}"}, registry=self.registry)
        found = []
        for error in sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path)):
            where = "/".join(str(part) for part in error.absolute_path) or "(the document)"
            kind = "missing required field" if error.validator == "required" else error.validator
            found.append(f"{where}: {kind}: {error.message[:200]}")
        return found

    def error_codes(self, path: str, method: str, status: str) -> list[str]:
        """The `error` codes a JSON error answer of this status documents (enum or const)."""
        response, pointer = self.response(path, method, status)
        if not response:
            return []
        schema = response.get("content", {}).get("application/json", {}).get("schema", {})
        error = schema.get("properties", {}).get("error", {})
        if "const" in error:
            return [error["const"]]
        return list(error.get("enum", []))


def not_exercised_reason(spec: Spec, path: str, method: str, status: str) -> str | None:
    op, _ = spec.operation(path, method)
    entry = op["responses"][status]
    resolved, _ = spec.deref(entry, "")
    for node in (entry, resolved):
        reason = node.get("x-not-exercised")
        if reason is not None:
            return reason
    return None


def lint(spec: Spec) -> None:
    """Step 1: the file itself."""
    doc = spec.doc
    report.check(str(doc.get("openapi", "")).startswith("3.1."), f"docs/openapi.yaml is OpenAPI 3.1 ({doc.get('openapi')})")
    schemes = doc.get("components", {}).get("securitySchemes", {})
    bearer = schemes.get("bearer", {})
    report.check(
        bearer.get("type") == "http" and bearer.get("scheme") == "bearer",
        "securitySchemes has `bearer`: type http, scheme bearer",
    )

    # Every schema is a valid 2020-12 schema.
    schemas: list[tuple[str, dict]] = []

    def collect(node, pointer: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "schema" and isinstance(value, dict):
                    schemas.append((f"{pointer}/{escape(key)}", value))
                else:
                    collect(value, f"{pointer}/{escape(str(key))}")
        elif isinstance(node, list):
            for index, value in enumerate(node):
                collect(value, f"{pointer}/{index}")

    collect(doc.get("paths", {}), "/paths")
    collect({k: v for k, v in doc.get("components", {}).items() if k != "schemas"}, "/components")
    for name, schema in doc.get("components", {}).get("schemas", {}).items():
        schemas.append((f"/components/schemas/{name}", schema))
    bad = []
    for pointer, schema in schemas:
        try:
            jsonschema.Draft202012Validator.check_schema(schema)
        except jsonschema.SchemaError as error:
            bad.append(f"{pointer}: {error.message[:120]}")
    report.check(not bad, f"all {len(schemas)} schemas are valid JSON Schema 2020-12 ({'; '.join(bad) or 'none invalid'})")

    ids, problems, skipped = set(), [], []
    for path, method, op, pointer in spec.operations():
        name = f"{method.upper()} {path}"
        if not op.get("operationId") or op["operationId"] in ids:
            problems.append(f"{name}: no operationId, or a repeated one")
        ids.add(op.get("operationId"))
        roles = [role for requirement in op.get("security", doc.get("security", [])) for role in requirement.get("bearer", [])]
        if len(roles) != 1 or roles[0] not in SCOPES:
            problems.append(f"{name}: the bearer requirement names one scope, read or write ({roles})")
        statuses = set(op.get("responses", {}))
        if not statuses <= KNOWN_STATUSES:
            problems.append(f"{name}: statuses the API never gives: {sorted(statuses - KNOWN_STATUSES)}")
        if not EVERY_OPERATION <= statuses:
            problems.append(f"{name}: missing {sorted(EVERY_OPERATION - statuses)}")
        for status in statuses:
            reason = not_exercised_reason(spec, path, method, status)
            if reason is not None:
                skipped.append(f"{name} {status}")
                if status not in MAY_BE_SKIPPED or not isinstance(reason, str) or not reason.strip():
                    problems.append(f"{name} {status}: x-not-exercised only on 408, 429 or 503, with a reason")
    report.check(not problems, f"every operation: an operationId, one scope, the statuses it can give ({'; '.join(problems) or 'fine'})")
    report.say(f"marked x-not-exercised: {', '.join(skipped) or 'nothing'}")

    # Every object an answer carries is closed and has every field required.
    open_objects: list[str] = []
    seen: set[str] = set()

    def walk(schema, pointer: str) -> None:
        if not isinstance(schema, dict):
            return
        if "$ref" in schema and schema["$ref"].startswith("#/"):
            target = schema["$ref"][1:]
            if target not in seen:
                seen.add(target)
                walk(spec.at(target), target)
        if schema.get("type") == "object" or ("properties" in schema and "$ref" not in schema):
            properties = schema.get("properties", {})
            # A map (the form fields by name) is closed by its key and value rules instead.
            is_map = not properties and isinstance(schema.get("additionalProperties"), dict) and "propertyNames" in schema
            if schema.get("additionalProperties") is not False and not is_map:
                open_objects.append(f"{pointer}: not additionalProperties: false")
            missing = sorted(set(properties) - set(schema.get("required", [])))
            if missing:
                open_objects.append(f"{pointer}: not required: {', '.join(missing)}")
        for name, sub in schema.get("properties", {}).items():
            walk(sub, f"{pointer}/properties/{escape(name)}")
        if isinstance(schema.get("items"), dict):
            walk(schema["items"], f"{pointer}/items")
        for key in ("anyOf", "oneOf", "allOf"):
            for index, sub in enumerate(schema.get(key, [])):
                walk(sub, f"{pointer}/{key}/{index}")

    answers = 0
    for path, method, op, pointer in spec.operations():
        for status, entry in op.get("responses", {}).items():
            response, rpointer = spec.deref(entry, f"{pointer}/responses/{status}")
            for media, content in response.get("content", {}).items():
                if "schema" in content:
                    answers += 1
                    walk(content["schema"], f"{rpointer}/content/{escape(media)}/schema")
    report.check(
        not open_objects,
        f"every object of the {answers} documented answer bodies is closed, every field required "
        f"({'; '.join(open_objects) or 'all'})",
    )


# --- HTTP -------------------------------------------------------------------------------------


class Answer:
    def __init__(self, status: int, headers: http.client.HTTPMessage | None, body: bytes, error: str | None = None):
        self.status = status
        self.headers = headers
        self.body = body
        self.error = error

    def header(self, name: str) -> str | None:
        return self.headers.get(name) if self.headers is not None else None

    def media_type(self) -> str:
        return (self.header("Content-Type") or "").split(";")[0].strip().lower()

    def json(self):
        return json.loads(self.body)


class Server:
    def __init__(self, port: int, tokens: dict[str, str], data_dir: Path, mail_dir: Path):
        self.port = port
        self.tokens = tokens
        self.data_dir = data_dir
        self.mail_dir = mail_dir
        self.clients = 0

    def new_client(self) -> str:
        """An address of a client of its own (a /32 of its own)."""
        self.clients += 1
        return f"10.{(self.clients // 250) % 250}.{self.clients % 250}.1"

    def send(
        self,
        method: str,
        target: str,
        token: str | None = None,
        body: bytes | None = None,
        content_type: str | None = None,
        client: str | None = None,
        authorization: str | None = None,
        query: dict | None = None,
    ) -> Answer:
        """One request on a connection of its own. `token` is a name of `TOKENS` or a literal."""
        if query:
            target = f"{target}?{urllib.parse.urlencode(query)}"
        headers = {"CF-Connecting-IP": client or self.new_client(), "Connection": "close"}
        if authorization is not None:
            headers["Authorization"] = authorization
        elif token is not None:
            headers["Authorization"] = f"Bearer {self.tokens.get(token, token)}"
        if content_type is not None:
            headers["Content-Type"] = content_type
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            connection.request(method, target, body=body, headers=headers)
            response = connection.getresponse()
            return Answer(response.status, response.headers, response.read())
        except (OSError, http.client.HTTPException) as error:
            return Answer(0, None, b"", error=f"{type(error).__name__}: {error}")
        finally:
            connection.close()

    def raw(self, request: bytes, method: str, then: bytes = b"", pause: float = 0.0) -> Answer:
        """Bytes written as they are (a body that stops, a chunked body), then the answer read."""
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=30)
        try:
            sock.sendall(request)
            if pause:
                time.sleep(pause)
            if then:
                sock.sendall(then)
            response = http.client.HTTPResponse(sock, method=method)
            response.begin()
            return Answer(response.status, response.headers, response.read())
        except (OSError, http.client.HTTPException) as error:
            return Answer(0, None, b"", error=f"{type(error).__name__}: {error}")
        finally:
            sock.close()

    def head_of(self, method: str, target: str, token: str, content_type: str, client: str | None = None) -> bytes:
        """A request head for `raw`, without the line that ends it or any body header."""
        return (
            f"{method} {target} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
            f"CF-Connecting-IP: {client or self.new_client()}\r\n"
            f"Authorization: Bearer {self.tokens.get(token, token)}\r\nContent-Type: {content_type}\r\n"
        ).encode()


def chunked(body: bytes, size: int = 1024) -> bytes:
    out = b""
    for at in range(0, len(body), size):
        piece = body[at : at + size]
        out += f"{len(piece):x}\r\n".encode() + piece + b"\r\n"
    return out + b"0\r\n\r\n"


# --- verifying an answer against the file ------------------------------------------------------


def verify(spec: Spec, label: str, path: str, method: str, expected: int, answer: Answer, code: str | None = None):
    """Checks `answer` against what the file documents for (path, method, expected); one line.
    Returns the parsed body (JSON, a list of lines' JSON for JSON lines, text) when it passed."""
    status = str(expected)
    name = f"{method.upper()} {path} {label} -> {expected}"
    if answer.error:
        report.check(False, f"{name}: no answer ({answer.error})")
        return None
    problems: list[str] = []
    if answer.status != expected:
        detail = answer.body[:200].decode("utf-8", "replace")
        report.check(False, f"{name}: got {answer.status} {detail}")
        return None
    response, pointer = spec.response(path, method, status)
    if response is None:
        report.check(False, f"{name}: the file does not document {status} for this operation")
        return None

    for header_name, header in response.get("headers", {}).items():
        header, header_pointer = spec.deref(header, f"{pointer}/headers/{escape(header_name)}")
        value = answer.header(header_name)
        if value is None:
            if header.get("required"):
                problems.append(f"no {header_name} header")
            continue
        if "schema" in header:
            problems += [f"{header_name}: {e}" for e in spec.errors(f"{header_pointer}/schema", value)]

    parsed = None
    content = response.get("content")
    what = ""
    if not content:
        if answer.body:
            problems.append(f"a body where the file documents none ({answer.body[:80]!r})")
        what = "empty body"
    else:
        media = answer.media_type()
        if media not in content:
            problems.append(f"Content-Type {answer.header('Content-Type')!r}, documented: {', '.join(content)}")
        else:
            schema_pointer = f"{pointer}/content/{escape(media)}/schema"
            if media == "application/json":
                try:
                    parsed = answer.json()
                except ValueError:
                    problems.append("the body is not JSON")
                else:
                    problems += spec.errors(schema_pointer, parsed)
                what = f"{media}, valid"
            elif media == "application/x-ndjson":
                lines = answer.body.split(b"\n")
                if answer.body and lines[-1] != b"":
                    problems.append("the last line does not end with a line break")
                parsed = []
                for number, line in enumerate(lines[:-1] if answer.body else [], start=1):
                    try:
                        record = json.loads(line)
                    except ValueError:
                        problems.append(f"line {number} is not JSON")
                        continue
                    parsed.append(record)
                    problems += [f"line {number}: {e}" for e in spec.errors(schema_pointer, record)]
                what = f"{media}, {len(parsed)} lines each valid"
            elif media.startswith("text/"):
                try:
                    parsed = answer.body.decode("utf-8")
                except UnicodeDecodeError:
                    problems.append("the body is not UTF-8")
                else:
                    problems += spec.errors(schema_pointer, parsed)
                what = f"{media}, valid"
            else:
                problems.append(f"no check for the media type {media}")
    if code is not None:
        found = parsed.get("error") if isinstance(parsed, dict) else None
        if found != code:
            problems.append(f"error {found!r}, expected {code!r}")
        what += f", error {code}"
    if report.check(not problems, f"{name}: {'; '.join(problems) if problems else what}"):
        spec.exercised.add((path, method, status))
        if isinstance(parsed, dict) and expected >= 400 and "error" in parsed:
            spec.codes_exercised.add((path, method, status, parsed["error"]))
        return parsed if parsed is not None else ""
    return None


# --- signupd ----------------------------------------------------------------------------------


def write_config(path: Path, data_dir: Path, mail_dir: Path, port: int, tokens: dict[str, Path], webhook: tuple[int, Path] | None) -> None:
    entries = "".join(
        f'[[api_tokens]]\nname = "{name}"\ntoken_file = "{file}"\nscopes = {json.dumps(list(TOKENS[name]))}\n'
        for name, file in tokens.items()
    )
    hooks = ""
    if webhook is not None:
        hook_port, secret = webhook
        hooks = f'[[webhooks]]\nname = "crm"\nurl = "http://127.0.0.1:{hook_port}/hooks/signupd"\nsecret_file = "{secret}"\n'
    path.write_text(
        config_toml(
            port,
            data_dir,
            mail_dir,
            server=f'request_timeout = "{REQUEST_TIMEOUT_SECS}s"\n',
            mail="max_mails_per_hour = 2\nburst = 2\n",
            sections=hooks + entries,
        )
    )


def start(signupd: str, work: Path, name: str, with_tokens: bool) -> tuple[Server, object]:
    base = work / name
    base.mkdir()
    data_dir, mail_dir = base / "data", base / "mail"
    token_files: dict[str, Path] = {}
    tokens: dict[str, str] = {}
    if with_tokens:
        for token_name in TOKENS:
            tokens[token_name] = f"{token_name}-{secrets.token_urlsafe(32)}"
            file = base / f"api_token_{token_name}"
            file.write_text(tokens[token_name] + "\n")
            file.chmod(0o600)
            token_files[token_name] = file
    secret = base / "webhook_crm"
    secret.write_text("whsec_" + base64.b64encode(secrets.token_bytes(32)).decode() + "\n")
    secret.chmod(0o600)
    port = free_port()
    # Nothing listens there: each delivery fails, and the event stays queued for its retry.
    closed = free_port()
    config = base / "signupd.toml"
    write_config(config, data_dir, mail_dir, port, token_files, (closed, secret))
    server = Server(port, tokens, data_dir, mail_dir)
    try:
        process = serve(processes, signupd, config, base / "signupd.log", lambda: server.send("GET", "/readyz").status == 200, name)
    except NotReady as error:
        raise Stop(str(error)) from None
    report.check(True, f"signupd ({name}{', four API tokens' if with_tokens else ', no [[api_tokens]]'}) is ready on 127.0.0.1:{port}")
    return server, process


def signup(server: Server, address: str, lists: list[str], **fields: str) -> int:
    body = urllib.parse.urlencode([("email", address), ("consent", "yes"), *[("list", x) for x in lists], *fields.items()]).encode()
    return server.send("POST", "/api/signup", body=body, content_type="application/x-www-form-urlencoded").status


def confirm_token(mail_dir: Path, address: str) -> str | None:
    if not mail_dir.is_dir():
        return None
    for file in sorted(mail_dir.iterdir()):
        if not file.is_file():
            continue
        try:
            message = email.message_from_bytes(file.read_bytes(), policy=email.policy.default)
        except Exception:  # a file being written
            continue
        if address not in str(message.get("To", "")):
            continue
        for part in message.walk():
            if part.get_content_type() == "text/plain":
                found = re.search(r"/confirm\?token=([A-Za-z0-9_-]{43})", part.get_content())
                if found:
                    return found.group(1)
    return None


def database(server: Server) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{server.data_dir / 'signupd.sqlite3'}?mode=ro", uri=True, timeout=5)


def wait_for(predicate, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if predicate():
                report.check(True, what)
                return
        except sqlite3.Error:
            pass
        time.sleep(0.2)
    raise Stop(f"{what}: not within {timeout:.0f} s")


def one(conn: sqlite3.Connection, sql: str, *args):
    row = conn.execute(sql, args).fetchone()
    return row[0] if row else None


def seed(server: Server) -> None:
    """Step 2: a confirmed row with a queued event, a mailed pending row, a queued mail."""
    check = report.check
    check(signup(server, "ann@example.com", ["news"], source="homepage", tags="beta", first_name="Ann") == 303, "POST /api/signup: ann@example.com to news (source, tag, a field) is accepted (303)")
    wait_for(lambda: confirm_token(server.mail_dir, "ann@example.com") is not None, "the confirmation mail to ann@example.com is in the mail directory")
    token = confirm_token(server.mail_dir, "ann@example.com")
    status = server.send("POST", "/api/confirm", body=urllib.parse.urlencode({"token": token}).encode(), content_type="application/x-www-form-urlencoded").status
    check(status == 303, f"POST /api/confirm with the mail's token confirms ann@example.com ({status})")
    check(signup(server, "bob@example.com", ["news"]) == 303, "POST /api/signup: bob@example.com to news is accepted (303)")
    wait_for(lambda: confirm_token(server.mail_dir, "bob@example.com") is not None, "the confirmation mail to bob@example.com is in the mail directory (the budget's second)")
    check(signup(server, "cat@example.com", ["news", "other"]) == 303, "POST /api/signup: cat@example.com to news and other is accepted (303)")
    with database(server) as conn:
        wait_for(
            lambda: one(conn, "SELECT count(*) FROM subscribers WHERE email = 'ann@example.com' AND status = 'confirmed'") == 1
            and one(conn, "SELECT count(*) FROM webhook_deliveries") >= 1
            and one(conn, "SELECT count(*) FROM subscribers WHERE email = 'bob@example.com' AND confirmation_sent_at IS NOT NULL") == 1
            and one(conn, "SELECT count(*) FROM subscribers WHERE email = 'cat@example.com'") == 2
            and one(conn, "SELECT count(*) FROM outbox o JOIN subscribers s ON s.id = o.subscriber_id WHERE s.email = 'cat@example.com'") >= 1,
            "the database holds ann confirmed with a queued webhook event, bob pending and mailed, cat's mail queued over the budget",
        )


# --- step 3: every status of every operation --------------------------------------------------

SUBSCRIBERS, SUPPRESSIONS, EXPORT, STATS, IMPORT = (
    "/api/v1/subscribers",
    "/api/v1/suppressions",
    "/api/v1/export",
    "/api/v1/stats",
    "/api/v1/import",
)


def scope_of(spec: Spec, path: str, method: str) -> str:
    op, _ = spec.operation(path, method)
    return op.get("security", spec.doc.get("security"))[0]["bearer"][0]


def good_request(path: str, method: str) -> dict:
    """A request that each operation answers 200 with the right token (a harmless one)."""
    return {
        (SUBSCRIBERS, "get"): {"query": {"email": "ann@example.com"}},
        (SUBSCRIBERS, "delete"): {"query": {"email": "nobody@example.com"}},
        (SUPPRESSIONS, "post"): {"body": b'{"email": "gus@example.com"}', "content_type": "application/json"},
        (EXPORT, "get"): {},
        (STATS, "get"): {},
        (IMPORT, "post"): {
            "query": {"list": "other", "dry_run": "true", "consent_text": "Yes, please."},
            "body": b'{"email": "hal@example.com"}\n',
            "content_type": "application/x-ndjson",
        },
    }[(path, method)]


def call(server: Server, path: str, method: str, token: str | None, **overrides) -> Answer:
    request = {**good_request(path, method), **overrides}
    return server.send(
        method.upper(),
        path,
        token=token,
        body=request.get("body"),
        content_type=request.get("content_type"),
        query=request.get("query"),
        client=request.get("client"),
        authorization=request.get("authorization"),
    )


def successes(spec: Spec, server: Server) -> None:
    """200: each operation with data of every kind, and a few checks of what it means."""
    check = report.check
    ok = lambda label, path, method, answer: verify(spec, label, path, method, 200, answer)  # noqa: E731

    # Writes first, so that the reads see every kind of row.
    dry = ok("dry run as n8n (read+write)", IMPORT, "post", call(server, IMPORT, "post", "n8n"))
    if dry is not None:
        check((dry["dry_run"], dry["imported"]) == (True, 1), f"the dry run would import 1 and says dry_run ({dry['dry_run']}, {dry['imported']})")
    lines = "\n".join(
        [
            json.dumps({"email": "dan@example.com", "confirmed_at": "2025-03-01T09:30:00Z", "consent_text": "Yes, the old newsletter.", "consent_version": "legacy-1", "source": "crm", "tags": ["vip"], "name": "Dan"}),
            "",
            "this line is not JSON",
            json.dumps({"email": "not-an-address"}),
            json.dumps({"email": "cat@example.com", "consent_text": "Yes, please."}),
        ]
    ).encode() + b"\n"
    imported = ok("as writer, 5 lines", IMPORT, "post", call(server, IMPORT, "post", "writer", query={"list": "other"}, body=lines))
    if imported is not None:
        counts = (imported["dry_run"], imported["imported"], imported["existing"], imported["suppressed"], imported["refused"], len(imported["refusals"]))
        check(counts == (False, 1, 1, 0, 2, 2), f"the import: 1 imported, cat existing, 2 refused with their lines (got {counts}: {imported['refusals']})")
        check(not any("not-an-address" in line for line in imported["refusals"]), "a refusal never repeats an address that does not parse")
    for content_type in ("application/jsonl", "application/json-lines; charset=utf-8"):
        ok(f"as writer, Content-Type {content_type}", IMPORT, "post", call(server, IMPORT, "post", "writer", content_type=content_type))

    eve = ok("as writer, news, not_me", SUPPRESSIONS, "post", call(server, SUPPRESSIONS, "post", "writer", body=b'{"email": "eve@example.com", "list": "news", "reason": "not_me"}'))
    if eve is not None:
        check((eve["suppressed"], eve["reason"], eve["removed"]) == (["news"], "not_me", []), f"eve is suppressed on news as not_me, no row removed ({eve})")
    fay = ok("as n8n, every list, nulls", SUPPRESSIONS, "post", call(server, SUPPRESSIONS, "post", "n8n", body=b'{"email": "fay@example.com", "list": null, "reason": null}', content_type="application/json; charset=utf-8"))
    if fay is not None:
        check((fay["suppressed"], fay["reason"]) == (["news", "other"], "unsubscribed"), f"without list, fay is suppressed on every list, as unsubscribed ({fay})")
    cat = ok("as writer, cat on other", SUPPRESSIONS, "post", call(server, SUPPRESSIONS, "post", "writer", body=b'{"email": "cat@example.com", "list": "other"}'))
    if cat is not None:
        check(cat["removed"] == [{"list": "other", "reason": "unsubscribed"}], f"suppressing cat on other removes its row there ({cat['removed']})")

    bob = ok("bob on news as writer", SUBSCRIBERS, "delete", call(server, SUBSCRIBERS, "delete", "writer", query={"email": "bob@example.com", "list": "news"}))
    if bob is not None:
        check(bob["removed"] == [{"list": "news", "reason": "not_me"}], f"bob, pending, is removed from news as not_me ({bob['removed']})")
    again = ok("bob again as n8n, reason unsubscribed", SUBSCRIBERS, "delete", call(server, SUBSCRIBERS, "delete", "n8n", query={"email": "bob@example.com", "reason": "unsubscribed"}))
    if again is not None:
        check(again["removed"] == [], f"removing bob again finds nothing and is still 200 ({again['removed']})")

    # Reads.
    ann = ok("ann as reader", SUBSCRIBERS, "get", call(server, SUBSCRIBERS, "get", "reader"))
    if ann is not None:
        row = ann["rows"][0] if ann["rows"] else {}
        check(
            (len(ann["rows"]), row.get("status"), row.get("confirm_method"), row.get("source"), row.get("tags"), row.get("fields"), len(ann["queued_events"]) >= 1)
            == (1, "confirmed", "button", "homepage", "beta", {"first_name": "Ann"}, True),
            f"ann: one confirmed row (button, source homepage, tag beta, its field) and a queued event ({ann['rows']}, {len(ann['queued_events'])} events)",
        )
    ann_other = ok("ann, list=other, as ops (admin)", SUBSCRIBERS, "get", call(server, SUBSCRIBERS, "get", "ops", query={"email": "ann@example.com", "list": "other"}))
    if ann_other is not None:
        check(ann_other["rows"] == [] and ann_other["queued_events"] == [], "with list=other, nothing of news is shown")
    cat = ok("cat as n8n", SUBSCRIBERS, "get", call(server, SUBSCRIBERS, "get", "n8n", query={"email": "CAT@example.com"}))
    if cat is not None:
        check(
            len(cat["queued_mail"]) >= 1 and [s["list"] for s in cat["suppressions"]] == ["other"] and [r["list"] for r in cat["rows"]] == ["news"],
            f"cat: its queued mail, its row on news and its suppression on other ({len(cat['queued_mail'])} mails)",
        )
    bob = ok("bob as reader", SUBSCRIBERS, "get", call(server, SUBSCRIBERS, "get", "reader", query={"email": "bob@example.com"}))
    if bob is not None:
        check(bob["rows"] == [] and bob["suppressions"][0]["reason"] == "not_me", "bob: no row, suppressed on news as not_me")
    dan = ok("dan (imported) as reader", SUBSCRIBERS, "get", call(server, SUBSCRIBERS, "get", "reader", query={"email": "dan@example.com", "list": "other"}))
    if dan is not None and dan["rows"]:
        check(dan["rows"][0]["confirm_method"] == "import" and dan["rows"][0]["consent_text"] == "Yes, the old newsletter.", "dan: imported, with the consent text of the line")
    nobody = ok("an address nothing is held about", SUBSCRIBERS, "get", call(server, SUBSCRIBERS, "get", "reader", query={"email": "nobody@example.com"}))
    if nobody is not None:
        check(all(nobody[key] == [] for key in ("rows", "signups_waiting", "queued_mail", "queued_events", "suppressions")), "an unknown address: 200 with empty arrays")

    exported = ok("as reader (confirmed)", EXPORT, "get", call(server, EXPORT, "get", "reader"))
    if exported is not None:
        emails = sorted(record["email"] for record in exported)
        check(emails == ["ann@example.com", "dan@example.com"], f"the default export is the confirmed rows ({emails})")
        check(
            all((record["unsubscribe_url"] or "").startswith(f"http://127.0.0.1:{server.port}/api/unsubscribe?token=") for record in exported),
            "each confirmed row carries an unsubscribe link under public_url",
        )
    everything = ok("status=all as ops", EXPORT, "get", call(server, EXPORT, "get", "ops", query={"status": "all", "since": "2020-01-01"}))
    if everything is not None:
        pending = [record for record in everything if record["status"] == "pending"]
        check(len(everything) == 3 and len(pending) == 1 and pending[0]["unsubscribe_url"] is None, f"status=all: 3 rows, the pending one without a link ({len(everything)})")
    ok("list=other, status=confirmed, since RFC 3339 with an offset", EXPORT, "get", call(server, EXPORT, "get", "n8n", query={"list": "other", "status": "confirmed", "since": "2020-01-01T00:00:00+02:00"}))
    empty = ok("since a future date (nothing)", EXPORT, "get", call(server, EXPORT, "get", "reader", query={"status": "pending", "since": "2999-01-01"}))
    if empty is not None:
        check(empty == [], "an export that selects nothing is an empty body")

    stats = ok("as reader", STATS, "get", call(server, STATS, "get", "reader"))
    ok("as ops (admin)", STATS, "get", call(server, STATS, "get", "ops"))
    if stats is not None:
        lists = {entry["id"]: entry for entry in stats["lists"]}
        check(list(lists) == ["news", "other"], f"the figures have each list, in order ({list(lists)})")
        if "other" in lists and "news" in lists:
            check(
                (lists["other"]["imported"], lists["other"]["signups"]["last_7d"], lists["news"]["confirmed"]) == (1, 0, 1),
                "the imported row counts as imported, not as a signup (other: imported 1, signups 0; news: confirmed 1)",
            )
        webhook = [queue for queue in stats["queues"] if queue["name"] == "webhook"]
        check(webhook and webhook[0]["depth"] >= 1 and webhook[0]["oldest_age_secs"] is not None, f"the webhook queue holds ann's event ({webhook})")
        check(stats["mail_budget"]["max_per_hour"] == 2, "the mail budget is the configured one")


def refusals(spec: Spec, server: Server) -> None:
    """401, 403, 400 (each code), 405, 413, 415, 408."""
    ops = list((path, method) for path, method, _, _ in spec.operations())

    for path, method in ops:
        verify(spec, "without Authorization", path, method, 401, call(server, path, method, None))
        verify(spec, "with a wrong token", path, method, 401, call(server, path, method, "wrong-" + "x" * 40))
        wrong = "writer" if scope_of(spec, path, method) == "read" else "reader"
        verify(spec, f"as {wrong} (no {scope_of(spec, path, method)} scope)", path, method, 403, call(server, path, method, wrong), code="forbidden")
    reader = server.tokens["reader"]
    for label, authorization in [
        ("Basic credentials", "Basic " + base64.b64encode(f"reader:{reader}".encode()).decode()),
        ("Bearer and nothing", "Bearer "),
        ("the token without a scheme", reader),
        ("the token cut by one character", f"Bearer {reader[:-1]}"),
        ("the token with a character more", f"Bearer {reader}x"),
    ]:
        verify(spec, label, STATS, "get", 401, call(server, STATS, "get", None, authorization=authorization))

    # Every 400 code each operation documents.
    bad = lambda label, path, method, code, **overrides: verify(spec, label, path, method, 400, call(server, path, method, "n8n", **overrides), code=code)  # noqa: E731
    bad("without email", SUBSCRIBERS, "get", "invalid_email", query={"list": "news"})
    bad("email=not-an-address", SUBSCRIBERS, "get", "invalid_email", query={"email": "not-an-address"})
    bad("an unknown list", SUBSCRIBERS, "get", "unknown_list", query={"email": "ann@example.com", "list": "nope"})
    bad("without email", SUBSCRIBERS, "delete", "invalid_email", query={})
    bad("an unknown list", SUBSCRIBERS, "delete", "unknown_list", query={"email": "ann@example.com", "list": "nope"})
    bad("reason=bounced", SUBSCRIBERS, "delete", "invalid_reason", query={"email": "ann@example.com", "reason": "bounced"})
    for label, body in [
        ("a body that is not JSON", b"email=ann@example.com"),
        ("a JSON array", b'["ann@example.com"]'),
        ("email a number", b'{"email": 5}'),
        ("an unknown field", b'{"email": "ann@example.com", "name": "Ann"}'),
    ]:
        bad(label, SUPPRESSIONS, "post", "invalid_body", body=body)
    verify(
        spec, "a broken chunked body", SUPPRESSIONS, "post", 400,
        server.raw(server.head_of("POST", SUPPRESSIONS, "writer", "application/json") + b"Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n", "POST"),
        code="invalid_body",
    )
    bad("no email", SUPPRESSIONS, "post", "invalid_email", body=b"{}")
    bad("email not an address", SUPPRESSIONS, "post", "invalid_email", body=b'{"email": "ann"}')
    bad("an unknown list", SUPPRESSIONS, "post", "unknown_list", body=b'{"email": "ann@example.com", "list": "nope"}')
    bad("reason bounced", SUPPRESSIONS, "post", "invalid_reason", body=b'{"email": "ann@example.com", "reason": "bounced"}')
    bad("an unknown list", EXPORT, "get", "unknown_list", query={"list": "nope"})
    bad("status=everything", EXPORT, "get", "invalid_status", query={"status": "everything"})
    bad("since=yesterday", EXPORT, "get", "invalid_since", query={"since": "yesterday"})
    bad("without list", IMPORT, "post", "unknown_list", query={"consent_text": "Yes."})
    bad("an unknown list", IMPORT, "post", "unknown_list", query={"list": "nope", "consent_text": "Yes."})
    bad("an empty consent_text", IMPORT, "post", "invalid_consent_text", query={"list": "news", "consent_text": ""})
    bad("a consent_text with a line break", IMPORT, "post", "invalid_consent_text", query={"list": "news", "consent_text": "Yes.\nAnd more."})
    bad("consent_version with a space", IMPORT, "post", "invalid_consent_version", query={"list": "news", "consent_text": "Yes.", "consent_version": "v 2"})
    verify(
        spec, "a broken chunked body", IMPORT, "post", 400,
        server.raw(server.head_of("POST", f"{IMPORT}?list=news&dry_run=1&consent_text=Yes", "writer", "application/x-ndjson") + b"Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n", "POST"),
        code="invalid_body",
    )
    with database(server) as conn:
        report.check(
            (one(conn, "SELECT count(*) FROM suppressions"), one(conn, "SELECT count(*) FROM subscribers")) == (5, 3),
            "the refused calls changed nothing (5 suppressions: eve, fay twice, cat, bob; 3 rows: ann, cat, dan)",
        )

    # 405: another method on each operation's path, answered before any token is looked at.
    for (path, method), other in {
        (SUBSCRIBERS, "get"): "PUT",
        (SUBSCRIBERS, "delete"): "PATCH",
        (SUPPRESSIONS, "post"): "GET",
        (EXPORT, "get"): "POST",
        (STATS, "get"): "DELETE",
        (IMPORT, "post"): "GET",
    }.items():
        answer = server.send(other, path, token="ops")
        verify(spec, f"({other} instead)", path, method, 405, answer, code="method_not_allowed")
    head = server.send("HEAD", STATS, token="ops")
    report.check(head.status == 405 and not head.body, f"HEAD {STATS} -> 405 with no body, as the file says of HEAD ({head.status})")

    # 413, declared and as it arrives; 415.
    big = b'{"email": "ann@example.com", "list": "' + b"n" * MAX_SUPPRESSION_BODY + b'"}'
    verify(spec, f"a {len(big)}-byte body", SUPPRESSIONS, "post", 413, call(server, SUPPRESSIONS, "post", "writer", body=big), code="payload_too_large")
    verify(
        spec, f"a {len(big)}-byte chunked body", SUPPRESSIONS, "post", 413,
        server.raw(server.head_of("POST", SUPPRESSIONS, "writer", "application/json") + b"Transfer-Encoding: chunked\r\n\r\n" + chunked(big), "POST"),
        code="payload_too_large",
    )
    verify(
        spec, f"Content-Length {MAX_IMPORT_BODY + 1}", IMPORT, "post", 413,
        server.raw(server.head_of("POST", f"{IMPORT}?list=news&consent_text=Yes", "writer", "application/x-ndjson") + f"Content-Length: {MAX_IMPORT_BODY + 1}\r\n\r\n".encode(), "POST"),
        code="payload_too_large",
    )
    verify(spec, "Content-Type text/plain", SUPPRESSIONS, "post", 415, call(server, SUPPRESSIONS, "post", "writer", content_type="text/plain"), code="unsupported_media_type")
    verify(spec, "no Content-Type", SUPPRESSIONS, "post", 415, call(server, SUPPRESSIONS, "post", "writer", content_type=None), code="unsupported_media_type")
    verify(spec, "Content-Type application/json", IMPORT, "post", 415, call(server, IMPORT, "post", "writer", content_type="application/json"), code="unsupported_media_type")
    verify(spec, "Content-Type text/csv", IMPORT, "post", 415, call(server, IMPORT, "post", "writer", content_type="text/csv", body=b"email\nann@example.com\n"), code="unsupported_media_type")

    # 408: a body that stops half-way.
    for path, target, content_type in [
        (SUPPRESSIONS, SUPPRESSIONS, "application/json"),
        (IMPORT, f"{IMPORT}?list=news&consent_text=Yes", "application/x-ndjson"),
    ]:
        started = time.monotonic()
        answer = server.raw(server.head_of("POST", target, "writer", content_type) + b'Content-Length: 60\r\n\r\n{"email": "ann@', "POST")
        waited = time.monotonic() - started
        if verify(spec, f"a body that stops after 15 of 60 bytes (answered after {waited:.1f} s)", path, "post", 408, answer) is not None:
            report.check(
                (answer.header("Connection") or "").lower() == "close" and waited >= REQUEST_TIMEOUT_SECS - 0.5,
                f"POST {path}: the 408 comes after server.request_timeout and closes the connection",
            )


def rate_limited(spec: Spec, server: Server) -> None:
    """429: 20 failed authentications from one client, then every call it makes without a valid
    token; a valid token from that client is never refused for them."""
    client = "192.0.2.77"
    wrong = "wrong-" + "y" * 40
    statuses = [call(server, STATS, "get", wrong, client=client).status for _ in range(20)]
    report.check(statuses == [401] * 20, f"20 wrong tokens from one client are each answered 401 ({sorted(set(statuses))})")
    for path, method, _, _ in spec.operations():
        answer = call(server, path, method, wrong, client=client)
        verify(spec, "a wrong token from that client after 20", path, method, 429, answer, code="rate_limited")
    for path, method, _, _ in spec.operations():
        verify(spec, "with the right token from that client", path, method, 200, call(server, path, method, "n8n", client=client))
    other = call(server, STATS, "get", "reader")
    report.check(other.status == 200, f"another client with the right token is not limited ({other.status})")


def unavailable(spec: Spec, server: Server) -> None:
    """503: another connection holds SQLite's write lock."""
    blocker = sqlite3.connect(server.data_dir / "signupd.sqlite3", timeout=5, isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")
    try:
        for path, method, _, _ in spec.operations():
            token = "writer" if scope_of(spec, path, method) == "write" else "reader"
            overrides = {}
            if (path, method) == (IMPORT, "post"):
                overrides = {"query": {"list": "other", "consent_text": "Yes, please."}}
            started = time.monotonic()
            answer = call(server, path, method, token, **overrides)
            verify(spec, f"while another connection holds the write lock ({time.monotonic() - started:.1f} s)", path, method, 503, answer, code="storage_unavailable")
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    answer = call(server, STATS, "get", "reader")
    report.check(answer.status == 200, f"once the lock is gone the API answers again ({answer.status})")


def unknown_path(spec: Spec, server: Server) -> None:
    answer = server.send("GET", "/api/v1/subscriber", token="ops")
    problems = [] if answer.status == 404 and answer.media_type() == "application/json" else [f"{answer.status} {answer.header('Content-Type')}"]
    if not problems:
        body = answer.json()
        problems = spec.errors("/components/schemas/Error", body)
        if body.get("error") != "not_found":
            problems.append(f"error {body.get('error')!r}")
    report.check(not problems, f"GET /api/v1/subscriber (not a documented path) -> 404 JSON not_found, as the file's description says ({'; '.join(problems) or 'valid'})")


def audit(server: Server) -> None:
    with database(server) as conn:
        rows = conn.execute("SELECT actor, action FROM audit_log").fetchall()
        hashes = [row[0] for row in conn.execute("SELECT address_hash FROM audit_log WHERE address_hash IS NOT NULL")]
    actors = {actor for actor, _ in rows}
    actions = {action for _, action in rows}
    report.check(
        {"reader", "writer", "n8n", "ops"} <= actors and {"lookup", "remove", "suppress", "export", "stats", "import"} <= actions,
        f"the audit log names each token as the actor of its calls, and each action ({sorted(actors)}, {sorted(actions)})",
    )
    report.check(("n8n", "import") not in rows, "a dry-run import leaves no audit entry")
    report.check(all(re.fullmatch(r"[0-9a-f]{64}", value) for value in hashes) and hashes, "the audit log names an address by its keyed hash only")


def coverage(spec: Spec) -> None:
    """Step 4."""
    missing, skipped = [], []
    for path, method, op, _ in spec.operations():
        for status in op["responses"]:
            if (path, method, status) in spec.exercised:
                continue
            reason = not_exercised_reason(spec, path, method, status)
            if reason is not None:
                skipped.append(f"{method.upper()} {path} {status} ({reason})")
            else:
                missing.append(f"{method.upper()} {path} {status}")
    total = sum(len(op["responses"]) for _, _, op, _ in spec.operations())
    report.check(not missing, f"coverage: {total - len(missing) - len(skipped)} of {total} documented (path, method, status) answered for real (not: {', '.join(missing) or 'none'})")
    if skipped:
        report.say(f"not exercised, as the file says: {'; '.join(skipped)}")
    codes_missing, codes_total = [], 0
    for path, method, op, _ in spec.operations():
        for status in op["responses"]:
            if status == "400":
                for code in spec.error_codes(path, method, status):
                    codes_total += 1
                    if (path, method, status, code) not in spec.codes_exercised:
                        codes_missing.append(f"{method.upper()} {path} 400 {code}")
    report.check(not codes_missing, f"coverage: each of the {codes_total} documented 400 error codes answered for real (not: {', '.join(codes_missing) or 'none'})")


def not_served(spec: Spec, server: Server) -> None:
    """Step 5: no [[api_tokens]], no API."""
    for path, method, _, _ in spec.operations():
        answer = call(server, path, method, "n8n-" + "z" * 40)
        verify(spec, "without any [[api_tokens]]", path, method, 404, answer)


def run(signupd: str, work: Path, spec_path: Path) -> None:
    spec = Spec(spec_path)
    lint(spec)
    server, process = start(signupd, work, "api", with_tokens=True)
    seed(server)
    successes(spec, server)
    refusals(spec, server)
    unknown_path(spec, server)
    rate_limited(spec, server)
    unavailable(spec, server)
    audit(server)
    processes.stop(process)
    report.check(process.returncode == 0, f"signupd stops on SIGTERM with 0 ({process.returncode})")
    bare, bare_process = start(signupd, work, "no-api", with_tokens=False)
    not_served(spec, bare)
    processes.stop(bare_process)
    coverage(spec)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--signupd", default=str(ROOT / "target" / "debug" / "signupd"))
    parser.add_argument("--spec", default=str(SPEC_PATH), help="the OpenAPI file (default: docs/openapi.yaml)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args()
    signupd = str(Path(args.signupd).resolve())
    version = subprocess.run([signupd, "--version"], capture_output=True, text=True)
    report.say(f"{args.spec} against {signupd} ({version.stdout.strip() or version.stderr.strip()})")
    work = Path(tempfile.mkdtemp(prefix="signupd-openapi-"))
    try:
        run(signupd, work, Path(args.spec))
    except Stop as stop:
        report.check(False, f"stopped: {stop}")
    finally:
        processes.stop_all()
    if report.failed:
        report.say(f"{report.passed} checks passed, {len(report.failed)} FAILED; logs kept in {work}")
        return 1
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    report.say(f"{report.passed} checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
