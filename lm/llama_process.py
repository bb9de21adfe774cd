"""Run xllamacpp's llama.cpp HTTP server as its own process (started by ``lm.embedded.LocalServer``).

    python -m lm.llama_process MODEL.gguf --port P [--threads T] [--parallel N] [--ctx C] [--alias NAME]
                             [--exit-on-stdin-eof]

Serves the OpenAI-compatible API on 127.0.0.1 until SIGTERM or SIGINT. With
``--exit-on-stdin-eof`` it also exits the moment its stdin reaches end of
file: ``LocalServer`` holds the other end of that pipe, and the kernel closes
it when the parent dies in any way (SIGKILL included), so the server never
outlives the process that started it. (A parent-death signal would fire when
the *thread* that forked exits, which is wrong for a server started from a
worker thread; a pipe follows the process.)
"""

from __future__ import annotations

import argparse
import os
import signal
import threading


def _exit_when_stdin_closes() -> None:
    """Block until stdin hits EOF (the parent closed the pipe or died), then end the process at once."""
    try:
        while os.read(0, 4096):
            pass
    finally:
        os._exit(0)  # no cleanup to do: an orphaned server has nobody to answer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lm.llama_process")
    parser.add_argument("model")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--parallel", type=int, default=1)
    parser.add_argument("--ctx", type=int, default=8192, help="total context, shared by the slots")
    parser.add_argument("--alias", default=None)
    parser.add_argument(
        "--chat-template", default="", help="a llama.cpp built-in chat template, for a GGUF that carries none"
    )
    parser.add_argument(
        "--exit-on-stdin-eof",
        action="store_true",
        help="exit when stdin is closed (the parent's end of a pipe: set by LocalServer)",
    )
    args = parser.parse_args(argv)
    if args.exit_on_stdin_eof:  # watch before loading the model: a parent may die during the load
        threading.Thread(target=_exit_when_stdin_closes, name="parent-watch", daemon=True).start()

    # lazy: start-up cost, xllamacpp takes 0.1 s to import
    import xllamacpp as xlc

    params = xlc.CommonParams()
    params.model.path = args.model
    params.hostnames = ["127.0.0.1"]  # loopback only
    params.port = args.port
    params.n_ctx = args.ctx
    params.n_parallel = args.parallel
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.n_batch = 512
    params.n_ubatch = 512
    if args.chat_template:  # a built-in name is read by llama.cpp's own formatter, not as a Jinja template
        params.use_jinja = False
        params.chat_template = args.chat_template
    if args.alias:
        params.model_alias = {args.alias}
    server = xlc.Server(params)  # loads the model and serves on background threads
    print(f"listening on {server.listening_address}", flush=True)

    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    while not stop.is_set():
        stop.wait(0.5)
    del server
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
