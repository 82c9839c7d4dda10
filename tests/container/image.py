#!/usr/bin/env python3
"""The container image as an operator gets it: its configuration, the image run the way a
container runtime would run it, and compose.yaml.

Run by .ci/container (which makes the base images and builds the image first); by hand, as root:

    python3 tests/container/image.py --image localhost/signupd:ci

No container runtime here may set rlimits, so the image is not started with `podman run`. It is
run as one would by hand instead: its rootfs mounted (`buildah from` + `buildah mount`), a host
directory bind-mounted on /data as the volume, /proc and /dev as a runtime provides them, and the
entrypoint and command run by `chroot --userspec=10001:10001` with exactly the image's Env and
WorkingDir. The network is the host's, so the image's listener (0.0.0.0:8080) is this machine's
port 8080; only 127.0.0.1 is ever contacted.

1. The image's configuration (podman image inspect): user 10001, the /data volume, port 8080,
   the healthcheck, the OCI labels (version equal to Cargo.toml's and to the Dockerfile's
   ARG VERSION default), the size.
2. The image run: /readyz answers; a signup's confirmation mail lands in the volume as uid
   10001; the database and the generated secrets are there, 10001's, the secrets 0600;
   `signupd healthcheck` exits 0 while it serves and 1 once it stopped; SIGTERM ends it with 0.
   The image has no /run/secrets, as a plain `docker run` has none: it starts all the same.
   With compose's file secret smtp_password (the host file, owner and mode kept): empty, the
   demo's configuration is valid; with SMTP set by SIGNUPD_ variables it must be 10001's.
3. compose.yaml: services, profiles, the volume, the secrets, the healthcheck, the loopback port.
"""

import argparse
import http.client
import json
import os
import re
import shlex
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from harness import Checks, Processes, free_port, require  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
UID = 10001
MAX_SIZE = 150 * 1000 * 1000
LICENSES = "MIT OR Apache-2.0"
PORT = 8080


class ImageFailed(Exception):
    pass


checks = Checks("container", ImageFailed)
say, check = checks.say, checks.check
processes = Processes()


def run(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(args, check=True, capture_output=True, text=True, **kwargs)


# --- 1. the image's configuration -------------------------------------------------------------


def inspect(image: str) -> dict:
    return json.loads(run(["podman", "image", "inspect", image]).stdout)[0]


def cargo_package() -> dict:
    return tomllib.loads((ROOT / "Cargo.toml").read_text())["package"]


def dockerfile_arg(name: str) -> str | None:
    match = re.search(rf"^ARG {name}=(\S+)$", (ROOT / "Dockerfile").read_text(), re.MULTILINE)
    return match.group(1) if match else None


def healthcheck_test(info: dict) -> list[str]:
    # podman shows a docker-format image's HEALTHCHECK at the top level; docker under Config.
    health = info.get("Healthcheck") or info.get("Config", {}).get("Healthcheck") or {}
    return health.get("Test") or []


def check_configuration(image: str) -> dict:
    info = inspect(image)
    config = info["Config"]
    package = cargo_package()
    check(config.get("User") in (f"{UID}:{UID}", str(UID)), f"runs as uid/gid {UID}, not root (User {config.get('User')!r})")
    check(list(config.get("Volumes") or {}) == ["/data"], "/data is the one volume")
    check(config.get("WorkingDir") == "/data", "the working directory is /data")
    check(list(config.get("ExposedPorts") or {}) == [f"{PORT}/tcp"], f"exposes {PORT}/tcp")
    check(config.get("Entrypoint") == ["signupd"] and config.get("Cmd") == ["serve"], "entrypoint signupd, command serve")
    check(config.get("StopSignal") in ("SIGTERM", "15"), "stops with SIGTERM")
    env = dict(item.split("=", 1) for item in config.get("Env") or [])
    check(
        env.get("SIGNUPD_CONFIG") == "/etc/signupd/signupd.toml" and env.get("CREDENTIALS_DIRECTORY") == "/run/secrets",
        "SIGNUPD_CONFIG and CREDENTIALS_DIRECTORY=/run/secrets set",
    )
    test = healthcheck_test(info)
    check(test[1:] == ["signupd", "healthcheck"] and test[:1] in (["CMD"], ["CMD-SHELL"]), f"healthcheck runs `signupd healthcheck` ({test})")
    labels = config.get("Labels") or {}
    label = lambda key: labels.get(f"org.opencontainers.image.{key}")  # noqa: E731
    check(dockerfile_arg("VERSION") == package["version"], f"the Dockerfile's ARG VERSION default is Cargo.toml's version {package['version']}")
    check(label("version") == package["version"], f"label version {label('version')!r} is Cargo.toml's")
    check(label("licenses") == LICENSES == package["license"], f"label licenses {label('licenses')!r} is Cargo.toml's license")
    source = label("source") or ""
    check(
        source.startswith("https://") and source == package.get("repository", source),
        f"label source {source!r}" + (" is Cargo.toml's repository" if "repository" in package else " (Cargo.toml names no repository)"),
    )
    check(label("title") == "signupd" and bool(label("description")), "labels title and description")
    size = int(info["Size"])
    check(size < MAX_SIZE, f"the image is {size / 1e6:.1f} MB, under {MAX_SIZE / 1e6:.0f} MB")
    return config


# --- 2. the image run -------------------------------------------------------------------------


class Rootfs:
    """A working container of the image, its rootfs mounted, with the mounts a runtime would add.
    Everything is undone by `close`, whatever failed before."""

    def __init__(self, image: str):
        self.container = run(["buildah", "from", "--pull=never", image]).stdout.strip()
        self.mounts: list[Path] = []
        self.path = Path(run(["buildah", "mount", self.container]).stdout.strip())

    def set_up(self, volume: Path) -> None:
        self.bind(volume, "data")
        self._mount(["-t", "proc", "proc"], "proc")
        # A /dev of its own with the usual nodes, as a runtime makes it; never the host's /dev
        # bound in, which removing the container could reach into.
        self._mount(["-t", "tmpfs", "-o", "mode=0755,nosuid", "tmpfs"], "dev")
        for name, minor in (("null", 3), ("zero", 5), ("full", 7), ("random", 8), ("urandom", 9)):
            node = self.path / "dev" / name
            os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, minor))
            os.chmod(node, 0o666)

    def bind(self, source: Path, inside: str) -> None:
        self._mount(["--bind", str(source)], inside)

    def _mount(self, how: list[str], inside: str) -> None:
        target = self.path / inside
        target.mkdir(parents=True, exist_ok=True)
        run(["mount", *how, str(target)])
        self.mounts.append(target)

    def close(self) -> bool:
        """Unmounts ours, then removes the container; keeps it (and says so) while anything is
        still mounted inside, so removing it cannot reach the volume."""
        for target in reversed(self.mounts):
            subprocess.run(["umount", str(target)], capture_output=True)
        mounted = [t for t in self.mounts if os.path.ismount(t)]
        if mounted:
            say(f"still mounted, container {self.container} kept: {', '.join(map(str, mounted))}")
            return False
        self.mounts.clear()
        subprocess.run(["buildah", "umount", self.container], capture_output=True)
        subprocess.run(["buildah", "rm", self.container], capture_output=True)
        return True


def in_image(rootfs: Rootfs, config: dict, args: list[str], extra_env: dict[str, str]) -> list[str]:
    """The command line that runs `args` as the image's user, with the image's Env (plus
    `extra_env`) and nothing of ours, in its WorkingDir. chroot(1) itself changes to /, so the
    image's own sh changes to the working directory and execs: the process is the command."""
    env = list(config.get("Env") or []) + [f"{k}={v}" for k, v in extra_env.items()]
    user = config.get("User") or "0"
    uid, _, gid = user.partition(":")
    workdir = config.get("WorkingDir") or "/"
    return [
        "env", "-i", *env,
        "chroot", f"--userspec={uid}:{gid or uid}", f"--groups={gid or uid}", str(rootfs.path),
        "/bin/sh", "-c", 'cd "$0" && exec "$@"', workdir, *args,
    ]  # fmt: skip


def port_is_free(port: int) -> bool:
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("0.0.0.0", port))
        except OSError:
            return False
    return True


def request(port: int, method: str, path: str, body: bytes | None = None, headers: dict | None = None) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        answer = connection.getresponse()
        return answer.status, answer.read()
    finally:
        connection.close()


def wait_ready(port: int, server, log: Path, seconds: float = 60) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.poll() is not None:
            say(f"signupd exited with {server.returncode}:\n{log.read_text()}")
            return False
        try:
            if request(port, "GET", "/readyz")[0] == 200:
                return True
        except OSError:
            pass
        time.sleep(0.2)
    return False


def owned_by_image_user(path: Path) -> bool:
    meta = path.stat()
    return meta.st_uid == UID and meta.st_gid == UID


def wait_for(condition, seconds: float = 15) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return condition()


def check_run(image: str, config: dict, work: Path) -> None:
    volume = work / "volume"
    # A fresh named volume takes the image's /data: owner 10001, mode 0700.
    volume.mkdir(mode=0o700)
    os.chown(volume, UID, UID)
    rootfs = Rootfs(image)
    try:
        data = (rootfs.path / "data").stat()
        check(
            (data.st_uid, data.st_gid, stat.S_IMODE(data.st_mode)) == (UID, UID, 0o700),
            f"the image's /data is {UID}:{UID}, mode 0700 (a new named volume takes this)",
        )
        rootfs.set_up(volume)
        run_in(rootfs, config, volume, work)
    finally:
        if rootfs.close():
            say("mounts undone, working container removed")


def run_in(rootfs: Rootfs, config: dict, volume: Path, work: Path) -> None:
    check(not (rootfs.path / "run" / "secrets").exists(), "the image has no /run/secrets (as a plain `docker run`)")
    check(not (rootfs.path / "usr" / "bin" / "curl").exists(), "no curl in the image")
    extra: dict[str, str] = {}
    port = PORT
    if not port_is_free(PORT):
        port = free_port()
        extra["SIGNUPD_SERVER__LISTEN"] = f"0.0.0.0:{port}"
        say(f"port {PORT} is taken on this machine: the image runs with SIGNUPD_SERVER__LISTEN=0.0.0.0:{port}")
    log = work / "serve.log"
    say("running: " + shlex.join(config["Entrypoint"] + config["Cmd"]) + f" as {config.get('User')} in {config.get('WorkingDir')}")
    server = processes.spawn(in_image(rootfs, config, config["Entrypoint"] + config["Cmd"], extra), log)
    try:
        check(wait_ready(port, server, log), f"/readyz answers 200 on 127.0.0.1:{port}")
        status, body = request(
            port, "POST", "/api/signup",
            body=json.dumps({"email": "reader@bakery-news.org", "consent": True, "list": "default"}).encode(),
            headers={"Content-Type": "application/json", "Accept": "application/json"},
        )  # fmt: skip
        check(status == 202, f"a signup is accepted (POST /api/signup: {status} {body[:80]!r})")
        mail_dir = volume / "mail"
        check(wait_for(lambda: any(mail_dir.glob("*.eml"))), "its confirmation mail is a file in the volume's mail/")
        mail = next(mail_dir.glob("*.eml"))
        check(owned_by_image_user(mail) and owned_by_image_user(mail_dir), f"the mail file and mail/ belong to {UID}")
        check(b"reader@bakery-news.org" in mail.read_bytes(), "the mail is addressed to the reader")
        database = volume / "signupd.sqlite3"
        check(database.exists() and owned_by_image_user(database), f"signupd.sqlite3 is in the volume, {UID}'s")
        for name in ("token_secret", "hash_key"):
            secret = volume / name
            check(
                secret.exists() and owned_by_image_user(secret) and secret.stat().st_mode & 0o777 == 0o600,
                f"the generated {name} is in the volume, {UID}'s, mode 0600",
            )
        health = run_healthcheck(rootfs, config, extra)
        check(health.returncode == 0, f"`signupd healthcheck` exits 0 while it serves ({health.stdout.strip() or health.stderr.strip()})")
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            pass
        check(server.returncode == 0, f"SIGTERM stops it with exit code 0 (got {server.returncode})")
        health = run_healthcheck(rootfs, config, extra)
        check(
            health.returncode == 1 and bool(health.stderr.strip()),
            f"`signupd healthcheck` exits 1 once it stopped, saying why ({health.stderr.strip()})",
        )
        check_compose_secrets(rootfs, config, extra)
    finally:
        processes.stop_all()
        if server.returncode not in (0, None):
            say(f"serve log:\n{log.read_text()}")


def check_config_with_secret(rootfs: Rootfs, config: dict, extra: dict[str, str], content: str, owner: int, mode: int, env: dict[str, str]) -> subprocess.CompletedProcess:
    """`signupd check-config` in the image with /run/secrets/smtp_password as compose mounts a
    file secret: the host file itself, its owner and mode unchanged."""
    secrets = rootfs.path / "run" / "secrets"
    secrets.mkdir(parents=True, exist_ok=True)
    secret = secrets / "smtp_password"
    secret.write_text(content)
    os.chown(secret, owner, owner)
    os.chmod(secret, mode)
    try:
        return subprocess.run(in_image(rootfs, config, ["signupd", "check-config"], extra | env), capture_output=True, text=True, timeout=30)
    finally:
        secret.unlink()
        secrets.rmdir()


def check_compose_secrets(rootfs: Rootfs, config: dict, extra: dict[str, str]) -> None:
    # The demo: compose needs secrets/smtp_password to exist; empty and root's 0600, it is never read.
    result = check_config_with_secret(rootfs, config, extra, "", 0, 0o600, {})
    check(
        result.returncode == 0 and "credentials directory: /run/secrets" in result.stdout,
        "compose's demo path: an empty, root-owned /run/secrets/smtp_password keeps the configuration valid"
        + ("" if result.returncode == 0 else f" ({result.stderr.strip()})"),
    )
    # SMTP with a user name, set by environment variables as compose.yaml shows: the password
    # file must be readable by 10001 (compose ignores a file secret's uid/gid/mode).
    smtp = {
        "SIGNUPD_MAIL__TRANSPORT": "smtp",
        "SIGNUPD_MAIL__SMTP__HOST": "localhost",
        "SIGNUPD_MAIL__SMTP__USERNAME": "newsletter",
    }
    result = check_config_with_secret(rootfs, config, extra, "s3cret\n", UID, 0o400, smtp)
    check(result.returncode == 0, f"SMTP set by SIGNUPD_ variables reads the password secret when it is {UID}'s, 0400" + ("" if result.returncode == 0 else f" ({result.stderr.strip()})"))
    result = check_config_with_secret(rootfs, config, extra, "s3cret\n", 0, 0o600, smtp)
    check(
        result.returncode != 0 and "cannot read" in result.stderr,
        f"a root-owned 0600 password secret is refused at start, naming it ({result.stderr.strip()[:120]})",
    )


def run_healthcheck(rootfs: Rootfs, config: dict, extra: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(in_image(rootfs, config, ["signupd", "healthcheck"], extra), capture_output=True, text=True, timeout=30)


# --- 3. compose.yaml --------------------------------------------------------------------------


def check_compose() -> None:
    yaml = require("yaml", "python3 -m pip install pyyaml==6.0.3", ".ci/container")

    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    services = compose.get("services", {})
    check(set(services) == {"signupd", "cloudflared", "litestream"}, f"compose.yaml: services {sorted(services)}")
    signupd = services["signupd"]
    check(signupd.get("build") in (".", {"context": "."}) and bool(signupd.get("image")), "signupd is built from . and tagged")
    check("profiles" not in signupd, "signupd is in the default profile")
    check(f"signupd-data:/data" in signupd.get("volumes", []) and "signupd-data" in (compose.get("volumes") or {}), "the named volume signupd-data on /data")
    check(signupd.get("ports") == ["127.0.0.1:8080:8080"], "the port is published on the host's 127.0.0.1 only")
    test = (signupd.get("healthcheck") or {}).get("test")
    check(test == ["CMD", "signupd", "healthcheck"], "signupd's healthcheck runs `signupd healthcheck`")
    check(signupd.get("restart") == "unless-stopped", "restart: unless-stopped")
    check(signupd.get("secrets") == ["smtp_password"], "signupd gets the secret smtp_password")
    secrets = compose.get("secrets") or {}
    check(secrets.get("smtp_password", {}).get("file") == "./secrets/smtp_password", "smtp_password comes from ./secrets/smtp_password")
    tunnel = services["cloudflared"]
    check(tunnel.get("profiles") == ["tunnel"], "cloudflared is in the profile tunnel")
    check(re.fullmatch(r"cloudflare/cloudflared:\d{4}\.\d+\.\d+", tunnel.get("image", "")) is not None, f"cloudflared's image is pinned ({tunnel.get('image')})")
    check(tunnel.get("command") == ["tunnel", "--no-autoupdate", "run"], "cloudflared runs `tunnel --no-autoupdate run`")
    check(
        tunnel.get("secrets") == ["tunnel_token"] and (tunnel.get("environment") or {}).get("TUNNEL_TOKEN_FILE") == "/run/secrets/tunnel_token",
        "the tunnel token is a secret read through TUNNEL_TOKEN_FILE",
    )
    check(tunnel.get("depends_on", {}).get("signupd", {}).get("condition") == "service_healthy", "cloudflared waits for signupd to be healthy")
    replica = services["litestream"]
    check(replica.get("profiles") == ["litestream"], "litestream is in the profile litestream")
    check(re.fullmatch(r"litestream/litestream:0\.5\.\d+", replica.get("image", "")) is not None, f"litestream's image is pinned to 0.5.x ({replica.get('image')})")
    check(str(replica.get("user")) in (str(UID), f"{UID}:{UID}"), f"litestream runs as {UID}")
    check("signupd-data:/data" in replica.get("volumes", []), "litestream sees the same volume")
    check(
        any(str(v).startswith("./packaging/container/litestream.yml:/etc/litestream.yml") for v in replica.get("volumes", [])),
        "packaging/container/litestream.yml is its configuration",
    )
    check(replica.get("command") == ["replicate"], "litestream runs `replicate`")
    check_litestream_config()


def check_litestream_config() -> None:
    import yaml

    config = yaml.safe_load((ROOT / "packaging" / "container" / "litestream.yml").read_text())
    db = config["dbs"][0]
    check(db["path"] == "/data/signupd.sqlite3", "litestream replicates /data/signupd.sqlite3")
    check(db["replica"]["type"] == "file" and db["replica"]["path"].startswith("/replica"), "to a file replica under /replica")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--image", default="localhost/signupd:ci")
    args = parser.parse_args()
    # However the test ends (a failed check, ^C, SIGTERM from CI), the finally blocks unmount.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        say("== the image's configuration")
        config = check_configuration(args.image)
        say("== the image run")
        with tempfile.TemporaryDirectory(prefix="signupd-image-") as work:
            check_run(args.image, config, Path(work))
        say("== compose.yaml")
        check_compose()
    except ImageFailed as failure:
        say(f"FAIL {failure}")
        say(f"{checks.passed} passed, 1 failed")
        return 1
    say(f"{checks.passed} passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
