"""The unchanged replay (PYTHONPATH=<a checkout of 4d83129>, tests/golden/README.md) of one round with a scripted LM: polarity, reference, SelectIT."""

import json
import math
import sys
from pathlib import Path

from consensus.embed import load_embedder
from lm.client import Completion, TokenLogprob
from lm.config import LMConfig
from storage.local import LocalStore
from validator.replay import replay_file
from validator.round import LMHandle
from validator.settings import load_settings


class Scripted:
    name = "scripted"
    model = "scripted"

    def complete(self, messages, *, max_tokens, temperature=0.0, seed=None, top_logprobs=0, prefill=None):
        text = messages[-1]["content"]
        if "reply yes (affirmative)" in text:  # polarity: "no" answers say "not visible"
            answer = text.rsplit("Question:", 1)[0]
            p = 0.1 if ("not" in answer.lower() or "no" in answer.lower().split()) else 0.9
            top = (("yes", math.log(p)), ("no", math.log(1 - p)))
            token = "yes" if p > 0.5 else "no"
            return Completion(token, logprobs=(TokenLogprob(token, math.log(max(p, 1 - p)), top),))
        if top_logprobs:  # SelectIT rating
            top = (("4", math.log(0.7)), ("5", math.log(0.3)))
            return Completion("4", logprobs=(TokenLogprob("4", math.log(0.7), top),))
        if "answer_quality" in text or "ANSWER>>>" in text:
            answer = text.rsplit("<<<ANSWER", 1)[1].split("ANSWER>>>", 1)[0]
            quality = 2 if "visible" in answer and "not" not in answer else 4
            return Completion(json.dumps({"reasoning": "compared with the reference", "answer_quality": quality}))
        return Completion("A scripted narrative.")


line = json.loads(Path("examples/rounds.jsonl").read_text().splitlines()[1])
line["reference"] = "No: the Wall is far too narrow to be seen from the Moon with the naked eye."
src = Path(sys.argv[1]) / "rounds.jsonl"
src.parent.mkdir(parents=True, exist_ok=True)
src.write_text(json.dumps(line) + "\n")
settings = load_settings(
    None, env={"VALIDATOR_LM__ENABLED": "true", "VALIDATOR_LM__SELECTIT_CONFIDENCE": "true"}, dotenv_path=None
)
s = replay_file(
    src, LocalStore(Path(sys.argv[1]) / "out"), settings, load_embedder("onnx"), lm=LMHandle(Scripted(), LMConfig())
)
print(s.evaluated, s.failures)
