"""Figures in text, with the quantity each counts, and when two figures state the same value (a reference's and an
answer's): the rules ``consensus.reference`` (claims on a quantity), ``consensus.figures`` and ``lm.figures`` read.

``quantities`` finds every number with its unit or noun ("4 g", "4,000 mg" -> (4, "mass"); "206 bones" -> "bone";
"in 1989" -> a calendar year; "9/5" -> a factor); units outside the table are read by pint ("238,900 miles",
"93 feet", "2 cups", at the figures the text gave). ``same_value`` compares a stated figure with a reference's
within the reference's own precision or as the reference rounded at the stated figure's precision within 1% (issue
45: "384,000 km" states 384,400 km, "7" does not state 7.35). Pure (pint's registry is loaded once, on first use).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from decimal import Decimal, InvalidOperation
from typing import Any

from consensus.fact_match import _STOP, _stem

__all__ = ["FRACTION", "YEAR", "quantities", "same_value"]

_QUANTITY = re.compile(
    r"(?<![\w./])(-?\d+(?:,\d{3})*(?:[ \u2009\u202f]\d{3}(?![\d,.]\d))*(?:\.\d+)?)(?:/(\d+(?:\.\d+)?)(?![\d/]))?"
    r"\s*(°\s*[cfk]\b|degrees?\s+(?:celsius|fahrenheit|c|f)\b|%|[^\W\d_]+)?",
    re.IGNORECASE,
)
# unit -> (quantity, factor to its base unit): "4 g" and "4,000 mg" state the same mass
_UNITS = {
    "g": ("mass", "1"), "gram": ("mass", "1"), "grams": ("mass", "1"), "gramme": ("mass", "1"),
    "grammes": ("mass", "1"), "mg": ("mass", "0.001"), "milligram": ("mass", "0.001"),
    "milligrams": ("mass", "0.001"), "kg": ("mass", "1000"), "kilogram": ("mass", "1000"),
    "kilograms": ("mass", "1000"), "mcg": ("mass", "0.000001"), "µg": ("mass", "0.000001"),
    "microgram": ("mass", "0.000001"), "micrograms": ("mass", "0.000001"),
    "ml": ("volume", "0.001"), "millilitre": ("volume", "0.001"), "milliliter": ("volume", "0.001"),
    "millilitres": ("volume", "0.001"), "milliliters": ("volume", "0.001"), "l": ("volume", "1"),
    "litre": ("volume", "1"), "liter": ("volume", "1"), "litres": ("volume", "1"), "liters": ("volume", "1"),
    "km": ("length", "1000"), "kilometre": ("length", "1000"), "kilometer": ("length", "1000"),
    "kilometres": ("length", "1000"), "kilometers": ("length", "1000"), "m": ("length", "1"),
    "metre": ("length", "1"), "meter": ("length", "1"), "metres": ("length", "1"), "meters": ("length", "1"),
    "cm": ("length", "0.01"), "mm": ("length", "0.001"),
    "%": ("percent", "1"), "percent": ("percent", "1"),
    "°c": ("°C", "1"), "celsius": ("°C", "1"), "°f": ("°F", "1"), "fahrenheit": ("°F", "1"),
    "degreescelsius": ("°C", "1"), "degreecelsius": ("°C", "1"), "degreesc": ("°C", "1"), "degreec": ("°C", "1"),
    "degreesfahrenheit": ("°F", "1"), "degreefahrenheit": ("°F", "1"), "degreesf": ("°F", "1"), "degreef": ("°F", "1"),
    "°k": ("kelvin", "1"), "kelvin": ("kelvin", "1"),
}  # fmt: skip
# a unit per time ("m/s", "km/h", "metres per second"): a rate, read per second
_RATE = re.compile(
    r"\s*(?:/|per\s+|an?\s+)(s|sec|secs|second|seconds|min|mins|minute|minutes|h|hr|hrs|hour|hours)\b", re.IGNORECASE
)
_PER_SECOND = {
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), Decimal(1)),
    **dict.fromkeys(("min", "mins", "minute", "minutes"), Decimal(60)),
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), Decimal(3600)),
}
# durations: an answer states many of them on one topic (a dose "every 4 to 6 hours" and "in 24 hours"), so they
# decide only when the prompt asks how long
_TIME = frozenset(
    {
        "second",
        "minute",
        "minut",
        "hour",
        "day",
        "days",
        "week",
        "month",
        "year",
        "decade",
        "decad",
        "centurie",
        "centuri",
    }
    | {"century"}
)  # with the stems ``_stem`` gives ("minutes" -> "minut", "days" stays)
_HOW_LONG = re.compile(r"\bhow (long|many (seconds|minutes|hours|days|weeks|months|years))\b", re.IGNORECASE)
# words after a number that name no quantity ("4 or 5", "3 to 4 g")
_NO_QUANTITY = _STOP | {"and", "or", "to", "times", "x", "st", "nd", "rd", "th", "s", "am", "pm"}
YEAR = "calendar year"
FRACTION = "fraction"  # a bare fraction ("multiply by 9/5"): a factor, which another factor ("5/9") contradicts


def quantities(text: str, spelled: bool = True) -> list[tuple[Decimal, str | None]]:
    """Every number of ``text`` with the quantity it counts, in that quantity's base unit: a unit ("4 g", "4,000 mg"
    -> (4, "mass"); "100 °C" -> "°C"), else the noun after it, stemmed ("206 bones" -> "bone"), else a calendar year
    for a whole number from 1000 to 2100 with no word after it ("in 1989."); a fraction is its value ("1/2 cup" ->
    (0.5, "cup")), a bare one a ``FRACTION`` ("by 9/5" -> (1.8, "fraction")); None when nothing says (a number before
    "and", "to"). A figure with a scale word is its value ("86 billion"); with ``spelled`` numbers in words count ("three bones" -> (3, "bone"); ``number_words``); a
    temperature in °F is stated in °C ("98.6 °F" -> (37.0, "°C"))."""
    out: list[tuple[Decimal, str | None]] = []
    plain = unicodedata.normalize("NFKC", text).replace("\u00a0", " ")
    plain = _signed(number_words(plain) if spelled else _SCALED.sub(_scaled, plain))  # "three bones": 3
    for m in _QUANTITY.finditer(plain):
        try:
            n = Decimal(re.sub(r"[, \u2009\u202f]", "", m.group(1)))  # "384,400", "384 400" (SI spacing)
        except InvalidOperation:  # pragma: no cover - the pattern only matches decimals
            continue
        unit = (m.group(3) or "").lower().replace(" ", "")
        q: str | None = None
        if m.group(2):  # a fraction: "9/5" is 1.8, "1/2 cup" half a cup
            denominator = Decimal(m.group(2))
            if not denominator:
                continue
            n = n / denominator
            if not unit or unit in _function_words():
                out.append((n, FRACTION))
                continue
        rate = _RATE.match(plain, m.end()) if unit else None
        measure = _measure(unit) if rate is not None else None
        if rate is not None and measure is not None:
            # a speed or a flow ("343 m/s", "1,235 km/h", "340 metres per second"): per second, at the figures given
            per = _PER_SECOND[rate.group(1).lower()]
            out.append((_figures(n * measure[1] / per, n), f"{measure[0]}/s"))
            continue
        if unit in _UNITS and _UNITS[unit][0] == "°F":  # one temperature scale: "98.6 °F" states 37.0 °C
            q, n = "°C", _figures((n - 32) * 5 / 9, n)
        elif unit in _UNITS:
            q, factor = _UNITS[unit]
            n = n.scaleb(Decimal(factor).adjusted())  # powers of ten: "8.8 km" is 8.8E+3 m, precise to 100 m
        elif unit and unit not in _function_words() and len(unit) >= 2 and (known := _pint_unit(unit)) is not None:
            q, scale = known  # "238,900 miles", "93 feet": at the figures the answer gave
            n = _figures(n * scale, n)
        elif unit and unit not in _function_words() and len(unit) >= 3:
            q = _stem(unit)
        elif (
            (not unit or (unit in _function_words() and unit != "s"))  # "the 1960s" is a decade, no year
            and n == n.to_integral_value()
            and 1000 <= n <= 2100
            and m.group(1).isdigit()
        ):
            q = YEAR
        out.append((n, q))
    return out


def _measure(unit: str) -> tuple[str, Decimal] | None:
    """A length, mass or volume unit (the table's or pint's) as (quantity, factor to the base unit); None else."""
    if unit in _UNITS:
        q, factor = _UNITS[unit]
        return (q, Decimal(factor)) if q in ("length", "mass", "volume") else None
    if unit in _function_words() or len(unit) < 2:
        return None
    return _pint_unit(unit)


# pint's dimensions the quantities above read, and the factor from pint's base unit to theirs (metre, gram, litre)
_PINT = {
    "[length]": ("length", Decimal(1)),
    "[mass]": ("mass", Decimal(1000)),
    "[length] ** 3": ("volume", Decimal(1000)),
}


@functools.cache
def _registry() -> Any:
    import pint  # loaded once, at the first unit the table above does not hold (about 1.5 s)

    return pint.UnitRegistry()


@functools.cache
def _pint_unit(word: str) -> tuple[str, Decimal] | None:
    """A length, mass or volume unit the table does not hold ("miles", "feet", "lb", "ounces") as (quantity, factor
    to the table's base unit); None for any other word ("bones")."""
    if not word.isalpha():
        return None
    try:
        base = (1 * _registry().parse_units(word)).to_base_units()
    except Exception:  # pint raises its own errors for a word that is no unit (UndefinedUnitError, parse errors)
        return None
    known = _PINT.get(str(base.dimensionality))
    return None if known is None else (known[0], Decimal(repr(float(base.magnitude))) * known[1])


def _figures(value: Decimal, written: Decimal) -> Decimal:
    """``value`` (``written`` converted) rounded to the significant figures ``written`` has ("238,900" has 4), two at
    least: "50 yards" is 46 m, not 50 m (a whole number's trailing zero reads as not significant)."""
    if not value:
        return value
    places = min(-1, _unit(written).adjusted() - written.copy_abs().adjusted())  # -(figures - 1)
    return value.scaleb(0).quantize(Decimal(1).scaleb(value.adjusted() + places))


def _unit(n: Decimal) -> Decimal:
    """One unit of ``n``'s last significant figure: 0.01 for 7.35, 1 for 7, 1,000 for 384,000 (a whole number's
    trailing zeros are not significant), 100 for 3.845E+8."""
    exponent = n.as_tuple().exponent
    if isinstance(exponent, int) and exponent < 0:
        return Decimal(1).scaleb(exponent)
    reduced = n.normalize().as_tuple().exponent
    return Decimal(1).scaleb(
        max(int(exponent) if isinstance(exponent, int) else 0, int(reduced) if isinstance(reduced, int) else 0)
    )


def same_value(stated: Decimal, reference: Decimal) -> bool:
    """Does an answer's ``stated`` figure state the ``reference``'s value? Within the reference's own precision
    (4.2 for "4 g"; 7 is not 7.35), or within one unit of the answer's last figure and 2% ("384,000 km",
    "385,000 km" for 384,400 km; "340 km" for 344 km; 206 is not 212)."""
    if stated == reference:
        return True
    gap = abs(stated - reference)
    # a whole number's trailing zeros are not read as significant ("50 m" is 50 give or take 5), but a reference
    # rarely means that much: within ``TRAILING_ZEROS_SPREAD`` of it at most ("50 yards", 46 m, is not "50 m")
    own = _unit(reference) / 2
    if _unit(reference) > 1:
        own = min(own, abs(reference) * TRAILING_ZEROS_SPREAD)
    return gap <= own or (gap <= _unit(stated) and gap <= abs(reference) * STATED_SPREAD)


STATED_SPREAD = Decimal("0.02")  # "340 km" states 344 km (1.2%); "7" does not state 7.35 (4.8%)


TRAILING_ZEROS_SPREAD = Decimal("0.05")
# a negative figure written with a minus sign (U+2212) or in words: "−273.15 °C", "minus 273.15 degrees"
_MINUS = re.compile(r"(?:\u2212|\bminus\s+)(?=\d)", re.IGNORECASE)


def _signed(text: str) -> str:
    return _MINUS.sub("-", text) if "\u2212" in text or "inus" in text else text


@functools.cache
def _function_words() -> frozenset[str]:
    # lazy: start-up cost, scikit-learn takes 4.7 s to import
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return _NO_QUANTITY | frozenset(str(w) for w in ENGLISH_STOP_WORDS)


def _decides(quantity: str, prompt: str) -> bool:
    return quantity not in _TIME or bool(_HOW_LONG.search(prompt))


def _show(n: Decimal) -> str:
    exponent = n.as_tuple().exponent
    text = format(n.quantize(Decimal("0.001")) if isinstance(exponent, int) and exponent < -3 else n, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


# ---- numbers in words ------------------------------------------------------------------------------------------
_SMALL = {
    w: k
    for k, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
        "seventeen eighteen nineteen".split()
    )
}
_TENS = {w: 10 * k for k, w in enumerate("_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()) if k > 1}
_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
_WORD = "|".join([*_SMALL, *_TENS, "hundred", *_SCALES])
_SPELLED = re.compile(
    rf"\b(\d+(?:\.\d+)?)\s+({'|'.join(_SCALES)})\b"  # "238 thousand", "1.5 million"
    rf"|\b(?:{_WORD})(?:(?:\s+and\s+|[\s-]+)(?:{_WORD}))*\b",
    re.IGNORECASE,
)


def _spelled(words: list[str]) -> list[str]:
    """A run of number words as the digits it says: "three hundred eighty-four thousand" -> ["384000"]; a word that
    cannot continue the number before it starts a new one ("two three" -> ["2", "3"]); an "and" that does not join
    the parts of one number ("two and three") and a scale word with no number before it ("thousand") stay words."""
    out: list[str] = []
    total = current = top = 0
    last: str | None = None  # the kind of the previous word: small, tens, hundred, scale, and
    started = False

    def flush() -> None:
        nonlocal total, current, top, last, started
        if started:
            out.append(str(total + current))
        total = current = top = 0
        last, started = None, False

    for k, w in enumerate(words):
        if w == "and":
            after = words[k + 1] if k + 1 < len(words) else ""
            if last in ("hundred", "scale") and (after in _SMALL or after in _TENS):
                last = "and"
            else:
                flush()
                out.append(w)
            continue
        kind = "small" if w in _SMALL else "tens" if w in _TENS else "hundred" if w == "hundred" else "scale"
        fits = {
            "small": last in (None, "hundred", "scale", "and") or (last == "tens" and _SMALL[w] < 10),
            "tens": last in (None, "hundred", "scale", "and"),
            "hundred": last == "small" and current < 20,
            "scale": last in ("small", "tens", "hundred") and (not top or _SCALES[w] < top),
        }[kind]
        if not fits:
            flush()
            if kind in ("hundred", "scale"):  # nothing before it to count
                out.append(w)
                continue
        started = True
        if kind == "small":
            current += _SMALL[w]
        elif kind == "tens":
            current += _TENS[w]
        elif kind == "hundred":
            current *= 100
        else:
            total += current * _SCALES[w]
            current, top = 0, _SCALES[w]
        last = kind
    flush()
    return out


def number_words(text: str) -> str:
    """``text`` with its numbers in words as digits: "twenty minutes" -> "20 minutes", "three hundred eighty-four
    thousand km" -> "384000 km", "238 thousand miles" -> "238000 miles", "one hundred and one" -> "101". A lone "one"
    stays a word (it is also a pronoun); "and" joins only the parts of one number. Pure."""

    def digits(m: re.Match[str]) -> str:
        if m.group(1):
            return _plain_number(Decimal(m.group(1)) * _SCALES[m.group(2).lower()])
        said = m.group(0)
        words = [w for w in re.split(r"[\s-]+", said.lower()) if w]
        return said if words == ["one"] else " ".join(_spelled(words))

    return _SPELLED.sub(digits, text)


_SCALED = re.compile(rf"\b(\d+(?:\.\d+)?)\s+({'|'.join(_SCALES)})\b", re.IGNORECASE)


def _scaled(m: re.Match[str]) -> str:
    """A figure with a scale word as digits ("86 billion" -> "86000000000"), as ``number_words`` reads it."""
    return _plain_number(Decimal(m.group(1)) * _SCALES[m.group(2).lower()])


def _plain_number(n: Decimal) -> str:
    """A decimal without an exponent or trailing zeros after the point ("1500000", "2.5")."""
    s = format(n, "f")
    return s.rstrip("0").rstrip(".") if "." in s else s
