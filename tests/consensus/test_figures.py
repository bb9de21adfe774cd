"""Long answers' figures against the round's agreed facts (consensus.figures; the LM's reading is a signal)."""

from __future__ import annotations

from decimal import Decimal

import numpy as np

from consensus import ConsensusConfig, Reason
from consensus.figures import Suspect, agreed_figures, confirms, figures_of, suspects
from consensus.pipeline import decide
from consensus.reference import quantities
from consensus.signals import Signals
from tests.helpers import block_vectors, make_round

PROMPT = "Why does water boil at a lower temperature high up a mountain?"
TEXTS = {
    0: "At sea level water boils at 100 °C. Higher up the pressure is lower: in Denver it boils at about 95 °C.",
    1: "Water boils at 100 °C at sea level; on top of Everest it boils at roughly 70 °C.",
    2: "A liquid boils when its vapour pressure matches the air's: 100 °C at sea level, 90 °C at 3,000 metres.",
    3: "In La Paz, at 3,600 metres, water boils at about 88 °C, so pasta needs extra time.",
    4: "Water boils at 110 °C at sea level because the whole atmosphere presses on it.",
}


def test_the_agreed_figure_and_the_suspects():
    figures = {i: figures_of(t, PROMPT) for i, t in TEXTS.items()}
    assert agreed_figures(figures) == {"°C": Decimal(100)}  # 3,000 / 3,600 metres: no value three members state
    found = {s.index: s for s in suspects(TEXTS, PROMPT)}
    assert sorted(found) == [4]  # 88 °C in La Paz is said of another place: not in the context "sea level"
    assert found[4].stated == (Decimal(110),) and "110 °C" in found[4].sentence
    assert "100 °C" in found[4].agreed_sentence


def test_a_figure_many_answers_state_of_different_things_is_no_fact():
    recipe = "Give me a recipe for granola."
    texts = {
        0: "Mix 300 g oats with 60 ml honey and 60 ml oil. Bake 20 minutes.",
        1: "Stir 60 ml maple syrup into 250 g oats, add 100 g nuts.",
        2: "Use 60 ml brown sugar, 300 g oats and 80 g raisins.",
        3: "Combine 250 g oats, 100 g almonds and 80 ml honey.",
    }
    assert agreed_figures({i: figures_of(t, recipe) for i, t in texts.items()})  # 60 ml: agreed by count
    assert suspects(texts, recipe) == ()  # of honey, of syrup, of sugar: no shared context, no fact


def test_a_setting_honest_answers_vary_is_no_fact():
    oven = "How do I bake a sponge cake?"
    texts = {i: f"Preheat the oven to 180 °C and bake for 25 minutes, answer {i}." for i in range(5)}
    texts |= {
        5: "Preheat the oven to 170 °C and bake for 25 minutes.",
        6: "Preheat the oven to 190 °C and bake for 25 minutes.",
    }
    assert suspects(texts, oven) == ()  # two other values: a setting, not one slip
    assert [s.index for s in suspects({**texts, 6: "Bake it well."}, oven)] == [5]


def test_no_agreed_figure_no_suspect():
    two = {0: TEXTS[0], 1: TEXTS[1], 4: TEXTS[4]}  # 100 °C twice, 110 once: two are no agreed fact
    assert suspects(two, PROMPT) == ()
    split = {**TEXTS, 5: "It boils at 110 °C.", 6: "110 °C at sea level.", 7: "Sea level: 110 °C."}
    assert suspects(split, PROMPT) == ()  # 3 against 4: no value more than half of them state
    assert figures_of("Water boils at 100 °C.", "Does water boil at 100 °C?") == {}  # the prompt's own figure


def test_the_lms_value_confirms_clears_or_decides_nothing():
    s = Suspect(4, "°C", Decimal(100), (Decimal(110),), "boils at 100 °C", "boils at 110 °C", "boils at ___ °C")
    assert confirms(quantities("110 °C"), s) is True
    assert confirms(quantities("110"), s) is True  # a bare number is read as the quantity asked for
    assert confirms(quantities("100 °C"), s) is False  # the suspect's figure counted something else
    assert confirms(quantities("none"), s) is None
    assert confirms(quantities("212 °F"), s) is False  # 212 °F is 100 °C, the agreed figure


def test_the_core_removes_what_the_lm_confirmed_and_the_reference_backs_nothing_else():
    texts = list(TEXTS.values())
    r = make_round(texts, prompt=PROMPT)
    x = block_vectors([5], seed=1)
    why = {4: "states 110 (°C) where 3 or more answers agree on 100; the LM read '110 °C' in it"}
    out = decide(r, x, ConsensusConfig(), Signals(figure_contradictions=why))
    assert out.results[4].reason is Reason.FACTUAL and "agreed" in out.results[4].detail
    assert all(out.results[i].reason is Reason.IN_CONSENSUS for i in range(4))
    plain = decide(r, x, ConsensusConfig(), Signals())
    assert plain.results[4].reason is Reason.IN_CONSENSUS
    off = decide(r, x, ConsensusConfig().changed({"checks.factual_check": False}), Signals(figure_contradictions=why))
    assert off.results[4].reason is Reason.IN_CONSENSUS
    assert np.isfinite([a.score.composite for a in out.results]).all()
