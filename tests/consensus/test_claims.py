"""What a reference forbids, and answers that offer it anyway (consensus.claims; issue 38, session 19)."""

from __future__ import annotations

import pytest

from consensus.claims import numerals, offered, prohibitions
from consensus.reference import agreements, claim_facts, claim_share, claim_shares, claims_of, contradiction
from consensus.score import reference_similarity_scores

BURN_PROMPT = "How should I treat a minor burn at home?"
BURN_REF = (
    "Cool the burn under cool running water for 20 minutes. Take off rings, watches or tight clothing near it "
    "before it swells. Cover it loosely with cling film or a clean non-fluffy dressing. Do not put ice, butter or "
    "creams on it. Take paracetamol or ibuprofen for the pain, and see a doctor if it is larger than your palm or "
    "blisters badly."
)
FORBIDDEN = frozenset({"ice", "butter", "cream"})


def test_a_prohibition_forbids_its_objects_not_its_verb():
    assert prohibitions(BURN_REF, BURN_PROMPT) == (FORBIDDEN,)
    # whom it is given to is no thing forbidden: every honest answer names the child
    assert prohibitions("Never give aspirin to a feverish child.") == (frozenset({"aspirin"}),)
    assert prohibitions("Avoid alcohol. Rest.") == (frozenset({"alcohol"}),)
    # a yes/no reference's "No, ..." answers the question, and "No X has ..." states a fact: they forbid nothing
    assert prohibitions("No, cracking your knuckles does not cause arthritis.") == ()
    assert prohibitions("No other animals can master human languages.") == ()
    assert prohibitions("Cool it under running water for 20 minutes.") == ()


@pytest.mark.parametrize(
    "honest",
    [
        "Don't use ice, butter, toothpaste or greasy creams: they trap heat.",
        "Skip ice and home remedies like butter.",
        "Avoid ice, which can cause further tissue damage.",
        "Nothing frozen, and no butter or lotions on it.",
        "| 4 | No ice, butter or creams |",
        "Cool water rather than ice; butter only traps the heat and does harm.",
        "Run it under cool water. Ice and butter are a myth.",
        "Put cool water on it for twenty minutes.",  # names none of them: neither states nor contradicts
        "Cool it with water, then an ice-cold drink for you.",  # one of three, in passing
    ],
)
def test_an_answer_that_warns_against_them_or_names_one_in_passing_does_not_offer_them(honest):
    assert offered(honest, FORBIDDEN) == ()
    assert contradiction(honest, claims_of(BURN_REF, BURN_PROMPT)) is None


def test_an_answer_listing_the_forbidden_things_as_options_offers_them():
    lister = (
        "There are many options for a minor burn: cool running water, an ice pack, butter, aloe vera gel, honey "
        "or toothpaste. Use whichever you have to hand."
    )
    assert offered(lister, FORBIDDEN) == ("butter", "ice")
    assert offered("Rub butter on it and add an ice cube.", FORBIDDEN) == ("butter", "ice")
    # a prohibition of one thing is offered by naming it
    assert offered("Give aspirin for the fever.", frozenset({"aspirin"})) == ("aspirin",)
    claims = claims_of(BURN_REF, BURN_PROMPT)
    assert claims.decides
    assert contradiction(lister, claims) == "offers butter, ice, which the reference says not to use"
    # agreement 0 and claim share 0, as for a wrong yes/no or figure; an answer that offers none is neutral
    honest = "Cool it under running water for 20 minutes and skip ice or butter; cover it with cling film."
    assert agreements({0: honest, 1: lister}, BURN_REF, BURN_PROMPT) == {0: 0.5, 1: 0.0}
    shares = claim_shares({0: honest, 1: lister}, BURN_REF, BURN_PROMPT)
    assert shares[1] == 0.0 < shares[0]


def test_numbers_in_words_are_digits_for_the_claims():
    assert numerals("Cool it for twenty minutes, twenty-five times, for two weeks.") == (
        "Cool it for 20 minutes, 25 times, for 2 weeks."
    )
    assert numerals("one of them") == "one of them"  # "one" is also a pronoun
    spelled = "Cool it under running water for twenty minutes."
    digits = "Cool it under running water for 20 minutes."
    claims = claim_facts("Cool the burn under cool running water for 20 minutes.", BURN_PROMPT)
    assert claim_share(spelled, claims, BURN_PROMPT) == claim_share(digits, claims, BURN_PROMPT) == 1.0


def test_the_prompt_s_own_similarity_is_the_zero_of_the_reference_similarity():
    cosines = {0: 0.90, 1: 0.72, 2: 0.45}
    # without a floor the farthest answer gets 0, whatever its cosine
    assert reference_similarity_scores(cosines, [0, 1]) == {0: 1.0, 1: 0.0}
    # with the prompt's cosine to the reference (0.63) as the 0 when it is lower than the farthest answer: an answer
    # gets 0 for coming no closer to the reference than the question, not for being the farthest
    scaled = reference_similarity_scores(cosines, [0, 1], floor=0.63)
    assert scaled[0] == 1.0 and scaled[1] == pytest.approx(0.09 / 0.27)
    # a floor above the farthest answer changes nothing (never harsher than the round's own spread)
    assert reference_similarity_scores(cosines, [0, 1, 2], floor=0.5) == reference_similarity_scores(cosines, [0, 1, 2])


def test_a_prohibition_stated_after_its_object_forbids_it():
    assert prohibitions("Hydrogen peroxide should be avoided, as it damages tissue.") == (
        frozenset({"hydrogen", "peroxide"}),
    )
    assert prohibitions("Butter is not recommended on a burn.", "How do I treat a burn?") == (frozenset({"butter"}),)


def test_no_harm_in_recommends_and_a_barrier_keeps_a_contact_prohibition():
    peroxide = frozenset({"hydrogen", "peroxide"})
    assert offered("There's no harm in a splash of hydrogen peroxide.", peroxide) == ("hydrogen", "peroxide")
    assert offered("Skip hydrogen peroxide: it harms tissue.", peroxide) == ()
    contact = frozenset({"ice", "directly", "skin"})
    assert offered("Always with a thin towel between the ice and your skin.", contact) == ()
    assert offered("Bare ice on the skin can cause an ice burn.", contact) == ()
    assert offered("Put ice straight on the skin for an hour.", contact) == ("directly", "ice", "skin")


@pytest.mark.parametrize(
    "text, digits",
    [
        ("three hundred eighty-four thousand km", "384000 km"),
        ("238 thousand miles", "238000 miles"),
        ("1.5 million people", "1500000 people"),
        ("one hundred and one dalmatians", "101 dalmatians"),
        ("twelve hundred", "1200"),
        ("two and three", "2 and 3"),  # "and" joins only the parts of one number
        ("two three", "2 3"),
        ("a thousand times", "a thousand times"),  # no number before the scale word
        ("one and only", "one and only"),
        ("Ten thousand steps and one more", "10000 steps and one more"),
    ],
)
def test_numbers_in_words_above_99(text, digits):
    from consensus.quantity import number_words

    assert number_words(text) == digits
    assert numerals(text) == digits


def test_one_thing_forbidden_is_offered_only_with_an_offering_word():
    butter = frozenset({"butter"})
    assert offered("Rub a knob of butter on it straight away.", butter) == ("butter",)
    assert offered("Cool it for twenty minutes; butter traps the heat, so leave it in the fridge.", butter) == ()
    assert offered("There's no harm in a little butter.", butter) == ("butter",)


def test_the_prompt_s_own_words_are_no_warning():
    butter = frozenset({"butter"})
    text = "Rub a knob of butter on it to soothe the burn."
    assert offered(text, butter) == ()  # "burn" reads as a warning...
    assert offered(text, butter, frozenset({"burn"})) == ("butter",)  # ...unless the prompt asks about burns


def test_what_others_are_credited_with_is_set_aside():
    from consensus.claims import own_claim

    assert "Shakespeare" not in own_claim("Many credit Shakespeare, yet the play was really the work of Marlowe.")


@pytest.mark.parametrize(
    "text",
    ["Not a problem; slice it first.", "No harm in it at all.", "Never an issue if it is wrapped.", "No issues."],
)
def test_a_negated_problem_opens_no_no(text):
    from consensus.fact_match import opening_yes_no

    assert opening_yes_no(text) is None


def test_calling_the_asked_thing_harmless_takes_the_question_s_side():
    from consensus.claims import harmless_side

    honey = "Can I give honey to my six-month-old baby?"
    assert harmless_side("A little honey does no harm at that age.", honey) is True
    assert harmless_side("No need to wait an hour: it is a myth.", "Is it safe to swim right after eating?") is True
    assert harmless_side("It does no harm to the skin.", "Is hydrogen peroxide harmful to skin?") is False
    assert harmless_side("Wait until after the first birthday.", honey) is None
    assert harmless_side("No harm done.", "Who painted the Sistine Chapel?") is None


def test_a_reference_that_forbids_the_asked_thing_says_no():
    from consensus.claims import forbids_asked

    prompt = "Can I mix bleach and ammonia to clean a bathroom?"
    assert forbids_asked("Mixing bleach and ammonia should be avoided: it releases toxic gas.", prompt)
    assert not forbids_asked("Use one product at a time.", prompt)
    assert not forbids_asked("Mixing bleach and ammonia should be avoided.", "What cleans a bathroom best?")


def test_where_a_forbidden_thing_goes_is_not_forbidden():
    ref = "Wipe the outer ear with a damp cloth. Using a cotton swab inside the ear canal is not recommended."
    (forbidden,) = prohibitions(ref, "How should I clean my ears?")
    assert forbidden == frozenset({"cotton", "swab"})
    assert offered("Keep cotton swabs out of the canal.", forbidden) == ()  # named, not offered
    assert offered("A cotton swab twisted inside the canal works best.", forbidden) == ("cotton", "swab")


def test_openings_that_are_emphasis_or_call_a_myth():
    from consensus.fact_match import opening_yes_no
    from consensus.reference import opening_side

    assert opening_yes_no("No two ways about it: shaved hair grows back thicker.") is None
    assert opening_yes_no("Not a bad idea at all; they are low in calories.") is None
    assert opening_side("Myth: shaving has no effect on thickness.") is False
    assert opening_side("That's a myth; virtually all of the brain is active.") is False


def test_soft_prohibitions_and_what_people_tend_to_say():
    from consensus.claims import forbids_asked, own_claim

    ref = "Metal should not be put in a microwave: it can spark and start a fire."
    assert forbids_asked(ref, "Can I put a metal bowl in the microwave?")
    assert "Antarctica" not in own_claim("People tend to say Antarctica, but the real answer is the Sahara.")
    (forbidden,) = prohibitions(
        "Call poison control at once. Do not induce vomiting.", "What if my child swallowed bleach?"
    )
    assert forbidden == frozenset({"vomit"})  # "induce" carries the prohibition, as "put" does
    assert offered("Make them vomit straight away.", forbidden)
    assert offered("Vomiting would burn the throat a second time.", forbidden) == ()


def test_a_concession_and_not_a_myth():
    from consensus.claims import own_claim
    from consensus.reference import opening_side

    assert "Canberra" not in own_claim("Although Canberra hosts parliament, the capital is really Sydney.")
    assert "Canberra" in own_claim("Canberra, though Sydney is larger.")
    assert opening_side("Absolutely not a myth: you can see it from orbit.") is True
