"""The report's weights page: the chain mode's stored submissions and plans, escaped, linked from the index."""

from __future__ import annotations

import json

from chain.types import Submission, SubmissionPlan
from storage import MemoryStore, keys
from tests.validator.records import make_record
from validator.daemon.chain.attempts import WeightsAttempt, store_attempt
from validator.report import build_report

HOSTILE = "<script>window.__pwned='hotkey'</script>"


def attempt(n: int, **more) -> WeightsAttempt:
    base = dict(
        attempt_id=f"2026120{n}T000000.000000Z-b{100 * n}",
        attempted_at=f"2026-12-0{n}T00:00:00+00:00",
        netuid=7,
        block=100 * n,
        mode="submit",
        kind="ledger",
        uids=(1, 2),
        hotkeys=("5Alpha", HOSTILE),
        shares=(0.75, 0.25),
        u16=(65535, 21845),
        after_round="r-1",
    )
    return WeightsAttempt(**{**base, **more})


def submission(block: int, **more) -> Submission:
    base = dict(
        netuid=7,
        block=block,
        signer="5Validator",
        method="set",
        uids=(1, 2),
        weights_u16=(65535, 21845),
        version_key=0,
        ok=True,
        extrinsic=f"{block}-0001",
    )
    return Submission(**{**base, **more})


def test_submissions_and_plans_are_listed_newest_first(tmp_path):
    store = MemoryStore()
    store.put(keys.evaluation("r-1"), json.dumps(make_record("r-1", [("5Alpha", True, 10)]).to_json()).encode())
    store_attempt(store, attempt(1, submission=submission(101)))
    keep_alive = dict(kind="keep-alive", uids=(0,), hotkeys=("5Validator",), shares=(1.0,), u16=(65535,))
    reason = "the largest weight is 1.0000 of the total; the subnet caps one uid at 0.3333"
    store_attempt(
        store,
        attempt(1, attempt_id="20261201T120000.000000Z-b150", submission=submission(151), reason=reason, **keep_alive),
    )
    store_attempt(
        store,
        attempt(
            2, submission=submission(None, ok=False, extrinsic=None, error="<b>timeout</b>", error_kind="transient")
        ),
    )
    plan = SubmissionPlan(
        netuid=7,
        block=300,
        signer="5Validator",
        method="commit",
        uids=(1, 2),
        weights_u16=(65535, 21845),
        version_key=0,
        fee_tao=0.0,
        reveal_round=42,
    )
    store_attempt(store, attempt(3, mode="plan", plan=plan))
    build_report(store, tmp_path / "site")
    page = (tmp_path / "site" / "weights.html").read_text()
    assert "4 attempt(s), 2 landed" in page and f"keep-alive: {reason}" in page  # why the self-weight
    assert page.index("planned") < page.index("no answer") < page.index("101-0001")  # newest first
    assert HOSTILE not in page and "&lt;script&gt;" in page and "&lt;b&gt;timeout&lt;/b&gt;" in page
    index = (tmp_path / "site" / "index.html").read_text()
    assert 'href="weights.html"' in index and "the latest planned at block 300" in index


def test_no_chain_mode_no_weights_page(tmp_path):
    store = MemoryStore()
    store.put(keys.evaluation("r-1"), json.dumps(make_record("r-1", [("a", True, 10)]).to_json()).encode())
    build_report(store, tmp_path / "site")
    assert not (tmp_path / "site" / "weights.html").exists()
    assert "weights.html" not in (tmp_path / "site" / "index.html").read_text()
