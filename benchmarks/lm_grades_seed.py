"""SelectIT k = 1 as the seed writes it: the rating prompt, the instruction and the response, no fence.

``../shared/seeds/selectit_token_scorer.md``, token-level self-reflection with one prompt::

    <rating prompt>
    Instruction: <instruction>
    Response: <response>
    The answer is:

and the score is sum(i * P(i)) over the rating tokens "1".."5" at the next token, renormalised over them
(``judge.selectit``: ``build_prompt``, ``PREFILL``, ``read_rating``, the first prompt of
``judge/rating_prompts.txt``). The prompt is cut as the seed cuts it: at ``max_length`` = 2048 tokens (the seed's
default), the response first, counted with the server's tokenizer when one is given.

This is the layout of the issue's first measurement (0.71 alone on 8 unseen instructions x 30 models), kept in
the lab to compare with the product's fenced grade (``benchmarks.lm_grade_scorer``: the answer quoted between markers as data,
evaluator-directed text named, the reference shown): what the fence costs or buys in ranking, and how far text in
the answer can steer each. The response is miner text read with no fence, so text in it addressed to the
evaluator reads as part of the prompt: **never a product prompt**. Role tokens are still stripped
(``build_prompt`` quotes the response). There is no reference in the seed's layout; a round's reference is ignored.
"""

from __future__ import annotations

from benchmarks.lm_grade_scorer import Grade, rate_prompt, rating_prompt
from judge.selectit import build_prompt, fit_prompt
from judge.tokens import CharTokenizer, Tokenizer
from lm.client import ChatClient

SEED_SCORER = "selectit-k1-seed-v1"  # part of every cached rating's key: never mixed with the fenced grade's
MAX_LENGTH = 2048  # the seed's max_length: tokens of the whole prompt, "The answer is:" included


def seed_prompt(instruction: str, answer: str, tokenizer: Tokenizer | None = None, max_length: int = MAX_LENGTH) -> str:
    """The user turn of the seed's k = 1 prompt; ``PREFILL`` ("The answer is:") follows as the assistant's words."""
    rp = rating_prompt()
    instruction, answer, _ = fit_prompt(rp, instruction, answer, tokenizer or CharTokenizer(), max_length)
    return build_prompt(rp, instruction, answer)


def seed_grade(
    client: ChatClient,
    instruction: str,
    answer: str,
    *,
    tokenizer: Tokenizer | None = None,
    max_length: int = MAX_LENGTH,
    top_logprobs: int = 20,
    min_mass: float = 0.05,
) -> Grade:
    """One answer's seed rating (one call, four generated tokens at most), or None with the reason."""
    if not answer.strip():
        return Grade(None, "empty answer")
    return rate_prompt(client, seed_prompt(instruction, answer, tokenizer, max_length), top_logprobs, min_mass)
