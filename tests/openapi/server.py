"""The signupd that tests/openapi/check.py and tests/openapi/fuzz.py call: the lists it serves and
how it is started. Python 3 standard library only.
"""

import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

# `news` has tags and a form field, so that rows, exports and imports carry them; `other` has a
# tag of its own.
LIST_IDS = ["news", "other"]
LISTS_TOML = """[[lists]]
id = "news"
name = "News"
consent_version = "v1"
consent_text = "Email me the news. I can unsubscribe at any time."
tags = ["beta", "pricing"]
welcome_mail = false
[[lists.fields]]
name = "first_name"
label = "First name"
kind = "text"
[[lists]]
id = "other"
name = "Other"
tags = ["vip"]
welcome_mail = false
"""


# Signups are hardly limited: a check's signups never meet a window.
RAISED_LIMITS = '[{ window = "10m", max = 1000 }]'


def config_toml(port: int, data_dir: Path, mail_dir: Path, server: str = "", mail: str = "", sections: str = "") -> str:
    """A configuration listening on 127.0.0.1:`port` that trusts the loopback proxy's
    `CF-Connecting-IP` (so a test gives each of its clients an address of its own), mail to
    files, and the lists; `server` and `mail` are more keys of those tables, `sections` more
    tables (`[[api_tokens]]`, `[[webhooks]]`)."""
    return f"""[server]
listen = "127.0.0.1:{port}"
public_url = "http://127.0.0.1:{port}"
trusted_proxies = ["127.0.0.1/32"]
client_ip_header = "CF-Connecting-IP"
{server}[storage]
data_dir = "{data_dir}"
[signup]
rate_limits = {RAISED_LIMITS}
network_rate_limits = []
[mail]
transport = "file"
file_dir = "{mail_dir}"
{mail}{sections}{LISTS_TOML}"""


class NotReady(Exception):
    """signupd exited, or did not answer in time; the message ends with its log's tail."""


def serve(processes, signupd: str, config: Path, log: Path, ready: Callable[[], bool], name: str) -> subprocess.Popen:
    """Starts `signupd serve --config config` under `processes` (tests/harness.py), logging to
    `log`, and waits up to 60 s for `ready()`."""
    # As tests/api/helpers.rs: the caller's SIGNUPD_* and credentials cannot change the outcome.
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIGNUPD_") and k != "CREDENTIALS_DIRECTORY"}
    process = processes.spawn([signupd, "serve", "--config", str(config)], log, env={**env, "RUST_LOG": "warn"})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise NotReady(f"signupd ({name}) exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        if ready():
            return process
        time.sleep(0.25)
    raise NotReady(f"signupd ({name}) not ready within 60 s:\n{log.read_text()[-3000:]}")
