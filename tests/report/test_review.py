"""The public review API the notebooks use: rounds, ledger tables, trends, Jupyter display forms."""

from __future__ import annotations

import json

import pytest

from storage import LocalStore, keys
from tests.report import stores
from validator.records.evaluation_record import RoundRecord
from validator.report.plots import miner_history_png, trends_png
from validator.review import PNG, Table, ledger_frame, load_round, load_store, miner_trends


def test_load_round_gives_texts_heatmap_scores_and_narrative(hostile_store):
    review = load_round(str(hostile_store), stores.HOSTILE_ROUND)
    assert review.texts == stores.HOSTILE_TEXTS
    assert review.heatmap()._repr_png_().startswith(b"\x89PNG")
    record = json.loads(LocalStore(hostile_store).get(keys.evaluation(stores.HOSTILE_ROUND)))
    assert review.narrative == record["narrative"]["text"] and review.record == RoundRecord.from_json(record)
    scores = review.scores()
    assert scores.column("miner") == list(stores.HOSTILE_MINERS)
    assert scores.column("composite") == pytest.approx([r["score"]["composite"] for r in record["responses"]])
    assert sum(scores.column("emission")) == record["emissions"]["total"]


def test_load_round_defaults_to_the_last_round_and_refuses_unknown_ids(hostile_store):
    assert load_round(str(hostile_store)).round.round_id == stores.HOSTILE_ROUND
    with pytest.raises(KeyError):
        load_round(str(hostile_store), "no-such-round")


def test_table_html_escapes_every_cell_and_text_form_is_terminal_safe():
    table = Table(
        ("miner", "score"), (("<script>x</script>", 1.5), ("a\x1b[31mred", None), ("lone\ud800", 1)), title="<b>t</b>"
    )
    html = table._repr_html_()
    html.encode("utf-8")  # Jupyter sends it as UTF-8: no lone surrogate left
    assert "lone\ufffd" in html and "lone\\ud800" in str(table)
    assert "<script>" not in html and "&lt;script&gt;x&lt;/script&gt;" in html and "&lt;b&gt;t&lt;/b&gt;" in html
    assert "\x1b" not in str(table) and "\\x1b" in str(table)
    assert table.records()[:2] == [
        {"miner": "<script>x</script>", "score": 1.5},
        {"miner": "a\x1b[31mred", "score": None},
    ]


def test_stored_ledger_matches_the_one_rebuilt_from_records(daemon_dir):
    review = load_store(str(daemon_dir))
    assert review.ledger is not None
    rebuilt = review.ledger_trajectory()[-1]
    stored = review.ledger
    assert (rebuilt.rounds, rebuilt.no_quorum, rebuilt.emitted) == (stored.rounds, stored.no_quorum, stored.emitted)
    for miner, totals in stored.miners.items():
        assert rebuilt.miners[miner].emissions == totals.emissions
        assert rebuilt.miners[miner].ema == pytest.approx(totals.ema)
    assert rebuilt.pairs == stored.pairs  # the identity evidence too (the records carry each round's close pairs)
    table = ledger_frame(str(daemon_dir))
    assert "stored ledger.json" in table.title
    assert sum(table.column("weight")) == pytest.approx(1.0)
    assert set(table.column("miner")) == set(stores.ANSWERS)


def test_replay_store_ledger_is_rebuilt_and_sums_to_the_emitted_total(hostile_store):
    review = load_store(str(hostile_store))
    table = ledger_frame(str(hostile_store))
    assert "rebuilt" in table.title and review.ledger is None
    assert sum(table.column("emissions")) == sum(r.emitted for r in review.rounds)
    histories = review.miners()
    assert [h.emissions for h in histories.values()] == sorted((h.emissions for h in histories.values()), reverse=True)


def test_trends_and_history_plots_are_pngs_and_deterministic(hostile_store):
    first = miner_trends(str(hostile_store), top=4)
    assert isinstance(first, PNG) and first.startswith(b"\x89PNG")
    assert miner_trends(str(hostile_store), top=4) == first
    args = ([1, 2, 3], [10.0, None, 90.0], [False, False, True], [False, True, False], [0, 0, 5])
    assert miner_history_png(*args) == miner_history_png(*args)


def test_plots_take_hostile_labels_and_empty_input():
    # mathtext and TeX would fail (or run) on these; they are drawn as plain text
    labels = (r"$\frac{1}{0}$", "a\x00\u202eb", "", "$x")
    png = trends_png({m: [0, 5] for m in labels}, {m: [0.0, 0.1] for m in labels})
    assert png.startswith(b"\x89PNG")
    assert miner_history_png([], [], [], [], []).startswith(b"\x89PNG")
    assert trends_png({}, {}).startswith(b"\x89PNG")
    with pytest.raises(ValueError):
        miner_history_png([1], [], [], [], [])
    with pytest.raises(ValueError):
        trends_png({"a": [1, 2]}, {"a": [0.1]})


def test_the_package_exports_what_the_notebooks_and_the_report_import():
    import validator.review as review

    assert sorted(review.__all__) == sorted(set(review.__all__))
    assert [name for name in review.__all__ if not hasattr(review, name)] == []
    for name in ("load_store", "load_round", "ledger_frame", "miner_trends", "StoreReview", "Table", "PNG"):
        assert name in review.__all__
