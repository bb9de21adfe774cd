"""The operator's view at the end of a run: round lines that name reasons, the daemon's and `validator round`'s
closing summary, `validator weights show` offline (issue 36)."""

from __future__ import annotations

import re

import pytest

from consensus.types import Reason
from lm.config import Secret
from minerpool import MinerPool, SimMiner
from tests.helpers import round_report
from validator.cli.main import main
from validator.daemon.round_line import RoundLine
from validator.miners.answers import FailureReason
from validator.review.unpaid import FAILURES, WORDS, Tally, identical_paid, reason_of, why_zero

KEY = "sk-miner-key-that-must-never-leak-0123456789"
PROMPT = "Is Python's list type mutable?"
TEXTS = (
    "Yes. Python lists are mutable: elements can be changed, appended and removed in place.",
    "Yes, Python lists are mutable, so you can modify their elements after creating them.",
    "Yes - a list in Python is a mutable sequence; items may be reassigned, added or deleted.",
    "Yes. Lists are mutable in Python (unlike tuples), so they can be modified in place.",
)
BREAD = "Preheat the oven to 200 degrees, knead the dough for ten minutes and bake the bread until golden brown."


def test_every_reason_has_words():
    for reason in FailureReason:
        assert reason.value in WORDS and reason.value in FAILURES
    for reason in Reason:
        if reason is not Reason.IN_CONSENSUS:
            assert reason.value in WORDS
    assert "offtopic" in WORDS


def test_reason_of_names_failures_offtopic_and_unpaid_agreement():
    assert reason_of(error="timeout", reason="error", detail="no answer", in_consensus=False) == "timeout"
    off = "off topic: median similarity to the prompt 0.05 < 0.20"
    assert reason_of(error=None, reason="other_cluster", detail=off, in_consensus=False) == "offtopic"
    assert reason_of(error=None, reason="other_cluster", detail="cluster 1, dominant is 0", in_consensus=False) == (
        "other_cluster"
    )
    assert reason_of(error=None, reason="injection", detail=None, in_consensus=False) == "injection"
    assert reason_of(error=None, reason="in_consensus", detail=None, in_consensus=True) == "unpaid"


def report(**kw) -> RoundLine:
    """``round_report`` with a reason for each kind of unpaid miner."""
    return round_report(
        **{"unpaid": {"t": "timeout", "c": "copy", "o": "offtopic", "i": "injection", "p": "polarity"}, **kw}
    )


def test_the_round_line_names_the_unpaid_reasons():
    line = report().line()
    assert "failed 1 (timeout 1)" in line
    assert "unpaid 4 (copy 1, injection 1, offtopic 1, polarity 1)" in line


def test_a_round_line_without_top_says_why():
    assert "no top: the best composite score is tied" in report(top_miner=None, unpaid={}).line()
    line = report(top_miner=None, paid=0, reached=False, unreached_why="below 0.7").line()
    assert "no top: consensus not reached (below 0.7), nobody paid" in line
    assert "no top: no quorum, nobody paid" in report(top_miner=None, paid=0, status="no_quorum").line()
    assert "one answer paid" in report(top_miner=None, unpaid={m: "empty" for m in "abcde"}).line()


def test_tally_and_why_zero():
    from emissions.ledger import Ledger, MinerEntry

    ledger = Ledger()
    tally = Tally()
    for seq in (1, 2):
        entries = [
            MinerEntry("good", 1.0, 10, True, False),
            MinerEntry("down", 0.0, 0, False, True),
            MinerEntry("chef", 0.0, 0, False, False),
        ]
        ledger = ledger.apply(seq, f"round-{seq}", entries, no_quorum=False)
        tally.add({"down": "timeout", "chef": "offtopic" if seq == 1 else "copy"})
    assert why_zero("good", ledger, tally) == ""
    assert why_zero("down", ledger, tally) == "did not answer within its timeout (timeout, 2 of 2 rounds)"
    assert "offtopic, 1 of 2" in why_zero("chef", ledger, tally) and "copy, 1 of 2" in why_zero("chef", ledger, tally)
    assert tally.failed_every_round("down") and not tally.failed_every_round("chef")
    assert why_zero("down", ledger, Tally()) == "failed every round (2)"


def test_identical_paid_pairs():
    texts = {"a": "Yes.", "b": " Yes.", "c": "No.", "d": "Yes."}
    assert identical_paid(texts, ["a", "b", "c"]) == [("a", "b")]


@pytest.fixture
def network(tmp_path, monkeypatch):
    """Four honest miners, a twin that answers as honest-0 does, an off-topic one, an HTTP 500 and an empty one."""
    monkeypatch.setenv("TEST_MINER_KEY", KEY)
    monkeypatch.setenv("VALIDATOR_TASKS__ENABLED", "false")  # prompt rounds: these miners answer one prompt
    key = Secret(KEY)
    miners = [SimMiner(f"honest-{i}", "canned", text=t, api_key=key, logprob=-0.2) for i, t in enumerate(TEXTS)]
    miners += [
        SimMiner("twin", "canned", text=TEXTS[0], api_key=key, logprob=-0.2),
        SimMiner("chef", "canned", text=BREAD, api_key=key),
        SimMiner("broken", "http500", api_key=key),
        SimMiner("blank", "empty", api_key=key),
    ]
    lines = []
    with MinerPool(miners).start() as pool:
        for m in miners:
            lines += ["[[miner]]", f'hotkey = "{m.name}"', f'base_url = "{pool.base_url(m.name)}"', 'model = "m"']
            lines += ['api_key_env = "TEST_MINER_KEY"', ""]
        path = tmp_path / "miners.toml"
        path.write_text("\n".join(lines))
        prompts = tmp_path / "prompts.jsonl"
        prompts.write_text('{"prompt": "Is Python\'s list type mutable?"}\n')
        yield path, prompts


def test_the_daemon_ends_with_a_summary_an_operator_can_act_on(network, tmp_path, capsys):
    miners, prompts = network
    store = tmp_path / "rounds"
    argv = ["daemon", "--rounds", "2", "--store", str(store), "--miners", str(miners), "--prompts", str(prompts)]
    code = main([*argv, "--no-lm", "--interval", "0", "--metrics-port", "-1"])
    out = capsys.readouterr().out
    assert code == 0, out
    rounds = [line for line in out.splitlines() if line.startswith("round-00000")]
    assert len(rounds) == 2
    for line in rounds:
        assert "failed 2 (empty 1, http_error 1)" in line and re.search(r"unpaid \d \((.*, )?offtopic 1", line)
    summary = out[out.index("ledger after round 2") :]
    assert re.search(r"twin\s+0\.\d+", summary)  # the twin is paid
    assert "blank: answered nothing (an empty text) (empty, 2 of 2 rounds)" in summary
    assert "broken: answered with an HTTP error status (http_error, 2 of 2 rounds)" in summary
    assert "chef: answered off topic" in summary and "(offtopic, 2 of 2 rounds)" in summary
    assert "failed every round: blank, broken: check its endpoint" in summary
    assert "honest-0 and twin gave identical answers in a round" in summary and "agreement by design" in summary
    assert f"results: {store}" in summary and f"validator report {store} --serve" in summary
    assert f"validator weights show {store}" in summary

    # the summary's own command: offline, no wallet, no chain
    assert main(["weights", "show", str(store)]) == 0
    shown = capsys.readouterr()
    assert "weight" in shown.out and "ema" in shown.out and "last seen" in shown.out and not shown.err
    assert re.search(r"honest-0\s+0\.\d+\s+0\.\d+\s+-\s+[\d,]+\s+2/2\s+round-000002", shown.out)
    assert "chef: answered off topic" in shown.out and "failed every round: blank, broken" in shown.out


def test_weights_show_on_a_store_with_nothing_is_one_line(tmp_path, capsys):
    assert main(["weights", "show", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nothing to weight" in err


def test_round_ends_with_reasons_in_words(network, capsys):
    miners, _ = network
    assert main(["round", "--prompt", PROMPT, "--miners", str(miners), "--no-lm"]) == 0
    out = capsys.readouterr().out
    closing = out[out.index("paid nothing:") :]
    assert "chef: answered off topic" in closing and "blank: answered nothing" in closing
    assert "failed: blank, broken: check its endpoint" in closing
    assert "honest-0 and twin gave identical answers in a round" in closing
    assert "shares of this round: " in out and "not stored (--store DIR" in out


def test_metrics_count_unpaid_reasons_and_lm_time():
    from validator.daemon.prometheus import Metrics

    metrics = Metrics()
    metrics.observe_unpaid({"a": "copy", "b": "copy", "c": "offtopic"})
    metrics.observe_lm({"polarity": 20.0, "factual": 15.0, "embed": 1.0, "narrative": 5.0}, 30.0)
    metrics.observe_lm({"embed": 1.0}, 30.0)  # no LM call: nothing observed
    text = metrics.render().decode()
    assert 'validator_miner_unpaid_total{reason="copy"} 2.0' in text
    assert 'validator_miner_unpaid_total{reason="offtopic"} 1.0' in text
    assert "validator_lm_budget_seconds 30.0" in text
    assert "validator_lm_round_seconds_count 1.0" in text and "validator_lm_round_seconds_sum 40.0" in text
    assert "validator_lm_budget_spent_total 1.0" in text


def test_with_committees_a_miners_failures_count_over_the_rounds_it_sat_in(network, tmp_path, capsys, monkeypatch):
    miners, prompts = network
    monkeypatch.setenv("VALIDATOR_DAEMON__COMMITTEE_SIZE", "3")  # 7 miners: two committees a tick
    argv = ["daemon", "--rounds", "4", "--store", str(tmp_path / "rounds"), "--miners", str(miners)]
    code = main([*argv, "--prompts", str(prompts), "--no-lm", "--interval", "0", "--metrics-port", "-1"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "committee 2/2" in out  # two ticks of two committees
    summary = out[out.index("ledger after round 4") :]
    # blank failed each of the 2 rounds it sat in (one a tick), not "2 of 4 rounds"
    assert "blank: answered nothing (an empty text) (empty, 2 of 2 rounds)" in summary
    assert "failed every round: blank, broken" in summary


def test_the_reports_miner_table_says_why_0_as_the_cli_does(network, tmp_path, capsys):
    from tests.report.test_builder import table_rows
    from validator.report import build_report

    miners, prompts = network
    store = tmp_path / "rounds"
    argv = ["daemon", "--rounds", "2", "--store", str(store), "--miners", str(miners), "--prompts", str(prompts)]
    assert main([*argv, "--no-lm", "--interval", "0", "--metrics-port", "-1"]) == 0
    capsys.readouterr()
    assert main(["weights", "show", str(store)]) == 0
    shown = capsys.readouterr().out
    build_report(str(store), tmp_path / "site")
    html = (tmp_path / "site" / "index.html").read_text()
    assert ">Why 0</th>" in html
    rows = {row[0]: row for row in table_rows(tmp_path / "site" / "index.html", "miner-table")}
    assert rows["blank"][-1] == "answered nothing (an empty text) (empty, 2 of 2 rounds)"
    assert f"blank: {rows['blank'][-1]}" in shown  # the CLI's words
    assert rows["broken"][-1].startswith("answered with an HTTP error status")
    assert not any("rounds)" in cell for cell in rows["honest-0"])  # paid: nothing to explain
