"""consensus/ and emissions/ stay pure: no module there imports anything that does I/O.

Two checks, each proven on toy packages (one clean, several with one planted
fault) before it is trusted on the real ones:

- static: every module's syntax tree, including imports inside functions.
  Imports of I/O modules (files, environment, logging, threads, processes,
  network, model runtimes) and of the edge packages are refused, and so are
  calls of ``open``, ``print``, ``input``, ``exec``, ``eval`` and
  ``__import__``. Imports under ``if TYPE_CHECKING:`` are allowed (they never
  run);
- dynamic: a fresh interpreter imports every module of the packages and
  reports which forbidden modules that loaded (only the heavy runtimes and
  network stacks can be seen this way: ``os`` and friends are loaded by
  Python itself at start-up, which is why the static check exists).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PURE = ("consensus", "emissions")

FORBIDDEN_IMPORTS = frozenset(
    {
        # files, environment, processes and threads
        "os",
        "io",
        "pathlib",
        "tempfile",
        "shutil",
        "glob",
        "sqlite3",
        "logging",
        "threading",
        "concurrent",
        "multiprocessing",
        "subprocess",
        "signal",
        "sys",
        "importlib",
        # network
        "socket",
        "ssl",
        "selectors",
        "asyncio",
        "urllib",
        "http",
        "requests",
        "aiohttp",
        "boto3",
        "botocore",
        # model runtimes
        "onnxruntime",
        "onnx",
        "openvino",
        "torch",
        "sentence_transformers",
        "tokenizers",
        "transformers",
        # the project's edges: dependencies point from them to the core, never back
        "embedding",
        "validator",
        "storage",
        "lm",
        "judge",
        "narrative",
    }
)
FORBIDDEN_CALLS = frozenset({"open", "print", "input", "exec", "eval", "__import__"})
# loaded by Python's start-up or by numpy, scipy and scikit-learn before any module of ours: only the static check sees them
LOADED_ANYWAY = frozenset(
    {"os", "io", "pathlib", "tempfile", "shutil", "glob", "threading", "signal", "sys", "importlib", "urllib"}
)
# the rest are visible in sys.modules only if an import of ours loaded them
RUNTIME_MODULES = FORBIDDEN_IMPORTS - LOADED_ANYWAY


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _walk(node: ast.AST):
    """Every node, except the bodies of ``if TYPE_CHECKING:`` blocks."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child.test):
            for other in child.orelse:
                yield other
                yield from _walk(other)
            continue
        yield child
        yield from _walk(child)


def module_problems(path: Path, label: str) -> list[str]:
    """Every impure import or call in one module, as ``label:line: what``."""
    problems = []
    for node in _walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        for name in names:
            if name.split(".")[0] in FORBIDDEN_IMPORTS:
                problems.append(f"{label}:{node.lineno}: imports {name}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FORBIDDEN_CALLS:
            problems.append(f"{label}:{node.lineno}: calls {node.func.id}()")
    return problems


def package_problems(root: Path, package: str) -> list[str]:
    """``module_problems`` over every module of ``root/package`` (sub-packages included)."""
    files = sorted((root / package).rglob("*.py"))
    assert files, f"no modules in {root / package}"
    return [p for f in files for p in module_problems(f, str(f.relative_to(root)))]


def modules_of(root: Path, package: str) -> list[str]:
    """Dotted names of every module of ``root/package``."""
    out = []
    for f in sorted((root / package).rglob("*.py")):
        parts = list(f.relative_to(root).with_suffix("").parts)
        out.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return out


_PROBE = textwrap.dedent("""
    import importlib, json, sys
    sys.path.insert(0, {root!r})
    before = set(sys.modules)
    for name in {modules!r}:
        importlib.import_module(name)
    print(json.dumps(sorted(set(sys.modules) - before)))
""")


def runtime_modules_loaded(root: Path, packages: tuple[str, ...]) -> list[str]:
    """Forbidden runtime modules that importing every module of ``packages`` loads, in a fresh interpreter."""
    modules = [m for p in packages for m in modules_of(root, p)]
    code = _PROBE.format(root=str(root), modules=modules)
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=120, cwd=root)
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    return sorted(m for m in loaded if m.split(".")[0] in RUNTIME_MODULES)


# -- the checkers, proven on toy packages ------------------------------------------------------------
GOOD = '''
"""A pure toy module."""
from __future__ import annotations
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING
import numpy as np
from toy import helper
if TYPE_CHECKING:
    import io
    from pathlib import Path

@dataclass(frozen=True)
class Box:
    x: float

def norm(v: np.ndarray) -> float:
    opened = "open(" + "print"   # names in strings are not calls
    return math.sqrt(float(v @ v)) + len(opened) * 0
'''
BAD = {
    "import_os": "import os\nX = os.environ.get('A')\n",
    "from_pathlib": "from pathlib import Path\n",
    "logging_handlers": "import logging.handlers\n",
    "thread_in_function": "def f():\n    import threading\n    return threading.Thread\n",
    "concurrent_futures": "from concurrent.futures import ThreadPoolExecutor\n",
    "model_runtime": "def load():\n    import onnxruntime\n",
    "network": "import socket\n",
    "open_call": "def read(p):\n    with open(p) as fh:\n        return fh.read()\n",
    "print_call": "def shout():\n    print('x')\n",
    "edge_package": "from validator.settings import load_settings\n",
    "type_checking_else": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    pass\nelse:\n    import io\n",
}


def make_toy(root: Path, body: str | None) -> Path:
    """A package ``toy`` under ``root``: a clean module and a helper, plus ``bad.py`` holding ``body``."""
    pkg = root / "toy"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text('"""Toy."""\n')
    (pkg / "helper.py").write_text("VALUE = 1\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "good.py").write_text(GOOD)
    if body is not None:
        (pkg / "sub" / "bad.py").write_text(body)
    return root


def test_static_checker_passes_a_clean_package(tmp_path):
    assert package_problems(make_toy(tmp_path, None), "toy") == []


@pytest.mark.parametrize("fault", sorted(BAD))
def test_static_checker_finds_a_planted_fault(tmp_path, fault):
    problems = package_problems(make_toy(tmp_path, BAD[fault]), "toy")
    assert problems and all(p.startswith("toy/sub/bad.py:") for p in problems), problems


def test_runtime_checker_passes_a_clean_package(tmp_path):
    assert runtime_modules_loaded(make_toy(tmp_path, None), ("toy",)) == []


@pytest.mark.parametrize(
    "body, loaded",
    [
        ("import socket\n", "socket"),
        ("import logging\n", "logging"),
        ("from concurrent import futures\n", "concurrent"),
    ],
)
def test_runtime_checker_finds_a_planted_import(tmp_path, body, loaded):
    assert loaded in runtime_modules_loaded(make_toy(tmp_path, body), ("toy",))


# -- the real packages -------------------------------------------------------------------------------
@pytest.mark.parametrize("package", PURE)
def test_pure_packages_import_nothing_that_does_io(package):
    assert package_problems(ROOT, package) == []


def test_importing_the_pure_packages_loads_no_runtime():
    assert runtime_modules_loaded(ROOT, PURE) == []
