"""The narrative step of a round, coded once: the LM's narrative within a budget, the template otherwise.

``narrate_round`` is the one narrative step. ``validator.round.stages.run_stages`` calls it for every driver
that narrates inside the evaluation (``validator round``, ``validator replay --lm``), with no budget;
the daemon calls it after the round's commit (``validator.daemon.daemon``: the record and the ledger first,
so a slow or failing LM never holds up a commit) with ``lm.round_budget_s``, an allowance of its own
after the checks'. Past its budget the template is kept and ``Narrated.skipped`` says why (the
record's ``lm_skipped``). The narrative is kept in the round's LM evidence with the digest of the facts
it was written from (``narrative_evidence``), so a replay without the LM reuses it while those facts
are the same (``stored_narrative``) and writes the template otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from consensus.types import Evaluation, Round
from emissions.allocate import Allocation
from lm.client import DeadlineClient, labelled
from narrative.narrate import facts_digest, narrate
from narrative.template import NarrativeInput
from validator.records.lm_evidence import NarrativeEvidence

if TYPE_CHECKING:
    from lm.client import ChatClient
    from validator.records.lm_evidence import LMEvidence, NarrativeEvidence


@dataclass(frozen=True)
class Narrated:
    """What the narrative step wrote: the LM's text ("lm") or the template ("template")."""

    kind: str
    text: str
    skipped: str | None = None  # the budget was spent: the template was kept (the record's lm_skipped says so)


def narrative_input(
    round_: Round, evaluation: Evaluation, allocation: Allocation, heatmap_key: str | None
) -> NarrativeInput:
    """What the narrative of an evaluated round is written from (``narrative.template.NarrativeInput``)."""
    return NarrativeInput(round_, evaluation, allocation.amounts, allocation.pool, heatmap_key)


def narrate_round(
    client: ChatClient,
    round_: Round,
    evaluation: Evaluation,
    allocation: Allocation,
    heatmap_key: str | None,
    budget_s: float | None = None,
) -> Narrated:
    """The LM's narrative of an evaluated round (checked; the template when the LM fails or its text does not
    hold). ``budget_s``: seconds for all its LM calls, retries included (None or 0: no budget of its own)."""

    bounded = DeadlineClient(client, budget_s) if budget_s else None
    told = narrate(
        labelled(bounded or client, "narrative"), narrative_input(round_, evaluation, allocation, heatmap_key)
    )
    spent = None
    if told.kind == "template" and bounded is not None and bounded.spent:
        spent = f"skipped: the narrative's LM budget of {budget_s:.0f} s is spent; template kept"
    return Narrated(told.kind, told.text, spent)


def narrative_evidence(
    narrated: Narrated, round_: Round, evaluation: Evaluation, allocation: Allocation, heatmap_key: str | None
) -> NarrativeEvidence:
    """The narrative as ``validator.records.lm_evidence`` keeps it: its text and what it was written from."""

    facts = facts_digest(narrative_input(round_, evaluation, allocation, heatmap_key))
    return NarrativeEvidence(narrated.kind, narrated.text, facts, narrated.skipped)


def stored_narrative(
    evidence: LMEvidence,
    round_: Round,
    evaluation: Evaluation,
    allocation: Allocation,
    heatmap_key: str | None,
    template: str,
) -> tuple[str, str]:
    """The stored LM narrative while it describes this evaluation (the same facts), else the template."""

    stored = evidence.narrative
    if (
        stored is not None
        and stored.kind == "lm"
        and stored.facts == facts_digest(narrative_input(round_, evaluation, allocation, heatmap_key))
    ):
        return stored.text, "lm"
    return template, "template"
