"""The ledger's pair evidence read and folded per committee round, at the pair count of a long run.

    python -m benchmarks.ledger_pairs [--pairs 15834] [--miners 256] [--committee 16] [--runs 20]

A 1,000-tick run at 256 identities (docs/validity.md, "Committees, linked identities drawn apart") ends with
15,834 pairs in its ledger. Each committee's round reads the links between its members
(``validator.records.ledger_entries.identity_links``) and folds its close pairs (``Ledger.apply``). This times both on a
ledger of random pairs of that size: the links of one committee looked up (``Ledger.links(among=...)``, shipped)
against every link of the ledger computed and then filtered (the way before, run alongside as the baseline),
and the fold of one committee's round. Prints one JSON object: medians in ms and the ratio.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time

from consensus.identity import LEAD, MIN_ROUNDS, SHARE, ClosePair
from emissions.ledger import Ledger, PairTotals, pair_key


def ledger_of(pairs: int, miners: int, seed: int = 0) -> tuple[Ledger, list[str], random.Random]:
    rng = random.Random(seed)
    names = [f"m{i:03d}" for i in range(miners)]
    totals: dict[str, PairTotals] = {}
    while len(totals) < pairs:
        a, b = rng.sample(names, 2)
        together = rng.randint(1, 20)
        totals[pair_key(a, b)] = PairTotals(together=together, close=rng.randint(0, together))
    return Ledger(pairs=totals), names, rng


def median_ms(call, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        call()
        times.append(time.perf_counter() - t)
    return round(statistics.median(times) * 1000, 4)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=15_834)
    parser.add_argument("--miners", type=int, default=256)
    parser.add_argument("--committee", type=int, default=16)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args(argv)
    ledger, names, rng = ledger_of(args.pairs, args.miners)
    members = sorted(rng.sample(names, args.committee))
    present = set(members)
    bars = {"min_rounds": MIN_ROUNDS, "share": SHARE, "lead": LEAD}

    def every_then_filter():
        return [x for x in ledger.links(**bars) if x.first in present and x.second in present]

    def among():
        return ledger.links(**bars, among=members)

    if list(among()) != every_then_filter():
        raise SystemExit("the committee's links differ from the ledger's links between its members")
    close = [ClosePair(members[0], members[1], None)]
    out = {
        "pairs": args.pairs,
        "committee": args.committee,
        "links_every_then_filter_ms": median_ms(every_then_filter, args.runs),
        "links_among_ms": median_ms(among, args.runs),
        "fold_one_round_ms": median_ms(lambda: ledger._pairs_after(present, close), args.runs),
    }
    out["links_ratio"] = round(out["links_every_then_filter_ms"] / max(out["links_among_ms"], 1e-9), 1)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
