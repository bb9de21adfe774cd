"""``validator report STORE``: build the static review site of a store's rounds; ``--serve`` it on loopback."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tqdm import tqdm

from consensus.errors import ConfigError
from storage import StoreError
from validator.app import store_for
from validator.cli.common import add_command, unwritable
from validator.records.whatif_report import WhatIfFile
from validator.review import load_store
from validator.settings import load_settings
from validator.terminal import safe

ABOUT = """\
build an HTML report of the rounds in a store (and serve it on loopback)

Reads every evaluated round in STORE (a directory written by `validator replay` or
`validator daemon`, file://..., s3://bucket/prefix) and writes a static site to --out:
  index.html  the rounds (time, prompt, consensus score, reached, miners, failures;
              click a header to sort, type to filter) and the miners
  round/...   per round: heatmap, each response's score and parts, in/out and the reason,
              emissions, latency, the answers, the narrative
  miner/...   per miner: scores, consensus rate and emissions across rounds
Miner texts are escaped and the pages run no inline script. Open OUT/index.html, or add
--serve (127.0.0.1 only). Without STORE, --serve serves an already built --out.
"""

EPILOG = """\
examples:  validator report runs/replay --out runs/report
           validator report s3://bucket/validator --serve --port 8765
           validator report --serve --out runs/report"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = add_command(sub, "report", ABOUT, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "store",
        metavar="STORE",
        nargs="?",
        default=None,
        help="store URI or directory with rounds/ (omit with --serve to serve a built --out)",
    )
    p.add_argument(
        "--out", type=Path, default=Path("runs/report"), help="output directory of the site (default: runs/report)"
    )
    p.add_argument("--serve", action="store_true", help="then serve the site on http://127.0.0.1:PORT/ until Ctrl-C")
    p.add_argument("--port", type=int, default=8000, help="port for --serve (default: 8000; 0 picks a free one)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument(
        "--whatif",
        type=Path,
        default=None,
        help="a whatif.json of `validator whatif` to show on whatif.html (default: STORE/whatif.json "
        "when STORE is a directory holding one)",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.store is None and not args.serve:
        print("validator report: give a STORE to build from, or --serve to serve a built --out", file=sys.stderr)
        return 2
    if not 0 <= args.port <= 65535:
        print(f"validator report: --port must be 0..65535, got {args.port}", file=sys.stderr)
        return 2
    if args.store is not None:
        code = _build(args)
        if code:
            return code
    elif not (args.out / "index.html").is_file():
        print(
            f"validator report: {safe(str(args.out), 200)} holds no built report (no index.html); "
            "give a STORE to build one",
            file=sys.stderr,
        )
        return 2
    if args.serve:
        return _serve(args)
    return 0


def _build(args: argparse.Namespace) -> int:
    # lazy: start-up cost, jinja2 (through validator.report) takes 0.22 s to import
    from validator.report import build_report

    source = args.store
    if "://" not in source and not Path(source).is_dir():
        print(f"validator report: {safe(source, 200)} is not a directory or a store URI", file=sys.stderr)
        return 2
    try:
        store = store_for(source, load_settings())  # an s3:// store is reached with the [s3] settings
        review = load_store(store)
    except (ConfigError, StoreError, ValueError) as exc:
        print(f"validator report: cannot read {safe(source, 200)}: {safe(str(exc), 600)}", file=sys.stderr)
        return 2
    if not review.rounds:
        print(f"validator report: no evaluated rounds in {safe(source, 200)}", file=sys.stderr)
        return 1

    if (why := unwritable(args.out)) is not None:  # before the pages, with no progress bar on the line
        print(f"validator report: {why}", file=sys.stderr)
        return 2

    try:
        whatif = _whatif(args)
    except (OSError, ValueError) as exc:
        print(f"validator report: --whatif: {safe(str(exc), 300)}", file=sys.stderr)
        return 2
    pages = 1 + len(review.rounds) + len(review.miners())
    error = ""
    with tqdm(total=pages, unit="page", disable=args.no_progress, file=sys.stderr) as bar:
        try:
            result = build_report(
                store, args.out, source=source, review=review, on_page=lambda: bar.update(1), whatif=whatif
            )
        except StoreError as exc:
            error = f"cannot read {safe(source, 200)}: {safe(str(exc), 600)}"
        except OSError as exc:  # the site's directory: a path through a file, no permission, a full disk
            error = f"cannot write the site to {safe(str(args.out), 200)}: {exc.strerror or exc}"
    if error:  # said once the bar is closed, on a line of its own
        print(f"validator report: {error}", file=sys.stderr)
        return 2
    for s in result.skipped:
        print(f"skipped {safe(s.key, 120)}: {safe(s.reason, 200)}", file=sys.stderr)
    print(
        f"{result.rounds} round(s), {result.miners} miner(s), {result.files} file(s) in {result.seconds:.1f} s: "
        f"{safe(str(result.index), 300)}"
    )
    if whatif is not None:
        print(f"what-if: {safe(str(args.out / 'whatif.html'), 300)}")
    return 0


def _whatif(args: argparse.Namespace) -> dict | None:
    """The what-if document to show: --whatif, else STORE/whatif.json of a directory store, else None."""

    path = args.whatif
    if path is None and "://" not in args.store and (Path(args.store) / "whatif.json").is_file():
        path = Path(args.store) / "whatif.json"
    if path is None:
        return None

    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ValueError(f"{path}: not JSON ({exc})") from None
    return WhatIfFile.from_json(
        doc, str(path)
    ).to_json()  # read through its typed model (validator.records.whatif_report)


def _serve(args: argparse.Namespace) -> int:
    # lazy: start-up cost, jinja2 (through validator.report.serve) takes 0.22 s to import
    from validator.report.serve import make_server

    try:
        server = make_server(args.out, args.port)
    except OSError as exc:
        print(f"validator report: cannot listen on 127.0.0.1:{args.port}: {exc}", file=sys.stderr)
        return 2
    with server:
        print(
            f"serving {safe(str(args.out), 200)} on http://127.0.0.1:{server.server_address[1]}/index.html "
            "(Ctrl-C to stop)",
            flush=True,
        )
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
    return 0
