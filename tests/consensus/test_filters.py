import numpy as np
import pytest

from consensus.filters import find_copies, length_threshold, lof_outliers, too_short, word_count
from consensus.similarity import cosine_matrix
from tests.helpers import block_vectors

HONEST = "Water boils at one hundred degrees Celsius at sea level under standard pressure."


def copies(texts, latencies, sim=None):
    n = len(texts)
    sim = np.eye(n) if sim is None else sim
    return find_copies(texts, sim, np.array(latencies, float), np.arange(n), cosine=0.95, text_ratio=0.85).copy_of


def test_identical_text_later_is_the_copy():
    out = copies([HONEST, "Something else entirely about rivers and lakes.", HONEST], [2.0, 1.0, 2.5])
    assert out.tolist() == [-1, -1, 0]


def test_the_fastest_of_a_group_is_the_original_whoever_came_first_in_the_file():
    out = copies([HONEST, HONEST, HONEST], [3.0, 1.0, 2.0])
    assert out.tolist() == [1, -1, 1]


def test_latency_tie_goes_to_lower_index():
    assert copies([HONEST, HONEST], [1.0, 1.0]).tolist() == [-1, 0]


def test_near_copy_with_prefix_and_swapped_word():
    near = "Sure! Water boils at one hundred degrees Celsius at sea level under normal pressure."
    assert copies([HONEST, near], [1.0, 2.0]).tolist() == [-1, 0]


def test_whitespace_and_case_do_not_hide_a_copy():
    assert copies([HONEST, "  " + HONEST.upper().replace(" ", "\n ")], [1.0, 2.0]).tolist() == [-1, 0]


def test_paraphrase_is_not_a_copy_even_with_high_cosine():
    para = "At sea level, under normal atmospheric pressure, pure water starts boiling at 100 C."
    sim = np.array([[1.0, 0.97], [0.97, 1.0]])
    assert copies([HONEST, para], [1.0, 2.0], sim).tolist() == [-1, -1]


def test_copy_groups_are_transitive():
    a = "one two three four five six seven eight nine ten"
    b = "one two three four five six seven eight nine ten eleven"
    c = "zero one two three four five six seven eight nine ten eleven"
    assert copies([a, b, c], [1.0, 2.0, 3.0]).tolist() == [-1, 0, 0]


def test_word_count():
    assert word_count("Hello, world! 3.14") == 4
    assert word_count("   ") == 0


def test_word_count_math_symbols():
    assert word_count("√144 = 12.", math_symbols=True) == 4  # "root 144 equals 12"
    assert word_count("√144 = 12.") == 2
    assert word_count("a → b, c ≥ d = e", math_symbols=True) == 8  # one run is one word
    markup = "<b>bold</b> | a | b |"
    assert word_count(markup, math_symbols=True) == word_count(markup) == 5  # markup characters are not words
    assert word_count("ok. ... !!", math_symbols=True) == 1  # punctuation is not a math symbol
    assert word_count("x - y", math_symbols=True) == 2  # a hyphen (Pd) is punctuation


def test_the_ascii_math_count_is_the_per_character_count():
    """ASCII text skips the per-character category test; every mix of ASCII symbols counts as before."""
    import random
    import unicodedata

    from consensus.filters import _SYMBOLS, _is_math_symbol

    rng = random.Random(0)
    alphabet = [chr(c) for c in range(32, 127)] + ["\t", "\n", "\x1c"]
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        runs = _SYMBOLS.findall(unicodedata.normalize("NFKC", text))
        expected = word_count(text) + sum(any(_is_math_symbol(ch) for ch in run) for run in runs)
        assert word_count(text, math_symbols=True) == expected, repr(text)


def test_terse_math_answer_passes_the_length_filter():
    texts = [
        "√144 = 12.",
        "The square root of 144 is 12.",
        "It's 12: 144 is a perfect square, twelve squared.",
        "12, since 12 x 12 makes 144, and the principal root is the positive one.",
        "ok",
    ]
    for math, kept in ((True, [0, 1, 2, 3]), (False, [1, 2, 3])):
        counts = np.array([word_count(t, math_symbols=math) for t in texts])
        cand = np.arange(len(texts))
        short = too_short(counts, cand, length_threshold(counts, cand, 0.7, cap=3.0))
        assert sorted(set(cand) - set(short.tolist())) == kept


def test_length_threshold_uses_median_and_sensitivity():
    counts = np.array([10, 20, 30, 1])
    cand = np.arange(4)
    assert length_threshold(counts, cand, 0.7) == pytest.approx(0.3 * 15)
    assert too_short(counts, cand, 4.5).tolist() == [3]
    assert length_threshold(counts, cand, 1.0) == 0  # most lenient: nothing filtered
    assert length_threshold(counts, cand, 0.0) == pytest.approx(15)  # strictest: below median filtered


def test_one_padded_giant_cannot_raise_the_bar():
    counts = np.array([40, 45, 50, 55, 3000])
    thr = length_threshold(counts, np.arange(5), 0.7)
    assert too_short(counts, np.arange(5), thr).tolist() == []


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_lof_skipped_for_small_rounds(n):
    sim = cosine_matrix(block_vectors([n]))
    out, how = lof_outliers(sim, np.arange(n), neighbors=10, min_samples=5, contamination=0.0)
    assert out.tolist() == [] and how.startswith("skipped")


def test_lof_finds_the_far_point():
    sim = cosine_matrix(block_vectors([6, 1], seed=3))
    out, how = lof_outliers(sim, np.arange(7), neighbors=10, min_samples=5, contamination=0.0)
    assert out.tolist() == [6] and how.startswith("ran")


def test_lof_never_removes_half():
    # two equal groups far apart: half would be "outliers" of the other half
    sim = cosine_matrix(block_vectors([1, 1, 1, 1, 1, 1], seed=1))
    out, how = lof_outliers(sim, np.arange(6), neighbors=10, min_samples=5, contamination=0.4)
    assert 2 * len(out) < 6
