"""The documentation's sections and code blocks, found by heading, wherever the text lives:
README.md or docs/*.md at the top of the repository, or a file named (a client's README).

A section runs from its heading to the next heading of the same or a higher level; lines
inside a ``` fence are never headings (a `# comment` in a sh block is not one). The tests
that run the documentation's snippets take them from here, so moving a section from one
file to another needs no test change, and docs/ is checked for snippets nobody runs
(Tests/e2e_auth/test_doc_snippets.py)."""
from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HEADING = re.compile(r"^(#{1,6}) +(.*?)\s*$")


def doc_files() -> list[str]:
    """README.md and docs/*.md, relative to the repository."""
    return ["README.md"] + sorted(os.path.relpath(p, REPO) for p in glob.glob(os.path.join(REPO, "docs", "*.md")))


@dataclass(frozen=True)
class Block:
    """One fenced code block: its file, the heading it is under, its language and text."""
    path: str
    heading: str
    language: str
    text: str


def _lines(path: str) -> list[str]:
    with open(os.path.join(REPO, path), encoding="utf-8") as f:
        return f.read().split("\n")


def _headings(lines: list[str]) -> list[tuple[int, int, str]]:
    """(line index, level, "## Text") of each heading outside fences."""
    found, fence = [], False
    for i, line in enumerate(lines):
        if line.startswith("```"):
            fence = not fence
            continue
        m = None if fence else HEADING.match(line)
        if m:
            found.append((i, len(m.group(1)), f"{m.group(1)} {m.group(2)}"))
    return found


def where(heading: str) -> str:
    """The one file of README.md and docs/*.md that has `heading` (e.g. "## From a shell")."""
    holders = [p for p in doc_files() if heading in (h for _, _, h in _headings(_lines(p)))]
    assert len(holders) == 1, f"'{heading}' is in {holders or 'no file'} of {doc_files()}"
    return holders[0]


def section(heading: str, path: str | None = None) -> str:
    """The text of the section under `heading` (the heading line included), in `path` or in
    the one documentation file that has it."""
    path = path or where(heading)
    lines = _lines(path)
    heads = _headings(lines)
    starts = [(i, level) for i, level, h in heads if h == heading]
    assert len(starts) == 1, f"'{heading}' appears {len(starts)} times in {path}"
    start, level = starts[0]
    end = next((i for i, lv, _ in heads if i > start and lv <= level), len(lines))
    return "\n".join(lines[start:end]) + "\n"


def blocks(heading: str, language: str, path: str | None = None) -> list[str]:
    """The ```language blocks of one section, in order (subsections included)."""
    text = section(heading, path)
    found = re.findall(r"^```" + re.escape(language) + r"\n(.*?)^```$", text, re.S | re.M)
    assert found, f"no {language} block under '{heading}' in {path or where(heading)}"
    return found


def all_blocks(path: str) -> list[Block]:
    """Every fenced block of a file with the nearest heading above it."""
    lines = _lines(path)
    out, fence, heading, language, body = [], None, "", "", []
    for line in lines:
        if fence is None:
            m = HEADING.match(line)
            if m:
                heading = f"{m.group(1)} {m.group(2)}"
            elif line.startswith("```"):
                fence, language, body = line, line[3:].strip(), []
        elif line.startswith("```"):
            out.append(Block(path, heading, language, "\n".join(body) + "\n"))
            fence = None
        else:
            body.append(line)
    assert fence is None, f"an unclosed ``` fence in {path}"
    return out
