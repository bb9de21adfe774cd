"""Which recorded task verdicts a change of the answer extraction turns (issue 44, item 2).

    python -m benchmarks.task_extract_changes [--base REV] [--dir benchmarks/results/tasks] [--show N]

Every recorded reply under ``--dir`` (every ``*.jsonl`` below it: ``benchmarks.task_record``'s ladders and
``benchmarks.task_defaults``' sets; each line has the family, seed, config, reasoning-gym version and the reply's
text) is judged twice by ``tasks.verify``: with ``tasks/extract.py`` as it is at git revision ``--base`` (default
``HEAD``) and as it is in the working tree. Printed: the replies judged, how many verdicts turn wrong -> right and
right -> wrong, how many keep their verdict with another reading or score, and the turned ones (file, family,
expected answer, the reply's last line, the reading before and after).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tasks.extract import Extracted, extract
from tasks.source import VERSION, TaskSpec, generate

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DIR = ROOT / "benchmarks" / "results" / "tasks"
Extractor = Callable[[str, str], Extracted]
# the module, not the function of that name that the tasks package exports
verify_module: Any = importlib.import_module("tasks.verify")


@dataclass(frozen=True)
class Change:
    path: str
    family: str
    expected: str
    last_line: str
    before: str | None
    after: str | None
    right_before: bool
    right_after: bool


def base_extractor(rev: str) -> Extractor:
    """``tasks/extract.py`` at ``rev``, loaded as its own module; an extractor of one argument is given none more."""
    source = subprocess.run(
        ["git", "show", f"{rev}:tasks/extract.py"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location("_base_extract", f.name)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["_base_extract"] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    Path(f.name).unlink()
    base: Any = module.extract
    try:
        base("x", "q")
    except TypeError:
        return lambda text, question: base(text)
    return base  # type: ignore[no-any-return]


def records(directory: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    for path in sorted(directory.rglob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                yield str(path.relative_to(directory)), json.loads(line)
            except json.JSONDecodeError:
                continue  # a half-written last line of an interrupted recording


def judged(record: dict[str, Any], extractor: Extractor) -> Any:
    task = generate(
        TaskSpec(record["family"], record["seed"], record.get("config") or {}, record.get("rg_version", VERSION))
    )
    saved = verify_module.extract
    verify_module.extract = extractor
    try:
        return verify_module.verify(task, record["text"]), task.answer
    finally:
        verify_module.extract = saved


def changes(directory: Path, before: Extractor, after: Extractor = extract) -> tuple[int, list[Change], int]:
    """(replies judged, the verdicts turned, the replies keeping their verdict with another reading or score)."""
    n, turned, other = 0, [], 0
    for path, record in records(directory):
        (old, expected), (new, _) = judged(record, before), judged(record, after)
        n += 1
        if old.right != new.right:
            lines = record["text"].strip().splitlines() or [""]
            turned.append(
                Change(path, record["family"], expected, lines[-1][:160], old.answer, new.answer, old.right, new.right)
            )
        elif (old.answer, old.score) != (new.answer, new.score):
            other += 1
    return n, turned, other


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--base", default="HEAD", help="the git revision whose tasks/extract.py is compared")
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--show", type=int, default=50, help="list at most this many turned verdicts")
    args = parser.parse_args(argv)
    n, turned, other = changes(args.dir, base_extractor(args.base))
    up = [c for c in turned if c.right_after]
    down = [c for c in turned if not c.right_after]
    print(f"replies {n}: wrong -> right {len(up)}, right -> wrong {len(down)}, same verdict, other reading {other}")
    for c in (down + up)[: args.show]:
        arrow = "wrong -> right" if c.right_after else "RIGHT -> WRONG"
        print(
            f"{arrow} | {c.path} | {c.family} | expected {c.expected!r} | {c.last_line!r} | {c.before!r} -> {c.after!r}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
