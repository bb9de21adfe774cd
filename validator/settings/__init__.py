"""Settings: the only package that reads the environment, ``.env`` and the TOML settings file.

Every section is a frozen dataclass whose fields are declared with their
limits (``consensus.params.param``): the evaluation's (``consensus``,
``emissions``, ``input``, ``embedding``, ``lm``, ``daemon``: recorded in
every round record) and the edges' (``lm_client``: how the LM is reached and
asked; ``s3``: the S3 store; ``paths``: the cache directory). ``load_settings``
builds them all, once, at a command's start; everything else receives
settings (or the plain values they build: ``Settings.lm_config()``,
``Settings.s3_settings()``, ``Settings.paths.cache``) as arguments.

    fields.py     how a field is declared: setting, like (aliases, the secret flag), aliases_of, secret_fields
    sections.py   the evaluation's sections (embedding, lm, daemon) and Settings, every section
    edges.py      the edges' sections (lm_client, s3, paths, chain)
    loader.py     the layers (defaults < command defaults < profile < TOML < .env < environment < flags)
    profiles/     the named profiles, settings files (``seed.toml``: the seed's behaviour, ``--profile seed``)

Environment names are ``VALIDATOR_<SECTION>__<FIELD>`` (e.g. ``VALIDATOR_EMISSIONS__SPEED_WEIGHT=0.2``; a
consensus setting names its stage's table too: ``VALIDATOR_CONSENSUS__CLUSTERS__CONSENSUS_THRESHOLD=0.75``,
and the older flat names still read, with a warning); the seed's unprefixed
names (``SERVER_URL``, ``MODEL``, ...), the AWS names and the older
``VALIDATOR_THREADS`` / ``VALIDATOR_LM_THREADS`` / ``VALIDATOR_CACHE_DIR`` /
``VALIDATOR_S3_*`` are aliases (docs/configuration.md lists them all).
"""

from __future__ import annotations

from validator.settings.loader import (
    ENV_PREFIX,
    PROFILES,
    Environment,
    load_env,
    load_settings,
    prefer_offline_hub,
    quiet_hub_progress,
    with_changes,
)
from validator.settings.sections import (
    RECORDED,
    SECTIONS,
    ChainSettings,
    CommitteeSecret,
    DaemonSettings,
    EmbeddingSettings,
    LMClientSettings,
    LMRoundSettings,
    PathsSettings,
    S3Section,
    Settings,
    aliases_of,
    secret_fields,
)

__all__ = [
    "ENV_PREFIX",
    "PROFILES",
    "RECORDED",
    "SECTIONS",
    "ChainSettings",
    "CommitteeSecret",
    "DaemonSettings",
    "EmbeddingSettings",
    "Environment",
    "LMClientSettings",
    "LMRoundSettings",
    "PathsSettings",
    "S3Section",
    "Settings",
    "aliases_of",
    "load_env",
    "load_settings",
    "prefer_offline_hub",
    "quiet_hub_progress",
    "secret_fields",
    "with_changes",
]
