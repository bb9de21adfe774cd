"""What several test files share: toy rounds and vectors, issue 25's round, the import checker, a run without the SDK."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

from consensus.types import Response, Round
from judge.nli import NliJudge


def make_round(texts, latencies=None, confidences=None, miners=None, round_id="t-1", prompt="Q?") -> Round:
    n = len(texts)
    latencies = latencies or [1.0 + i for i in range(n)]
    confidences = confidences or [None] * n
    miners = miners or [f"m{i}" for i in range(n)]
    return Round(
        round_id=round_id,
        prompt=prompt,
        responses=tuple(Response(m, t, lat, c) for m, t, lat, c in zip(miners, texts, latencies, confidences)),
    )


def unit_rows(*rows) -> np.ndarray:
    x = np.array(rows, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return np.where(norms > 0, x / np.where(norms > 0, norms, 1), 0).astype(np.float32)


def block_vectors(groups, dim=32, spread=0.05, seed=0):
    """Unit vectors in groups: each group around its own random direction (within-group cosine ~0.99)."""
    rng = np.random.default_rng(seed)
    out = []
    for size in groups:
        centre = rng.normal(size=dim)
        for _ in range(size):
            v = centre + spread * np.linalg.norm(centre) * rng.normal(size=dim) / np.sqrt(dim)
            out.append(v / np.linalg.norm(v))
    return np.array(out, dtype=np.float32)


# issue 25: five identities say Saturn, three say Jupiter; no reference (the texts of the hostile case
# benchmarks/hostile_cases/25-wrong-majority-noref.json)
PLANETS = [
    "Jupiter is the largest planet in the Solar System, more than twice as massive as the others combined.",
    "The biggest planet is Jupiter, a gas giant about 11 times the diameter of Earth.",
    "Jupiter. Its equatorial diameter is roughly 143,000 km, and over 1,300 Earths would fit inside it.",
    "Saturn is the largest planet in the Solar System.",
    "The largest planet is Saturn, the gas giant famous for its spectacular ring system.",
    "Saturn: it is the biggest planet orbiting the Sun, about nine and a half times wider than Earth.",
    "It's Saturn. With its rings included, no other planet in our Solar System comes close in size.",
    "The Solar System's largest planet is Saturn, the sixth planet from the Sun.",
]


def planets_round(prompt: str = "Q?") -> Round:
    """The eight ``PLANETS`` answers as one round (fixed latencies): the right three, then the wrong five."""
    return make_round(PLANETS, latencies=[1.3, 1.1, 1.6, 0.7, 1.0, 1.2, 0.9, 1.4], prompt=prompt)


ROOT = Path(__file__).resolve().parents[1]


def imported_top_levels(path: Path) -> set[str]:
    """The top-level packages a module imports anywhere (in functions too; relative imports left out)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


_NO_SDK = """
import sys
class NoSDK:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"bittensor", "bittensor_core"}:
            raise ModuleNotFoundError(f"No module named {name!r}")
sys.meta_path.insert(0, NoSDK())
"""
_LOADED_NO_SDK = """
assert not any(m.split(".")[0] in {"bittensor", "bittensor_core"} for m in sys.modules)
print("ok")
"""


def run_without_sdk(script: str) -> None:
    """Run ``script`` in a fresh interpreter, from the repository root, where the chain SDK (bittensor) cannot be
    imported: it must pass and, at its end, have loaded no module of the SDK."""
    code = _NO_SDK + textwrap.dedent(script) + _LOADED_NO_SDK
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def round_report(**changes):
    """A daemon round's report (``validator.daemon.round_line.RoundLine``) of a round that reached consensus and paid
    most of a pool of 1000, with ``changes``."""
    from validator.daemon.round_line import RoundLine

    base = dict(
        sequence=1,
        round_id="round-000001",
        status="ok",
        recovered=None,
        miners=6,
        usable=5,
        failures={"timeout": 1},
        consensus_score=0.91,
        reached=True,
        top_miner="a",
        paid=900,
        seconds=1.0,
        stages={},
        pool=1000,
    )
    return RoundLine(**(base | changes))


class TableJudge(NliJudge):
    """An NLI judge that answers from a table (fast tests: no model) and counts what it was asked: an answer's verdict
    whichever side of the pair it is on (judge.nli reads both directions), 0.5 for a text not in the table, and an
    answer's denial follows from nothing."""

    name = "table-judge"

    def __init__(self, table: dict[str, float]) -> None:  # no super(): nothing is loaded
        self.table = table
        self.asked: list[tuple[str, str]] = []

    def follows(self, pairs) -> np.ndarray:
        self.asked += list(pairs)
        return np.array(
            [self.table.get(h, 0.0 if h.startswith("It is not true") else self.table.get(p, 0.5)) for p, h in pairs]
        )
