"""What an operator sees: the progress line of a round under way and the round's line with the pool."""

from __future__ import annotations

import io

from tests.helpers import round_report
from validator.terminal import Progress


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_in_a_log_has_one_line_per_stage_and_the_final_count():
    out = io.StringIO()
    progress = Progress(out)
    for text in (
        "r1: querying miners",
        "r1: 1/3 miners done",
        "r1: 2/3 miners done",
        "r1: 3/3 miners done",
        "r1: evaluating",
        "r1: storing",
        "r1: narrative",
    ):
        progress(text)
    assert out.getvalue().splitlines() == [
        "r1: querying miners",
        "r1: 3/3 miners done",
        "r1: evaluating",
        "r1: storing",
        "r1: narrative",
    ]


def test_progress_on_a_terminal_rewrites_one_line_and_clears_it():
    out = Tty()
    progress = Progress(out)
    progress("r1: 1/3 miners done")
    progress("r1: evil\x1b[2Jminer")  # miner-controlled text never reaches the terminal raw
    progress.clear()
    text = out.getvalue()
    assert "\n" not in text and text.count("\r\x1b[K") == 3 and "\x1b[2J" not in text


def test_the_round_line_states_what_was_paid_of_the_pool():
    report = round_report(miners=10, usable=7, top_miner="honest-concise", paid=700_373_593, pool=1_000_000_000)
    line = report.line()
    assert "paid 700,373,593 of 1,000,000,000" in line and "consensus 0.910 reached" in line


def test_the_round_line_says_why_consensus_was_not_reached():
    from types import SimpleNamespace

    from validator.daemon.round_line import unreached_why

    def consensus(score, reached, polarity_agreed=None, threshold=0.7):
        return SimpleNamespace(score=score, reached=reached, polarity_agreed=polarity_agreed, threshold=threshold)

    assert unreached_why(consensus(0.921, False, polarity_agreed=False)) == "the yes/no answers split"
    assert unreached_why(consensus(0.55, False)) == "below 0.7"
    assert unreached_why(consensus(0.0, False)) == "below 0.7"
    assert unreached_why(consensus(0.95, True)) is None
    report = round_report(
        miners=10,
        usable=7,
        failures={},
        consensus_score=0.921,
        reached=False,
        top_miner="honest-analyst",
        paid=500_000_000,
        pool=1_000_000_000,
        unreached_why="the yes/no answers split",
    )
    assert "consensus 0.921 not reached (the yes/no answers split)" in report.line()


def test_a_stage_that_lasts_is_shown_again_with_its_seconds():
    now = [0.0]
    out = io.StringIO()
    progress = Progress(out, every=10.0, clock=lambda: now[0])
    progress("r1: querying miners")
    now[0] = 9.0
    progress.beat()  # shown 9 s ago: nothing yet
    now[0] = 10.0
    progress.beat()
    progress("r1: 2/3 miners done")  # still the query stage: its seconds count on
    now[0] = 21.0
    progress.beat()
    progress("r1: evaluating")
    now[0] = 31.5
    progress.beat()
    progress.done("r1 ok")  # a result ends the stage: no heartbeat until the next one
    now[0] = 60.0
    progress.beat()
    progress.idle("next round in 25 s")
    now[0] = 90.0
    progress.beat()
    assert out.getvalue().splitlines() == [
        "r1: querying miners",
        "r1: querying miners (10 s)",
        "r1: 2/3 miners done (21 s)",
        "r1: evaluating",
        "r1: evaluating (10 s)",
        "next round in 25 s",
    ]


def test_the_heartbeat_thread_runs_while_the_block_does():
    import time

    out = io.StringIO()
    with Progress(out, every=0.2) as progress:
        progress("starting the embedded LM")
        time.sleep(0.7)
    lines = out.getvalue().splitlines()
    assert lines[0] == "starting the embedded LM" and len(lines) >= 3
    assert all(line.startswith("starting the embedded LM (") and line.endswith(" s)") for line in lines[1:])


def test_a_quiet_stage_shows_only_once_it_lasts():
    now = [0.0]
    out = io.StringIO()
    progress = Progress(out, every=10.0, quiet=2.0, clock=lambda: now[0])
    progress.later("checking the store")
    now[0] = 1.0
    progress.beat()
    progress.later("loading the embedding model")  # the store answered at once: never shown
    now[0] = 2.5
    progress.beat()
    now[0] = 3.5
    progress.beat()
    now[0] = 13.5
    progress.beat()
    assert out.getvalue().splitlines() == ["loading the embedding model (2 s)", "loading the embedding model (12 s)"]
