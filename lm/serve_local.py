"""Run xllamacpp's llama.cpp HTTP server as its own process (started by ``lm.local.LocalServer``).

    python -m lm.serve_local MODEL.gguf --port P [--threads T] [--parallel N] [--ctx C] [--alias NAME]

Serves the OpenAI-compatible API on 127.0.0.1 until SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import signal
import threading


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lm.serve_local")
    parser.add_argument("model")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--parallel", type=int, default=1)
    parser.add_argument("--ctx", type=int, default=8192, help="total context, shared by the slots")
    parser.add_argument("--alias", default=None)
    args = parser.parse_args(argv)

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
