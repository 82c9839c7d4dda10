#!/usr/bin/env python3
"""A fake listmonk for the package test: the sender of the destination in docs/operations.md
("Handing subscribers to your sender"), on 127.0.0.1.

It answers the calls signupd makes to listmonk (src/outbound/destinations/listmonk.rs) as listmonk's API
does, in memory, with one list (id 3, "Newsletter", double opt-in):

    GET  /api/lists/{id}             {"data": {"id", "name", "optin", "subscriber_count", ...}};
                                     400 for an id it does not have
    POST /api/subscribers            200 {"data": subscriber}; 409 for an address it holds
                                     (case aside); 400 for a body without an address
    GET  /api/subscribers?search=RE  {"data": {"results": [...], "total", ...}}: RE is matched
                                     as a case-insensitive regular expression over name and email
    PUT  /api/subscribers/lists      {"data": true}: action add (with status), remove, unsubscribe

Every call must carry `Authorization: token USER:TOKEN`; any other (or none) is answered, as
listmonk does, 403 {"message": "invalid API credentials"} (never 401). One line per request it
accepted on standard output, flushed: the method and the path (with the query), and for a
subscriber creation the email, the list ids and preconfirm_subscriptions, e.g.

    POST /api/subscribers email=reader@example.net lists=[3] preconfirm_subscriptions=true

A refused request is logged as "refused STATUS METHOD PATH: MESSAGE", so the two never match the
same pattern. Python 3 standard library only.

    fake_listmonk.py --port PORT --user USER --token TOKEN

listens on 127.0.0.1:PORT until killed.
"""

import argparse
import datetime
import http.server
import json
import re
import sys
import threading
import urllib.parse

LIST = {"id": 3, "uuid": "5e3a3b30-6d4c-4f52-9a5b-3f1c2f0c7a03", "name": "Newsletter", "type": "public",
        "optin": "double", "tags": [], "description": ""}
lock = threading.Lock()
subscribers = []  # dicts: id, email, name, status, attribs, lists {list id: subscription status}


def log(line):
    with lock:
        print(line, flush=True)


def now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat()


def flag(value):
    return json.dumps(value)


def subscriber_json(subscriber):
    lists = [dict(LIST, subscription_status=status) for list_id, status in subscriber["lists"].items()
             if list_id == LIST["id"]]
    return {key: subscriber[key] for key in ("id", "uuid", "email", "name", "status", "attribs",
                                             "created_at", "updated_at")} | {"lists": lists}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-listmonk"
    expected = ""

    def log_message(self, *args):
        pass

    def answer(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def refuse(self, status, message):
        log(f"refused {status} {self.command} {self.path}: {message}")
        self.answer(status, {"message": message})

    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            value = json.loads(raw or b"null")
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    def route(self):
        body = self.body() if self.command in ("POST", "PUT") else {}
        if self.headers.get("Authorization") != self.expected:
            return self.refuse(403, "invalid API credentials")
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query)
        if body is None:
            return self.refuse(400, "invalid JSON")
        m = re.fullmatch(r"/api/lists/([^/]+)", url.path)
        if self.command == "GET" and m:
            if m.group(1) != str(LIST["id"]):
                return self.refuse(400, "List not found.")
            log(f"GET {self.path}")
            with lock:
                count = sum(1 for s in subscribers if s["lists"].get(LIST["id"], "unsubscribed") != "unsubscribed")
            return self.answer(200, {"data": LIST | {"subscriber_count": count}})
        if self.command == "POST" and url.path == "/api/subscribers":
            return self.create(body)
        if self.command == "GET" and url.path == "/api/subscribers":
            try:
                pattern = re.compile(query.get("search", [""])[0], re.IGNORECASE)
            except re.error:
                return self.refuse(400, "invalid search pattern")
            with lock:
                found = [subscriber_json(s) for s in subscribers if pattern.search(s["name"]) or pattern.search(s["email"])]
            log(f"GET {self.path}")
            per_page = int(query.get("per_page", ["20"])[0] or 20)
            return self.answer(200, {"data": {"results": found[:per_page], "query": "", "total": len(found),
                                              "per_page": per_page, "page": 1}})
        if self.command == "PUT" and url.path == "/api/subscribers/lists":
            return self.change_lists(body)
        return self.refuse(404, "Unknown endpoint.")

    def create(self, body):
        email = body.get("email")
        lists = body.get("lists") or []
        preconfirm = body.get("preconfirm_subscriptions") is True
        if not isinstance(email, str) or "@" not in email:
            return self.refuse(400, "Invalid email.")
        if not isinstance(lists, list) or not all(isinstance(i, int) for i in lists):
            return self.refuse(400, "Invalid lists.")
        with lock:
            if any(s["email"].lower() == email.lower() for s in subscribers):
                exists = True
            else:
                exists = False
                stamp = now()
                subscriber = {
                    "id": len(subscribers) + 1, "uuid": f"00000000-0000-4000-8000-{len(subscribers) + 1:012d}",
                    "email": email, "name": body.get("name") or email.split("@")[0],
                    "status": body.get("status") or "enabled", "attribs": body.get("attribs") or {},
                    "created_at": stamp, "updated_at": stamp,
                    "lists": {i: ("confirmed" if preconfirm or LIST["optin"] != "double" else "unconfirmed")
                              for i in lists if i == LIST["id"]},
                }
                subscribers.append(subscriber)
        if exists:
            return self.refuse(409, "E-mail already exists.")
        log(f"POST {self.path} email={email} lists={json.dumps(lists, separators=(',', ':'))} "
            f"preconfirm_subscriptions={flag(preconfirm)}")
        return self.answer(200, {"data": subscriber_json(subscriber)})

    def change_lists(self, body):
        ids, targets, action = body.get("ids") or [], body.get("target_list_ids") or [], body.get("action")
        status = body.get("status")
        if action not in ("add", "remove", "unsubscribe") or not ids or not targets:
            return self.refuse(400, "Invalid action or IDs.")
        if action == "add" and status not in ("confirmed", "unconfirmed", "unsubscribed"):
            return self.refuse(400, "Invalid subscription status.")
        with lock:
            for s in subscribers:
                if s["id"] not in ids:
                    continue
                for target in targets:
                    if target != LIST["id"]:
                        continue
                    if action == "add":
                        s["lists"][target] = status
                    elif action == "remove":
                        s["lists"].pop(target, None)
                    elif target in s["lists"]:
                        s["lists"][target] = "unsubscribed"
        log(f"PUT {self.path} ids={json.dumps(ids, separators=(',', ':'))} action={action}"
            + (f" status={status}" if status else "")
            + f" target_list_ids={json.dumps(targets, separators=(',', ':'))}")
        return self.answer(200, {"data": True})

    do_GET = do_POST = do_PUT = do_DELETE = route


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--user", required=True)
    parser.add_argument("--token", required=True)
    args = parser.parse_args()
    Handler.expected = f"token {args.user}:{args.token}"
    server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    log(f"fake listmonk listening on 127.0.0.1:{args.port}")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
