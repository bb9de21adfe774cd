"""The LM's evidence stored with each round: replay and what-if without the LM change only what changed (issue 27).

A daemon runs with the LM on (the package's ``FakeChatClient``): on the yes/no prompt the LM reads dave's
answer as "No" and dave leaves consensus, which the embeddings alone cannot see. A what-if or a replay
without the LM then reuses that evidence: a no-op config gives every delta 0 and writes the original
records again; ``consensus_threshold = 0.95`` lists only that setting.
"""

from __future__ import annotations

import json
import shutil

import pytest

from consensus.fake import FakeEmbedder
from lm.fake import FakeChatClient, user_text
from lm.untrusted import CLOSE, OPEN
from narrative.narrate import SYSTEM
from storage import keys
from storage.local import LocalStore
from validator.daemon.daemon import Daemon
from validator.miners.fake import FakeMiners
from validator.records.lm_evidence import LMEvidence
from validator.records.reader import RoundReader
from validator.replaying.replay_run import replay_store
from validator.replaying.whatif_run import run_whatif, whatif_id_for
from validator.round.prompt_source import PromptItem
from validator.round.stages import LMHandle
from validator.settings import load_settings

ANSWERS = {
    "alice": "Yes. Python lists are mutable: you can change, append and remove elements in place.",
    "bob": "Yes, lists in Python are mutable, so their elements can be modified after creation.",
    "carol": "Yes - a Python list is a mutable sequence; items can be reassigned, added or deleted.",
    "dave": "No. Python lists cannot be changed after creation; their elements are fixed in place.",
}
PROMPTS = (PromptItem("Is Python's list type mutable?"), PromptItem("Which Python type holds a sequence?"))
NARRATIVE = json.dumps(
    {
        "prompt_analysis": "The prompt asks a question about Python lists.",
        "response_comparison": "The answers were compared by cosine similarity of embeddings.",
        "evaluation_methodology": "Answers were embedded and clustered by cosine similarity.",
    }
)


def fake():
    return FakeEmbedder(groups={text: "lists" for text in ANSWERS.values()})  # one cluster, whatever they say


def lm_answer(messages, **_):
    """Short answers are the answer's first word; the narrative is a fixed JSON object."""
    if any(m["role"] == "system" and m["content"] == SYSTEM for m in messages):
        return NARRATIVE
    text = user_text(messages)
    if OPEN in text:
        quoted = text.split(OPEN, 1)[1].split(CLOSE, 1)[0].split()
        return quoted[0].strip(".,-") if quoted else ""
    return "list"


def settings(lm: bool = False, **consensus):
    env = {
        "VALIDATOR_DAEMON__INTERVAL_S": "0",
        "VALIDATOR_OUTPUT__HEATMAP": "false",
        "VALIDATOR_CONSENSUS__CLUSTERS__RELEVANCE_GATE": "false",
        "VALIDATOR_LM__ENABLED": str(lm).lower(),
    }
    env.update({f"VALIDATOR_CONSENSUS__{k.upper()}": str(v) for k, v in consensus.items()})
    return load_settings(None, env=env, dotenv_path=None)


@pytest.fixture(scope="module")
def lm_store(tmp_path_factory):
    """A daemon's store of 4 rounds made with the LM on."""
    root = tmp_path_factory.mktemp("evidence") / "daemon"
    s = settings(lm=True)
    clock = iter(1_700_000_000.0 + 100 * i for i in range(10))
    Daemon(
        store=LocalStore(root),
        embedder=fake(),
        settings=s,
        prompts=PROMPTS,
        query=FakeMiners(ANSWERS),
        lm=LMHandle(FakeChatClient(lm_answer), s.lm_config()),
        clock=lambda: next(clock),
    ).run(rounds=4)
    return root


@pytest.fixture()
def store(lm_store, tmp_path):
    return LocalStore(shutil.copytree(lm_store, tmp_path / "daemon"))


def without_markers(raw: bytes) -> dict:
    doc = json.loads(raw)
    doc.pop("daemon", None)
    doc.pop("replay", None)
    return doc


def whatif(store, new):
    return run_whatif(store, new, fake(), whatif_id=whatif_id_for(new, _all()), source="test").to_json()


def _all():
    from validator.replaying.replay_run import RoundSelection

    return RoundSelection()


def test_the_lm_decided_something_the_embeddings_alone_cannot(store):
    record = json.loads(store.get(keys.evaluation("round-000001")))
    dave = next(r for r in record["responses"] if r["miner"] == "dave")
    assert record["config"]["lm"]["enabled"] is True and dave["reason"] == "polarity" and dave["polarity"] == "negative"
    evidence = RoundReader(store).evidence("round-000001")
    assert evidence is not None and evidence.lm == "fake" and evidence.narrative is not None
    assert {c.index: c.answer for c in evidence.checks.factual_checks}[3] == "No"


def test_a_no_op_whatif_on_an_lm_store_changes_nothing(store):
    before = {k: store.get(k) for k in store.list()}
    report = whatif(store, settings())  # what the whatif command runs with: the LM off
    s = report["summary"]
    assert s["rounds"] == 4 and s["failed"] == 0 and s["reached_old"] == s["reached_new"] == 4
    assert s["membership_changed"] == 0 and report["config_changes"] == []
    for m in report["miners"].values():
        assert m["emissions_change"] == 0 and m["weight_change"] == 0.0 and m["rank_change"] == 0
    for i in range(1, 5):  # the original records, written again beside them
        rid = f"round-00000{i}"
        assert without_markers(store.get(keys.replay_evaluation(rid, report["whatif_id"]))) == without_markers(
            store.get(keys.evaluation(rid))
        )
    assert all(store.get(k) == v for k, v in before.items())  # the originals are never written
    assert not [k for k in store.list() if k.endswith("lm-evidence.json") and "/replays/" in k]  # reused, not new


def test_a_stricter_threshold_lists_only_that_setting(store):
    report = whatif(store, settings(clusters__consensus_threshold=0.95))
    assert report["config_changes"] == [{"setting": "consensus.consensus_threshold", "old": 0.7, "new": 0.95}]


def test_without_the_evidence_the_lm_store_would_not_replay_as_it_ran(store):
    """What the evidence prevents (issue 27): the LM's verdicts lost, dave back in consensus and paid."""
    for key in [k for k in store.list() if k.endswith("/lm-evidence.json")]:
        store.delete(key)
    report = whatif(store, settings())
    assert report["miners"]["dave"]["emissions_change"] > 0
    assert {"setting": "lm.enabled", "old": True, "new": False} in report["config_changes"]


def test_store_replay_with_nothing_changed_writes_the_same_records(store):
    result = replay_store(store, settings(), fake(), replay_id="same")
    assert len(result.diffs) == 4 and not result.failures
    assert all(not d.joined and not d.left for d in result.diffs) and set(result.miner_changes().values()) <= {0}
    for i in range(1, 5):
        rid = f"round-00000{i}"
        assert without_markers(store.get(keys.replay_evaluation(rid, "same"))) == without_markers(
            store.get(keys.evaluation(rid))
        )


def test_unreadable_evidence_fails_that_round_and_names_the_file(store):
    store.put(keys.lm_evidence("round-000002"), b"{not json")
    result = replay_store(store, settings(), fake(), replay_id="broken")
    assert [f.round_id for f in result.failures] == ["round-000002"]
    assert "rounds/round-000002/lm-evidence.json" in result.failures[0].error and len(result.diffs) == 3


def test_evidence_survives_its_stored_form(store):
    evidence = RoundReader(store).evidence("round-000001")
    assert LMEvidence.from_json(json.loads(json.dumps(evidence.to_json())), "x") == evidence


def test_the_commands_with_a_no_op_config_print_no_change(store, tmp_path, monkeypatch, capsys):
    import embedding.loader
    from validator.cli.main import main

    monkeypatch.setattr(embedding.loader, "load_embedder", lambda *a, **k: fake())  # the store's embedder
    daemons = "[output]\nheatmap = false\n[consensus.clusters]\nrelevance_gate = false\n"  # the daemon's config (settings(lm=True))
    noop = tmp_path / "noop.toml"
    noop.write_text(daemons + "consensus_threshold = 0.7\n")
    strict = tmp_path / "strict.toml"
    strict.write_text(daemons + "consensus_threshold = 0.95\n")
    root = str(store.root)
    assert main(["whatif", root, "--config", str(noop), "--out", str(tmp_path / "w1"), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "consensus reached 4 -> 4; membership changed in 0" in printed and "->" not in printed.split("\n")[1]
    report = json.loads((tmp_path / "w1" / "whatif.json").read_text())
    assert report["config_changes"] == [] and all(m["weight_change"] == 0 for m in report["miners"].values())
    assert main(["whatif", root, "--config", str(strict), "--out", str(tmp_path / "w2"), "--no-progress"]) == 0
    changes = json.loads((tmp_path / "w2" / "whatif.json").read_text())["config_changes"]
    assert [c["setting"] for c in changes] == ["consensus.consensus_threshold"]
    capsys.readouterr()
    assert main(["replay", root, "--config", str(noop), "--replay-id", "noop", "--no-progress"]) == 0
    assert "no emission changes" in capsys.readouterr().out
