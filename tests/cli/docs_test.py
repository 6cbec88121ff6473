#!/usr/bin/env python3
"""The documentation against the code (ctest docs_test, CPU; Python's standard library only).

- docs/cli.md documents every command of `opbench --help` in a section `## CMD` whose table
  lists exactly the options of `opbench CMD --help` (`## opbench`: the options of `opbench
  --help` itself), and every option it names elsewhere is one of its command's;
- every command line written in README.md or docs/*.md (`opbench CMD ... --flag`, in code)
  names a command and options that exist;
- every relative link of README.md and docs/*.md resolves: the file, and its #anchor among the
  target's headings (GitHub's anchors);
- the version numbers the docs state are the code's: the store's schema (a database opbench
  made), the JSON export's version (an export opbench wrote), `opbench --version`;
- every op of `opbench list --format json` is named in README.md, has its section in
  docs/ops.md, its config in configs/, its job in .github/workflows/bench.yml's matrix and its
  cells in studies/compare_do_bench.py, and those lists name no other op.

Each problem is one line naming the file, the command or flag, and what to change.
Usage: docs_test.py OPBENCH SOURCE_DIR
"""
import ast
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile

OPBENCH, SRC = sys.argv[1], sys.argv[2]
problems = []


def problem(where, what):
    problems.append(f"{where}: {what}")


def run(*args):
    r = subprocess.run([OPBENCH, *args], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"docs_test: opbench {' '.join(args)} exited {r.returncode}: {r.stderr.strip()}")
    return r.stdout


def read(rel):
    with open(os.path.join(SRC, rel), encoding="utf-8") as f:
        return f.read()


# --- what the binary says ------------------------------------------------------------------
FLAG = re.compile(r"(?<![\w-])--[A-Za-z0-9][\w-]*")


def section_lines(help_text, name):
    """The lines of a --help section ("Options:", "Subcommands:")."""
    out, inside = [], False
    for line in help_text.splitlines():
        if line.strip().endswith(":") and not line.startswith(" "):
            inside = line.strip() == name
            continue
        if inside:
            out.append(line)
    return out


def help_flags(help_text):
    """The long options of a --help text: the first word of each option line."""
    flags = set()
    for line in section_lines(help_text, "Options:"):
        m = re.match(r"^  (?:-\w,)?(--[A-Za-z0-9][\w-]*)", line)
        if m:
            flags.add(m.group(1))
    return flags


top_help = run("--help")
COMMANDS = [m.group(1) for line in section_lines(top_help, "Subcommands:")
            if (m := re.match(r"^  ([a-z][\w-]*)\s", line))]
GLOBAL = help_flags(top_help)  # --help, --version
FLAGS = {cmd: help_flags(run(cmd, "--help")) - {"--help"} for cmd in COMMANDS}
if not COMMANDS or "sweep" not in FLAGS:
    sys.exit(f"docs_test: could not read the commands from `opbench --help`:\n{top_help}")


# --- markdown ------------------------------------------------------------------------------
FENCE = re.compile(r"^ {0,3}(```|~~~)")


def split_fences(text):
    """(prose lines, code lines): fenced blocks apart, each line with its 1-based number."""
    prose, code, fenced = [], [], None
    for no, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if m and (fenced is None or line.strip().startswith(fenced)):
            fenced = None if fenced else m.group(1)
            continue
        (code if fenced else prose).append((no, line))
    return prose, code


def code_spans(line):
    return re.findall(r"`([^`]+)`", line)


def docs_files():
    files = ["README.md"] + sorted("docs/" + f for f in os.listdir(os.path.join(SRC, "docs")) if f.endswith(".md"))
    return [f for f in files if os.path.exists(os.path.join(SRC, f))]


# --- docs/cli.md: a section per command, its table the command's options ------------------
def check_cli_md():
    path = "docs/cli.md"
    text = read(path)
    sections, current = {}, None
    for no, line in split_fences(text)[0]:
        m = re.match(r"^## `?(?:opbench ?)?([a-z][\w-]*)?`?\s*$", line)
        if line.startswith("## "):
            current = (m.group(1) or "opbench") if m else None
            if current is not None:
                sections.setdefault(current, []).append((no, line))
            continue
        if current is not None:
            sections[current].append((no, line))
    for cmd in COMMANDS:
        if cmd not in sections:
            problem(path, f"no section '## {cmd}' for the command `opbench {cmd}` (opbench --help lists it)")
    for name, lines in sections.items():
        if name != "opbench" and name not in FLAGS:
            problem(f"{path}:{lines[0][0]}", f"section '## {name}' names no command of `opbench --help`")
            continue
        have = GLOBAL if name == "opbench" else FLAGS[name]
        where = "opbench --help" if name == "opbench" else f"opbench {name} --help"
        documented = {}
        for no, line in lines:
            if line.startswith("| `-"):
                first = line.split("|")[1]
                for flag in FLAG.findall(first):
                    documented.setdefault(flag, no)
        for flag in sorted(have - set(documented)):
            problem(path, f"{flag} of `{where}` is not documented: add a row `| \\`{flag} ...\\` | ... |` "
                          f"to the table of '## {name}'")
        for flag, no in sorted(documented.items()):
            if flag not in have:
                problem(f"{path}:{no}", f"the table of '## {name}' documents {flag}, which `{where}` does not have")
        # Every option named elsewhere in the section is its command's, unless a code span
        # names another command first (`merge --join-shards`).
        for no, line in lines:
            if line.startswith("| `-"):
                line = "|".join(line.split("|")[2:])
            for span in code_spans(line):
                other = span_command(span)
                if other:
                    continue  # checked with every command line (check_command_lines)
                for flag in FLAG.findall(span):
                    if flag not in have and flag not in GLOBAL:
                        problem(f"{path}:{no}", f"'## {name}' names {flag}, which `{where}` does not have")


def span_command(span):
    """The command a code span or code line runs (`opbench diff ...`, `merge --join-shards`)."""
    m = re.match(r"^(?:\S*/)?opbench\s+([a-z][\w-]*)", span.strip())
    if m:
        return m.group(1)
    m = re.match(r"^([a-z][\w-]*)\s+--", span.strip())
    if m and m.group(1) in FLAGS:
        return m.group(1)
    return None


# --- command lines in every doc ------------------------------------------------------------
def check_command_lines():
    for path in docs_files():
        prose, code = split_fences(read(path))
        candidates = [(no, span) for no, line in prose for span in code_spans(line)]
        candidates += [(no, line) for no, line in code]
        for no, text in candidates:
            for part in re.split(r"&&|\|\||;|\$\(|\s\|\s", text):
                part = re.sub(r"\s#\s.*$", "", part)  # a shell comment
                m = re.search(r"(?:^|[\s/])opbench\s+(-?-?[a-z][\w-]*)(.*)$", part)
                if m:
                    cmd, rest = m.group(1), m.group(2)
                    leading = re.match(r"^\s*(?:\S*/)?opbench\s", part) is not None
                else:
                    cmd, leading = span_command(part), True
                    if not cmd:
                        continue
                    rest = part.strip()[len(cmd):]
                if cmd.startswith("-"):
                    if leading and cmd not in GLOBAL:
                        problem(f"{path}:{no}", f"`opbench {cmd}`: no such option of `opbench --help`")
                    continue
                if cmd not in FLAGS:
                    if leading:
                        problem(f"{path}:{no}", f"`opbench {cmd}`: no such command (opbench --help: {', '.join(COMMANDS)})")
                    continue
                for flag in FLAG.findall(rest):
                    if flag not in FLAGS[cmd] and flag not in GLOBAL:
                        problem(f"{path}:{no}", f"`opbench {cmd} ... {flag}`: `opbench {cmd} --help` has no {flag}")


# --- links ---------------------------------------------------------------------------------
def slug(heading):
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip())
    text = re.sub(r"[^\w\- ]", "", text.lower())
    return text.replace(" ", "-")


def anchors(path):
    seen, out = {}, set()
    for _, line in split_fences(read(path))[0]:
        m = re.match(r"^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        s = slug(m.group(1))
        n = seen.get(s, 0)
        seen[s] = n + 1
        out.add(s if n == 0 else f"{s}-{n}")
    return out


def check_links():
    for path in docs_files():
        base = os.path.dirname(path)
        for no, line in split_fences(read(path))[0]:
            line = re.sub(r"`[^`]*`", "", line)
            for target in re.findall(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", line):
                if re.match(r"^[a-z]+:", target):
                    continue  # https:, mailto:
                file, _, anchor = target.partition("#")
                rel = os.path.normpath(os.path.join(base, file)) if file else path
                if not os.path.exists(os.path.join(SRC, rel)):
                    problem(f"{path}:{no}", f"link ({target}): no file {rel}")
                    continue
                if anchor and rel.endswith(".md") and anchor not in anchors(rel):
                    problem(f"{path}:{no}", f"link ({target}): {rel} has no heading with the anchor #{anchor}")


# --- version numbers ----------------------------------------------------------------------
def code_versions():
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "v.db")
        run("import", os.path.join(SRC, "tests/data/reference/tpa_decode_a800.md"), "--db", db)
        with sqlite3.connect(db) as c:
            schema = c.execute("PRAGMA user_version").fetchone()[0]
        export = json.loads(run("export", "--all", "--db", db))["version"]
    program = run("--version").split()[-1]
    return schema, export, program


def check_versions():
    schema, export, program = code_versions()
    rules = [(r"\bschema (?:version )?(\d+)\b", schema, "the store's schema version"),
             (r"\bmigrations? (\d+)\b", schema, "the store's schema version (its last migration)"),
             (r"\"version\": (\d+)\b", export, "the JSON export's version"),
             (r"\bexport (?:format )?version (\d+)\b", export, "the JSON export's version"),
             (r"\bopbench (\d+\.\d+\.\d+)\b", program, "`opbench --version`")]
    for path in docs_files():
        for no, line in enumerate(read(path).splitlines(), 1):
            for pattern, want, what in rules:
                for got in re.findall(pattern, line, re.IGNORECASE):
                    if str(got) != str(want):
                        problem(f"{path}:{no}", f"says {got} for {what}, which is {want} in the code")


# --- the ops' lists -----------------------------------------------------------------------
def check_ops():
    ops = [o["name"] for o in json.loads(run("list", "--format", "json", "--device", "cpu"))["ops"]]
    headings = {m.group(1) for _, line in split_fences(read("docs/ops.md"))[0]
                if (m := re.match(r"^## `?([a-z_0-9]+)`?\s*$", line))}
    bench = re.search(r"^\s*op:\s*\[([^\]]*)\]", read(".github/workflows/bench.yml"), re.MULTILINE)
    bench_ops = {o.strip() for o in bench.group(1).split(",")} if bench else set()
    cells = set()
    for node in ast.walk(ast.parse(read("studies/compare_do_bench.py"))):
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "CELLS" for t in node.targets):
            cells = {k.value for k in node.value.keys}
    readme = set(re.findall(r"`([a-z_0-9]+)`", read("README.md"))) & set(ops)
    lists = [("docs/ops.md", headings, "a section '## {op}'"),
             ("README.md", readme, "its name, `{op}`, in the README's list of operators"),
             (".github/workflows/bench.yml", bench_ops, "{op} in the job matrix's op list"),
             ("studies/compare_do_bench.py", cells, "an entry '{op}' in CELLS")]
    for op in ops:
        if not os.path.exists(os.path.join(SRC, "configs", op + ".yaml")):
            problem("configs/", f"no {op}.yaml for the op {op} (`opbench list`)")
        for path, have, what in lists:
            if op not in have:
                problem(path, f"the op {op} (`opbench list`) needs " + what.format(op=op))
    for path, have, _ in lists:
        for extra in sorted(have - set(ops)):
            problem(path, f"names the op {extra}, which `opbench list` does not have")


check_cli_md()
check_command_lines()
check_links()
check_versions()
check_ops()
for p in problems:
    print("FAIL " + p)
print(f"docs_test: {len(problems)} problems ({len(COMMANDS)} commands, {sum(map(len, FLAGS.values()))} options checked)")
sys.exit(1 if problems else 0)
