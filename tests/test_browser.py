"""The built book as a reader meets it: every page of ``_build/html`` opened in Chromium.

The pages are served over HTTP on 127.0.0.1 (the session fixture ``site``) and opened by Playwright
in the system's Chromium (``browser``), each page once per session (``visit``, ``tests/visits.py``;
the JavaScript that reads a page is in ``tests/js/``). For every page: MathJax has typeset every
formula and left no raw TeX and no error; no request leaves this machine and the console stays
free of errors; every image has loaded and has alt text, every figure shows one; every internal
link and ``#anchor`` resolves; the numbers the page pastes with ``{glue:text}`` are visible,
formatted as the page asks; a full-page screenshot (light) and one of the first screen (dark) are
saved in pytest's temporary folder, or under ``--screenshots DIR`` for review (``conftest.py``).

Without a Chromium these tests skip and say how to install one; with ``CI=true`` they fail instead.
"""

from __future__ import annotations

import ast
import json
import re
from collections import Counter
from pathlib import Path
from urllib.parse import unquote, urlsplit
from urllib.request import urlopen

import pytest
from glue_marks import prose_number  # 1e+09 is pasted as 10⁹
from package_wheel import MENU_NAME
from reader_notebook import unlabelled  # a build cell's first line in the download only

import booktools as bt
import browsertools as bw
import buildpaths as paths
import mystsource
from visits import RAW_TEX, Visit

pytestmark = pytest.mark.browser

PAGES = bw.html_pages()

BROKEN_PAGE = """<!DOCTYPE html><html><head><title>broken</title></head><body>
<p>A formula left as TeX: <span class="math">\\(x^2\\)</span>, and $$y$$ in the prose.</p>
<img src="missing.png"><img src="http://127.0.0.2:9/elsewhere.png" alt="from another server">
<img src="https://example.org/far.png" alt="from a named site">
<figure id="fig-lost"><pre>&lt;Figure size 550x340 with 1 Axes&gt;</pre></figure>
<a href="#nowhere">here</a> <a href="gone.html">gone</a> <a href="#fig-lost">fine</a>
<main><pre>WIDE</pre><p>a number: <span class="pasted-text">3</span></p>
<table><tr><td><span class="glued" title="computed: t">0.25</span></td></tr></table>
<div style="background:#111"><mjx-container style="color:#222">x</mjx-container></div></main>
<script>throw new Error("boom")</script>
</body></html>""".replace("WIDE", "wide " * 80)


def test_the_checks_catch_a_broken_page(visit, tmp_path):
    (tmp_path / "page.html").write_text(BROKEN_PAGE)
    site, v = visit.elsewhere(tmp_path, "page.html")
    assert v.mathjax is None and v.data["math"] == 1 and v.data["untypeset"] == ["\\(x^2\\)"]
    assert {m.group(0) for m in RAW_TEX.finditer(v.data["text"])} == {"\\(", "\\)", "$$"}
    assert sorted(v.offsite) == ["http://127.0.0.2:9/elsewhere.png", "https://example.org/far.png"]
    assert any("boom" in e for e in v.errors) and any("404" in e for e in v.errors)
    assert [i["src"] for i in v.data["images"] if not i["alt"]] == ["missing.png"]
    assert [i["src"] for i in v.data["images"] if i["width"] == 0] == [
        "missing.png", "http://127.0.0.2:9/elsewhere.png", "https://example.org/far.png"]
    assert v.data["bare_figures"] == ["fig-lost"]
    assert len(v.data["wide_code"]) == 1 and v.data["wide_code"][0]["line"].startswith("wide")
    assert [m["title"] for m in v.data["marks"]] == [None]
    assert [m["text"] for m in unmarked(v.data["table_marks"])] == []  # titled and not bold: marked
    assert [c["what"] for c in v.contrast["light"] if c["ratio"] < MIN_CONTRAST] == ["equation"]
    assert broken_links(v, site, lambda rel: v, html=tmp_path) == [
        "#nowhere: no #nowhere in page.html", "gone.html: no file gone.html"]


def test_without_chromium_the_tests_skip_with_a_hint_but_fail_in_ci(monkeypatch):
    from conftest import need_chromium

    monkeypatch.setenv("CHROMIUM", "/nonexistent/chromium")
    monkeypatch.setenv("CI", "false")
    with pytest.raises(pytest.skip.Exception, match="apt-get install chromium"):
        need_chromium()
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true"):
        need_chromium()


def test_the_build_has_pages():
    assert "book/intro.html" in PAGES, f"no built book in {paths.HTML}: run `make book`"


# --- MathJax ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("page", PAGES)
def test_mathjax_typeset_every_formula(page, visit):
    v = visit(page)
    d = v.data
    if d["math"]:
        assert v.mathjax, f"{page}: {d['math']} formulas but MathJax did not start"
    assert d["untypeset"] == [], f"{page}: formulas MathJax left as TeX"
    assert d["merrors"] == [], f"{page}: MathJax errors"
    raw = sorted({m.group(0) for m in RAW_TEX.finditer(d["text"])})
    context = [d["text"][max(0, m.start() - 60):m.end() + 60] for m in RAW_TEX.finditer(d["text"])][:3]
    assert raw == [], f"{page}: raw TeX in the rendered text: {raw}, e.g. {context}"
    assert d["typeset"] >= d["math"]


# --- Network and console ---------------------------------------------------------------------------

@pytest.mark.parametrize("page", PAGES)
def test_no_request_leaves_the_local_server(page, visit):
    assert visit(page).offsite == []


@pytest.mark.parametrize("page", PAGES)
def test_no_console_error_and_no_failed_request(page, visit):
    assert visit(page).errors == []


@pytest.mark.parametrize("page", PAGES)
def test_no_path_of_the_build_machine_in_the_page(page, visit):
    # e.g. a traceback's file names: they must read code/..., not /home/someone/book/code/...
    assert str(paths.ROOT) not in visit(page).data["rendered"]


# --- Images and figures ----------------------------------------------------------------------------

@pytest.mark.parametrize("page", PAGES)
def test_every_image_loaded_and_has_alt_text(page, visit):
    images = visit(page).data["images"]
    assert [i["src"] for i in images if not (i["complete"] and i["width"] > 0)] == [], "not loaded"
    assert [i["src"] for i in images if not (i["alt"] or "").strip()] == [], "no alt text"


@pytest.mark.parametrize("page", PAGES)
def test_every_figure_shows_an_image(page, visit):
    # A figure glued without an image renders its text stand-in ("<Figure size 550x340 ...>").
    assert visit(page).data["bare_figures"] == []


# --- Links -----------------------------------------------------------------------------------------

def broken_links(v: Visit, site: str, visit, html: Path = paths.HTML) -> list[str]:
    broken = []
    origin = urlsplit(site).netloc
    for link in v.data["links"]:
        parts = urlsplit(link["href"])
        if parts.scheme not in {"http", "https"} or parts.netloc != origin:
            continue  # another site (a link, not a request) or javascript:/mailto:
        path = unquote(parts.path).lstrip("/")
        if path == "" or path.endswith("/"):
            path += "index.html"
        if not (html / path).is_file():
            broken.append(f"{link['raw']}: no file {path}")
            continue
        anchor = unquote(parts.fragment)
        if anchor and path.endswith(".html"):
            if anchor not in set(visit(path).data["ids"]):
                broken.append(f"{link['raw']}: no #{anchor} in {path}")
    return sorted(set(broken))


@pytest.mark.parametrize("page", PAGES)
def test_every_internal_link_and_anchor_resolves(page, visit, site):
    assert broken_links(visit(page), site, visit) == []


# --- Downloads -------------------------------------------------------------------------------------

def _is_notebook(source: Path) -> bool:
    return source.exists() and "kernelspec:" in source.read_text().split("\n---", 1)[0]


SOURCE_PAGES = [p for p in PAGES if (paths.ROOT / Path(p).with_suffix(".md")).exists()]


@pytest.mark.parametrize("page", SOURCE_PAGES)
def test_the_download_menu_button_is_named_for_what_it_holds(page, visit):
    """The header's download icon (sphinx-book-theme's menu: the page's .ipynb, .md and .pdf, and the
    package's .whl, book/_ext/package_wheel.py) has no text: its aria-label names it, for all it holds."""
    [menu] = visit(page).data["download_menu"]
    assert menu["text"] == "" and menu["label"] == MENU_NAME, menu
    assert all(word in MENU_NAME for word in ("notebook", "PDF", "wheel"))
    assert {".md", ".pdf", ".whl"} <= set(menu["items"]) <= {".ipynb", ".md", ".pdf", ".whl"}, menu


@pytest.mark.parametrize("page", SOURCE_PAGES)
def test_download_buttons_give_the_source_and_the_executed_notebook(page, visit):
    source = paths.ROOT / Path(page).with_suffix(".md")
    by_suffix = {Path(urlsplit(u).path).suffix: u for u in visit(page).data["downloads"]}
    with urlopen(by_suffix[".md"]) as r:
        assert r.read().decode("utf8") == source.read_text(encoding="utf8")
    if not _is_notebook(source):
        return
    with urlopen(by_suffix[".ipynb"]) as r:
        notebook = json.loads(r.read())
    executed = json.loads((paths.EXECUTED / Path(page).with_suffix(".ipynb")).read_text())
    assert notebook["nbformat"] == 4
    # The code cells are those that ran; the Markdown is the reader's plain Jupyter Markdown
    # (book/_ext/reader_notebook.py; tests/test_reader_notebooks.py reads it), each build cell labelled.
    def code(nb):
        return [(c["cell_type"], unlabelled("".join(c["source"])) if c["cell_type"] == "code" else None)
                for c in nb["cells"]]
    assert code(notebook) == code(executed)
    ran = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    assert all(c["execution_count"] for c in ran), "the notebook offered is the executed one"


# --- Screenshots -----------------------------------------------------------------------------------

def _png(path: Path, luminance: bool = False) -> tuple[int, int, float | None]:
    """Width and height of a saved screenshot, and its mean luminance if asked (0 black, 1 white)."""
    from PIL import Image, ImageStat

    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", path
    with Image.open(path) as image:  # reads the header; the pixels only for the luminance
        mean = ImageStat.Stat(image.convert("L")).mean[0] / 255 if luminance else None
        return image.width, image.height, mean


@pytest.mark.parametrize("page", PAGES)
def test_a_screenshot_is_saved(page, visit):
    width, height, _ = _png(visit(page).screenshot)
    assert width == bw.VIEWPORT["width"] and height >= bw.VIEWPORT["height"], "the whole page"


# --- Glued numbers ---------------------------------------------------------------------------------

_ROLE = re.compile(r"``.+?``|\{glue:text\}`([^`]+)`|\{[\w:.-]+\}`[^`]*`|`[^`]*`", re.S)
_COMMENT = re.compile(r"<!--[\s\S]*?-->|^%.*$", re.M)


def _outside_code(text: str) -> str:
    """The page source without front matter, comments and the bodies of code and math directives."""
    return _COMMENT.sub("", mystsource.outside_code(text))


def glue_text_roles(text: str) -> list[str]:
    """The content of every ``{glue:text}`` role in a page source, in order (not those in code).

    >>> glue_text_roles("a {glue:text}`x:.3f`, `{glue:text}`y``, {glue:text}`p::z:d`")
    ['x:.3f', 'p::z:d']
    """
    return [m.group(1) for m in _ROLE.finditer(_outside_code(text)) if m.group(1)]


def format_glued(plain: str, spec: str) -> str:
    """How ``{glue:text}`key:spec``` shows a glued text/plain value (MyST-NB's documented rule).

    >>> format_glued("0.14142", ".3f"), format_glued("20000", ","), format_glued("'Ana'", "s")
    ('0.141', '20,000', 'Ana')
    """
    try:
        value = ast.literal_eval(plain)
    except (ValueError, SyntaxError):
        value = plain
    if spec == "":
        return str(value)
    kind = spec[-1]
    if kind == "s":
        value = str(value)
    elif kind in "bcdoxX":
        value = int(value)
    elif kind in "eEfFgGn%":
        value = float(value)
    return format(value, spec)


def expected_pasted(docname: str, source: str) -> list[tuple[str, str]]:
    """(role, text the reader must see) for every ``{glue:text}`` role of a page."""
    out = []
    for role in glue_text_roles(source):
        ref, spec = role.rsplit(":", 1) if ":" in role else (role, "s")
        text = prose_number(format_glued(bt.pasted(docname, ref)["data"]["text/plain"], spec))
        out.append((role, text.replace("'", "\u2019")))  # Sphinx's smart quotes: package's → package’s
    return out


def _source(page: str) -> Path:
    return paths.ROOT / Path(page).with_suffix(".md")


GLUING_PAGES = [p for p in PAGES if _source(p).exists() and glue_text_roles(_source(p).read_text())]


def test_the_glued_text_reader_finds_roles():
    assert "book/scores.html" in GLUING_PAGES


@pytest.mark.parametrize("page", GLUING_PAGES)
def test_glued_numbers_are_visible_as_formatted(page, visit):
    expected = expected_pasted(page.removesuffix(".html"), _source(page).read_text())
    pasted = visit(page).data["pasted"]
    # Exercise solutions are folded away by design (a dropdown the reader opens): those may be hidden.
    hidden = [p["text"] for p in pasted if not p["visible"] and not p["folded"]]
    assert hidden == [], f"{page}: glued text not visible"
    shown = Counter(p["text"] for p in pasted)
    wanted = Counter(text for _, text in expected)
    assert shown == wanted, (f"{page}: pasted {sorted(shown.elements())}, "
                             f"the source asks for {expected}")


def glued_markdown_numbers(docname: str, source: str, code: bool = True) -> list[str]:
    """Numbers written by the Markdown a page pastes with ``{glue:md}`` (tables), outside math
    (and outside code, if ``code`` is False).

    >>> import re
    >>> [m.group(0) for m in NUMBER.finditer(MATH.sub(" ", "| $i$ | 0.250 | -1 | x2 | $10^3$ |"))]
    ['0.250', '-1']
    """
    keys = [arg.strip() for name, arg, *_ in bt.blocks(source) if name == "glue:md"]
    keys += re.findall(r"\{glue:md\}`([^`]+)`", _outside_code(source))
    numbers = []
    for ref in keys:
        markdown = bt.pasted(docname, ref)["data"].get("text/markdown", "")
        if not code:
            markdown = CODE.sub(" ", markdown)
        numbers += [m.group(0).replace("\u2212", "-") for m in NUMBER.finditer(MATH.sub(" ", markdown))]
    return numbers


NUMBER = re.compile(r"(?<![\w.^_])[-\u2212]?\d+(?:\.\d+)?(?![\w.])")


def shown_numbers(text: str) -> list[str]:
    """The numbers of rendered text, a minus sign read as the Markdown's hyphen (the build writes −1
    for the -1 a pasted table holds: book/_ext/glue_marks.py).

    >>> shown_numbers("−0.707 and 2, x2")
    ['-0.707', '2']
    """
    return [m.group(0).replace("\u2212", "-") for m in NUMBER.finditer(text)]
MATH = re.compile(r"\$\$[\s\S]*?\$\$|\$[^$\n]+\$")
CODE = re.compile(r"^(```|~~~)[\s\S]*?^\1|`[^`\n]+`", re.M)  # fenced blocks and inline code
MD_PAGES = [p for p in PAGES if _source(p).exists()
            and any(name == "glue:md" for name, *_ in bt.blocks(_source(p).read_text()))]


@pytest.mark.parametrize("page", MD_PAGES)
def test_numbers_of_glued_tables_are_visible(page, visit):
    wanted = glued_markdown_numbers(page.removesuffix(".html"), _source(page).read_text())
    rendered = visit(page).data["rendered"]
    tokens = Counter(shown_numbers(rendered))
    missing = Counter(wanted) - tokens
    assert not missing, f"{page}: glued numbers not in the rendered text: {sorted(missing.elements())}"


def test_worked_example_shows_its_glued_numbers(visit):
    page = "book/worked_example.html"
    if not _source(page).exists():
        pytest.skip("book/worked_example.md is not in this checkout yet")
    assert page in GLUING_PAGES, "the worked example pastes no {glue:text} numbers"
    test_glued_numbers_are_visible_as_formatted(page, visit)
    if page in MD_PAGES:
        test_numbers_of_glued_tables_are_visible(page, visit)


# --- Reading: code width, marked numbers, solutions, dark mode ------------------------------------

@pytest.mark.parametrize("page", PAGES)
def test_code_fits_the_text_column(page, visit):
    """At 1280 px no code block in the main column needs a horizontal scrollbar."""
    assert visit(page).data["wide_code"] == [], f"{page}: code wider than the column"


def unmarked(marks: list[dict]) -> list[dict]:
    """The marks that do not look as a computed number must: titled (its glue name on hover), not bold
    (not bolder than the text around it: a number in a table's header row is as bold as the header).
    The mark is quiet: no underline (tests/test_layout.py checks that)."""
    return [m for m in marks if not (m["title"] or "").startswith("computed: ")
            or m["weight"] >= 600 and m["weight"] > m.get("around", 0)]


def _glued_keys(page: str) -> set[str]:
    return set(bt.glue_record(page.removesuffix(".html")))


@pytest.mark.parametrize("page", GLUING_PAGES)
def test_computed_numbers_are_marked_and_say_what_computed_them(page, visit):
    marks = visit(page).data["marks"]
    assert marks, f"{page}: pastes numbers but none is in the page"
    assert unmarked(marks) == [], f"{page}: glued values not marked as computed (titled, not bold)"
    keys = {m["title"].removeprefix("computed: ") for m in marks}
    assert keys <= _glued_keys(page), f"{page}: titles name keys that were not glued: {keys - _glued_keys(page)}"


@pytest.mark.parametrize("page", MD_PAGES)
def test_numbers_of_glued_tables_are_marked_as_computed(page, visit):
    """Every number a pasted ``{glue:md}`` table shows carries the same mark as a pasted value."""
    marks = visit(page).data["table_marks"]
    wanted = Counter(glued_markdown_numbers(page.removesuffix(".html"), _source(page).read_text(), code=False))
    marked = Counter(n for m in marks for n in shown_numbers(m["text"]))
    assert not wanted - marked, f"{page}: table numbers not marked: {sorted((wanted - marked).elements())}"
    assert unmarked(marks) == [], f"{page}: table numbers not marked as computed (titled, not bold)"
    keys = {m["title"].removeprefix("computed: ") for m in marks}
    assert keys <= _glued_keys(page), f"{page}: titles name keys that were not glued: {keys - _glued_keys(page)}"


SOLUTION_PAGES = [p for p in PAGES if _source(p).exists() and ":{solution" in _source(p).read_text()
                  or _source(p).exists() and "{solution-start}" in _source(p).read_text()]


def test_chapters_have_exercises():
    assert len(SOLUTION_PAGES) >= 11, SOLUTION_PAGES


@pytest.mark.parametrize("page", SOLUTION_PAGES)
def test_opened_solutions_are_visible_and_typeset(page, visit):
    solutions = visit(page).solutions
    assert len(solutions) >= 3, f"{page}: fewer than three solutions"
    for s in solutions:
        assert s["open"] and s["body_visible"], f"{page}: solution {s['id']} did not open"
        assert s["typeset"] == s["math"], f"{page}: solution {s['id']}: math not typeset"
        assert s["pasted_hidden"] == [], f"{page}: solution {s['id']}: numbers hidden"
        raw = sorted({m.group(0) for m in RAW_TEX.finditer(s["text"])})
        assert raw == [], f"{page}: solution {s['id']}: raw TeX {raw}"


MIN_CONTRAST = 4.5  # WCAG AA for text


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.parametrize("mode", ["light", "dark"])
def test_figures_equations_and_tables_keep_their_contrast(page, mode, visit):
    low = [(c["what"], c["name"], round(c["ratio"], 2)) for c in visit(page).contrast[mode]
           if c["ratio"] < MIN_CONTRAST]
    assert low == [], f"{page} in {mode} mode: too little contrast"


@pytest.mark.parametrize("page", PAGES)
def test_a_dark_screenshot_is_saved(page, visit):
    width, height, luminance = _png(visit(page).dark_screenshot, luminance=True)
    assert (width, height) == (bw.VIEWPORT["width"], bw.VIEWPORT["height"]), "the first screen"
    assert luminance < 0.5, "dark mode is dark"
