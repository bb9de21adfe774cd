"""A directory on local disk as a store (the embedded default). Writes are atomic (``storage.files``)."""

from __future__ import annotations

import os
from pathlib import Path

from storage import keys
from storage.errors import KeyNotFound, classify_os_error
from storage.files import write_atomic


class LocalStore:
    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    def __repr__(self) -> str:
        return f"LocalStore({str(self.root)!r})"

    def _path(self, key: str) -> Path:
        return self.root.joinpath(*keys.check(key).split("/"))

    def put(self, key: str, data: bytes, content_type: str = "application/octet-stream") -> None:
        path = self._path(key)
        try:
            write_atomic(path, data)
        except OSError as exc:
            raise classify_os_error(f"cannot write {key!r} under {self.root}", exc) from exc

    def get(self, key: str) -> bytes:
        try:
            return self._path(key).read_bytes()
        except FileNotFoundError as exc:
            raise KeyNotFound(f"no object {key!r} in {self.root}") from exc
        except OSError as exc:
            raise classify_os_error(f"cannot read {key!r} under {self.root}", exc) from exc

    def delete(self, key: str) -> None:
        """Remove ``key`` (no error when it is absent), and the folders it leaves empty: as in S3, a key's
        "folder" exists only while it holds something (the start-up probe left an empty ``probe/`` behind)."""
        path = self._path(key)
        try:
            path.unlink(missing_ok=True)
        except OSError as exc:
            raise classify_os_error(f"cannot delete {key!r} under {self.root}", exc) from exc
        for parent in path.parents:
            if parent == self.root or self.root not in parent.parents:
                break
            try:
                parent.rmdir()
            except OSError:  # not empty (or already gone): the folders above are not empty either
                break

    def exists(self, key: str) -> bool:
        return self._path(key).is_file()

    def list(self, prefix: str = "") -> list[str]:
        if not self.root.is_dir():
            return []
        found = []
        for dirpath, _dirs, files in os.walk(self.root):
            for name in files:
                if name.startswith(".") and name.endswith(".tmp"):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, name), self.root).replace(os.sep, "/")
                if rel.startswith(prefix):
                    found.append(rel)
        return sorted(found)
