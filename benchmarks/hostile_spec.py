"""The hostile cases as data, and their expectations checked against what a round paid (pure: no model).

A case file (``benchmarks/hostile_cases/<case>.json``) holds one round in the project's round
format (docs/round-format.md) plus what the bench needs to judge it:

```
{"case": "copy-zero-width", "issue": 24, "title": "...", "modes": ["off"],
 "round": {"round_id": ..., "prompt": ..., "reference": null, "responses": [{"miner", "text", "latency_s", ...}]},
 "roles": {"honest": ["h-0", ...], "copier": ["x-0"]},
 "made_by": {"x-0": {"op": "zero_width", "from": "h-0", "seed": 1}},
 "expect": [{"kind": "each_below_mean", "who": "copier", "than": "honest", "bound": 0.5,
             "text": "each disguised copy earns < 0.5x an honest mean"}]}
```

``modes``: ``off`` runs without the LM (as ``benchmarks.validity``), ``lm`` with the embedded LM
(``python -m benchmarks.hostile --lm``). ``made_by`` says how an attacker's text was made
(``benchmarks.attacks``; hand-written and LM-written texts say so). Expectation kinds, each a
sentence of issues 24/25 (figures are shares of what the round paid):

| kind | passes when | figure |
|---|---|---|
| ``each_below_mean`` | every ``who`` earns < ``bound`` x the mean of ``than`` | the largest ratio |
| ``each_at_least_mean`` | every ``who`` earns >= ``bound`` x the mean of ``than`` (an honest form is not paid less) | the least ratio |
| ``total_at_most_mean`` | ``who`` together earn <= ``bound`` x the mean of ``than`` | their total's ratio |
| ``total_below`` | ``who`` together earn less than ``than`` together | both totals |
| ``each_above`` | the least-paid ``who`` earns more than the best-paid ``than`` | both, and their ratio |
| ``all_paid`` | every ``who`` earns something | how many are paid |
| ``zero`` | ``who`` earn nothing at all | their total |
| ``not_merged`` | no two ``who`` are one voice (a shared group, or one a copy of another) | the merges |
| ``keeps_pay`` | every ``who`` earns >= ``bound`` x what it earns in the round without ``without`` | the least ratio |
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from consensus.types import Round
from validator.records.round_input import parse_round

CASES_DIR = Path(__file__).with_name("hostile_cases")
KINDS = (
    "each_below_mean",
    "each_at_least_mean",
    "total_at_most_mean",
    "total_below",
    "each_above",
    "all_paid",
    "zero",
    "not_merged",
    "keeps_pay",
)
MODES = ("off", "lm")
NEEDS_THAN = frozenset({"each_below_mean", "each_at_least_mean", "total_at_most_mean", "total_below", "each_above"})
NEEDS_BOUND = frozenset({"each_below_mean", "each_at_least_mean", "total_at_most_mean", "keeps_pay"})


class CaseError(ValueError):
    """A case file that does not describe a runnable case (the file and the field are named)."""


@dataclass(frozen=True)
class Expectation:
    kind: str
    who: str  # a role of the case
    text: str  # the issue's sentence, as the table prints it
    than: str | None = None
    bound: float | None = None
    without: str | None = None  # keeps_pay: the role left out of the counterfactual round


@dataclass(frozen=True)
class Case:
    name: str
    issue: int
    title: str
    modes: tuple[str, ...]
    round: Round
    roles: Mapping[str, tuple[str, ...]]
    expect: tuple[Expectation, ...]
    made_by: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def without(self, role: str) -> Round:
        """The counterfactual round: this one without ``role``'s responses."""
        gone = set(self.roles[role])
        return Round(
            f"{self.round.round_id}~without-{role}",
            self.round.prompt,
            tuple(r for r in self.round.responses if r.miner not in gone),
            self.round.reference,
        )


@dataclass(frozen=True)
class Paid:
    """What one round paid, as the expectations read it (by miner)."""

    amounts: Mapping[str, int]
    shares: Mapping[str, float]
    reasons: Mapping[str, str]
    groups: tuple[frozenset[str], ...] = ()  # one voice: the evaluation's groups
    copy_of: Mapping[str, str] = field(default_factory=dict)  # copier -> source

    @classmethod
    def of(cls, round_: Round, evaluation: Any, allocation: Any) -> Paid:
        """From ``consensus.decide``'s ``Evaluation`` and ``emissions.allocate``'s ``Allocation``."""
        miners = [r.miner for r in round_.responses]
        results = evaluation.results
        return cls(
            amounts={m: int(a) for m, a in zip(miners, allocation.amounts)},
            shares={m: float(s) for m, s in zip(miners, allocation.shares)},
            reasons={res.miner: res.reason.value for res in results},
            groups=tuple(frozenset(miners[i] for i in g) for g in getattr(evaluation, "groups", ())),
            copy_of={res.miner: miners[res.copy_of] for res in results if res.copy_of is not None},
        )


@dataclass(frozen=True)
class Verdict:
    measured: str  # the figure as the table prints it
    value: float | None  # the figure the bound applies to (None when it is not one number)
    passed: bool


def _load_error(path: Path | str, what: str) -> CaseError:
    return CaseError(f"{path}: {what}")


def parse_case(data: Mapping[str, Any], path: Path | str = "<case>") -> Case:
    """A case from its JSON; ``CaseError`` naming the field when it cannot run."""
    try:
        round_ = parse_round(data["round"], f"{path}: round")
    except KeyError:
        raise _load_error(path, "no 'round'") from None
    except ValueError as exc:
        raise _load_error(path, f"round: {exc}") from None
    name = data.get("case")
    if not isinstance(name, str) or not name:
        raise _load_error(path, "'case' must be a non-empty string")
    miners = {r.miner for r in round_.responses}
    roles = {}
    for role, who in (data.get("roles") or {}).items():
        if not isinstance(who, list) or not who:
            raise _load_error(path, f"roles.{role}: must be a non-empty list of miners")
        unknown = [m for m in who if m not in miners]
        if unknown:
            raise _load_error(path, f"roles.{role}: {unknown} answer nowhere in the round")
        roles[role] = tuple(who)
    modes = tuple(data.get("modes", ["off"]))
    if not modes or any(m not in MODES for m in modes):
        raise _load_error(path, f"modes: {list(modes)}; each must be one of {MODES}")
    expect = []
    for k, e in enumerate(data.get("expect") or ()):
        where = f"expect[{k}]"
        kind = e.get("kind")
        if kind not in KINDS:
            raise _load_error(path, f"{where}.kind: {kind!r} is not one of {KINDS}")
        for key in ("who", "than", "without"):
            if e.get(key) is not None and e[key] not in roles:
                raise _load_error(path, f"{where}.{key}: no role {e[key]!r}")
        if e.get("who") is None or (kind in NEEDS_THAN and e.get("than") is None):
            raise _load_error(path, f"{where}: {kind} needs 'who'{' and than' if kind in NEEDS_THAN else ''}")
        if kind in NEEDS_BOUND and not isinstance(e.get("bound"), (int, float)):
            raise _load_error(path, f"{where}.bound: {kind} needs a number")
        if kind == "keeps_pay" and e.get("without") is None:
            raise _load_error(path, f"{where}: keeps_pay needs 'without'")
        if not e.get("text"):
            raise _load_error(path, f"{where}.text: say what the issue expects")
        expect.append(Expectation(kind, e["who"], e["text"], e.get("than"), e.get("bound"), e.get("without")))
    if not expect:
        raise _load_error(path, "no expectations")
    made_by = data.get("made_by") or {}
    for m in made_by:
        if m not in miners:
            raise _load_error(path, f"made_by.{m}: answers nowhere in the round")
    issue = data.get("issue")
    if not isinstance(issue, int):
        raise _load_error(path, "'issue' must be an issue number")
    return Case(name, issue, str(data.get("title", "")), modes, round_, roles, tuple(expect), made_by)


def read_case_json(path: Path) -> dict[str, Any] | None:
    """A case file's JSON; None for the data files beside the cases (no "case" key)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return data if isinstance(data, dict) and "case" in data else None


def case_files(directory: Path = CASES_DIR) -> Iterator[tuple[Path, dict[str, Any]]]:
    """Each case file of ``directory`` (sorted by file name) with its JSON (``read_case_json``; data files left out)."""
    for path in sorted(directory.glob("*.json")):
        data = read_case_json(path)
        if data is not None:
            yield path, data


def load_cases(directory: Path = CASES_DIR, names: Sequence[str] | None = None) -> list[Case]:
    """Every case of ``directory`` (sorted by file name), or the ones ``names`` lists (unknown: ``CaseError``)."""
    cases = [parse_case(data, path) for path, data in case_files(directory)]
    seen: dict[str, int] = {}
    for c in cases:
        seen[c.name] = seen.get(c.name, 0) + 1
    twice = [n for n, k in seen.items() if k > 1]
    if twice:
        raise CaseError(f"{directory}: case names used twice: {twice}")
    if names:
        missing = [n for n in names if n not in seen]
        if missing:
            raise CaseError(f"no such case(s): {missing}; known: {sorted(seen)}")
        cases = [c for c in cases if c.name in set(names)]
    return cases


# --- expectations -----------------------------------------------------------------------------------


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _ratio(x: float, mean: float) -> float:
    return x / mean if mean > 0 else (float("inf") if x > 0 else 0.0)


def _x(r: float) -> str:
    return "inf" if r == float("inf") else f"{r:.2f}x"


def check(case: Case, e: Expectation, paid: Paid, counterfactual: Paid | None = None) -> Verdict:
    """Whether ``paid`` meets ``e`` (``counterfactual``: the round without ``e.without``, for keeps_pay)."""
    who = case.roles[e.who]
    s = paid.shares
    if e.kind == "each_below_mean":
        mean = _mean([s[m] for m in case.roles[e.than]])
        ratios = {m: _ratio(s[m], mean) for m in who}
        worst = max(ratios.values())
        text = f"max {_x(worst)}" + (f" ({', '.join(_x(ratios[m]) for m in who)})" if len(who) > 1 else "")
        return Verdict(text + ("" if mean > 0 else f"; {e.than} mean 0"), worst, mean > 0 and worst < e.bound)
    if e.kind == "each_at_least_mean":
        mean = _mean([s[m] for m in case.roles[e.than]])
        ratios = {m: _ratio(s[m], mean) for m in who}
        least = min(ratios.values())
        text = f"min {_x(least)}" + (f" ({', '.join(_x(ratios[m]) for m in who)})" if len(who) > 1 else "")
        return Verdict(text + ("" if mean > 0 else f"; {e.than} mean 0"), least, mean > 0 and least >= e.bound - 1e-9)
    if e.kind == "total_at_most_mean":
        mean = _mean([s[m] for m in case.roles[e.than]])
        r = _ratio(sum(s[m] for m in who), mean)
        return Verdict(f"{_x(r)}" + ("" if mean > 0 else f"; {e.than} mean 0"), r, mean > 0 and r <= e.bound + 1e-9)
    if e.kind == "total_below":
        a, b = sum(s[m] for m in who), sum(s[m] for m in case.roles[e.than])
        return Verdict(f"{e.who} {a:.3f} vs {e.than} {b:.3f}", _ratio(a, b), a < b)
    if e.kind == "each_above":
        low, high = min(s[m] for m in who), max(s[m] for m in case.roles[e.than])
        r = _ratio(low, high)
        return Verdict(f"min {e.who} {low:.3f} vs max {e.than} {high:.3f} ({_x(r)})", r, low > high)
    if e.kind == "all_paid":
        n = sum(s[m] > 0 for m in who)
        return Verdict(f"{n}/{len(who)} paid, min {min(s[m] for m in who):.3f}", float(n), n == len(who))
    if e.kind == "zero":
        total = sum(paid.amounts[m] for m in who)
        return Verdict(
            f"{sum(s[m] for m in who):.3f} ({sum(paid.amounts[m] > 0 for m in who)}/{len(who)} paid)",
            float(sum(s[m] for m in who)),
            total == 0,
        )
    if e.kind == "not_merged":
        members = set(who)
        merges = [sorted(g & members) for g in paid.groups if len(g & members) > 1]
        copies = sorted(f"{c}<-{src}" for c, src in paid.copy_of.items() if c in members and src in members)
        merges += [[c] for c in copies]
        text = "none" if not merges else "; ".join("+".join(g) for g in merges)
        return Verdict(f"merged: {text}", float(len(merges)), not merges)
    if e.kind == "keeps_pay":
        if counterfactual is None:
            raise ValueError(f"{case.name}: keeps_pay needs the round without {e.without}")
        ratios = {m: _ratio(paid.amounts[m], counterfactual.amounts[m]) for m in who}
        worst = min(ratios.values())
        detail = ", ".join(f"{paid.amounts[m]:,} vs {counterfactual.amounts[m]:,}" for m in who)
        return Verdict(f"min {_x(worst)} ({detail} units)", worst, worst >= e.bound - 1e-9)
    raise ValueError(f"unknown expectation kind {e.kind!r}")


# --- writing case files -----------------------------------------------------------------------------


def _visible(ch: str) -> bool:
    """Characters kept as written in the JSON: Latin text and everyday punctuation; the rest is escaped."""
    if ord(ch) < 128:
        return True
    cat = unicodedata.category(ch)
    if cat.startswith(("C", "Z")):  # invisible, format, private use, odd spaces
        return False
    return ord(ch) < 0x250 or ch in "–—‘’“”…•→°×±≈≤≥−⁴²³½¼¾€£"


_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def dump_json(data: Any) -> str:
    """JSON for the case files: readable text, with invisible and look-alike characters as \\u escapes.

    A zero-width space or a Cyrillic "а" is exactly what a reviewer must see in a diff.
    """
    raw = json.dumps(data, indent=1, ensure_ascii=False) + "\n"

    def esc(m: re.Match[str]) -> str:
        ch = m.group(0)
        if _visible(ch):
            return ch
        if ord(ch) > 0xFFFF:
            hi, lo = divmod(ord(ch) - 0x10000, 0x400)
            return f"\\u{0xD800 + hi:04x}\\u{0xDC00 + lo:04x}"
        return f"\\u{ord(ch):04x}"

    return _NON_ASCII.sub(esc, raw)
