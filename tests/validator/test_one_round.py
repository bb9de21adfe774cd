"""One round, one unit of work: file replay, store replay and what-if, in this process or as a Ray task runs a
batch, write the same record and the same heatmap for the same round (issue 26). The slow twin on a real Ray
runtime is ``tests/validator/test_ray_engine.py::test_every_driver_on_ray_writes_the_in_process_bytes``."""

from __future__ import annotations

import json
import shutil

from consensus.fake import FakeEmbedder
from storage import keys
from storage.local import LocalStore
from tests.validator.test_daemon import ANSWERS
from validator.replaying import Resources, run_batch
from validator.replaying.engine import LocalExecutor
from validator.replaying.replay_run import replay_file, replay_store
from validator.replaying.whatif_run import run_whatif
from validator.settings import load_settings

GROUPS = {text: "mutable" for text in ANSWERS.values()}


def fake() -> FakeEmbedder:
    return FakeEmbedder(groups=GROUPS)


class Batches(LocalExecutor):
    """The engine's executor, each batch run as a Ray task runs it (``run_batch``: no embedding ahead)."""

    def run(self, job, settings, batches, on_done=None):
        for batch in batches:
            yield from run_batch(Resources(self.store, self.embedder, settings), job, batch)


def round_lines(n: int) -> list[str]:
    """The lines of a rounds file of ``n`` rounds, r0, r1, ..., each the four ``ANSWERS`` to one prompt."""
    responses = [{"miner": m, "text": t, "latency_s": 1.0 + j} for j, (m, t) in enumerate(ANSWERS.items())]
    return [
        json.dumps({"round_id": f"r{i}", "prompt": "Is Python's list type mutable?", "responses": responses})
        for i in range(n)
    ]


def write_rounds(path, n: int) -> None:
    path.write_text("".join(line + "\n" for line in round_lines(n)))


def rounds_of(store: LocalStore) -> dict[str, bytes]:
    return {k: store.get(k) for k in store.list(keys.ROUNDS)}


def test_every_driver_writes_the_same_record_and_heatmap_for_the_same_round(tmp_path):
    settings = load_settings(None, env={"VALIDATOR_OUTPUT__HEATMAP": "true"}, dotenv_path=None)
    source = tmp_path / "rounds.jsonl"
    write_rounds(source, 1)
    a = LocalStore(tmp_path / "a")
    assert replay_file(source, a, settings, fake()).evaluated == ["r0"]  # in this process, embedding ahead
    b = LocalStore(shutil.copytree(tmp_path / "a", tmp_path / "b"))
    replay_store(a, settings, fake(), replay_id="same")  # in this process
    run_whatif(b, settings, whatif_id="same", source="s", executor=Batches(b, fake()))  # as a Ray task
    assert rounds_of(a) == rounds_of(b)  # records, heatmaps: the same bytes
    original = json.loads(a.get(keys.evaluation("r0")))
    again = json.loads(a.get(keys.replay_evaluation("r0", "same")))
    assert again.pop("replay")["embeddings_reused"] is True and again.pop("status") == "ok"
    assert again == original  # a rounds file's first evaluation carries no status and no replay marker
    assert a.get(keys.replay_heatmap("r0", "same")) == a.get(keys.heatmap("r0"))
    assert a.get(keys.heatmap("r0")).startswith(b"\x89PNG")
