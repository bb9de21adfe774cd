"""Does the embedded llama.cpp server stop generating when its client gives up?

    python -m benchmarks.lm_abandon

On the embedded server (one slot): a long request (``max_tokens`` 400) is
abandoned by its client after 3 s (the client closes the connection), then
the server's ``/slots`` is polled: if the slot stops processing at once, the
server cancelled the abandoned request; if it keeps processing, it is
generating for nobody and the next request queues behind it. Measured for a
plain and a streamed request, with the seconds the slot stayed busy after the
client left (capped at ``--watch`` seconds). Prints one JSON object (docs/lm.md).
"""

from __future__ import annotations

import json
import os
import time
import urllib.request

LONG = {
    "messages": [{"role": "user", "content": "Count from 1 to 1000, one number per line."}],
    "max_tokens": 400,
    "temperature": 0,
}


def post(url: str, body: dict, timeout: float) -> bytes:
    req = urllib.request.Request(
        f"{url}/chat/completions", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return resp.read()


def slot_busy(url: str) -> bool | None:
    """Whether the server's slot is processing (None when /slots is not served)."""
    base = url.rsplit("/v1", 1)[0]
    try:
        with urllib.request.urlopen(f"{base}/slots", timeout=10) as resp:
            slots = json.loads(resp.read())
    except (OSError, ValueError):
        return None
    return any(s.get("is_processing") for s in slots)


def abandon(url: str, stream: bool, watch_s: float) -> dict:
    """Abandon a long request after 3 s; how long the slot stays busy after the client left."""
    req = urllib.request.Request(
        f"{url}/chat/completions",
        data=json.dumps({**LONG, "stream": stream}).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=3.0) as resp:
            deadline = time.monotonic() + 3.0
            while resp.read(64) and time.monotonic() < deadline:
                pass
    except (TimeoutError, OSError):
        pass
    left = time.monotonic()
    busy_at_leave = slot_busy(url)
    while time.monotonic() - left < watch_s:
        busy = slot_busy(url)
        if not busy:
            return {
                "busy_when_client_left": busy_at_leave,
                "busy_after_client_left_s": round(time.monotonic() - left, 1),
                "cancelled": busy is not None,
            }
        time.sleep(0.5)
    return {"busy_when_client_left": busy_at_leave, "busy_after_client_left_s": f">{watch_s:.0f}", "cancelled": False}


def main() -> None:
    import argparse

    from embedding.cache import default_cache_dir
    from lm.embedded import LocalServer

    p = argparse.ArgumentParser(prog="python -m benchmarks.lm_abandon")
    p.add_argument("--watch", type=float, default=60.0, help="seconds to watch the slot after the client left")
    args = p.parse_args()
    with LocalServer(cache_dir=default_cache_dir()) as server:
        url = server.endpoint.url
        result = {"slots_served": slot_busy(url) is not None, "plain": abandon(url, stream=False, watch_s=args.watch)}
        while slot_busy(url):  # let the first finish before the second experiment
            time.sleep(1)
        result["stream"] = abandon(url, stream=True, watch_s=args.watch)
        result["load"] = "load average {:.1f} {:.1f} {:.1f}".format(*os.getloadavg())
    print(json.dumps(result))


if __name__ == "__main__":
    main()
