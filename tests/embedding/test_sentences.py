"""The sentence splitter and the sentence vectors of the edge (embedding.sentences), with the fake embedder."""

from __future__ import annotations

import numpy as np
import pytest

from consensus.fake import FakeEmbedder
from embedding.sentences import sentence_vectors, split_sentences


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


def test_a_round_grades_by_sentences_only_when_asked():
    import dataclasses

    from consensus.types import Response, Round
    from validator.round import run_round
    from validator.settings import load_settings
    from validator.signals import edge_sentences

    settings = load_settings(None, env={}, dotenv_path=None)
    settings = dataclasses.replace(settings, consensus=dataclasses.replace(settings.consensus, heatmap=False))
    texts = [
        "Paris is the capital of France. It lies on the Seine. It has many museums.",
        "The capital of France is Paris. Paris lies on the Seine.",
        "France's capital is Paris. It has many museums and parks.",
    ]
    round_ = Round("r", "What is the capital of France?", tuple(Response(f"m{k}", t, 1.0) for k, t in enumerate(texts)))
    embedder = FakeEmbedder(dim=64)
    assert edge_sentences(embedder, round_, settings.consensus) is None  # words only: no model call
    semantic = dataclasses.replace(settings, consensus=dataclasses.replace(settings.consensus, coverage_semantic=1.0))
    sentences = edge_sentences(embedder, round_, semantic.consensus)
    assert [len(s) for s in sentences] == [3, 2, 2]
    by_words = run_round(round_, embedder, settings).evaluation
    by_sentences = run_round(round_, embedder, semantic).evaluation
    assert [r.score.quality for r in by_words.results] != [r.score.quality for r in by_sentences.results]
