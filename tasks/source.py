"""Verifiable tasks: generated from a seed by ``reasoning-gym``, each with its own verifier (pure).

A task is identified by ``TaskSpec`` (family, the generator's version, seed, config) and generated as
``_gym().create_dataset(family, size=1, seed=seed, **config)[0]``: the same spec gives the same entry
(question, answer, metadata) on any machine with the same library version. The entry is what the
verifier needs (``score_answer(answer, entry)``); the validator stores it with the round, so a replay
verifies against exactly what was asked, whatever the library does later.

The miners see ``Task.prompt``: the generator's question and one line stating the answer format (a last
line ``Answer: ...``); ``tasks.extract`` reads what they write and ``tasks.verify`` asks the verifier.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import warnings
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import metadata
from typing import Any

LIBRARY = "reasoning-gym"
VERSION = metadata.version(LIBRARY)  # the generators' version, stored with every task

# The default task set (issue 44; benchmarks/journal/validity.md "Default task set (2026-11-29)" and "An unguessable
# default task set (2026-11-29)"): families general chat models answer in a few words, each at a setting of its
# reasoning-gym 0.1.25 generator whose answers spread over hundreds of values, so that the family's most common answer,
# sent without reading the question, is right on at most GUESS_BAR of its tasks (tests/tasks/test_source.py computes
# it from the generator). The earlier small settings could be guessed (gcd's `2` right on 31% of its tasks,
# letter_counting's `1` on 86%, leg_counting's `12` on 15%: a guessing miner earned 3x an honest identity). Not in it:
# gcd, leg_counting and letter_counting (guessable at any size small models answer), prime_factorization (hard for
# both Qwens; the 1.5B factorizes in LaTeX steps for minutes), lcm and fraction_simplification (to 100: right for none
# of the pool's miners in 6 of 6 and 6 of 7 rounds of README's first command), and, hard for both Qwens at their
# generators' defaults, calendar_arithmetic, family_relationships, base_conversion, time_intervals, gsm_symbolic,
# spell_backward. A family ``[tasks] config`` names takes that config instead.
DEFAULT_CONFIGS: Mapping[str, Mapping[str, Any]] = {
    "basic_arithmetic": {
        "min_terms": 2,
        "max_terms": 2,
        "min_digits": 2,
        "max_digits": 2,
        "operators": ["+", "-"],
        "allow_parentheses": False,
        "allow_negation": False,
    },
    "chain_sum": {"min_terms": 2, "max_terms": 3, "min_digits": 2, "max_digits": 2},
    "simple_equations": {
        "min_terms": 2,
        "max_terms": 2,
        "max_value": 200,
        "operators": ["+"],
        "operators_weights": [1.0],
    },
}
GUESS_BAR = 0.01  # the most common answer's share of a default family's tasks, at most (the generator's seeds)
DEFAULT_FAMILIES: tuple[str, ...] = tuple(DEFAULT_CONFIGS)

FORMAT = 'End your reply with a last line of the form "Answer: <your answer>".'


class TaskError(ValueError):
    """A task cannot be built: an unknown family, a config its generator rejects, an entry that is not JSON."""


@dataclass(frozen=True)
class TaskSpec:
    """What identifies a task: the generator (family and version), its seed and its config."""

    family: str
    seed: int
    config: Mapping[str, Any] = field(default_factory=dict)
    version: str = VERSION

    def to_json(self) -> dict[str, Any]:
        return {"family": self.family, "version": self.version, "seed": self.seed, "config": dict(self.config)}


@dataclass(frozen=True)
class Task:
    """A generated task: its spec, the question, the prompt the miners see and the verifier's entry."""

    spec: TaskSpec
    entry: Mapping[str, Any]  # the generator's entry as JSON values (question, answer, metadata)

    @property
    def question(self) -> str:
        return str(self.entry["question"])

    @property
    def answer(self) -> str:
        return str(self.entry["answer"])

    @property
    def prompt(self) -> str:
        return prompt_of(self.question)

    def to_json(self) -> dict[str, Any]:
        return {**self.spec.to_json(), "entry": json.loads(json.dumps(self.entry))}

    @classmethod
    def from_json(cls, doc: Any) -> Task:
        """A stored task; ``TaskError`` names the field that is missing or of the wrong type."""
        if not isinstance(doc, Mapping):
            raise TaskError(f"a task must be an object, got {type(doc).__name__}")
        family, version, seed = doc.get("family"), doc.get("version"), doc.get("seed")
        config, entry = doc.get("config", {}), doc.get("entry")
        if not isinstance(family, str) or not isinstance(version, str):
            raise TaskError("a task needs 'family' and 'version' strings")
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise TaskError("a task needs an integer 'seed'")
        if not isinstance(config, Mapping):
            raise TaskError("a task's 'config' must be an object")
        if not isinstance(entry, Mapping) or not isinstance(entry.get("question"), str) or "answer" not in entry:
            raise TaskError("a task's 'entry' must be an object with a 'question' string and an 'answer'")
        return cls(TaskSpec(family, seed, dict(config), version), dict(entry))


def _gym() -> Any:
    """The library, imported on first use (0.7 s; commands that only read stored tasks never pay it). Some of
    its dependencies' modules warn when first compiled (``cellpylib``: "is" with a literal); not ours to fix."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        import reasoning_gym  # lazy: start-up cost, 0.7 s, paid only by commands that generate tasks

    return reasoning_gym


def prompt_of(question: str) -> str:
    """The prompt of a task: the generator's question, then the answer format."""
    return f"{question.rstrip()}\n\n{FORMAT}"


def families() -> tuple[str, ...]:
    """Every family the installed library can generate."""
    return tuple(sorted(_gym().factory.DATASETS))


def config_key(config: Mapping[str, Any]) -> str:
    return json.dumps(dict(config), sort_keys=True)


@lru_cache(maxsize=256)
def _template(family: str, key: str) -> Any:
    """One dataset per family and config (its data files read once); ``generate`` reseeds a copy of it."""
    if family not in _gym().factory.DATASETS:
        raise TaskError(f"unknown task family {family!r} (reasoning-gym {VERSION} has {len(families())})")
    try:
        return _gym().create_dataset(family, size=1, seed=0, **json.loads(key))
    except (TypeError, ValueError, AssertionError) as exc:
        raise TaskError(f"task family {family!r}: its generator rejects the config {key}: {exc}") from None


# Families whose dataset derives nothing from its seed when built (only ``__getitem__`` reads it): a reseeded copy of
# one dataset gives the entries of a fresh one (``tests/tasks/test_source.py``); building ``spell_backward`` and
# ``letter_counting`` reads a word list or a book each time (57 ms and 6 ms). Others (``gsm_symbolic`` draws its
# templates from the seed when built) are built fresh for every task.
# The default families and five the earlier default set had (tested the same way).
RESEEDABLE = frozenset(DEFAULT_FAMILIES) | {
    "spell_backward",
    "calendar_arithmetic",
    "family_relationships",
    "base_conversion",
    "time_intervals",
}


def dataset(spec: TaskSpec) -> Any:
    """The dataset of ``create_dataset(family, size=1, seed=seed, **config)`` (for ``RESEEDABLE`` families a
    reseeded copy of one built once)."""
    if spec.version != VERSION:
        raise TaskError(f"task of {LIBRARY} {spec.version}; this validator has {VERSION}")
    template = _template(spec.family, config_key(spec.config))
    if spec.family not in RESEEDABLE:
        try:
            return _gym().create_dataset(spec.family, size=1, seed=spec.seed, **dict(spec.config))
        except (TypeError, ValueError, AssertionError) as exc:  # pragma: no cover - the template built with it
            raise TaskError(f"task family {spec.family!r}: {exc}") from None
    ds = copy.copy(template)
    ds.seed = spec.seed
    config = ds.config
    if dataclasses.is_dataclass(config) and not isinstance(config, type) and hasattr(config, "seed"):
        ds.config = dataclasses.replace(config, seed=spec.seed)
    return ds


def generate(spec: TaskSpec) -> Task:
    """The task of ``spec`` (module docstring); its entry is kept as JSON values, as stored."""
    entry = dataset(spec)[0]
    try:
        # a value JSON has no type for (gsm_symbolic's metadata holds Fractions) is kept as its text: the verifier
        # always reads this plain entry, in the first evaluation as in a replay
        plain = json.loads(json.dumps(entry, default=str))
    except (TypeError, ValueError) as exc:
        raise TaskError(f"task family {spec.family!r}: its entry is not JSON: {exc}") from None
    return Task(spec, plain)


@dataclass(frozen=True)
class UsualAnswer:
    """A family's most common answer at one config, over ``n`` of its generator's seeds: what a miner that never
    reads the question would send, and how often it is right (``share``)."""

    answer: str
    share: float
    distinct: int  # distinct answers among the n
    n: int


def usual_answer(family: str, config: Mapping[str, Any], n: int = 4000, first_seed: int = 10**9) -> UsualAnswer:
    """The most common answer of ``family`` at ``config`` over the seeds ``first_seed .. first_seed + n - 1``."""
    counts = Counter(str(generate(TaskSpec(family, first_seed + j, config)).answer) for j in range(n))
    answer, times = counts.most_common(1)[0]
    return UsualAnswer(answer, times / n, len(counts), n)


def check_families(names: Sequence[str], configs: Mapping[str, Mapping[str, Any]]) -> None:
    """Every family exists and builds with its config (``TaskError`` naming the first that does not)."""
    if not names:
        raise TaskError("no task family given")
    for name in names:
        generate(TaskSpec(name, 0, configs.get(name, {})))
    unknown = sorted(set(configs) - set(names))
    if unknown:
        raise TaskError(f"a config for a family not asked: {', '.join(unknown)}")
