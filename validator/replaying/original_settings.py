"""Re-evaluating a stored round without asking anyone: which settings still apply, and which are the original's.

Store replay and what-if evaluate a round from its stored answers, embeddings and LM evidence
(``validator.records.lm_evidence``). Settings that say how those were collected do not apply then: the
daemon's pace and query limits, where its files and metrics live, the canary schedule, the
embedding threads (they change no number) and, while the LM's evidence is reused, the whole
``[lm]`` section. For those the re-evaluation takes the original record's values, so its record
says what was evaluated, a replay with nothing changed writes the original record again, and
what-if never lists them as changed (issue 27: "lm.enabled True -> False", "interval_s" and
"reference_mode" were listed for a no-op config).

The ``[lm]`` section applies again when the LM is asked (``--lm``), or when the original used the
LM but stored no evidence (a store from before it was stored): then the record says honestly that
the LM was off.
"""

from __future__ import annotations

import dataclasses

from validator.records.recorded_config import RecordedConfig
from validator.settings import Settings

# daemon settings that shape how answers are asked for, paced and filed: none changes a stored round's numbers
DAEMON_OFFLINE = (
    "interval_s",
    "request_timeout_s",
    "round_deadline_s",
    "max_answer_chars",
    "max_tokens",
    "metrics_port",
    "round_prefix",
    "miners_file",
    "prompts_file",
    "spool_dir",
    "canaries_file",
    "canary_rate",
    "canary_seed",
)
EMBEDDING_OFFLINE = ("threads",)  # each window is embedded alone, whatever the threads


def lm_from_original(original: RecordedConfig, evidence: bool) -> bool:
    """Does a re-evaluation without the LM take the original's ``[lm]`` section? When it reuses the LM's
    evidence, or when the original did not use the LM either (nothing was asked, nothing is missing)."""
    return evidence or (original.recorded("lm", "enabled") and not original.lm.enabled)


def offline_settings(settings: Settings, original: RecordedConfig, *, evidence: bool) -> Settings:
    """``settings`` with the original's values of what does not apply to a re-evaluation without the LM."""

    def taken(section: str, names: tuple[str, ...]) -> object:
        mine = getattr(settings, section)
        theirs = getattr(original, section)
        kept = {n: getattr(theirs, n) for n in names if original.recorded(section, n)}
        return dataclasses.replace(mine, **kept) if kept else mine

    changes = {"daemon": taken("daemon", DAEMON_OFFLINE), "embedding": taken("embedding", EMBEDDING_OFFLINE)}
    if "lm" not in original.absent and lm_from_original(original, evidence):
        changes["lm"] = original.lm
    return dataclasses.replace(settings, **changes)
