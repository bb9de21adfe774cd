"""benchmarks.factual's analysis pays each round through the product's own evaluation (benchmarks.evaluate.replay)."""

from __future__ import annotations

from pathlib import Path

from benchmarks import data, factual
from consensus.fake import FakeEmbedder

ROOT = Path(__file__).resolve().parents[2]


def test_the_saved_short_answers_are_analysed_through_the_products_evaluation(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(data, "load_embedder", lambda settings: FakeEmbedder())
    argv = [
        str(ROOT / "examples" / "rounds.jsonl"),
        str(ROOT / "examples" / "rounds_planted.json"),
        "--out",
        str(ROOT / "benchmarks" / "results" / "factual_short.json"),
        "--analyse-only",
        "--cache",
        str(tmp_path),
    ]
    assert factual.main(argv) == 0
    out = capsys.readouterr().out
    assert "planted wrong answer earns less than every correct answer:" in out
    assert "rounds without a planted wrong answer: honest miners' pay" in out
    assert list(tmp_path.glob("vectors-*.npz"))  # the lab's one cache, as every benchmark's
