"""An answer in the prompt's language is not another cluster (issue 38: no honest style loses for its form).

The embedding model (MiniLM, English) puts an answer in French far from answers in English on the same topic: asked
"Comment conserver le basilic frais plus longtemps ?", three miners answer in English and one in French, and the
French answer, the one in the language the user wrote in, was ``other_cluster`` and earned nothing. ``kept`` returns
the answers that clustering removed although they are written in the prompt's language while the dominant cluster
is not, and are as close to the prompt (``Signals.prompt_similarity``) as the dominant cluster's median member: on
topic in the user's language. Language is read by rule: a text is in English when at least ``ENGLISH_SHARE`` of its
words are English function words (scikit-learn's list), and an answer shares the prompt's language when, neither
being English, the answer uses one of the prompt's short words (articles, prepositions: "le", "de", "pour").
``also_members`` applies it, with the rule for short answers, in the clusters stage. Pure.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from consensus.filters import agreed_short

if TYPE_CHECKING:
    from consensus.context import Context

ENGLISH_SHARE = 0.2  # English prose: 0.25-0.45 of its words are function words (docs/consensus.md, prose)
SHORT = 4  # the prompt's words this short or shorter are its language's function words
SHORT_ANSWER_WORDS = 4  # an answer this short that states the dominant cluster's words stays in it


@functools.cache
def _english() -> frozenset[str]:
    # lazy: start-up cost, scikit-learn takes 4.7 s to import
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(str(w) for w in ENGLISH_STOP_WORDS)


def english(words: Sequence[str]) -> bool:
    """Is a text of these words English (``ENGLISH_SHARE`` of them English function words)?"""
    return bool(words) and sum(w in _english() for w in words) >= ENGLISH_SHARE * len(words)


def kept(
    text_words: Sequence[Sequence[str]],
    prompt_words: Sequence[str],
    removed: Sequence[int],
    top: Sequence[int],
    prompt_similarity: Mapping[int, float] | None,
) -> list[int]:
    """The ``removed`` answers (by index) that are in the prompt's language, which is not the dominant cluster's
    (``top``), and as close to the prompt as the median member of it (the module docstring's rule)."""
    if not prompt_similarity or len(prompt_words) < 3 or english(prompt_words) or not top:
        return []
    if not all(english(text_words[i]) for i in top):
        return []
    short = {w for w in prompt_words if len(w) <= SHORT and not w.isdigit()}
    bar = float(np.median([prompt_similarity.get(int(i), 0.0) for i in top]))
    return [
        i
        for i in removed
        if not english(text_words[i]) and short & set(text_words[i]) and prompt_similarity.get(int(i), 0.0) >= bar
    ]


def also_members(ctx: Context, removed: Sequence[int], top: Sequence[int], off_topic: Sequence[int]) -> list[int]:
    """The answers outside the dominant cluster (``removed``) that belong in it by what they say: a short answer
    (``SHORT_ANSWER_WORDS``) stating the words most of the cluster states (``filters.agreed_short``: "408" among
    explanations of 17 x 24, "The skin."; the embedding may call two words off topic), and an answer in the
    prompt's language (``kept``) not ``off_topic``."""
    short = np.array([i for i in removed if ctx.counts[i] <= SHORT_ANSWER_WORDS], dtype=np.intp)
    found = set(
        agreed_short(ctx.text_words, ctx.prompt_words, np.append(np.array(top, np.intp), short), short).tolist()
    )
    on_topic = [i for i in removed if i not in set(off_topic)]
    found |= set(kept(ctx.text_words, ctx.words(ctx.round.prompt), on_topic, top, ctx.signals.prompt_similarity))
    return sorted(found)
