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
