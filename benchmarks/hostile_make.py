"""Write the generated texts of the hostile cases: derived copies and the embedded LM's paraphrases.

    python -m benchmarks.hostile_make derive                 # recompute every derived text from its made_by
    python -m benchmarks.hostile_make cases [--server-url URL] [--force]
    python -m benchmarks.hostile_make sybil ROUNDS [--source d15] [--rounds-n 20] [--server-url URL]

The case files (``benchmarks/hostile_cases/*.json``) keep every text literally; this script is how
the computed and generated ones got there, run once and committed with its output:

- ``derive`` rewrites each response whose ``made_by`` names a transform of ``benchmarks.attacks``
  (zero-width characters, homoglyphs, unions, blends, copy plus a paragraph);
- ``cases`` asks the LM for each response whose ``made_by`` op is ``llm_paraphrase`` and whose
  text is empty (``--force``: all of them) and stores the text with how it was made (model, the
  LM's notes of the source, style, seed, seconds, tokens, word overlap with the source);
- ``sybil`` rewrites one miner's answers in a seeded subset of a rounds file's rounds, five
  styles each (the five identities of ``benchmarks.sybil_sets``' LLM group), into
  ``hostile_cases/sybil_paraphrases.json``; it resumes where a previous run stopped.

How the LM is asked (``generation_record``, stored in ``hostile_cases/GENERATION.json``): first
it takes notes of the source's facts (temperature 0), then it answers the round's prompt from the
notes alone in one of six styles (temperature 0.8, a seed per text). The LM is the embedded one
(Qwen2.5-Coder-1.5B-Instruct Q4_K_M on llama.cpp; docs/lm.md), started here unless
``--server-url`` points at a running server (``validator lm serve``). It is CPU-only and slow (the
seconds of every text are stored with it): run this under ``nice``.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import random
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchmarks.attacks import derive, jaccard
from benchmarks.hostile_spec import CASES_DIR, case_files, dump_json, read_case_json

# Two steps, as an attacker with a small model would do it: the 1.5B model asked to "rewrite in your own
# words" returned long answers nearly verbatim (word overlap 0.82-0.97 on a 436-word answer, 3 of 4 tries),
# so it first takes notes of the facts (temperature 0, once per source), then writes an answer to the
# prompt from the notes alone, in one of six styles (one per identity).
EXTRACT = (
    "Extract every fact, number, name and piece of advice from the answer below as a terse bullet list of "
    "notes: keywords and numbers, not full sentences. Keep all of them.\n\nAnswer:\n{text}"
)
WRITE_SYSTEM = "You are an expert who answers questions in your own words."
WRITE = (
    "Question: {prompt}\n\nAnswer the question using the facts in these notes. {style} Write full sentences "
    "of your own; do not mention the notes.\n\nNotes:\n{notes}"
)
STYLES = (
    "Write it as a few paragraphs of clear prose.",
    "Write it in a casual, friendly tone, as if talking to a friend.",
    "Write it in a formal, textbook style.",
    "Write it as one short, dense paragraph.",
    "Write it as a numbered list with one sentence per item.",
    "Start with the conclusion, then give the details.",
)
TEMPERATURE = 0.8
MAX_TOKENS = 1200
NOTES_MAX_TOKENS = 600
GENERATION = CASES_DIR / "GENERATION.json"
SYBIL_FILE = CASES_DIR / "sybil_paraphrases.json"


def generation_record(model: str) -> dict[str, Any]:
    """How every paraphrase was asked for (stored once, next to the data)."""
    return {
        "model": model,
        "server": "llama.cpp (xllamacpp), the embedded LM of lm/embedded.py (validator lm serve)",
        "steps": [
            {"user": EXTRACT, "temperature": 0.0, "max_tokens": NOTES_MAX_TOKENS, "seed": 0},
            {
                "system": WRITE_SYSTEM,
                "user": WRITE,
                "temperature": TEMPERATURE,
                "max_tokens": MAX_TOKENS,
                "seed": "given per text",
            },
        ],
        "styles": list(STYLES),
        "note": "llama.cpp's sampling seed; the texts are stored, not regenerated on each run",
    }


def take_notes(client: Any, text: str) -> tuple[str, float]:
    """The LM's notes of the facts in ``text`` (temperature 0) and the seconds they took."""
    t = time.perf_counter()
    out = client.complete(
        [{"role": "user", "content": EXTRACT.format(text=text)}], max_tokens=NOTES_MAX_TOKENS, temperature=0.0, seed=0
    )
    return out.text.strip(), time.perf_counter() - t


def paraphrase(client: Any, prompt: str, text: str, notes: str, style: int, seed: int) -> dict[str, Any]:
    """One answer to ``prompt`` written from ``notes`` (of ``text``) in ``STYLES[style]``, and what it cost."""
    t = time.perf_counter()
    user = WRITE.format(prompt=prompt, style=STYLES[style], notes=notes)
    out = client.complete(
        [{"role": "system", "content": WRITE_SYSTEM}, {"role": "user", "content": user}],
        max_tokens=MAX_TOKENS,
        temperature=TEMPERATURE,
        seed=seed,
    )
    seconds = time.perf_counter() - t
    return {
        "text": out.text.strip(),
        "seconds": round(seconds, 1),
        "completion_tokens": out.usage.completion_tokens,
        "finish_reason": out.finish_reason,
        "jaccard": round(jaccard(text, out.text), 3),
    }


def _model_name(client: Any) -> str:
    try:
        return client._client.models.list().data[0].id  # llama.cpp reports the alias the server was given
    except Exception:  # noqa: BLE001 - only a label for the record
        return getattr(client, "model", "unknown")


@dataclasses.dataclass
class Opened:
    client: Any
    model: str


@contextlib.contextmanager
def _open(server_url: str | None) -> Iterator[Opened]:
    from validator.lm_session import open_client
    from validator.settings import load_settings

    env = {"VALIDATOR_LM_CLIENT__TIMEOUT_S": "900"}  # a long answer on 2 loaded cores takes minutes
    if server_url:
        env["SERVER_URL"] = server_url
    settings = load_settings(None, env=env, dotenv_path=None)
    with open_client(settings.lm_config(), cache=False) as client:
        yield Opened(client, _model_name(client))


def cmd_derive(_: argparse.Namespace) -> int:
    changed = 0
    for path, data in case_files():
        texts = {r["miner"]: r["text"] for r in data["round"]["responses"]}
        for r in data["round"]["responses"]:
            made = data.get("made_by", {}).get(r["miner"])
            if made is None:
                continue
            text = derive(made, texts)
            if text is not None and text != r["text"]:
                r["text"] = text
                texts[r["miner"]] = text
                changed += 1
        path.write_text(dump_json(data), encoding="utf-8")
    print(f"derived texts rewritten: {changed}")
    return 0


def cmd_cases(args: argparse.Namespace) -> int:
    todo = []
    for path, data in case_files():
        for r in data["round"]["responses"]:
            made = data.get("made_by", {}).get(r["miner"])
            if made and made["op"] == "llm_paraphrase" and (args.force or not r["text"]):
                todo.append((path, r["miner"]))
    print(f"{len(todo)} paraphrases to write", file=sys.stderr)
    if not todo:
        return 0
    notes: dict[str, tuple[str, float]] = {}  # source text -> (notes, seconds): one set per source
    with _open(args.server_url) as lm:
        GENERATION.write_text(dump_json(generation_record(lm.model)), encoding="utf-8")
        for path, miner in todo:
            data = read_case_json(path)
            texts = {r["miner"]: r["text"] for r in data["round"]["responses"]}
            made = data["made_by"][miner]
            source = texts[made["from"]]
            if source not in notes:
                notes[source] = take_notes(lm.client, source)
            got = paraphrase(lm.client, data["round"]["prompt"], source, notes[source][0], made["style"], made["seed"])
            made.update(
                {k: v for k, v in got.items() if k != "text"},
                model=lm.model,
                notes=notes[source][0],
                notes_seconds=round(notes[source][1], 1),
            )
            for r in data["round"]["responses"]:
                if r["miner"] == miner:
                    r["text"] = got["text"]
            path.write_text(dump_json(data), encoding="utf-8")  # after each text: a stopped run resumes
            print(
                f"{path.name} {miner}: {got['seconds']} s, {got['completion_tokens']} tokens, jaccard {got['jaccard']}",
                file=sys.stderr,
                flush=True,
            )
    return 0


def sybil_rounds(n_rounds: int, total: int, seed: int) -> list[int]:
    """The seeded subset of round positions the LLM group answers in (sorted)."""
    return sorted(random.Random(seed).sample(range(total), min(n_rounds, total)))


def cmd_sybil(args: argparse.Namespace) -> int:
    from benchmarks.data import read_rounds

    rounds = read_rounds(args.rounds)
    picked = sybil_rounds(args.rounds_n, len(rounds), args.seed)
    out = (
        json.loads(SYBIL_FILE.read_text(encoding="utf-8"))
        if SYBIL_FILE.exists()
        else {"source": args.source, "rounds_file": args.rounds.name, "seed": args.seed, "rounds": {}}
    )
    if out["source"] != args.source:
        print(f"{SYBIL_FILE} holds paraphrases of {out['source']}, not {args.source}", file=sys.stderr)
        return 2
    with _open(args.server_url) as lm:
        out["generation"] = generation_record(lm.model)
        for pos in picked:
            r = rounds[pos]
            base = next(x for x in r.responses if x.miner == args.source)
            entry = out["rounds"].setdefault(r.prompt, {"position": pos, "source_text": base.text, "paraphrases": []})
            if "notes" not in entry:
                entry["notes"], seconds = take_notes(lm.client, base.text)
                entry["notes_seconds"] = round(seconds, 1)
            while len(entry["paraphrases"]) < 5:
                k = len(entry["paraphrases"])
                seed = 2000 + 10 * pos + k
                got = paraphrase(lm.client, r.prompt, base.text, entry["notes"], k, seed)
                entry["paraphrases"].append({"style": k, "seed": seed, **got})
                SYBIL_FILE.write_text(dump_json(out), encoding="utf-8")
                print(
                    f"round {pos} ({len(base.text.split())} words) style {k}: {got['seconds']} s, "
                    f"{got['completion_tokens']} tokens, jaccard {got['jaccard']}",
                    file=sys.stderr,
                    flush=True,
                )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.hostile_make", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("derive", help="recompute every derived text of the case files").set_defaults(run=cmd_derive)
    c = sub.add_parser("cases", help="write the LLM paraphrases the case files ask for")
    c.add_argument(
        "--server-url", default=None, help="a running OpenAI-compatible server (default: start the embedded LM)"
    )
    c.add_argument("--force", action="store_true", help="rewrite paraphrases that already have a text")
    c.set_defaults(run=cmd_cases)
    s = sub.add_parser("sybil", help="paraphrase one miner's answers in a subset of a rounds file, 5 styles each")
    s.add_argument("rounds", type=Path)
    s.add_argument("--source", default="d15", help="the miner whose answers are paraphrased (default d15)")
    s.add_argument("--rounds-n", type=int, default=20, help="how many rounds (seeded subset; default 20)")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--server-url", default=None)
    s.set_defaults(run=cmd_sybil)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
