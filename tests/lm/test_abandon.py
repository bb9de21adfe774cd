"""A call the client gives up on does not keep the embedded LM's only slot busy (real llama.cpp server)."""

from __future__ import annotations

import json
import time
import urllib.request

import pytest

from lm.client import OpenAIChatClient
from lm.embedded import LocalServer
from lm.errors import LMError

pytestmark = pytest.mark.slow

LONG = [{"role": "user", "content": "Count from 1 to 1000, one number per line."}]


def slot_busy(server: LocalServer) -> bool:
    with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/slots", timeout=10) as resp:
        return any(s.get("is_processing") for s in json.loads(resp.read()))


def test_a_streamed_call_given_up_on_is_cancelled_on_the_server(local_lm):
    # the session's server (tests/conftest.py): one slot, as the embedded LM runs; a start of its own cost 20 s
    server = local_lm
    client = OpenAIChatClient(server.endpoint, timeout_s=3.0, stream=True)
    started = time.monotonic()
    with pytest.raises(LMError) as info:
        client.complete(LONG, max_tokens=400)
    assert info.value.kind == "timeout" and time.monotonic() - started < 30
    left = time.monotonic()
    while slot_busy(server) and time.monotonic() - left < 30:
        time.sleep(0.25)
    freed = time.monotonic() - left
    assert not slot_busy(server), "the server kept generating for a client that had left"
    # the slot serves the next call (it did not queue behind 400 tokens for nobody)
    answer = OpenAIChatClient(server.endpoint, timeout_s=120, stream=True).complete(
        [{"role": "user", "content": "Say OK."}], max_tokens=4
    )
    assert answer.text.strip() and answer.usage.completion_tokens > 0
    print(f"slot free {freed:.1f} s after the client left")
