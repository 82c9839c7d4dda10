#!/usr/bin/env python3
"""The guides' command blocks, for the package test (packaging/test-package.sh) to run as written.

Every fenced shell block (```sh, ```bash, ```shell, ```console, or a fence without a language)
in the parts of the guides that CI runs carries a marker, an HTML comment on the line before its
fence (invisible when rendered; other HTML comments may sit between the marker and the fence):

    <!-- ci: run -->                             run by CI, as written
    <!-- ci: run, input: NAME -->                run, with what the operator types (the test's
                                                 input NAME) on standard input
    <!-- ci: background, ready at HOST:PORT -->  run in the background (a server the next blocks
                                                 talk to); ready once HOST:PORT accepts
    <!-- ci: show (REASON) -->                   only shown: REASON says why CI does not run it

and a block of another language may carry one of

    <!-- ci: file NAME -->                       written to NAME in the working directory
    <!-- ci: append PATH -->                     appended to PATH

Placeholders an operator must replace (`you@your-domain.net`) are replaced through the test's
table of substitutions, never by editing the guide. A substitution that matches nothing, and a
block CI runs that still holds a placeholder after the substitutions, are errors: the table and
the guide cannot drift apart.

    guide.py check FILE[#RANGE]...
        Every shell block has a marker, every marker has a block. Exit 1 with the problems.
    guide.py extract --out DIR --substitutions TSV --inputs NAMES FILE[#RANGE]...
        Checks as above, then writes the blocks CI runs of each FILE[#RANGE] (a "part", in
        order) to DIR/<part>/<nn>.<kind> and lists them in DIR/<part>/manifest (one line per
        block: file, kind, argument, source line, tab-separated). TSV holds one substitution a
        line, "FROM<TAB>TO"; NAMES is the comma-separated names of the inputs the test has.
    guide.py selftest
        The reader against small documents: what it must accept and refuse.

RANGE picks `##` sections by their anchor (as docs/*.md links them): `#webhooks` is that
section with its subsections, `#start:` runs from a section to the end of the file, `#:start`
from the beginning up to a section (not included), `#a:b` from one to another.
Python 3 standard library only.
"""

import os
import re
import sys
import tempfile

SHELL = {"sh", "bash", "shell", "console", ""}
MARKER = re.compile(r"^<!--\s*ci:\s*(.*?)\s*-->$")
COMMENT = re.compile(r"^<!--.*-->$")
FENCE = re.compile(r"^(`{3,}|~{3,})\s*([^\s`]*)")
# What an operator must replace, as the guides write it: a reserved example domain, "your-domain",
# or an angle-bracket placeholder such as <new version>.
PLACEHOLDER = re.compile(r"your-domain|\bexample\.(com|net|org)\b|[a-z0-9.-]\.example\b|<[a-z][a-z _-]*>")


class Problem(Exception):
    pass


def slug(heading):
    """The anchor of a heading, as tests/api/docs.rs and the usual Markdown hosts make it."""
    out = []
    for c in heading.strip().lower():
        if c == " ":
            out.append("-")
        elif c.isalnum() or c in "-_":
            out.append(c)
    return "".join(out)


def parse_marker(text, where):
    """The marker's kind and argument: ("run", None), ("run", input), ("background", host:port),
    ("show", reason), ("file", name) or ("append", path)."""
    if text == "run":
        return "run", None
    m = re.fullmatch(r"run,\s*input:\s*([a-z0-9-]+)", text)
    if m:
        return "run", m.group(1)
    m = re.fullmatch(r"background,\s*ready at\s*([0-9.]+|\[[0-9a-f:]+\]):([0-9]+)", text)
    if m:
        return "background", f"{m.group(1)}:{m.group(2)}"
    m = re.fullmatch(r"show\s*\((.*\S.*)\)", text)
    if m:
        return "show", m.group(1).strip()
    m = re.fullmatch(r"file\s+([A-Za-z0-9._-]+)", text)
    if m:
        return "file", m.group(1)
    m = re.fullmatch(r"append\s+(/\S+)", text)
    if m:
        return "append", m.group(1)
    raise Problem(
        f"{where}: marker <!-- ci: {text} --> is none of: run | run, input: NAME | "
        "background, ready at HOST:PORT | show (REASON) | file NAME | append PATH"
    )


def blocks(path, text):
    """Every fenced block of a Markdown text: dicts with line (of the opening fence), lang, body,
    marker (kind, argument) or None, and section (the anchor of the `##` section it is in, "" before
    the first). Raises Problem for a marker without a block and a fence left open."""
    lines = text.split("\n")
    found = []
    section = ""
    pending = None  # (marker, line number) waiting for its fence
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        fence = FENCE.match(stripped)
        if fence:
            opener, lang = fence.group(1), fence.group(2).lower()
            start = i
            body = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith(opener):
                body.append(lines[i])
                i += 1
            if i == len(lines):
                raise Problem(f"{path}:{start + 1}: a fence that is never closed")
            found.append(
                {
                    "line": start + 1,
                    "lang": lang,
                    "body": "\n".join(body) + "\n",
                    "marker": pending[0] if pending else None,
                    "section": section,
                }
            )
            pending = None
            i += 1
            continue
        marker = MARKER.match(stripped)
        if pending and not (stripped and COMMENT.match(stripped) and not marker):
            raise Problem(f"{path}:{pending[1]}: marker <!-- ci: … --> is not on the line before a fence")
        if marker:
            pending = (parse_marker(marker.group(1), f"{path}:{i + 1}"), i + 1)
        elif re.match(r"^## ", line):
            section = slug(line[3:])
        i += 1
    if pending:
        raise Problem(f"{path}:{pending[1]}: marker <!-- ci: … --> is not on the line before a fence")
    return found


def select(path, spec, found, text):
    """The blocks of `found` in the range `spec` (see the module's doc) of `path`."""
    if spec is None:
        return found
    sections = [""] + [slug(line[3:]) for line in text.split("\n") if line.startswith("## ")]
    for anchor in re.split(r":", spec):
        if anchor and anchor not in sections:
            raise Problem(f"{path}#{spec}: no section with the anchor #{anchor}")
    if ":" in spec:
        first, last = spec.split(":", 1)
        lo = sections.index(first) if first else 0
        hi = sections.index(last) if last else len(sections)
        if lo >= hi:
            raise Problem(f"{path}#{spec}: the range is empty")
        keep = set(sections[lo:hi])
    else:
        keep = {spec}
    return [block for block in found if block["section"] in keep]


def check_markers(path, chosen):
    problems = []
    for block in chosen:
        where = f"{path}:{block['line']}"
        kind = block["marker"][0] if block["marker"] else None
        shell = block["lang"] in SHELL
        if shell and kind is None:
            problems.append(
                f"{where}: a ```{block['lang'] or ''} block without a marker: put <!-- ci: run --> or "
                "<!-- ci: show (why) --> on the line before its fence"
            )
        elif kind in ("run", "background") and not shell:
            problems.append(f"{where}: <!-- ci: {kind} --> on a ```{block['lang']} block; only shell blocks run")
        elif kind in ("file", "append") and block["lang"] == "console":
            problems.append(f"{where}: <!-- ci: {kind} --> on a ```console block (prompts and output)")
    return problems


def commands(block):
    """The text CI runs: a console block's `$ ` lines (with their continuation lines), any other
    block as it is."""
    if block["lang"] != "console":
        return block["body"]
    out = []
    continued = False
    for line in block["body"].split("\n"):
        if continued or line.startswith("$ "):
            out.append(line[2:] if not continued else line)
            continued = line.endswith("\\")
    return "\n".join(out) + "\n"


def read_parts(args):
    """[(path, range or None, text, chosen blocks)] for each FILE[#RANGE] argument."""
    parts = []
    for arg in args:
        path, _, spec = arg.partition("#")
        with open(path, encoding="utf-8") as f:
            text = f.read()
        parts.append((path, spec or None, text, select(path, spec or None, blocks(path, text), text)))
    return parts


def check(args):
    problems = []
    for path, _, _, chosen in read_parts(args):
        problems += check_markers(path, chosen)
    return problems


def extract(out, substitutions, inputs, args):
    parts = read_parts(args)
    problems = []
    for path, _, _, chosen in parts:
        problems += check_markers(path, chosen)
    used = {source: 0 for source, _ in substitutions}
    for number, (path, _, _, chosen) in enumerate(parts, 1):
        part_dir = os.path.join(out, str(number))
        os.makedirs(part_dir)
        manifest = []
        for block in chosen:
            if block["marker"] is None or block["marker"][0] == "show":
                continue
            kind, argument = block["marker"]
            where = f"{path}:{block['line']}"
            body = commands(block)
            for source, target in substitutions:
                if source in body:
                    used[source] += 1
                    body = body.replace(source, target)
            left = PLACEHOLDER.search(body)
            if left:
                problems.append(
                    f"{where}: the block CI runs still holds the placeholder {left.group(0)!r}: add it to "
                    "the package test's table of substitutions"
                )
            if kind == "run" and argument is not None and argument not in inputs:
                problems.append(f"{where}: the input {argument!r} is not one the package test types")
            name = f"{len(manifest) + 1:02d}.{kind}"
            with open(os.path.join(part_dir, name), "w", encoding="utf-8") as f:
                f.write(body)
            manifest.append("\t".join([name, kind, argument or "-", where]))
        with open(os.path.join(part_dir, "manifest"), "w", encoding="utf-8") as f:
            f.write("".join(line + "\n" for line in manifest))
    for source, count in used.items():
        if count == 0:
            problems.append(f"the substitution of {source!r} matches no block CI runs: remove it from the table")
    return problems


def read_substitutions(path):
    pairs = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line:
                continue
            if line.count("\t") != 1:
                raise Problem(f"{path}:{number}: not FROM<TAB>TO")
            pairs.append(tuple(line.split("\t")))
    return pairs


def selftest():
    """What the reader accepts and refuses, on small documents."""
    cases = [
        ("marked blocks pass", "<!-- ci: run -->\n```sh\necho hi\n```\n<!-- ci: show (a reason) -->\n```bash\nx\n```\n", None),
        ("a toml block needs no marker", "```toml\na = 1\n```\n", None),
        ("a comment may sit between marker and fence", "<!-- ci: file r.py -->\n<!-- example:start -->\n```python\nx\n```\n", None),
        ("an unmarked sh block fails", "text\n```sh\necho hi\n```\n", "without a marker"),
        ("an unmarked console block fails", "```console\n$ ls\n```\n", "without a marker"),
        ("an unmarked fence without a language fails", "```\nls\n```\n", "without a marker"),
        ("a marker with a blank line before the fence fails", "<!-- ci: run -->\n\n```sh\nls\n```\n", "not on the line before"),
        ("a marker at the end fails", "```toml\n```\n<!-- ci: run -->\n", "not on the line before"),
        ("show without a reason fails", "<!-- ci: show -->\n```sh\nls\n```\n", "is none of"),
        ("an unknown marker fails", "<!-- ci: maybe -->\n```sh\nls\n```\n", "is none of"),
        ("run on a python block fails", "<!-- ci: run -->\n```python\nx\n```\n", "only shell blocks run"),
        ("an unclosed fence fails", "<!-- ci: run -->\n```sh\nls\n", "never closed"),
    ]
    failures = []
    for name, text, expected in cases:
        try:
            problems = check_markers("doc.md", blocks("doc.md", text))
        except Problem as problem:
            problems = [str(problem)]
        ok = (not problems) if expected is None else any(expected in p for p in problems)
        print(f"      selftest {'ok' if ok else 'FAILED'}: {name}")
        if not ok:
            failures.append(f"{name}: {problems}")
    # Ranges, substitutions and the leftover-placeholder check, through extract.
    doc = (
        "<!-- ci: run -->\n```sh\necho one you@your-domain.net\n```\n## Start\n"
        "<!-- ci: run, input: pw -->\n```sh\ncat\n```\n## End\n<!-- ci: show (r) -->\n```sh\nrm -rf /\n```\n"
        "<!-- ci: run -->\n```console\n$ echo a \\\n  b\noutput\n```\n"
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "doc.md")
        with open(path, "w", encoding="utf-8") as f:
            f.write(doc)

        def run(name, subs, inputs, specs, expected):
            out = os.path.join(tmp, name.replace(" ", "-"))
            try:
                problems = extract(out, subs, inputs, [f"{path}{spec}" for spec in specs])
            except Problem as problem:
                problems = [str(problem)]
            ok = (not problems) if expected is None else any(expected in p for p in problems)
            print(f"      selftest {'ok' if ok else 'FAILED'}: {name}")
            if not ok:
                failures.append(f"{name}: {problems}")
            return out

        out = run("ranges and substitutions", [("you@your-domain.net", "me@test.invalid")], {"pw"}, ["#:start", "#start:"], None)
        if os.path.isdir(out):
            with open(os.path.join(out, "1", "01.run"), encoding="utf-8") as f:
                first = f.read()
            with open(os.path.join(out, "2", "manifest"), encoding="utf-8") as f:
                second = [line.split("\t")[:3] for line in f.read().splitlines()]
            with open(os.path.join(out, "2", "02.run"), encoding="utf-8") as f:
                console = f.read()
            ok = first == "echo one me@test.invalid\n" and second == [["01.run", "run", "pw"], ["02.run", "run", "-"]]
            ok = ok and console == "echo a \\\n  b\n"
            print(f"      selftest {'ok' if ok else 'FAILED'}: parts hold their blocks, substituted; show blocks stay out")
            if not ok:
                failures.append(f"parts: {first!r} {second!r} {console!r}")
        run("a placeholder left fails", [], {"pw"}, [""], "still holds the placeholder 'your-domain'")
        run("an unused substitution fails", [("you@your-domain.net", "x@y.invalid"), ("gone", "x")], {"pw"}, [""], "matches no block")
        run("an input the test lacks fails", [("you@your-domain.net", "x@y.invalid")], set(), [""], "not one the package test types")
        run("an unknown section fails", [], {"pw"}, ["#nowhere"], "no section with the anchor")
    return failures


def main(argv):
    if len(argv) >= 1 and argv[0] == "selftest":
        return 1 if selftest() else 0
    try:
        if len(argv) >= 2 and argv[0] == "check":
            problems = check(argv[1:])
        elif argv[:1] == ["extract"]:
            opts = {"--out": None, "--substitutions": None, "--inputs": None}
            rest = argv[1:]
            while rest and rest[0] in opts:
                opts[rest[0]] = rest[1]
                rest = rest[2:]
            if None in opts.values() or not rest:
                raise Problem("usage: guide.py extract --out DIR --substitutions TSV --inputs NAMES FILE[#RANGE]...")
            inputs = {name for name in opts["--inputs"].split(",") if name}
            problems = extract(opts["--out"], read_substitutions(opts["--substitutions"]), inputs, rest)
        else:
            raise Problem(__doc__)
    except Problem as problem:
        problems = [str(problem)]
    for problem in problems:
        print(f"guide: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
