"""The README's architecture table ("which room may import which"), enforced on the imports.

Every Python file of the package, of ``book/_ext``, ``tools`` and ``tests``, and every code cell of
``book/*.md``, is parsed with :mod:`ast`; each import is checked against the room the file is in
(:data:`ROOMS`, the rows of the README's table). Also: no private name (``_x``) of one module is used
by another (imported, read as an attribute, or named to a patch), and the package has no import cycle.
:func:`test_a_planted_violation_of_each_rule_is_caught` plants one of each in a small tree.
"""

from __future__ import annotations

import ast
import graphlib
import re
import sys
from pathlib import Path

import pytest

import booktools as bt
import buildpaths as paths

PACKAGE = "attention_graph"
BASE = {"attention_graph.validation", "attention_graph.registry"}
PRESENTATION = {"attention_graph.tables", "attention_graph.summaries", "attention_graph.explorables",
                "attention_graph.plots", "attention_graph.citable"}


def presentation(name: str) -> bool:
    """Whether a module is of the presentation room: tables, summaries, explorables, citable, or plots
    and its chapter modules."""
    return name in PRESENTATION or name.startswith(f"{PACKAGE}.plots.")


SPHINX = {"sphinx", "docutils", "myst_nb", "myst_parser", "sphinx_proof", "sphinx_exercise"}
# The README's rows, by their first column, and what a file of each may import (see `rule`).
ROOMS = {
    "`attention_graph/validation.py`, `registry.py`": "NumPy, SymPy (and IPython's `Math`",
    "concept modules": "validation, registry, earlier concepts",
    "`attention_graph/tables.py`, `summaries.py`, `explorables.py`, `plots/`, `citable.py`": "concept modules",
    "`attention_graph/__init__.py`": "concept modules",
    "`attention_graph/bench/`": "concept modules",
    "`book/*.md`": "the package",
    "`book/_ext/`": "Sphinx only",
    "`tests/`": "everything above, `tools/`",
    "`tools/`": "the standard library, Playwright, the package, each other",
}


def module_name(root: Path, path: Path) -> str:
    """The dotted name a file is imported by: ``attention_graph.bench.sparse``, ``booktools``."""
    rel = path.relative_to(root)
    if rel.parts[0] == "code":
        parts = list(rel.with_suffix("").parts[1:])
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    return path.stem  # tests/, tools/ and book/_ext/ are on the path (pyproject's pythonpath)


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The module a ``from ... import`` reads, ``from .x import y`` in ``pkg.m`` giving ``pkg.x``."""
    if not node.level:
        return node.module or ""
    here = module.split(".") if is_package else module.split(".")[:-1]
    return ".".join(here[:len(here) - node.level + 1] + ([node.module] if node.module else []))


def imports(tree: ast.AST, module: str, is_package: bool) -> list[tuple[int, str, list[str]]]:
    """(line, absolute module, names) of every import; ``from . import x`` gives module ``pkg.x``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, module, is_package)
            if node.level and not node.module:  # from . import registry: the module pkg.registry
                found += [(node.lineno, f"{base}.{alias.name}", []) for alias in node.names]
            else:
                found.append((node.lineno, base, [alias.name for alias in node.names]))
    return found


def bindings(tree: ast.AST, module: str, is_package: bool, ours: set[str]) -> dict[str, str]:
    """{name: module} for every name an import binds to a module of ours (``bw`` → ``attention_graph.blockwise``)."""
    bound = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            bound.update({a.asname or a.name.split(".")[0]: a.name if a.asname else a.name.split(".")[0]
                          for a in node.names if a.name.split(".")[0] in ours})
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, module, is_package)
            bound.update({a.asname or a.name: f"{base}.{a.name}".strip(".") for a in node.names
                          if f"{base}.{a.name}".strip(".") in ours})
        elif isinstance(node, ast.Assign):  # bw = importlib.import_module("attention_graph.blockwise"), or a helper's
            pairs = [(t, node.value) for t in node.targets]
            pairs += [(t, v) for t in node.targets if isinstance(t, ast.Tuple) and isinstance(node.value, ast.Tuple)
                      for t, v in zip(t.elts, node.value.elts)]
            for target, value in pairs:
                if isinstance(target, ast.Name) and isinstance(value, ast.Call) and value.args \
                        and isinstance(value.args[0], ast.Constant) and isinstance(value.args[0].value, str):
                    name = value.args[0].value
                    found = [m for m in (name, f"{PACKAGE}.{name}") if m in ours]
                    if found:
                        bound[target.id] = found[0]
    return bound


def private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def first_party(root: Path) -> set[str]:
    """Every module name of the checkout: the package's and those on the tests' path."""
    names = {module_name(root, p) for p in (root / "code").rglob("*.py")}
    for folder in ("tests", "tools", "book/_ext"):
        names |= {p.stem for p in (root / folder).glob("*.py")}
    return names


def concept_order(root: Path) -> dict[str, int]:
    """Concept modules by the position of their page in ``_toc.yml`` (a module named as a page)."""
    stems = re.findall(r"file:\s*book/([\w-]+)", (root / "_toc.yml").read_text())
    return {f"{PACKAGE}.{s}": k for k, s in enumerate(stems) if (root / "code" / PACKAGE / f"{s}.py").exists()}


def rule(root: Path, path: Path, module: str, target: str, ours: set[str], order: dict[str, int]) -> str | None:
    """Why importing ``target`` from ``module`` (the file ``path``) breaks the table, or None."""
    top = target.split(".")[0]
    where = path.relative_to(root).parts[0]
    in_package = top == PACKAGE
    if where == "tests":
        return None
    if where == "book" and path.suffix == ".md":
        return None if top not in ours or in_package else f"a page imports {target} (the package only)"
    if where == "book":  # book/_ext
        allowed = top in SPHINX or top in sys.stdlib_module_names or (top in ours and not in_package
                                                                      and (root / "book/_ext" / f"{top}.py").exists())
        return None if allowed else f"a Sphinx extension imports {target} (Sphinx only)"
    if where == "tools":
        if top in ours and not in_package and not (root / "tools" / f"{top}.py").exists():
            return f"a tool imports {target} (not the tests' or the extensions' modules)"
        return None
    # The package.
    if not in_package:
        if top in ours:
            return f"the package imports {target}, a module of the checkout"
        if module in BASE and top not in {"numpy", "sympy", "mpmath", "IPython"} | sys.stdlib_module_names:
            return f"{module} imports {target} (NumPy, SymPy only)"
        return None
    target = next((m for m in sorted(ours, key=len, reverse=True) if target == m or target.startswith(m + ".")),
                  target)
    if target == PACKAGE or target == module:
        return None
    lower = presentation(target) or target.startswith(f"{PACKAGE}.bench")
    if module.startswith(f"{PACKAGE}.bench"):
        return None if not target.startswith(tuple(f"{PACKAGE}.{m}" for m in ("tables", "summaries", "explorables",
                                                                              "plots"))) else \
            f"the benchmarks import {target} (concept modules only)"
    if presentation(module):
        return None if not target.startswith(f"{PACKAGE}.bench") else f"{module} imports {target}"
    if lower:
        return f"{module} imports {target} (only the presentation modules and bench import those)"
    if module in BASE:
        return None if target in BASE else f"{module} imports {target} (NumPy, SymPy only)"
    if module == PACKAGE or target in BASE:
        return None
    if module not in order:
        return f"{module} is in no room: name a page after it, or add it to a row of the README's table"
    if target not in order or order[target] >= order[module]:
        return f"{module} imports {target}, a later chapter's module (earlier concepts only)"
    return None


def sources(root: Path):
    """(path, module name, syntax tree) of every Python file and every page's code cells."""
    for folder in ("code", "tools", "tests", "book/_ext"):
        for path in sorted((root / folder).rglob("*.py")):
            yield path, module_name(root, path), ast.parse(path.read_text(), str(path))
    for path in sorted((root / "book").glob("*.md")):
        cells = [body for name, _arg, _opt, body, _start in bt.blocks(path.read_text()) if name == "code-cell"]
        code = "\n".join(line for body in cells for line in body if not line.lstrip().startswith(("%", "!", ":")))
        yield path, path.stem, ast.parse(code, str(path))


def violations(root: Path) -> list[str]:
    ours, order = first_party(root), concept_order(root)
    found, graph = [], {}
    for path, module, tree in sources(root):
        rel = path.relative_to(root)
        is_package = path.name == "__init__.py"
        for line, target, names in imports(tree, module, is_package):
            why = rule(root, path, module, target, ours, order)
            if why:
                found.append(f"{rel}:{line}: {why}")
            if rel.parts[0] == "code":
                graph.setdefault(module, set()).add(target if target.split(".")[0] != PACKAGE or target in ours
                                                    else target.rsplit(".", 1)[0])
            for name in names:
                if private(name) and target.split(".")[0] in ours:
                    found.append(f"{rel}:{line}: imports the private name {name} of {target}")
        aliases = bindings(tree, module, is_package, ours)
        modules = set(aliases)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules \
                    and private(node.attr):
                found.append(f"{rel}:{node.lineno}: uses the private name {node.attr} of {aliases[node.value.id]}")
            elif isinstance(node, (ast.Tuple, ast.Call)):
                items = node.elts if isinstance(node, ast.Tuple) else node.args
                for a, b in zip(items, items[1:]):
                    if isinstance(a, ast.Name) and a.id in modules and isinstance(b, ast.Constant) \
                            and isinstance(b.value, str) and private(b.value):
                        found.append(f"{rel}:{node.lineno}: names the private {b.value} of {aliases[a.id]}")
    try:
        list(graphlib.TopologicalSorter({m: {t for t in ts if t in graph and t != m}
                                         for m, ts in graph.items()}).static_order())
    except graphlib.CycleError as err:
        found.append(f"code: an import cycle: {' -> '.join(err.args[1])}")
    return sorted(set(found))


def test_the_checkout_follows_the_architecture_table():
    assert violations(paths.ROOT) == []


def test_the_readme_table_has_the_rooms_this_test_enforces():
    readme = (paths.ROOT / "README.md").read_text()
    table = readme.split("## Architecture", 1)[1].split("\n## ", 1)[0]
    rows = [(row.split("|")[1].strip(), row.split("|")[3].strip()) for row in table.splitlines()
            if row.startswith("| ") and not row.startswith(("| room", "| ---"))]
    assert len(rows) == len(ROOMS)
    shown = {room: next((may for first, may in rows if first.startswith(room)), "")[:len(allowed)]
             for room, allowed in ROOMS.items()}
    assert shown == ROOMS


PLANTED = {
    "_toc.yml": "root: book/intro\nchapters:\n  - file: book/scores\n  - file: book/softmax\n",
    "code/attention_graph/__init__.py": "from .softmax import softmax\n",
    "code/attention_graph/validation.py": "import numpy\n\ndef _check(x):\n    return x\n",
    "code/attention_graph/registry.py": "from . import validation\n",
    "code/attention_graph/softmax.py": "from .validation import _check\n\ndef softmax(x):\n    return x\n",
    "code/attention_graph/scores.py": "from .softmax import softmax\nfrom . import plots\n",
    "code/attention_graph/plots.py": "from . import validation as v\n\nv._check(1)\n",
    "code/attention_graph/cycle_a.py": "from . import cycle_b\n",
    "code/attention_graph/cycle_b.py": "from . import cycle_a\n",
    "book/_ext/badge.py": "from attention_graph import registry\n",
    "book/softmax.md": "```{code-cell} ipython3\nimport booktools\n```\n",
    "tests/test_x.py": "from attention_graph import validation\nP = [(validation, '_check', None)]\n"
                       "import importlib\nv = importlib.import_module('attention_graph.validation')\nv._check(2)\n",
    "tools/tool.py": "import booktools\n",
    "tests/booktools.py": "",
}


def test_a_planted_violation_of_each_rule_is_caught(tmp_path):
    for name, text in PLANTED.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    found = "\n".join(violations(tmp_path))
    expected = [
        "code/attention_graph/scores.py:1: attention_graph.scores imports attention_graph.softmax, a later",
        "code/attention_graph/scores.py:2: attention_graph.scores imports attention_graph.plots (only the presentation",
        "code/attention_graph/softmax.py:1: imports the private name _check of attention_graph.validation",
        "code/attention_graph/plots.py:3: uses the private name _check of attention_graph.validation",
        "code/attention_graph/cycle_a.py:1: attention_graph.cycle_a is in no room",
        "code: an import cycle",
        "book/_ext/badge.py:1: a Sphinx extension imports attention_graph (Sphinx only)",
        "book/softmax.md:1: a page imports booktools (the package only)",
        "tests/test_x.py:2: names the private _check of attention_graph.validation",
        "tests/test_x.py:5: uses the private name _check of attention_graph.validation",
        "tools/tool.py:1: a tool imports booktools (not the tests'",
    ]
    assert [e for e in expected if e not in found] == [], found
    assert "registry.py" not in found and "__init__" not in found  # what the table allows passes


@pytest.mark.parametrize("text", ["import attention_graph._private\n", "from attention_graph import x as _y\n"])
def test_the_import_reader_names_modules_not_aliases(text):
    tree = ast.parse(text)
    assert [m for _, m, _ in imports(tree, "booktools", False)][0].startswith("attention_graph")
