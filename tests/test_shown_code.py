"""The code shown under a formula is the kernel that computes it: no validation in shown code.

Every ``literalinclude`` with ``:pyobject:`` in ``book/*.md`` shows one function or class of the
package. Its body (the docstring left out: the page shows only its first line) holds the lines that
compute; the checks of the arguments (``raise``, ``as_matrix``, ``check_same``, ``_refuse…``, an
import from ``validation``) live in the public wrapper, which the page does not show.
"""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

import pytest
from short_code import WIDTH, short_docstring

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"

INCLUDE = re.compile(r"```\{literalinclude\}\s+(\S+)\n((?::[\w-]+:.*\n)*)")
# The checkers of validation.py and the modules' own argument checkers (each raises on bad input).
VALIDATION_NAMES = ("as_matrix", "as_square", "as_int", "as_rng", "as_scores", "as_mask", "as_edges",
                    "as_qkv", "as_graph", "check_same", "check_block_size", "_float_dtype", "_as_state",
                    "_adjacency", "_stochastic", "_same_nodes", "_residual", "_inputs", "_count", "_labels",
                    "_vector", "_checked", "_validated", "_sorted_pattern", "_as_temperature")
VALIDATION = re.compile(r"\braise\b|\bvalidation\b|\b_refuse\w*|\b_check\w*|\b(?:"
                        + "|".join(VALIDATION_NAMES) + r")\b")


def shown_objects(text: str, page: Path) -> list[tuple[Path, str]]:
    """(file, object name) for every ``literalinclude`` with ``:pyobject:`` of a page's source."""
    found = []
    for m in INCLUDE.finditer(text):
        options = dict(re.findall(r":([\w-]+):\s*(.*)", m.group(2)))
        if "pyobject" in options:
            found.append(((page.parent / m.group(1)).resolve(), options["pyobject"].strip()))
    return found


def shown_node(source: str, name: str) -> ast.FunctionDef | ast.ClassDef:
    """The named top-level function or class of ``source`` (``Class.method`` too)."""
    body = ast.parse(source).body
    for part in name.split("."):
        node = next(n for n in body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == part)
        body = node.body
    return node


def shown_source(source: str, name: str) -> list[str]:
    """The lines of the named top-level function or class (``Class.method`` too) without its docstring."""
    node = shown_node(source, name)
    lines = source.splitlines()
    skip = set()
    for sub in ast.walk(node):
        if isinstance(sub, (ast.FunctionDef, ast.ClassDef)) and sub.body:
            first = sub.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                skip.update(range(first.lineno - 1, first.end_lineno))
    start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])]) - 1
    return [lines[k] for k in range(start, node.end_lineno) if k not in skip]


def validation_lines(lines: list[str]) -> list[str]:
    """The lines that check arguments rather than compute (comments ignored)."""
    return [line for line in lines if VALIDATION.search(line.split("#")[0])]


def test_the_rule_catches_validation_in_shown_code():
    src = textwrap.dedent('''\
        def f(X):
            """y = 2x. Raises ValueError when as_matrix fails."""
            X = as_matrix(X, "X")  # (n, d)
            if X.size == 0:
                raise ValueError("X is empty")
            return 2 * X  # (n, d)
        ''')
    assert [line.strip() for line in validation_lines(shown_source(src, "f"))] == [
        'X = as_matrix(X, "X")  # (n, d)', 'raise ValueError("X is empty")']
    page = '```{literalinclude} ../code/attention_graph/qkv.py\n:language: python\n:pyobject: f\n```\n'
    assert [name for _, name in shown_objects(page, BOOK / "x.md")] == ["f"]


SHOWN = sorted({(page.stem, path, name) for page in BOOK.glob("*.md")
                for path, name in shown_objects(page.read_text(), page)})


def test_the_book_shows_code():
    assert len(SHOWN) >= 30, SHOWN


@pytest.mark.parametrize("page, path, name", SHOWN, ids=[f"{s}:{n}" for s, _, n in SHOWN])
def test_shown_code_holds_no_validation(page, path, name):
    bad = validation_lines(shown_source(path.read_text(), name))
    assert not bad, f"{page} shows {path.name}:{name} with validation lines:\n" + "\n".join(bad)


# A code cell the reader sees: not removed and its input not removed (a solution's cells are shown
# when the solution is opened).
CELL = re.compile(r"```\{code-cell\}[^\n]*\n(.*?)```", re.S)
HIDDEN = re.compile(r"^:tags:.*remove-(?:cell|input)", re.M)


def shown_lines(page: Path) -> list[str]:
    """Every line a page shows as code: its visible cells' source and its includes as short_code cuts them."""
    text = page.read_text()
    lines = [line for m in CELL.finditer(text) if not HIDDEN.search(m.group(1))
             for line in m.group(1).splitlines() if not line.startswith(":")]
    for path, name in shown_objects(text, page):
        source = path.read_text()
        node = shown_node(source, name)
        start = min([node.lineno] + [d.lineno for d in node.decorator_list]) - 1
        lines += [line.rstrip("\n") for line in
                  short_docstring(source.splitlines(keepends=True)[start:node.end_lineno])]
    return lines


def too_wide(page: Path) -> list[str]:
    return [line for line in shown_lines(page) if len(line) > WIDTH]


def test_the_width_rule_catches_a_long_line(tmp_path):
    page = tmp_path / "x.md"
    page.write_text("```{code-cell} ipython3\nshort = 1\n" + "y = " + "1 + " * 30 + "1\n```\n"
                    "```{code-cell} ipython3\n:tags: [remove-cell]\n" + "z = " + "1 + " * 30 + "1\n```\n")
    assert [len(line) for line in too_wide(page)] == [4 + 4 * 30 + 1]


@pytest.mark.parametrize("page", sorted(BOOK.glob("*.md")), ids=lambda p: p.stem)
def test_shown_code_fits_the_column(page):
    """At 1280 px a code cell holds 87 characters (tests/test_layout.py measures it in Chromium);
    shown lines keep to WIDTH, and short_code wraps a docstring's first line to it."""
    assert too_wide(page) == [], f"{page.stem}: shown code longer than {WIDTH} characters"


# A private kernel (``:pyobject: _name``) is followed by the call a reader makes: the first paragraph
# of prose after the include names, in backticks, a public function of the kernel's module with
# arguments its signature accepts: ``name(...)`` for a name of the module's ``__all__`` (importable
# from ``attention_graph``), or ``module.name(...)`` for any public function of the module.
CALL = re.compile(r"`((?:(\w+)\.)?(\w+)\([^`]*\))`")


def kernel_paragraphs(text: str) -> list[tuple[str, str, str]]:
    """(module, kernel, the first paragraph of prose after its include) for every private kernel shown."""
    from mystsource import directives, prose
    lines = prose(text).splitlines()
    found = []
    for d in directives(text):
        kernel = d.options.get("pyobject", "")
        if d.name != "literalinclude" or not kernel.startswith("_"):
            continue
        rest = lines[d.end:]
        start = next((k for k, line in enumerate(rest) if line.strip()), len(rest))
        end = next((k for k in range(start, len(rest)) if not rest[k].strip()), len(rest))
        found.append((Path(d.arg).stem, kernel, " ".join(line.strip() for line in rest[start:end])))
    return found


def public_calls(module_name: str, paragraph: str) -> list[str]:
    """The calls of ``paragraph`` that a reader can make of the module's public functions as written."""
    import importlib
    import inspect
    module = importlib.import_module(f"attention_graph.{module_name}")
    calls = []
    for m in CALL.finditer(paragraph):
        qualifier, name = m.group(2), m.group(3)
        public = name in module.__all__ if qualifier is None else \
            qualifier == module_name and not name.startswith("_") and inspect.isfunction(getattr(module, name, None))
        if not public:
            continue
        call = ast.parse(m.group(1), mode="eval").body
        dummy = [None] * len(call.args)
        try:
            inspect.signature(getattr(module, name)).bind(*dummy, **{k.arg: None for k in call.keywords})
        except TypeError:
            continue
        calls.append(m.group(1))
    return calls


def test_the_call_rule_catches_a_kernel_without_its_call():
    page = ("```{literalinclude} ../code/attention_graph/softmax.py\n:language: python\n:pyobject: _softmax\n```\n"
            "\nThe kernel is private. A reader calls `softmax(S)`.\n\nMore.\n")
    [(module, kernel, paragraph)] = kernel_paragraphs(page)
    assert (module, kernel) == ("softmax", "_softmax") and public_calls(module, paragraph) == ["softmax(S)"]
    for wrong in ["It is private.\n\nA reader calls `softmax(S)`.",  # not in the first paragraph
                  "A reader calls `_softmax(S)`.",  # the kernel itself
                  "A reader calls `softmax(S, T, U)`.",  # not its signature
                  "A reader calls `scores.softmax(S)`."]:  # not its module
        [(module, _, paragraph)] = kernel_paragraphs(page.replace("The kernel is private. A reader calls `softmax(S)`.",
                                                                  wrong))
        assert public_calls(module, paragraph) == [], wrong


KERNELS = [(page.stem, module, kernel, paragraph) for page in sorted(BOOK.glob("*.md"))
           for module, kernel, paragraph in kernel_paragraphs(page.read_text())]


def test_the_book_shows_private_kernels():
    assert len(KERNELS) >= 30, KERNELS


@pytest.mark.parametrize("stem, module, kernel, paragraph", KERNELS, ids=[f"{s}:{k}" for s, _, k, _ in KERNELS])
def test_a_private_kernel_is_followed_by_the_call_a_reader_makes(stem, module, kernel, paragraph):
    assert public_calls(module, paragraph), (
        f"{stem}: the paragraph after {module}.{kernel} names no public call of {module} "
        f"(`name(args)` of its __all__ or `{module}.name(args)`): {paragraph[:200]!r}")


# A solution's code is an executed code cell a reader can run alone: no ``code-block`` (which runs
# nothing and can use names it never defines), and every name its shown cells use is imported or
# defined in them (or a builtin).
def solutions(text: str) -> list[tuple[str, list]]:
    """(label, the directives inside) for every solution of a page, ``{solution}`` or start/end pair."""
    from mystsource import directives
    found = directives(text)
    spans = [(d.arg, d.start, d.end) for d in found if d.name == "solution"]
    starts = [d for d in found if d.name == "solution-start"]
    ends = [d.start for d in found if d.name == "solution-end"]
    spans += [(d.arg, d.start, min(e for e in ends if e > d.start)) for d in starts]
    return [(label, [d for d in found if a < d.start < b]) for label, a, b in spans]


def undefined_names(source: str) -> set[str]:
    """The names ``source`` reads that it neither assigns nor imports, builtins left out."""
    import builtins
    import symtable
    defined, read = set(), set()

    def walk(table):
        for sym in table.get_symbols():
            if sym.is_assigned() or sym.is_imported() or sym.is_parameter():
                (defined if table.get_type() == "module" else set()).add(sym.get_name())
            if sym.is_referenced() and (table.get_type() == "module" or sym.is_global()):
                read.add(sym.get_name())
        for child in table.get_children():
            walk(child)
    walk(symtable.symtable(source, "<solution>", "exec"))
    return read - defined - set(dir(builtins))


def solution_faults(text: str) -> list[str]:
    faults = []
    for label, inside in solutions(text):
        cells = [d for d in inside if d.name == "code-cell"]
        faults += [f"{label}: a {d.name or 'plain'} fence shows code that does not run"
                   for d in inside if d.name in ("code-block", "code", "")]
        shown = "\n".join("\n".join(d.body[d.option_lines:]) for d in cells
                          if "remove-cell" not in d.options.get("tags", "")
                          and "remove-input" not in d.options.get("tags", ""))
        missing = undefined_names(shown) if shown else set()
        faults += [f"{label}: the shown code uses {sorted(missing)} without defining them"] if missing else []
    return faults


def test_the_solution_rule_catches_code_that_does_not_run():
    good = ("```{solution-start} ex-a\n:class: dropdown\n```\n\n```{code-cell} ipython3\nimport numpy as np\n"
            "x = np.ones(2)\n[v * 2 for v in x]\n```\n\n```{solution-end}\n```\n")
    assert solution_faults(good) == []
    block = ":::{solution} ex-b\n:class: dropdown\n\n```{code-block} python\nx = 1\n```\n:::\n"
    assert solution_faults(block) == ["ex-b: a code-block fence shows code that does not run"]
    assert solution_faults(good.replace("x = np.ones(2)", "y = np.ones(2)")) == [
        "ex-a: the shown code uses ['x'] without defining them"]


@pytest.mark.parametrize("page", sorted(BOOK.glob("*.md")), ids=lambda p: p.stem)
def test_a_code_solution_is_a_cell_a_reader_can_run_alone(page):
    assert solution_faults(page.read_text()) == []


# The code a page shows runs on its own, for a reader who copies it: every name a shown code cell
# reads is a builtin or is defined in a shown cell before it (or in the cell itself). A cell is shown
# unless tagged remove-cell or remove-input (a hide-input cell is shown, folded); what a hidden build
# cell defines does not count. A page whose shown code needs imports or data opens with a folded setup
# cell (``SETUP_TAGS``, first line ``SETUP_LINE``), a second-reading cell the first reading hides.
SETUP_LINE = "# Setup for this page:"
SETUP_TAGS = {"hide-input", "second-reading"}
IPYTHON_NAMES = {"display", "get_ipython"}  # what IPython's kernel adds to builtins


def code_cells(text: str) -> list[tuple[int, set, str]]:
    """(line, tags, source) of every code cell of a page, in page order."""
    from mystsource import directives
    cells = sorted((d for d in directives(text) if d.name == "code-cell"), key=lambda d: d.start)
    return [(d.start, set(d.options.get("tags", "").strip("[] ").replace(",", " ").split()),
             "\n".join(d.body[d.option_lines:])) for d in cells]


def is_shown(tags: set) -> bool:
    return not tags & {"remove-cell", "remove-input"}


def defined_names(source: str) -> set[str]:
    """The names ``source`` binds at its top level: assignments, imports, defs, for and with targets."""
    import symtable
    return {s.get_name() for s in symtable.symtable(source, "<cell>", "exec").get_symbols()
            if s.is_assigned() or s.is_imported()}


def unrunnable(text: str) -> list[str]:
    """For each shown code cell of a page, the names it reads that no earlier shown cell defines."""
    faults, defined = [], set()
    for line, tags, source in code_cells(text):
        if not is_shown(tags):
            continue
        missing = sorted(undefined_names(source) - defined - IPYTHON_NAMES)
        if missing:
            faults.append(f"line {line}: the shown cell reads {', '.join(missing)}, defined in no shown cell before it")
        defined |= defined_names(source)
    return faults


def setup_faults(text: str) -> list[str]:
    """A setup cell is the page's first code cell, folded and hidden in a first reading."""
    cells = code_cells(text)
    setups = [k for k, (_, _, source) in enumerate(cells) if source.lstrip().startswith(SETUP_LINE)]
    faults = [f"line {cells[k][0]}: a setup cell that is not the page's first code cell" for k in setups if k]
    faults += [f"line {cells[k][0]}: a setup cell's tags must be {sorted(SETUP_TAGS)}"
               for k in setups if cells[k][1] != SETUP_TAGS]
    # The fold's words are the book's (_config.yml: "Show the setup for this page"), so only a setup folds.
    faults += [f"line {line}: a folded cell (hide-input) that is not the page's setup cell"
               for k, (line, tags, _) in enumerate(cells) if "hide-input" in tags and k not in setups]
    return faults


PAGE_BAD = """\
```{code-cell} ipython3
:tags: [remove-cell]
from attention_graph import softmax
from attention_graph.softmax import naive_softmax
BIG = [[1000.0, 0.0]]
```

Where the literal formula breaks:

```{code-cell} ipython3
naive_softmax(BIG), softmax(BIG)
```
"""
PAGE_GOOD = """\
```{code-cell} ipython3
:tags: [hide-input, second-reading]
# Setup for this page: the package's softmax and the literal formula
from attention_graph import softmax
from attention_graph.softmax import naive_softmax
```

```{code-cell} ipython3
:tags: [remove-cell]
from attention_graph.registry import glue
```

```{code-cell} ipython3
BIG = [[1000.0, 0.0]]  # (1, n_k)
naive_softmax(BIG), softmax(BIG)
rows = [r for r in BIG]
for row in rows:
    print(len(row), max(row))
```
"""


def test_the_runnable_rule_catches_names_a_reader_cannot_see():
    assert unrunnable(PAGE_GOOD) == [] and setup_faults(PAGE_GOOD) == []
    assert unrunnable(PAGE_BAD) == ["line 10: the shown cell reads BIG, naive_softmax, softmax, "
                                    "defined in no shown cell before it"]
    # a name defined only later, or only in a cell whose input is removed, is not defined for the reader
    later = (PAGE_GOOD.replace("BIG = [[1000.0, 0.0]]  # (1, n_k)\n", "")
             + "```{code-cell} ipython3\nBIG = [[1.0]]\n```\n")
    assert unrunnable(later) == ["line 13: the shown cell reads BIG, defined in no shown cell before it"]
    removed = PAGE_GOOD.replace(":tags: [hide-input, second-reading]", ":tags: [remove-input]")
    assert unrunnable(removed) == ["line 13: the shown cell reads naive_softmax, softmax, defined in no shown "
                                   "cell before it"]
    assert setup_faults(removed) == ["line 1: a setup cell's tags must be ['hide-input', 'second-reading']"]
    late = PAGE_GOOD.replace("# Setup for this page", "# setup").replace(
        "from attention_graph.registry import glue", "# Setup for this page: late")
    assert setup_faults(late) == ["line 8: a setup cell that is not the page's first code cell",
                                  "line 8: a setup cell's tags must be ['hide-input', 'second-reading']",
                                  "line 1: a folded cell (hide-input) that is not the page's setup cell"]


def toc_stems() -> list[str]:
    from mystsource import toc_pages
    return ["intro"] + toc_pages((ROOT / "_toc.yml").read_text())


@pytest.mark.parametrize("stem", toc_stems())
def test_the_code_a_page_shows_runs_on_its_own(stem):
    text = (BOOK / f"{stem}.md").read_text()
    assert unrunnable(text) + setup_faults(text) == [], f"{stem}: shown code a reader cannot run as shown"


# The rule above reads names; this runs the shown cells themselves, alone, in a fresh Python for each
# page (in an empty folder, as the build runs a page): what a name cannot say (a figure drawn before
# the book's style is set, a call whose data the reader does not have) fails here.
RUN_SHOWN = """
import json, sys
import matplotlib
matplotlib.use("Agg")
namespace = {"__name__": "__main__", "display": print}
for name, source in json.load(sys.stdin):
    exec(compile(source, name, "exec"), namespace)
"""


def run_shown(text: str, stem: str, cwd: Path):
    import json
    import subprocess
    import sys
    cells = [(f"{stem}.md:{line}", source) for line, tags, source in code_cells(text) if is_shown(tags)]
    return subprocess.run([sys.executable, "-c", RUN_SHOWN], input=json.dumps(cells), capture_output=True,
                          text=True, cwd=cwd)


@pytest.mark.slow
def test_the_run_fails_on_shown_code_that_needs_a_hidden_cell(tmp_path):
    failed = run_shown(PAGE_BAD, "bad", tmp_path)
    assert failed.returncode != 0 and "NameError: name 'naive_softmax' is not defined" in failed.stderr
    assert run_shown(PAGE_GOOD, "good", tmp_path).returncode == 0


@pytest.mark.slow
@pytest.mark.parametrize("stem", toc_stems())
def test_the_shown_code_of_a_page_runs_alone(stem, tmp_path):
    ran = run_shown((BOOK / f"{stem}.md").read_text(), stem, tmp_path)
    assert ran.returncode == 0, f"{stem}: its shown code fails when run alone:\n{ran.stderr[-2000:]}"


# What a shown cell prints reads as plain numbers: a NumPy repr (``np.float64(0.5)``, ``array([[…]])``)
# or a bare ``True`` is the machinery showing, not a result a reader can read. The build's executed
# notebooks hold each output as the page shows it.
RAW_REPR = re.compile(r"\bnp\.\w+\(|\barray\(")
BARE_BOOL = re.compile(r"\(?\s*(?:True|False)\s*\)?")


def output_texts(cell: dict) -> list[str]:
    """The plain text of each output a code cell of an executed notebook shows (glued values left out)."""
    texts = []
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream":
            texts.append("".join(output.get("text", "")))
        elif "text/plain" in output.get("data", {}):
            texts.append("".join(output["data"]["text/plain"]))
    return texts


def raw_outputs(notebook: dict) -> list[str]:
    """The outputs of the shown cells of ``notebook`` that print a NumPy repr or a bare True/False."""
    bad = []
    for cell in notebook.get("cells", []):
        tags = set(cell.get("metadata", {}).get("tags", []))
        if cell.get("cell_type") != "code" or not is_shown(tags) or "remove-output" in tags:
            continue
        bad += [text for text in output_texts(cell)
                if RAW_REPR.search(text) or BARE_BOOL.fullmatch(text.strip())]
    return bad


def _cell(tags: list[str], text: str, plain: bool = True) -> dict:
    output = ({"output_type": "execute_result", "data": {"text/plain": text}} if plain
              else {"output_type": "stream", "name": "stdout", "text": text})
    return {"cell_type": "code", "metadata": {"tags": tags}, "outputs": [output]}


def test_the_output_rule_catches_numpy_reprs_and_bare_booleans():
    bad = {"cells": [_cell([], "{'mean': np.float64(0.0667)}"), _cell([], "(array([[nan, 0.]]), 1)"),
                     _cell([], "True"), _cell(["hide-input"], "array([1.0])", plain=False)]}
    assert len(raw_outputs(bad)) == 4
    good = {"cells": [_cell([], "naive: [nan, 0.0]  stable: [1.0, 5.6e-309]", plain=False),
                      _cell([], "every edge kept: True", plain=False), _cell(["remove-cell"], "True"),
                      _cell(["remove-input"], "array([1.0])"), _cell(["remove-output"], "np.float64(1.0)")]}
    assert raw_outputs(good) == []


@pytest.mark.build
@pytest.mark.parametrize("stem", toc_stems())
def test_shown_outputs_read_as_plain_numbers(stem):
    import json

    from buildpaths import EXECUTED
    path = EXECUTED / "book" / f"{stem}.ipynb"
    if not path.exists():  # a page without code is not executed; one with code must have been
        assert "{code-cell}" not in (BOOK / f"{stem}.md").read_text(), f"{path} is missing: make book first"
        return
    bad = raw_outputs(json.loads(path.read_text()))
    assert bad == [], f"{stem}: a shown cell prints a NumPy repr or a bare boolean: {bad}"
