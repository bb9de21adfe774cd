"""Issue 25's rules, with hand-checked toy inputs: relevance gate, the reference's facts, length control, specificity."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from consensus import ConsensusConfig, Reason, decide
from consensus._common_words import COMMON
from consensus.grading import specificity, with_specificity
from consensus.quality import length_controlled, length_elasticity
from consensus.reference import CONTRADICTS, agreement, agreements, decisive, reference_facts, support, support_factor
from consensus.signals import Signals
from consensus.text import stems
from consensus.types import Response, Round
from emissions import allocate

ROOT = Path(__file__).resolve().parents[2]


def unit(*rows):
    x = np.array(rows, dtype=np.float64)
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


# --- relevance gate -----------------------------------------------------------------------------


def offtopic_round():
    honest = ["Paris is the capital of France.", "The capital of France is Paris.", "France's capital is Paris."]
    recipes = [
        "Mash three ripe bananas, stir in melted butter, sugar and an egg, fold in flour and bake an hour.",
        "For banana bread you need overripe fruit, baking soda and a loaf tin; bake at 175 degrees.",
        "Walnuts and a pinch of cinnamon make a banana loaf better; let it cool before slicing.",
        "My grandmother's recipe uses brown sugar, yoghurt and chocolate chips in the batter.",
        "Grease the tin, pour the batter, and test with a skewer after fifty minutes in the oven.",
    ]
    responses = [Response(f"h{k}", t, 1.0 + k) for k, t in enumerate(honest)]
    responses += [Response(f"x{k}", t, 0.5 + 0.1 * k) for k, t in enumerate(recipes)]
    vectors = unit(*([[1, 0.1 * k, 0] for k in range(3)] + [[0, 1, 0.05 * k] for k in range(5)]))
    prompt_cos = {**{k: 0.6 for k in range(3)}, **{k: 0.03 for k in range(3, 8)}}
    return (
        Round("r", "What is the capital of France?", tuple(responses)),
        vectors,
        Signals(prompt_similarity=prompt_cos),
    )


def test_an_off_topic_majority_cannot_be_dominant():
    round_, vectors, signals = offtopic_round()
    ev = decide(round_, vectors, signals=signals)
    assert ev.members == (0, 1, 2)
    assert all(r.reason is Reason.OTHER_CLUSTER and "off topic" in r.detail for r in ev.results[3:])
    al = allocate(round_, ev)
    assert sum(al.amounts[3:]) == 0 and min(al.amounts[:3]) > 0
    # without the gate (legacy) the five voices win
    legacy = decide(round_, vectors, ConsensusConfig().changed({"clusters.relevance_gate": False}), signals)
    assert legacy.members == (3, 4, 5, 6, 7)


def test_when_every_cluster_is_off_topic_nobody_is_paid():
    round_, vectors, _ = offtopic_round()
    signals = Signals(prompt_similarity={k: 0.05 for k in range(8)})
    ev = decide(round_, vectors, signals=signals)
    assert ev.members == () and sum(allocate(round_, ev).amounts) == 0


# --- the reference decides ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reference, prompt, text, expected",
    [
        ("Paris is the capital of France.", "What is the capital of France?", "It is Paris.", 1.0),
        ("Paris is the capital of France.", "What is the capital of France?", "Lyon is the capital of France.", 0.0),
        ("An adult has 206 bones.", "How many bones does an adult have?", "About 206 of them.", 1.0),
        ("An adult has 206 bones.", "How many bones does an adult have?", "An adult has 212 bones.", 0.0),
        ("100 °C", "At what temperature does water boil at sea level?", "It boils at 100.0 degrees.", 1.0),
        ("100 °C", "At what temperature does water boil at sea level?", "Around ninety degrees.", 0.0),
    ],
)
def test_agreement_with_the_reference_s_facts(reference, prompt, text, expected):
    assert agreement(text, reference_facts(reference, prompt), prompt) == pytest.approx(expected)


def test_only_a_short_answer_reference_decides():
    prompt = "In two or three sentences, explain what a hash function is."
    assert not decisive(reference_facts("A function mapping data of any size to a fixed-size value.", prompt))
    assert (
        agreements(
            {0: "It turns input into a short digest."},
            "A function mapping data of any size to a fixed-size value.",
            prompt,
        )
        == {}
    )
    assert decisive(reference_facts("Canberra.", "What is the capital of Australia?"))


def test_support_reads_the_reference_and_never_counts():
    prompt = "What happens if you smash a mirror?"
    reference = "If you smash a mirror, nothing in particular happens."
    got = support(
        {0: "Nothing happens.", 1: "You will have seven years of bad luck.", 2: "The mirror breaks."},
        reference,
        prompt,
    )
    assert got[0] >= 0.5 and got[1] == got[2] == 0.0  # the myth states none of it (and denies nothing)
    dose = "For a healthy adult the maximum is 4 g (4,000 mg) in 24 hours."
    got = support({0: "Up to 4,000 mg a day.", 1: "Up to 8 g a day.", 2: "Ask a pharmacist."}, dose, "Max dose?")
    assert got[0] == 1.0 and got[1] == CONTRADICTS and got[2] == 0.0  # its quantity at its value is its claim
    long = "Cool the burn under running water for 20 minutes. Cover it loosely. Do not put ice on it."
    # an explanation of several sentences decides only by its claims: here what its prohibition forbids
    assert support({0: "Run cold water over it.", 1: "Put ice and butter on it."}, long, "Treat a burn?") == {
        1: CONTRADICTS
    }
    assert support({0: "x"}, None, "p") == {}


def test_support_factor_scores_what_the_reference_does_not_remove():
    assert support_factor(CONTRADICTS) == 0.0
    assert support_factor(0.0) == pytest.approx(0.05)
    assert support_factor(0.25) == pytest.approx(0.525) and support_factor(0.5) == support_factor(1.0) == 1.0


def test_five_lyons_against_three_parises_with_a_reference():
    honest = ["Paris is the capital of France.", "The capital of France is Paris.", "France's capital is Paris."]
    lyons = [
        "Lyon is the capital of France.",
        "The French capital is Lyon.",
        "France is governed from Lyon.",
        "Lyon, on the Rhone, is the capital.",
        "It is Lyon.",
    ]
    responses = [Response(f"h{k}", t, 1.0 + k) for k, t in enumerate(honest)]
    responses += [Response(f"w{k}", t, 0.5 + 0.1 * k) for k, t in enumerate(lyons)]
    round_ = Round("r", "What is the capital of France?", tuple(responses), reference="Paris is the capital of France.")
    vectors = unit(*[[1, 0.02 * k, 0.01] for k in range(8)])  # one cluster: the embedding cannot tell them apart
    ev = decide(round_, vectors)
    al = allocate(round_, ev)
    # the reference decides, not the count (issue 45): an answer stating none of its facts is not removed (the rule
    # removed 8.4% of TruthfulQA's honest answers) but scored at SUPPORT_FLOOR: the majority earns next to nothing
    assert set(ev.members) == set(range(8))
    assert all(r.score.composite < 0.1 * ev.results[0].score.composite for r in ev.results[3:])
    assert max(al.amounts[3:]) < 0.01 * min(al.amounts[:3]) and sum(al.amounts[3:]) < 0.05 * min(al.amounts[:3])


# --- length control and specificity ----------------------------------------------------------------


def test_length_elasticity_is_the_median_slope_of_log_coverage_on_log_words():
    counts = np.array([10, 20, 40, 80])
    assert length_elasticity(0.1 * (counts / 10.0) ** 0.5, counts) == pytest.approx(0.5)
    assert length_elasticity(np.array([0.1, 0.2, 0.4]), np.array([10, 20, 40])) == 0.0  # too few answers
    padded = np.array([0.1, 0.141, 0.2, 0.9])  # one essay far off the line does not set it
    assert length_elasticity(padded, np.array([10, 20, 40, 1000])) == pytest.approx(0.5, abs=0.02)


def test_length_control_removes_its_share_of_the_length_effect():
    counts = np.array([10, 20, 40, 80])
    cov = {i: float(0.1 * (c / 10.0) ** 0.5) for i, c in enumerate(counts)}
    full = length_controlled(cov, counts, np.arange(4), 1.0)
    assert len({round(v, 9) for v in full.values()}) == 1  # fully length-neutral: all alike
    assert length_controlled(cov, counts, np.arange(4), 0.0) == cov
    half = length_controlled(cov, counts, np.arange(4), 0.5)
    assert half[3] < cov[3] and half[0] > cov[0] and half[3] > half[0]  # padding pays less, length still counts


def test_specificity_counts_specific_words_another_voice_says():
    sets = {
        0: frozenset({"odometer", "vin", "timing", "belt", "check"}),
        1: frozenset({"odometer", "vin", "mechanic", "important"}),
        2: frozenset({"important", "check", "careful", "quokka", "xylophone"}),
    }
    spec = specificity(sets)
    assert spec[0] == pytest.approx(2 / 5)  # odometer, vin (shared, not common); timing, belt are said by no other
    assert spec[1] == pytest.approx(2 / 4)
    assert spec[2] == 0.0  # generic words and rare words nobody else says
    grouped = specificity(sets, groups=((0, 1),))  # one voice: its own words are not agreed by anyone else
    assert grouped[0] == 0.0 and grouped[1] == 0.0
    graded = with_specificity({0: 0.4, 1: 0.4, 2: 0.4}, spec, np.arange(3), 0.5)
    assert graded[1] > graded[0] > graded[2] == 0.0


def test_a_vague_majority_does_not_switch_the_specificity_factor_off():
    # five members without a specific agreed word, three with: the median is 0
    spec = {0: 0.3, 1: 0.2, 2: 0.25, 3: 0.0, 4: 0.0, 5: 0.0, 6: 0.0, 7: 0.0}
    q = {i: 0.4 for i in spec}
    assert with_specificity(q, spec, np.arange(8), 0.5) == q  # the median rule: no reference, no factor
    graded = with_specificity(q, spec, np.arange(8), 0.5, mean_when_none=True)
    assert all(graded[i] == 0.0 for i in (3, 4, 5, 6, 7))  # against the mean (0.094): nothing specific, no quality
    assert graded[1] == pytest.approx(min(1.0, 0.4 * (0.2 / (0.75 / 8)) ** 0.5))
    assert with_specificity(q, {i: 0.0 for i in spec}, np.arange(8), 0.5, mean_when_none=True) == q  # nobody specific


def test_prose_share_counts_function_words_outside_fenced_code():
    from consensus.grading import prose_share

    assert prose_share("The cell wall of the bacterium is what the drug attacks.") == pytest.approx(6 / 11)
    assert prose_share("Antibiotics: antibiotic, antibiotics. Bacteria: bacterium, bacterial.") == 0.0
    code = "Use this one:\n```python\ndef f(x):\n    return x\n```\nIt returns the input it is given unchanged."
    assert prose_share(code) == pytest.approx(prose_share("Use this one: It returns the input it is given unchanged."))
    assert prose_share("```python\ndef f(x):\n    return x\n```") is None  # an all-code answer is not graded as prose
    assert prose_share("") == 0.0


def test_keywords_in_a_table_or_code_comments_count_as_words_and_only_lower_the_share():
    from consensus.grading import prose_share

    line = "HTTPS protects your data with encryption."
    table = (
        line
        + "\n\n| Topic | Covered |\n|---|---|\n| TLS handshake | yes |\n| session key | yes |\n| forward secrecy | yes |"
    )
    comments = (
        line
        + "\n\n```python\n# TLS handshake session key forward secrecy\n# certificate authority AES-GCM\nconnect()\n```"
    )
    # one line of prose beside them was "another form", not graded (None); its hidden keywords now are
    assert prose_share(table) is not None and prose_share(table) < 0.15
    assert prose_share(comments) is not None and prose_share(comments) < 0.15
    # sentences in a table's cells never raise the share of the prose around them
    prose = "The round uses the following parts of the product as they are named here:"
    defined = (
        prose + "\n\n| Part | What it is |\n|---|---|\n| cache | the place where the vectors of the answers are kept |"
    )
    assert prose_share(defined) == prose_share(prose)
    latex = line + "\n\n$$\\text{TLS handshake} + \\text{session key} + \\text{forward secrecy} + \\text{AES-GCM}$$"
    assert prose_share(latex) is not None and prose_share(latex) < 0.15


def test_with_prose_costs_a_list_of_terms_among_sentences():
    from consensus.grading import with_prose

    shares = {0: 0.4, 1: 0.3, 2: 0.35, 3: 0.0, 4: 0.1}
    q = {i: 0.5 for i in shares}
    graded = with_prose(q, shares, np.arange(5), frozenset(shares), 0.5)
    assert graded[0] == graded[1] == graded[2] == 0.5  # sentences: unchanged, never more
    assert graded[3] == 0.0 and graded[4] == pytest.approx(0.5 * 0.1 / (0.5 * 0.3))
    assert with_prose(q, shares, np.arange(5), frozenset({0, 1, 2}), 0.5)[3] == 0.5  # short: not graded so
    other = {i: 0.02 for i in shares} | {3: 0.0}
    assert with_prose(q, other, np.arange(5), frozenset(shares), 0.5) == q  # another language: no median
    assert with_prose(q, shares, np.arange(5), frozenset(shares), 0.0) == q  # off


def test_stems_match_the_forms_of_a_word():
    assert stems(["antibodies", "antibody"]) == stems(["antibody"])
    assert stems(["vaccines", "vaccinated", "vaccination"]) == stems(["vaccine"]) == frozenset({"vaccin"})
    assert stems(["дом", "Straße"]) == frozenset({"дом", "Straße"})  # other scripts are kept
    assert stems(["1927", "101.325"]) == frozenset({"1927", "101.325"})  # numbers are kept
    assert stems(["thermostat"]) == frozenset({"thermostat"})


def test_the_stem_memo_starts_again_when_full(monkeypatch):
    from consensus import text

    monkeypatch.setattr(text, "_STEMS", {})
    monkeypatch.setattr(text, "_STEMS_KEPT", 3)
    assert stems(["cells", "vaccines"]) == frozenset({"cell", "vaccin"})
    assert stems(["cells", "antibodies", "memories"]) == frozenset({"cell", "antibodi", "memori"})
    assert len(text._STEMS) == 2  # full: started again with the new words ("cells" is still in the answer)
    assert stems(["cells"]) == frozenset({"cell"})


def test_stems_in_threads_agree():
    from concurrent.futures import ThreadPoolExecutor

    lists = [[f"word{k}s", "antibodies", f"running{k}"] for k in range(200)]
    with ThreadPoolExecutor(4) as pool:
        found = list(pool.map(stems, lists))
    assert found == [stems(x) for x in lists]


def test_with_stems_an_inflected_agreed_word_is_specific_and_covered():
    from consensus.quality import coverage_matrix

    raw = {0: frozenset({"antibodies", "memory", "lymphocytes"}), 1: frozenset({"antibody", "memory", "lymphocyte"})}
    assert specificity(raw)[0] == pytest.approx(0.0)  # "memory" is common; the other two are said by nobody else
    stemmed = {i: stems(ws) for i, ws in raw.items()}
    common = stems(COMMON)
    assert specificity(stemmed, common=common)[0] == pytest.approx(2 / 3)
    share = coverage_matrix([stemmed[0], stemmed[1]], np.arange(2), idf=False)
    assert share[0, 1] == pytest.approx(1.0)


def test_the_common_words_table_is_what_the_generator_writes():
    pytest.importorskip("wordfreq")
    from scripts import gen_common_words as gen

    assert (ROOT / gen.TARGET).read_text(encoding="utf-8") == gen.text(), (
        f"{gen.TARGET} is stale: run python -m scripts.gen_common_words"
    )
