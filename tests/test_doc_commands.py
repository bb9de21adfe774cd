"""Every ``validator ...`` command shown in README.md and docs/*.md parses with the CLI's own parser.

Commands are taken from fenced code blocks and from inline code. A concrete command
(``validator report runs/replay --out runs/report``) must parse as it stands; a synopsis
(brackets, ``|`` alternatives, ``...``, ``<placeholders>`` or an ALL-CAPS value where a number
goes) must name an existing subcommand and only options that subcommand has; a command named in
prose (``validator round`` in a sentence) must exist. Lines that are a command's output (``validator daemon: store ... is in use``) are not commands.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

from validator.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

_FENCE = re.compile(r"^```.*?$(.*?)^```", re.S | re.M)
_INLINE = re.compile(r"`([^`\n]+)`")
_ENV = re.compile(r"^[A-Z][A-Z0-9_]*=\S*$")
_OPTION = re.compile(r"^(--?[A-Za-z][\w-]*)")


def _strip_comment(line: str) -> str:
    quote = None
    for i, c in enumerate(line):
        if c in "\"'" and quote in (None, c):
            quote = None if quote else c
        elif c == "#" and quote is None and (i == 0 or line[i - 1] == " "):
            return line[:i].rstrip()
    return line


def _split_top_level(text: str, sep: str) -> list[str]:
    """``text`` split on ``sep`` outside brackets."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        c = text[i]
        depth += c == "["
        depth -= c == "]"
        if depth == 0 and text.startswith(sep, i):
            parts.append(text[start:i])
            start = i = i + len(sep)
            continue
        i += 1
    return [*parts, text[start:]]


def _commands_in(text: str) -> list[str]:
    """The ``validator`` commands of one shell line (or inline code span)."""
    found = []
    for segment in re.split(r"&&|;", text):
        words = segment.strip().split()
        while words and _ENV.match(words[0]):  # VAR=value validator ...
            words = words[1:]
        if len(words) < 1 or words[0] != "validator":
            continue
        if len(words) > 1 and words[1].endswith(":"):
            continue  # the command's output ("validator daemon: ..."), not a command
        command = " ".join(words)
        # alternatives: "validator judge ... / validator selectit X", "validator lm serve | lm score"
        for alt in (a for part in _split_top_level(command, " / ") for a in _split_top_level(part, " | ")):
            alt = alt.strip()
            found.append(alt if alt.startswith("validator") else f"validator {alt}")
    return found


def doc_commands() -> list[tuple[str, int, str]]:
    """(file, line, command) for every command shown."""
    out = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        fenced_spans = []
        for block in _FENCE.finditer(text):
            fenced_spans.append(block.span())
            lines = block.group(1).split("\n")
            first = text.count("\n", 0, block.start(1)) + 1
            i = 0
            while i < len(lines):
                number, line = first + i, _strip_comment(lines[i])
                # a command continued with "\" or a synopsis continued on indented "[--option]" lines
                while i + 1 < len(lines) and (
                    line.endswith("\\")
                    or (line.lstrip().startswith("validator") and lines[i + 1].lstrip().startswith("["))
                ):
                    i += 1
                    line = line.rstrip("\\") + " " + _strip_comment(lines[i]).strip()
                out += [(path.name, number, c) for c in _commands_in(line)]
                i += 1
        for m in _INLINE.finditer(text):
            if any(a <= m.start() < b for a, b in fenced_spans):
                continue
            out += [(path.name, text.count("\n", 0, m.start()) + 1, c) for c in _commands_in(m.group(1))]
    return out


def _subcommand(parser: argparse.ArgumentParser, words: list[str]) -> tuple[argparse.ArgumentParser, list[str]]:
    """The (sub)parser a command's leading words select, and the path taken."""
    path = []
    for word in words:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs or word.startswith("-"):
            break
        if word not in subs[0].choices:
            raise AssertionError(
                f"no subcommand {' '.join([*path, word])!r} (there are: {', '.join(sorted(subs[0].choices))})"
            )
        parser = subs[0].choices[word]
        path.append(word)
    return parser, path


def _is_synopsis(command: str, words: list[str]) -> bool:
    return (
        any(c in command for c in "[]<>|")
        or "..." in command
        or ".." in command
        or "…" in command
        or any(re.fullmatch(r"[A-Z][A-Z_]*", w) for w in words)
    )


def check(command: str) -> None:
    parser = build_parser()
    words = shlex.split(command)[1:]
    sub, path = _subcommand(parser, [w.strip("[]") for w in words])
    if len(path) == len(words):  # a command named in prose ("`validator round` stores ..."): it must exist
        return
    if not _is_synopsis(command, words):
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                parser.parse_args(words)
        except SystemExit as exc:
            if exc.code not in (0, None):
                raise AssertionError(f"does not parse: {err.getvalue().strip().splitlines()[-1:]}") from None
        return
    known = set(sub._option_string_actions) | set(parser._option_string_actions)
    for word in words[len(path) :]:
        for option in word.strip("[]").split("/"):  # --lm/--no-lm
            m = _OPTION.match(option.split("=")[0])
            if m and m.group(1) not in known:
                raise AssertionError(f"validator {' '.join(path)} has no option {m.group(1)}")


COMMANDS = doc_commands()


def test_the_docs_show_commands():
    assert len(COMMANDS) > 40
    assert ("README.md", 12, "validator daemon --rounds 3 --store runs/daemon") in COMMANDS


@pytest.mark.parametrize("where,line,command", COMMANDS, ids=[f"{w}:{n}" for w, n, _ in COMMANDS])
def test_every_command_shown_parses(where, line, command):
    check(command)


@pytest.mark.parametrize(
    "command,error",
    [
        ("validator review runs/daemon", "no subcommand 'review'"),
        ("validator daemon --rounds 3 --no-such-flag", "does not parse"),
        ("validator daemon [--rounds N] [--frobnicate]", "no option --frobnicate"),
        ("validator lm score --question Q [--nope]", "no option --nope"),
    ],
)
def test_a_wrong_command_is_caught(command, error):
    with pytest.raises(AssertionError, match=re.escape(error)):
        check(command)


def test_commands_are_found_in_blocks_lines_and_alternatives():
    assert _commands_in("LM_CALIBRATION=c.json validator lm eval x.jsonl") == ["validator lm eval x.jsonl"]
    assert _commands_in(". scripts/venv.sh && validator daemon --rounds 3") == ["validator daemon --rounds 3"]
    assert _commands_in("validator lm serve | lm score") == ["validator lm serve", "validator lm score"]
    assert _commands_in("validator judge ... / validator selectit DATA.jsonl") == [
        "validator judge ...",
        "validator selectit DATA.jsonl",
    ]
    assert _commands_in("validator whatif S [--round-ids a,b | --since T]") == [
        "validator whatif S [--round-ids a,b | --since T]"
    ]
    assert _commands_in("validator daemon: store x is in use") == []
    assert _strip_comment('validator round --prompt "a # b"   # one round') == 'validator round --prompt "a # b"'
