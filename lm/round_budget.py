"""What LM work a round gets: whether polarity applies to its prompt, and the round's LM time budget.

Polarity (``lm.polarity``) asks of each answer whether it replies yes or no; on
a prompt that is not a yes/no question it cannot change anything, so it is
decided once per round, by a rule (no LM call): the prompt asks yes or no
when one of its questions opens with an auxiliary verb ("Is", "Does", "Can",
"Should", ...) or it says "yes or no". A question hidden in a longer prompt
("Answer briefly: is X true?") counts: every sentence is looked at.

The factual check (``lm.factual``) compares short answers ("Canberra", "408",
"yes"); a prompt that asks for an explanation or a text ("Explain photosynthesis
in simple terms.", "In two or three sentences, explain what a hash function is.")
has no short answer to compare: the LM writes a sentence per member and no two
agree by the rule, so the check costs its calls and changes nothing (docs/lm.md
has the measurement). ``asks_for_explanation`` finds such a prompt by rule: one
of its sentences opens, after "please", "briefly", "can you" or a lead-in like
"In two sentences,", with explain, describe, discuss, summarise, compare,
contrast, elaborate, outline, write, "tell me about" or "walk me through", and
it is not a yes/no question.

``Budget`` bounds the round's LM checks in wall-clock seconds: every stage
runs its calls through ``run_bounded``, which stops waiting at the deadline
and returns the unfinished items as skipped with the reason. Nothing is
carried into the next round (calls not yet started are cancelled; a call
already sent finishes on the server and its answer is dropped).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Generic, TypeVar

_AUX = (
    "is",
    "are",
    "am",
    "was",
    "were",
    "do",
    "does",
    "did",
    "can",
    "could",
    "should",
    "would",
    "will",
    "shall",
    "has",
    "have",
    "had",
    "may",
    "might",
    "must",
    "isn't",
    "aren't",
    "doesn't",
    "don't",
    "didn't",
    "can't",
    "won't",
    "wasn't",
    "weren't",
    "hasn't",
    "haven't",
    "shouldn't",
    "wouldn't",
    "couldn't",
)
_YES_NO_ASKED = re.compile(r"\byes\s*(or|/)\s*no\b", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?:;\n])\s+")

_OPEN = re.compile(
    r"^(?:(?:please|briefly|simply|now|can you|could you|would you)[\s,]+|in [\w\s-]{1,30}?,\s*)*"
    r"(explain|describe|discuss|summari[sz]e|compare|contrast|elaborate|outline|write|tell me about|"
    r"walk me through)\b",
    re.IGNORECASE,
)


K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def is_yes_no_question(prompt: str) -> bool:
    """True when ``prompt`` asks a yes/no question (the rule in the module docstring)."""
    if _YES_NO_ASKED.search(prompt):
        return True
    for sentence in _SENTENCE.split(prompt.strip()):
        if not sentence.rstrip().endswith("?"):
            continue
        words = re.findall(r"[A-Za-z']+", sentence)
        if words and words[0].lower() in _AUX:
            return True
    return False


def asks_for_explanation(prompt: str) -> bool:
    """True when ``prompt`` asks for an explanation or a text, not a fact (the rule in the module docstring)."""
    if is_yes_no_question(prompt):
        return False
    return any(_OPEN.match(sentence.strip()) for sentence in _SENTENCE.split(prompt.strip()))


# a question with one answer: a fact, a number, a name, a date (the first words of one of the prompt's sentences)
_ONE = re.compile(
    r"^(?:(?:and|so|then|tell me|do you know|please)[\s,]+)*(?:"
    r"(?:what|which)(?:'s|\s+(?:is|was|are|were))?\s+(?:the|[a-z]+'s)\b"
    r"|(?:what|which)\s+(?:year|country|city|planet|element|gas|organ|organelle|ocean|continent|language|river|"
    r"number|colou?r|day|month|century|decade)\b"
    r"|who\s+(?:is|was|were|wrote|invented|discovered|painted|composed|founded|built|won|first)\b"
    r"|when\s+(?:is|was|were|did|does|do)\b"
    r"|where\s+(?:is|was|are|were|did|does)\b"
    r"|in\s+(?:what|which)\s+(?:year|country|city|century|decade)\b"
    r"|how\s+(?:many|much|far|long|old|tall|high|deep|big|large|heavy|fast|hot|cold)\b"
    r"|(?:convert|calculate|compute|evaluate)\b(?=.*\d)"
    r"|what\s+is\s+[\d(√-])",
    re.IGNORECASE,
)
# ... unless the sentence asks for several things or a judgement ("What are the main differences", "the most
# effective ways", "the best way")
_MANY = re.compile(
    r"\b(?:ways?|tips|examples?|ideas|suggestions|steps|reasons|some|best|main|key|differences?|pros|"
    r"cons|advantages|benefits|list)\b",
    re.IGNORECASE,
)


def asks_for_one_answer(prompt: str) -> bool:
    """Does ``prompt`` ask for one short answer (a fact, a number, a name, a date)? A rule, no LM call.

    One of its sentences opens with "What is the ...", "Which ...", "Who wrote ...", "When did ...",
    "How many ...", "Convert ...", "What is 17 * 24"; not "What are the main differences ...", "What is the
    best way ...", "How do I ...", "Name a ...", "What is a Dyson sphere?" (a definition), an explanation or a
    yes/no question.
    """
    if is_yes_no_question(prompt) or asks_for_explanation(prompt):
        return False
    return any(
        _ONE.match(sentence.strip()) and not _MANY.search(sentence) for sentence in _SENTENCE.split(prompt.strip())
    )


@dataclass(frozen=True)
class PromptKind:
    """What the rules read from a round's prompt (no LM call), read once per round and handed to every LM check:
    a yes/no question (``is_yes_no_question``), a request for an explanation (``asks_for_explanation``), a
    question with one short answer (``asks_for_one_answer``)."""

    yes_no: bool
    explanation: bool
    one_answer: bool

    @classmethod
    def of(cls, prompt: str) -> PromptKind:
        return cls(is_yes_no_question(prompt), asks_for_explanation(prompt), asks_for_one_answer(prompt))


@dataclass
class Budget:
    """A round's LM time budget: ``seconds`` from creation (0 = no limit). Not thread-safe; one per round."""

    seconds: float
    clock: Callable[[], float] = time.monotonic
    started: float = field(default=-1.0)

    def __post_init__(self) -> None:
        if self.seconds < 0:
            raise ValueError("a budget is >= 0 seconds (0 = no limit)")
        if self.started < 0:
            self.started = self.clock()

    def remaining(self) -> float | None:
        """Seconds left (never negative); None without a limit."""
        if self.seconds == 0:
            return None
        return max(0.0, self.started + self.seconds - self.clock())

    @property
    def reason(self) -> str:
        return f"skipped: the round's LM budget of {self.seconds:g} s was spent"


@dataclass(frozen=True)
class Bounded(Generic[K, V]):
    done: dict[K, V]
    skipped: dict[K, str]  # key -> why it has no result


def run_bounded(fn: Callable[[K], V], keys: Sequence[K], *, workers: int, budget: Budget) -> Bounded[K, V]:
    """``fn(key)`` for every key, concurrently, until the budget runs out; the rest is skipped.

    An exception raised by ``fn`` is the caller's to avoid (the LM stages return
    fallbacks rather than raise); one that escapes is recorded as skipped.
    """
    if not keys:
        return Bounded({}, {})
    left = budget.remaining()
    if left is not None and left <= 0:
        return Bounded({}, {k: budget.reason for k in keys})
    pool = ThreadPoolExecutor(max_workers=max(1, min(workers, len(keys))))
    futures: dict[Future, K] = {pool.submit(fn, k): k for k in keys}
    done: dict[K, V] = {}
    skipped: dict[K, str] = {}
    pending = set(futures)
    try:
        while pending:
            left = budget.remaining()
            if left is not None and left <= 0:
                break
            finished, pending = wait(pending, timeout=left, return_when=FIRST_COMPLETED)
            for f in finished:
                try:
                    done[futures[f]] = f.result()
                except Exception as exc:  # noqa: BLE001 - recorded, never silently dropped
                    skipped[futures[f]] = f"skipped: {type(exc).__name__}: {exc}"
    finally:
        for f in pending:
            f.cancel()
            skipped[futures[f]] = budget.reason
        pool.shutdown(wait=False, cancel_futures=True)
    return Bounded(done, skipped)
