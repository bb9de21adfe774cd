"""The embedded LM reads a long answer's figure against the agreed fact (slow: starts the llama.cpp server)."""

from __future__ import annotations

import pytest

from lm.client import OpenAIChatClient
from lm.round_budget import Budget
from tests.lm.test_figures import check_figures

pytestmark = pytest.mark.slow

PROMPT = "Why does water boil at a lower temperature high up a mountain?"
TEXTS = [
    "Boiling happens when the vapour pressure of water equals the air pressure around it. At sea level that is "
    "101 kPa and water boils at 100 °C. Higher up there is less air above you, so the pressure is lower: in Denver "
    "it boils at about 95 °C.",
    "Because the air pressure drops with altitude. Water boils at 100 °C at sea level; on top of Everest it boils "
    "at roughly 70 °C, which is why climbers' tea is lukewarm.",
    "A liquid boils once its vapour pressure matches the surrounding pressure: 100 °C at sea level, around 90 °C "
    "at 3,000 metres.",
    "Lower air pressure. Up a mountain there is less atmosphere pushing down on the water, so boiling starts "
    "sooner. In La Paz, at 3,600 metres, water boils at about 88 °C, so pasta and eggs need extra time.",
    "Water boils at 110 °C at sea level because the full weight of the atmosphere presses on it. As you climb, "
    "the pressure falls and so does the boiling point, so cooking takes longer at altitude.",
]


def test_the_embedded_lm_confirms_the_wrong_figure(local_lm):
    client = OpenAIChatClient(local_lm.endpoint, timeout_s=300)
    checks = {c.index: c for c in check_figures(client, PROMPT, TEXTS, range(5), workers=1, budget=Budget(0))}
    assert sorted(checks) == [4]  # 88 °C in La Paz is said of another place: no suspect, no call
    assert checks[4].contradicts is True, checks[4]  # it fills "water boils at ___ °C at sea level" with 110
    # an answer that states the agreed value in other words is no suspect: one more backer, the same verdict
    right = TEXTS[4].replace("110 °C", "100 °C").replace("Water boils", "At sea level, water boils")
    again = check_figures(client, PROMPT, [*TEXTS[:4], right, TEXTS[4]], range(6), workers=1, budget=Budget(0))
    assert [c.index for c in again] == [5] and again[0].contradicts is True
