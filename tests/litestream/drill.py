#!/usr/bin/env python3
"""The disaster-recovery drill: signupd under load, replicated by Litestream, lost, restored.

Run by .ci/litestream (which installs Litestream and builds signupd first); by hand:

    python3 tests/litestream/drill.py --signupd target/debug/signupd

What it does, printing each check (exit 1 on the first failed one):

1. Checks packaging/litestream.yml with the installed Litestream: the file replica as shipped,
   and the commented S3 alternative once uncommented.
2. Starts signupd on a temporary data directory (127.0.0.1, a free port, file mail, rate limits
   out of the way) and sends signups from several clients; Litestream is started while that load
   runs, with the shipped configuration pointed at temporary paths and shorter intervals.
3. Stops the load and waits until a restore of the replica, taken beside the running server,
   holds every acknowledged address: those are "must survive".
4. Sends a second wave of signups and, in the middle of it, kills signupd and Litestream with
   SIGKILL (the machine is lost). Deletes the database, its -wal/-shm files and Litestream's
   local state; restores with `litestream restore`; checks `PRAGMA integrity_check`.
5. Starts signupd on the restored file: /readyz answers 200, every must-survive address is
   exported, a new signup is accepted and recorded. Reports how much of the second wave survived.
6. A database from a newer signupd, replicated and restored the same way, is refused at start
   with a one-line error (after the log line naming the configuration) and exit 1, and left unchanged.

No address is printed: only counts.
"""

import argparse
import http.client
import json
import os
import re
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import closing
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from harness import Checks, Processes, free_port  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SHIPPED_CONFIG = ROOT / "packaging" / "litestream.yml"
LIST = "news"


class DrillFailed(Exception):
    pass


checks = Checks("litestream drill", DrillFailed)
say, check = checks.say, checks.check
processes = Processes()
# What still runs at the end is killed: the drill's own stops are deliberate.
stop_all = processes.kill_all


def spawn(args: list[str], log: Path, **kwargs) -> subprocess.Popen:
    return processes.spawn(args, log, append=True, **kwargs)


def tail(result: subprocess.CompletedProcess, limit: int = 300) -> str:
    """The end of what a command said, for a failure message."""
    text = (result.stdout + result.stderr).strip()
    return f" ({text[-limit:]})" if text else ""


def run(args: list[str], timeout: float = 60, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL, **kwargs)


# --- configuration ----------------------------------------------------------------------------


def replace_once(text: str, old: str, new: str) -> str:
    if text.count(old) != 1:
        raise DrillFailed(f"packaging/litestream.yml no longer has exactly one `{old}`: update the drill")
    return text.replace(old, new)


def drill_litestream_config(db: Path, replica: Path) -> str:
    """The shipped configuration, pointed at the drill's paths, with intervals short enough for a
    drill (so both Litestream's checkpoints and signupd's run during the load)."""
    text = SHIPPED_CONFIG.read_text()
    text = replace_once(text, "path: /var/lib/signupd/signupd.sqlite3", f"path: {db}")
    text = replace_once(text, "path: /var/backups/signupd/litestream", f"path: {replica}")
    text = replace_once(text, "sync-interval: 1s", "sync-interval: 200ms")
    text = replace_once(text, "checkpoint-interval: 1m", "checkpoint-interval: 2s")
    text = replace_once(text, "min-checkpoint-page-count: 1000", "min-checkpoint-page-count: 200")
    return text


def s3_variant(text: str) -> str:
    """The shipped configuration with the file replica removed and the S3 one uncommented."""
    out, skipping = [], False
    for line in text.splitlines():
        if line == "    replica:":
            skipping = True
            continue
        if skipping:
            if line.startswith("      "):
                continue
            skipping = False
        if line.startswith("    # replica:") or line.startswith("    #   "):
            line = "    " + line[6:]
        out.append(line)
    return "\n".join(out) + "\n"


def signupd_config(path: Path, data_dir: Path, port: int) -> Path:
    (data_dir / "mail").mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"""[server]
listen = "127.0.0.1:{port}"
public_url = "http://127.0.0.1:{port}"
[storage]
data_dir = "{data_dir}"
[mail]
file_dir = "{data_dir}/mail"
[signup]
rate_limits = [ {{ window = "1m", max = 100000000 }} ]
network_rate_limits = [ {{ window = "1m", max = 100000000 }} ]
[[lists]]
id = "{LIST}"
"""
    )
    return path


# --- signupd ----------------------------------------------------------------------------------


def http_status(port: int, method: str, path: str, body: bytes | None = None, headers: dict | None = None) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def wait_ready(port: int, process: subprocess.Popen, log: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise DrillFailed(f"signupd exited ({process.returncode}) during start-up; see {log}")
        try:
            if http_status(port, "GET", "/readyz") == 200:
                return
        except OSError:
            pass
        time.sleep(0.05)
    raise DrillFailed(f"signupd was not ready within {timeout:.0f} s; see {log}")


def signup_body(email: str) -> bytes:
    return json.dumps({"email": email, "consent": True, "list": LIST}).encode()


SIGNUP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json"}


class Load:
    """`clients` threads, each on its own keep-alive connection, sending signups for
    drill-<wave>-<n>@example.com until `total` were sent or `stop` is set. Records every
    acknowledged (202) address with the time of its acknowledgement."""

    def __init__(self, port: int, wave: str, total: int, clients: int):
        self.port, self.wave, self.total = port, wave, total
        self.next = 0
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.acked: dict[str, float] = {}
        self.sent = 0
        self.refused: dict[int, int] = {}
        self.errors = 0
        self.threads = [threading.Thread(target=self.client, daemon=True) for _ in range(clients)]

    def start(self) -> "Load":
        self.started = time.monotonic()
        for thread in self.threads:
            thread.start()
        return self

    def take(self) -> int | None:
        with self.lock:
            if self.stop.is_set() or self.next >= self.total:
                return None
            self.next += 1
            return self.next

    def client(self) -> None:
        connection = None
        while (n := self.take()) is not None:
            email = f"drill-{self.wave}-{n}@example.com"
            try:
                if connection is None:
                    connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
                connection.request("POST", "/api/signup", body=signup_body(email), headers=SIGNUP_HEADERS)
                with self.lock:
                    self.sent += 1
                response = connection.getresponse()
                response.read()
                status = response.status
            except (OSError, http.client.HTTPException):
                # A dead server (the second wave): this address was never acknowledged.
                with self.lock:
                    self.errors += 1
                if connection is not None:
                    connection.close()
                connection = None
                if self.stop.is_set():
                    return
                time.sleep(0.01)
                continue
            with self.lock:
                if status == 202:
                    self.acked[email] = time.monotonic()
                else:
                    self.refused[status] = self.refused.get(status, 0) + 1
        if connection is not None:
            connection.close()

    def acked_count(self) -> int:
        with self.lock:
            return len(self.acked)

    def join(self) -> None:
        for thread in self.threads:
            thread.join(timeout=60)
        self.elapsed = time.monotonic() - self.started


# --- the database -----------------------------------------------------------------------------


def open_ro(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)


def drill_addresses(path: Path) -> set[str]:
    """Every drill address the database holds, applied (subscribers) or still waiting (intake)."""
    with closing(open_ro(path)) as conn:
        rows = conn.execute(
            "SELECT email FROM subscribers WHERE email LIKE 'drill-%' UNION SELECT email FROM intake WHERE email LIKE 'drill-%'"
        ).fetchall()
        return {email for (email,) in rows}


def user_version(path: Path) -> int:
    with closing(open_ro(path)) as conn:
        return conn.execute("PRAGMA user_version").fetchone()[0]


def integrity(path: Path) -> str:
    with closing(open_ro(path)) as conn:
        return "; ".join(row[0] for row in conn.execute("PRAGMA integrity_check").fetchall())


def intake_depth(path: Path) -> int:
    with closing(open_ro(path)) as conn:
        return conn.execute("SELECT count(*) FROM intake").fetchone()[0]


def checkpoint_evidence(log: Path) -> tuple[dict[str, int], dict[str, int]]:
    """From Litestream's debug log: its own checkpoints by mode, and every sync that had to start
    over from a snapshot because the WAL was reset or overwritten by someone else (a checkpoint
    by signupd that Litestream did not expect would show here), by reason."""
    checkpoints: dict[str, int] = {}
    resets: dict[str, int] = {}
    for line in log.read_text(errors="replace").splitlines():
        if "msg=checkpoint " in line and (mode := re.search(r"\bmode=(\w+)", line)):
            checkpoints[mode.group(1)] = checkpoints.get(mode.group(1), 0) + 1
        elif (reason := re.search(r'\breason="([^"]+)"', line)) and (
            "another process" in reason.group(1) or "salt reset" in reason.group(1) or "restart checkpoint" in reason.group(1)
        ):
            resets[reason.group(1)] = resets.get(reason.group(1), 0) + 1
    return checkpoints, resets


# --- the drill --------------------------------------------------------------------------------


def litestream_positions(litestream: str, config: Path, db: Path) -> str:
    """Litestream's own account: the local TXID it captured and the newest TXID in the replica."""
    status = run([litestream, "status", "-config", str(config), "-json", str(db)])
    ltx = run([litestream, "ltx", "-config", str(config), "-level", "all", "-json", str(db)])
    try:
        local = json.loads(status.stdout)[0]["local_txid"]
    except (ValueError, LookupError):
        local = "?"
    try:
        replica = max((entry["max_txid"] for entry in json.loads(ltx.stdout)), default="none")
    except (ValueError, LookupError, TypeError):
        replica = "?"
    return f"local txid {local}, replica txid {replica}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--signupd", default=str(ROOT / "target" / "debug" / "signupd"))
    parser.add_argument("--litestream", default="litestream")
    parser.add_argument("--signups", type=int, default=4000, help="first wave, all must survive")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args()
    signupd, litestream = str(Path(args.signupd).resolve()), args.litestream

    tmp = Path(tempfile.mkdtemp(prefix="signupd-litestream-"))
    started = time.monotonic()
    try:
        drill(tmp, signupd, litestream, args.signups, args.clients)
        say(f"passed in {time.monotonic() - started:.1f} s")
        print(f"drill: {checks.passed} passed, 0 failed", flush=True)
        return 0
    except DrillFailed as failure:
        say(f"FAILED: {failure} (logs in {tmp})")
        print(f"drill: {checks.passed} passed, 1 failed", flush=True)
        args.keep = True
        return 1
    finally:
        stop_all()
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


def drill(tmp: Path, signupd: str, litestream: str, signups: int, clients: int) -> None:
    if not os.access(signupd, os.X_OK):
        raise DrillFailed(f"no signupd binary at {signupd}: build it first (cargo test --no-run)")
    version = run([litestream, "version"]).stdout.strip()
    say(f"Litestream {version}, signupd {signupd}")

    # 1. The shipped configuration, as the installed Litestream reads it.
    shipped = run([litestream, "databases", "-config", str(SHIPPED_CONFIG)])
    check(
        shipped.returncode == 0 and "/var/lib/signupd/signupd.sqlite3" in shipped.stdout and " file" in shipped.stdout,
        "packaging/litestream.yml: Litestream reads one database with a file replica",
    )
    s3_config = tmp / "litestream-s3.yml"
    s3_config.write_text(s3_variant(SHIPPED_CONFIG.read_text()))
    s3_env = dict(os.environ, SIGNUPD_LITESTREAM_BUCKET="signupd-backups", SIGNUPD_LITESTREAM_ENDPOINT="http://127.0.0.1:9",
                  SIGNUPD_LITESTREAM_REGION="auto", LITESTREAM_ACCESS_KEY_ID="drill", LITESTREAM_SECRET_ACCESS_KEY="drill")
    s3 = run([litestream, "databases", "-config", str(s3_config)], env=s3_env)
    check(s3.returncode == 0 and " s3" in s3.stdout, "its commented S3 alternative, uncommented, reads as an s3 replica")

    # 2. signupd under load, Litestream started during it.
    data = tmp / "data"
    db = data / "signupd.sqlite3"
    replica = tmp / "replica"
    port = free_port()
    config = signupd_config(tmp / "signupd.toml", data, port)
    ls_config = tmp / "litestream.yml"
    ls_config.write_text(drill_litestream_config(db, replica))
    server_log, ls_log = tmp / "signupd.log", tmp / "litestream.log"

    server = spawn([signupd, "serve", "--config", str(config)], server_log)
    wait_ready(port, server, server_log)
    say(f"signupd ready on 127.0.0.1:{port}; first wave: {signups} signups from {clients} clients")
    first = Load(port, "a", signups, clients).start()
    while first.acked_count() < signups // 5 and any(t.is_alive() for t in first.threads):
        time.sleep(0.01)
    replicator = spawn([litestream, "replicate", "-config", str(ls_config), "-log-level", "debug"], ls_log)
    say(f"Litestream started with {first.acked_count()} signups acknowledged, the load still running")
    first.join()
    load_stopped = time.monotonic()
    check(replicator.poll() is None, "Litestream is still replicating after the first wave")
    say(
        f"first wave: {first.sent} sent, {len(first.acked)} acknowledged in {first.elapsed:.1f} s "
        f"({len(first.acked) / first.elapsed:.0f}/s), refused {first.refused or 'none'}, connection errors {first.errors}"
    )
    check(len(first.acked) == signups, f"every signup of the first wave was acknowledged (202) with Litestream attached")
    check(drill_addresses(db) >= set(first.acked), "the live database holds every acknowledged address")

    # 3. The last replicated sync: a restore of the replica, beside the running server, holds
    # every address acknowledged before the load stopped.
    must_survive = set(first.acked)
    probe = tmp / "probe.sqlite3"
    deadline = time.monotonic() + 60
    while True:
        for leftover in tmp.glob("probe.sqlite3*"):
            leftover.unlink()
        restored = run([litestream, "restore", "-o", str(probe), f"file://{replica}"])
        held = drill_addresses(probe) if restored.returncode == 0 and probe.exists() else set()
        if held >= must_survive:
            break
        if time.monotonic() > deadline:
            raise DrillFailed(
                f"60 s after the load stopped the replica holds {len(held & must_survive)} of {len(must_survive)} "
                f"acknowledged addresses" + tail(restored)
            )
        time.sleep(0.2)
    caught_up = time.monotonic() - load_stopped
    check(True, f"the replica holds all {len(must_survive)} acknowledged addresses {caught_up:.1f} s after the load stopped "
                f"({litestream_positions(litestream, ls_config, db)}): they must survive")
    check(integrity(probe) == "ok", "that probe restore passes PRAGMA integrity_check")
    # Litestream checkpoints on its interval only when the WAL has grown since its last look, and a
    # fast first wave can end before the first interval does: a trickle of signups keeps the WAL
    # moving until its first checkpoint shows in the log (or the deadline says it never will).
    deadline = time.monotonic() + 30
    trickle = 0
    while not checkpoint_evidence(ls_log)[0].get("PASSIVE") and time.monotonic() < deadline:
        trickle += 1
        Load(port, f"t{trickle}", 20, 1).start().join()
        time.sleep(0.5)
    checkpoints, resets = checkpoint_evidence(ls_log)
    check(checkpoints.get("PASSIVE", 0) > 0, f"Litestream ran its own checkpoints beside signupd's meanwhile: {checkpoints}")
    check(not resets, f"no sync found the WAL changed behind Litestream's back (signupd's PASSIVE checkpoints coexist): {resets or 'none'}")
    schema = user_version(db)

    # 4. A second wave, and the machine is lost in the middle of it.
    second = Load(port, "b", 10 * signups, clients).start()
    time.sleep(1.5)
    server.send_signal(signal.SIGKILL)
    replicator.send_signal(signal.SIGKILL)
    lost_at = time.monotonic()
    server.wait(timeout=10)
    replicator.wait(timeout=10)
    second.stop.set()
    second.join()
    say(f"second wave: {second.sent} sent, {len(second.acked)} acknowledged, then signupd and Litestream were killed (SIGKILL)")

    for name in ("signupd.sqlite3", "signupd.sqlite3-wal", "signupd.sqlite3-shm"):
        (data / name).unlink(missing_ok=True)
    shutil.rmtree(data / ".signupd.sqlite3-litestream", ignore_errors=True)
    check(not db.exists() and not any(data.glob("signupd.sqlite3-*")), "the database, its -wal and -shm files are deleted")

    restore_started = time.monotonic()
    restored = run([litestream, "restore", "-config", str(ls_config), str(db)], timeout=120)
    restore_took = time.monotonic() - restore_started
    check(restored.returncode == 0 and db.exists(),
          f"litestream restore wrote {db.name} back in {restore_took:.1f} s" + ("" if restored.returncode == 0 else tail(restored)))
    again = run([litestream, "restore", "-config", str(ls_config), str(db)])
    check(again.returncode != 0, "a second restore onto the existing file is refused (no silent overwrite)")
    check(integrity(db) == "ok", "the restored database passes PRAGMA integrity_check")
    check(user_version(db) == schema, f"its schema version is the one signupd wrote ({schema})")
    mode = stat.S_IMODE(db.stat().st_mode)
    say(f"the restored file has mode {mode:o}; set to 600 as the runbook says")
    db.chmod(0o600)
    held = drill_addresses(db)
    check(held >= must_survive, f"the restored file holds all {len(must_survive)} must-survive addresses")

    # 5. signupd on the restored file.
    server = spawn([signupd, "serve", "--config", str(config)], server_log)
    wait_ready(port, server, server_log)
    ready_after = time.monotonic() - lost_at
    check(True, f"signupd starts on the restored database and /readyz answers 200 ({ready_after:.1f} s after the loss)")
    replicator = spawn([litestream, "replicate", "-config", str(ls_config), "-log-level", "debug"], ls_log)
    deadline = time.monotonic() + 60
    while intake_depth(db) and time.monotonic() < deadline:
        time.sleep(0.2)
    check(intake_depth(db) == 0, "the intake worker applied every restored signup")
    export = run([signupd, "export", "--config", str(config), "--status", "all", "--format", "jsonl"])
    check(export.returncode == 0, "signupd export --status all --format jsonl runs beside the server")
    exported = {json.loads(line)["email"] for line in export.stdout.splitlines() if line.strip()}
    missing = must_survive - exported
    check(not missing, f"every must-survive address is a subscriber after the restore ({len(must_survive)}; missing {len(missing)})")
    second_kept = len(set(second.acked) & exported)
    say(
        f"second wave (acknowledged after the last verified sync, lost mid-load): {second_kept} of {len(second.acked)} "
        f"acknowledged addresses survived (what a loss costs: about Litestream's monitor-interval plus sync-interval of signups)"
    )
    check(http_status(port, "POST", "/api/signup", signup_body("drill-c-1@example.com"), SIGNUP_HEADERS) == 202,
          "a new signup after the restore is accepted (202)")
    deadline = time.monotonic() + 30
    while "drill-c-1@example.com" not in drill_addresses(db) and time.monotonic() < deadline:
        time.sleep(0.1)
    check("drill-c-1@example.com" in drill_addresses(db), "and recorded in the restored database")
    # Replication resumes on the restored file, into the same replica.
    deadline = time.monotonic() + 60
    while True:
        for leftover in tmp.glob("probe.sqlite3*"):
            leftover.unlink()
        probed = run([litestream, "restore", "-o", str(probe), f"file://{replica}"])
        held = drill_addresses(probe) if probed.returncode == 0 and probe.exists() else set()
        if "drill-c-1@example.com" in held or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    check(replicator.poll() is None and "drill-c-1@example.com" in held and held >= must_survive,
          "Litestream, started again on the restored file, replicates the new signup to the same replica" + tail(probed))
    check(integrity(probe) == "ok", "and a restore of it passes PRAGMA integrity_check")
    replicator.send_signal(signal.SIGTERM)
    check(replicator.wait(timeout=60) == 0, "Litestream stops on SIGTERM with exit 0")
    server.send_signal(signal.SIGTERM)
    check(server.wait(timeout=30) == 0, "signupd stops on SIGTERM with exit 0")
    say(
        f"figures: first wave {first.sent} sent / {len(first.acked)} acknowledged / "
        f"{len(must_survive & exported)} restored; second wave {len(second.acked)} acknowledged / {second_kept} restored; "
        f"replica caught up {caught_up:.1f} s after the load; restore {restore_took:.1f} s; "
        f"restored database {db.stat().st_size} bytes; loss to ready {ready_after:.1f} s"
    )

    # 6. A database from a newer signupd, through the same replicate-and-restore path.
    newer_src = tmp / "newer-source.sqlite3"
    shutil.copyfile(db, newer_src)
    conn = sqlite3.connect(newer_src)
    conn.execute(f"PRAGMA user_version = {schema + 1}")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.close()
    newer_replica = tmp / "newer-replica"
    once = run([litestream, "replicate", "-once", str(newer_src), f"file://{newer_replica}"])
    check(once.returncode == 0, "litestream replicate -once copied the newer database to a replica" + ("" if once.returncode == 0 else tail(once)))
    newer_data = tmp / "newer-data"
    newer_data.mkdir()
    newer_db = newer_data / "signupd.sqlite3"
    newer_restore = run([litestream, "restore", "-o", str(newer_db), f"file://{newer_replica}"])
    check(newer_restore.returncode == 0 and user_version(newer_db) == schema + 1,
          f"it restores with schema version {schema + 1}, one past this binary's {schema}")
    newer_config = signupd_config(tmp / "newer.toml", newer_data, free_port())
    refused = run([signupd, "serve", "--config", str(newer_config)], timeout=30)
    lines = [line for line in refused.stderr.splitlines() if line.strip()]
    say(f"signupd said: {lines[-1] if lines else '(nothing)'}")
    check(refused.returncode == 1, "signupd refuses to start on it: exit 1")
    # serve's first log line names the configuration it read; the error is the one other line.
    check(len(lines) == 2 and f"configuration {newer_config} (from --config)" in lines[0],
          "its first line names the configuration it read")
    check(lines[-1].startswith("signupd: error:") and "newer signupd" in lines[-1],
          "then one line of error that says a newer signupd wrote it")
    check(user_version(newer_db) == schema + 1 and integrity(newer_db) == "ok", "and leaves the database unchanged")


def on_signal(signum, _frame):
    raise SystemExit(128 + signum)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    sys.exit(main())
