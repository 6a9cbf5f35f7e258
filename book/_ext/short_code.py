"""Code shown with ``literalinclude`` and ``:pyobject:`` keeps only the first line of its docstring.

The package's docstrings carry shapes, errors and doctests for the API page; under a formula in a
chapter the reader needs the formula's line and the code. Every ``:pyobject:`` include therefore
shows the docstring's first line (the formula and its equation label) and then the body;
``:docstring: full`` keeps the whole docstring.

Such an include is the kernel under a formula, so its block gets the class ``kernel-code``: the
"First reading" switch (``first_reading.py``, ``static/first_reading.css``) hides it on screen, as it
hides the proofs. The page's own code cells are not includes and stay shown.

Enable it in ``_config.yml`` under ``sphinx.local_extensions``.
"""

from __future__ import annotations

import ast
import textwrap

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.directives.code import LiteralInclude, LiteralIncludeReader

QUOTES = '"""'
WIDTH = 86  # at 1280 px a code cell holds 87 characters, an include 90 (book.css); shown code keeps to 86


def short_docstring(lines: list[str]) -> list[str]:
    """The lines of one function or class with its docstring cut to its first line, wrapped at WIDTH.

    >>> q = QUOTES
    >>> src = ["def f(x):\\n", f"    {q}y = 2x.\\n", "\\n", "    More.\\n", f"    {q}\\n", "    return 2 * x\\n"]
    >>> [line.strip() for line in short_docstring(src)] == ["def f(x):", f"{q}y = 2x.{q}", "return 2 * x"]
    True
    """
    try:
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except SyntaxError:
        return lines
    if not tree.body or not isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return lines
    first = tree.body[0].body[0]
    if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)):
        return lines
    start, end = first.lineno - 1, first.end_lineno  # the docstring's lines, end exclusive
    if end - start <= 1 and len(lines[start].rstrip("\n")) <= WIDTH:
        return lines
    indent = lines[start][:len(lines[start]) - len(lines[start].lstrip())]
    summary = first.value.value.strip().splitlines()[0].strip()
    wrapped = textwrap.wrap(f"{QUOTES}{summary}{QUOTES}", WIDTH - len(indent), break_long_words=False,
                            break_on_hyphens=False)
    return lines[:start] + [f"{indent}{part}\n" for part in wrapped] + lines[end:]


_pyobject_filter = LiteralIncludeReader.pyobject_filter


def _pyobject_filter_short(self, lines, location=None):
    lines = _pyobject_filter(self, lines, location)
    if self.options.get("pyobject") and self.options.get("docstring", "first-line") != "full":
        lines = short_docstring(lines)
    return lines


KERNEL_CLASS = "kernel-code"
_literal_include_run = LiteralInclude.run


def _run_marking_kernels(self):
    """LiteralInclude.run; a ``:pyobject:`` include's block (or its captioned container) gets ``kernel-code``."""
    found = _literal_include_run(self)
    if self.options.get("pyobject"):
        for node in found:
            if isinstance(node, (nodes.literal_block, nodes.container)):
                node["classes"].append(KERNEL_CLASS)
    return found


def setup(app):
    LiteralInclude.option_spec["docstring"] = directives.unchanged
    LiteralIncludeReader.pyobject_filter = _pyobject_filter_short
    LiteralInclude.run = _run_marking_kernels
    return {"parallel_read_safe": True, "parallel_write_safe": True}
