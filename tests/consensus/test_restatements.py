"""Copies in any disguise (consensus.restatements): restated answers are paid only for what is new in them."""

from __future__ import annotations

import numpy as np
import pytest

from consensus.restatements import find_derivations, quoted_runs
from consensus.text import words

A = (
    "Seasons happen because the rotation axis of the Earth is tilted by about twenty three degrees relative to "
    "its orbit. When a hemisphere leans toward the Sun it receives steeper sunlight and longer days, which "
    "brings summer, while the other hemisphere gets winter. Distance from the Sun matters very little."
)
B = (
    "Our planet has seasons since its spin axis is inclined. Each half of the globe alternately faces the star "
    "more directly during part of the year, collecting concentrated radiation over lengthy daylight hours. "
    "Perihelion falls in January, proving proximity is irrelevant."
)
C = (
    "Think of a flashlight shining on a table: aimed straight down, the spot is small and bright; tilted, it "
    "spreads out and dims. Northern June sunshine arrives nearly overhead, December sunshine arrives slanting, "
    "so warmth differs although orbital geometry barely changes."
)
PARAGRAPH = (
    "Gardeners in temperate climates plan their planting calendars around frost dates, soil "
    "temperature and rainfall patterns that shift from region to region every single year."
)
PROMPT = "Why do we have seasons?"


def derive(texts, latencies, **kw):
    seqs = [words(t) for t in texts]
    kw.setdefault("prompt_words", frozenset(words(PROMPT)))
    return find_derivations(seqs, np.array(latencies, float), np.arange(len(texts)), **kw)


def test_independent_answers_on_one_topic_are_originals():
    found = derive([A, B, C], [1.0, 2.0, 3.0])
    assert found.copy_of.tolist() == [-1, -1, -1]
    assert found.novelty.tolist() == [1.0, 1.0, 1.0] and found.derived == ()


@pytest.mark.parametrize(
    "disguise",
    [
        lambda t: t,  # verbatim
        lambda t: " ".join(w for k, w in enumerate(t.split()) if k % 13 != 5),  # every 13th word dropped
        lambda t: t.replace("e", "\u0435").replace("o", "\u043e"),  # Cyrillic look-alikes
        lambda t: t.replace(" the ", " t\u200bh\u200be "),  # zero-width characters inside words
        lambda t: ". ".join(reversed(t.split(". "))),  # sentences shuffled
    ],
)
def test_a_later_disguised_copy_is_a_copy_of_its_source(disguise):
    found = derive([A, B, disguise(A)], [1.0, 2.0, 3.0])
    assert found.copy_of.tolist() == [-1, -1, 0]
    assert found.novelty[2] <= 0.15


def test_the_source_arriving_later_than_its_copy_is_not_the_copy_within_the_tie_window():
    found = derive([A, B, A], [1.0, 2.0, 1.02], tie_window_s=0.05)
    assert found.copy_of.tolist() == [-1, -1, -1]
    assert found.tied == ((0, 2),)


def test_a_copy_padded_with_a_paragraph_is_graded_on_the_paragraph():
    found = derive([A, B, A + " " + PARAGRAPH], [1.0, 2.0, 3.0])
    assert found.copy_of[2] == -1 and found.sources[2] == (0,)
    assert 0.2 < found.novelty[2] < 0.8
    assert found.residual[2] <= frozenset(words(PARAGRAPH))
    assert "gardeners" in found.residual[2]


def test_a_union_of_earlier_answers_and_a_blend_of_two_are_copies():
    union = derive([A, B, C, A + "\n\n" + B + "\n\n" + C], [1.0, 2.0, 3.0, 4.0])
    assert union.copy_of[3] in (0, 1, 2) and union.sources[3] == (0, 1, 2)
    half = lambda t: ". ".join(t.split(". ")[:2])  # noqa: E731
    blend = derive([A, B, C, half(A) + ". " + half(B)], [1.0, 2.0, 3.0, 4.0])
    assert blend.copy_of[3] in (0, 1) and set(blend.sources[3]) == {0, 1}
    assert blend.copy_of[:3].tolist() == [-1, -1, -1]  # the victims keep what they wrote


def test_short_answers_are_agreement_never_copies():
    found = derive(
        [
            "Au",
            "Au",
            "Au",
            "Gold (Au).",
            "The capital of Australia is Canberra.",
            "The capital of Australia is Canberra.",
        ],
        [1.0, 1.1, 1.2, 1.3, 2.0, 2.5],
    )
    assert found.copy_of.tolist() == [-1] * 6 and found.derived == ()


def test_content_two_original_answers_hold_is_common_and_owned_by_nobody():
    worked = "To find f(2) substitute x = 2: f(2) = 5(8) - 4 + 3 = 40 - 4 + 3 = 39, so the value of f(2) is 39."
    other = "Substitute 2 for x. Then f(2) = 5 * 2^3 - 2 * 2 + 3 = 40 - 4 + 3 = 39. The value of f(2) is 39."
    third = "f(2) = 5(2)^3 - 2(2) + 3 = 40 - 4 + 3 = 39: substitute x = 2 to find the value, which is 39."
    found = derive(
        [worked, other, third],
        [1.0, 2.0, 3.0],
        min_words=5,
        prompt_words=frozenset(words("Given f(x) = 5x^3 - 2x + 3, find f(2).")),
    )
    assert found.copy_of[2] == -1 and found.sources[2] == ()


def test_inputs_are_not_modified_and_the_result_is_deterministic():
    texts = [A, B, A + " " + PARAGRAPH]
    seqs = [words(t) for t in texts]
    lat = np.array([1.0, 2.0, 3.0])
    one = find_derivations(seqs, lat, np.arange(3))
    two = find_derivations([list(s) for s in reversed(seqs)][::-1], lat.copy(), np.arange(3))
    assert lat.tolist() == [1.0, 2.0, 3.0] and seqs == [words(t) for t in texts]
    assert one.novelty.tolist() == two.novelty.tolist() and one.sources == two.sources


def test_copies_sent_after_their_source_never_lower_its_pay_however_many():
    # two verbatim copies sent seconds after the victim used to make its answer "the round's common answer",
    # shared three ways: the first to arrive is the source and keeps its pay
    found = derive([A, A, A, B], [0.5, 1.9, 2.0, 2.2], tie_window_s=0.05)
    assert found.copy_of.tolist() == [-1, 0, 0, -1]
    assert found.tied == ()
    two = derive([A, A, B], [0.5, 1.9, 2.2], tie_window_s=0.05)
    assert two.copy_of.tolist() == [-1, 0, -1] and two.tied == ()


def test_answers_tied_in_arrival_share_and_a_later_copy_of_them_is_a_copy():
    # the same text twice within the tie window (no order), then once later: the later one is a copy of the
    # first of the tied pair (the tied pair counts as one original, not as two that make it "common")
    found = derive([A, A, A, B], [1.0, 1.02, 3.0, 2.2], tie_window_s=0.05)
    assert found.tied == ((0, 1),)
    assert found.copy_of.tolist() == [-1, -1, 0, -1]


@pytest.mark.parametrize("copier_at", [3.0, 0.5, 1.0])
def test_the_source_is_the_answer_that_arrived_first(copier_at):
    # the copier (index 1) sends A later than, earlier than or at the same time as the author (index 0, at 1.0)
    found = derive([A, A, B], [1.0, copier_at, 2.2], tie_window_s=0.05)
    if copier_at > 1.0:
        assert found.copy_of.tolist() == [-1, 0, -1]
    elif copier_at < 1.0:
        # arriving first is being the source: why arrival must be the validator's own clock at receipt
        assert found.copy_of.tolist() == [1, -1, -1]
    else:
        assert found.copy_of.tolist() == [-1, -1, -1] and found.tied == ((0, 1),)


QUOTE = (
    "Congress shall make no law respecting an establishment of religion, or prohibiting the free exercise thereof; "
    "or abridging the freedom of speech, or of the press"
)
OWN_1 = "It protects worship, speech and the press from the federal government, and since 1925 from the states too."
OWN_2 = (
    "Courts read it to cover symbolic acts like flag burning, but not true threats, fraud or incitement to violence."
)


def derive_quoted(texts, latencies):
    quoted = [quoted_runs(t, words) for t in texts]
    return derive(texts, latencies, quoted=quoted)


@pytest.mark.parametrize(("open_", "close"), [('"', '"'), ("\u201c", "\u201d"), ("\u00ab ", " \u00bb"), ("\n> ", "\n")])
def test_two_answers_quoting_one_public_text_are_not_restatements(open_, close):
    first = f"The clause reads: {open_}{QUOTE}{close} {OWN_1}"
    second = f"Here it is: {open_}{QUOTE}{close} {OWN_2}"
    assert derive([first, B, second], [1.0, 2.0, 3.0]).sources[2] == (0,)  # quotation marks not read: derived
    found = derive_quoted([first, B, second], [1.0, 2.0, 3.0])
    assert found.sources == ((), (), ()) and found.copy_of.tolist() == [-1, -1, -1]


def test_a_copier_cannot_quote_its_way_out():
    """The source wrote the text as its own: the copier's quotation marks are no public text."""
    source = f"{QUOTE}. {OWN_1}"
    for copy in (f'"{QUOTE}. {OWN_1}"', f'As they say, "{QUOTE}." {OWN_2} {PARAGRAPH}'):
        found = derive_quoted([source, B, copy], [1.0, 2.0, 3.0])
        assert found.sources[2] == (0,), copy


def test_quoted_runs_reads_every_kind_of_quotation_and_nothing_else():
    assert quoted_runs("no quotation here at all in this text", words) == frozenset()
    assert quoted_runs('a "b c d e f" g', words) == {("b", "c", "d", "e", "f")}
    assert quoted_runs("\u201eeins zwei drei vier f\u00fcnf\u201c", words) == {
        ("eins", "zwei", "drei", "vier", "funf")
    }  # marks folded, as words() reads them
    assert quoted_runs("line\n> one two three four five six\nafter", words) == {
        ("one", "two", "three", "four", "five"),
        ("two", "three", "four", "five", "six"),
    }
