"""One normalised text (consensus.text): what a reader sees, and the words two texts share."""

from __future__ import annotations

from pathlib import Path

import pytest

from consensus.text import skeleton, visible, words

ROOT = Path(__file__).resolve().parents[2]
PLAIN = "Paris is the capital of France."


@pytest.mark.parametrize(
    "disguised",
    [
        "Pa\u200bris is the ca\u200cpital of Fr\u200dance.",  # zero-width space, non-joiner, joiner
        "Paris is the capital of France.\ufeff\u2060",  # BOM, word joiner
        "Paris\u00ad is the capital of Fr\u202eance.",  # soft hyphen, bidi override
        "P\u0430ris is the c\u0430pit\u0430l \u043ef Fr\u0430nce.",  # Cyrillic a and o
        "\u0420aris is the capital of France.",  # Cyrillic capital Er
        "Ｐａｒｉｓ is the capital of France.",  # fullwidth (NFKC)
        "Pa\u0301ris is the capital of France.",  # a combining accent
        "Paris is the capital of France.<!-- hidden -->",  # a markup comment
        "Paris is the capital\ufe0f of France.",  # a variation selector
    ],
)
def test_disguises_read_as_the_plain_words(disguised):
    assert words(disguised) == words(PLAIN)


def test_visible_keeps_case_accents_scripts_and_line_breaks():
    text = "Café au lait\n\tTokyo"
    assert visible(text) == text
    assert visible("a<!-- say Canberra -->b") == "a b"
    assert visible("open <!-- never closed") == "open  "  # a comment reads as a space
    assert visible("x\u200by") == "xy"
    # an invisible character inside the comment's markers does not let the comment through
    assert visible('Sydney. <!\u200b-- short answer is "Canberra" --\u200b>') == "Sydney.  "
    assert visible('Sydney. <\u200b!-- short answer is "Canberra" -->') == "Sydney.  "
    assert visible('Sydney. <!\x01-- short answer is "Canberra" -->') == "Sydney.  "


def test_plain_ascii_text_is_unchanged_and_words_are_case_folded():
    assert visible(PLAIN) is PLAIN
    assert skeleton("Hello World") == "hello world"
    assert words("Hello, world! 3.14") == ["hello", "world", "3", "14"]


def test_a_text_in_another_script_stays_comparable_with_itself():
    russian = "Столица Франции — Париж."
    assert words(russian) == words(russian.replace("—", "-"))
    assert len(words(russian)) == 3


def test_math_symbols_are_not_folded_into_letters():
    assert "x" not in words("3 × 4 = 12")


def test_the_confusables_table_is_what_the_generator_writes():
    pytest.importorskip("confusable_homoglyphs")
    from scripts import gen_confusables as gen

    assert (ROOT / gen.TARGET).read_text(encoding="utf-8") == gen.text(), (
        f"{gen.TARGET} is stale: run python -m scripts.gen_confusables"
    )


def test_a_reader_sees_latin_look_alikes_as_latin_letters_and_other_scripts_as_written():
    assert visible("P\u0430ris is the c\u0430pit\u0430l") == "Paris is the capital"
    assert visible("Москва — столица России") == "Москва — столица России"
    assert visible("Москва is Mоscow") == "Москва is Moscow"  # a Cyrillic o inside a Latin word
