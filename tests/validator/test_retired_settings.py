"""Settings retired from the product (issue 34, session 19): one line refusing a retired behaviour, a warning for
its old default, and stored rounds that hold them still read for replay, what-if, review and the ledger."""

from __future__ import annotations

import json

import pytest

from consensus.errors import ConfigError
from consensus.params import ConfigDeprecationWarning
from storage import keys
from storage.memory import MemoryStore
from tests.validator.test_daemon import ANSWERS, ScriptedQuery, make, settings
from validator.settings import Settings, load_settings, with_changes

RETIRED = [  # (section, key, a value asking for the retired behaviour, the old default)
    ("lm", "grade", True, False),
    ("lm", "factual_on_explanations", True, False),
    ("lm", "selectit_confidence", True, False),
    ("lm_client", "ensemble", True, False),
    ("lm_client", "aggregation", "avg", "maj"),
]


def load(env=None, config=None):
    return load_settings(config, env=env or {}, dotenv_path=None)


def toml(value) -> str:
    return str(value).lower() if isinstance(value, bool) else json.dumps(value)


@pytest.mark.parametrize(("section", "key", "asked", "old"), RETIRED)
def test_a_retired_behaviour_is_refused_in_one_line_from_every_source(tmp_path, section, key, asked, old):
    line = rf"{section}\.{key} was retired in commit 663e260 \(2026-11-26\): .+; remove the setting$"
    cfg = tmp_path / "retired.toml"
    cfg.write_text(f"[{section}]\n{key} = {toml(asked)}\n")
    with pytest.raises(ConfigError, match=rf"^{cfg}: {section}\.{key}: {line}") as caught:
        load(config=cfg)
    assert "\n" not in str(caught.value)
    variable = f"VALIDATOR_{section.upper()}__{key.upper()}"
    with pytest.raises(ConfigError, match=rf"^{variable}: {line}"):
        load({variable: str(asked).lower()})
    with pytest.raises(ConfigError, match=rf"^--set \({section}\.{key}\): {line}"):
        with_changes(Settings(), {section: {key: asked}})


@pytest.mark.parametrize(("section", "key", "asked", "old"), RETIRED)
def test_a_retired_key_at_its_old_default_is_accepted_with_a_warning(tmp_path, section, key, asked, old):
    cfg = tmp_path / "old.toml"
    cfg.write_text(f"[{section}]\n{key} = {toml(old)}\n")
    with pytest.warns(ConfigDeprecationWarning) as caught:
        assert load(config=cfg) == load()
    (message,) = [str(w.message) for w in caught]
    assert (
        f"{section}.{key} was retired in commit 663e260 (2026-11-26)" in message
        and " is ignored: " in message
        and "\n" not in message
    )


def test_the_seeds_variable_names_of_the_ensemble_say_so_too():
    with pytest.raises(
        ConfigError, match=r"^ENSEMBLE: lm_client\.ensemble was retired in commit 663e260 \(2026-11-26\): .*benchmarks"
    ):
        load({"ENSEMBLE": "t"})
    with pytest.raises(ConfigError, match=r"^AGGREGATION: lm_client\.aggregation was retired"):
        load({"AGGREGATION": "avg"})
    with pytest.warns(ConfigDeprecationWarning, match="ENSEMBLE: lm_client.ensemble = false is ignored"):
        assert load({"ENSEMBLE": "f", "AGGREGATION": "maj"}) == load()


@pytest.mark.parametrize(
    ("key", "asked", "when", "options"),
    [
        ("unreached_pays", "nothing", r"in commit 663e260 \(2026-11-26\)", "floor, scaled"),
        # issue 48: neither the defaults nor the seed profile use it
        ("speed_mode", "throughput", "on 2026-11-29", "for_length, latency"),
    ],
)
def test_a_retired_option_is_refused_in_one_line(tmp_path, key, asked, when, options):
    cfg = tmp_path / "retired.toml"
    cfg.write_text(f'[emissions]\n{key} = "{asked}"\n')
    with pytest.raises(ConfigError, match=rf"{key}: '{asked}' was retired {when} .* {options}$"):
        load(config=cfg)
    variable = f"VALIDATOR_EMISSIONS__{key.upper()}"
    with pytest.raises(ConfigError, match=rf"^{variable} \(emissions.{key}\): '{asked[:4]}"):
        load({variable: asked})


@pytest.fixture(scope="module")
def old_store():
    """A daemon's three rounds, their records rewritten as a validator before session 19 wrote them: the [lm]
    section with the retired keys (the grade and the explanations' check on), [emissions] with 'nothing'."""
    from consensus.fake import FakeEmbedder

    embedder = FakeEmbedder(groups={text: "mutable" for text in ANSWERS.values()})
    store = MemoryStore()
    clock = iter([1_700_000_000.0, 1_700_000_100.0, 1_700_000_200.0])
    daemon = make(store, embedder, ScriptedQuery({"dave": "timeout"}))
    daemon.clock = lambda: next(clock)
    daemon.run(rounds=3)
    for key in [k for k in store.list() if k.endswith("/evaluation.json") and "/replays/" not in k]:
        record = json.loads(store.get(key))
        assert record["consensus"]["reached"]  # a reached round pays the same under 'nothing' and 'floor'
        record["config"]["lm"] |= {"grade": True, "factual_on_explanations": True}
        record["config"]["emissions"]["unreached_pays"] = "nothing"
        record["config"]["emissions"]["speed_mode"] = "throughput"
        store.put(key, json.dumps(record).encode())
    return store, embedder


def test_a_stored_round_with_the_retired_keys_reads_and_writes_back_as_it_was(old_store):
    from validator.records.reader import RoundReader

    store, _ = old_store
    record = RoundReader(store).record("round-000001")
    config = record.config
    assert config.value("emissions", "unreached_pays") is None  # the retired option reads as not recorded
    assert config.value("emissions", "speed_mode") is None
    assert "grade" not in config.as_plain()["lm"] and config.as_plain()["lm"]["factual"] is True
    assert config.__to_plain__()["lm"]["grade"] is True  # the record keeps what it was evaluated with


def test_replay_what_if_review_and_ledger_read_a_store_with_the_retired_keys(old_store):
    from validator.replaying.replay_run import replay_store
    from validator.replaying.whatif_run import run_whatif
    from validator.review import load_store

    store, embedder = old_store
    result = replay_store(store, settings(), embedder, replay_id="retired")
    assert len(result.diffs) == 3 and not result.failures
    assert all(not d.joined and not d.left and not d.emissions for d in result.diffs)
    report = run_whatif(store, settings(), embedder, whatif_id="retired", source="test").to_json()
    assert report["summary"]["failed"] == 0 and report["summary"]["rounds"] == 3
    review = load_store(store)
    assert not review.skipped and len(review.rounds) == 3
    ledger = review.ledger_trajectory()[-1]
    stored = json.loads(store.get(keys.ledger()))
    assert {m: round(w, 12) for m, w in ledger.weights().items()} == {
        m: round(w, 12) for m, w in stored["weights"].items()
    }


def test_evidence_stored_with_the_retired_checks_reads_and_gives_the_same_round(embedder_for_evidence):
    """Evidence written before session 19 holds SelectIT's confidences and the grade's checks: both still read
    (nothing uses them), and a round replayed from it is the one replayed from today's evidence."""
    from consensus.types import Response, Round
    from lm.config import LMConfig
    from lm.fake import FakeChatClient
    from validator.records.lm_evidence import LMEvidence
    from validator.round.stages import LMHandle, run_stages

    embedder = embedder_for_evidence
    texts = ("Canberra is the capital.", "The capital is Canberra.", "Canberra.", "It is Canberra, not Sydney.")
    rnd = Round(
        "old", "What is the capital of Australia?", tuple(Response(f"m{i}", t, 1.0) for i, t in enumerate(texts))
    )
    env = {"VALIDATOR_LM__POLARITY": "false", "VALIDATOR_LM__NARRATIVE": "false"}
    s = load(env)
    first = run_stages(rnd, embedder, s, lm=LMHandle(FakeChatClient(lambda m, **kw: "Canberra"), LMConfig()))
    old = first.evidence.to_json()
    old["selectit_confidences"] = {"1": 0.825}
    old["signals"]["selectit_confidence"] = {"1": 0.825}
    old["grade_checks"] = [{"index": 0, "rating": 4.2, "reason": None, "cached": False}]
    stored = LMEvidence.from_json(json.loads(json.dumps(old)), "old")
    assert stored == LMEvidence.from_json(first.evidence.to_json(), "today")
    again = run_stages(rnd, embedder, s, evidence=stored)
    assert [r.score for r in again.evaluation.results] == [r.score for r in first.evaluation.results]


@pytest.fixture()
def embedder_for_evidence():
    from consensus.fake import FakeEmbedder

    return FakeEmbedder()


def test_a_command_asked_for_a_retired_behaviour_stops_at_start_with_one_line(tmp_path, monkeypatch, capsys):
    from validator.cli.main import main

    monkeypatch.chdir(tmp_path)  # no .env of the checkout
    monkeypatch.setenv("VALIDATOR_LM__GRADE", "true")
    rounds = tmp_path / "rounds.jsonl"
    rounds.write_text('{"round_id": "r", "prompt": "Q?", "responses": []}\n')
    assert main(["replay", str(rounds), "--out", str(tmp_path / "out"), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("validator replay: configuration error: VALIDATOR_LM__GRADE: lm.grade was retired in")
    assert "benchmarks.lm_grades" in err and "\n" not in err and not (tmp_path / "out").exists()
