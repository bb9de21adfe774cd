"""Did you mean: an unknown settings section or key answered with the closest known ones (difflib; a value
outside its choices gets its suggestion from ``consensus.params.Options``).

One line each, never the whole list of known names: ``unknown setting; did you mean [consensus.clusters]
consensus_threshold?``, or, with nothing close, where the list is (docs/configuration.md).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable

from consensus.params import leaves

CUTOFF = 0.6  # difflib's ratio a known name needs to be suggested
NEAR_BEST = 0.1  # a second suggestion needs a ratio this close to the best one's


def closest(word: str, known: Iterable[str], n: int = 3) -> list[str]:
    """The known names closest to ``word``, best first: none below ``CUTOFF``, none far behind the best;
    case does not count."""
    lowered = {name.lower(): name for name in known}
    found = difflib.get_close_matches(word.lower(), list(lowered), n=n, cutoff=CUTOFF)
    ratios = [difflib.SequenceMatcher(None, word.lower(), f).ratio() for f in found]
    return [lowered[f] for f, r in zip(found, ratios, strict=True) if r >= ratios[0] - NEAR_BEST]


def did_you_mean(word: str, known: Iterable[str], show: Callable[[str], str] = str) -> str:
    """``did you mean x?`` (or ``x or y?``) for the closest known names, each as ``show`` writes it; empty when
    none is close."""
    found = closest(word, known)
    return f"did you mean {' or '.join(map(show, found))}?" if found else ""


def unknown_section(section: str, sections: Iterable[str], show: Callable[[str], str] = "[{}]".format) -> str:
    """The message for an unknown section: the closest known one, else every section (there are ten)."""
    names = list(sections)
    hint = did_you_mean(section, names, show)
    return f"unknown settings section; {hint}" if hint else f"unknown settings section (known: {', '.join(names)})"


def unknown_key(section: str, key: str, cls: type, show: Callable[[str], str] = str) -> str:
    """The message for an unknown key of ``section``: the closest known ones, else where the list is."""
    known = list(leaves(cls))
    hint = did_you_mean(key, known, show)
    if hint:
        return f"unknown setting; {hint}"
    return f"unknown setting ([{section}] has {len(known)}; docs/configuration.md lists them)"
