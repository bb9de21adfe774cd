"""End to end: replay of examples/rounds.jsonl with the real model, planted cases, determinism, CLI."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from consensus.types import Polarity, Reason
from storage import LocalStore, keys
from validator.cli.main import main
from validator.records.round_input import read_rounds
from validator.round.stages import run_stages
from validator.settings import load_settings

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "rounds.jsonl"
PLANTED = json.loads((ROOT / "examples" / "rounds_planted.json").read_text())

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def replayed(tmp_path_factory):
    out = tmp_path_factory.mktemp("replay")
    code = main(["replay", str(EXAMPLES), "--out", str(out), "--no-progress"])
    assert code == 0
    return out


def record(out, round_id):
    return json.loads(LocalStore(out).get(keys.evaluation(round_id)))


def response(out, round_id, miner):
    return next(r for r in record(out, round_id)["responses"] if r["miner"] == miner)


def test_every_round_is_stored(replayed):
    ids = [item.round.round_id for item in read_rounds(EXAMPLES)]
    assert len(ids) >= 20
    store = LocalStore(replayed)
    for rid in ids:
        rec = json.loads(store.get(keys.evaluation(rid)))
        assert rec["embedding"]["checksum_sha256"] and rec["producer"]["version"]
        assert store.get(keys.heatmap(rid)).startswith(b"\x89PNG")
        assert sum(r["emissions"]["amount"] for r in rec["responses"]) == rec["emissions"]["pool"]
        for r in rec["responses"]:
            assert r["in_consensus"] == (r["reason"] == "in_consensus")
            if not r["in_consensus"]:
                assert r["detail"]
    summary = json.loads(store.get(keys.summary()))
    assert summary["rounds"] == {
        "evaluated": len(ids),
        "failed": 0,
        "consensus_reached": summary["rounds"]["consensus_reached"],
    }


ROUNDS = {item.round.round_id: item.round for item in read_rounds(EXAMPLES) if item.round is not None}


def is_agreement(p) -> bool:
    """A planted copy the rules take for agreement (docs/consensus.md, section 3a): its source has fewer
    distinct words of its own than ``consensus.copies.copy_min_words`` (the same short answer twice). Two copies of
    one long answer (r-0022) are copies, paid 0: the first to arrive keeps its pay (issue 46)."""
    from consensus.config import ConsensusConfig
    from consensus.text import words

    rnd = ROUNDS[p["round_id"]]
    source = next(r.text for r in rnd.responses if r.miner == p["of"])
    short = len(set(words(source)) - set(words(rnd.prompt))) < ConsensusConfig().copies.copy_min_words
    return short


def long_copies(kind):
    return [p for p in PLANTED if p["kind"] == kind and (kind not in ("copy", "near_copy") or not is_agreement(p))]


# planted as one-word junk, but each is the round's answer in one word that the other answers state ("100" to the
# boiling point, "206" to the bones, "Tilt." to the seasons): issue 38 keeps and pays such an answer (consensus.filters
# .agreed_short); "Python" to "how do I reverse a list" and "Yes." to an open question stay junk
ONE_WORD_ANSWERS = {("r-0001", "uid-17"), ("r-0009", "uid-17"), ("r-0015", "<script>alert('x')</script>")}


def test_a_planted_one_word_answer_the_others_state_is_paid(replayed):
    kept = [p for p in PLANTED if p["kind"] == "one_word" and (p["round_id"], p["miner"]) in ONE_WORD_ANSWERS]
    assert len(kept) == len(ONE_WORD_ANSWERS)
    for p in kept:
        r = response(replayed, p["round_id"], p["miner"])
        assert r["in_consensus"] and r["emissions"]["amount"] > 0, p


@pytest.mark.parametrize("kind", ["empty", "one_word", "copy", "near_copy", "off_topic", "injection"])
def test_planted_junk_earns_nothing_and_is_out_of_consensus(replayed, kind):
    cases = [p for p in long_copies(kind) if (p["round_id"], p["miner"]) not in ONE_WORD_ANSWERS]
    assert cases
    for p in cases:
        r = response(replayed, p["round_id"], p["miner"])
        assert not r["in_consensus"], p
        assert r["emissions"]["amount"] == 0, p
        expected = {
            "empty": {"empty"},
            "one_word": {"too_short"},
            "copy": {"copy"},
            "near_copy": {"copy"},
            "off_topic": {"outlier", "other_cluster"},
            "injection": {"injection"},
        }[kind]
        assert r["reason"] in expected, p


def test_copies_point_at_their_original(replayed):
    for p in long_copies("copy") + long_copies("near_copy"):
        rec = record(replayed, p["round_id"])
        r = next(x for x in rec["responses"] if x["miner"] == p["miner"])
        assert rec["responses"][r["copy_of"]]["miner"] == p["of"]
        assert rec["responses"][r["copy_of"]]["emissions"]["amount"] > 0


def test_a_planted_copy_taken_for_agreement_is_paid_as_agreement(replayed):
    """The same one-sentence fact twice: both paid on it, neither the other's copy."""
    agreed = [p for p in PLANTED if p["kind"] in ("copy", "near_copy") and is_agreement(p)]
    assert {p["round_id"] for p in agreed} >= {"r-0009", "r-0020"}
    for p in agreed:
        rec = record(replayed, p["round_id"])
        mine, source = (next(x for x in rec["responses"] if x["miner"] == m) for m in (p["miner"], p["of"]))
        assert mine["in_consensus"] and mine["copy_of"] is None, p
        assert mine["emissions"]["amount"] > 0 and source["emissions"]["amount"] > 0, p


def test_two_copies_of_one_long_answer_leave_its_source_its_pay(replayed):
    """r-0022 plants two copies of one answer: three miners send the same long text. The first to arrive is the
    source and keeps its pay; the two later ones are its copies and earn nothing (issue 46; they shared one payout
    three ways before)."""
    planted = [p for p in PLANTED if p["round_id"] == "r-0022" and p["kind"] == "copy"]
    assert len(planted) == 2
    rec = record(replayed, "r-0022")
    by = {x["miner"]: x for x in rec["responses"]}
    source = by[planted[0]["of"]]
    assert source["in_consensus"] and source["emissions"]["amount"] > 0
    for p in planted:
        assert by[p["miner"]]["reason"] == "copy" and by[p["miner"]]["emissions"]["amount"] == 0, p
        assert rec["responses"][by[p["miner"]]["copy_of"]]["miner"] == p["of"]


def test_honest_html_answer_stays_in_consensus(replayed):
    p = next(p for p in PLANTED if p["kind"] == "html")
    assert response(replayed, p["round_id"], p["miner"])["in_consensus"]


def test_wrong_yes_no_answer_leaves_consensus_with_polarity_labels(real_embedder):
    """Embeddings alone keep a fluent wrong answer (docs/consensus.md); the polarity seam removes it."""
    settings = load_settings(None, env={})
    item = next(i for i in read_rounds(EXAMPLES) if i.round and i.round.round_id == "r-0002")
    rnd = item.round
    wrong = {p["miner"] for p in PLANTED if p["round_id"] == "r-0002" and p["kind"] == "wrong"}
    plain = run_stages(rnd, real_embedder, settings)
    idx = [i for i, r in enumerate(rnd.responses) if r.miner in wrong]
    assert all(plain.evaluation.results[i].in_consensus for i in idx)  # the documented limitation
    labels = {
        i: (Polarity.AFFIRMATIVE if r.miner in wrong else Polarity.NEGATIVE)
        for i, r in enumerate(rnd.responses)
        if r.text.strip()
    }
    labelled = run_stages(rnd, real_embedder, settings, polarity=labels)
    for i in idx:
        assert labelled.evaluation.results[i].reason is Reason.POLARITY
        assert labelled.allocation.amounts[i] == 0
    assert labelled.evaluation.consensus.majority_polarity is Polarity.NEGATIVE


def test_replay_twice_is_byte_identical(replayed, tmp_path):
    again = tmp_path / "again"
    assert main(["replay", str(EXAMPLES), "--out", str(again), "--no-progress"]) == 0
    first, second = LocalStore(replayed), LocalStore(again)
    assert first.list() == second.list()
    for key in first.list():
        assert first.get(key) == second.get(key), key


def test_the_program_writes_what_the_in_process_replay_writes(replayed, tmp_path):
    """``python -m validator`` (``validator.cli.main.run``: the heap frozen before exit) loses no byte."""
    out = tmp_path / "program"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run(
        [sys.executable, "-m", "validator", "replay", str(EXAMPLES), "--out", str(out), "--no-progress"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "round(s) evaluated" in proc.stdout
    first, program = LocalStore(replayed), LocalStore(out)
    assert first.list() == program.list()
    for key in first.list():
        assert first.get(key) == program.get(key), key


def test_bad_lines_fail_the_run_but_not_the_other_rounds(tmp_path, capsys):
    lines = EXAMPLES.read_text().splitlines()[:3]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        "\n".join([lines[0], "{broken", lines[1].replace('"latency_s": ', '"latency_s": -', 1), lines[2]]) + "\n"
    )
    out = tmp_path / "out"
    assert main(["replay", str(bad), "--out", str(out), "--no-progress"]) == 1
    summary = json.loads(LocalStore(out).get(keys.summary()))
    assert summary["rounds"]["evaluated"] == 2 and summary["rounds"]["failed"] == 2
    errors = " ".join(f["error"] for f in summary["failures"])
    assert "line 2" in errors and "malformed JSON" in errors
    assert "line 3" in errors and "latency_s" in errors
    err = capsys.readouterr().err
    assert "line 3" in err


def test_config_file_changes_the_result(tmp_path):
    cfg = tmp_path / "strict.toml"
    cfg.write_text("[consensus]\nconsensus_threshold = 0.99\n")
    out = tmp_path / "strict"
    assert main(["replay", str(EXAMPLES), "--out", str(out), "--config", str(cfg), "--no-progress"]) == 0
    summary = json.loads(LocalStore(out).get(keys.summary()))
    assert summary["rounds"]["consensus_reached"] == 0
    assert summary["config"]["consensus"]["consensus_threshold"] == 0.99


def test_bad_config_exits_2_naming_the_field(tmp_path, capsys):
    cfg = tmp_path / "bad.toml"
    cfg.write_text("[consensus]\nlambda_factor = 'x'\n")
    assert main(["replay", str(EXAMPLES), "--out", str(tmp_path / "o"), "--config", str(cfg)]) == 2
    assert "consensus.clusters.lambda_factor" in capsys.readouterr().err


def recorded_short_answers(answers: dict[str, str]):
    """A chat client that gives, for the answer fenced in a factual-check prompt, the short answer the embedded
    LM wrote for it (tests/validator/data/factual_short_answers.json; an answer it never saw gets no reply)."""
    from lm.fake import FakeChatClient

    return FakeChatClient(
        lambda messages, **_: next((short for text, short in answers.items() if text in messages[-1]["content"]), ""),
        name="recorded",
    )


def test_planted_wrong_answers_earn_less_than_every_correct_answer_with_the_factual_check(real_embedder):
    """Issue 12's LM target, through run_stages with the real model and the LM's recorded short answers."""
    from lm.config import LMConfig
    from validator.round.stages import LMHandle

    recorded = json.loads((ROOT / "tests" / "validator" / "data" / "factual_short_answers.json").read_text())
    settings = load_settings(
        None,
        env={
            "VALIDATOR_LM__POLARITY": "false",
            "VALIDATOR_LM__NARRATIVE": "false",
            "VALIDATOR_LM__ROUND_BUDGET_S": "0",
        },
        dotenv_path=None,
    )
    rounds = {i.round.round_id: i.round for i in read_rounds(EXAMPLES) if i.round is not None}
    marked = {(p["round_id"], p["miner"]) for p in PLANTED}
    wrong = {p["round_id"]: p["miner"] for p in PLANTED if p["kind"] == "wrong"}
    assert sorted(wrong) == sorted(recorded["rounds"])
    for round_id, miner in wrong.items():
        rnd, client = rounds[round_id], recorded_short_answers(recorded["rounds"][round_id])
        outcome = run_stages(rnd, real_embedder, settings, lm=LMHandle(client, LMConfig()))
        amounts = outcome.allocation.amounts
        w = next(i for i, r in enumerate(rnd.responses) if r.miner == miner)
        honest = [i for i, r in enumerate(rnd.responses) if (round_id, r.miner) not in marked]
        assert len(client.calls) >= 3, round_id
        # a round with a reference answer decides on it before the LM is asked (docs/consensus.md, "reference")
        decided_by = {Reason.FACTUAL, Reason.REFERENCE} if rnd.reference else {Reason.FACTUAL}
        # an explanation asked for ("What causes the seasons?") has no one short answer to vote on: the factual
        # check abstains (issue 38: its verdicts removed honest explanations), and the wrong one is paid by its parts
        abstained = all(c.skipped and "no fact to vote on" in c.skipped for c in outcome.factual_checks if c.answer)
        if not abstained:
            assert outcome.evaluation.results[w].reason in decided_by, round_id
        assert amounts[w] < min(amounts[i] for i in honest), (round_id, amounts)
