"""The notebooks a reader downloads are plain Jupyter: no MyST left, numbers as the page shows them.

``book/_ext/reader_notebook.py`` rewrites each page's executed notebook for the download menu
(``_build/html/_sources/<page>.ipynb``): Markdown as the page reads, solutions folded, code cells as
they ran (``tests/test_notebooks.py`` compares those with the reader's run). The tests marked
``build`` read the built notebooks; the others convert a small page with stand-in resolvers.
"""

from __future__ import annotations

import html
import json
import re

import pytest
import reader_notebook as rn

import buildpaths as paths

PAGES = ["book/softmax", "book/karate", "book/sparse", "book/worked_example", "book/intro"]


def _stand_in(**kwargs) -> rn.Page:
    glue = {"n": {"text/plain": "3"}, "x": {"text/plain": "0.123456"}, "big": {"text/plain": "2.5e-07"},
            "eq-a": {"text/latex": r"$\displaystyle a = b$"}, "tbl": {"text/markdown": "| a |\n|---|\n| 1 |"},
            "fig": {"image/svg+xml": "<svg/>", "text/plain": "<Figure>"}}
    refs = {("eq", "eq-a"): "(2.1)", ("prf:ref", "thm-a"): "Theorem 2.1", ("cite", "k"): "(K, 2020)",
            ("ref", "sec"): "A section", ("doc", "other"): "Other page", ("numref", "fig"): "Fig. 2.1"}
    numbers = {("equation", "eq-a"): "2.1", ("theorem", "thm-a"): "2.1", ("exercise", "ex-a"): "2.1",
               ("figure", "fig"): "2.1"}
    return rn.Page(docname="book/p", glue=lambda doc, key: glue[key], reference=lambda r, t: refs[r, t],
                   number=lambda kind, label: numbers[kind, label],
                   include=lambda path, options: ("def f():\n    return 1\n", "python"),
                   prose_number=lambda s: s.replace("2.5e-07", "2.5 × 10⁻⁷"), url="book/p.html", **kwargs)


SOURCE = """# Title

(sec)=
For {glue:text}`n` rows, {glue:text}`x:.3f` and {glue:text}`big` by {eq}`eq-a` and {prf:ref}`thm-a`
{cite}`k`, see {ref}`sec`, {doc}`other` and {numref}`fig`; code `{eq}` stays.

```{glue:math} eq-a
:label: eq-a
```

:::{prf:theorem} Named
:label: thm-a
Body with {glue:text}`n`.
:::

```{glue:figure} fig
:alt: A picture
:name: fig

The caption.
```

```{literalinclude} ../code/x.py
:pyobject: f
```

::::{exercise}
:label: ex-a
Do it.
::::

:::{solution} ex-a
:class: dropdown
Done: {glue:text}`n`.
:::

```sh
pip install {not a role}
```
"""


def test_a_page_converts_to_plain_markdown():
    page = _stand_in()
    text = page.markdown(SOURCE)
    assert rn.leftover_myst(text) == ["{eq}`"]  # only the one inside inline code, as written
    assert "For 3 rows, 0.123 and 2.5 × 10⁻⁷ by (2.1) and Theorem 2.1\n(K, 2020), see a section" in text
    assert "Other page and Fig. 2.1; code `{eq}` stays." in text
    assert "$$\na = b \\tag{2.1}\n$$" in text
    assert "**Theorem 2.1 (Named).** Body with 3." in text
    assert "![A picture](attachment:fig.svg)\n\n*Fig. 2.1: The caption.*" in text
    assert page.attachments == {"fig.svg": {"image/svg+xml": "PHN2Zy8+"}}
    assert "```python\ndef f():\n    return 1\n```" in text
    assert "**Exercise 2.1.** Do it." in text
    assert "<details>\n<summary>Solution</summary>\n\nDone: 3.\n\n</details>" in text
    assert "```sh\npip install {not a role}\n```" in text and "(sec)=" not in text


def test_a_title_mid_sentence_starts_lower_case_and_an_equation_keeps_one_pair_of_parentheses():
    """A ``{ref}`` becomes its section's title, lower-cased only inside a sentence (the paragraph's
    earlier lines count); an ``{eq}`` the source already puts in parentheses gets no second pair."""
    page = _stand_in()
    assert page.markdown("The vectors that {ref}`sec` gave.") == "The vectors that a section gave."
    assert page.markdown("{ref}`sec` gives them.") == "A section gives them."
    assert page.markdown("It ends.\n{ref}`sec` gives them.") == "It ends.\nA section gives them."
    assert page.markdown("the values of\n{ref}`sec` are") == "the values of\na section are"
    assert page.markdown("One.\n\n{ref}`sec` starts.") == "One.\n\nA section starts."
    assert page.markdown("- {ref}`sec`") == "- A section"
    assert page.markdown("the scores ({eq}`eq-a`) and {eq}`eq-a`.") == "the scores (2.1) and (2.1)."
    assert (rn.lower_first("The four people"), rn.lower_first("SymPy checks")) == ("the four people", "SymPy checks")


def test_solution_cells_are_folded_and_code_kept():
    code = {"cell_type": "code", "metadata": {}, "source": ["x = 1"], "outputs": [], "execution_count": 1}
    nb = {"cells": [
        {"cell_type": "markdown", "metadata": {}, "source": ["::::{exercise}\n:label: ex-a\nDo.\n::::\n\n"
                                                              "```{solution-start} ex-a\n:class: dropdown\n```"]},
        code,
        {"cell_type": "markdown", "metadata": {}, "source": ["So {glue:text}`n`.\n\n```{solution-end}\n```\n\nAfter."]},
        {**code, "metadata": {"tags": ["remove-cell"]}},
        {**code, "metadata": {"tags": ["hide-output"]}}]}
    out = rn.reader_notebook(nb, _stand_in())["cells"]
    assert [c["source"] for c in out if c["cell_type"] == "code"] == [["x = 1"], [rn.BUILD_NOTE, "x = 1"], ["x = 1"]]
    assert rn.labelled(out[3]) == out[3] and rn.unlabelled("".join(out[3]["source"])) == "x = 1"  # labelled once
    assert out[1]["metadata"]["jupyter"] == {"source_hidden": True, "outputs_hidden": True}
    assert "<summary>Solution (continued)</summary>\n\nSo 3.\n\n</details>\n\nAfter." in "".join(out[2]["source"])
    assert out[3]["metadata"] == {"tags": ["remove-cell"], "jupyter": {"source_hidden": True}}
    assert out[4]["metadata"]["jupyter"] == {"outputs_hidden": True}


# --- The built notebooks --------------------------------------------------------------------------------

def _built() -> dict[str, dict]:
    return {str(p.relative_to(paths.DOWNLOADS).with_suffix("")): json.loads(p.read_text())
            for p in sorted(paths.DOWNLOADS.rglob("*.ipynb"))}


def _markdown(notebook: dict) -> str:
    return "\n\n".join("".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "markdown")


@pytest.mark.build
def test_no_myst_is_left_in_any_downloaded_notebook():
    built = _built()
    assert len(built) >= 30
    for name, notebook in built.items():
        # what MyST syntax is left sits in inline code or a plain code fence, as the page shows it
        text = re.sub(r"^```[^\n{]*\n.*?^```", "", _markdown(notebook), flags=re.M | re.S)
        text = re.sub(r"`[^`\n]*`", "", text)
        assert rn.leftover_myst(text) == [], name
        assert not re.search(r"^\([\w-]+\)=$", text, re.M), name  # no MyST target line


@pytest.mark.build
@pytest.mark.parametrize("page", PAGES)
def test_the_glued_numbers_the_page_shows_are_in_its_notebook(page):
    shown = re.findall(r'<span class="glued" title="computed: ([^"]+)">(.*?)</span>',
                       (paths.HTML / f"{page}.html").read_text(), re.S)
    shown = {(key, html.unescape(re.sub(r"<[^>]+>", "", value)).strip()) for key, value in shown}
    assert len(shown) >= 3
    text = _markdown(_built()[page])
    missing = sorted((k, v) for k, v in shown if v not in text)
    assert missing == [], "glued values the page shows but its notebook does not"


@pytest.mark.build
@pytest.mark.parametrize("page", PAGES)
def test_equation_and_figure_numbers_are_the_pages(page):
    page_html = (paths.HTML / f"{page}.html").read_text()
    text = _markdown(_built()[page])
    for tag in re.findall(r"\\tag\{([\d.]+)\}", text):
        assert f'<span class="eqno">({tag})' in page_html, (page, tag)
    for number in re.findall(r"^\*Fig\. ([\d.]+):", text, re.M):
        assert f"Fig. {number}" in page_html, (page, number)


@pytest.mark.build
def test_solutions_are_folded_and_every_figure_is_shown():
    for name, notebook in _built().items():
        source = (paths.ROOT / f"{name}.md").read_text()
        text = _markdown(notebook)
        assert text.count("<summary>Solution</summary>") == source.count(":::{solution}"), name
        folded = [c for c in notebook["cells"] if c["cell_type"] == "code"
                  and c["metadata"].get("jupyter", {}).get("outputs_hidden")
                  and not set(c["metadata"].get("tags", [])) & {"remove-output", "hide-output", "hide-cell"}]
        assert len(folded) >= source.count("{solution-start}"), name
        for cell in notebook["cells"]:
            for ref in re.findall(r"\(attachment:([^)]+)\)", "".join(cell["source"])):
                assert ref in cell.get("attachments", {}), (name, ref)
        captions = re.findall(r"^\*Fig\. [\d.]+:", text, re.M)
        assert len(captions) == source.count("{glue:figure}"), name
        assert len(re.findall(r"\(attachment:", text)) == source.count("{glue:figure}"), name


def test_glue_without_mystnb_shows_each_value_with_its_name(monkeypatch, capsys):
    """A downloaded notebook runs with the ``notebook`` extra alone: ``registry.glue`` prints
    ``name = value`` where MyST-NB is missing (and writes MyST-NB's protocol where it is installed)."""
    import importlib.util

    from attention_graph import registry

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "myst_nb" else real(name, *a))
    registry.glue("n_rows", 3, display=False)
    registry.glue("w_max", 0.25)
    assert capsys.readouterr().out == "n_rows = 3\nw_max = 0.25\n"
    with pytest.raises(ValueError, match="name"):
        registry.glue("", 1)


TABLE = "| person | weight |\n| --- | --- |\n| Ana | 0.25 |"


def test_glued_markdown_reads_as_its_source_in_plain_text(monkeypatch, capsys):
    """A glued table (an IPython ``Markdown``) has its Markdown source as its plain text: a plain-text
    view of a downloaded notebook, or nbconvert, shows the table, not the object's repr. Both ways:
    printed where MyST-NB is missing, and in the display the build stores where it is installed."""
    import importlib.util

    import IPython.display
    from IPython.display import Markdown

    from attention_graph import registry

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda obj, **kw: shown.append(obj))
    registry.glue("table-weights", Markdown(TABLE), display=False)  # the build's way (MyST-NB installed)
    assert shown == [{registry.GLUE_PREFIX + "text/plain": TABLE, registry.GLUE_PREFIX + "text/markdown": TABLE}]
    monkeypatch.undo()

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "myst_nb" else real(name, *a))
    registry.glue("table-weights", Markdown(TABLE))  # a reader's plain Python: the text view
    out = capsys.readouterr().out
    assert out == f"table-weights:\n{TABLE}\n" and "object>" not in out, out


def test_glued_text_is_formatted_as_the_page_formats_it():
    """The notebook pastes a glued value through MyST-NB's own formatting, as the page does."""
    assert (rn.format_plain_text("0.123456", ".3f"), rn.format_plain_text("'a b'", ""),
            rn.format_plain_text("7", ",d")) == ("0.123", "a b", "7")


def test_a_glued_equation_reads_as_its_latex_in_plain_text(monkeypatch, capsys):
    """A build cell run by a reader prints a glued equation as its LaTeX, not
    ``<IPython.core.display.Math object>``."""
    import importlib.util

    from attention_graph import registry

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "myst_nb" else real(name, *a))
    registry.glue("eq-identity-projections", registry.math("eq-identity-projections"), display=False)
    out = capsys.readouterr().out
    assert out.startswith("eq-identity-projections:\n") and "object>" not in out, out
    assert "X I = X" in out and "mathbb" not in out, out  # the identity is written I, as the page writes it
