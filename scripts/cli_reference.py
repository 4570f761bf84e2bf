#!/usr/bin/env python3
"""Rewrite the flag tables of docs/reference/cli.md from `tailrank CMD --help`.

Usage: scripts/cli_reference.py [path/to/tailrank] [--check]

Each `## \`tailrank CMD\`` section's table (| flag | meaning | default |) is replaced by the rows
of the help; the prose around the tables is kept. With --check, nothing is written and the exit
status is 1 when the file would change. crates/tailrank-cli/tests/cli_reference.rs checks that
every flag has a row.
"""
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs/reference/cli.md"


def options(binary, cmd):
    """(flag cell, meaning, default) per option of `tailrank CMD --help`, in help order."""
    text = subprocess.run([binary, cmd, "--help"], capture_output=True, text=True, check=True).stdout
    body = text.split("\nOptions:\n", 1)[1]
    entries = []
    for line in body.splitlines():
        m = re.match(r"^  (?:(-\w), )?\s*(--[\w-]+)(?: <([^>]+)>)?(\.\.\.)?(?:\s{2,}(.*))?$", line)
        if m:
            short, long, value, many, help_text = m.groups()
            value = value and value + ("…" if many else "")
            entries.append([short, long, value, help_text or ""])
        elif line and not line.startswith(" "):
            entries.append([None, None, line.rstrip(":"), ""])  # a help heading
        elif entries and line.strip():
            entries[-1][3] += " " + line.strip()
    rows = []
    for short, long, value, help_text in entries:
        if long is None:
            rows.append(f"| *{value}:* | | |")
            continue
        if long == "--help":
            continue
        default = ""
        d = re.search(r"\s*\[default: ([^\]]*)\]", help_text)
        if d:
            default = d.group(1) if "`" in d.group(1) else f"`{d.group(1)}`"
            help_text = help_text.replace(d.group(0), "")
        p = re.search(r"\s*\[possible values: ([^\]]*)\]", help_text)
        if p:
            help_text = help_text.replace(p.group(0), f" (one of: {p.group(1)})")
        flag = f"`{long}{' ' + value if value else ''}`"
        if short:
            flag = f"`{short}`, {flag}"
        rows.append(f"| {flag} | {help_text.strip().replace('|', chr(92) + '|')} | {default} |")
    return rows


def rewrite(doc, binary):
    out, cmd, lines, i = [], None, doc.splitlines(), 0
    while i < len(lines):
        line = lines[i]
        h = re.match(r"^## `tailrank (\w+)`", line)
        if h:
            cmd = h.group(1)
        if cmd and line.startswith("| flag | meaning | default |"):
            out += [line, lines[i + 1]] + options(binary, cmd)
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                i += 1
            continue
        out.append(line)
        i += 1
    return "\n".join(out) + "\n"


def main():
    args = [a for a in sys.argv[1:] if a != "--check"]
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    binary = args[0] if args else str(target / "release/tailrank")
    old = DOC.read_text()
    new = rewrite(old, binary)
    if "--check" in sys.argv:
        if new != old:
            sys.exit(f"{DOC} differs from `tailrank CMD --help`: run python3 scripts/cli_reference.py")
        return
    DOC.write_text(new)


if __name__ == "__main__":
    main()
