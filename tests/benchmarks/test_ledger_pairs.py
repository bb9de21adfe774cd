import json

from benchmarks import ledger_pairs


def test_the_benchmark_checks_both_ways_agree_and_prints_its_medians(capsys):
    ledger_pairs.main(["--pairs", "500", "--miners", "40", "--committee", "8", "--runs", "3"])
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["pairs"] == 500 and out["committee"] == 8
    assert out["links_among_ms"] > 0 and out["links_every_then_filter_ms"] > 0 and out["fold_one_round_ms"] > 0
