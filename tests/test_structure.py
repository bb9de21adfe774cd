"""The shape of the code (issues 26, 34, 48): no import circle, one writer of a round's files, at most 20 modules at
validator/'s top level, and a file past 800 lines named with its reason.

One concept per module (STYLE.md), no line cap: a file past ``LONG`` lines is a smell to look at, not a rule, so the
check lists each one and passes only those ``LONG_KEPT`` names with the reason it stays one file.

Each check walks the syntax trees of the packages pyproject.toml ships and of benchmarks/ (the lab, which
imports the product as a user does; imports inside functions included: a lazy import still ties two modules
together) and is proven on a toy package with the fault planted before it is trusted on the real ones. The
circle check runs twice: on the imports that run (``if TYPE_CHECKING:`` blocks excluded) and on every import,
type hints included (a value type living in the module that uses it is a circle in the design).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from tests.test_purity import _walk as walk  # every node but the bodies of ``if TYPE_CHECKING:``

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
LONG = 800  # a file past this many lines is a smell: does it hold one concept?
# path -> why it stays one file past LONG lines (keep it short; split the file rather than grow the list)
LONG_KEPT: dict[str, str] = {}
TOP_LEVEL_MAX = 20  # the .py files directly in validator/ (issue 48: the rest lives in folders by responsibility)
# the store keys of a round's own files: only the writer (validator/records/writer.py) puts anything under them
ROUND_FILES = frozenset(
    {
        "round_input",
        "evaluation",
        "heatmap",
        "embeddings",
        "replay_evaluation",
        "replay_embeddings",
        "replay_heatmap",
        "lm_evidence",
        "replay_lm_evidence",
    }
)
WRITER = "validator/records/writer.py"
# the store's own documents beside them: with the round files, only the reader (validator/records/reader.py) gets them
STORE_FILES = ROUND_FILES | {"ledger", "tick_plan", "summary", "replay_report"}
READER = "validator/records/reader.py"
LAB = "benchmarks"  # not shipped, but held to the same shape: no circle (docs/architecture.md)


def packages(root: Path = ROOT) -> list[str]:
    """The top-level packages pyproject.toml ships (``include = ["validator*", ...]``)."""
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["packages"]["find"]["include"]
    return sorted({p.rstrip("*").rstrip(".") for p in patterns})


def modules(root: Path, names: list[str]) -> dict[str, Path]:
    out = {}
    for name in names:
        for f in sorted((root / name).rglob("*.py")):
            parts = list(f.relative_to(root).with_suffix("").parts)
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    return out


def import_graph(root: Path, names: list[str], hints: bool = False) -> dict[str, set[str]]:
    """Module -> the modules of ``names`` it imports (``from a import b``: ``a.b`` when that is a module);
    with ``hints`` the imports under ``if TYPE_CHECKING:`` too."""
    mods = modules(root, names)

    def resolve(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps: set[str] = set()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree) if hints else walk(tree):
            if isinstance(node, ast.Import):
                deps.update(filter(None, (resolve(a.name) for a in node.names)))
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package
                    for _ in range(node.level - 1):
                        anchor = anchor.rpartition(".")[0]
                    base = f"{anchor}.{base}" if base else anchor
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    found = full if full in mods else resolve(base)
                    if found:
                        deps.add(found)
        deps.discard(name)
        graph[name] = deps
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def long_modules(root: Path, limit: int = LONG) -> list[str]:
    """Every module outside benchmarks/, scripts/ and tests/ (and hidden directories) longer than ``limit``."""
    skip = {"benchmarks", "scripts", "tests"}
    out = []
    for f in sorted(root.rglob("*.py")):
        rel = f.relative_to(root)
        if rel.parts[0] in skip or any(p.startswith(".") for p in rel.parts):
            continue
        lines = len(f.read_text(encoding="utf-8").splitlines())
        if lines > limit:
            out.append(f"{rel}: {lines} lines")
    return out


def top_level_modules(root: Path, package: str = "validator") -> list[str]:
    """The .py files directly in ``package`` (``__init__.py`` and ``__main__.py`` included)."""
    return sorted(f.name for f in (root / package).glob("*.py"))


def _key_calls(root: Path, names: list[str], skip: str, methods: set[str], files: frozenset[str]) -> list[str]:
    """Every call of ``.<method>(...)`` (or a function of that name) whose arguments build a key of ``files``
    (``keys.<name>(...)``) outside ``skip``, as ``path:line``."""
    out = []
    for path in modules(root, names).values():
        rel = path.relative_to(root).as_posix()
        if rel == skip:
            continue
        for node in walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name not in methods:
                continue
            for arg in [*node.args, *(k.value for k in node.keywords)]:
                for sub in ast.walk(arg):
                    if (
                        isinstance(sub, ast.Call)
                        and isinstance(sub.func, ast.Attribute)
                        and isinstance(sub.func.value, ast.Name)
                        and sub.func.value.id == "keys"
                        and sub.func.attr in files
                    ):
                        out.append(f"{rel}:{node.lineno}")
    return out


def round_file_writes(root: Path, names: list[str]) -> list[str]:
    """Every store write (``.put(...)``, ``put_once(...)``) whose arguments build a round file's key, outside the
    writer, as ``path:line``."""
    return _key_calls(root, names, WRITER, {"put", "put_once"}, ROUND_FILES)


def store_file_reads(root: Path, names: list[str]) -> list[str]:
    """Every store read (``.get(...)``) whose arguments build the key of a round file or of the store's own
    documents (ledger, tick plan, summary, a replay's report), outside the reader, as ``path:line``."""
    return _key_calls(root, names, READER, {"get"}, STORE_FILES)


# ---- the checks, proven on toy packages first ----------------------------------------------------------------


def _toy(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text('[tool.setuptools.packages.find]\ninclude = ["pkg*"]\n')
    return tmp_path


def test_the_checkers_see_a_lazy_circle_a_long_module_and_a_stray_write(tmp_path):
    root = _toy(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "from pkg.b import f\n",
            "pkg/b.py": "def f():\n    from pkg import a\n",
            "pkg/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.d import x\n",
            "pkg/d.py": "from pkg.c import y\n" + "z = 1\n" * LONG,
            "pkg/e.py": "from storage import keys\ndef w(store):\n    store.put(keys.heatmap('r'), b'')\n",
            "pkg/f.py": "from storage import keys\ndef r(store):\n    return store.get(keys.ledger())\n",
        },
    )
    names = packages(root)
    assert names == ["pkg"]
    assert cycles(import_graph(root, names)) == [["pkg.a", "pkg.b"]]  # c -> d only under TYPE_CHECKING
    assert cycles(import_graph(root, names, hints=True)) == [["pkg.a", "pkg.b"], ["pkg.c", "pkg.d"]]
    assert long_modules(root) == [f"pkg{'/'}d.py: {LONG + 1} lines"]
    assert top_level_modules(root, "pkg") == ["__init__.py", "a.py", "b.py", "c.py", "d.py", "e.py", "f.py"]
    assert round_file_writes(root, names) == ["pkg/e.py:3"]
    assert store_file_reads(root, names) == ["pkg/f.py:3"]


def test_no_import_circle():
    assert cycles(import_graph(ROOT, [*packages(), LAB])) == []


def test_no_import_circle_even_through_type_hints():
    assert cycles(import_graph(ROOT, [*packages(), LAB], hints=True)) == []


def test_a_file_past_800_lines_outside_benchmarks_scripts_and_tests_says_why_it_stays_one_file():
    """Reported, not capped: a long file passes when ``LONG_KEPT`` gives its reason (and an entry that is no
    longer long is dropped from the list)."""
    long = {line.partition(":")[0] for line in long_modules(ROOT)}
    assert sorted(long - set(LONG_KEPT)) == [], f"past {LONG} lines: one concept per module, or a reason in LONG_KEPT"
    assert sorted(set(LONG_KEPT) - long) == []


def test_validator_keeps_at_most_20_modules_at_its_top_level():
    found = top_level_modules(ROOT)
    assert len(found) <= TOP_LEVEL_MAX, f"{len(found)} modules at validator/'s top level: {found}"


def test_only_the_writer_puts_a_round_s_files():
    assert round_file_writes(ROOT, packages()) == []


def test_only_the_reader_gets_a_round_s_files_and_the_store_s_documents():
    assert store_file_reads(ROOT, [*packages(), LAB]) == []


@pytest.mark.parametrize("package", ["consensus", "emissions", "storage", "validator"])
def test_the_packages_are_found(package):
    assert package in packages()


def lab_names(root: Path = ROOT) -> list[str]:
    """The settings of the rules measured and not shipped (``benchmarks.lab.LabConfig``'s fields)."""
    tree = ast.parse((root / LAB / "lab" / "__init__.py").read_text(encoding="utf-8"))
    config = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "LabConfig")
    return [n.target.id for n in config.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)]


def lab_names_in_product(root: Path = ROOT) -> list[str]:
    """Every shipped module that names a lab rule's setting, as ``path: name``."""
    names = lab_names(root)
    return [
        f"{path.relative_to(root).as_posix()}: {name}"
        for path in modules(root, packages(root)).values()
        for name in names
        if name in path.read_text(encoding="utf-8")
    ]


def test_the_lab_checker_sees_a_product_that_names_a_lab_rule(tmp_path):
    root = _toy(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "if config.quality_toy > 0:\n    pass\n",
            "benchmarks/lab/__init__.py": "class LabConfig:\n    quality_toy: float = 0.0\n",
        },
    )
    assert lab_names(root) == ["quality_toy"]
    assert lab_names_in_product(root) == ["pkg/a.py: quality_toy"]


def test_the_product_never_learns_a_lab_rule_s_name():
    """A rule under measurement lives in benchmarks/lab/; the shipped packages name none of its settings."""
    assert {"quality_glossary", "sybil_detection", "coverage_semantic"} <= set(lab_names())
    assert lab_names_in_product() == []
