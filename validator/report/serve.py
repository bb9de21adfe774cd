"""Serve a built report directory on loopback (``validator report --serve``).

Only ``127.0.0.1``: the report shows every miner's answers and emissions, so
it is never offered to the network. Files are served as they are, with the
same Content-Security-Policy the pages carry, ``nosniff`` and no directory
listings.
"""

from __future__ import annotations

import functools
import logging
import os
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

from validator.report.builder import CSP
from validator.terminal import safe

__all__ = ["make_server", "serve"]

log = logging.getLogger(__name__)
HOST = "127.0.0.1"


class _Handler(SimpleHTTPRequestHandler):
    def end_headers(self) -> None:
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def list_directory(self, path):  # noqa: ANN001 - the stdlib's signature
        self.send_error(404, "No directory listings")
        return None

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - the stdlib's name
        log.info("%s", safe(format % args, 300))


def make_server(directory: str | os.PathLike[str], port: int = 8000) -> ThreadingHTTPServer:
    """An HTTP server for ``directory`` on 127.0.0.1:``port`` (0: any free port), not yet serving."""
    handler = functools.partial(_Handler, directory=os.fspath(directory))
    server = ThreadingHTTPServer((HOST, port), handler)
    server.daemon_threads = True
    return server


def serve(directory: str | os.PathLike[str], port: int = 8000) -> None:
    """Serve ``directory`` until interrupted (Ctrl-C)."""
    with make_server(directory, port) as server:
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
