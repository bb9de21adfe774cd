"""The factual stage: a member whose short answer the rest of the dominant cluster contradicts leaves.

Embeddings measure topic, not truth ("boils at about 90 °C" sits beside
"boils at 100 °C"). With the LM on, the edge (``lm.factual``) has the LM write
each member's answer in a few words ("90 °C", "Sydney", "O(n)"), and this
module compares those short answers, SelfCheckGPT-style: the other members are
the samples, and a fact that no majority of them states is the suspect one.

Comparing two short answers (``same_answer``) is a rule, not an LM call (the
1.5B LM's yes/no on "same answer?" leans to yes: "Sydney" vs "Canberra" gave
P(yes) 0.39 against 0.53 for two right answers, docs/validity.md):

- on a yes/no prompt (the edge decides, ``lm.round_budget.is_yes_no_question``)
  the fact is the answer's "yes" or "no" ("nope", "not" read as no); a
  short answer with neither ("I'd avoid it") does not vote;
- the prompt's own numbers and words ("17 * 24", "seasons", "causes") are
  dropped: restating the question states no fact;
- numbers are the facts when both answers hold one: the two agree when
  every number of the answer with fewer numbers equals one of the other's at
  the coarser precision of the two (3.1 = 3.107 = 3.11; 408 != 418);
- otherwise words: at least half of the shorter answer's content words (stop
  words dropped, negations read as "no", light stemming) match one of the
  other's, equal or one a prefix of the other of 3 letters or more ("axial
  tilt" ~ "Earth's tilted axis"; "Sydney" !~ "Canberra"). A bracketed
  expression is one word plus its inner words ("o(n)" != "o(log n)" ~
  "logarithmic"). Lenient on purpose: a false "same" keeps a wrong answer
  paid, a false "different" costs an honest one.

``support``: each member's share of the other checked members whose short
answer agrees with its own. The stage (after polarity) removes a lone answer
against a common one:

- the round has a common answer when the median checked member's short
  answer is shared by at least ``config.checks.factual_min_agreement`` (default
  1/2) of the other checked members (most members agree with most others),
  and at least 3 members were checked;
- then a member whose short answer no other checked member states leaves
  (reason ``factual``; like a polarity dissenter it earns nothing), unless
  such lone answers are at least half of the checked ones (the LM wrote the
  answers badly): nobody leaves, a note says so.

An answer must state its own short answer (``stated_in``; ``config.checks.factual_requires_stated``): the LM
writes a short answer for any text, and for one that states none (a prompt injection that only quotes
the question, a fluent non-answer) it writes the answer from its own knowledge ("Canberra") and so
votes with the majority. A short answer none of whose facts (numbers at the coarser precision, content
words by the prefix rule; the prompt's own left out) appear in the answer's text is *not stated*: it
does not vote, and the member counts as a lone answer above (it leaves under the same quorum). A short
answer of numbers only is taken as stated when the text has no digits at all (a number spelled out,
"four hundred and eight", cannot be checked by rule). Not on yes/no prompts: "yes" is rarely written
out ("Lists are mutable").

Only a lone answer leaves: when a prompt has two right answers ("reverse()"
or slicing) both come in groups and both stay; a wrong answer that two
independent members give stays too (rewordings of one are a sybil group,
``consensus.groups``, before this). Members without a short answer (LM budget
spent, LM failure) are never removed and do not vote.

Arbitration (``config.checks.factual_arbitration``, ``Signals.arbitration``): so that a
wrong majority does not win by size (five "Saturn" against three "Jupiter"),
when the members' short answers disagree the edge (``lm.arbitrate``) has the LM
write its own short answer to the prompt and says, per checked member, whether
its short answer states the LM's (the rule above). When some do and some do
not, the members that do not leave (reason ``factual``, the detail says the LM
arbitrated), however many they are; the members that do stay even when their
answer is a lone one. The edge gives no signal when the LM abstains (not
confident, its answer matches no member's or all of them, a prompt with several
right answers, a yes/no prompt, a round with a reference answer), and then this
stage is the majority rule above. Members the arbitration does not cover (no
short answer, not stated) keep the rules above.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from consensus.config import ConsensusConfig
from consensus.context import Context, Stage
from consensus.fact_match import (  # noqa: F401 - the rules live in consensus.fact_match; re-exported for their callers
    Facts,
    _equal_at_precision,
    _match,
    _numbers,
    _words,
    agrees_with_reference,
    compare,
    facts_of,
    same_answer,
    stated_in,
    support,
    unstated,
    yes_no_labels,
)
from consensus.reference import NEUTRAL, claims_of, states_otherwise
from consensus.types import Reason


def _arbitrated(ctx: Context, members: set[int]) -> dict[int, bool]:
    """The LM's arbitration over the alive members, when it decides something: some agree, some do not (and those
    that do not are no clear majority: ``overrules_majority``)."""
    given = ctx.signals.arbitration
    if given is None or not ctx.config.checks.factual_arbitration:
        return {}
    verdict = {int(i): bool(v) for i, v in given.items() if int(i) in members}
    if overrules_majority(given, members, ctx.config):
        return {}
    return verdict if any(verdict.values()) and not all(verdict.values()) else {}


def overrules_majority(given: Mapping[int, bool], members: set[int], config: ConsensusConfig) -> bool:
    """Would the LM's verdict (``given``, over the alive ``members``) remove members holding more than
    ``config.checks.lm_overrule_share`` of the arbitrated ones? Its own answer decides between two real sides (five
    "Saturn" against three "Jupiter"), not against a clear majority: where it decides on TruthfulQA's myths it is
    right about half the time (benchmarks/journal/validity.md, "Judgment rules")."""
    verdict = [bool(v) for i, v in given.items() if int(i) in members]
    return bool(verdict) and sum(not v for v in verdict) > config.checks.lm_overrule_share * len(verdict)


def factual(ctx: Context, alive: np.ndarray) -> Stage:
    """Lone short answers against a common one, removed; with the LM's arbitration, the answers it does not
    give, removed (the rules in the module docstring)."""
    if not ctx.config.checks.factual_check:
        return Stage()
    members = {int(i) for i in alive}
    # a long answer's figure the LM read as contradicting the round's agreed one (consensus.figures)
    figures = {
        int(i): (Reason.FACTUAL, f"its figure contradicts the round's agreed one: {why}")
        for i, why in (ctx.signals.figure_contradictions or {}).items()
        if int(i) in members
    }
    scores = ctx.signals.factual_agreement
    if scores is None:
        return _reference_keeps(ctx, Stage(figures), members) if figures else Stage()
    quorum = ctx.config.checks.factual_min_agreement
    arbitrated = _arbitrated(ctx, members)
    out: dict[int, tuple[Reason, str]] = dict(figures)
    if arbitrated:
        kept = sum(arbitrated.values())
        why = (
            f"the LM arbitrated between the members' short answers: its own answer to the prompt agrees with "
            f"the answer of {kept} member(s), not with this one's ({len(arbitrated) - kept} of "
            f"{len(arbitrated)} arbitrated members disagree with it)"
        )
        out = {**{i: (Reason.FACTUAL, why) for i, ok in sorted(arbitrated.items()) if not ok}, **figures}
    silent = (
        {int(i) for i in (ctx.signals.factual_unstated or ()) if int(i) in members and int(i) not in scores}
        if ctx.config.checks.factual_requires_stated
        else set()
    )
    checked = sorted({i for i in members if i in scores} | silent)
    # a member the arbitration kept stays, lone or not; one it removed has its reason already
    lone = [i for i in checked if (i in silent or scores[i] <= 0.0) and i not in arbitrated and i not in figures]
    if not lone:
        return _reference_keeps(ctx, Stage(out), members)
    # the typical member, not the best-connected one: in a round of procedures ("how do I make coffee?") one
    # short answer can overlap half of the others while no two of those agree with each other
    top = float(np.median([0.0 if i in silent else scores[i] for i in checked]))
    if len(checked) < 3 or top < quorum or 2 * len(lone) >= len(checked):
        note = (
            f"factual: {len(lone)} of {len(checked)} checked members give a short answer no other states, or "
            f"one their text does not state, but the round has no common answer (the median member's is shared "
            f"by {top:.2f} of the others, quorum {quorum:g}); nobody removed"
        )
        return _reference_keeps(ctx, Stage(out, notes=(note,)), members)
    common = f"the median member's is shared by {top:.2f} of the others (quorum {quorum:g})"
    why = f"no other checked member states its short answer, while {common}"
    not_said = f"its text does not state the short answer the LM wrote for it (no answer of its own), while {common}"
    return _reference_keeps(
        ctx, Stage({**out, **{i: (Reason.FACTUAL, not_said if i in silent else why) for i in lone}}), members
    )


def _reference_keeps(ctx: Context, stage: Stage, members: set[int]) -> Stage:
    """The reference decides: the LM's verdicts remove no answer that states the reference's claims (agreement
    above ``NEUTRAL``: its short answer, its yes or no), unless it also states another value of a quantity the
    reference gives (``states_otherwise``): then the LM's reading of what it says stands. Nor when most of the
    ``members`` state the claims too: a lone short answer among them ("Saturn ...; Jupiter is second" where the
    reference and the others say Jupiter) is no side the reference takes."""
    backed = (
        {i for i, a in ctx.reference_agreement.items() if a > NEUTRAL}
        if ctx.config.clusters.reference_decides
        else set()
    )
    if backed and ctx.round.reference:
        claims = claims_of(ctx.folded(ctx.round.reference), ctx.folded(ctx.round.prompt))
        backed = {i for i in backed if not states_otherwise(ctx.folded(ctx.texts[i]), claims)}
    if 2 * len(backed & members) > len(members):
        return stage
    kept = sorted(set(stage.removed) & backed)
    if not kept:
        return stage
    note = f"factual: responses {kept} state the reference answer's claims; the LM's verdict does not overrule it"
    return Stage({i: v for i, v in stage.removed.items() if i not in backed}, (*stage.notes, note))
