"""The built book as a reader meets it: every page of ``_build/html`` opened in Chromium.

The pages are served over HTTP on 127.0.0.1 (``browsertools.serve``) and opened by Playwright in
the system's Chromium. For every page: MathJax has typeset every formula and left no raw TeX and no
error; no request leaves this machine and the console stays free of errors; every image has loaded
and has alt text, every figure shows one; every internal link and ``#anchor`` resolves; the numbers
the page pastes with ``{glue:text}`` are visible, formatted as the page asks; a full-page screenshot
is saved under ``_build/screenshots/`` for review.

Without a Chromium these tests skip and say how to install one; with ``CI=true`` they fail instead.
"""

from __future__ import annotations

import ast
import json
import posixpath
import re
import shutil
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit
from urllib.request import urlopen

import pytest

import booktools as bt
import browsertools as bw

pytestmark = pytest.mark.browser

PAGES = bw.html_pages()
REFRESH = re.compile(r'<meta http-equiv="refresh" content="\d+;\s*url=([^"]+)"', re.I)

# Everything the checks need, read from the page once it has settled. "text" is every text node of
# the body outside code, scripts and typeset math: where raw TeX must not survive.
COLLECT_JS = r"""() => {
  const SKIP = new Set(["PRE", "CODE", "KBD", "SAMP", "SCRIPT", "STYLE", "TEXTAREA", "NOSCRIPT",
                        "TEMPLATE", "MJX-CONTAINER"]);
  const texts = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    let keep = true;
    for (let e = n.parentElement; e && keep; e = e.parentElement) keep = !SKIP.has(e.tagName);
    if (keep) texts.push(n.nodeValue);
  }
  const all = sel => Array.from(document.querySelectorAll(sel));
  const visible = e => e.checkVisibility({opacityProperty: true, visibilityProperty: true});
  return {
    text: texts.join(" "),
    math: all(".math").length,
    typeset: all("mjx-container").length,
    untypeset: all(".math").filter(e => !e.querySelector("mjx-container"))
                           .map(e => e.textContent.trim().slice(0, 120)),
    merrors: all("mjx-merror").map(e => e.getAttribute("data-mjx-error") || e.textContent),
    images: all("img").map(i => ({src: i.getAttribute("src"), alt: i.getAttribute("alt"),
                                  width: i.naturalWidth, complete: i.complete})),
    bare_figures: all("figure").filter(f => !f.querySelector("img, svg, object, canvas, video"))
                               .map(f => f.id || f.textContent.trim().slice(0, 80)),
    links: all("a[href]").map(a => ({href: a.href, raw: a.getAttribute("href")})),
    ids: all("[id]").map(e => e.id).concat(all("a[name]").map(a => a.name)),
    pasted: all(".pasted-text").map(e => ({text: e.textContent.trim(), visible: visible(e),
      folded: !!e.closest(".toggle-hidden, details:not([open]), .dropdown")})),
    marks: all(".pasted-text").map(e => {
      const mark = e.closest(".glued"), style = mark && getComputedStyle(mark);
      return {text: e.textContent.trim(), title: mark ? mark.getAttribute("title") : null,
              line: style ? style.textDecorationLine : "", dotted: style ? style.textDecorationStyle : "",
              weight: Number(getComputedStyle(e).fontWeight)};
    }),
    wide_code: all("main pre").filter(e => visible(e) && e.scrollWidth > e.clientWidth + 1)
                              .map(e => ({over: e.scrollWidth - e.clientWidth,
                                          line: e.textContent.split("\n").reduce(
                                            (a, b) => b.length > a.length ? b : a, "").slice(0, 100)})),
    downloads: all(".dropdown-download-buttons a[href]").map(a => a.href),
    rendered: (document.querySelector("main") || document.body).innerText,
  };
}"""

# Raw TeX that MathJax should have consumed: its delimiters, and the commands the book writes.
RAW_TEX = re.compile(r"\\\(|\\\)|\\\[|\\\]|\$\$|\\begin\{|\\end\{|\\(?:frac|sqrt|top|sum|prod|mathbb|"
                     r"mathbf|mathrm|operatorname|left|right|cdot|exp|log|text|displaystyle|label|"
                     r"alpha|beta|mathcal|in|le|ge|quad|partial|nabla|infty)\b")


# Open every collapsed solution as a reader would (its toggle button), then report what each shows.
SOLUTIONS_JS = r"""async () => {
  const solutions = Array.from(document.querySelectorAll(".solution"));
  for (const s of solutions) {
    const button = s.querySelector("button.toggle-button");
    if (button && s.classList.contains("toggle-hidden")) button.click();
  }
  await new Promise(done => setTimeout(done, 400));
  const visible = e => e.checkVisibility({opacityProperty: true, visibilityProperty: true});
  return solutions.map(s => {
    const body = Array.from(s.children).filter(c => !c.classList.contains("admonition-title"));
    return {id: s.id, open: !s.classList.contains("toggle-hidden"),
            body_visible: body.length > 0 && body.every(visible),
            math: s.querySelectorAll(".math").length,
            typeset: Array.from(s.querySelectorAll("mjx-container")).filter(visible).length,
            pasted_hidden: Array.from(s.querySelectorAll(".pasted-text")).filter(e => !visible(e))
                                .map(e => e.textContent),
            text: s.innerText};
  });
}"""

# Contrast of what a figure or an equation draws against what lies behind it, in the page's theme.
# An equation's colour is MathJax's text colour; a figure draws black ink on its own background
# (read from its top-left pixel) or, where that pixel is transparent, on the page's background.
CONTRAST_JS = r"""async () => {
  const rgb = c => (c.match(/[\d.]+/g) || ["0", "0", "0", "0"]).map(Number);
  const lum = c => { const [r, g, b] = rgb(c).slice(0, 3).map(v => { v /= 255;
    return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const opaque = c => { const v = rgb(c); return v.length < 4 || v[3] > 0.5; };
  const behind = e => { for (let x = e; x; x = x.parentElement) {
      const c = getComputedStyle(x).backgroundColor; if (opaque(c)) return c; }
    return "rgb(255, 255, 255)"; };
  const ratio = (a, b) => { const [h, l] = [lum(a), lum(b)].sort((x, y) => y - x);
    return (h + 0.05) / (l + 0.05); };
  const visible = e => e.checkVisibility({opacityProperty: true, visibilityProperty: true});
  const main = document.querySelector("main") || document.body;
  const out = [];
  for (const e of main.querySelectorAll("mjx-container")) {
    if (!visible(e)) continue;
    out.push({what: "equation", name: e.textContent.slice(0, 40),
              ratio: ratio(getComputedStyle(e).color, behind(e))});
  }
  for (const img of main.querySelectorAll("img")) {
    if (!visible(img) || !img.naturalWidth) continue;
    const canvas = document.createElement("canvas");
    canvas.width = Math.min(img.naturalWidth, 64); canvas.height = Math.min(img.naturalHeight, 64);
    const ctx = canvas.getContext("2d");
    ctx.drawImage(img, 0, 0);
    const [r, g, b, a] = ctx.getImageData(1, 1, 1, 1).data;
    const ground = a > 128 ? `rgb(${r}, ${g}, ${b})` : behind(img);
    out.push({what: "figure", name: (img.getAttribute("alt") || "").slice(0, 40),
              ratio: ratio("rgb(0, 0, 0)", ground)});
  }
  for (const cell of main.querySelectorAll("table td, table th")) {
    if (!visible(cell) || !cell.textContent.trim()) continue;
    out.push({what: "table", name: cell.textContent.trim().slice(0, 40),
              ratio: ratio(getComputedStyle(cell).color, behind(cell))});
  }
  return out;
}"""

DARK_JS = """async () => {
  document.documentElement.dataset.theme = "dark";
  document.documentElement.dataset.mode = "dark";
  await new Promise(done => setTimeout(done, 300));
}"""


@dataclass
class Visit:
    page: str
    url: str  # where the browser ended up (a redirect page lands elsewhere)
    mathjax: str | None  # MathJax's version, None when the page did not load it
    data: dict
    offsite: list[str]
    errors: list[str]
    screenshot: Path
    solutions: list[dict]  # every collapsed solution, after opening it
    contrast: dict[str, list[dict]]  # "light" and "dark": contrast of each equation, figure, table
    dark_screenshot: Path


def _open(context, site: str, rel: str, html: Path = bw.HTML, shots: Path = bw.SCREENSHOTS) -> Visit:
    page = context.new_page()
    origin = urlsplit(site).netloc
    offsite: list[str] = []
    errors: list[str] = []

    def route(r):
        parts = urlsplit(r.request.url)
        if parts.scheme in {"data", "blob"} or parts.netloc == origin:
            r.continue_()
        else:
            offsite.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    page.on("console", lambda m: errors.append(f"console error: {m.text} at {m.location.get('url')}")
            if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"uncaught exception: {e}"))
    page.on("requestfailed", lambda r: None if r.url in offsite else
            errors.append(f"request failed: {r.url} ({r.failure})"))
    page.on("response", lambda r: errors.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None)

    page.goto(site + rel, wait_until="load")
    redirect = REFRESH.search((html / rel).read_text(encoding="utf8"))
    if redirect:
        target = posixpath.normpath(posixpath.join(posixpath.dirname(rel), redirect.group(1)))
        page.wait_for_url(site + target)
        page.wait_for_load_state("load")
    mathjax = bw.settle(page)
    data = page.evaluate(COLLECT_JS)
    shot = shots / Path(rel).with_suffix(".png")
    shot.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shot), full_page=True)
    solutions = page.evaluate(SOLUTIONS_JS)
    contrast = {"light": page.evaluate(CONTRAST_JS)}
    page.evaluate(DARK_JS)
    contrast["dark"] = page.evaluate(CONTRAST_JS)
    dark = shots / "dark" / Path(rel).with_suffix(".png")
    dark.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(dark), full_page=True)
    url = page.url
    page.close()
    return Visit(rel, url, mathjax, data, offsite, errors, shot, solutions, contrast, dark)


@pytest.fixture(scope="session")
def visit(browser, site):
    """visit(page) → :class:`Visit`; each page is opened once per session."""
    shutil.rmtree(bw.SCREENSHOTS, ignore_errors=True)  # only this build's pages, none left from older
    context = browser.new_context(viewport=bw.VIEWPORT)
    seen: dict[str, Visit] = {}

    def _visit(rel: str) -> Visit:
        if rel not in seen:
            seen[rel] = _open(context, site, rel)
        return seen[rel]

    yield _visit
    context.close()


BROKEN_PAGE = """<!DOCTYPE html><html><head><title>broken</title></head><body>
<p>A formula left as TeX: <span class="math">\\(x^2\\)</span>, and $$y$$ in the prose.</p>
<img src="missing.png"><img src="http://127.0.0.2:9/elsewhere.png" alt="from another server">
<figure id="fig-lost"><pre>&lt;Figure size 550x340 with 1 Axes&gt;</pre></figure>
<a href="#nowhere">here</a> <a href="gone.html">gone</a> <a href="#fig-lost">fine</a>
<main><pre>WIDE_LINE</pre><p>a number: <span class="pasted-text">3</span></p>
<div style="background:#111"><mjx-container style="color:#222">x</mjx-container></div></main>
<script>throw new Error("boom")</script>
</body></html>""".replace("WIDE_LINE", "wide " * 80)


def test_the_checks_catch_a_broken_page(browser, tmp_path):
    (tmp_path / "page.html").write_text(BROKEN_PAGE)
    context = browser.new_context()
    with bw.serve(tmp_path) as site:
        v = _open(context, site, "page.html", html=tmp_path, shots=tmp_path / "shots")
        assert v.mathjax is None and v.data["math"] == 1 and v.data["untypeset"] == ["\\(x^2\\)"]
        assert {m.group(0) for m in RAW_TEX.finditer(v.data["text"])} == {"\\(", "\\)", "$$"}
        assert v.offsite == ["http://127.0.0.2:9/elsewhere.png"]
        assert any("boom" in e for e in v.errors) and any("404" in e for e in v.errors)
        assert [i["src"] for i in v.data["images"] if not i["alt"]] == ["missing.png"]
        assert [i["src"] for i in v.data["images"] if i["width"] == 0] == [
            "missing.png", "http://127.0.0.2:9/elsewhere.png"]
        assert v.data["bare_figures"] == ["fig-lost"]
        assert len(v.data["wide_code"]) == 1 and v.data["wide_code"][0]["line"].startswith("wide")
        assert [m["title"] for m in v.data["marks"]] == [None]
        assert [c["what"] for c in v.contrast["light"] if c["ratio"] < MIN_CONTRAST] == ["equation"]
        assert broken_links(v, site, lambda rel: v, html=tmp_path) == [
            "#nowhere: no #nowhere in page.html", "gone.html: no file gone.html"]
    context.close()


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
    assert "book/intro.html" in PAGES, f"no built book in {bw.HTML}: run `make book`"


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
    assert str(bt.ROOT) not in visit(page).data["rendered"]


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

def broken_links(v: Visit, site: str, visit, html: Path = bw.HTML) -> list[str]:
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


SOURCE_PAGES = [p for p in PAGES if (bt.ROOT / Path(p).with_suffix(".md")).exists()]


@pytest.mark.parametrize("page", SOURCE_PAGES)
def test_download_buttons_give_the_source_and_the_executed_notebook(page, visit):
    source = bt.ROOT / Path(page).with_suffix(".md")
    by_suffix = {Path(urlsplit(u).path).suffix: u for u in visit(page).data["downloads"]}
    with urlopen(by_suffix[".md"]) as r:
        assert r.read().decode("utf8") == source.read_text(encoding="utf8")
    if not _is_notebook(source):
        return
    with urlopen(by_suffix[".ipynb"]) as r:
        notebook = json.loads(r.read())
    executed = json.loads((bw.BUILD / "jupyter_execute" / Path(page).with_suffix(".ipynb")).read_text())
    assert notebook["nbformat"] == 4
    assert [c["source"] for c in notebook["cells"]] == [c["source"] for c in executed["cells"]]
    ran = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    assert all(c["execution_count"] for c in ran), "the notebook offered is the executed one"


# --- Screenshots -----------------------------------------------------------------------------------

@pytest.mark.parametrize("page", PAGES)
def test_a_screenshot_is_saved(page, visit):
    shot = visit(page).screenshot
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", shot


# --- Glued numbers ---------------------------------------------------------------------------------

_ROLE = re.compile(r"``.+?``|\{glue:text\}`([^`]+)`|\{[\w:.-]+\}`[^`]*`|`[^`]*`", re.S)
_COMMENT = re.compile(r"<!--[\s\S]*?-->|^%.*$", re.M)


def _outside_code(text: str) -> str:
    """The page source without front matter and without the bodies of code and math directives."""
    lines = text.splitlines()
    if lines and lines[0].strip() == "---":
        end = next((n for n in range(1, len(lines)) if lines[n].strip() == "---"), 0)
        lines = lines[end + 1:]
    out, stack = [], []
    for line in lines:
        m = bt.FENCE.match(line)
        if stack and line.strip() == stack[-1][0]:
            stack.pop()
            continue
        if m and (m.group("name") or m.group("fence").startswith("`")) and (
                not stack or stack[-1][1] not in bt.NON_PROSE):
            stack.append((m.group("fence"), m.group("name")))
            continue
        if not (stack and stack[-1][1] in bt.NON_PROSE):
            out.append(line)
    return _COMMENT.sub("", "\n".join(out))


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
        key, spec = role.rsplit(":", 1) if ":" in role else (role, "s")
        doc = docname
        if "::" in key:
            rel, key = key.split("::", 1)
            doc = rel.lstrip("/") if rel.startswith("/") else posixpath.normpath(
                posixpath.join(posixpath.dirname(docname), rel))
            doc = re.sub(r"\.(md|ipynb)$", "", doc)
        glue = json.loads((bw.BUILD / "jupyter_execute" / f"{doc}.glue.json").read_text())
        out.append((role, format_glued(glue[key]["data"]["text/plain"], spec)))
    return out


def _source(page: str) -> Path:
    return bt.ROOT / Path(page).with_suffix(".md")


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


def glued_markdown_numbers(docname: str, source: str) -> list[str]:
    """Numbers written by the Markdown a page pastes with ``{glue:md}`` (tables), outside math.

    >>> import re
    >>> [m.group(0) for m in NUMBER.finditer(MATH.sub(" ", "| $i$ | 0.250 | -1 | x2 | $10^3$ |"))]
    ['0.250', '-1']
    """
    keys = [arg.strip() for name, arg, *_ in bt.blocks(source) if name == "glue:md"]
    keys += re.findall(r"\{glue:md\}`([^`]+)`", _outside_code(source))
    numbers = []
    for key in keys:
        doc = docname
        if "::" in key:
            rel, key = key.split("::", 1)
            doc = re.sub(r"\.(md|ipynb)$", "", posixpath.normpath(posixpath.join(posixpath.dirname(docname), rel)))
        glue = json.loads((bw.BUILD / "jupyter_execute" / f"{doc}.glue.json").read_text())
        markdown = glue[key]["data"].get("text/markdown", "")
        numbers += [m.group(0) for m in NUMBER.finditer(MATH.sub(" ", markdown))]
    return numbers


NUMBER = re.compile(r"(?<![\w.^_])-?\d+(?:\.\d+)?(?![\w.])")
MATH = re.compile(r"\$\$[\s\S]*?\$\$|\$[^$\n]+\$")
MD_PAGES = [p for p in PAGES if _source(p).exists()
            and any(name == "glue:md" for name, *_ in bt.blocks(_source(p).read_text()))]


@pytest.mark.parametrize("page", MD_PAGES)
def test_numbers_of_glued_tables_are_visible(page, visit):
    wanted = glued_markdown_numbers(page.removesuffix(".html"), _source(page).read_text())
    rendered = visit(page).data["rendered"]
    tokens = Counter(m.group(0) for m in NUMBER.finditer(rendered))
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


@pytest.mark.parametrize("page", GLUING_PAGES)
def test_computed_numbers_are_marked_and_say_what_computed_them(page, visit):
    marks = visit(page).data["marks"]
    assert marks, f"{page}: pastes numbers but none is in the page"
    bad = [m for m in marks if not (m["title"] or "").startswith("computed: ")
           or "underline" not in m["line"] or m["dotted"] != "dotted" or m["weight"] >= 600]
    assert bad == [], f"{page}: glued values not marked as computed (dotted, titled, not bold)"
    keys = {m["title"].removeprefix("computed: ") for m in marks}
    glued = set(json.loads((bw.BUILD / "jupyter_execute" / page.replace(".html", ".glue.json")).read_text()))
    assert keys <= glued, f"{page}: titles name keys that were not glued: {keys - glued}"


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
    shot = visit(page).dark_screenshot
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", shot
