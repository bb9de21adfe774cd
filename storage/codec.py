"""Canonical JSON bytes for records: deterministic, ASCII-only, no NaN."""

from __future__ import annotations

import json
from typing import Any


def dumps(obj: Any) -> bytes:
    """Encode ``obj`` so the same value always gives the same bytes.

    ASCII-only (every non-ASCII character escaped, so lone surrogates in
    untrusted ids cannot break the encoding), 2-space indent, NaN/inf refused.
    """
    return (json.dumps(obj, ensure_ascii=True, indent=2, allow_nan=False) + "\n").encode("ascii")


def loads(data: bytes) -> Any:
    return json.loads(data.decode("utf-8"))
