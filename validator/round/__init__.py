"""One round's evaluation, whoever drives it: signals -> evaluate once -> allocate -> render -> narrate.

evaluate.py           the unit of work every driver calls: a stored round in, its record out
stages.py             its stages, each once: signals -> evaluate -> allocate -> render -> narrate
gather_evidence.py    the edges' evidence (similarities, the LM's checks) gathered in one pass before the pure core
narration.py          the narrative: the LM's within a budget, the template otherwise
canaries.py           known-answer prompts and their judgement
task_verification.py  a task round's verifier verdicts
prompt_source.py      prompt files (JSONL, CSV, qna.yaml), cycled
embed_ahead.py        the next round embedded while this one is evaluated (replay)
"""
