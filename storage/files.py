"""Local files: the one atomic write, and the one reader of YAML and JSON-lines files.

Every file the validator writes on local disk (a store's objects, the
ledger mirror, the LM response cache, the model file assembled from its
parts, a report's pages, judging outputs, benchmark caches) goes through
``atomic_open`` or ``write_atomic``: the bytes go to a temporary file in the
same directory, are flushed and fsynced, and ``os.replace`` puts them in
place. A reader therefore sees the old file or the new one, never half of
one, even when the writer is killed. Temporary files are named
``.<name>.<random>.tmp`` so that listings (``storage.local.LocalStore.list``)
can skip them.

``read_yaml`` and ``read_jsonl`` load the operator's files (miners, prompts,
datasets) with errors that name the file and the line.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import yaml

_NAME_LIMIT = 40  # a long file name plus the temp decoration must stay under the file system's 255


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], *, mode: int = 0o644, fsync: bool = True) -> Iterator[IO[bytes]]:
    """A binary file handle whose contents replace ``path`` when the block ends without an error.

    For data written in pieces (a 1 GB model assembled from its parts). On
    any exception the temporary file is removed and ``path`` is left as it
    was. ``mode`` is the new file's permission bits (``mkstemp`` would make
    it 0600). ``fsync=False`` is for caches that can be rebuilt.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name[:_NAME_LIMIT]}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            if fsync:
                os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_atomic(path: str | os.PathLike[str], data: bytes, *, mode: int = 0o644, fsync: bool = True) -> None:
    """Replace ``path`` with ``data`` atomically (temp file in the same directory, fsync, ``os.replace``)."""
    with atomic_open(path, mode=mode, fsync=fsync) as fh:
        fh.write(data)


def write_text_atomic(path: str | os.PathLike[str], text: str, *, mode: int = 0o644, fsync: bool = True) -> None:
    """``write_atomic`` for text, encoded as UTF-8."""
    write_atomic(path, text.encode("utf-8"), mode=mode, fsync=fsync)


class FileFormatError(ValueError):
    """A YAML or JSON-lines file that cannot be read or parsed; ``where`` names the file (and line)."""

    def __init__(self, path: str | os.PathLike[str], problem: str, line: int | None = None) -> None:
        self.path, self.problem, self.line = str(path), problem, line
        self.where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{self.where}: {problem}")


def _read_text(path: str | os.PathLike[str], encoding: str) -> str:
    try:
        return Path(path).read_text(encoding=encoding)
    except (OSError, UnicodeDecodeError) as exc:
        raise FileFormatError(path, f"cannot read: {getattr(exc, 'strerror', None) or exc}") from None


def read_yaml(path: str | os.PathLike[str], text: str | None = None) -> Any:
    """The document of a YAML file (``text`` if given, else the file's contents), safe-loaded.

    Raises ``FileFormatError`` ("cannot read: ..." or "malformed YAML: ...",
    with the line of the first error when YAML knows it).
    """

    if text is None:
        text = _read_text(path, "utf-8")
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or (str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        raise FileFormatError(path, f"malformed YAML: {problem}", mark.line + 1 if mark is not None else None) from None


def read_jsonl(
    path: str | os.PathLike[str], text: str | None = None, *, objects: bool = False
) -> list[tuple[int, Any]]:
    """(line number, value) for each non-blank line of a JSON-lines file (a leading BOM is ignored).

    Raises ``FileFormatError`` naming the file and the line: "cannot read",
    "malformed JSON (...)", or with ``objects`` "expected a JSON object, got
    list" for a line that is not an object.
    """
    if text is None:
        text = _read_text(path, "utf-8-sig")
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise FileFormatError(path, f"malformed JSON ({exc.msg} at column {exc.colno})", number) from None
        if objects and not isinstance(value, dict):
            raise FileFormatError(path, f"expected a JSON object, got {type(value).__name__}", number)
        rows.append((number, value))
    return rows


__all__ = ["FileFormatError", "atomic_open", "read_jsonl", "read_yaml", "write_atomic", "write_text_atomic"]
