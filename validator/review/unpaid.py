"""What a run of rounds leaves an operator to act on: why each unpaid miner got nothing, in words.

``reason_of`` names one response's reason in one word (a request's failure such as ``timeout``, else
the consensus reason, with ``offtopic`` split out of ``other_cluster``); ``unpaid_reasons`` gives it for
every response of a record that was paid nothing (the round line counts them, ``RoundLine.unpaid``).
``Tally`` adds them up over the rounds of a run (the daemon's reports, or a store's records for
``validator weights show``); ``closing_summary`` is the daemon's last words: where the store is, the command
that opens its report, the weights, each unpaid miner's reason in words and what to do about a miner that
failed every round; ``identical_note`` explains why two miners with the same short answer are both paid.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from consensus.identity import MIN_ROUNDS, SHARE
from tasks.trust import Trust
from validator.review.load import load_round
from validator.terminal import safe

if TYPE_CHECKING:
    from emissions.ledger import Ledger
    from storage.base import Store
    from validator.records.evaluation_record import RoundRecord
    from validator.review.rounds import RoundRow

# a request's failure (validator.miners.answers.FailureReason) or a consensus reason (consensus.types.Reason)
WORDS: Mapping[str, str] = {
    "timeout": "did not answer within its timeout",
    "connection_refused": "could not be reached (connection refused or reset)",
    "http_error": "answered with an HTTP error status",
    "malformed_payload": "sent a reply that is not a chat completion",
    "empty": "answered nothing (an empty text)",
    "oversized": "sent a reply over the size cap",
    "non_text": "sent content that is not text",
    "deadline": "was still answering at the round's deadline",
    "refused": "refused the validator's signature (HTTP 401)",
    "error": "failed",
    "copy": "restated an earlier answer (paid only for what is new in it)",
    "too_short": "answered below the length threshold",
    "outlier": "was an outlier far from every other answer",
    "offtopic": "answered off topic (its answer is far from the prompt)",
    "other_cluster": "said something other than the dominant group",
    "polarity": "took the other side of the yes/no question",
    "factual": "stated a short answer the other members contradict",
    "injection": "addressed the evaluator (a prompt injection)",
    "reference": "stated none of the reference answer's facts",
    "wrong": "answered a verifiable task wrongly (its verifier decides)",
    "unreadable": "answered a verifiable task with nothing its verifier could read (no 'Answer:' line)",
    "unpaid": "agreed, but the round paid nothing (no quorum, or a pool scaled to 0)",
}
# reasons that are a failed request, not a judgement of the answer
FAILURES = frozenset(
    {
        "timeout",
        "connection_refused",
        "http_error",
        "malformed_payload",
        "empty",
        "oversized",
        "non_text",
        "deadline",
        "refused",
        "error",
    }
)
ENDPOINT_HINT = (
    "check its endpoint (docs/miners.md lists the failure reasons): is it up and reachable from here, does "
    "its API key variable hold the right key, is its timeout long enough; a miner that is gone for good "
    "can leave the miners file (on a subnet: it keeps weight 0 until it answers)"
)
IDENTICAL_HINT = (
    "identical short answers are agreement by design, not copies: each is paid "
    "(consensus.copies.copy_min_words, docs/consensus.md); a copy of a longer answer is paid only for what is new "
    "in it. If one operator runs both miners, give them the same entity in the miners file (one voice per "
    "operator); the ledger also links a pair by itself once its answers were far more alike than their round's "
    f"in {MIN_ROUNDS} rounds and in {SHARE:.0%} of the rounds both answered (consensus.identity.identity_persistence, "
    'on by default; docs/daemon.md "Identity links"), which keeps the two out of one committee and never lowers '
    "their pay"
)


def reason_of(*, error: str | None, reason: str, detail: str | None, in_consensus: bool) -> str:
    """One response's reason in one word (a key of ``WORDS`` for the known ones)."""
    if error:
        return error
    if in_consensus:
        return "unpaid"
    if reason == "other_cluster" and (detail or "").startswith("off topic"):
        return "offtopic"
    return reason


def words(reason: str) -> str:
    """A reason word in words (an unknown one as itself)."""
    return WORDS.get(reason, reason.replace("_", " "))


def unpaid_reasons(record: RoundRecord) -> dict[str, str]:
    """Miner -> the reason word of each response of ``record`` paid nothing."""
    return {
        r.miner: reason_of(error=r.error, reason=r.reason, detail=r.detail, in_consensus=r.in_consensus)
        for r in record.responses
        if int(r.emissions.amount) == 0
    }


@dataclass
class Tally:
    """Over a run: rounds, and per miner the reasons of the rounds it was paid nothing.

    ``rounds`` counts each miner's rounds when they are known (a store's records); the daemon's round
    reports name only the unpaid miners, so there a miner's rounds are the run's (``total``).
    """

    total: int = 0
    rounds: Counter[str] = field(default_factory=Counter)
    reasons: dict[str, Counter[str]] = field(default_factory=dict)
    last: list[str] = field(default_factory=list)  # the ids of the last ``KEEP`` rounds

    KEEP = 20  # rounds whose stored answers the closing summary compares (``stored_identical``)

    def add(self, unpaid: Mapping[str, str], miners: Iterable[str] | None = None, round_id: str | None = None) -> None:
        """One round: the reason word of each miner paid nothing, and (when known) every miner that took part."""
        self.total += 1
        if round_id is not None:
            self.last = [*self.last[-(self.KEEP - 1) :], round_id]
        for miner in miners or ():
            self.rounds[miner] += 1
        for miner, reason in unpaid.items():
            self.reasons.setdefault(miner, Counter())[reason] += 1

    def seen(self, miner: str) -> int:
        return self.rounds.get(miner) or self.total

    def failed_every_round(self, miner: str) -> bool:
        got = self.reasons.get(miner, Counter())
        return self.total > 0 and sum(n for r, n in got.items() if r in FAILURES) == self.seen(miner)

    def why(self, miner: str) -> str:
        """Why ``miner`` was not paid, in words: each reason with its count of rounds."""
        got = self.reasons.get(miner)
        if not got:
            return ""
        n = self.seen(miner)
        return "; ".join(f"{words(r)} ({r}, {k} of {n} rounds)" for r, k in got.most_common())


def tally_rounds(rounds: Iterable[RoundRow]) -> Tally:
    """The ``Tally`` of a store's evaluated rounds (``validator.review.load_store``)."""
    tally = Tally()
    for rnd in rounds:
        unpaid = {
            r.miner: reason_of(error=r.error, reason=r.reason, detail=r.detail, in_consensus=r.in_consensus)
            for r in rnd.responses
            if r.emission == 0
        }
        tally.add(unpaid, [r.miner for r in rnd.responses], rnd.round_id)
    return tally


def why_zero(miner: str, ledger: Ledger, tally: Tally) -> str:
    """Why ``miner`` has weight 0 in ``ledger``, from the run's ``tally`` (empty: it does not have 0)."""
    m = ledger.miners.get(miner)
    if m is None:
        return "not in the ledger"
    if m.ema * m.canary_accuracy > 0:
        return ""
    said = tally.why(miner)
    if said:
        return said
    if m.answered == 0:
        return f"failed every round ({m.rounds})"
    if m.canary_rounds and m.canary_accuracy == 0:
        return "wrong on every canary (known-answer) round"
    if m.tasks and m.tasks_right == 0 and m.in_consensus == 0:
        return f"wrong on every task round ({m.tasks}; their verifier decides)"
    return f"paid nothing in {m.rounds} rounds (in consensus {m.in_consensus})"


def weights_table(ledger: Ledger, tally: Tally | None = None, *, limit: int = 32) -> list[str]:
    """The ledger's weights, one line per miner (highest first), with a why for each 0."""
    tally = tally or Tally()
    weights = ledger.weights()
    lines = [
        f"  {'miner':<32} {'weight':>7} {'ema':>6} {'canary':>6} {'emissions':>15} {'in cons.':>8}  {'last seen':<24}  "
        "verified (95% interval, right/tasks)"
    ]
    for miner, w in sorted(weights.items(), key=lambda kv: (-kv[1], kv[0])):
        m = ledger.miners[miner]
        canary = f"{m.canary_accuracy:>6.3f}" if m.canary_rounds else f"{'-':>6}"
        cons = f"{m.in_consensus}/{m.rounds}"
        verified = Trust(m.tasks_right, m.tasks).describe() if m.tasks else "-"
        lines.append(
            f"  {safe(miner, limit):<32} {w:>7.3f} {m.ema:>6.3f} {canary} {m.emissions:>15,} {cons:>8}  "
            f"{safe(m.last_round or '-', 24):<24}  {verified}"
        )
    return lines


def zero_lines(ledger: Ledger, tally: Tally) -> list[str]:
    """One line per miner with weight 0: why, and for one that failed every round what to do."""
    out: list[str] = []
    failed: list[str] = []
    for miner, w in sorted(ledger.weights().items()):
        if w > 0:
            continue
        out.append(f"  {safe(miner, 32)}: {why_zero(miner, ledger, tally)}")
        m = ledger.miners[miner]
        if tally.failed_every_round(miner) or (m.rounds and m.answered == 0):
            failed.append(safe(miner, 32))
    if failed:
        out.append(f"  failed every round: {', '.join(failed)}: {ENDPOINT_HINT}")
    return out


def partly_lines(ledger: Ledger, tally: Tally) -> list[str]:
    """One line per miner with a weight that was paid nothing in some rounds: in which and why."""
    weights = ledger.weights()
    return [
        f"  {safe(miner, 32)}: {tally.why(miner)}"
        for miner in sorted(tally.reasons)
        if weights.get(miner, 0.0) > 0 and tally.why(miner)
    ]


def identical_note(pairs: Iterable[tuple[str, str]]) -> list[str]:
    """Why each pair of paid miners that gave identical answers is paid twice (empty without such pairs)."""
    named = [f"{safe(a, 32)} and {safe(b, 32)}" for a, b in sorted(set(pairs))]
    if not named:
        return []
    return [f"note: {', '.join(named)} gave identical answers in a round and both were paid: {IDENTICAL_HINT}"]


def identical_paid(texts: Mapping[str, str], paid: Iterable[str]) -> list[tuple[str, str]]:
    """Pairs (in name order) of paid miners whose answer texts are the same after trimming."""
    by_text: dict[str, list[str]] = {}
    for miner in sorted(set(paid)):
        text = (texts.get(miner) or "").strip()
        if text:
            by_text.setdefault(text, []).append(miner)
    return [(a, b) for group in by_text.values() for i, a in enumerate(group) for b in group[i + 1 :]]


def stored_identical(store: Store, round_ids: Iterable[str]) -> list[tuple[str, str]]:
    """The pairs of paid miners with identical answers in any of the stored rounds ``round_ids`` (an unreadable
    round is passed over)."""

    found: set[tuple[str, str]] = set()
    for round_id in round_ids:
        try:
            view = load_round(store, round_id)
        except (KeyError, OSError, ValueError):
            continue
        texts = {r.miner: view.texts[r.index] or "" for r in view.round.responses if r.index < len(view.texts)}
        found.update(identical_paid(texts, [r.miner for r in view.round.responses if r.emission > 0]))
    return sorted(found)


def explained(ledger: Ledger, tally: Tally, identical: Iterable[tuple[str, str]] = ()) -> list[str]:
    """Why each 0, the paid miners' unpaid rounds, identical paid answers: what the weights table leaves out."""
    lines = []
    zeros = zero_lines(ledger, tally)
    if zeros:
        lines += ["why 0:", *zeros]
    partly = partly_lines(ledger, tally)
    if partly:
        lines += ["paid, but not in every round:", *partly]
    return lines + identical_note(identical)


def closing_summary(ledger: Ledger, tally: Tally, store: str, *, identical: Iterable[tuple[str, str]] = ()) -> str:
    """The daemon's last words (module docstring)."""
    lines = [
        f"ledger after round {ledger.last_sequence}: {ledger.emitted:,} units emitted in {ledger.rounds} rounds",
        *weights_table(ledger, tally),
        *explained(ledger, tally, identical),
    ]
    lines += [
        f"results: {store} (a record, heatmap and embeddings per round; the ledger)",
        f"open the report: validator report {store} --serve   (or --out DIR for static files)",
        f"weights again later: validator weights show {store}",
    ]
    return "\n".join(lines)


def round_closing(record: RoundRecord, texts: Mapping[str, str], store: str | None) -> str:
    """``validator round``'s last words: each unpaid miner's reason in words and what to do about a failed
    one, the paid shares (one round's weights), identical paid answers explained, where the round is."""
    unpaid = unpaid_reasons(record)
    lines = []
    total = sum(int(r.emissions.amount) for r in record.responses)
    if total:
        shares = sorted(((int(r.emissions.amount) / total, r.miner) for r in record.responses), key=lambda x: -x[0])
        lines.append("shares of this round: " + ", ".join(f"{safe(m, 32)} {w:.3f}" for w, m in shares if w > 0))
    if unpaid:
        lines.append("paid nothing:")
        lines += [f"  {safe(m, 32)}: {words(r)} ({r})" for m, r in sorted(unpaid.items())]
        failed = sorted(safe(m, 32) for m, r in unpaid.items() if r in FAILURES)
        if failed:
            lines.append(f"  failed: {', '.join(failed)}: {ENDPOINT_HINT}")
    paid = [r.miner for r in record.responses if int(r.emissions.amount) > 0]
    lines += identical_note(identical_paid(texts, paid))
    if store is not None:
        lines.append(f"stored in {store}; open the report: validator report {store} --serve")
    else:
        lines.append("not stored (--store DIR keeps the round; validator report DIR --serve then shows it)")
    return "\n".join(lines)
