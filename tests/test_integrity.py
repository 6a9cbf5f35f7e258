"""The book's contract, tested: every labeled equation and theorem is SymPy-backed, no computed number
is typed into the prose, glued values are Python numbers, and a change in code/ reaches the HTML.

Each rule is first shown to fail on a small broken example, then checked over the whole book.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import booktools as bt
import buildpaths as paths
from attention_graph import registry, scores

PAGES = bt.pages()
ALL_LABELS = sorted({lab for p in PAGES for lab, *_ in bt.labeled_equations(p.read_text())}
                    | {lab for p in PAGES for lab in bt.theorem_labels(p.read_text())})


# --- Rule 1: every labeled equation and theorem is backed by a SymPy check ------------------------

BROKEN_PAGE = textwrap.dedent("""\
    Some prose.

    ```{math}
    :label: eq-not-backed
    a = b
    ```

    $$ x^2 $$ (eq-dollar-label)

    :::{prf:theorem} A claim
    :label: thm-not-backed
    Something.
    :::
    """)


def unbacked(text: str) -> list[str]:
    labels = [lab for lab, *_ in bt.labeled_equations(text)] + bt.theorem_labels(text)
    known = set(registry.labels())
    return [lab for lab in labels if lab not in known]


def test_rule1_catches_unbacked_labels():
    assert unbacked(BROKEN_PAGE) == ["eq-not-backed", "eq-dollar-label", "thm-not-backed"]


def test_rule1_catches_a_wrong_sympy_step(monkeypatch):
    # Drop the 1/√d from the package: the check under eq-scaled-scores must now fail.
    monkeypatch.setattr(scores, "scaled_scores", lambda Q, K: np.asarray(Q) @ np.asarray(K).T)
    with pytest.raises(registry.DerivationError, match="eq-scaled-scores"):
        registry.verify("eq-scaled-scores")


def test_every_label_in_the_book_is_registered():
    missing = {p.name: unbacked(p.read_text()) for p in PAGES}
    assert not {k: v for k, v in missing.items() if v}, f"labels with no SymPy check: {missing}"


def test_every_registered_label_is_in_the_book():
    assert sorted(set(registry.labels()) - set(ALL_LABELS)) == []


def test_labels_are_unique_across_the_book():
    seen = [lab for p in PAGES for lab, *_ in bt.labeled_equations(p.read_text())]
    seen += [lab for p in PAGES for lab in bt.theorem_labels(p.read_text())]
    assert len(seen) == len(set(seen)), sorted(lab for lab in seen if seen.count(lab) > 1)


# A labeled equation typed by hand ({math} or $$ ... $$ (label)) is tied to its check only by the
# label. None is allowed unless listed here with the reason it cannot be a glued SymPy object.
TYPED_BY_HAND: dict[str, str] = {}


def typed_equations(text: str) -> list[str]:
    return [lab for lab, kind, _ in bt.labeled_equations(text) if kind == "math"]


def test_rule1_catches_a_labeled_equation_typed_by_hand():
    assert typed_equations(BROKEN_PAGE) == ["eq-not-backed", "eq-dollar-label"]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_labeled_equations_are_glued_sympy_objects(page):
    typed = [lab for lab in typed_equations(page.read_text()) if lab not in TYPED_BY_HAND]
    assert typed == [], f"{page.name}: glue these from their checks' SymPy objects: {typed}"


def test_every_registered_equation_has_a_display():
    for label in registry.labels():
        if label.startswith("eq-") and label not in TYPED_BY_HAND:
            assert registry.latex(label), label


@pytest.mark.parametrize("label", registry.labels())
def test_sympy_check_holds(label):
    assert bt.verified(label) >= 1


def test_a_registration_must_say_how_strong_it_is():
    with pytest.raises(TypeError):
        registry.derivation("eq-unclassified")  # strength and scope are required
    with pytest.raises(ValueError, match="strength"):
        registry.derivation("eq-unclassified", strength="plausible", scope="for n = 2")
    with pytest.raises(ValueError, match="scope"):
        registry.derivation("eq-unclassified", strength="verified", scope=" ")
    with pytest.raises(ValueError, match="must not repeat 'exactly'"):  # "Verified exactly exactly, ..."
        registry.derivation("eq-unclassified", strength="verified", scope="exactly, for n = 2")


def test_every_registration_names_its_strength_and_scope():
    for label in registry.labels():
        kind, scope = registry.strength(label)
        assert kind in registry.STRENGTHS and scope, label
    counts = registry.strength_counts()
    assert sum(counts.values()) == len(registry.labels())


@pytest.mark.build
@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_every_result_shows_its_strength_on_its_page(page):
    """The badge under each equation and theorem (book/_ext/check_strength.py) is in the HTML: the
    class as its one visible word, the registry's sentence as its scope."""
    labels = [lab for lab, *_ in bt.labeled_equations(page.read_text())] + bt.theorem_labels(page.read_text())
    if not labels:
        pytest.skip("no labeled result on this page")
    html = (paths.HTML / "book" / f"{page.stem}.html").read_text()
    for label in labels:
        badge = re.search(rf'id="check-{re.escape(label)}".*?<summary[^>]*>([^<]*)</summary>'
                          r'\s*<span class="check-scope">([^<]*)</span>', html, re.S)
        assert badge, f"{page.stem}: no strength badge under {label}"
        assert badge.group(1) == registry.strength(label)[0], label
        assert badge.group(2) == __import__("html").escape(registry.badge(label), quote=False), label


@pytest.mark.build
def test_the_index_and_the_intro_count_the_strengths():
    counts = registry.strength_counts()
    for page in ("intro", "derivations"):
        for kind, count in counts.items():
            assert bt.glued_float(page, f"n_{kind}") == count, (page, kind)


@pytest.mark.build
@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_glued_equations_are_the_registered_sympy_objects(page):
    for label, kind, key in bt.labeled_equations(page.read_text()):
        if kind == "glue":
            assert bt.glued_latex(page.stem, key) == registry.latex(label), label


def test_every_theorem_has_a_test_named_after_its_label():
    tests = "\n".join(p.read_text() for p in Path(__file__).parent.glob("test_*.py"))
    for page in PAGES:
        for label in bt.theorem_labels(page.read_text()):
            name = "test_" + re.sub(r"\W", "_", label)
            assert re.search(rf"def {name}\b", tests), f"{page.name}: no test named {name}"


# --- Rule 2: no computed number is typed into the prose -------------------------------------------

def test_rule2_catches_a_typed_number():
    page = textwrap.dedent("""\
        Ana gives Carla a weight of 0.141, a tenth of the total, and $x = 0.5$ in math is fine.
        The glued {glue:text}`w_ac:.3f` is fine, as is `code 1.5` and part 10 of the series (2026).
        Row 12 is not.
        """)
    assert bt.typed_numbers(page) == [(1, "0.141"), (3, "12")]


def test_rule2_reads_directive_bodies_but_not_code():
    page = textwrap.dedent("""\
        ```{code-cell} ipython3
        x = 0.25
        ```

        :::{prf:theorem} Rows
        :label: thm-x
        Each row sums to 1.0 here.
        :::
        """)
    assert bt.typed_numbers(page) == [(7, "1.0")]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_no_typed_numbers_in_prose(page):
    assert bt.typed_numbers(page.read_text()) == []


# --- Rule 3: glued values are what the package computes (per chapter) and plain Python numbers ----

@pytest.mark.build
@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_glued_numbers_are_python_numbers_not_numpy_scalars(page):
    if not bt.glue_keys_used(page.read_text()):
        pytest.skip("page glues nothing")
    for key, record in bt.glue_data(page.stem).items():
        plain = record["data"].get("text/plain", "")
        assert not plain.startswith("np."), f"{page.stem}:{key} glued as {plain}"


@pytest.mark.build
@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_every_pasted_key_was_glued(page):
    used = bt.glue_keys_used(page.read_text())
    if used:
        assert used <= set(bt.glue_data(page.stem)), used - set(bt.glue_data(page.stem))


@pytest.mark.build
def test_every_how_checked_line_is_the_registry_s():
    """Each line of a page's "How this page is checked" box, glued as how_<label> by
    registry.how_checked, names a registered result and says what the registry says of it (not a
    typed or a stale line), on every page."""
    label_of = {key: label for label in registry.labels() for key in registry.how_checked([label])}
    lines = {(page.stem, key): record["data"]["text/plain"] for page in PAGES if bt.glue_keys_used(page.read_text())
             for key, record in bt.glue_data(page.stem).items() if key.startswith("how_")}
    assert ("patterns", "how_thm_causal_mask_lower_triangular") in lines  # checked in graph.py
    for (page, key), plain in lines.items():
        assert key in label_of, f"{page}:{key} names no registered result"
        assert ast.literal_eval(plain) == registry.badge(label_of[key]), f"{page}:{key}"


# --- Rule 4: a change in code/ alone reaches the next build; a change of CSS or JavaScript executes nothing

STALE_PAGE = textwrap.dedent("""\
    ---
    jupytext:
      text_representation:
        extension: .md
        format_name: myst
    kernelspec:
      display_name: Python 3
      language: python
      name: python3
    ---
    # Probe

    ```{code-cell} ipython3
    :tags: [remove-cell]
    import os, sys; book = os.environ["PROBE_BOOK"]  # the page runs in an empty folder (run_in_temp)
    sys.path.insert(0, os.path.join(book, "code"))
    from myst_nb import glue
    import probe
    with open(os.path.join(book, "runs.log"), "a") as log:
        log.write("run\\n")
    glue("value", probe.VALUE, display=False)
    ```

    The value is {glue:text}`value`.

    ```{code-cell} ipython3
    :tags: [remove-input]
    probe.VALUE + 1
    ```
    """)


def _jupyter_book() -> str:
    exe = Path(sys.executable).with_name("jupyter-book")
    return str(exe) if exe.exists() else shutil.which("jupyter-book")


def _one_page_book(root: Path) -> None:
    """The book's own configuration and extensions, unchanged, with a table of contents of one page."""
    root.mkdir()
    shutil.copy(bt.ROOT / "_config.yml", root / "_config.yml")
    shutil.copy(bt.ROOT / "references.bib", root / "references.bib")
    shutil.copytree(bt.ROOT / "book" / "_ext", root / "book" / "_ext")
    (root / "_toc.yml").write_text("format: jb-book\nroot: page\n")
    (root / "page.md").write_text(STALE_PAGE)
    (root / "code").mkdir()


def _build(root: Path) -> None:
    run = subprocess.run([_jupyter_book(), "build", str(root), "-n", "-W", "--keep-going"],
                         capture_output=True, text=True, cwd=root, env={**os.environ, "PROBE_BOOK": str(root)})
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]


@pytest.mark.slow
def test_rule4_a_change_in_code_alone_reaches_the_html(tmp_path):
    """The book's own mechanism (execute: force + book/_ext/sphinx_watch.py) on a one-page book: a
    change in code/ alone reaches the site, the page executed afresh; a change of the book's CSS alone
    reaches the site (the page re-written, linking the new file) without executing the page; a
    change of the page's prose alone re-writes it without executing it, its glued number and its
    notebook's outputs those of the last execution (byte for byte what a fresh build gives); a change
    of a code cell executes it again, so does code set back to an earlier value."""
    root = tmp_path / "book"
    _one_page_book(root)
    page, probe, runs = root / "page.md", root / "code" / "probe.py", root / "runs.log"
    html = root / "_build" / "html" / "page.html"
    executed = root / "_build" / "jupyter_execute" / "page.ipynb"  # MyST-NB's, the download's source
    download = root / "_build" / "html" / "_sources" / "page.ipynb"

    def build_and_read(value: int | None) -> tuple[str, int]:
        """Build (code/probe.py first set to ``value``, unless None): the page's value, and how many
        times the page has been executed so far."""
        if value is not None:
            probe.write_text(f"VALUE = {value}\n")
            os.utime(probe, None)
        _build(root)
        text = re.sub(r"<[^>]+>", "", html.read_text())
        return re.search(r"The value is\s*(\S+?)\.", text).group(1), len(runs.read_text().split())

    def css_link() -> str:
        return re.search(r'href="_static/book\.css\?v=(\w+)"', html.read_text()).group(1)

    def outputs(notebook: Path) -> list[str]:
        """The notebook's shown outputs, as plain text (a glue with ``display=False`` shows none)."""
        cells = json.loads(notebook.read_text())["cells"]
        return ["".join(out["data"]["text/plain"]) for cell in cells for out in cell.get("outputs", [])]

    def glued() -> str:
        return json.loads(executed.with_suffix(".glue.json").read_text())["value"]["data"]["text/plain"]

    assert build_and_read(1111) == ("1111", 1)
    assert build_and_read(2222) == ("2222", 2), "page.md did not change, code/probe.py did: stale output"
    link = css_link()
    css = root / "book" / "_ext" / "static" / "book.css"
    css.write_text(css.read_text() + "\n.probe-rule { color: red; }\n")
    assert build_and_read(None) == ("2222", 2), "a change of CSS alone executed the page"
    assert ".probe-rule" in (root / "_build" / "html" / "_static" / "book.css").read_text(), \
        "book.css changed, the site kept the old one"
    assert css_link() != link, "the page still links the old book.css (a browser would keep it)"
    page.write_text(STALE_PAGE.replace("# Probe", "# Probe\n\nA sentence of new prose.") + "\nAnd more.\n")
    assert build_and_read(None) == ("2222", 2), "a change of prose alone executed the page"
    assert "A sentence of new prose." in html.read_text() and "And more." in html.read_text()
    assert outputs(executed) == outputs(download) == ["2223"], "the notebook lost its outputs"
    assert glued() == "2222"
    # What the reuse wrote is what a fresh build of the same sources writes, byte for byte (the static
    # files' ?v= checksums included: book/_ext/sphinx_html.py writes every page as a fresh build would).
    fresh = tmp_path / "fresh"
    shutil.copytree(root, fresh, ignore=shutil.ignore_patterns("_build", "runs.log", "__pycache__"))
    _build(fresh)
    for path in (download, html, executed.with_suffix(".glue.json")):
        a, b = (p.read_bytes() for p in (path, fresh / path.relative_to(root)))
        assert a == b, f"{path.name}: the reused execution wrote other bytes than a fresh build"

    def without_ids(notebook: Path) -> dict:  # MyST-NB draws new cell ids on every build
        nb = json.loads(notebook.read_text())
        return {**nb, "cells": [{k: v for k, v in cell.items() if k != "id"} for cell in nb["cells"]]}
    assert without_ids(executed) == without_ids(fresh / executed.relative_to(root))
    page.write_text(page.read_text().replace("import probe\n", "import probe  # a comment is code\n"))
    assert build_and_read(None) == ("2222", 3), "a code cell changed: the page was not executed again"
    assert build_and_read(1111) == ("1111", 4), "code set back: the page was not executed again"
