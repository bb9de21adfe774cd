"""The daemon on a real S3 server (SeaweedFS) that goes down mid-run and at a restart, then comes back."""

from __future__ import annotations

import json
import logging
import urllib.request

import pytest

from storage import keys
from storage.s3 import S3Store
from storage.spool import SpoolingStore
from tests.validator.test_daemon import PROMPTS, ScriptedQuery, settings
from validator.daemon.daemon import Daemon

pytestmark = pytest.mark.slow


def daemon(store, embedder, state):
    return Daemon(
        store=store,
        embedder=embedder,
        settings=settings(heatmap=True),
        prompts=PROMPTS,
        query=ScriptedQuery(),
        presign=getattr(store, "presign", None),
        state_dir=state,
    )


def test_daemon_keeps_running_through_an_outage_and_a_restart(
    s3_instance, bucket_name, tmp_path, real_embedder, caplog
):
    caplog.set_level(logging.INFO)
    s3_instance.start()
    endpoint = s3_instance.endpoint
    state = tmp_path / "state"

    def store():
        primary = S3Store(bucket_name, "net-1", settings=endpoint.settings(), create_bucket=True)
        return SpoolingStore(primary, tmp_path / "spool", retry_after_s=0)

    first = store()
    first.primary.ensure_bucket()  # what `validator daemon` does at start when S3 is up
    d = daemon(first, real_embedder, state)
    d.run(rounds=1)
    record = json.loads(first.get(keys.evaluation("round-000001")))
    # the presigned heatmap URL works for review
    with urllib.request.urlopen(record["heatmap"]["url"], timeout=10) as resp:
        assert resp.read()[:8] == b"\x89PNG\r\n\x1a\n"

    s3_instance.kill()  # mid-run
    reports = d.run(rounds=2)
    assert [r.status for r in reports] == ["ok", "ok"] and first.pending() > 0
    first.close()

    # a restart while S3 is still down resumes from the local ledger copy
    second = store()
    d2 = daemon(second, real_embedder, state)
    assert d2.ledger.last_sequence == 3
    d2.run(rounds=1)
    spooled = second.pending()

    s3_instance.start()  # back, same data
    d2.run(rounds=1)  # the next put uploads the backlog first, in order
    assert second.pending() == 0 and spooled > 0
    second.close()

    check = S3Store(bucket_name, "net-1", settings=endpoint.settings())
    ledger = json.loads(check.get(keys.ledger()))
    assert ledger["last_sequence"] == 5 and ledger["rounds"] == 5
    totals = [json.loads(check.get(keys.evaluation(f"round-{i:06d}")))["emissions"]["total"] for i in range(1, 6)]
    assert ledger["emitted"] == sum(totals)
    for i in range(1, 6):
        for key in (keys.round_input, keys.heatmap, keys.embeddings):
            assert check.exists(key(f"round-{i:06d}"))
    assert check.content_type(keys.heatmap("round-000004")) == "image/png"
    check.close()
    assert endpoint.secret_key not in caplog.text
