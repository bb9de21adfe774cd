"""The daemon: round after round, ask the miners, evaluate, pay, persist; and (``chain``) its chain loop.

daemon.py            the loop and its commit points
state.py, lease.py   its ledger and tick in the store; one daemon per store
tick.py              a tick's committees asked at once
committee_draw.py, committee_secret.py, task_source.py   who answers what, from the secret
round_line.py        the line printed per round
prometheus.py        its metrics on loopback
chain/               chain mode: the metagraph's miners, signed requests, weights on chain
"""
