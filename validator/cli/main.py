"""Entry point of the ``validator`` console script: one parser, one module per subcommand."""

from __future__ import annotations

import argparse
import gc
import logging
import os
import sys
import warnings
from typing import NoReturn, TextIO

from consensus.params import ConfigDeprecationWarning
from validator import __version__
from validator.cli import daemon, judge, lm, prepare, replay, report, round, selectit, weights, whatif
from validator.settings import prefer_offline_hub, quiet_hub_progress


def build_parser() -> argparse.ArgumentParser:

    parser = argparse.ArgumentParser(
        prog="validator",
        description="Consensus evaluator for miner/validator networks: who agrees, who is an outlier, "
        "a copy or junk, and how a round's emissions are split.",
        epilog="Settings: --config FILE (TOML), then .env, then VALIDATOR_<SECTION>__<FIELD> variables "
        "(and the seed's names: SERVER_URL, MODEL, ...). See docs/configuration.md.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    # in the order an operator meets them: run rounds, read their weights and report, then the offline tools
    for command in (daemon, round, weights, report, replay, whatif, prepare, lm, judge, selectit):
        command.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:

    prefer_offline_hub()
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    if args.command is None:
        parser.print_help()
        return 2
    if getattr(args, "no_progress", False):
        quiet_model_loading()
    try:
        return int(args.run(args) or 0)
    finally:
        _finish_threads()


def quiet_model_loading() -> None:
    """``--no-progress`` silences the libraries' bars too: the Hugging Face hub's and transformers' (its
    "Loading weights" bar when the embedding model is exported on a cold cache). The hub's variable is read when
    transformers is imported; one imported already (the background imports) is told directly."""
    quiet_hub_progress()
    for name in ("huggingface_hub.utils", "transformers.utils.logging"):
        module = sys.modules.get(name)
        disable = getattr(module, "disable_progress_bars", None) or getattr(module, "disable_progress_bar", None)
        if disable is not None:
            disable()


def _finish_threads() -> None:
    """Every exit path, in order: the background imports (``embedding.warmup``) end before the interpreter
    shuts down, so nothing prints a traceback after a command's clean one-line error."""
    warmup = sys.modules.get("embedding.warmup")
    if warmup is not None:
        warmup.finish()


def run(argv: list[str] | None = None) -> NoReturn:
    """The ``validator`` program: ``main``, then exit without the interpreter's last garbage collections.

    When a process ends, Python collects the whole heap again while it unloads
    every module; after a replay (scikit-learn, SciPy, matplotlib and the
    embedding runtime loaded) that took 0.45 s of an 18 s command, all of it
    after the last record was written (docs/performance.md). ``gc.freeze()``
    leaves every object alive at that point out of those collections. Modules
    still unload, objects are still freed by reference count, and ``atexit``
    handlers and ``weakref.finalize`` callbacks still run; only objects held in
    reference cycles are left to the end of the process (every store write and
    log handler is closed or flushed by then). Tests call ``main`` in-process
    and never get here.
    """
    _config_warnings_as_lines(argv if argv is not None else sys.argv[1:])
    try:
        code = main(argv)
        sys.stdout.flush()
    except BrokenPipeError:  # `validator weights show STORE | head`: the reader left; no traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the interpreter's last flush goes nowhere
        code = 141  # 128 + SIGPIPE, as a shell reports a program a pipe ended
    gc.freeze()
    sys.exit(code)


def _config_warnings_as_lines(argv: list[str]) -> None:
    """A deprecated setting is said as the program's own line (``validator whatif: warning: ...``), not in the
    warnings module's ``settings:0: ConfigDeprecationWarning: ...`` form. Only the program does this; ``main``
    leaves warnings alone, so tests that call it still capture them."""

    words = [a for a in argv[:2] if not a.startswith("-")]  # "whatif", or a command's action: "weights show"
    prog = " ".join(["validator", *words[: 2 if words[:1] in (["weights"], ["lm"]) else 1]])
    shown = warnings.showwarning

    def show(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        if issubclass(category, ConfigDeprecationWarning):
            print(f"{prog}: warning: {message}", file=file or sys.stderr)
        else:
            shown(message, category, filename, lineno, file, line)

    warnings.showwarning = show


if __name__ == "__main__":
    run()
