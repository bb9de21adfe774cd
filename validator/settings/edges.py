"""The edges' settings sections: how the LM is reached and asked (``[lm_client]``), the S3 store
(``[s3]``), the cache directory (``[paths]``), the chain (``[chain]``) and the committees' secret
(``[committees]``).

They say how to reach servers and where to cache, and hold the secrets: unlike the evaluation's
sections (``validator.settings.sections``) they never go into a round record. Their fields are
declared with ``validator.settings.fields`` (``setting``, ``like``): an edge's own value declares a
field once and its section takes it over with ``like``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar
from urllib.parse import urlparse

from chain.base import PUBLIC_NETWORKS, check_network, public_network, refuse_development_key
from chain.errors import PermanentChainError
from chain.weights import spec_version
from consensus.errors import ConfigError
from consensus.params import Deprecated, check_fields, param
from lm.config import LMConfig
from storage.s3_settings import S3Settings
from validator import __version__
from validator.settings.fields import like, retired, setting


def _check_url(value: str, name: str) -> None:
    if not value:
        return
    parsed = urlparse(value)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ConfigError(name, f"expected an http(s) URL such as http://127.0.0.1:8080/v1, got {value!r}")


@dataclass(frozen=True)
class LMClientSettings:
    server_url: str = setting("", aliases=("SERVER_URL",))
    """OpenAI-compatible server (http(s) URL); empty = the embedded local LM."""
    api_token: str = setting("", aliases=("API_TOKEN",), secret=True)
    """Bearer token of server_url; held in a Secret that never prints."""
    model: str = setting("", aliases=("MODEL",))
    """Model name sent in requests; empty = the server's default."""
    thinking: bool = like(LMConfig, "thinking", aliases=("THINKING",))
    score_mode: str = like(LMConfig, "score_mode", aliases=("LM_SCORE_MODE",))
    calibration: str = setting("", aliases=("LM_CALIBRATION",))
    """Extra yes/no calibrations file (validator lm calibrate), consulted before the shipped one."""
    retries: int = like(LMConfig, "retries", aliases=("LM_RETRIES",))
    timeout_s: float = like(LMConfig, "timeout_s", aliases=("LM_TIMEOUT_S",))
    cache: bool = like(LMConfig, "cache", aliases=("LM_CACHE",))
    cache_dir: str = setting("", aliases=("LM_CACHE_DIR",))
    """Directory of that cache; empty = <paths.cache_dir>/lm-responses."""
    judge_server_url: str = setting("", aliases=("LM_AS_JUDGE_SERVER_URL",))
    """Server of the reference judge; empty = server_url's."""
    judge_api_token: str = setting("", aliases=("LM_AS_JUDGE_API_TOKEN",), secret=True)
    """Bearer token of judge_server_url."""
    judge_model: str = setting("", aliases=("LM_AS_JUDGE_MODEL",))
    """Model name of the judge server."""
    local_threads: int = like(LMConfig, "local_threads", aliases=("VALIDATOR_LM_THREADS",))

    # The seed's LM_SCORE ensemble, retired (issue 34): off by default, and nothing in the default yesno mode
    DEPRECATED: ClassVar[dict[str, Deprecated]] = {
        "ensemble": retired(
            "LM_SCORE asks one sample (the lab's ENSEMBLE: benchmarks.lm_score; measured at commit 46996aa, "
            "docs/performance.md)",
            False,
            aliases=("ENSEMBLE",),
        ),
        "aggregation": retired(
            "LM_SCORE asks one sample: there is nothing to aggregate", "maj", aliases=("AGGREGATION",)
        ),
    }

    def __post_init__(self) -> None:
        check_fields(self, "lm_client")
        _check_url(self.server_url, "lm_client.server_url")
        _check_url(self.judge_server_url, "lm_client.judge_server_url")


@dataclass(frozen=True)
class S3Section:
    endpoint_url: str = setting("", aliases=("VALIDATOR_S3_ENDPOINT", "AWS_ENDPOINT_URL"))
    """Endpoint of an S3-compatible server (http://127.0.0.1:8333); empty = AWS."""
    region: str = like(S3Settings, "region", aliases=("VALIDATOR_S3_REGION", "AWS_REGION", "AWS_DEFAULT_REGION"))
    access_key_id: str = setting("", aliases=("AWS_ACCESS_KEY_ID",), secret=True)
    """Access key id; empty together with the secret = boto3's own chain (profile, instance role)."""
    secret_access_key: str = setting("", aliases=("AWS_SECRET_ACCESS_KEY",), secret=True)
    """Secret access key (set both halves or neither)."""
    session_token: str = setting("", aliases=("AWS_SESSION_TOKEN",), secret=True)
    """Session token of temporary credentials."""
    connect_timeout_s: float = like(S3Settings, "connect_timeout_s")
    read_timeout_s: float = like(S3Settings, "read_timeout_s")
    max_attempts: int = like(S3Settings, "max_attempts")

    def __post_init__(self) -> None:
        check_fields(self, "s3")
        _check_url(self.endpoint_url, "s3.endpoint_url")


@dataclass(frozen=True)
class PathsSettings:
    cache_dir: str = setting("", aliases=("VALIDATOR_CACHE_DIR",))
    """Cache of the ONNX export, the embedded LM's model file and logs, LM responses, spools and daemon state; empty = $XDG_CACHE_HOME/consensus-validator, else ~/.cache/consensus-validator."""

    @property
    def cache(self) -> Path:
        """The cache directory (the loader fills in the default; this fallback serves hand-built settings)."""
        return Path(self.cache_dir).expanduser() if self.cache_dir else Path.home() / ".cache" / "consensus-validator"

    def __post_init__(self) -> None:
        check_fields(self, "paths")


@dataclass(frozen=True)
class ChainSettings:
    netuid: int = param(-1, lo=-1, hi=65535)
    """Subnet to validate (docs/chain.md): miners from its metagraph, weights set on it; -1 = no chain (the miners file or the embedded pool)."""
    network: str = "finney"
    """finney, test, local, archive, devnet, or a ws://HOST:PORT (wss://) endpoint."""
    wallet: str = ""
    """Wallet whose hotkey signs requests and weights; empty = 'default' with a netuid, and unsigned requests to a miners file."""
    hotkey: str = "default"
    """Hotkey name in the wallet."""
    wallet_path: str = ""
    """Directory of the wallets; empty = the SDK's default (~/.bittensor/wallets)."""
    hotkey_uri: str = setting("", secret=True)
    """The hotkey as a secret URI (//Alice on a dev chain) instead of a wallet."""
    set_weights: bool = False
    """Submit the ledger's weights (at most once per tempo); off: only plan them (the plans are stored and reported)."""
    model: str = "default"
    """Model name asked of metagraph miners (the chat request's model field)."""
    base_path: str = "/v1"
    """Path of a miner's OpenAI-compatible API under its axon, http://ip:port."""
    block_time_s: float = param(12.0, lo=0.0, lo_open=True)
    """Seconds per block (12 on finney and test; a fast-blocks localnet 0.25): paces the metagraph refresh and the weights schedule."""
    timeout_s: float = param(60.0, lo=0.0, hi=3600, lo_open=True)
    """Timeout of one chain read; a submission gets three times as long."""
    startup_wait_s: float = param(300.0, lo=0.0)
    """How long the daemon waits at start for a chain that does not answer (a line every 10 s), then exits 2; 0 = wait until it answers (the systemd unit's choice)."""
    refresh_blocks: int = param(100, lo=1)
    """Blocks between two reads of the metagraph (the subnet template's 100): new miners, permits."""
    validator_stake: float = param(4096.0, lo=0.0)
    """A neuron with a validator permit and more stake than this is a validator, not asked as a miner (the subnet template's vpermit_tao_limit)."""
    private_axons: str = param("auto", choices=("auto", "skip", "ask"))
    """Axons on private, loopback or unroutable addresses: skip, ask, or auto (skip on a public chain: finney, test, or any node, at whatever address, whose genesis hash is theirs; ask only on a development chain, whose miners live there)."""

    weights_version: int = param(-1, lo=-1)
    """Version key sent with the weights (the subnet refuses one older than its weights_version); -1 = this package's version as the subnet template's spec_version (1000 x major + 10 x minor + patch)."""
    mechid: int = param(0, lo=0, hi=255)
    """Mechanism of the subnet whose weights are set (0: the main one; a multi-mechanism subnet has one incentive market per mechid)."""

    def __post_init__(self) -> None:
        check_fields(self, "chain")

        try:
            check_network(self.network)
            if self.netuid >= 0:  # chain mode (the session checks again, from the genesis of the node's chain)
                refuse_development_key(
                    self.hotkey_uri, self.network, "" if self.network not in PUBLIC_NETWORKS else None
                )
        except PermanentChainError as exc:
            name = "chain.network" if exc.kind == "unknown network" else "chain.hotkey_uri"
            raise ConfigError(name, str(exc)) from None
        if (self.base_path and not self.base_path.startswith("/")) or any(c in self.base_path for c in "?#\x00 "):
            raise ConfigError("chain.base_path", f"a URL path such as /v1 (or empty), got {self.base_path!r}")

    @property
    def enabled(self) -> bool:
        """Chain mode: miners from the metagraph of ``netuid``."""
        return self.netuid >= 0

    def skips_private_axons(self, genesis_hash: str | None) -> bool:
        """``private_axons`` resolved for the chain whose block 0 is ``genesis_hash`` (None: unknown): auto skips
        them on a public chain, decided by its name or genesis (``chain.base.public_network``), never by the
        node's address: a finney validator's own lite node is at ws://127.0.0.1:9944."""
        if self.private_axons != "auto":
            return self.private_axons == "skip"
        return public_network(self.network, genesis_hash)

    @property
    def version_key(self) -> int:
        """``weights_version`` resolved (-1: this package's version, ``chain.weights.spec_version``)."""
        if self.weights_version >= 0:
            return self.weights_version
        return spec_version(__version__)

    @property
    def signs(self) -> bool:
        """Requests are signed: in chain mode, and with a miners file when a wallet or hotkey URI is set."""
        return self.enabled or bool(self.wallet or self.hotkey_uri)


@dataclass(frozen=True)
class CommitteeSecret:
    secret: str = setting("", aliases=("VALIDATOR_COMMITTEE_SECRET",), secret=True)
    """The validator's secret that seeds each tick's committees and prompt order (HMAC of the tick); at least 16 characters, from the environment or .env only; empty = in chain mode derived from the wallet's hotkey (an HMAC keyed by its private key), else one generated and kept in the daemon's local state directory (docs/daemon.md)."""

    def __post_init__(self) -> None:
        check_fields(self, "committees")
        if self.secret and len(self.secret) < 16:
            raise ConfigError("committees.secret", f"at least 16 characters, got {len(self.secret)}")
