"""What the Python tests beside the Rust suite share (tests/nginx/matrix.py,
tests/litestream/drill.py, tests/prometheus/alerts.py): numbered checks that stop at the first
failure, a free loopback port, and the processes a test starts, stopped however it ends.

Python 3 standard library only. A script imports it after putting tests/ on its path:

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from harness import Checks, Processes, free_port

A script that needs a module from outside the standard library asks for it with `require`, which
stops the test with the module's name and the line that installs it, instead of an ImportError
or, from a server that died at start, a connection refused further on.
"""

import importlib
import socket
import subprocess
import sys
from pathlib import Path
from types import ModuleType


def require(module: str, install: str, script: str) -> ModuleType:
    """The module `module`, imported; if it is missing, ends the test (exit 2) with its name and
    `install`, the command that installs the pinned version (`script` names who installs it in
    CI)."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        sys.exit(f"this test needs the Python module {module} ({error}); install it with:\n    {install}\n({script} does this in CI)")


class Checks:
    """Says each check that passed, prefixed with the test's name, and raises `failure` at the
    first that does not."""

    def __init__(self, name: str, failure: type[Exception]):
        self.name = name
        self.failure = failure
        self.passed = 0

    def say(self, message: str) -> None:
        print(f"{self.name}: {message}", flush=True)

    def check(self, condition: bool, message: str) -> None:
        if not condition:
            raise self.failure(message)
        self.passed += 1
        self.say(f"ok   {message}")


def free_port() -> int:
    """A port nothing listens on now, on 127.0.0.1."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Processes:
    """The processes a test started, each writing to its own log file."""

    def __init__(self):
        self.children: list[subprocess.Popen] = []

    def spawn(self, args: list[str], log: Path, append: bool = False, **kwargs) -> subprocess.Popen:
        with open(log, "ab" if append else "wb") as handle:
            process = subprocess.Popen(
                args, stdout=handle, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, **kwargs
            )
        self.children.append(process)
        return process

    @staticmethod
    def stop(process: subprocess.Popen) -> None:
        """SIGTERM, as a service manager stops a service; SIGKILL after 15 s."""
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)

    def stop_all(self) -> None:
        for process in self.children:
            self.stop(process)

    def kill_all(self) -> None:
        """SIGKILL to whatever still runs: for a test that leaves nothing to finish cleanly."""
        for process in self.children:
            if process.poll() is None:
                process.kill()
                process.wait(timeout=10)
