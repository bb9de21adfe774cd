"""The pre-issue-12 defaults (tests/golden/legacy.toml), for tests that pin the legacy rules.

Tests of a rule that is now off by default (LOF, the top bonus, 1 / latency speed, ...) run
with these configs: the legacy behaviour must stay reachable and exact. ``legacy(cfg)``
applies the fields a test changed from the new defaults on top of the legacy values.
"""

from __future__ import annotations

from pathlib import Path

from consensus import ConsensusConfig, decide
from consensus.params import build, flatten
from consensus.signals import Signals
from emissions import EmissionsConfig
from validator.settings import load_settings

_SETTINGS = load_settings(Path(__file__).resolve().parents[1] / "golden" / "legacy.toml", env={}, dotenv_path=None)
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
