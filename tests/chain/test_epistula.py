"""Epistula v2 with real sr25519 keys (//Alice signs, //Bob receives): every refusal, and a loopback HTTP round trip."""

from __future__ import annotations

import asyncio
import hashlib
import json

import pytest

pytest.importorskip("bittensor_core")

from chain import epistula
from chain.epistula import EpistulaVerifier, KnownSigners, ReplayCache, SignatureRefused, sign_request
from chain.sdk_wallet import keypair_from_uri, verify_signature
from chain.types import Neuron

NOW = 1_800_000_000.0  # a fixed clock (unix seconds)
BODY = b'{"model": "m", "messages": [{"role": "user", "content": "2+2?"}]}'


@pytest.fixture(scope="module")
def keys():
    return {name: keypair_from_uri(f"//{name}") for name in ("Alice", "Bob", "Charlie", "Mallory")}


@pytest.fixture
def verifier(keys):
    signers = KnownSigners({keys["Alice"].ss58_address: 1000.0, keys["Charlie"].ss58_address: 0.0})
    return EpistulaVerifier(receiver=keys["Bob"].ss58_address, signers=signers, clock=lambda: NOW)


def signed(keys, body=BODY, *, by="Alice", to="Bob", at=NOW, **kwargs):
    return sign_request(keys[by], body, keys[to].ss58_address, timestamp_ms=round(at * 1000), **kwargs)


def test_the_headers_and_the_signed_message(keys):
    headers = signed(keys, uuid="5f0c7e5e-0000-4000-8000-000000000000")
    assert headers == {
        "Epistula-Version": "2",
        "Epistula-Timestamp": str(round(NOW * 1000)),
        "Epistula-Uuid": "5f0c7e5e-0000-4000-8000-000000000000",
        "Epistula-Signed-By": keys["Alice"].ss58_address,
        "Epistula-Signed-For": keys["Bob"].ss58_address,
        "Epistula-Request-Signature": headers[epistula.H_SIGNATURE],
    }
    expected = (
        f"{hashlib.sha256(BODY).hexdigest()}.5f0c7e5e-0000-4000-8000-000000000000."
        f"{round(NOW * 1000)}.{keys['Bob'].ss58_address}"
    ).encode()
    assert epistula.message(BODY, headers["Epistula-Uuid"], round(NOW * 1000), keys["Bob"].ss58_address) == expected
    signature = bytes.fromhex(headers["Epistula-Request-Signature"].removeprefix("0x"))
    assert len(signature) == 64 and verify_signature(expected, signature, keys["Alice"].ss58_address)
    assert signed(keys)["Epistula-Uuid"] != signed(keys)["Epistula-Uuid"]  # a fresh uuid per request


def test_a_signed_request_is_accepted_once(keys, verifier):
    headers = signed(keys)
    accepted = verifier.accept(headers, BODY)
    assert accepted.signed_by == keys["Alice"].ss58_address and accepted.timestamp_ms == round(NOW * 1000)
    assert verifier.check(headers, BODY) == "replayed request"
    assert verifier.check(signed(keys), BODY) is None  # a new uuid is a new request


def test_header_names_are_case_insensitive(keys, verifier):
    assert verifier.check({k.lower(): v for k, v in signed(keys).items()}, BODY) is None


@pytest.mark.parametrize(
    "change, reason",
    [
        (lambda h, k: {}, "unsigned request"),
        (lambda h, k: {**h, "Epistula-Version": "1"}, "unsupported Epistula version '1' (expected 2)"),
        (lambda h, k: {n: v for n, v in h.items() if n != "Epistula-Uuid"}, "missing header Epistula-Uuid"),
        (lambda h, k: {**h, "Epistula-Timestamp": "soon"}, "malformed timestamp"),
        (lambda h, k: {**h, "Epistula-Signed-For": k["Charlie"].ss58_address}, "signed for another receiver"),
        (lambda h, k: {**h, "Epistula-Request-Signature": "0xzz"}, "malformed signature"),
        (lambda h, k: {**h, "Epistula-Request-Signature": "0x1234"}, "bad signature"),
        # Mallory signs, claiming to be Alice
        (
            lambda h, k: {
                **h,
                "Epistula-Request-Signature": sign_request(
                    k["Mallory"],
                    BODY,
                    k["Bob"].ss58_address,
                    timestamp_ms=int(h["Epistula-Timestamp"]),
                    uuid=h["Epistula-Uuid"],
                )[epistula.H_SIGNATURE],
            },
            "bad signature",
        ),
    ],
)
def test_refusals(keys, verifier, change, reason):
    assert verifier.check(change(signed(keys), keys), BODY) == reason


def test_a_tampered_body_is_refused(keys, verifier):
    assert verifier.check(signed(keys), BODY.replace(b"2+2", b"3+3")) == "bad signature"


def test_unknown_and_unstaked_signers_are_refused(keys, verifier):
    assert verifier.check(signed(keys, by="Mallory"), BODY) == "unknown signer"
    assert verifier.check(signed(keys, by="Charlie"), BODY) == "signer has no stake"
    strict = KnownSigners({keys["Alice"].ss58_address: 5.0}, min_stake=10.0)
    assert strict.refusal(keys["Alice"].ss58_address) == "signer's stake is below the minimum"


@pytest.mark.parametrize(
    "age_s, reason",
    [
        (7.9, None),
        (8.1, "stale request (8100 ms old; at most 8000 ms)"),
        (-7.9, None),
        (-8.1, "timestamp 8100 ms in the future"),
    ],
)
def test_the_freshness_window(keys, verifier, age_s, reason):
    assert verifier.check(signed(keys, at=NOW - age_s), BODY) == reason


def test_a_replay_after_the_window_is_stale_and_the_cache_forgets_it(keys):
    clock = [NOW]
    v = EpistulaVerifier(
        keys["Bob"].ss58_address, KnownSigners({keys["Alice"].ss58_address: 1.0}), clock=lambda: clock[0]
    )
    headers = signed(keys)
    assert v.check(headers, BODY) is None and len(v.replay) == 1
    clock[0] = NOW + 9
    assert v.check(headers, BODY).startswith("stale request")
    assert v.check(signed(keys, at=clock[0]), BODY) is None and len(v.replay) == 1  # the old entry was purged


def test_a_full_replay_cache_refuses_rather_than_forgets(keys):
    clock = [NOW]
    v = EpistulaVerifier(
        keys["Bob"].ss58_address,
        KnownSigners({keys["Alice"].ss58_address: 1.0}),
        replay=ReplayCache(capacity=2),
        clock=lambda: clock[0],
    )
    first, second, third = signed(keys), signed(keys), signed(keys)
    assert v.check(first, BODY) is None and v.check(second, BODY) is None
    assert v.check(third, BODY) == "too many requests in the replay window"
    assert v.check(first, BODY) == "replayed request"
    clock[0] = NOW + 8.5
    assert v.check(signed(keys, at=clock[0]), BODY) is None


def test_forged_requests_do_not_fill_the_replay_cache(keys, verifier):
    headers = signed(keys)
    assert verifier.check(headers, b"tampered") == "bad signature"
    assert len(verifier.replay) == 0 and verifier.check(headers, BODY) is None


def test_known_signers_from_a_snapshot():
    neurons = [Neuron(0, "v", "c", None, True, 100.0, 0), Neuron(1, "m", "c", "1.2.3.4:5", False, 0.5, 0)]
    assert KnownSigners.from_neurons(neurons).stakes == {"v": 100.0, "m": 0.5}
    assert KnownSigners.from_neurons(neurons, validators_only=True).stakes == {"v": 100.0}


def test_sign_request_needs_a_receiver(keys):
    with pytest.raises(ValueError):
        sign_request(keys["Alice"], BODY, "")
    with pytest.raises(SignatureRefused):
        EpistulaVerifier("x", KnownSigners({})).accept({}, b"")


def test_signed_requests_over_loopback_http(keys):
    """The client signs with //Alice, an aiohttp server verifies as //Bob: accepted, then replayed, stale, tampered."""
    from aiohttp import ClientSession, web

    verifier = EpistulaVerifier(keys["Bob"].ss58_address, KnownSigners({keys["Alice"].ss58_address: 1.0}))

    async def chat(request: web.Request) -> web.Response:
        reason = verifier.check(request.headers, await request.read())
        if reason is not None:
            return web.json_response({"error": reason}, status=401)
        return web.json_response({"choices": [{"message": {"content": "4"}}]})

    async def run() -> list[tuple[int, str]]:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", chat)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]
        url = f"http://127.0.0.1:{port}/v1/chat/completions"
        outcomes = []
        try:
            async with ClientSession() as session:

                async def post(body: bytes, headers: dict[str, str]) -> None:
                    async with session.post(
                        url, data=body, headers={"Content-Type": "application/json", **headers}
                    ) as resp:
                        payload = json.loads(await resp.read())
                        outcomes.append((resp.status, payload.get("error", "ok")))

                fresh = sign_request(keys["Alice"], BODY, keys["Bob"].ss58_address)
                await post(BODY, fresh)
                await post(BODY, fresh)  # replayed
                await post(
                    BODY,
                    sign_request(keys["Alice"], BODY, keys["Bob"].ss58_address, timestamp_ms=epistula.now_ms() - 9_000),
                )  # stale
                await post(BODY + b" ", sign_request(keys["Alice"], BODY, keys["Bob"].ss58_address))  # tampered
                await post(BODY, {})  # unsigned
                await post(BODY, sign_request(keys["Alice"], BODY, keys["Charlie"].ss58_address))
        finally:
            await runner.cleanup()
        return outcomes

    outcomes = asyncio.run(run())
    assert [status for status, _ in outcomes] == [200, 401, 401, 401, 401, 401]
    assert [reason for _, reason in outcomes][1:] == [
        "replayed request",
        outcomes[2][1],
        "bad signature",
        "unsigned request",
        "signed for another receiver",
    ]
    assert outcomes[2][1].startswith("stale request")
