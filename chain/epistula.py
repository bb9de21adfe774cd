"""Epistula v2: requests signed by the validator's hotkey, and the miner-side check of them.

The wire format subnet validators use (SN1, Targon, the subnet template's
successors) on top of plain HTTP::

    Epistula-Version: 2
    Epistula-Timestamp: <unix time in milliseconds>
    Epistula-Uuid: <a fresh uuid4 per request>
    Epistula-Signed-By: <the sender's hotkey, ss58>
    Epistula-Signed-For: <the receiver's hotkey, ss58>
    Epistula-Request-Signature: 0x<sr25519 signature, 64 bytes hex>

over the message ``f"{sha256(body).hexdigest()}.{uuid}.{timestamp}.{signed_for}"``
(utf-8). The body is the exact bytes sent: the receiver hashes what it read.
Some peers add ``Epistula-Secret-Signature-0..2`` (signatures over
``"<timestamp // 10 s ± 1>.<receiver>"``); nothing here needs them, so they are
neither sent nor required.

A receiver refuses (HTTP 401, with the reason) a request that is unsigned, of
another version, stale or from the future (more than ``max_age_ms``, 8 s, away
from its clock), signed for another receiver, from a signer it does not know or
that has no stake, whose signature does not verify (a tampered body lands
here), or whose (signer, uuid) it has already accepted inside the window
(replayed). The replay cache only remembers requests whose signature verified,
and forgets each one when it would be refused as stale anyway, so it stays
small; if it is full of live entries it refuses rather than forgets (a replay
must never get through).

Signing takes any object with ``ss58_address`` and ``sign(bytes) -> bytes``
(the SDK's keypair: ``chain.sdk_wallet.keypair_from_uri("//Alice")`` or a wallet's
hotkey). Verifying sr25519 needs the SDK's crypto, loaded from the edge module
on first use; ``sign_request``, ``message`` and the checks before the
signature are pure.
"""

from __future__ import annotations

import hashlib
import heapq
import threading
import time
import uuid as uuidlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

VERSION = "2"
H_VERSION = "Epistula-Version"
H_TIMESTAMP = "Epistula-Timestamp"
H_UUID = "Epistula-Uuid"
H_SIGNED_BY = "Epistula-Signed-By"
H_SIGNED_FOR = "Epistula-Signed-For"
H_SIGNATURE = "Epistula-Request-Signature"
HEADERS = (H_VERSION, H_TIMESTAMP, H_UUID, H_SIGNED_BY, H_SIGNED_FOR, H_SIGNATURE)

MAX_AGE_MS = 8_000  # what peer miners accept: about 8 s either way


class Signer(Protocol):
    """A hotkey that can sign: the SDK's keypair has this shape."""

    @property
    def ss58_address(self) -> str: ...

    def sign(self, message: bytes) -> bytes: ...


class SignatureRefused(PermissionError):
    """A signed request was refused; ``reason`` is safe to send back to the (unauthenticated) caller."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def message(body: bytes, uuid: str, timestamp_ms: int, signed_for: str) -> bytes:
    """The bytes an Epistula v2 request signature covers."""
    return f"{hashlib.sha256(body).hexdigest()}.{uuid}.{timestamp_ms}.{signed_for}".encode()


def now_ms() -> int:
    return round(time.time() * 1000)


def sign_request(
    signer: Signer, body: bytes, signed_for: str, *, timestamp_ms: int | None = None, uuid: str | None = None
) -> dict[str, str]:
    """The Epistula v2 headers for sending ``body`` (the exact bytes) to the hotkey ``signed_for``."""
    if not signed_for:
        raise ValueError("an Epistula request is signed for one receiver (its hotkey)")
    timestamp = now_ms() if timestamp_ms is None else int(timestamp_ms)
    request_id = str(uuidlib.uuid4()) if uuid is None else uuid
    signature = bytes(signer.sign(message(body, request_id, timestamp, signed_for)))
    return {
        H_VERSION: VERSION,
        H_TIMESTAMP: str(timestamp),
        H_UUID: request_id,
        H_SIGNED_BY: signer.ss58_address,
        H_SIGNED_FOR: signed_for,
        H_SIGNATURE: "0x" + signature.hex(),
    }


# --- the receiving side ---------------------------------------------------------------------------------------


class SignerPolicy(Protocol):
    """Who may send: ``refusal(hotkey)`` is None for an accepted signer, else the reason it is refused."""

    def refusal(self, hotkey: str) -> str | None: ...


@dataclass(frozen=True)
class KnownSigners:
    """Signers accepted by stake: a hotkey must be listed and hold more than ``min_stake`` (and at least 0)."""

    stakes: Mapping[str, float]  # hotkey -> stake (a metagraph's neurons, or the validators a pool trusts)
    min_stake: float = 0.0

    def refusal(self, hotkey: str) -> str | None:
        stake = self.stakes.get(hotkey)
        if stake is None:
            return "unknown signer"
        if not stake > max(self.min_stake, 0.0):
            return "signer has no stake" if stake <= 0 else "signer's stake is below the minimum"
        return None

    @classmethod
    def from_neurons(cls, neurons, *, min_stake: float = 0.0, validators_only: bool = False) -> KnownSigners:
        """From a snapshot's neurons (``MetagraphSnapshot.neurons``): every registered hotkey with its stake."""
        return cls({n.hotkey: n.stake for n in neurons if n.validator_permit or not validators_only}, min_stake)


class ReplayCache:
    """The (signer, uuid) pairs accepted inside the window, each kept until it would be refused as stale anyway.

    Bounded by ``capacity``; when it is full of live entries ``remember`` says no
    (the request is refused) rather than forgetting one that could then be replayed.
    """

    def __init__(self, capacity: int = 100_000) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self._expiry: dict[tuple[str, str], int] = {}
        self._heap: list[tuple[int, tuple[str, str]]] = []
        self._lock = threading.Lock()  # the pool's server and a test may call from different threads

    def __len__(self) -> int:
        return len(self._expiry)

    def _purge(self, now: int) -> None:
        while self._heap and self._heap[0][0] < now:
            expiry, key = heapq.heappop(self._heap)
            if self._expiry.get(key) == expiry:
                del self._expiry[key]

    def remember(self, signer: str, uuid: str, *, expires_ms: int, now: int) -> str | None:
        """Record the pair; None when it is new, else why the request is refused."""
        key = (signer, uuid)
        with self._lock:
            self._purge(now)
            if key in self._expiry:
                return "replayed request"
            if len(self._expiry) >= self.capacity:
                return "too many requests in the replay window"
            self._expiry[key] = expires_ms
            heapq.heappush(self._heap, (expires_ms, key))
            return None


def _header(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    if value is None:  # a plain dict: HTTP header names are case-insensitive
        lowered = name.lower()
        value = next((v for k, v in headers.items() if k.lower() == lowered), None)
    return value


def _default_verify(msg: bytes, signature: bytes, ss58: str) -> bool:
    from chain.sdk_wallet import verify_signature  # the SDK's sr25519, loaded on first use

    return verify_signature(msg, signature, ss58)


@dataclass(frozen=True)
class Verified:
    """An accepted request: who sent it, and its id and time."""

    signed_by: str
    uuid: str
    timestamp_ms: int


@dataclass
class EpistulaVerifier:
    """The miner side: ``check(headers, body)`` is None for an accepted request, else the reason for a 401.

    ``receiver`` is this miner's hotkey; ``signers`` decides who may send
    (``KnownSigners``, rebuilt by the caller as the metagraph changes: assign a
    new one). ``clock`` returns unix seconds; ``verify(message, signature, ss58)``
    is the SDK's sr25519 check unless a test injects another.
    """

    receiver: str
    signers: SignerPolicy
    max_age_ms: int = MAX_AGE_MS
    replay: ReplayCache = field(default_factory=ReplayCache)
    clock: Callable[[], float] = time.time
    verify: Callable[[bytes, bytes, str], bool] = _default_verify

    def check(self, headers: Mapping[str, str], body: bytes) -> str | None:
        try:
            self.accept(headers, body)
        except SignatureRefused as refused:
            return refused.reason
        return None

    def accept(self, headers: Mapping[str, str], body: bytes) -> Verified:
        """The verified sender, or ``SignatureRefused`` with the reason (module docstring, in that order)."""
        values = {name: _header(headers, name) for name in HEADERS}
        if all(v is None for v in values.values()):
            raise SignatureRefused("unsigned request")
        if values[H_VERSION] != VERSION:
            raise SignatureRefused(f"unsupported Epistula version {values[H_VERSION]!r} (expected {VERSION})")
        missing = [name for name, v in values.items() if not v]
        if missing:
            raise SignatureRefused(f"missing header {missing[0]}")
        try:
            timestamp = int(values[H_TIMESTAMP])
        except ValueError:
            raise SignatureRefused("malformed timestamp") from None
        now = round(self.clock() * 1000)
        if now - timestamp > self.max_age_ms:
            raise SignatureRefused(f"stale request ({now - timestamp} ms old; at most {self.max_age_ms} ms)")
        if timestamp - now > self.max_age_ms:
            raise SignatureRefused(f"timestamp {timestamp - now} ms in the future")
        if values[H_SIGNED_FOR] != self.receiver:
            raise SignatureRefused("signed for another receiver")
        signer = values[H_SIGNED_BY]
        refusal = self.signers.refusal(signer)
        if refusal is not None:
            raise SignatureRefused(refusal)
        try:
            signature = bytes.fromhex(values[H_SIGNATURE].removeprefix("0x"))
        except ValueError:
            raise SignatureRefused("malformed signature") from None
        try:
            ok = self.verify(message(body, values[H_UUID], timestamp, self.receiver), signature, signer)
        except ValueError:  # a signature of the wrong length, a signer that is not an ss58 address
            ok = False
        if not ok:
            raise SignatureRefused("bad signature")
        refusal = self.replay.remember(signer, values[H_UUID], expires_ms=timestamp + self.max_age_ms, now=now)
        if refusal is not None:
            raise SignatureRefused(refusal)
        return Verified(signer, values[H_UUID], timestamp)
