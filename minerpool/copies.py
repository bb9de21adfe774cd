"""What copycats copy: the answers of copied miners to recent prompts, as futures a copier can wait on."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections import OrderedDict
from typing import Any

RECENT_PROMPTS = 64  # only answers to this many recent prompts can be copied (bounded memory)


class CopyBoard:
    """Answers of the miners in ``copied``, keyed by the request's messages; used on the pool's loop only."""

    def __init__(self, copied: set[str]) -> None:
        self.copied = frozenset(copied)
        self._answers: OrderedDict[str, dict[str, asyncio.Future[dict[str, Any] | None]]] = OrderedDict()

    def slot(self, messages: list[dict[str, Any]], name: str) -> asyncio.Future[dict[str, Any] | None]:
        """The future holding ``name``'s answer to ``messages`` (created when first asked for)."""
        key = hashlib.sha256(json.dumps(messages, sort_keys=True).encode("utf-8")).hexdigest()
        futures = self._answers.get(key)
        if futures is None:
            futures = self._answers[key] = {}
            while len(self._answers) > RECENT_PROMPTS:
                _, old = self._answers.popitem(last=False)
                _cancel(old.values())
        future = futures.get(name)
        if future is None:
            future = futures[name] = asyncio.get_running_loop().create_future()
        return future

    def publish(self, name: str, messages: list[dict[str, Any]], payload: dict[str, Any] | None) -> None:
        """Record ``name``'s answer (None: it failed) when some copycat copies it."""
        if name in self.copied:
            future = self.slot(messages, name)
            if not future.done():
                future.set_result(payload)

    def close(self) -> None:
        for futures in self._answers.values():
            _cancel(futures.values())
        self._answers.clear()


def _cancel(futures: Any) -> None:
    for future in futures:
        if not future.done():
            future.cancel()
