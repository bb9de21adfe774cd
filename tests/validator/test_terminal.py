"""What an operator sees: the progress line of a round under way and the round's line with the pool."""

from __future__ import annotations

import io

from validator.round_report import RoundReport
from validator.terminal import Progress


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_in_a_log_has_one_line_per_stage_and_the_final_count():
    out = io.StringIO()
    progress = Progress(out)
    for text in ("r1: querying miners", "r1: 1/3 miners done", "r1: 2/3 miners done", "r1: 3/3 miners done",
                 "r1: evaluating", "r1: storing", "r1: narrative"):
        progress(text)
    assert out.getvalue().splitlines() == ["r1: querying miners", "r1: 3/3 miners done", "r1: evaluating",
                                           "r1: storing", "r1: narrative"]


def test_progress_on_a_terminal_rewrites_one_line_and_clears_it():
    out = Tty()
    progress = Progress(out)
    progress("r1: 1/3 miners done")
    progress("r1: evil\x1b[2Jminer")  # miner-controlled text never reaches the terminal raw
    progress.clear()
    text = out.getvalue()
    assert "\n" not in text and text.count("\r\x1b[K") == 3 and "\x1b[2J" not in text


def test_the_round_line_states_what_was_paid_of_the_pool():
    report = RoundReport(sequence=1, round_id="round-000001", status="ok", recovered=None, miners=10, usable=7,
                         failures={"timeout": 1}, consensus_score=0.91, reached=True, top_miner="honest-concise",
                         paid=700_373_593, seconds=41.3, stages={}, pool=1_000_000_000)
    line = report.line()
    assert "paid 700,373,593 of 1,000,000,000" in line and "consensus 0.910 reached" in line


def test_the_round_line_says_why_consensus_was_not_reached():
    from types import SimpleNamespace

    from validator.round_report import unreached_why

    def consensus(score, reached, polarity_agreed=None, threshold=0.7):
        return SimpleNamespace(score=score, reached=reached, polarity_agreed=polarity_agreed, threshold=threshold)

    assert unreached_why(consensus(0.921, False, polarity_agreed=False)) == "the yes/no answers split"
    assert unreached_why(consensus(0.55, False)) == "below 0.7"
    assert unreached_why(consensus(0.0, False)) == "below 0.7"
    assert unreached_why(consensus(0.95, True)) is None
    report = RoundReport(sequence=1, round_id="round-000001", status="ok", recovered=None, miners=10, usable=7,
                         failures={}, consensus_score=0.921, reached=False, top_miner="honest-analyst",
                         paid=500_000_000, seconds=38.9, stages={}, pool=1_000_000_000,
                         unreached_why="the yes/no answers split")
    assert "consensus 0.921 not reached (the yes/no answers split)" in report.line()
