"""Entry point of the ``validator`` console script."""

from __future__ import annotations

import argparse
import logging
import os
import sys

from validator import __version__


def build_parser() -> argparse.ArgumentParser:
    from validator.cli import daemon, lm, prepare, replay
    from validator.cli import judge
    from validator.cli import report

    parser = argparse.ArgumentParser(
        prog="validator",
        description="Consensus evaluator for miner/validator networks: who agrees, who is an outlier, "
                    "a copy or junk, and how a round's emissions are split.",
        epilog="Settings: --config FILE (TOML), then .env, then VALIDATOR_<SECTION>__<FIELD> variables. "
               "See docs/configuration.md.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    replay.add_parser(sub)
    prepare.add_parser(sub)
    lm.add_parser(sub)
    daemon.add_parser(sub)
    judge.add_parsers(sub)
    report.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    if args.command is None:
        parser.print_help()
        return 2
    return int(args.run(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
