#!/usr/bin/env python3
"""The credentials table of docs/install.md ("Credentials") against the unit's LoadCredential=.

packaging/signupd.service loads each secret from /etc/signupd/credentials/ with a line
`LoadCredential=ID:/etc/signupd/credentials/SOURCE`. A file source is one credential named ID;
a directory source loads every file in it as ID_<file name>. The guide's table has one row per
source, `| file | credential | what |`: `token_secret` / `token_secret` for a file, and
`smtp/password` / `smtp_password` or `webhook/<name>` / `webhook_<name>` for a file in a
directory. Both must name the same sources, with the credential names systemd makes of them,
or an operator following the guide misses a directory the unit needs (the service does not start
without it) or writes a secret the unit never loads. Exits 1 naming each difference.

    python3 tests/release/credentials_table.py [UNIT [GUIDE]]

Python 3 standard library only.
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PREFIX = "/etc/signupd/credentials/"


def unit_sources(text):
    """{source: id} of every LoadCredential= line."""
    found = {}
    for line in text.splitlines():
        m = re.fullmatch(r"\s*LoadCredential=([^:\s]+):(\S+)\s*", line)
        if m:
            found[m.group(2)] = m.group(1)
    return found


def table_rows(text):
    """[(file, credential)] of the table in the `## Credentials` section."""
    section = re.search(r"^## Credentials\n(.*?)(?=^## )", text, re.M | re.S)
    if not section:
        return None
    rows = []
    for line in section.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else []
        if len(cells) >= 2 and cells[0].startswith("`") and cells[1].startswith("`"):
            rows.append((cells[0].strip("`"), cells[1].strip("`")))
    return rows


def differences(unit_text, guide_text):
    problems = []
    sources = unit_sources(unit_text)
    rows = table_rows(guide_text)
    if not sources:
        return ["the unit has no LoadCredential= line"]
    if rows is None:
        return ["the guide has no `## Credentials` section"]
    if not rows:
        return ["the guide's `## Credentials` section has no table of | `file` | `credential` | rows"]

    # What the unit loads, as the table would write it: source (relative to the credentials
    # directory) -> the credential's id.
    loaded = {}
    for source, ident in sources.items():
        if not source.startswith(PREFIX):
            problems.append(f"the unit's LoadCredential={ident}:{source} is not under {PREFIX}")
            continue
        loaded[source[len(PREFIX):]] = ident

    documented = {}
    for file, credential in rows:
        top, _, rest = file.partition("/")
        documented[top] = (file, credential)
        expected = f"{top}_{rest}" if rest else top
        if credential != expected:
            problems.append(
                f"the table's row `{file}` names the credential `{credential}`; systemd names it `{expected}`"
            )

    for top, ident in sorted(loaded.items()):
        if top not in documented:
            problems.append(
                f"the unit loads LoadCredential={ident}:{PREFIX}{top}, but the guide's credentials table "
                f"has no row for `{top}` (or `{top}/<name>`)"
            )
        elif ident != top:
            problems.append(
                f"the unit's LoadCredential={ident}:{PREFIX}{top} names it `{ident}`, the table `{top}`"
            )
    for top, (file, _) in sorted(documented.items()):
        if top not in loaded:
            problems.append(f"the guide's credentials table has `{file}`, which no LoadCredential= line of the unit loads")
    return problems


def main(argv):
    unit = Path(argv[0]) if argv else ROOT / "packaging/signupd.service"
    guide = Path(argv[1]) if len(argv) > 1 else ROOT / "docs/install.md"
    problems = differences(unit.read_text(encoding="utf-8"), guide.read_text(encoding="utf-8"))
    for problem in problems:
        print(f"credentials: {problem}", file=sys.stderr)
    if problems:
        print(f"credentials: {unit} and the table of {guide} (## Credentials) disagree", file=sys.stderr)
        return 1
    print(f"credentials: the table of {guide.name} names the {len(unit_sources(unit.read_text()))} sources the unit loads")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
