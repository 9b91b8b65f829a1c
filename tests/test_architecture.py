"""The library's structure, read from its source with :mod:`ast` (nothing is imported):

* layers import only downward: ``metrics`` -> ``stats`` -> ``data`` -> ``studies`` -> ``run`` (a module may
  import from layers listed before its own, and from the private top-level modules ``metaeval._*``);
* no import cycle between modules of ``lib/metaeval`` (an import inside a function counts: a cycle dodged by a
  function-local import is still a cycle a reader has to hold in their head);
* no private name (``_foo``) imported across modules, except from a private module (``_name.py`` or a module
  inside a ``_package``), which exists to be shared;
* a layer's private modules (``metaeval.stats._kernels``, ...) are imported only from inside that layer: another
  layer uses the layer's public functions (a study that reached into the stats kernels kept its own copies);
* no function of radon's grade F (cyclomatic complexity above 40, each ``and``/``or`` counted): one a reviewer
  cannot hold in their head.

Every module is covered without a list to maintain: a new module joins its layer by its folder.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

LIB = Path(__file__).resolve().parents[1] / "lib"
PACKAGE = "metaeval"
LAYERS = ("metrics", "stats", "data", "studies", "run")

# Known violations, each with the reason it is kept (none today). A violation not listed here fails the test;
# a listed one that is gone fails it too (so the list only ever shrinks).
KNOWN_CYCLES: set[frozenset[str]] = set()
KNOWN_PRIVATE_IMPORTS: set[tuple[str, str, str]] = set()
KNOWN_UPWARD_IMPORTS: set[tuple[str, str]] = set()


@dataclass(frozen=True)
class Import:
    importer: str  # dotted module name
    module: str  # the metaeval module imported from (resolved to a module, not a package attribute)
    names: tuple[str, ...]  # names taken from it (empty for `import x`)
    line: int
    type_only: bool  # under `if TYPE_CHECKING:` (never executed)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(LIB).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted((LIB / PACKAGE).rglob("*.py"))}


MODULES = _modules()


def _is_package(name: str) -> bool:
    return MODULES.get(name, Path()).name == "__init__.py"


def _absolute(importer: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = importer.split(".")
    if not _is_package(importer):
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    ids: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                ids.update(id(n) for n in ast.walk(child))
    return ids


def imports_of(name: str) -> list[Import]:
    """Every import of a metaeval module in module ``name`` (module level or inside functions)."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    typed = _type_checking_nodes(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == PACKAGE and alias.name in MODULES:
                    found.append(Import(name, alias.name, (), node.lineno, id(node) in typed))
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(name, node)
            if source.split(".")[0] != PACKAGE:
                continue
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                if sub in MODULES:  # `from metaeval.run import notebooks`: the module itself
                    found.append(Import(name, sub, (), node.lineno, id(node) in typed))
                elif source in MODULES:
                    found.append(Import(name, source, (alias.name,), node.lineno, id(node) in typed))
    return found


ALL_IMPORTS = [imp for name in MODULES for imp in imports_of(name)]


def layer(module: str) -> int | None:
    """The layer index of a module (None: the package root or a private top-level module)."""
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else None


def _private_module(module: str) -> bool:
    """``metaeval._io``, ``metaeval.metrics._inputs``, ``metaeval.x._pkg.y``: modules that exist to be shared
    (``__main__``, ``__init__`` are not private modules)."""
    return any(part.startswith("_") and not part.startswith("__") for part in module.split(".")[1:])


def test_every_library_folder_is_a_known_layer():
    folders = {p.name for p in (LIB / PACKAGE).iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders - set(LAYERS) <= {p for p in folders if p.startswith("_")}, (
        f"unknown layer folder(s) {sorted(folders - set(LAYERS))}: add them to LAYERS (and to the README picture)")


def upward_imports(imports: list[Import] | None = None) -> set[tuple[str, str]]:
    bad = set()
    for imp in ALL_IMPORTS if imports is None else imports:
        if imp.type_only:
            continue
        mine, theirs = layer(imp.importer), layer(imp.module)
        if mine is not None and imp.module == PACKAGE and imp.names:
            # the package root re-exports every layer: a layer importing a name from it (``from metaeval import
            # __version__``) points above itself; shared things live in a private leaf (metaeval._version).
            # (``import metaeval`` for its ``__file__``, as run.notebooks does, takes nothing from it.)
            bad.add((imp.importer, imp.module))
        elif mine is None and theirs is not None and _private_module(imp.importer):
            bad.add((imp.importer, imp.module))  # a private helper (metaeval._io, ...) depends on no layer
        elif mine is not None and theirs is not None and theirs > mine:
            bad.add((imp.importer, imp.module))
    return bad


@pytest.mark.parametrize("source, expected", [
    ("from metaeval import __version__", [("metaeval.data.planted", "metaeval")]),  # the arrow issue 37 removed
    ("from metaeval._version import __version__", []),
    ("from metaeval.studies.card import card_data", [("metaeval.data.planted", "metaeval.studies.card")]),
    ("from metaeval.stats.correlation import correlate", []),
])
def test_upward_rule_on_planted_sources(tmp_path, monkeypatch, source, expected):
    # which bug would this catch? a rule that lets a layer import from the package root (which imports every
    # layer), or from a layer below it, or flags a private leaf
    module = "metaeval.data.planted"
    path = tmp_path / "planted.py"
    path.write_text(source + "\n", encoding="utf-8")
    monkeypatch.setitem(MODULES, module, path)
    assert sorted(upward_imports(imports_of(module))) == expected


def test_layers_import_only_downward():
    bad = upward_imports()
    new = sorted(bad - KNOWN_UPWARD_IMPORTS)
    assert not new, "imports against the layer order (metrics -> stats -> data -> studies -> run): " + ", ".join(
        f"{a} imports {b}" for a, b in new)
    assert not (KNOWN_UPWARD_IMPORTS - bad), f"fixed, remove from KNOWN_UPWARD_IMPORTS: {KNOWN_UPWARD_IMPORTS - bad}"


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {name: set() for name in MODULES}
    for imp in ALL_IMPORTS:
        if imp.type_only or imp.module == imp.importer:
            continue
        # a package's __init__ that re-exports (or lazily maps) its modules is not part of a cycle with them:
        # importing `metaeval.x.y` runs `metaeval/__init__` and `metaeval/x/__init__` first by construction
        if _is_package(imp.importer) and imp.module.startswith(imp.importer + "."):
            continue
        if _is_package(imp.module) and imp.importer.startswith(imp.module + "."):
            continue
        graph[imp.importer].add(imp.module)
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components with more than one module."""
    import networkx as nx

    g = nx.DiGraph()
    g.add_nodes_from(graph)
    g.add_edges_from((a, b) for a, targets in graph.items() for b in targets)
    return sorted((frozenset(c) for c in nx.strongly_connected_components(g) if len(c) > 1), key=sorted)


def test_cycle_finder_finds_a_planted_cycle():
    # which bug would this catch? a finder that never reports anything
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert import_cycles(graph) == [frozenset({"a", "b", "c"})]
    assert import_cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_in_the_library():
    cycles = set(import_cycles(_graph()))
    new = cycles - KNOWN_CYCLES
    assert not new, "import cycles (function-local imports count): " + "; ".join(
        " <-> ".join(sorted(c)) for c in new)
    assert not (KNOWN_CYCLES - cycles), f"fixed, remove from KNOWN_CYCLES: {KNOWN_CYCLES - cycles}"


def private_imports() -> set[tuple[str, str, str]]:
    bad = set()
    for imp in ALL_IMPORTS:
        if imp.type_only or _private_module(imp.module):
            continue
        for name in imp.names:
            if name.startswith("_") and not name.startswith("__"):
                bad.add((imp.importer, imp.module, name))
    return bad


def test_no_private_name_imported_across_modules():
    bad = private_imports()
    new = sorted(bad - KNOWN_PRIVATE_IMPORTS)
    assert not new, ("private names imported from a public module (move them to a private module `_name.py` "
                     "that both import, or make them public): "
                     + ", ".join(f"{a} imports {n} from {b}" for a, b, n in new))
    assert not (KNOWN_PRIVATE_IMPORTS - bad), (
        f"fixed, remove from KNOWN_PRIVATE_IMPORTS: {sorted(KNOWN_PRIVATE_IMPORTS - bad)}")


def _layer_private(module: str) -> str | None:
    """The layer whose private module ``module`` is (``metaeval.stats._kernels`` -> ``stats``), else None."""
    parts = module.split(".")
    if len(parts) >= 3 and parts[1] in LAYERS and any(p.startswith("_") and not p.startswith("__") for p in parts[2:]):
        return parts[1]
    return None


def reach_ins(imports: list[Import] | None = None) -> set[tuple[str, str]]:
    """(importer, module) where a module outside a layer imports one of that layer's private modules."""
    bad = set()
    for imp in ALL_IMPORTS if imports is None else imports:
        owner = _layer_private(imp.module)
        if owner is not None and imp.importer.split(".")[1:2] != [owner]:
            bad.add((imp.importer, imp.module))
    return bad


def test_no_module_outside_a_layer_imports_its_private_modules():
    bad = sorted(reach_ins())
    assert not bad, ("private modules of a layer imported from outside it (use the layer's public functions): "
                     + ", ".join(f"{a} imports {b}" for a, b in bad))


@pytest.mark.parametrize("source, expected", [
    ("from metaeval.stats._kernels import draw_counts", [("metaeval.studies.planted", "metaeval.stats._kernels")]),
    ("from metaeval.stats import _planning_kernels", [("metaeval.studies.planted", "metaeval.stats._planning_kernels")]),
    ("from metaeval.stats.resampling import draw_indices", []),
    ("from metaeval.studies._card_format import fmt", []),
])
def test_reach_in_rule_on_planted_sources(tmp_path, monkeypatch, source, expected):
    # which bug would this catch? a rule that misses `from metaeval.stats._x import y` or `from metaeval.stats import
    # _x`, or flags a layer's own private modules
    module = "metaeval.studies.planted"
    path = tmp_path / "planted.py"
    path.write_text(source + "\n", encoding="utf-8")
    monkeypatch.setitem(MODULES, module, path)
    assert sorted(reach_ins(imports_of(module))) == expected


@pytest.mark.parametrize("source, expected", [
    ("from metaeval.stats.significance import _tail", [("metaeval.stats.significance", "_tail")]),
    ("from metaeval.stats._kernels import _tail", []),
    ("from metaeval import _io", []),
    ("from ._inputs import _check", []),
])
def test_private_import_rule_on_planted_sources(tmp_path, monkeypatch, source, expected):
    # which bug would this catch? a rule that misses `from x import _y`, or flags the private modules' use
    module = "metaeval.metrics.planted"
    path = tmp_path / "planted.py"
    path.write_text(source + "\n", encoding="utf-8")
    monkeypatch.setitem(MODULES, module, path)
    monkeypatch.setitem(MODULES, "metaeval.stats._kernels", tmp_path / "k.py")
    monkeypatch.setitem(MODULES, "metaeval.metrics._inputs", tmp_path / "i.py")
    found = [(i.module, n) for i in imports_of(module) if not _private_module(i.module)
             for n in i.names if n.startswith("_")]
    assert found == expected


#: radon's grade F starts above this cyclomatic complexity (grade E: 31-40)
MAX_COMPLEXITY = 40


def complex_functions(source: str) -> list[tuple[str, int, int]]:
    """(name, line, complexity) of every function or method in ``source`` above :data:`MAX_COMPLEXITY`, as
    ``radon cc`` grades them."""
    from radon.complexity import cc_visit
    from radon.visitors import Class

    blocks = cc_visit(source)
    functions = [m for b in blocks if isinstance(b, Class) for m in b.methods]
    functions += [b for b in blocks if not isinstance(b, Class)]
    return [(f.fullname, f.lineno, f.complexity) for f in functions if f.complexity > MAX_COMPLEXITY]


def test_complexity_rule_on_a_planted_function():
    # the function, its if and the 40 `and`s of 41 operands: 42, grade F; 39 operands: 40, grade E (the old
    # resampled_corr, 41, is what this rule caught: it is now a dispatcher over named steps)
    def source(n: int) -> str:
        return "def f(x):\n    if " + " and ".join(["x"] * n) + ":\n        return 1\n"

    assert complex_functions(source(41)) == [("f", 1, 42)]
    assert complex_functions(source(39)) == []


def test_no_function_of_grade_f():
    found = [f"{path.relative_to(LIB)}:{line} {name} ({cc})" for path in sorted(LIB.rglob("*.py"))
             for name, line, cc in complex_functions(path.read_text(encoding="utf-8"))]
    assert not found, f"functions of radon grade F (complexity > {MAX_COMPLEXITY}): split them into named steps: {found}"


# ----------------------------------------------------------------------------------------------------
# tests/README.md maps every module to its tests

README = Path(__file__).resolve().parent / "README.md"


def readme_map(text: str) -> tuple[set[str], set[str]]:
    """(modules, test files) named in backticks in the rows of the "Module -> tests" table."""
    import re

    table = text.split("## Module -> tests", 1)[1].split("\n\n", 2)[1]
    modules: set[str] = set()
    tests: set[str] = set()
    for row in table.splitlines()[2:]:
        cells = row.split("|")
        if len(cells) < 4:
            continue
        modules |= set(re.findall(r"`([\w/]+\.py)`", cells[1]))
        tests |= set(re.findall(r"`((?:peers/)?test_\w+\.py)`", cells[2]))
    return modules, tests


def unmapped_modules(text: str) -> list[str]:
    """Every module of the package (a layer's ``__init__.py`` too) not named in the table's first column."""
    modules, _ = readme_map(text)
    root = LIB / PACKAGE
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.py")
                  if p.relative_to(root).as_posix() not in modules)


def test_readme_maps_every_library_module():
    missing = unmapped_modules(README.read_text(encoding="utf-8"))
    assert not missing, f"tests/README.md's Module -> tests table lists no row for {missing}: add one naming its tests"


def test_readme_map_names_only_existing_test_files():
    _, tests = readme_map(README.read_text(encoding="utf-8"))
    here = README.parent
    absent = sorted(t for t in tests if not (here / t).is_file())
    assert not absent, f"tests/README.md names test files that do not exist: {absent}"


def test_readme_map_rule_on_a_planted_row():
    # a module dropped from its row is reported by name
    text = README.read_text(encoding="utf-8").replace("`stats/multiplicity.py` (", "`stats/multiplicity` (", 1)
    assert unmapped_modules(text) == ["stats/multiplicity.py"]
