#!/usr/bin/env python3
"""No function over 60 lines in the host C++ of src/, kernels/ and baselines/ (ctest
function_length_test, CPU; Python's standard library only).

A function's length is its lines from the first line of its signature to its closing brace.
Function bodies are found by their braces once comments, string and character literals and
preprocessor lines are blanked: a brace outside any function body opens one when what stands
before it (since the last `;`, `{` or `}`) is a parameter list, perhaps followed by qualifiers
(`const`, `noexcept`, `override`, `-> T`, ...) or a constructor's member initializers; a lambda
outside a function counts as one. Braces inside a body are the body's, lambdas included, so a
function is measured with its lambdas. Namespaces, classes, enums and braced initializers (the
tables of data) are not functions. GPU code (`__global__` and `__device__` functions) is not
held to the rule: its shape follows the hardware's (registers, unrolling, shared memory).

ALLOWED is the only way past the rule, and only for a function that is a table of data (it
builds rows and returns them, nothing else); each entry says why. An entry names a folder or
file and a function; one that matches no long function is reported too, so the list never
outlives its reason.

Each problem is one line: FILE:LINE: NAME is N lines (at most 60).
Usage: function_length_test.py SOURCE_DIR [FILE...]  (files: check those instead of the tree)
"""
import os
import re
import sys

LIMIT = 60
FOLDERS = ("src", "kernels", "baselines")
SUFFIXES = (".cpp", ".hpp", ".h", ".cu", ".cuh")

# (folder or file relative to the source dir, function name) -> why it may be longer than LIMIT.
ALLOWED = {
}


def allowed(rel, name):
    """The ALLOWED entry that lets NAME in the file REL past the rule, or None."""
    for where, function in ALLOWED:
        if function == name and (rel == where or rel.startswith(where + "/")):
            return (where, function)
    return None


def blank(text):
    """text with comments, literals and preprocessor lines replaced by spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c in " \t":
            out.append(c)
            i += 1
            continue
        if line_start and c == "#":  # a preprocessor line, with its continuations
            j = i
            while j < n and text[j] != "\n":
                j = j + 2 if text[j] == "\\" and j + 1 < n else j + 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        line_start = c == "\n"
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif c == "R" and text.startswith('"', i + 1) and not (i and (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^()\\ ]{0,16})\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = text.find(")" + m.group(1) + '"', i + m.end())
            j = n if end < 0 else end + len(m.group(1)) + 2
        elif c == '"' or (c == "'" and not (i and text[i - 1].isalnum())):  # not a digit separator
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j += 1
        else:
            out.append(c)
            i += 1
            continue
        out.append(re.sub(r"[^\n]", " ", text[i:j]))
        i = j
    return "".join(out)


QUALIFIERS = r"(?:\s*(?:const|noexcept(?:\s*\([^()]*\))?|override|final|mutable|volatile|&&?|try|->\s*[\w:<>,\s*&]+))*"
PARAMETERS = r"\([^()]*(?:\([^()]*\)[^()]*)*\)"
SIGNATURE = re.compile(r"\)" + QUALIFIERS + r"\s*$")
INITIALIZERS = re.compile(r"\)" + QUALIFIERS + r"\s*:(?!:)")
LAMBDA = re.compile(r"(?:^|[=(,{]|\breturn)\s*\[[^\[\]]*\]\s*(?:" + PARAMETERS + r")?" + QUALIFIERS + r"\s*$")
CONTROL = re.compile(r"^\s*(?:if|for|while|switch|catch|do|else)\b")
DEVICE = re.compile(r"\b__(?:global|device)__\b")
LEADING = re.compile(r"\s*(?:(?:public|private|protected)\s*:(?!:)\s*)*")  # not the signature's


def function_name(header):
    """The name a header declares: what stands before its parameter list's opening parenthesis."""
    depth, cut = 0, None
    for k, ch in enumerate(header):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(0, depth - 1)
        elif ch == "(" and depth == 0:
            if re.search(r"operator\s*$", header[:k]):  # operator()
                continue
            cut = k
            break
    if cut is None:
        return "?"
    m = re.search(r"((?:[\w~]+\s*::\s*)*(?:operator\s*\S+|~?\w+))\s*$", header[:cut])
    if not m:
        return "lambda" if "]" in header[:cut + 1] else "?"
    name = re.sub(r"\s+", "", m.group(1))
    return name


def brace_kind(header):
    """What a brace outside any function body opens, from the text before it: "function", "inner"
    (a braced initializer inside parentheses or a member's, whose closing resumes the text before
    it) or "scope" (a namespace, class, enum or table)."""
    if LAMBDA.search(header):
        return "function"
    if header.count("(") > header.count(")"):
        return "inner"
    if INITIALIZERS.search(header) and re.search(r"[\w>]\s*$", header):
        return "inner"
    if not CONTROL.match(header) and (SIGNATURE.search(header) or INITIALIZERS.search(header)):
        return "function"
    return "scope"


def functions(code):
    """(first line, last line, name) of each host function body in blanked code (lines from 1)."""
    found = []
    stack = []  # per open brace: (kind, where the text before it started, name)
    header_from = 0  # where the text before the next brace starts
    for i, c in enumerate(code):
        if c == "{":
            if stack and stack[-1][0] in ("function", "body"):
                stack.append(("body", header_from, None))
            else:
                header = code[header_from:i]
                kind = brace_kind(header)
                start = header_from + LEADING.match(header).end()
                name = function_name(header.strip()) if kind == "function" else None
                if kind == "function" and DEVICE.search(header):
                    name = None  # GPU code: its shape follows the hardware's, not this rule
                stack.append((kind, start, name))
            header_from = i + 1
        elif c == "}" and stack:
            kind, start, name = stack.pop()
            header_from = start if kind == "inner" else i + 1
            if kind == "function" and name is not None:
                found.append((code.count("\n", 0, start) + 1, code.count("\n", 0, i) + 1, name))
        elif c == ";" and not (stack and stack[-1][0] in ("function", "body")):
            header_from = i + 1
    return found


def sources(root):
    for folder in FOLDERS:
        for dirpath, _, names in os.walk(os.path.join(root, folder)):
            for name in sorted(names):
                if name.endswith(SUFFIXES):
                    yield os.path.join(dirpath, name)


def main():
    root = sys.argv[1]
    files = sys.argv[2:] or sorted(sources(root))
    problems, allowed_seen = [], set()
    for path in files:
        rel = os.path.relpath(path, root)
        with open(path, encoding="utf-8") as f:
            code = blank(f.read())
        for first, last, name in functions(code):
            length = last - first + 1
            if length <= LIMIT:
                continue
            entry = allowed(rel, name)
            if entry:
                allowed_seen.add(entry)
                continue
            problems.append(f"{rel}:{first}: {name} is {length} lines (at most {LIMIT}): "
                            "split it into named steps")
    if not sys.argv[2:]:
        for where, name in sorted(set(ALLOWED) - allowed_seen):
            problems.append(f"{where}: {name} is allowed past {LIMIT} lines but is no longer "
                            "that long (or gone): drop it from ALLOWED")
    for p in problems:
        print(p)
    print(f"function_length_test: {len(files)} files, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
