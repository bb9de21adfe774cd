"""How the hostile cases disguise a copy: pure, seeded text transforms (no model).

Every derived answer in ``benchmarks/hostile_cases/*.json`` is stored as literal text next to a
``made_by`` entry naming the transform, its source miner and its seed; ``derive`` recomputes it
from that entry, so the data and this module cannot drift apart (tests/benchmarks/test_hostile.py).
The sybil sets of ``benchmarks.sybil_sets`` use ``perturb``.

- ``zero_width``: invisible format characters (U+200B, U+200C, U+200D, U+2060, U+FEFF) inside
  words; a reader sees the source, a word-bag test sees other words;
- ``homoglyphs``: Latin letters replaced by Cyrillic / Greek look-alikes (а е о р с х у і ...);
- ``union``: several answers pasted one after the other;
- ``blend``: about half of the sentences of two answers, interleaved in their order;
- ``copy_plus``: the source plus a paragraph of the attacker's own;
- ``perturb``: sentences shuffled and about ``drop`` of the words dropped.
"""

from __future__ import annotations

import random
import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

INVISIBLE = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff")
# Latin -> look-alike (Cyrillic unless noted); each renders like the Latin letter in common fonts
CONFUSABLE = {
    "a": "\u0430",
    "c": "\u0441",
    "e": "\u0435",
    "i": "\u0456",
    "j": "\u0458",
    "o": "\u043e",
    "p": "\u0440",
    "s": "\u0455",
    "x": "\u0445",
    "y": "\u0443",
    "A": "\u0410",
    "B": "\u0412",
    "C": "\u0421",
    "E": "\u0415",
    "H": "\u041d",
    "I": "\u0406",
    "K": "\u041a",
    "M": "\u041c",
    "O": "\u041e",
    "P": "\u0420",
    "T": "\u0422",
    "X": "\u0425",
    "Y": "\u03a5",  # Greek Upsilon
}
# the words an attacker hides invisible characters in when the content words must stay searchable
FUNCTION_WORDS = frozenset(
    "a an the of to in on at by for from with as and or but nor so than then that this these those it its is are "
    "was were be been being do does did has have had not no all each same there their which when where who whom "
    "what while about into over under between during".split()
)
_WORD = re.compile(r"\w+", re.UNICODE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")


def words(text: str) -> list[str]:
    """Case-folded word tokens after NFKC (the bench's own, independent of the scoring code's)."""
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def jaccard(a: str, b: str) -> float:
    """Word-set overlap |A & B| / |A | B| of two texts (0 when both are empty)."""
    sa, sb = set(words(a)), set(words(b))
    return len(sa & sb) / len(sa | sb) if sa | sb else 0.0


def sentences(text: str) -> list[str]:
    """Lines, then sentences within a line (a sentence ends at . ! ? before a space); empty pieces dropped."""
    out: list[str] = []
    for line in text.splitlines():
        out.extend(p.strip() for p in _SENTENCE_END.split(line.strip()) if p.strip())
    return out


def zero_width(text: str, seed: int, rate: float = 1.0, min_len: int = 2, function_only: bool = False) -> str:
    """``text`` with one invisible character at a seeded inner position of each word of ``min_len``+ letters.

    ``rate``: the share of such words that get one (each chosen with that probability);
    ``function_only``: only in ``FUNCTION_WORDS`` (the content words stay as they are).
    """
    rng = random.Random(seed)

    def one(m: re.Match[str]) -> str:
        w = m.group(0)
        if len(w) < min_len or (function_only and w.lower() not in FUNCTION_WORDS) or rng.random() >= rate:
            return w
        k = rng.randrange(1, len(w))
        return w[:k] + rng.choice(INVISIBLE) + w[k:]

    return _WORD.sub(one, text)


def homoglyphs(text: str, seed: int, rate: float = 1.0) -> str:
    """``text`` with one letter of each word (chosen with probability ``rate``) replaced by a look-alike."""
    rng = random.Random(seed)

    def one(m: re.Match[str]) -> str:
        w = m.group(0)
        spots = [k for k, ch in enumerate(w) if ch in CONFUSABLE]
        if not spots or rng.random() >= rate:
            return w
        k = rng.choice(spots)
        return w[:k] + CONFUSABLE[w[k]] + w[k + 1 :]

    return _WORD.sub(one, text)


def union(texts: Sequence[str]) -> str:
    """The texts one after the other, as paragraphs."""
    return "\n\n".join(t.strip() for t in texts)


def blend(a: str, b: str, seed: int, keep: float = 0.5) -> str:
    """About ``keep`` of the sentences of ``a`` and of ``b`` (seeded, at least one each), interleaved by position."""
    rng = random.Random(seed)
    picked: list[tuple[float, int, str]] = []
    for source, text in enumerate((a, b)):
        s = sentences(text)
        k = max(1, round(keep * len(s)))
        for i in sorted(rng.sample(range(len(s)), k)):
            picked.append((i / len(s), source, s[i]))
    return " ".join(p[2] for p in sorted(picked))


def copy_plus(text: str, extra: str) -> str:
    """``text`` followed by the attacker's own paragraph ``extra``."""
    return text.rstrip() + "\n\n" + extra.strip()


def perturb(text: str, seed: int, drop: float = 0.15) -> str:
    """``text`` with its sentences shuffled and each word dropped with probability ``drop`` (seeded)."""
    rng = random.Random(seed)
    s = sentences(text)
    rng.shuffle(s)
    out = []
    for sentence in s:
        kept = [w for w in sentence.split() if rng.random() >= drop]
        if kept:
            out.append(" ".join(kept))
    return " ".join(out)


def derive(made_by: Mapping[str, Any], texts: Mapping[str, str]) -> str | None:
    """The text a ``made_by`` entry describes, from the round's ``texts`` (miner -> text); None for texts
    that are written (by hand or by the LM) rather than computed."""
    op = made_by["op"]
    src = made_by.get("from")
    if op == "copy":
        return texts[src]
    if op == "zero_width":
        return zero_width(
            texts[src], made_by["seed"], made_by.get("rate", 1.0), function_only=made_by.get("function_only", False)
        )
    if op == "homoglyphs":
        return homoglyphs(texts[src], made_by["seed"], made_by.get("rate", 1.0))
    if op == "union":
        return union([texts[m] for m in src])
    if op == "blend":
        return blend(texts[src[0]], texts[src[1]], made_by["seed"], made_by.get("keep", 0.5))
    if op == "copy_plus":
        return copy_plus(texts[src], made_by["extra"])
    if op == "perturb":
        return perturb(texts[src], made_by["seed"], made_by.get("drop", 0.15))
    if op in ("hand_paraphrase", "llm_paraphrase", "written"):
        return None
    raise ValueError(f"unknown made_by op {op!r}")
