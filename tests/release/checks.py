"""One line a check, `PREFIX: ok   WHAT` or `PREFIX: FAIL WHAT: DETAIL`, and the list of those
that failed: the output of the release tests written in Python (install_as_written.py,
smoke.py)."""


class Checks:
    def __init__(self, prefix):
        self.prefix = prefix
        self.failures = []

    def __call__(self, what, ok, detail=""):
        print(f"{self.prefix}: {'ok  ' if ok else 'FAIL'} {what}" + (f": {detail}" if detail and not ok else ""))
        if not ok:
            self.failures.append(what)
        return ok
