"""The lab's quality rules (measured, not shipped; benchmarks/lab/quality_rules.py), hand-checked, and their
way into the product's scoring: factors through ``consensus.extensions``, none by default."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.lab import LabConfig, extensions
from benchmarks.lab.quality_rules import (
    glossary_shares,
    numbers_stated,
    own_specific,
    with_bounded_specificity,
    with_glossary,
    with_numbers,
    with_own_detail,
    with_own_detail_count,
)
from consensus import ConsensusConfig, decide
from consensus.extensions import NONE
from consensus.types import Response, Round


def test_specificity_cap_and_floor_bound_the_factor():
    spec = {0: 0.0, 1: 0.2, 2: 0.4}
    q = {i: 0.25 for i in spec}
    plain = with_bounded_specificity(q, spec, np.arange(3), 1.0)
    assert plain == {0: 0.0, 1: 0.25, 2: 0.5}
    assert with_bounded_specificity(q, spec, np.arange(3), 1.0, cap=1.0)[2] == 0.25  # no gain above the median
    floored = with_bounded_specificity(q, spec, np.arange(3), 1.0, floor=0.25)
    assert floored[0] == pytest.approx(0.25 * 0.25 / 1.25)  # no specific word: a fifth of its quality, not 0
    assert floored[1] == pytest.approx(0.25) and floored[2] == pytest.approx(0.25 * (0.4 + 0.05) / 0.25)


def test_own_detail_min_count_costs_a_long_answer_with_no_details_of_its_own():
    sets = {
        0: frozenset({"odometer", "vin", "camshaft", "gasket"}),
        1: frozenset({"odometer", "vin", "mechanic"}),
        2: frozenset({"odometer", "vin"}),
    }
    counts = own_specific(sets, count=True)
    assert counts == {0: 2.0, 1: 1.0, 2: 0.0}
    q = {i: 0.6 for i in sets}
    graded = with_own_detail_count(q, counts, frozenset({0, 1, 2}), 2, 1.0)
    assert graded[0] == 0.6  # two details of its own: unchanged, never more
    assert graded[1] == pytest.approx(0.6 * 2 / 3) and graded[2] == pytest.approx(0.6 / 3)
    assert with_own_detail_count(q, counts, frozenset({0, 1}), 2, 1.0)[2] == 0.6  # too short to be graded so
    assert with_own_detail_count(q, counts, frozenset({0, 1, 2}), 0, 1.0) == q  # off


def test_own_detail_is_the_share_of_specific_words_no_other_voice_says():
    sets = {
        0: frozenset({"odometer", "vin", "camshaft", "gasket", "check"}),
        1: frozenset({"odometer", "vin", "mechanic", "important"}),
        2: frozenset({"important", "check", "careful", "quokka", "xylophone"}),
    }
    own = own_specific(sets)
    assert own[0] == pytest.approx(2 / 5)  # camshaft, gasket
    assert own[1] == pytest.approx(1 / 4)  # mechanic
    assert own[2] == pytest.approx(2 / 5)  # quokka, xylophone: nobody else says them
    assert own_specific(sets, groups=((0, 1),))[1] == pytest.approx(3 / 4)  # one voice: what it shares is its own


def test_own_detail_only_costs_an_answer_with_fewer_details_than_the_typical_member():
    own = {0: 0.2, 1: 0.25, 2: 0.3, 3: 0.0, 4: 0.9}
    q = {i: 0.5 for i in own}
    graded = with_own_detail(q, own, np.arange(5), 1.0, 0.0)
    assert graded[1] == graded[2] == graded[4] == 0.5  # at or above the median (0.25): unchanged, never more
    assert graded[0] == pytest.approx(0.5 * 0.2 / 0.25)
    assert graded[3] == 0.0
    floored = with_own_detail(q, own, np.arange(5), 1.0, 0.05)
    assert floored[3] == pytest.approx(0.5 * 0.05 / 0.30)
    short = with_own_detail(q, own, np.arange(5), 1.0, 0.0, graded=frozenset({0, 1, 2, 4}))
    assert short[3] == 0.5  # a short answer is not graded by its own details (agreement is its content)
    assert with_own_detail(q, own, np.arange(5), 0.0, 0.0) == q


def test_glossary_shares_count_short_definition_lines_and_list_items():
    glossary = "Vaccines train immunity.\n- Antigen: a molecule cells recognise.\n- Antibody: a protein B cells make."
    defined, listed = glossary_shares(glossary)
    assert defined == pytest.approx(11 / 14) and listed == pytest.approx(11 / 14)
    assert glossary_shares("**Compressor** — the pump that raises the pressure.")[0] == 1.0  # bold and a dash
    assert glossary_shares("Antigen: molecule the immune system recognises.")[0] == 1.0  # no bullet, no article
    assert glossary_shares("1. Antigen: a molecule.\n2. Antibody: a protein.")[0] == 1.0  # numbered
    # a detail (a number) makes a line a statement; a long line explains; a header has no definition
    assert glossary_shares("- Thermostat: down 1-2 °C, about 5-10% less energy.") == (0.0, 1.0)
    long_line = "- Antigen: a molecule on a pathogen that helper T cells learn to spot when a cell presents it."
    assert glossary_shares(long_line) == (0.0, 1.0)
    assert glossary_shares("Key terms:") == (0.0, 0.0)
    assert glossary_shares("A vaccine shows the immune system a harmless piece of a pathogen.") == (0.0, 0.0)
    assert glossary_shares("```\nkey: a value\n```") == (0.0, 0.0) and glossary_shares("") == (0.0, 0.0)


def test_with_glossary_costs_a_glossary_where_the_round_answers_in_sentences():
    shares = {0: (0.0, 0.0), 1: (0.0, 0.1), 2: (0.1, 0.0), 3: (0.9, 0.95), 4: (0.7, 0.7)}
    q = {i: 0.8 for i in shares}
    graded = with_glossary(q, shares, np.arange(5), frozenset(shares), 0.6)
    assert graded[0] == graded[1] == graded[2] == 0.8  # sentences: unchanged, never more
    assert graded[3] == pytest.approx(0.8 * (0.1 / 0.4) ** 2) and graded[4] == pytest.approx(0.8 * (0.3 / 0.4) ** 2)
    assert with_glossary(q, shares, np.arange(5), frozenset({0, 1, 2}), 0.6)[3] == 0.8  # short: not graded so
    # the prompt asks for definitions (or a list): most answers are such lines, and they are a fair form
    asked = {i: (0.8, 0.0) for i in range(4)} | {4: (0.0, 0.0)}
    assert with_glossary(q, asked, np.arange(5), frozenset(asked), 0.6) == q
    listed = {i: (0.0, 0.9) for i in range(4)} | {4: (0.9, 0.9)}
    assert with_glossary(q, listed, np.arange(5), frozenset(listed), 0.6) == q
    assert with_glossary(q, shares, np.arange(5), frozenset(shares), 0.0) == q  # off


def test_numbers_stated_counts_distinct_figures_beyond_list_markers_code_and_the_prompt():
    text = "1. Set 16 °C at night.\n2. Lower it 1-2 °C: 5-10% less.\n- Loft insulation to 270 mm; 16 °C again."
    assert numbers_stated(text) == 6  # 16, 1, 2, 5, 10, 270: the markers "1." and "2." are not figures
    assert numbers_stated("Boils at 100 °C, or 212 °F, at 101.325 kPa.") == 3
    assert numbers_stated("In 2 weeks, 2 doses.", prompt="Why 2 doses?") == 0  # the prompt's own number
    assert numbers_stated("Use ```x = 42``` here.") == 0  # fenced code
    assert numbers_stated("Think about insulation, draughts and your thermostat.") == 0


def test_with_numbers_costs_an_answer_without_figures_where_the_detailed_ones_give_them():
    counts = {0: 6, 1: 4, 2: 3, 3: 0, 4: 0, 5: 1}
    q = {i: 0.6 for i in counts}
    members = np.arange(6)
    graded = with_numbers(q, counts, members, frozenset(counts), 0.5)
    ref = float(np.quantile([6, 4, 3, 0, 0, 1], 0.75))  # 3.75: the upper quartile, not the (vague) median
    assert graded[0] == graded[1] == 0.6  # as many figures as the reference or more: unchanged, never more
    assert graded[2] == pytest.approx(0.6 * (4 / (ref + 1)) ** 0.5)
    assert graded[3] == graded[4] == pytest.approx(0.6 * (1 / (ref + 1)) ** 0.5)
    assert graded[5] == pytest.approx(0.6 * (2 / (ref + 1)) ** 0.5)
    assert with_numbers(q, counts, members, frozenset({0, 1, 2}), 0.5)[3] == 0.6  # short: not graded so
    few = {i: 1 for i in counts}  # a round without figures (the reference under 2): unchanged
    assert with_numbers(q, few, members, frozenset(few), 0.5) == q
    assert with_numbers(q, counts, members, frozenset(counts), 0.0) == q  # off


TERMS = ("Antigen", "Antibody", "Pathogen", "Booster", "Adjuvant", "Immunity")
GLOSSARY = "\n".join(f"- {term}: a word the reader should know well." for term in TERMS)
SENTENCES = [
    "A vaccine shows the immune system a harmless piece of a pathogen, so that it learns to recognise it and "
    "responds faster when the real pathogen arrives later, before the illness can take hold in the body.",
    "Vaccines train the immune system with a harmless piece of the pathogen, so the body recognises it and "
    "responds quickly when the real pathogen arrives, before the infection can spread through the body.",
    "A vaccine gives the immune system a safe look at a pathogen so it recognises it and responds faster "
    "when the real pathogen arrives, stopping the infection before the illness can take hold.",
]


def _round(texts: list[str]) -> tuple[Round, np.ndarray]:
    vectors = np.tile(np.eye(1, 8, 0, dtype=np.float32), (len(texts), 1))
    rows = tuple(Response(f"m{k}", t, 1.0 + 0.1 * k) for k, t in enumerate(texts))
    return Round("r", "How does a vaccine work?", rows), vectors


def test_the_default_lab_hands_nothing_and_keeps_the_config():
    config = ConsensusConfig()
    hooks, same = extensions(LabConfig(), config)
    assert hooks is NONE and same is config


def test_a_lab_factor_reaches_the_products_quality_part_and_nothing_else():
    round_, vectors = _round([*SENTENCES, GLOSSARY + " The immune system recognises the pathogen."])
    shipped = decide(round_, vectors)
    hooks, config = extensions(LabConfig(quality_glossary=0.3), ConsensusConfig())
    lab = decide(round_, vectors, config, extensions=hooks)
    assert lab.results[3].score.quality < shipped.results[3].score.quality  # the glossary loses quality
    for i in range(3):  # the answers in sentences do not move
        assert lab.results[i].score == shipped.results[i].score
    assert lab.members == shipped.members


def test_a_specificity_floor_replaces_the_products_factor():
    hooks, config = extensions(LabConfig(specificity_floor=0.25), ConsensusConfig())
    assert config.quality.quality_specificity == 0.0 and len(hooks.quality) == 1


def test_unknown_lab_rules_are_refused_by_name():
    with pytest.raises(SystemExit, match="no_such_rule"):
        LabConfig.from_pairs(["no_such_rule=1"])
    assert LabConfig.from_pairs(["quality_glossary=0.3"]).quality_glossary == 0.3
