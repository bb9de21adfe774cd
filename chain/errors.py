"""What can go wrong at the chain edge, split by whether waiting can fix it.

The daemon keeps evaluating rounds while the chain is down (a weight
submission is retried with backoff) but must stop at once on what no amount of
waiting heals: a hotkey that is not registered, a validator without a permit,
a wallet that is not there. Every error of ``chain/`` is one of these; the SDK's
own exceptions never cross the edge::

    OSError
    └── ChainError                      a chain operation failed (the message says which and why)
        ├── TransientChainError         no answer: refused or dropped connection, timeout, RPC failure,
        │                               a pool rejection that clears by itself: retry with backoff
        └── PermanentChainError         not registered, no validator permit, wrong or missing wallet,
                                        unknown subnet or network, the chain extra not installed:
                                        fix the configuration (one line, exit 2)
    ValueError
    └── WeightsError                    ledger weights that cannot become a weight vector

A plain ``ChainError`` is one nobody classified; callers treat it as
transient (as ``storage.errors`` does: waiting is the safe default, failing fast
is reserved for causes we recognise). ``PermanentChainError.kind`` names the
cause in words an operator knows, and ``hint`` says what to change.
A weight submission the chain *rejects* (wrong version key, too fast) is not an
exception: it comes back as a failed ``Submission`` record with the chain's
reason, and is stored like every other submission.
"""

from __future__ import annotations

from typing import Any


class ChainError(OSError):
    """A chain operation failed; the message names the operation and the cause."""


class TransientChainError(ChainError, ConnectionError):
    """The chain did not answer (or answered "try again"): retrying later may succeed."""


class PermanentChainError(ChainError):
    """The chain edge can never work as configured: the operator must change something.

    ``kind``: "not registered", "no validator permit", "wrong wallet", "unknown subnet",
    "unknown network" or "extra not installed".
    """

    def __init__(self, message: str, *, kind: str, hint: str = "", submission: Any = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.hint = hint
        self.submission = submission  # the failed ``Submission`` to store, when the chain itself refused it

    def __str__(self) -> str:
        text = OSError.__str__(self)
        return f"{text} ({self.hint})" if self.hint else text


def sdk_not_installed() -> PermanentChainError:
    """What importing an SDK importer (``chain.sdk``, ``sdk_client``, ``sdk_wallet``) raises without the SDK."""
    return PermanentChainError(
        "the Bittensor SDK is not installed",
        kind="extra not installed",
        hint="pip install 'consensus-validator[chain]'",
    )


class WeightsError(ValueError):
    """Ledger weights that cannot become a weight vector (negative, not finite, malformed)."""
