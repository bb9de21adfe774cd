"""The only place store keys are built.

Round ids and miner ids are untrusted: every component is encoded so that it
is a single safe path segment on any filesystem and in S3 (no '/', no '..',
no control characters, bounded length), and distinct ids stay distinct.

Layout::

    rounds/<round>/input.json        the round as received
    rounds/<round>/evaluation.json   the evaluation record
    rounds/<round>/heatmap.png       the similarity heatmap
    rounds/<round>/embeddings.npz    the response embeddings (reused by replay with the same model)
    rounds/<round>/lm-evidence.json  what the LM said about the round (reused by replay and what-if without the LM)
    rounds/<round>/replays/<replay>/evaluation.json   a re-evaluation (never overwrites the original)
    rounds/<round>/replays/<replay>/embeddings.npz    its embeddings, when it could not reuse the round's
    rounds/<round>/replays/<replay>/heatmap.png       its heatmap (``validator whatif``, ``--engine ray``)
    rounds/<round>/replays/<replay>/lm-evidence.json  the LM's evidence when it was asked again (``replay --lm``)
    replays/<replay>.json            a replay's diff against the originals
    summary.json                     a run's summary
    ledger.json                      the daemon's ledger (cumulative emissions, EMA scores, weights)
    daemon-tick.json                 the committees of the daemon's tick under way (``validator.daemon.committee_draw``)
    probe/<token>                    the daemon's start-up write/read/delete check (removed at once)
    daemon-lease.json                one daemon per store: the lock file (local) or lease object (S3) (``storage.lease``)
    chain/<netuid>/weights/<attempt>.json   a weight submission (or plan) of the daemon in chain mode (docs/chain.md)
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")
MAX_COMPONENT = 120


def component(value: str) -> str:
    """Encode an untrusted string as one key segment.

    ASCII letters, digits, '-' and '_' stay; every other byte of the UTF-8
    encoding becomes '%XX' (so '.' and '/' are encoded and '..' cannot appear).
    Over ``MAX_COMPONENT`` characters, the encoding is cut and a hash of the
    full value appended, keeping distinct ids distinct.
    """
    if not value:
        return "%"  # the empty id, distinct from every encoded non-empty id
    out = "".join(c if c in _SAFE else "".join(f"%{b:02X}" for b in c.encode("utf-8", "surrogatepass")) for c in value)
    if len(out) > MAX_COMPONENT:
        digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        out = f"{out[: MAX_COMPONENT - 18]}~{digest}"
    return out


def round_input(round_id: str) -> str:
    return f"rounds/{component(round_id)}/input.json"


def evaluation(round_id: str) -> str:
    return f"rounds/{component(round_id)}/evaluation.json"


def heatmap(round_id: str) -> str:
    return f"rounds/{component(round_id)}/heatmap.png"


def embeddings(round_id: str) -> str:
    return f"rounds/{component(round_id)}/embeddings.npz"


def lm_evidence(round_id: str) -> str:
    return f"rounds/{component(round_id)}/lm-evidence.json"


def replay_evaluation(round_id: str, replay_id: str) -> str:
    return f"rounds/{component(round_id)}/replays/{component(replay_id)}/evaluation.json"


def replay_embeddings(round_id: str, replay_id: str) -> str:
    return f"rounds/{component(round_id)}/replays/{component(replay_id)}/embeddings.npz"


def replay_heatmap(round_id: str, replay_id: str) -> str:
    return f"rounds/{component(round_id)}/replays/{component(replay_id)}/heatmap.png"


def replay_lm_evidence(round_id: str, replay_id: str) -> str:
    return f"rounds/{component(round_id)}/replays/{component(replay_id)}/lm-evidence.json"


def replay_report(replay_id: str) -> str:
    return f"replays/{component(replay_id)}.json"


def summary() -> str:
    return "summary.json"


def ledger() -> str:
    return "ledger.json"


def tick_plan() -> str:
    return "daemon-tick.json"


def lease() -> str:
    return "daemon-lease.json"


def probe(token: str) -> str:
    return f"probe/{component(token)}"


CHAIN = "chain/"  # the prefix of the chain mode's records


def weights_attempt(netuid: int, attempt_id: str) -> str:
    """One weight submission (or plan) on subnet ``netuid``; ``attempt_id`` sorts in time order."""
    return f"{weights_prefix(netuid)}{component(attempt_id)}.json"


def weights_prefix(netuid: int) -> str:
    """The prefix of every weight submission (or plan) on subnet ``netuid``."""
    if isinstance(netuid, bool) or not isinstance(netuid, int) or netuid < 0:
        raise ValueError(f"netuid must be a non-negative integer, got {netuid!r}")
    return f"{CHAIN}{netuid}/weights/"


ROUNDS = "rounds/"  # the prefix every round's key starts with


def round_prefix(round_id: str) -> str:
    """The prefix of every key of one round (its artefacts and its replays)."""
    return f"{ROUNDS}{component(round_id)}/"


def replays_prefix(round_id: str) -> str:
    """The prefix of every replay of one round."""
    return f"{round_prefix(round_id)}replays/"


@dataclass(frozen=True)
class RoundKey:
    """What a key under ``rounds/`` names: the round's segment, the file, and the replay's segment if any.

    Segments are encoded ids (``component``): they identify a round or a replay within a store but are
    never decoded back into ids (a long id's segment ends in a hash).
    """

    segment: str
    name: str  # "input.json", "evaluation.json", "heatmap.png", "embeddings.npz", "lm-evidence.json"
    replay: str | None = None

    @property
    def is_input(self) -> bool:
        return self.replay is None and self.name == "input.json"

    @property
    def is_evaluation(self) -> bool:
        return self.name == "evaluation.json"


def parse(key: str) -> RoundKey | None:
    """The ``RoundKey`` of a key this module builds under ``rounds/``; None for any other key."""
    parts = key.split("/")
    if len(parts) == 3 and parts[0] == "rounds" and parts[1] and parts[2]:
        return RoundKey(parts[1], parts[2])
    if len(parts) == 5 and parts[0] == "rounds" and parts[2] == "replays" and parts[1] and parts[3] and parts[4]:
        return RoundKey(parts[1], parts[4], parts[3])
    return None


@dataclass(frozen=True)
class Target:
    """Where a round's artefacts are, written (``validator.records.writer.RoundWriter``) and read
    (``validator.records.reader.RoundReader``): the round's own keys (``replay_id`` None, ``ORIGINAL``) or beside
    them under a replay id (``Target.replay``)."""

    replay_id: str | None = None

    @classmethod
    def replay(cls, replay_id: str) -> Target:
        return cls(replay_id)

    def record_key(self, round_id: str) -> str:
        return evaluation(round_id) if self.replay_id is None else replay_evaluation(round_id, self.replay_id)

    def heatmap_key(self, round_id: str) -> str:
        return heatmap(round_id) if self.replay_id is None else replay_heatmap(round_id, self.replay_id)

    def embeddings_key(self, round_id: str) -> str:
        return embeddings(round_id) if self.replay_id is None else replay_embeddings(round_id, self.replay_id)

    def evidence_key(self, round_id: str) -> str:
        return lm_evidence(round_id) if self.replay_id is None else replay_lm_evidence(round_id, self.replay_id)


ORIGINAL = Target()


def input_of(segment: str) -> str:
    """The input key of the round stored under ``segment`` (a ``RoundKey.segment``)."""
    return f"{ROUNDS}{segment}/input.json"


def check(key: str) -> str:
    """Validate a key built by this module (defence in depth for backends)."""
    parts = key.split("/")
    if not key or key.startswith("/") or any(p in ("", ".", "..") for p in parts) or "\\" in key or "\x00" in key:
        raise ValueError(f"unsafe store key {key!r}")
    return key
