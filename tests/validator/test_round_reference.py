"""A round with a long reference through ``run_stages`` (session 19, issue 38): the prompt's own cosine to the reference
reaches the core, and a lister of what the reference forbids leaves."""

from __future__ import annotations

from consensus.types import Response, Round
from validator.round.stages import run_stages
from validator.settings import load_settings

PROMPT = "How should I treat a minor burn at home?"
REFERENCE = (
    "Cool the burn under cool running water for 20 minutes. Take off rings, watches or tight clothing near it before "
    "it swells. Cover it loosely with cling film or a clean non-fluffy dressing. Do not put ice, butter or creams on "
    "it. Take paracetamol or ibuprofen for the pain, and see a doctor if it is larger than your palm or blisters badly."
)
ANSWERS = {
    "full": "Hold it under cool running water for 20 minutes and take off rings or a watch before it swells. Cover it "
    "loosely with cling film or a clean non-fluffy dressing. Don't use ice, butter or creams. Paracetamol or "
    "ibuprofen helps with the pain; see a doctor if it is larger than your palm or blisters badly.",
    "terse": "Run cool tap water over it for twenty minutes. Remove jewellery before swelling starts. Lay cling film "
    "over it and take ibuprofen. Skip ice and butter. If it blisters a lot or is larger than your palm, see a doctor.",
    "steps": "Cool the burn under running water for 20 minutes, take off rings and tight clothing, cover it loosely "
    "with cling film, avoid ice, butter or creams, take paracetamol and see a doctor if it blisters badly.",
    "lister": "There are many options: cool running water for 20 minutes, an ice pack, butter, honey, toothpaste, cling "
    "film, paracetamol or ibuprofen. Take off rings. Use whichever you have, and see a doctor if it blisters badly.",
}


def evaluate(embedder, miners):
    round_ = Round("burn", PROMPT, tuple(Response(m, ANSWERS[m], 2.0) for m in miners), reference=REFERENCE)
    out = run_stages(round_, embedder, load_settings(env={}, dotenv_path=None))
    return {r.miner: r for r in out.evaluation.results}


def test_the_farthest_honest_answer_is_not_zeroed_when_the_question_is_farther(embedder):
    honest = evaluate(embedder, ["full", "terse", "steps"])
    assert all(r.reason.value == "in_consensus" for r in honest.values())
    # the prompt is farther from the reference than any of the three: none gets a reference part of 0 for being
    # the farthest of them (it did before session 19)
    assert all(r.score.reference is not None and r.score.reference > 0 for r in honest.values())


def test_a_lister_of_what_the_reference_forbids_leaves(embedder):
    results = evaluate(embedder, list(ANSWERS))
    assert results["lister"].reason.value == "reference"
    assert "offers butter, ice" in results["lister"].detail
    assert all(results[m].reason.value == "in_consensus" for m in ("full", "terse", "steps"))
