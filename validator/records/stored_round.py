"""A round as stored: the round itself and, when the daemon asked the miners, the daemon's marker.

``rounds/<round>/input.json`` holds a ``consensus.types.Round``: the round
(the input contract, ``validator.records.round_input``), each failed miner's detail (``Round.failures``), and
the daemon's marker (``Round.daemon``, a ``consensus.types.InputMarker``: which sequence the round is, when it
started, whether it was a canary, and the identity links the ledger held
before the round: ``consensus.identity.Link``, for the miners of this round;
and the hotkeys the daemon dropped from its ledger since the last round,
``Ledger.forgotten``: chain mode's deregistered hotkeys; on a task round the task: its family, the
generator's version, seed and config and the verifier's entry, so that replay verifies exactly what was asked).
The links are stored with the input because the ledger moves on: replay and
what-if evaluate the round with the links the daemon used, whatever the ledger
says today. The forgotten hotkeys are stored so that a ledger folded from the
stored rounds drops them where the daemon's did (``Ledger.without`` before the round). ``stored_to_json`` is the one writer of that
document's contents and ``parse_stored`` reads it back; ``validator.records.reader.RoundReader``
reads it from a store for the daemon's recovery, store replay, what-if, both engines and the review.

The marker lives only in the validator's stored input: miners see a plain
prompt. A round asked by ``validator round`` or read from a rounds file has
none (and its failures' details are not stored).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from consensus.errors import RoundError
from consensus.identity import Link
from consensus.types import InputMarker, Round
from tasks.source import Task, TaskError
from validator.records.round_input import InputLimits, parse_round, round_to_json


def stored_to_json(round_: Round) -> dict[str, Any]:
    """The stored input: the round's input-contract form, then the daemon's marker when there is one."""
    doc = round_to_json(round_)
    if round_.daemon is not None:
        m = round_.daemon
        doc["daemon"] = {
            "sequence": m.sequence,
            "started_at": m.started_at,
            "failures": dict(round_.failures),
            "canary": m.canary,
        }
        if m.links:  # absent when there are none: inputs stored before links existed read the same
            doc["daemon"]["links"] = [
                {
                    "first": k.first,
                    "second": k.second,
                    "follower": k.follower,
                    "close": k.close,
                    "together": k.together,
                }
                for k in m.links
            ]
        if m.forgotten:  # absent when there are none, like the links
            doc["daemon"]["forgotten"] = list(m.forgotten)
        if m.tick is not None:  # absent in inputs stored before committees
            doc["daemon"].update(tick=m.tick, committee=m.committee, committees=m.committees)
        if m.task is not None:  # absent on a round that asked a prompt
            doc["daemon"]["task"] = m.task.to_json()
    return doc


def parse_stored(doc: Any, where: str, limits: InputLimits | None = None) -> Round:
    """A decoded input document as a ``Round`` with its failures and marker; ``RoundError`` (a ``ValueError``)
    names ``where`` and the field."""
    round_ = parse_round(doc, where, limits)
    marker = read_marker(doc, where)
    failures = doc["daemon"].get("failures") if marker is not None else None
    details = {str(k): str(v) for k, v in failures.items()} if isinstance(failures, dict) else {}
    return dataclasses.replace(round_, failures=details, daemon=marker)


def read_marker(doc: Any, where: str = "input") -> InputMarker | None:
    """The daemon's marker of a decoded input document; None when it has none (or not as an object).
    ``RoundError`` naming ``where`` for links that are not links, or forgotten hotkeys that are not strings."""
    marker = doc.get("daemon") if isinstance(doc, dict) else None
    if not isinstance(marker, dict):
        return None
    sequence = marker.get("sequence")
    started = marker.get("started_at")
    return InputMarker(
        sequence=sequence if isinstance(sequence, int) and not isinstance(sequence, bool) else None,
        started_at=started if isinstance(started, str) else None,
        canary=marker.get("canary") is True,
        links=_read_links(marker.get("links"), where),
        forgotten=_read_forgotten(marker.get("forgotten"), where),
        task=_read_task(marker.get("task"), where),
        **_read_tick(marker, where),
    )


def _read_task(value: Any, where: str) -> Task | None:
    if value is None:
        return None
    try:
        return Task.from_json(value)
    except TaskError as exc:
        raise RoundError(where, "daemon.task", str(exc)) from None


def _read_tick(marker: dict[str, Any], where: str) -> dict[str, int]:
    """The marker's tick, committee and committees (all three or none)."""
    if marker.get("tick") is None:
        return {}
    values = {k: marker.get(k) for k in ("tick", "committee", "committees")}
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in values.values()):
        raise RoundError(where, "daemon.tick", "tick, committee and committees must be integers")
    if not (values["tick"] >= 1 and 0 <= values["committee"] < values["committees"]):
        raise RoundError(where, "daemon.tick", f"not a committee of a tick: {values}")
    return values


def _read_forgotten(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(h, str) for h in value):
        raise RoundError(where, "daemon.forgotten", "expected a list of hotkeys")
    return tuple(value)


def _read_links(value: Any, where: str) -> tuple[Link, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise RoundError(where, "daemon.links", f"expected a list, got {type(value).__name__}")
    out = []
    for i, item in enumerate(value):
        try:
            first, second, follower = item["first"], item["second"], item["follower"]
            close, together = item["close"], item["together"]
            if not (
                isinstance(first, str)
                and isinstance(second, str)
                and (follower is None or follower in (first, second))
                and all(isinstance(n, int) and not isinstance(n, bool) for n in (close, together))
            ):
                raise TypeError("a link names two miners, its follower (one of them, or null) and two counts")
        except (KeyError, TypeError) as exc:
            raise RoundError(
                where, f"daemon.links[{i}]", str(exc) if isinstance(exc, TypeError) else f"missing {exc}"
            ) from None
        out.append(Link(first, second, follower, close, together))
    return tuple(out)
