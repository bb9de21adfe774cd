"""Measure how the LM can arbitrate between a right and a wrong short answer (lm.arbitrate; issue 25).

    HF_HUB_OFFLINE=1 nice -n 10 python -m benchmarks.arbitration examples/arbitration/pairs.jsonl \
        --out benchmarks/results/arbitration_pairs.json [--variants own,own-plain,yesno,pairwise] [--analyse-only]

Each line of the pairs file is a question, a right and a wrong short answer (``kind`` "wrong"), or two right ones
that the comparison rule calls different (``kind`` "both_right": a control, where deciding is a mistake). The
measuring pass asks the LM (SERVER_URL, else the embedded one; no cache: the timings are real calls), per pair and
variant, and saves every reply to ``--out`` after each pair (a second run measures only what is missing):

- ``own`` (shipped, ``lm.arbitrate.own_answer``): the LM's own short answer to the question, greedy, with the
  probability of the tokens that decide it (``lm.arbitrate.answer_confidence``); the side is the answer the rule
  (``consensus.fact_match.same_answer``) says it states;
- ``own-plain``: the same without "as an expert would. Write numbers in digits." in the prompt;
- ``yesno``: LM_SCORE's yes/no mode (``lm.yesno``) per answer, "Question: ... / Proposed answer: ... / Is the
  proposed answer correct?"; the side is the higher log-odds (calibration is monotone, so the shipped Platt fit
  changes no order; the table also shows the mean calibrated P(yes) of right and wrong answers);
- ``pairwise``: "Answer A / Answer B: which answer is correct? Reply with A or B", both orders (the right answer
  first, then second), P(A) against P(B) of the first token; the side is the mean log-odds of the two orders
  (``pairwise-both``: only when both orders agree).

The analysis prints, per variant and abstention threshold, how often the right answer wins, the wrong one wins,
the LM abstains, and how many controls it decided; then the rule the round uses (the LM's own answer at the
shipped threshold, whichever group is the larger). Seconds per call are the median of the calls measured (a
reply read back from a cache has no time).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from pathlib import Path

VARIANTS = ("own", "own-plain", "yesno", "pairwise")
PLAIN = (
    "Answer the question in at most eight words. Reply with the short answer only.\n\nQuestion: {q}\n\nShort answer:"
)
PAIRWISE = "Question: {q}\n\nAnswer A: {a}\nAnswer B: {b}\n\nWhich answer is correct? Reply with A or B only."


def _timed(client, messages, **params):
    t = time.perf_counter()
    out = client.complete(messages, **params)
    return out, round(time.perf_counter() - t, 3)


def _own(client, question: str, plain: bool) -> dict:
    from lm.arbitrate import ANSWER_TOKENS, TOP_LOGPROBS, own_answer_prompt

    prompt = PLAIN.format(q=question) if plain else own_answer_prompt(question)
    out, s = _timed(
        client,
        [{"role": "user", "content": prompt}],
        max_tokens=ANSWER_TOKENS,
        temperature=0.0,
        top_logprobs=TOP_LOGPROBS,
    )
    return {"text": out.text.strip(), "tokens": [[t.token, t.logprob] for t in out.logprobs or ()], "s": s}


def _yesno(client, question: str, answer: str) -> tuple[float | None, float]:
    from lm.yesno import NotYesNo, yes_no_probabilities, yesno_prompt

    content = yesno_prompt([f"Question: {question}", f"Proposed answer: {answer}"], "Is the proposed answer correct?")
    out, s = _timed(client, [{"role": "user", "content": content}], max_tokens=1, temperature=0.0, top_logprobs=20)
    try:
        return yes_no_probabilities(out.logprobs[0].top).log_odds, s
    except (NotYesNo, TypeError, IndexError):
        return None, s


def _pairwise(client, question: str, a: str, b: str) -> tuple[float, float]:
    out, s = _timed(
        client,
        [{"role": "user", "content": PAIRWISE.format(q=question, a=a, b=b)}],
        max_tokens=1,
        temperature=0.0,
        top_logprobs=20,
    )
    top = out.logprobs[0].top if out.logprobs else ()
    mass = {side: sum(math.exp(lp) for tok, lp in top if tok.strip().strip(".):").upper() == side) for side in "AB"}
    return math.log(max(mass["A"], 1e-12)) - math.log(max(mass["B"], 1e-12)), s


def _measure(pairs: list[dict], out: Path, variants: list[str]) -> dict:
    from validator.lm_session import open_client
    from validator.settings import load_settings

    config = load_settings(None, dotenv_path=None).lm_config()
    data: dict = json.loads(out.read_text()) if out.is_file() else {}
    with open_client(config, cache=False) as client:
        for p in pairs:
            row = data.setdefault(p["id"], {})
            q, right, wrong = p["question"], p["right"], p["wrong"]
            for v in variants:
                if v in row:
                    continue
                if v in ("own", "own-plain"):
                    row[v] = _own(client, q, plain=v == "own-plain")
                elif v == "yesno":
                    (zr, sr), (zw, sw) = _yesno(client, q, right), _yesno(client, q, wrong)
                    row[v] = {"right": zr, "wrong": zw, "s": [sr, sw]}
                elif v == "pairwise":
                    (z1, s1), (z2, s2) = _pairwise(client, q, right, wrong), _pairwise(client, q, wrong, right)
                    row[v] = {"right_first": z1, "right_second": -z2, "s": [s1, s2]}
                print(p["id"], v, {k: x for k, x in row[v].items() if k != "tokens"}, flush=True)
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_text(json.dumps(data, indent=1, ensure_ascii=False))  # after every call: resumable
    return data


def _side_of_own(row: dict, p: dict) -> tuple[str | None, float]:
    """Which answer the LM's own answer states ("right", "wrong", None) and its confidence."""
    from consensus.fact_match import facts_of, same_answer
    from lm.arbitrate import answer_confidence
    from lm.client import TokenLogprob

    conf = answer_confidence([TokenLogprob(t, lp) for t, lp in row["tokens"]]) or 0.0
    own = facts_of(row["text"], p["question"])
    if not (own.numbers or own.words):
        return None, conf
    r = same_answer(own, facts_of(p["right"], p["question"]))
    w = same_answer(own, facts_of(p["wrong"], p["question"]))
    return ("right" if r and not w else "wrong" if w and not r else None), conf


def _decide(variant: str, threshold: float, row: dict, p: dict) -> str | None:
    """ "right" / "wrong" (the side the LM takes) or None (abstains); KeyError when not measured."""
    if variant in ("own", "own-plain"):
        side, conf = _side_of_own(row[variant], p)
        return side if conf >= threshold else None
    if variant == "yesno":
        zr, zw = row["yesno"]["right"], row["yesno"]["wrong"]
        if zr is None or zw is None:
            return None
        x = zr - zw
    elif variant == "pairwise-both":
        a, b = row["pairwise"]["right_first"], row["pairwise"]["right_second"]
        return "right" if a > threshold and b > threshold else "wrong" if a < -threshold and b < -threshold else None
    else:
        x = (row["pairwise"]["right_first"] + row["pairwise"]["right_second"]) / 2
    return "right" if x > threshold else "wrong" if x < -threshold else None


def _analyse(pairs: list[dict], data: dict) -> None:
    from lm.arbitrate import MIN_CONFIDENCE
    from lm.yesno import calibration_for

    grid = (
        [("own", t) for t in (0.0, 0.5, 0.6, 0.7, 0.8, 0.9)]
        + [("own-plain", t) for t in (0.0, 0.6, 0.8)]
        + [("yesno", m) for m in (0.0, 0.5, 1.0)]
        + [("pairwise", m) for m in (0.0, 0.5, 1.0)]
        + [("pairwise-both", 0.0)]
    )
    print(
        "| variant | abstain below | right/wrong pairs | right wins | wrong wins | abstains | controls decided | "
        "wrong wins, controls decided |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for variant, t in grid:
        n = right = wrong = abstain = ctrl_n = ctrl = 0
        misses = []
        for p in pairs:
            try:
                side = _decide(variant, t, data[p["id"]], p)
            except KeyError:
                continue
            if p["kind"] == "both_right":
                ctrl_n += 1
                ctrl += side is not None
                misses += [p["id"]] if side is not None else []
                continue
            n += 1
            right += side == "right"
            wrong += side == "wrong"
            abstain += side is None
            misses += [p["id"]] if side == "wrong" else []
        unit = "confidence" if variant.startswith("own") else "log-odds margin"
        print(
            f"| {variant} | {unit} {t:g} | {n} | {right} ({100 * right / max(n, 1):.0f}%) | {wrong} | {abstain} | "
            f"{ctrl} of {ctrl_n} | {', '.join(misses)} |"
        )
    cal = calibration_for("qwen2.5-coder-1.5b-instruct-q4_k_m")
    ps = {
        k: [
            cal.probability(data[p["id"]]["yesno"][k])
            for p in pairs
            if p["kind"] == "wrong" and data.get(p["id"], {}).get("yesno", {}).get(k) is not None
        ]
        for k in ("right", "wrong")
    }
    if ps["right"]:
        print(
            f"\nyesno, calibrated P(correct) (shipped 1.5B fit): right answers mean {statistics.mean(ps['right']):.2f}, "
            f"wrong answers mean {statistics.mean(ps['wrong']):.2f}"
        )
    # the round's rule: one threshold whichever group is the larger (a lone wrong answer leaves by the lone rule anyway)
    sides = [
        _decide("own", MIN_CONFIDENCE, data[p["id"]], p)
        for p in pairs
        if p["kind"] == "wrong" and "own" in data.get(p["id"], {})
    ]
    print(
        f"\nshipped rule (own answer, confidence >= {MIN_CONFIDENCE:g}), whichever group is the majority: the wrong "
        f"group removed in {sides.count('right')} pairs, the right group in {sides.count('wrong')}, abstained in "
        f"{sides.count(None)}"
    )
    for variant in VARIANTS:
        secs = [
            s
            for row in data.values()
            if variant in row
            for s in (row[variant]["s"] if isinstance(row[variant]["s"], list) else [row[variant]["s"]])
            if s
        ]
        if secs:
            print(f"{variant}: {len(secs)} calls, median {statistics.median(secs):.2f} s per call")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pairs", type=Path)
    ap.add_argument("--out", type=Path, default=Path("runs/arbitration_pairs.json"))
    ap.add_argument("--variants", default=",".join(VARIANTS), help=f"comma-separated, of {', '.join(VARIANTS)}")
    ap.add_argument("--analyse-only", action="store_true", help="only analyse what --out holds")
    args = ap.parse_args(argv)
    pairs = [json.loads(line) for line in args.pairs.read_text(encoding="utf-8").splitlines() if line.strip()]
    variants = [v for v in args.variants.split(",") if v]
    unknown = sorted(set(variants) - set(VARIANTS))
    if unknown:
        ap.error(f"unknown variants: {', '.join(unknown)}")
    data = json.loads(args.out.read_text()) if args.analyse_only else _measure(pairs, args.out, variants)
    _analyse(pairs, data)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
