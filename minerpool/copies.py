"""What copycats copy: the answers of copied miners to recent prompts, as futures a copier can wait on.

A copycat copies the answer its source gives to the same request in the same round: an answer the source
published to the same prompt in an earlier round (prompts repeat) is stale, and the copycat waits for the
fresh one. (Replaying an earlier round's answer before the source sends it again is another attack: the
copycat would arrive first and, by the validator's clock, be the source; docs/validity.md "Same-model miners".)"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections import OrderedDict
from typing import Any

RECENT_PROMPTS = 64  # only answers to this many recent prompts can be copied (bounded memory)
FRESH_S = 1.0  # an answer published longer ago than this, when a copier asks, is an earlier round's


class CopyBoard:
    """Answers of the miners in ``copied``, keyed by the request's messages; used on the pool's loop only."""

    def __init__(self, copied: set[str]) -> None:
        self.copied = frozenset(copied)
        self._answers: OrderedDict[str, dict[str, asyncio.Future[dict[str, Any] | None]]] = OrderedDict()
        self._published: dict[tuple[str, str], float] = {}  # (key, name) -> loop time of the answer held

    def slot(
        self, messages: list[dict[str, Any]], name: str, fresh: bool = False
    ) -> asyncio.Future[dict[str, Any] | None]:
        """The future holding ``name``'s answer to ``messages`` (created when first asked for); with ``fresh`` (a
        copier asking), an answer published more than ``FRESH_S`` ago is replaced by a future for the next one."""
        key = hashlib.sha256(json.dumps(messages, sort_keys=True).encode("utf-8")).hexdigest()
        loop = asyncio.get_running_loop()
        if fresh and (futures := self._answers.get(key)) is not None and (held := futures.get(name)) is not None:
            if held.done() and loop.time() - self._published.get((key, name), loop.time()) > FRESH_S:
                del futures[name]
        futures = self._answers.get(key)
        if futures is None:
            futures = self._answers[key] = {}
            while len(self._answers) > RECENT_PROMPTS:
                gone, old = self._answers.popitem(last=False)
                _cancel(old.values())
                for n in old:
                    self._published.pop((gone, n), None)
        future = futures.get(name)
        if future is None:
            future = futures[name] = loop.create_future()
        return future

    def publish(self, name: str, messages: list[dict[str, Any]], payload: dict[str, Any] | None) -> None:
        """Record ``name``'s answer (None: it failed) when some copycat copies it (replacing an earlier round's)."""
        if name in self.copied:
            key = hashlib.sha256(json.dumps(messages, sort_keys=True).encode("utf-8")).hexdigest()
            future = self.slot(messages, name)
            if future.done():
                future = self._answers[key][name] = asyncio.get_running_loop().create_future()
            future.set_result(payload)
            self._published[(key, name)] = asyncio.get_running_loop().time()

    def close(self) -> None:
        for futures in self._answers.values():
            _cancel(futures.values())
        self._answers.clear()
        self._published.clear()


def _cancel(futures: Any) -> None:
    for future in futures:
        if not future.done():
            future.cancel()
