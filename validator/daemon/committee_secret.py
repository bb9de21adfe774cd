"""The daemon's committee secret (the edge of ``validator.daemon.committee_draw``): from the settings, the wallet, or local disk.

``committees.secret`` (``VALIDATOR_COMMITTEE_SECRET``, the environment or ``.env``; never a config file, never
logged, never stored with a round) seeds each tick's committees and prompt order. In chain mode without one,
the secret comes from the wallet: HMAC-SHA256 keyed by the validator hotkey's private key over ``DOMAIN``
(``chain.sdk_wallet.hotkey_secret``; from ``chain.hotkey_uri`` when the hotkey is given as a secret URI), then
HMAC'd with the netuid (``for_subnet``; a secret from the environment too), so one hotkey validating two subnets
draws different committees on each; so a
validator moved to another machine with its wallet goes on with the same sequence, nothing is written, and
only the holder of the key can derive it; the secret is no other secret of the key (the domain names its use).
Otherwise the daemon generates 32 random bytes once and keeps them, hex, in its local state directory
(``<cache>/daemon-state/<store hash>/committee-secret``, mode 0600): a restart on this machine goes on with
the same sequence, and the operator is told where it is (the path, not the value) so that a daemon moved to
another machine can be given it. A ``Daemon`` built with no state directory and no secret (a test, a
notebook; ``validator daemon`` always has one) uses ``PUBLIC``, the empty key: the draw is reproducible
but anyone can predict it, and a warning says so.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import secrets
from pathlib import Path

from validator.daemon.committee_draw import MIN_SECRET_BYTES
from validator.daemon.state import DaemonError
from validator.settings import Settings

log = logging.getLogger("validator.daemon")

FILE = "committee-secret"
DOMAIN = b"consensus-validator/committee-secret/v1"  # what the wallet's key is used for here, and nothing else
PUBLIC = b""  # no secret at all: reproducible, predictable (tests, notebooks)


class SecretError(DaemonError):
    """The kept secret is too short (the daemon stops with one line)."""


def committee_secret(settings: Settings, state_dir: str | Path | None) -> bytes:
    """The secret of the committees' draw (see the module docstring)."""
    if settings.chain.enabled:  # one hotkey (or one secret) on two subnets must not draw the same committees
        given = settings.committees.secret.encode("utf-8") if settings.committees.secret else wallet_secret(settings)
        return for_subnet(given, settings.chain.netuid)
    if settings.committees.secret:
        return settings.committees.secret.encode("utf-8")
    if state_dir is None:
        log.warning("no committee secret and no state directory: the committees and prompt order are predictable")
        return PUBLIC
    path = Path(state_dir) / FILE
    if path.is_file():
        value = path.read_text(encoding="utf-8").strip()
        if len(value) < MIN_SECRET_BYTES:
            raise SecretError(f"{path}: the committee secret is shorter than {MIN_SECRET_BYTES} characters")
        return value.encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    value = secrets.token_hex(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(value + "\n")
    log.warning(
        "no committees.secret set (VALIDATOR_COMMITTEE_SECRET): generated one and kept it in %s; "
        "give that value to a daemon that moves to another machine",
        path,
    )
    return value.encode("utf-8")


def for_subnet(secret: bytes, netuid: int) -> bytes:
    """The secret of one subnet: HMAC-SHA256 keyed by ``secret`` over ``DOMAIN`` and the netuid, hex."""
    return hmac.new(secret, DOMAIN + f"/netuid/{netuid}".encode(), hashlib.sha256).hexdigest().encode("ascii")


def wallet_secret(settings: Settings) -> bytes:
    """The committee secret of the chain settings' hotkey (hex of ``chain.sdk_wallet.hotkey_secret``; the SDK is
    imported here, in chain mode only)."""
    # lazy: bittensor is the optional [chain] extra
    from chain.sdk_wallet import hotkey_secret

    chain = settings.chain
    secret = hotkey_secret(
        DOMAIN,
        wallet=chain.wallet or "default",
        hotkey=chain.hotkey,
        wallet_path=chain.wallet_path or None,
        hotkey_uri=chain.hotkey_uri or None,
    )
    return secret.hex().encode("ascii")
