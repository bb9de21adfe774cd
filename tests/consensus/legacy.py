"""The seed profile's settings (``--profile seed``: validator/settings/profiles/seed.toml), for tests that pin the
seed's rules.

Tests of a rule that is now off by default (LOF, the top bonus, 1 / latency speed, ...) run
with these configs: the seed's behaviour must stay reachable and exact. ``legacy(cfg)``
applies the fields a test changed from the new defaults on top of the seed profile's values.
"""

from __future__ import annotations

from consensus import ConsensusConfig, decide
from consensus.params import build, flatten
from consensus.signals import Signals
from emissions import EmissionsConfig
from validator.settings import load_settings

_SETTINGS = load_settings(None, env={}, dotenv_path=None, profile="seed")
LEGACY_CONSENSUS: ConsensusConfig = _SETTINGS.consensus
LEGACY_EMISSIONS: EmissionsConfig = _SETTINGS.emissions


def legacy(cfg=None):
    """``cfg``'s changes from the current defaults, applied on top of the legacy config of its type."""
    if cfg is None:
        return LEGACY_CONSENSUS
    base = LEGACY_CONSENSUS if isinstance(cfg, ConsensusConfig) else LEGACY_EMISSIONS
    fresh = flatten(type(cfg)())
    changed = {name: value for name, value in flatten(cfg).items() if value != fresh[name]}
    return build(type(cfg), changed, "legacy", base=base)


def evaluate_legacy(
    round_, vectors, config=None, polarity=None, sim=None, reference_scores=None, polarity_leaning=None
):
    """``evaluate`` with the legacy config and the pre-Signals keyword seams."""
    signals = Signals(polarity=polarity, polarity_leaning=polarity_leaning, reference_scores=reference_scores)
    return decide(round_, vectors, legacy(config), signals, sim=sim)
