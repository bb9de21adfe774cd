"""A recorded network: many miners answering from a rounds file, no LM per miner (``benchmarks.network``).

Miner identities answer as the models of a rounds file in the validity sets' format (``../shared/validity``:
one round per prompt, one response per model), matched by prompt, so the daemon runs against 80-256
realistic miners on a laptop. ``RecordedNetwork`` knows its ``specs`` (hotkey and entity, from which the
daemon draws its committees) and ``answer``s one committee (``members``) at a time, seeing who is in it, as
the adversaries would; ``benchmarks.network`` hands it to the daemon as its ``Query``. It serves only the lab
(it lived in ``minerpool`` until 2026-11-29) and imports nothing of ``validator``.

Personas (``RecordedPersona.kind``):

- ``honest``: its model's recorded answer.
- ``farm``: F identities of one operator (``operator``) serving one model. Alone in a committee an identity must answer
  with its model's own answer; several in one committee send variants of that one answer (its sentences
  reordered and trimmed: ``paraphrase``), one produced answer shared.
- ``copycat``: copies a committee-mate's answer (its partner, a colluding honest identity) when the partner
  is in its committee, arriving ``COPY_DELAY_S`` after it; otherwise it has nothing to send and gives an empty answer.

With ``arrival="random"`` each answer arrives at a time fixed by the prompt and the identity (``arrival``: 1-3 s, the validator's receipt
clock, ``Response.received_s``): which of two identities of one model arrives first changes from prompt to prompt.
That is ``arrival="random"``; the default, ``"order"``, keeps the order of before: the committee's listing order,
10 ms apart, no receipt clock (an honest identity, listed before the farms, the copycats and the extra identities
of its model, always first), so earlier figures stay reproducible.
- ``sybil``: a group voting for one wrong answer: every member sends a variant of one off-topic text, or, with a
  ``model`` (the worst model of the set), of that model's answer to the prompt.
- ``weak``, ``wrong`` (``benchmarks.task_network``'s weak and wrong majorities): on free-form prompts as a sybil
  voting for its ``model`` (variants of the worst model's answer); ``cache``: its ``model``'s answer (the best
  model's, bought once).
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from consensus.types import Response

COPY_DELAY_S = 0.5  # a copycat's answer arrives this long after its partner's

OFF_TOPIC = (
    "The best way to store fresh basil is upright in a glass of water on the counter, loosely covered with a bag. "
    "Change the water every two days and trim the stems. Keep it away from the fridge, which blackens the leaves. "
    "Pinch off flowers so the plant keeps producing leaves."
)


@dataclass(frozen=True)
class RecordedPersona:
    hotkey: str
    kind: str  # honest, farm, copycat, sybil
    model: str | None = None  # the model whose answers it serves (honest, farm); the partner's (copycat)
    entity: str | None = None  # declared operator (a farm declared as one entity)
    partner: str | None = None  # copycat: the hotkey it copies
    operator: str | None = None  # farm, sybil: who runs the identity (its identities share one answer)
    rung: str | None = None  # the recorded task ladder's rung whose task answers it serves (benchmarks.task_network)


def arrival(prompt: str, hotkey: str) -> float:
    """When ``hotkey``'s answer to ``prompt`` reaches the validator: 1-3 s, fixed by the two (sha256), so which of
    two identities arrives first differs from prompt to prompt as on a network, and a replay is identical."""
    digest = hashlib.sha256(f"arrival:{prompt}:{hotkey}".encode()).digest()
    return 1.0 + 2.0 * int.from_bytes(digest[:4], "big") / 2**32


def paraphrase(text: str, variant: int) -> str:
    """A variant of ``text`` for the ``variant``-th identity sharing it: sentences rotated, the last one dropped
    for odd variants (what a farm without an LM of its own can do cheaply); variant 0 is the text itself."""
    if variant == 0:
        return text
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s]
    if len(sentences) < 3:
        return text + ("" if variant % 2 == 0 else " In short: as above.")
    k = variant % len(sentences)
    rotated = sentences[k:] + sentences[:k]
    return " ".join(rotated[:-1] if variant % 2 else rotated)


class RecordedNetwork:
    """The daemon's query over recorded answers (see the module docstring)."""

    def __init__(
        self, answers: Mapping[str, Mapping[str, str]], personas: Sequence[RecordedPersona], arrival: str = "order"
    ) -> None:
        if arrival not in ("random", "order"):
            raise ValueError(f"arrival must be 'random' or 'order', got {arrival!r}")
        self.arrival = arrival  # "order": the committee's listing order, 10 ms apart (before issue 46)
        self.answers = answers  # prompt -> model -> text
        self.personas = {p.hotkey: p for p in personas}
        self.specs = tuple(personas)
        self.produced: dict[str, int] = {}  # operator -> answers it actually had to produce (one per committee)
        self._lock = threading.Lock()  # the daemon asks a tick's committees concurrently

    def variant_number(self, operator: str, shared: dict[str, int]) -> int:
        """The number of ``operator``'s next variant in this committee (``shared``: operator -> variants sent);
        its first one counts as one answer produced."""
        n = shared.get(operator, 0)
        if n == 0:
            with self._lock:
                self.produced[operator] = self.produced.get(operator, 0) + 1
        shared[operator] = n + 1
        return n

    def answer(
        self, prompt: str, members: Collection[str] | None = None
    ) -> tuple[tuple[Response, ...], dict[str, str]]:
        """The committee's responses (``members``; None: everyone) and each failure's detail."""
        texts = self.answers.get(prompt)
        if texts is None:
            raise KeyError(f"the recorded network has no answers to {prompt[:60]!r}")
        asked = [p for p in self.specs if members is None or p.hotkey in members]
        present = {p.hotkey for p in asked}
        shared: dict[str, int] = {}  # operator -> variants sent in this committee
        responses = []
        for p in asked:
            text = ""
            if p.kind in ("honest", "farm", "cache", "guess") and p.model is not None:
                text = texts.get(p.model, "")
            if p.kind in ("farm", "sybil", "weak", "wrong"):
                if p.kind != "farm":
                    text = texts.get(p.model, "") if p.model is not None else OFF_TOPIC
                base = text
                text = paraphrase(base, self.variant_number(p.operator or p.kind, shared))
            elif p.kind == "copycat":
                partner = self.personas.get(p.partner or "")
                if p.partner in present and partner is not None and partner.model is not None:
                    text = texts.get(partner.model, "")
            if self.arrival == "order":  # an identity listed earlier always arrives first (no receipt clock)
                at, received = 1.0 + 0.01 * len(responses), None
            else:
                at = arrival(prompt, p.hotkey)
                if p.kind == "copycat" and p.partner is not None:
                    at = arrival(prompt, p.partner) + COPY_DELAY_S  # a copier sends only after it has seen its source
                received = at
            error = None if text else "empty"
            responses.append(Response(p.hotkey, text, at, error=error, entity=p.entity, received_s=received))
        return tuple(responses), {r.miner: "no answer" for r in responses if r.error}
