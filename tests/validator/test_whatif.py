"""What-if in-process: the fold, the report, the CLI, idempotent writes, originals never written."""

from __future__ import annotations

import json

import pytest

from consensus.fake import FakeEmbedder
from storage import keys
from storage.local import LocalStore
from storage.memory import MemoryStore
from tests.validator.test_daemon import ANSWERS, ScriptedQuery, make, settings
from validator.cli.main import main
from validator.records.writer import WriteConflict, put_once
from validator.replaying.replay_run import RoundSelection
from validator.replaying.whatif_run import run_whatif, whatif_id_for

GROUPS = {text: "mutable" for text in ANSWERS.values()}


def fake():
    return FakeEmbedder(groups=GROUPS)


@pytest.fixture(scope="module")
def daemon_template(tmp_path_factory):
    """A daemon's store on disk: 4 rounds, dave times out in every one (3 usable answers)."""
    root = tmp_path_factory.mktemp("whatif") / "daemon"
    store = LocalStore(root)
    clock = iter(1_700_000_000.0 + 100 * i for i in range(10))
    daemon = make(store, fake(), ScriptedQuery({"dave": "timeout"}))
    daemon.clock = lambda: next(clock)
    daemon.run(rounds=4)
    return root


@pytest.fixture()
def daemon_dir(daemon_template, tmp_path):
    """A fresh copy of the daemon's store for one test."""
    import shutil

    return shutil.copytree(daemon_template, tmp_path / "daemon")


def snapshot(store):
    return {k: store.get(k) for k in store.list()}


def whatif(store, new_settings, selection=RoundSelection(), whatif_id=None):
    wid = whatif_id or whatif_id_for(new_settings, selection)
    return run_whatif(store, new_settings, fake(), whatif_id=wid, selection=selection, source="test")


def test_same_config_changes_nothing_and_the_old_fold_is_the_daemons_ledger(daemon_dir):
    store = LocalStore(daemon_dir)
    before = snapshot(store)
    report = whatif(store, settings()).to_json()
    assert report["summary"]["rounds"] == 4 and report["summary"]["failed"] == 0
    assert report["summary"]["reached_old"] == report["summary"]["reached_new"] == 4
    assert report["summary"]["embeddings_reused"] == 4 and report["config_changes"] == []
    assert all(not r["members_gained"] and not r["members_lost"] for r in report["rounds"])
    ledger = json.loads(store.get(keys.ledger()))
    for name, m in report["miners"].items():
        assert m["weight_old"] == m["weight_new"] == ledger["weights"][name]
        assert m["emissions_old"] == m["emissions_new"] == ledger["miners"][name]["emissions"]
        assert m["rank_change"] == 0
    for key, data in before.items():  # the originals (and the ledger) are never written
        assert store.get(key) == data
    new_keys = set(store.list()) - set(before)
    assert {keys.replay_evaluation(f"round-00000{i}", report["whatif_id"]) for i in range(1, 5)} <= new_keys
    assert all("/replays/" in k for k in new_keys)


def test_a_quorum_above_the_usable_answers_pays_nobody(daemon_dir):
    store = LocalStore(daemon_dir)
    report = whatif(store, settings(quorum=4)).to_json()
    s = report["summary"]
    assert s["reached_old"] == 4 and s["reached_new"] == 0 and s["membership_changed"] == 4
    assert {"setting": "daemon.quorum", "old": 3, "new": 4} in report["config_changes"]
    for name in ("alice", "bob", "carol"):
        m = report["miners"][name]
        assert m["emissions_old"] > 0 and m["emissions_new"] == 0
        assert m["weight_old"] > 0 and m["weight_new"] == 0.0
    assert all(set(r["members_lost"]) == {"alice", "bob", "carol"} for r in report["rounds"])


def test_selection_by_round_id_and_time(daemon_dir):
    store = LocalStore(daemon_dir)
    by_id = whatif(store, settings(), RoundSelection(round_ids=frozenset({"round-000002"}))).to_json()
    assert [r["round_id"] for r in by_id["rounds"]] == ["round-000002"]
    by_time = whatif(store, settings(), RoundSelection(since="2023-11-14T22:15:01Z")).to_json()
    assert [r["round_id"] for r in by_time["rounds"]] == ["round-000003", "round-000004"]
    assert by_time["summary"]["skipped"] == 2


def test_running_twice_is_idempotent_and_byte_identical(daemon_dir):
    from storage.codec import dumps

    store = LocalStore(daemon_dir)
    first = dumps(whatif(store, settings(quorum=4)).to_json())
    written = snapshot(store)
    second = dumps(whatif(store, settings(quorum=4)).to_json())
    assert first == second and snapshot(store) == written


def test_put_once_writes_absent_keys_skips_same_bytes_and_refuses_others():
    store = MemoryStore()
    assert put_once(store, "a/b", b"x", "text/plain") is True
    assert put_once(store, "a/b", b"x", "text/plain") is False
    with pytest.raises(WriteConflict, match="a/b exists"):
        put_once(store, "a/b", b"y", "text/plain")
    assert store.get("a/b") == b"x"


def test_a_conflicting_replay_record_fails_that_round_only(daemon_dir):
    store = LocalStore(daemon_dir)
    wid = "clash"
    store.put(keys.replay_evaluation("round-000001", wid), b"{}")
    result = whatif(store, settings(), whatif_id=wid)
    assert [f.round_id for f in result.failures] == ["round-000001"]
    assert "never overwrites" in result.failures[0].error and len(result.rounds) == 3
    assert store.get(keys.replay_evaluation("round-000001", wid)) == b"{}"


def test_unreadable_input_is_reported_by_key_and_the_rest_goes_on(daemon_dir):
    store = LocalStore(daemon_dir)
    store.put("rounds/broken/input.json", b"{not json")
    result = whatif(store, settings())
    assert result.failures[0].key == "rounds/broken/input.json" and len(result.rounds) == 4


def test_cli_writes_whatif_json_and_prints_the_table(daemon_dir, tmp_path, capsys):
    cfg = tmp_path / "new.toml"
    cfg.write_text("[daemon]\nquorum = 4\n")
    out = tmp_path / "out"
    args = ["whatif", str(daemon_dir), "--config", str(cfg), "--out", str(out), "--no-progress"]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "consensus reached 4 -> 0" in printed and "daemon.quorum: 3 -> 4" in printed and "alice" in printed
    first = (out / "whatif.json").read_bytes()
    report = json.loads(first)
    assert report["schema"] == "consensus-validator/whatif/1" and report["miners"]["alice"]["emissions_new"] == 0
    assert main(args) == 0 and (out / "whatif.json").read_bytes() == first


def test_cli_refuses_a_directory_without_rounds_and_a_bad_time(tmp_path, daemon_dir):
    cfg = tmp_path / "new.toml"
    cfg.write_text("")
    assert main(["whatif", str(tmp_path / "nothing"), "--config", str(cfg)]) == 2
    assert main(["whatif", str(daemon_dir), "--config", str(cfg), "--since", "yesterday"]) == 2


def test_works_on_a_file_replays_output_and_embeds_when_embeddings_are_missing(tmp_path, capsys):
    rounds = tmp_path / "rounds.jsonl"
    lines = [
        {
            "round_id": f"r{i}",
            "prompt": "Is Python's list type mutable?",
            "responses": [{"miner": m, "text": t, "latency_s": 1.0 + j} for j, (m, t) in enumerate(ANSWERS.items())],
        }
        for i in range(3)
    ]
    rounds.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = tmp_path / "replayed"
    assert main(["replay", str(rounds), "--out", str(out), "--no-progress"]) == 0
    store = LocalStore(out)
    (out / keys.embeddings("r1")).unlink()
    # the embedder the replay command used (the fast suite's), so the stored vectors are reusable
    report = run_whatif(store, settings(), FakeEmbedder(), whatif_id="w", source="test").to_json()
    assert [r["round_id"] for r in report["rounds"]] == ["r0", "r1", "r2"]
    assert [r["embeddings_reused"] for r in report["rounds"]] == [True, False, True]
    assert store.exists(keys.replay_embeddings("r1", report["whatif_id"]))


def test_report_shows_the_whatif_page_with_its_plot(daemon_dir, tmp_path, capsys):
    cfg = tmp_path / "new.toml"
    cfg.write_text("[daemon]\nquorum = 4\n")
    out = tmp_path / "out"
    assert main(["whatif", str(daemon_dir), "--config", str(cfg), "--out", str(out), "--no-progress"]) == 0
    site = tmp_path / "site"
    assert (
        main(["report", str(daemon_dir), "--whatif", str(out / "whatif.json"), "--out", str(site), "--no-progress"])
        == 0
    )
    page = (site / "whatif.html").read_text(encoding="utf-8")
    assert "daemon.quorum" in page and 'data-miner="alice"' in page and "round-000004" in page
    assert (site / "whatif.png").read_bytes().startswith(b"\x89PNG")
    bogus = tmp_path / "bogus.json"
    bogus.write_text("{}")
    assert main(["report", str(daemon_dir), "--whatif", str(bogus), "--out", str(site), "--no-progress"]) == 2


HASH_SEED_SCRIPT = """
import sys
from storage.local import LocalStore
from tests.validator.test_daemon import settings
from tests.validator.test_whatif import fake
from validator.replaying import Job, Resources, run_batch

store = LocalStore(sys.argv[1])
new = settings(moving_average_alpha=0.2)
run_batch(Resources(store, fake(), new), Job.replay("w"), ["rounds/round-000001/input.json"])
"""


@pytest.mark.slow  # two fresh interpreters (about 10 s): CI runs it, the fast suite does not
def test_a_round_re_evaluated_in_processes_with_other_hash_seeds_gives_the_same_bytes(daemon_template, tmp_path):
    """Ray workers are other processes, each with its own hash seed: no result may depend on a set's order."""
    import os
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    outputs = []
    for seed in ("1", "2"):
        root = shutil.copytree(daemon_template, tmp_path / seed)
        env = {k: v for k, v in os.environ.items() if not k.startswith("VALIDATOR_")}
        env.update(PYTHONHASHSEED=seed, PYTHONPATH=str(repo))
        subprocess.run([sys.executable, "-c", HASH_SEED_SCRIPT, str(root)], check=True, env=env, cwd=repo, timeout=300)
        outputs.append(LocalStore(root).get(keys.replay_evaluation("round-000001", "w")))
    assert outputs[0] == outputs[1]
    assert json.loads(outputs[0])["consensus"]["reached"] is True


def test_replay_engine_ray_refuses_the_lm_for_a_file_and_a_store(tmp_path, daemon_dir, capsys):
    rounds = tmp_path / "rounds.jsonl"
    rounds.write_text("")
    for source in (rounds, daemon_dir):
        assert main(["replay", str(source), "--engine", "ray", "--lm", "--no-progress"]) == 2
        assert "without the LM" in capsys.readouterr().err


def test_a_rounds_file_by_batches_without_embedding_ahead_writes_the_files_of_the_in_process_replay(tmp_path):
    """``replay FILE``'s rounds as a Ray task runs them (``run_batch``: no embedding ahead), here in this
    process: every stored byte (inputs, records, heatmaps, embeddings, summary) as the in-process engine writes
    them."""
    from tests.validator.test_one_round import Batches, round_lines
    from validator.replaying import Job
    from validator.replaying.replay_run import replay_file
    from validator.settings import load_settings

    rounds = tmp_path / "rounds.jsonl"
    lines = round_lines(9)
    lines.insert(3, "{not json")
    lines.insert(7, lines[1])  # a duplicate round id
    rounds.write_text("\n".join(lines) + "\n")
    one, two = LocalStore(tmp_path / "one"), LocalStore(tmp_path / "two")
    # heatmaps come from the same run_stages in both paths; the slow Ray test compares them too
    plain = load_settings(None, env={"VALIDATOR_OUTPUT__HEATMAP": "false"}, dotenv_path=None)
    expected = replay_file(rounds, one, plain, fake())
    got = replay_file(rounds, two, plain, executor=Batches(two, fake()))
    assert [f.line for f in got.failures] == [4, 8] and got.evaluated == expected.evaluated
    assert snapshot(two) == snapshot(one) and len(snapshot(one)) == 9 * 3 + 1  # two batches of the engine
    assert Job.first().target.replay_id is None


def test_task_settings_carry_no_secret_and_record_the_same_config():
    from validator.replaying import without_secrets
    from validator.settings import load_settings

    full = load_settings(
        None,
        env={
            "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE",
            "AWS_SECRET_ACCESS_KEY": "s3cr3t-value",
            "API_TOKEN": "tok-123",
            "VALIDATOR_S3__ENDPOINT_URL": "http://127.0.0.1:9",
        },
        dotenv_path=None,
    )
    bare = without_secrets(full)
    import pickle

    blob = pickle.dumps(bare)
    assert b"s3cr3t-value" not in blob and b"AKIDEXAMPLE" not in blob and b"tok-123" not in blob
    assert bare.s3.endpoint_url == "http://127.0.0.1:9" and bare.as_dict() == full.as_dict()


class CountingEmbedder(FakeEmbedder):
    """The test's fake model, counting the texts it is asked to embed."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.texts: list[str] = []

    def embed(self, texts):
        self.texts.extend(texts)
        return super().embed(texts)


def test_stored_embeddings_carry_the_prompt_so_a_whatif_embeds_nothing(daemon_dir):
    from storage.embeddings import decode_embeddings

    store = LocalStore(daemon_dir)
    inputs = [k for k in store.list("rounds/") if k.endswith("/input.json") and k.count("/") == 2]
    rid = json.loads(store.get(inputs[0]))["round_id"]
    stored = decode_embeddings(store.get(keys.embeddings(rid)))
    assert stored.edges is not None and stored.edges.shape == (1, stored.vectors.shape[1])  # the prompt
    counting = CountingEmbedder(groups=GROUPS)
    report = run_whatif(store, settings(quorum=4), counting, whatif_id="no-model", source="test")
    assert counting.texts == [] and report.to_json()["rounds"]
