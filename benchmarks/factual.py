"""Measure the LM factual check (short answers, majority vote) on a rounds file with planted wrong answers.

    HF_HUB_OFFLINE=1 nice -n 19 python -m benchmarks.factual examples/rounds.jsonl examples/rounds_planted.json \
        --out benchmarks/results/factual_short.json [--only-planted] [--analyse-only]

Measuring: for every round, the real embedder and the stages up to the
dominant cluster (``consensus.pipeline.plan_checks``: whom the LM checks),
then the real LM (SERVER_URL, else the embedded one) writes each member's
short answer (``lm.factual.short_answer``, one call per member, timed). The
short answers are saved to ``--out`` after every round; a second run measures
only the rounds missing there (rounds with a planted wrong answer first). Then,
for every round the arbitration would ask about (``consensus.arbitration.needed``: no
reference, one short answer, short answers that disagree), the LM's own short
answer is measured once and saved as ``own``.

Analysing: each measured round goes through the product's own evaluation twice
(``benchmarks.evaluate.replay``: the daemon's unit of work, written and paid, the
LM off), without and with the factual signal handed in as the round's LM evidence
(``consensus.factual_stage.compare`` of the saved short answers, and the arbitration,
``consensus.arbitration.arbitration_verdict``, where the LM's own answer was saved for it; no polarity or
judge, so the figures are these checks' alone), with the shipped defaults. Rounds with a planted ``wrong`` answer:
does it earn strictly less than every answer that is not planted? Every other
round: how the honest (not planted) miners' pay moves when the check is on.
Also the calls per round and seconds per call against ``lm.round_budget_s``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import time
from pathlib import Path

from benchmarks.data import VectorCache
from benchmarks.evaluate import replay
from consensus.arbitration import OwnAnswer, arbitration_verdict, needed
from consensus.factual_stage import compare
from consensus.pipeline import plan_checks
from consensus.signals import Signals
from consensus.similarity import cosine_matrix
from embedding.loader import load_embedder
from lm.arbitrate import own_answer
from lm.factual import FactualCheck, clean_short_answer, short_answer
from lm.round_budget import PromptKind, is_yes_no_question
from validator.lm_session import open_client
from validator.records.round_input import read_rounds
from validator.round.embed_ahead import round_texts
from validator.round.stages import edge_similarities, edge_vectors
from validator.settings import load_settings


def _rounds(path: Path):

    return [line.round for line in read_rounds(path) if getattr(line, "round", None) is not None]


def _edge(rnd, embedder, normalise: bool):
    """The answers as the LM reads them, and the embedding signals as ``validator.round.stages.run_stages`` builds
    them: the vectors of the texts the product embeds (``validator.round.embed_ahead.round_texts``, normalised)."""
    texts = [r.text if r.error is None else "" for r in rnd.responses]
    vectors = embedder.embed(round_texts(rnd, normalise)).vectors
    ref_cos, prompt_cos = edge_similarities(vectors, edge_vectors(embedder, rnd.prompt, rnd.reference))
    return texts, vectors, cosine_matrix(vectors), ref_cos, prompt_cos


def _measure(rounds, out: Path, first: set[str], only_first: bool) -> dict:

    settings = load_settings(None, dotenv_path=None)
    config = settings.lm_config()
    embedder = load_embedder(settings.embedding.runtime)
    rounds = sorted(rounds, key=lambda r: r.round_id not in first)  # planted first: a cut-short run still counts
    data: dict = json.loads(out.read_text()) if out.is_file() else {}
    todo = [r for r in rounds if r.round_id not in data and (r.round_id in first or not only_first)]
    with open_client(config, cache=False) as client:  # no cache: the timings are real calls
        for rnd in todo:
            texts, vectors, sim, ref_cos, prompt_cos = _edge(rnd, embedder, settings.consensus.text.normalise_text)
            plan = plan_checks(
                rnd,
                vectors,
                settings.consensus,
                Signals(reference_similarity=ref_cos, prompt_similarity=prompt_cos),
                sim=sim,
            )
            answers, seconds = {}, {}
            for i in plan.members:
                t = time.perf_counter()
                answers[str(i)] = short_answer(client, rnd.prompt, texts[i], config)
                seconds[str(i)] = round(time.perf_counter() - t, 2)
            data[rnd.round_id] = {"members": list(plan.members), "answers": answers, "seconds": seconds}
            print(
                f"{rnd.round_id}: {len(plan.members)} calls, {sum(seconds.values()):.1f} s: "
                f"{ {k: v for k, v in answers.items()} }",
                flush=True,
            )
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(data, indent=1, ensure_ascii=False))  # after every round: resumable
        _measure_own(rounds, data, out, client)
    return data


def _checks(rnd, got: dict):
    """(answers, not stated, agreement, FactualChecks) as ``lm.factual.check_factual`` makes them from the saved
    short answers."""

    # as lm.factual.short_answer hands them on (a saved reply measured before a cleaning rule changed)
    answers = {int(k): clean_short_answer(v) for k, v in got["answers"].items() if v is not None}
    answers = {k: v for k, v in answers.items() if v}
    # as lm.factual.check_factual: a short answer the member's own text does not state does not vote
    silent, agreed = compare(
        answers, {i: rnd.responses[i].text for i in answers}, rnd.prompt, yes_no=is_yes_no_question(rnd.prompt)
    )
    agreed = agreed if len(answers) >= 2 else {}
    checks = tuple(
        FactualCheck(i, agreed[i][1], agreed[i][0], round(10 * agreed[i][0]), None, answers[i], True)
        for i in sorted(agreed)
    )
    return answers, silent, {i: v for i, (v, _) in agreed.items()}, checks


def _measure_own(rounds, data: dict, out: Path, client) -> None:
    """The LM's own short answer (``lm.arbitrate.own_answer``) for every measured round the arbitration asks it
    about (no reference, one short answer, the members' short answers disagree), saved as ``own``."""

    for rnd in rounds:
        got = data.get(rnd.round_id)
        if (
            got is None
            or "own" in got
            or rnd.reference
            or needed(rnd.prompt, _checks(rnd, got)[3], PromptKind.of(rnd.prompt)).skipped
        ):
            continue
        t = time.perf_counter()
        own = own_answer(client, rnd.prompt)
        got["own"] = (
            None
            if own is None
            else {"text": own.text, "confidence": own.confidence, "seconds": round(time.perf_counter() - t, 2)}
        )
        print(f"{rnd.round_id}: the LM's own answer {got['own']}", flush=True)
        out.write_text(json.dumps(data, indent=1, ensure_ascii=False))


def _pay(rnd, cache: VectorCache, settings, factual=None, silent=frozenset(), arbitration=None):
    """The round evaluated and paid by the product's own evaluation (``benchmarks.evaluate.replay``: the daemon's
    unit of work without the LM), the factual check's signals handed in as the round's stored LM evidence."""
    given = Signals(factual_agreement=factual, factual_unstated=silent or None, arbitration=arbitration)
    none = factual is None and arbitration is None
    rep = replay([rnd], cache, settings, signals=None if none else (lambda _round: given))[0]
    return rep.evaluation, rep.allocation.amounts


def _analyse(rounds, data: dict, planted: list, floor: float | None, also: dict[str, str], cache_dir: Path) -> None:
    settings = load_settings(None, dotenv_path=None)
    if floor is not None:
        settings = dataclasses.replace(
            settings, consensus=settings.consensus.changed({"checks.factual_min_agreement": floor})
        )
    cache = VectorCache(cache_dir, settings)
    wrong = {p["round_id"]: p["miner"] for p in planted if p["kind"] == "wrong"} | also
    marked = {(p["round_id"], p["miner"]) for p in planted} | set(also.items())
    hits = {False: 0, True: 0}
    measured_wrong, honest_before, honest_after, drops, calls, secs = 0, 0, 0, [], [], []
    for rnd in rounds:
        if rnd.round_id not in data:
            continue
        got = data[rnd.round_id]
        answers, silent, agreement, checks = _checks(rnd, got)
        # with the LM's own answer saved (lm.arbitrate asked it), its verdict as the round would read it
        verdict = (
            arbitration_verdict(
                rnd.prompt, checks, OwnAnswer(got["own"]["text"], got["own"]["confidence"]), PromptKind.of(rnd.prompt)
            )
            if got.get("own") and not rnd.reference
            else None
        )
        arbitration = None if verdict is None else verdict.signal()
        if verdict is not None:
            print(
                f"  {rnd.round_id}: arbitration: the LM's answer {verdict.answer!r} (confidence "
                f"{verdict.confidence:.2f}): {verdict.skipped or dict(verdict.agrees)}"
            )
        calls.append(len(got["seconds"]))
        secs += list(got["seconds"].values())
        (_, before), (ev1, after) = (
            _pay(rnd, cache, settings),
            _pay(rnd, cache, settings, agreement or None, silent, arbitration),
        )
        honest = [i for i, r in enumerate(rnd.responses) if (rnd.round_id, r.miner) not in marked]
        shown = {
            i: (answers.get(i), "not stated" if i in silent else round(agreement.get(i, float("nan")), 2))
            for i in answers
        }
        if rnd.round_id in wrong:
            measured_wrong += 1
            w = next(i for i, r in enumerate(rnd.responses) if r.miner == wrong[rnd.round_id])
            for on, amounts in ((False, before), (True, after)):
                hits[on] += amounts[w] < min(amounts[i] for i in honest)
            removed = [i for i, r in enumerate(ev1.results) if r.reason.value == "factual" and i != w]
            print(
                f"  {rnd.round_id} wrong #{w} {ev1.results[w].reason.value}: paid {before[w]:,} -> {after[w]:,}; "
                f"honest removed by the check {removed or 'none'}; "
                f"least-paid correct {min(before[i] for i in honest):,} -> {min(after[i] for i in honest):,}; "
                f"short answers {shown}"
            )
        else:
            honest_before += sum(before[i] for i in honest)
            honest_after += sum(after[i] for i in honest)
            moved = {i: after[i] - before[i] for i in honest if after[i] != before[i]}
            drops += [before[i] - after[i] for i in honest if after[i] < before[i]]
            removed = [i for i, r in enumerate(ev1.results) if r.reason.value == "factual"]
            print(
                f"  {rnd.round_id}: removed {removed}, honest pay moved {moved or 'nowhere'}; notes "
                f"{[n for n in ev1.notes if n.startswith('factual')]}; short answers {shown}"
            )
    print(
        f"\nplanted wrong answer earns less than every correct answer: {hits[False]} of {measured_wrong} rounds "
        f"without the check, {hits[True]} of {measured_wrong} with it"
    )
    print(
        f"rounds without a planted wrong answer: honest miners' pay {honest_before:,} -> {honest_after:,} "
        f"({(honest_after - honest_before) / max(honest_before, 1):+.2%}); honest miners paid less: {len(drops)}"
        f"{f', at most {max(drops):,} units' if drops else ''}"
    )
    if secs:
        print(
            f"LM calls per round: median {statistics.median(calls):g}, max {max(calls)}; seconds per call: median "
            f"{statistics.median(secs):.1f}, max {max(secs):.1f} (lm.round_budget_s {settings.lm.round_budget_s:g})"
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rounds", type=Path)
    ap.add_argument("planted", type=Path)
    ap.add_argument("--out", type=Path, default=Path("runs/factual_short.json"))
    ap.add_argument("--cache", type=Path, default=Path("out/factual"), help="the embedding cache (benchmarks.data)")
    ap.add_argument("--only-planted", action="store_true", help="measure only rounds with a planted wrong answer")
    ap.add_argument("--analyse-only", action="store_true", help="only analyse what --out holds")
    ap.add_argument(
        "--wrong",
        default="",
        help="more wrong answers to count, ROUND:MINER[,ROUND:MINER...] (a "
        "factually wrong answer planted under another kind)",
    )
    ap.add_argument(
        "--min-agreement",
        type=float,
        default=None,
        help="consensus.checks.factual_min_agreement for the analysis (default: the shipped value)",
    )
    args = ap.parse_args(argv)
    planted = json.loads(args.planted.read_text())
    rounds = _rounds(args.rounds)
    if args.analyse_only:
        data = json.loads(args.out.read_text())
    else:
        data = _measure(rounds, args.out, {p["round_id"] for p in planted if p["kind"] == "wrong"}, args.only_planted)
    also = dict(item.split(":", 1) for item in args.wrong.split(",") if item)
    _analyse(rounds, data, planted, args.min_agreement, also, args.cache)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
