"""The narrative's fact check: an LM narrative may state only what the round's record holds.

``narrative.narrate`` gives the LM the record's numbers (never a miner's
answer) and runs every narrative it writes through ``problems``. A narrative
is rejected, and the template used instead, when it

- states a number that no number of the record rounds to (counts, scores,
  similarities, word counts, amounts; the prompt's own numbers are allowed);
- names a miner that did not answer in the round;
- describes a method the validator does not use (an average of all scores, a
  majority vote, BLEU, a judge or a reference answer the round did not have);
  its methodology must name what is used (embeddings, cosine similarity,
  clustering, outliers);
- states a verdict the record does not hold (consensus reached when it was
  not, or the reverse; a yes/no majority the members did not agree on);
- repeats six or more words in a row of a miner's answer (miner text is
  untrusted: it must never speak in the narrative's voice).

The checks are conservative heuristics over English text: they can refuse
a correct narrative (then the template, which is always right, is used),
and they are tested against the narratives a steered LM wrote (the pool's
injection miner, a wrong method, a wrong number).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from consensus.types import Polarity, Reason
from narrative.template import NarrativeInput

EMBEDDING_DIMENSIONS = 384  # all-MiniLM-L6-v2
COPIED_WORDS = 6  # this many words in a row from a miner's answer is a quotation

_NUMBER = re.compile(r"(?<![\w.])[-+]?(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![\w])(\s?%| percent)?")
_WORD = re.compile(r"[a-z0-9']+")

# what the validator does: a methodology must name some of it
METHOD_TERMS = (
    "embed",
    "minilm",
    "cosine",
    "similarit",
    "cluster",
    "outlier",
    "localoutlierfactor",
    "lof",
    "mu + lambda",
    "consensus score",
    "length threshold",
    "cop",
)
# what it does not do: a narrative that says so describes another system
WRONG_METHODS = {
    "an average over all answers' scores": r"\b(average|mean)\b[^.]{0,30}\bscores?\b[^.]{0,25}\ball\b"
    r"|\b(average|mean) of (all|every)\b",
    "a vote": r"\bvot(e|es|ed|ing)\b",
    "k-means": r"\bk-?means\b",
    "DBSCAN": r"\bh?dbscan\b",
    "TF-IDF": r"\btf-?idf\b",
    "BLEU / ROUGE / BERTScore": r"\b(bleu|rouge|bertscore)\b",
    "Jaccard / edit distance": r"\b(jaccard|levenshtein|edit distance)\b",
    "Euclidean distance": r"\beuclidean\b",
    "keyword or word overlap": r"\b(keyword|word)[- ]overlap\b|\bkeyword match",
    "human raters": r"\bhuman (raters?|annotators?|review(ers?)?|judges?)\b",
    "another model": r"\b(gpt-?\d|chatgpt|claude|gemini)\b",
    "random choice": r"\brandom(ly)?\b",
    "verification": r"\bverif(y|ied|ication)\b|\bfact-?check",
}
REFERENCE_CLAIM = r"\breference answers?\b|\bground[- ]truth\b|\bcorrect answer\b"
JUDGE_CLAIM = r"\b(llm|language model|model)[- ]?(as[- ]a[- ])?judg|\bjudged by\b"

_NEGATED = re.compile(r"\b(not|no|never|without|fail\w*)\b|n't\b")
_REACHED = re.compile(r"\b(reached|achieved|established|attained|reach|achieve)\b")
_NO_CONSENSUS = re.compile(r"\bno consensus\b|\black of consensus\b|\bwithout consensus\b")
_MINER_REF = re.compile(
    r"\bminers?\s+(?:id\s+)?([\"'\u2018\u201c]?)([^\s,;:()\"'\u2018\u2019\u201c\u201d]+)\1", re.IGNORECASE
)


@dataclass(frozen=True)
class RecordFacts:
    """What a narrative may state about one round."""

    numbers: tuple[float, ...]
    max_count: int  # integers 0..max_count are counts of responses, always allowed
    miners: frozenset[str]
    reached: bool
    majority: Polarity | None  # the members' agreed yes/no answer; None when they did not agree or it was not checked
    reference: bool  # the round had a reference answer
    judged: bool  # responses were judged against it
    strip: tuple[str, ...]  # strings removed before numbers are read (miner ids, the heatmap key, the model name)
    miner_texts: tuple[str, ...]
    prompt: str


def record_facts(told: NarrativeInput) -> RecordFacts:
    """The facts of a round's record, from its numbers only."""
    round_, evaluation, amounts, pool = told.round, told.evaluation, told.amounts, told.pool
    c = evaluation.consensus
    results = evaluation.results
    n = len(results)
    numbers = [
        c.score,
        c.mean,
        c.std,
        c.pairs,
        evaluation.quality_threshold_words,
        pool,
        len(evaluation.members),
        sum(1 for a in amounts if a > 0),
        len(round_.prompt.split()),
        EMBEDDING_DIMENSIONS,
        100.0,
    ]
    for r in results:
        numbers += [r.score.composite, r.words, r.index, r.index + 1]
        numbers += [100 * part for part in (r.score.alignment, r.score.quality, r.score.confidence)]
    for reason in Reason:
        numbers.append(sum(1 for r in results if r.reason is reason))
    for amount in amounts:
        numbers += [amount, 100 * amount / pool if pool else 0.0]
    for written in (round_.prompt, evaluation.lof, c.note, *evaluation.notes):  # numbers the record states in words
        numbers += [float(m.group(1).replace(",", "") + (m.group(2) or "")) for m in _NUMBER.finditer(written)]
    majority = c.majority_polarity if c.polarity_agreed else None
    miners = frozenset(r.miner for r in results)
    strip = tuple(
        sorted(
            {*miners, *(m[:24] for m in miners), told.heatmap_key or "", "all-MiniLM-L6-v2", "MiniLM-L6"},
            key=len,
            reverse=True,
        )
    )
    return RecordFacts(
        tuple(sorted(set(float(x) for x in numbers))),
        n,
        miners,
        c.reached,
        majority,
        round_.reference is not None,
        any(r.score.reference is not None for r in results),
        tuple(s for s in strip if s),
        tuple(resp.text for resp in round_.responses),
        round_.prompt,
    )


def _number_problems(text: str, facts: RecordFacts) -> list[str]:
    for s in facts.strip:
        text = text.replace(s, " ")
    found = []
    for m in _NUMBER.finditer(text):
        whole, frac, percent = m.group(1).replace(",", ""), m.group(2) or "", m.group(3)
        value = float(whole + frac)
        if not frac and value.is_integer() and 0 <= value <= facts.max_count:
            continue
        tolerance = 0.5 * 10 ** -(len(frac) - 1 if frac else 0) + 1e-9  # the written number's rounding
        candidates = [(value, tolerance)] + ([(value / 100, tolerance / 100)] if percent else [])
        if not any(abs(x - v) <= tol for x, tol in candidates for v in facts.numbers):
            found.append(f"the number {m.group(0).strip()} is not in the round's record")
    return found


def _miner_problems(text: str, facts: RecordFacts) -> list[str]:
    known = facts.miners | {m[:24] for m in facts.miners} | {repr(m[:24])[1:-1] for m in facts.miners}
    found = []
    for m in _MINER_REF.finditer(text):
        quoted, name = m.group(1), m.group(2).rstrip(".")
        looks_like_id = bool(quoted) or any(ch.isdigit() for ch in name) or "-" in name or "_" in name
        if looks_like_id and name not in known and not name.isdigit():
            found.append(f"miner {name!r} did not answer in this round")
    return found


def _method_problems(text: str, methodology: str, facts: RecordFacts) -> list[str]:
    lowered = text.lower()
    found = [
        f"describes a method the validator does not use ({name})"
        for name, pattern in WRONG_METHODS.items()
        if re.search(pattern, lowered)
    ]
    if not facts.reference and re.search(REFERENCE_CLAIM, lowered):
        found.append("speaks of a reference answer, and the round had none")
    if not facts.judged and re.search(JUDGE_CLAIM, lowered):
        found.append("speaks of judging, and no response was judged")
    if methodology and not any(term in methodology.lower() for term in METHOD_TERMS):
        found.append(
            "the methodology names none of the methods used (embeddings, cosine similarity, clustering, outliers)"
        )
    return found


def _says_reached(sentence: str) -> bool | None:
    """True / False when a sentence about consensus says it was / was not reached; None when it says neither."""
    if _NO_CONSENSUS.search(sentence):
        return False
    if "consensus" not in sentence:
        return None
    match = _REACHED.search(sentence)
    if not match:
        return None
    return not _NEGATED.search(sentence[: match.start()][-40:] + " " + sentence[match.start() :][:30])


def _verdict_problems(text: str, facts: RecordFacts) -> list[str]:
    found = []
    for sentence in re.split(r"(?<=[.!?;])\s+", text.lower()):
        said = _says_reached(sentence)
        if said is not None and said != facts.reached:
            found.append(
                f"says consensus was {'reached' if said else 'not reached'}; the record says "
                f"{'reached' if facts.reached else 'not reached'}"
            )
            break
    lowered = text.lower()
    for polarity in (Polarity.AFFIRMATIVE, Polarity.NEGATIVE):
        claim = rf"\b(agreed?|agreement|majority|consensus|members)\b[^.]{{0,40}}\b{polarity.value}\b"
        if re.search(claim, lowered) and facts.majority is not polarity:
            found.append(
                f"says the answer was {polarity.value}; the record's agreed answer is "
                f"{facts.majority.value if facts.majority else 'none'}"
            )
    return found


def _copied(text: str, facts: RecordFacts) -> list[str]:
    said = _WORD.findall(text.lower())
    grams = {tuple(said[i : i + COPIED_WORDS]) for i in range(len(said) - COPIED_WORDS + 1)}
    prompt = _WORD.findall(facts.prompt.lower())
    allowed = {tuple(prompt[i : i + COPIED_WORDS]) for i in range(len(prompt) - COPIED_WORDS + 1)}
    for answer in facts.miner_texts:
        words = _WORD.findall(answer.lower())
        for i in range(len(words) - COPIED_WORDS + 1):
            gram = tuple(words[i : i + COPIED_WORDS])
            if gram in grams and gram not in allowed:
                return [f"repeats a miner's words ({' '.join(gram)!r})"]
    return []


def problems(
    parts: dict[str, str], facts: RecordFacts, methodology_key: str = "evaluation_methodology"
) -> tuple[str, ...]:
    """Every statement of the narrative ``parts`` that the record does not support; empty when none."""
    text = "\n".join(parts.values())
    found = (
        _number_problems(text, facts)
        + _miner_problems(text, facts)
        + _method_problems(text, parts.get(methodology_key, ""), facts)
        + _verdict_problems(text, facts)
        + _copied(text, facts)
    )
    return tuple(dict.fromkeys(found))


__all__ = ["METHOD_TERMS", "RecordFacts", "WRONG_METHODS", "problems", "record_facts"]
