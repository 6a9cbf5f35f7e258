"""Readers of the book's sources and of what its build glued, for the integrity tests.

The functions take text so that each rule can be shown to fail on a small example (see
``tests/test_integrity.py``), and the same functions then run over every page of ``book/``.
"""

from __future__ import annotations

import json
import posixpath
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import numpy as np

# --------------------------------------------------------------------------------------------------
# Sources
# --------------------------------------------------------------------------------------------------
# The source readers are build code (tools/mystsource.py): the book's index of results is made with them too.
import mystsource  # noqa: E402
from attention_graph import registry  # noqa: E402
from buildpaths import BOOK, EXECUTED, ROOT
from mystsource import NON_PROSE, THEOREM_KINDS, blocks, labeled_equations, theorem_labels  # noqa: F401,E402
from reader import locked  # noqa: F401,E402  (the lock's versions: one reader of requirements.txt)


def pages() -> list[Path]:
    """Every MyST page of the book."""
    return sorted(BOOK.glob("*.md"))


def chapter_tables(name: str, central: str) -> dict[str, object]:
    """{test module: its table ``name``} for every ``tests/test_*.py`` but ``central`` that defines one.

    A chapter keeps its broken variants (``BROKEN``) and bad inputs (``BAD``) in its own test file;
    the central tests (test_can_fail, test_validation) gather them here.
    """
    import importlib
    found = {}
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        if path.stem != central and re.search(rf"^{name} = ", path.read_text(), re.M):
            found[path.stem] = getattr(importlib.import_module(path.stem), name)
    return found


# What is not computed and may be typed: years and the series' article numbers.
ALLOWED_NUMBERS = [
    (re.compile(r"\b(?:1[89]|20)\d\d[a-z]?\b"), "a year (citations, dates)"),
    (re.compile(r"\b(?:[Pp]art|[Aa]rticle|[Aa]rtigo|[Vv]olume) \d+\b"), "an article of the source series"),
]

_INLINE = [
    re.compile(r"\$\$[\s\S]*?\$\$"),  # display math on one line or several
    re.compile(r"(?<!\\)\$[^$\n]+?(?<!\\)\$"),  # inline math
    re.compile(r"\{[\w:-]+\}`[^`]*`"),  # roles: {glue:text}`...`, {eq}`...`, {cite}`...`
    re.compile(r"`[^`]*`"),  # inline code
    re.compile(r"\]\([^)]*\)"),  # link targets
    re.compile(r"<!--[\s\S]*?-->"),  # comments
    re.compile(r"^\([\w:-]+\)=\s*$", re.M),  # label targets
]
NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:[.,]\d+)*(?:[eE][-+]?\d+)?%?(?![\w])")


def prose(text: str) -> str:
    """The prose of a page: no front matter, code, math, roles, options, links or comments.

    Replaced characters become spaces and newlines are kept, so line numbers stay valid
    (:func:`mystsource.prose`, on myst-parser's tokens, with the inline patterns above).
    """
    return mystsource.prose(text, _INLINE)


def typed_numbers(text: str) -> list[tuple[int, str]]:
    """(line, literal) for each number typed into the prose that is not on the allowlist.

    Flagged: any number with a decimal point or comma, any exponent or percentage, and any integer
    of two or more digits. Single digits ("four people", "step 2") are words, not results.
    """
    body = prose(text)
    for pattern, _why in ALLOWED_NUMBERS:
        body = pattern.sub(lambda m: " " * len(m.group(0)), body)
    found = []
    for m in NUMBER.finditer(body):
        lit = m.group(0)
        digits = lit.lstrip("+-")
        if re.fullmatch(r"\d", digits):
            continue
        found.append((body.count("\n", 0, m.start()) + 1, lit))
    return found


# --------------------------------------------------------------------------------------------------
# What the build glued
# --------------------------------------------------------------------------------------------------


@cache
def glue_record(docname: str) -> dict:
    """Everything document ``docname`` (e.g. "book/softmax") glued, as the last build wrote it."""
    path = EXECUTED / f"{docname}.glue.json"
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: build the book first (make book); a test that reads"
                                " the build is marked `build`")
    return json.loads(path.read_text())


def glue_data(page: str) -> dict:
    """The glue record of ``book/<page>.md``."""
    return glue_record(f"book/{page}")


def pasted(docname: str, ref: str) -> dict:
    """The glued value a role or directive of ``docname`` pastes: ``ref`` is ``key``, or
    ``rel::key`` for a key another document glued (``rel`` relative to ``docname``, or from the
    book's root with a leading /): ``{"data": {mimetype: ...}, ...}``."""
    doc, key = docname, ref
    if "::" in ref:
        rel, key = ref.split("::", 1)
        doc = rel.lstrip("/") if rel.startswith("/") else posixpath.normpath(
            posixpath.join(posixpath.dirname(docname), rel))
        doc = re.sub(r"\.(md|ipynb)$", "", doc)
    return glue_record(doc)[key]


def glue_outputs(notebook: dict) -> dict[str, dict]:
    """{glue key: {mimetype: data}} of every value an executed notebook (its JSON) glued.

    The notebook as a kernel leaves it, before MyST-NB moves the glued outputs to ``.glue.json``.
    """
    found = {}
    for cell in notebook["cells"]:
        for out in cell.get("outputs", []):
            record = out.get("metadata", {}).get("scrapbook")
            if record:
                prefix = record.get("mime_prefix", "")
                found[record["name"]] = {m.removeprefix(prefix): "".join(v) if isinstance(v, list) else v
                                         for m, v in out.get("data", {}).items()}
    return found


def glued_plain(page: str, key: str) -> str:
    return glue_data(page)[key]["data"]["text/plain"]


def glued_float(page: str, key: str) -> float:
    """A glued number. Refuses a NumPy scalar's repr: the book glues Python floats."""
    text = glued_plain(page, key)
    if text.startswith("np."):
        raise TypeError(f"{page}:{key} was glued as a NumPy scalar ({text}); glue float(...)")
    return float(text)


def glued_latex(page: str, key: str) -> str:
    latex = glue_data(page)[key]["data"]["text/latex"]
    return latex.strip().strip("$").removeprefix("\\displaystyle").strip()


def glued_table(page: str, key: str) -> dict[str, list[str]]:
    """A glued Markdown table: {row label: its cells as text}, in order. Its rows are :func:`glued_rows`,
    each labelled by its first cell (bold in ``tables.markdown_table``, plain in the package's other
    tables, ``tables.trace_table``, ``tables.pattern_table``)."""
    return {cells[0].strip("*"): cells[1:] for cells in glued_rows(page, key)}


def glued_table_header(page: str, key: str) -> list[str]:
    """The column names of a glued Markdown table (its first line), as text, the corner first."""
    md = glue_data(page)[key]["data"]["text/markdown"]
    return [c.strip() for c in md.splitlines()[0].strip().strip("|").split("|")]


# A cell of a glued table: one number, or a vector in parentheses, "(0.667, −0.742)", as
# tables.outputs_table prints it (its minus sign is U+2212).
_NUMBER = r"[−-]?\d+\.(\d+)"
_CELL = re.compile(rf"{_NUMBER}|\({_NUMBER}(?:, {_NUMBER})*\)")


def glued_rows(page: str, key: str) -> list[list[str]]:
    """Every body row of a glued Markdown table, its cells as text (header and rule left out): for a
    table whose rows are not named by a bold first cell, or whose first cells repeat."""
    md = glue_data(page)[key]["data"]["text/markdown"]
    lines = [r.strip() for r in md.splitlines() if r.strip().startswith("|")]
    if len(lines) < 2 or not re.fullmatch(r"\|(?::?-+:?\|)+", lines[1].replace(" ", "")):
        raise ValueError(f"{page}:{key} is not a Markdown table with a header and a rule")
    return [[c.strip() for c in r.strip().strip("|").split("|")] for r in lines[2:]]


def assert_table_shows(table: dict[str, list[str]], expected: dict[str, np.ndarray]):
    """Each row of a glued table holds its matrix row to three decimals, and blank cells after it.

    A cell holds one number or a vector; the numbers of a row, read left to right, are its matrix row
    (a row of ``outputs_table``: the input, then each model's output, one after the other)."""
    assert list(table) == list(expected)
    for label, row in expected.items():
        cells = table[label]
        shown = [c for c in cells if c]
        assert cells[len(shown):] == [""] * (len(cells) - len(shown)), (label, cells)
        assert all(_CELL.fullmatch(c) for c in shown), (label, cells)
        numbers = [m for c in shown for m in re.finditer(_NUMBER, c)]
        assert all(len(m.group(1)) == 3 for m in numbers), (label, cells)
        np.testing.assert_allclose([float(m.group(0).replace("−", "-")) for m in numbers], np.ravel(row),
                                   rtol=0, atol=5e-4 + 1e-12, err_msg=label)


def glue_keys_used(text: str) -> set[str]:
    """Glue keys a page pastes (roles and directives)."""
    keys = {m.group(1).split(":")[0] for m in re.finditer(r"\{glue(?::\w+)?\}`([^`]+)`", text)}
    keys |= {arg.strip() for name, arg, *_ in blocks(text) if name.startswith("glue")}
    return keys


@cache
def verified(label: str) -> int:
    """``registry.verify(label)``, run once per test session (a check that fails is not cached).

    For tests that only need the check to hold; a test that breaks the package on purpose calls
    ``registry.verify`` itself.
    """
    return registry.verify(label)


def quick_benchmark(name: str, tmp_path: Path) -> dict:
    """The record ``python -m attention_graph.bench NAME --quick`` writes, run as a reader would, in a
    fresh process; fails with its stderr unless it exits 0 with a quick record of that benchmark."""
    out = tmp_path / f"{name}.json"
    run = subprocess.run([sys.executable, "-m", "attention_graph.bench", name, "--quick", "--out", str(out)],
                         capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    record = json.loads(out.read_text())
    assert record["benchmark"] == name and record["quick"] is True
    return record
