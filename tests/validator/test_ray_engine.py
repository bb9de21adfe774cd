"""The Ray engine on a real local Ray runtime: the same bytes as in-process, and a worker killed mid-run.

Slow: starting Ray takes seconds. The workers get the fake embedder (and, for
the kill test, a store that journals every write with its process id)
through picklable factories, as a real run gets the configured model: those runs
write the in-process bytes. The two commands with the real model are compared
within the replay's promise (``tests.replay_tolerance``): a worker runs the model
and numpy on the one CPU its task holds, the command's process on every core, and
on some CPUs that moves the model's floats in their last bits.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import threading
import time

import pytest

from storage.codec import dumps
from storage.local import LocalStore
from tests.replay_tolerance import differences, tree_differences
from tests.validator.test_daemon import ANSWERS, ScriptedQuery, make, settings
from validator.replaying.ray_engine import RayExecutor, RayOptions
from validator.replaying.replay_run import replay_file, replay_store
from validator.replaying.whatif_run import run_whatif

pytestmark = pytest.mark.slow
ray = pytest.importorskip("ray")

GROUPS = {text: "mutable" for text in ANSWERS.values()}
ROUNDS = 24


def fake_embedder(_settings):
    from consensus.fake import FakeEmbedder

    return FakeEmbedder(groups=GROUPS)


def slow_fake_embedder(_settings):
    """The fake embedder, 0.15 s per call: a batch of rounds lasts long enough to be killed in the middle."""
    import time as _time

    from consensus.fake import FakeEmbedder

    class Slow(FakeEmbedder):
        def embed(self, texts):
            _time.sleep(0.15)
            return super().embed(texts)

    return Slow(groups=GROUPS)


def journaling_store(uri, _settings):
    """A local store that appends "<pid> <key>" to <uri>.journal for every put: a key written twice shows."""
    import os as _os

    from storage.local import LocalStore as _Local

    class Journal(_Local):
        def put(self, key, data, content_type="application/octet-stream"):
            super().put(key, data, content_type)
            with open(uri + ".journal", "a", encoding="utf-8") as fh:
                fh.write(f"{_os.getpid()} {key}\n")

    return Journal(uri)


@pytest.fixture(scope="module")
def local_ray():
    import cloudpickle

    cloudpickle.register_pickle_by_value(__import__(__name__))  # the factories above travel by value
    from validator.replaying.ray_engine import ray_session

    # a busy 2-core machine (CI runs the whole suite) starts Ray's agents slower than its defaults allow
    slow = {"RAY_agent_register_timeout_ms": "180000", "RAY_worker_register_timeout_seconds": "180"}
    saved = {name: os.environ.get(name) for name in slow}
    os.environ.update({k: os.environ.get(k) or v for k, v in slow.items()})
    try:
        with ray_session(RayOptions(num_cpus=2)):  # the command's own start (retried on a slow raylet)
            yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    root = tmp_path_factory.mktemp("ray") / "daemon"
    clock = iter(1_700_000_000.0 + 60 * i for i in range(ROUNDS + 2))
    daemon = make(LocalStore(root), fake_embedder(None), ScriptedQuery({"dave": "timeout"}), heatmap=True)
    daemon.clock = lambda: next(clock)
    daemon.run(rounds=ROUNDS)
    return root


def copy(template, dest):
    return str(shutil.copytree(template, dest))


def tree(root):
    store = LocalStore(root)
    return {k: store.get(k) for k in store.list()}


def whatif_both(template, tmp_path, new, factory=fake_embedder, store_factory=None, **ray_kwargs):
    a, b = copy(template, tmp_path / "a"), copy(template, tmp_path / "b")
    wid = "w1"
    inproc = run_whatif(LocalStore(a), new, fake_embedder(None), whatif_id=wid, source="s")
    executor = RayExecutor(b, RayOptions(**ray_kwargs), embedder_factory=factory, store_factory=store_factory)
    done: list[int] = []
    on_ray = run_whatif(LocalStore(b), new, whatif_id=wid, source="s", executor=executor, on_done=done.append)
    assert sum(done) == ROUNDS
    return (a, inproc), (b, on_ray)


def test_whatif_on_ray_is_byte_identical_to_in_process(local_ray, template, tmp_path):
    (a, inproc), (b, on_ray) = whatif_both(template, tmp_path, settings(True, quorum=4), max_in_flight=2)
    assert dumps(inproc.to_json()) == dumps(on_ray.to_json())
    assert inproc.to_json()["summary"]["reached_new"] == 0 and len(inproc.rounds) == ROUNDS
    assert tree(a) == tree(b)  # every new record and heatmap, byte for byte; originals unchanged in both


def test_store_replay_on_ray_writes_the_in_process_records_heatmaps_and_diff(local_ray, template, tmp_path):
    from storage import keys

    a, b = copy(template, tmp_path / "a"), copy(template, tmp_path / "b")
    new = settings(True, moving_average_alpha=0.2)  # every round evaluated again (quorum unchanged)
    before = replay_store(LocalStore(a), new, fake_embedder(None), replay_id="r")
    after = replay_store(LocalStore(b), new, replay_id="r", executor=RayExecutor(b, embedder_factory=fake_embedder))
    assert [d.to_json() for d in before.diffs] == [d.to_json() for d in after.diffs]
    ta, tb = tree(a), tree(b)
    assert ta[keys.replay_report("r")] == tb[keys.replay_report("r")]
    assert ta == tb  # every record, heatmap and report, byte for byte
    assert len([k for k in tb if k.endswith("/replays/r/evaluation.json")]) == ROUNDS
    assert len([k for k in tb if k.endswith("/replays/r/heatmap.png")]) == ROUNDS


def test_a_worker_killed_mid_run_is_retried_and_nothing_is_written_twice(local_ray, template, tmp_path):
    b = copy(template, tmp_path / "b")
    journal = b + ".journal"
    new = settings(True, moving_average_alpha=0.2)  # every round evaluated (and embedded: the prompt), none skipped
    executor = RayExecutor(b, embedder_factory=slow_fake_embedder, store_factory=journaling_store)
    outcome: dict = {}

    def drive():
        outcome["result"] = run_whatif(LocalStore(b), new, whatif_id="w1", source="s", executor=executor)

    thread = threading.Thread(target=drive)
    thread.start()
    killed = None
    deadline = time.monotonic() + 120
    while killed is None and time.monotonic() < deadline and thread.is_alive():
        if os.path.exists(journal):
            with open(journal, encoding="utf-8") as fh:
                lines = fh.read().split("\n")
            if len([ln for ln in lines if ln]) >= 2:
                killed = int(lines[0].split()[0])
                os.kill(killed, signal.SIGKILL)  # a Ray worker, in the middle of its batch
        time.sleep(0.05)
    thread.join(timeout=300)
    assert killed is not None and killed != os.getpid()
    result = outcome["result"]
    assert not result.failures and len(result.rounds) == ROUNDS
    with open(journal, encoding="utf-8") as fh:
        entries = [ln.split() for ln in fh.read().split("\n") if ln]
    writes = [key for _pid, key in entries]
    assert len(writes) == len(set(writes)), "a key was written twice"
    assert len(set(writes)) == 2 * ROUNDS  # each round's record and heatmap, once
    pids = {int(pid) for pid, _key in entries}
    assert killed in pids and len(pids) >= 2
    a = copy(template, tmp_path / "a")
    inproc = run_whatif(LocalStore(a), new, fake_embedder(None), whatif_id="w1", source="s")
    assert dumps(inproc.to_json()) == dumps(result.to_json())


def test_cli_whatif_on_ray_re_embeds_with_the_real_model_like_in_process(local_ray, template, tmp_path, capsys):
    """The whole command: the fake embeddings are not the real model's, so every worker loads MiniLM once and
    embeds again; whatif.json and every written byte equal the in-process command's."""
    from validator.cli.main import main

    cfg = tmp_path / "new.toml"
    cfg.write_text("[daemon]\ninterval_s = 0.0\nmoving_average_alpha = 0.2\n")
    a, b = copy(template, tmp_path / "a"), copy(template, tmp_path / "b")
    common = ["--config", str(cfg), "--no-progress", "--round-ids", "round-000001,round-000002,round-000003"]
    assert main(["whatif", a, "--out", str(tmp_path / "out-a"), *common]) == 0
    assert main(["whatif", b, "--out", str(tmp_path / "out-b"), "--engine", "ray", *common]) == 0
    first = json.loads((tmp_path / "out-a" / "whatif.json").read_bytes())
    second = json.loads((tmp_path / "out-b" / "whatif.json").read_bytes())
    assert second.pop("source") == b and first.pop("source") == a
    assert list(differences(first, second, "whatif")) == []
    assert first["summary"]["embeddings_reused"] == 0 and first["summary"]["rounds"] == 3
    assert tree_differences(tree(a), tree(b)) == []


def test_cli_replay_of_a_rounds_file_on_ray_writes_the_in_process_files(local_ray, tmp_path, capsys):
    """``validator replay FILE --engine ray`` with the real model: every file (inputs, records, heatmaps,
    embeddings, summary) equals the in-process command's; a bad line is reported by number in both."""
    from tests.validator.test_one_round import round_lines
    from validator.cli.main import main

    rounds = tmp_path / "rounds.jsonl"
    lines = round_lines(5)
    lines.insert(2, "{not json")
    rounds.write_text("\n".join(lines) + "\n")
    a, b = tmp_path / "a", tmp_path / "b"
    assert main(["replay", str(rounds), "--out", str(a), "--no-progress"]) == 1  # the bad line fails the run
    assert main(["replay", str(rounds), "--out", str(b), "--engine", "ray", "--no-progress"]) == 1
    assert "line 3" in capsys.readouterr().err
    assert tree_differences(tree(a), tree(b)) == [] and len(tree(a)) == 5 * 4 + 1


def test_every_driver_on_ray_writes_the_in_process_bytes(local_ray, tmp_path):
    """A rounds file replayed, then re-evaluated (store replay, what-if) under one id: on Ray and in this process,
    every record and heatmap is the same bytes, and the re-evaluation equals the first evaluation."""
    from storage import keys
    from tests.validator.test_one_round import rounds_of, write_rounds

    new = settings(True)
    source = tmp_path / "rounds.jsonl"
    write_rounds(source, 10)  # two batches
    a, b = LocalStore(tmp_path / "a"), LocalStore(tmp_path / "b")
    assert not replay_file(source, a, new, fake_embedder(None)).failures
    assert not replay_file(
        source, b, new, executor=RayExecutor(str(tmp_path / "b"), embedder_factory=fake_embedder)
    ).failures
    assert tree(tmp_path / "a") == tree(tmp_path / "b")  # inputs, records, heatmaps, embeddings, summary
    replay_store(a, new, fake_embedder(None), replay_id="same")
    run_whatif(
        b, new, whatif_id="same", source="s", executor=RayExecutor(str(tmp_path / "b"), embedder_factory=fake_embedder)
    )
    assert rounds_of(a) == rounds_of(b)
    for i in range(10):
        rid = f"r{i}"
        assert a.get(keys.replay_heatmap(rid, "same")) == a.get(keys.heatmap(rid))
        again = json.loads(a.get(keys.replay_evaluation(rid, "same")))
        assert again.pop("replay") and again.pop("status") == "ok"
        assert again == json.loads(a.get(keys.evaluation(rid)))
