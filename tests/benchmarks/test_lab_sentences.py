"""The lab's sentence splitter and sentence vectors (benchmarks/lab/sentences.py), with the fake embedder."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.lab.sentences import sentence_vectors, split_sentences
from consensus.fake import FakeEmbedder


@pytest.mark.parametrize(
    "text,expected",
    [
        (
            "Paris is the capital. It is in France!\n- Lyon is not.",
            ["Paris is the capital.", "It is in France!", "Lyon is not."],
        ),
        (
            "1. Boil water first.\n2) Add the pasta now.\n## Serving it\n> Quoted words here",
            ["Boil water first.", "Add the pasta now.", "Serving it", "Quoted words here"],
        ),
        ("Use e.g. salt and 3.5 litres of water. Then stir.", ["Use e.g. salt and 3.5 litres of water.", "Then stir."]),
        ('He said "go now." Then he left.', ['He said "go now."', "Then he left."]),
        ("**Notes:**\nMix it well.", ["Mix it well."]),  # a one-word heading carries nothing
        ("Yes.", ["Yes."]),  # nothing longer: the answer is its own sentence
        ("  ", []),
        ("", []),
    ],
)
def test_split_sentences(text, expected):
    assert split_sentences(text) == expected


def test_long_answers_are_cut_into_balanced_runs_that_keep_every_sentence():
    text = " ".join(f"Sentence number {k} is here." for k in range(10))
    runs = split_sentences(text, max_sentences=4)
    assert len(runs) == 4
    assert " ".join(runs) == text
    assert [r.count("Sentence") for r in runs] == [2, 3, 3, 2]
    with pytest.raises(ValueError):
        split_sentences(text, max_sentences=0)


def test_sentence_vectors_one_array_per_text():
    embedder = FakeEmbedder(dim=32)
    texts = ["Paris is big. Lyon is small.", "", "Paris is big."]
    out = sentence_vectors(embedder, texts)
    assert [a.shape for a in out] == [(2, 32), (0, 32), (1, 32)]
    assert np.allclose(np.linalg.norm(out[0], axis=1), 1.0)
    assert np.array_equal(out[0][0], out[2][0])  # the same sentence, the same vector
    assert sentence_vectors(embedder, ["", " "])[0].shape[0] == 0
