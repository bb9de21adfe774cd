"""The pool as subnet miners: a hotkey and a loopback port (an axon) per miner, Epistula v2 verified on every request.

Real sr25519 dev keys: the validator's client signs with //Alice, the pool's miners are //Bob, //Charlie and //Dave
and trust the signers they are given; unsigned, stale, replayed, tampered, foreign-receiver and unknown-signer
requests are refused with 401 and the reason, which the client records as ``refused``.
"""

from __future__ import annotations

import dataclasses
import json
import time
import urllib.error
import urllib.request

import pytest

pytest.importorskip("bittensor")

from chain import epistula
from chain.epistula import KnownSigners, sign_request
from chain.sdk_wallet import keypair_from_uri
from minerpool import MinerPool, SimMiner
from tests.validator.miners.support import LIMITS, specs_of
from validator.miners import FailureReason, query_miners
from validator.miners.client import _request_bodies

NAMES = {"a": "Bob", "b": "Charlie", "c": "Dave"}


@pytest.fixture(scope="module")
def keys():
    return {uri: keypair_from_uri(f"//{uri}") for uri in ("Alice", "Bob", "Charlie", "Dave", "Mallory")}


@pytest.fixture(scope="module")
def pool(keys):
    miners = [SimMiner(name, "canned", text=f"Answer {name}: {{prompt}}") for name in NAMES]
    hotkeys = {name: keys[who].ss58_address for name, who in NAMES.items()}
    with MinerPool(
        miners, hotkeys=hotkeys, signers=KnownSigners({keys["Alice"].ss58_address: 1000.0}), axons=True
    ) as p:
        yield p


def post(url: str, body: bytes, headers: dict[str, str]) -> tuple[int, str]:
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json", **headers})
    try:
        with urllib.request.urlopen(request, timeout=5) as resp:
            return resp.status, "ok"
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, json.loads(exc.read())["error"]["message"]


def test_each_miner_has_its_own_port_and_hotkey(pool, keys):
    axons = [pool.axon(n) for n in NAMES]
    assert len(set(axons)) == 3 and all(a.startswith("127.0.0.1:") for a in axons)
    spec = pool.spec("a")
    assert spec.hotkey == keys["Bob"].ss58_address and spec.base_url == f"http://{pool.axon('a')}/v1"


def test_the_validators_signed_requests_are_answered(pool, keys):
    answers = query_miners("What is 2 + 2?", specs_of(pool.specs()), LIMITS, signer=keys["Alice"])
    assert all(a.ok and a.text.startswith("Answer ") for a in answers), answers
    seen = list(pool.requests)[-3:]
    assert {r["refused"] for r in seen} == {None}
    assert {r["epistula"]["Epistula-Signed-For"] for r in seen} == {keys[w].ss58_address for w in NAMES.values()}
    assert {r["epistula"]["Epistula-Signed-By"] for r in seen} == {keys["Alice"].ss58_address}


def test_unsigned_and_unknown_signers_are_refused(pool, keys):
    unsigned = query_miners("What is 2 + 2?", specs_of(pool.specs()), LIMITS)
    assert {(a.failure, a.detail) for a in unsigned} == {(FailureReason.HTTP_ERROR, "HTTP 401")}
    stranger = query_miners("What is 2 + 2?", specs_of(pool.specs()), LIMITS, signer=keys["Mallory"])
    assert {(a.failure, a.detail) for a in stranger} == {(FailureReason.REFUSED, "HTTP 401: unknown signer")}


def test_a_replayed_stale_or_tampered_request_is_refused(pool, keys):
    """The client's own request replayed byte for byte, then hand-made stale, tampered and misdirected ones."""
    spec = specs_of([pool.spec("a")])[0]
    assert query_miners("Replay me", [spec], LIMITS, signer=keys["Alice"])[0].ok
    headers = list(pool.requests)[-1]["epistula"]
    body = _request_bodies("Replay me", [spec], LIMITS, None)[spec.model]
    assert post(spec.chat_url, body, headers) == (401, "replayed request")

    bob = keys["Bob"].ss58_address
    fresh = sign_request(keys["Alice"], body, bob)
    assert post(spec.chat_url, body, fresh) == (200, "ok")
    stale = sign_request(keys["Alice"], body, bob, timestamp_ms=epistula.now_ms() - 9_000)
    status, reason = post(spec.chat_url, body, stale)
    assert status == 401 and reason.startswith("stale request")
    tampered = body.replace(b"Replay me", b"Replay us")
    assert post(spec.chat_url, tampered, sign_request(keys["Alice"], body, bob)) == (401, "bad signature")
    charlie = keys["Charlie"].ss58_address
    assert post(spec.chat_url, body, sign_request(keys["Alice"], body, charlie)) == (401, "signed for another receiver")


def test_a_stale_client_is_recorded_as_refused(pool, keys, monkeypatch):
    """A validator whose clock is 10 s behind: every miner refuses, and the round records why."""
    monkeypatch.setattr(epistula, "now_ms", lambda: round(time.time() * 1000) - 10_000)
    answers = query_miners("Late?", specs_of(pool.specs()), LIMITS, signer=keys["Alice"])
    assert {(a.failure, a.detail) for a in answers} == {(FailureReason.REFUSED, "HTTP 401: stale request")}


def test_verification_is_optional_per_pool(keys):
    miners = [SimMiner("a", "canned", text="Plain.")]
    with MinerPool(
        miners, hotkeys={"a": keys["Bob"].ss58_address}, signers=KnownSigners({}), verify=False, axons=True
    ) as open_pool:
        assert query_miners("Hi?", specs_of(open_pool.specs()), LIMITS)[0].ok
    with MinerPool(miners) as plain:  # no hotkeys: unsigned requests, as every pool before
        assert query_miners("Hi?", specs_of(plain.specs()), dataclasses.replace(LIMITS))[0].ok
    with pytest.raises(ValueError, match="needs signers and a hotkey"):
        MinerPool(miners, hotkeys={"a": keys["Bob"].ss58_address}, verify=True)
    with pytest.raises(ValueError, match="not in the pool"):
        MinerPool(miners, hotkeys={"zz": keys["Bob"].ss58_address})
