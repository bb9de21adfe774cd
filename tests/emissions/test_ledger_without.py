"""``Ledger.without``: a miner that left the subnet leaves the ledger, and one that comes back starts from nothing."""

from __future__ import annotations

import pytest

from consensus.identity import ClosePair
from emissions.ledger import Ledger, MinerEntry, pair_key


def entry(miner: str, share: float) -> MinerEntry:
    return MinerEntry(miner=miner, share=share, emission=round(share * 100), in_consensus=share > 0, failed=False)


@pytest.fixture
def ledger() -> Ledger:
    out = Ledger(alpha=0.5)
    for seq in (1, 2):
        out = out.apply(
            seq,
            f"r{seq}",
            [entry("a", 0.5), entry("b", 0.3), entry("c", 0.2)],
            no_quorum=False,
            close=[ClosePair("a", "b", later="b")],
        )
    return out


def test_a_pruned_miner_is_gone_with_its_pairs_and_the_others_keep_their_weights(ledger):
    before = ledger.to_json()
    pruned = ledger.without(["b", "nobody"])
    assert set(pruned.miners) == {"a", "c"} and pruned.pairs == {}
    assert pruned.weights() == pytest.approx({"a": 0.5 / 0.7, "c": 0.2 / 0.7})
    assert (pruned.rounds, pruned.emitted, pruned.last_sequence) == (ledger.rounds, ledger.emitted, 2)
    assert ledger.to_json() == before  # input not modified
    assert pair_key("a", "b") in ledger.pairs


def test_nothing_to_prune_is_the_same_ledger(ledger):
    assert ledger.without([]) is ledger and ledger.without(["nobody"]) is ledger


def test_a_miner_that_comes_back_starts_from_nothing(ledger):
    back = ledger.without(["b"]).apply(3, "r3", [entry("a", 0.5), entry("b", 0.5)], no_quorum=False)
    assert back.miners["b"].rounds == 1 and back.miners["b"].ema == pytest.approx(0.25)
    assert back.miners["a"].rounds == 3


def test_the_pruned_miners_are_forgotten_until_the_next_round(ledger):
    from emissions.ledger import LedgerError

    pruned = ledger.without(["b", "nobody"]).without(["c"])
    assert pruned.forgotten == ("b", "c")  # only the miners it held, sorted, kept over more than one call
    assert pruned.to_json()["forgotten"] == ["b", "c"] and Ledger.from_json(pruned.to_json()) == pruned
    assert "forgotten" not in ledger.to_json()  # absent when empty: a ledger stored before reads the same
    after = pruned.apply(3, "r3", [entry("a", 1.0)], no_quorum=False)
    assert after.forgotten == () and "forgotten" not in after.to_json()
    with pytest.raises(LedgerError, match="forgotten"):
        Ledger.from_json({**pruned.to_json(), "forgotten": "b"})
