"""Run the unchanged daemon (PYTHONPATH=<a checkout of 4d83129>, tests/golden/README.md) for two rounds: one ok (one miner failed), one below quorum."""

import sys

from consensus.embed import load_embedder
from consensus.types import Response
from storage.local import LocalStore
from validator.daemon import Daemon, QueryResult
from validator.prompts import PromptItem
from validator.settings import load_settings

ANSWERS = {
    "alice": "Yes. Python lists are mutable: you can change, append and remove elements in place.",
    "bob": "Yes, lists in Python are mutable, so their elements can be modified after creation.",
    "carol": "Yes - a Python list is a mutable sequence; items can be reassigned, added or deleted.",
    "dave": "Yes. Lists are mutable objects in Python, unlike tuples, so you can modify them in place.",
    "erin": "",
}
calls = []


def query(prompt):
    calls.append(prompt)
    responses, details = [], {}
    for i, (miner, text) in enumerate(ANSWERS.items()):
        if miner == "erin" or (len(calls) == 2 and miner != "alice"):
            responses.append(Response(miner, "", 1.0, error="timeout"))
            details[miner] = "timeout (no answer within 30 s)"
        else:
            responses.append(Response(miner, text, 0.5 + 0.1 * i, 0.8 if miner == "bob" else None))
    return QueryResult(tuple(responses), details, 0.01)


settings = load_settings(None, env={"VALIDATOR_DAEMON__INTERVAL_S": "0"}, dotenv_path=None)
daemon = Daemon(
    store=LocalStore(sys.argv[1]),
    embedder=load_embedder("onnx"),
    settings=settings,
    prompts=(PromptItem("Is Python's list type mutable?", "Yes, lists are mutable."), PromptItem("Second prompt?")),
    query=query,
    clock=lambda: 1_790_000_000.0,
)
for r in daemon.run(rounds=2):
    print(r.line())
