"""``validator round``: ask the miners one prompt now, evaluate, and print a readable summary."""

from __future__ import annotations

import argparse
import time

from consensus.types import Round
from embedding.warmup import preload
from validator.cli.common import add_command, add_round_args, app_errors, check_miners_file, fail, load_round
from validator.daemon.round_line import unreached_why
from validator.records.evaluation_record import RoundRecord
from validator.records.writer import RoundWriter
from validator.review.unpaid import round_closing
from validator.round.evaluate import evaluate_stored
from validator.terminal import Progress, safe

ABOUT = """\
run one round now against the miners and print a readable summary

Asks every miner PROMPT once, evaluates the answers and prints who agreed, who failed and why, the scores and
the emissions. Stores nothing unless --store.
"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    r = add_command(sub, "round", ABOUT)
    r.add_argument("--prompt", required=True, help="the prompt to send")
    r.add_argument("--reference", default=None, help="a known-good answer, kept in the record")
    r.add_argument("--store", default=None, help="also store the round (directory or s3://bucket/prefix)")
    add_round_args(r, "true for a round")
    r.set_defaults(run=run_round_cmd)


def run_round_cmd(args: argparse.Namespace) -> int:

    # lazy: looked up at each call, tests replace validator.app.open_app
    from validator.app import open_app

    try:
        preload()
        # without --store no heatmap is written: none is drawn, so neither the record nor the
        # narrative points at one
        settings, env = load_round(args, None if args.store else {"output": {"heatmap": False}})
        miners = check_miners_file(args, settings, env)  # before the store is touched or any server starts
        # a round takes a minute on the embedded defaults (servers, miners, the LM's checks): never silent
        with (
            Progress() as progress,
            open_app(
                settings,
                env,
                store=args.store,
                durable_store=True,
                miners_file=miners,
                on_progress=progress.later,
            ) as app,
        ):
            progress("querying miners")
            result = app.miners.query(args.prompt, on_done=lambda k, n: progress(f"{k}/{n} miners done"))
            rid = time.strftime("adhoc-%Y%m%dT%H%M%SZ", time.gmtime(app.clock()))
            # its failures' details, no daemon marker: not one of the daemon's rounds
            stored = round_ = Round(rid, args.prompt, result.responses, args.reference, result.details)
            progress("evaluating (embeddings, the LM's checks, scores)" if app.lm else "evaluating")
            record, outcome = evaluate_stored(stored, settings, app.embedder, lm=app.lm, nli=app.nli)
            if app.store is not None:
                progress("storing")
                writer = RoundWriter(app.store, app.embedder)
                writer.write_input(stored)
                record = writer.write(stored, record, outcome)
    except app_errors() as exc:
        return fail("round", exc)
    print(summarise(record, round_, result.seconds))
    print(round_closing(record, {r.miner: r.text for r in round_.responses}, args.store))
    return 0


def summarise(record: RoundRecord, round_, query_seconds: float) -> str:
    """A round record as text for a terminal (miner text escaped and cut)."""
    lines = [f"round {safe(record.round_id, 40)}: {safe(record.prompt, 100)}"]
    c = record.consensus
    if not record.evaluated:
        lines.append(f"NO QUORUM: {c.note}; nobody is paid")
    else:
        why = unreached_why(c)
        lines.append(
            f"consensus {c.score:.3f} ({'reached' if c.reached else 'not reached'}"
            f"{f': {why}' if why else ''}, threshold "
            f"{c.threshold}); paid {record.emissions.total:,} of the pool's {record.emissions.pool:,} "
            f"units; miners asked in "
            f"{query_seconds:.1f} s"
        )
    lines.append(f"  {'miner':<20} {'status':<16} {'score':>6} {'paid':>7} {'latency':>8}  answer / failure")
    for r in sorted(record.responses, key=lambda r: (-r.score.composite, r.index)):
        status = "in consensus" if r.in_consensus else (r.error or r.reason)
        shown = (r.detail or r.error) if r.error else round_.responses[r.index].text
        lines.append(
            f"  {safe(r.miner, 20):<20} {safe(status, 16):<16} {r.score.composite:>6.1f} "
            f"{r.emissions.amount:>7,} {r.latency_s:>7.2f}s  {safe(shown or '', 60)}"
        )
    if record.narrative.text:
        lines.append("")
        lines.extend(safe(line, 400) for line in record.narrative.text.splitlines())
    return "\n".join(lines)
