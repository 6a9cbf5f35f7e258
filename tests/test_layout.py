"""The book's layout as a reader meets it, at 1280 px and on a 390 px phone, in light and dark mode.

Every page of ``_toc.yml`` is read in Chromium at both widths and in both modes (at 1280 px from
the page's one visit, ``tests/visits.py``: dark mode with its solutions open). In each:

- nothing is wider than the text column unless it sits in a box that scrolls it (a display, a table,
  a figure), and such a box shows a cue at its edge (a shadow: its background is not plain);
  the page itself never scrolls sideways;
- on a phone every display equation and table fits the column (none scrolls sideways), but those
  ``WIDE_ON_A_PHONE`` exempts with the reason;
- at 1280 px every code block fits the column (no scrollbar in code);
- every visible class badge (``book/_ext/check_strength.py``) says at most five words, can be
  focused, names its scope in ``title`` and ``aria-label``, and shows the scope when opened;
- no "How this page is checked" box is visible outside the page's one collapsed block
  (``book/_ext/page_checks.py``), which comes last and starts closed;
- computed numbers are marked quietly: no underline.

Without the browser, on the built HTML: no glued range or pair has equal ends ("between 0.35 and
0.35", "1.414 and 1.414"): equal values are said once (``tables.pair_words``). Every rule is first
shown to catch a small broken page.
"""

from __future__ import annotations

import html as htmllib
import re
from pathlib import Path

import pytest

import browsertools as bw
import buildpaths as paths
from visits import script

HTML = paths.HTML
DOCS = [d for d in bw.toc_docnames() if (HTML / f"{d}.html").exists()] if HTML.exists() else []
LAYOUTS = [(w, mode) for w in (1280, 390) for mode in ("light", "dark")]


# --- Glued ranges with equal ends (the built HTML, no browser) -------------------------------------

# A value MyST-NB pasted, inside the mark glue_marks.py puts around it.
_GLUED = r'<span class="glued" title="computed: [^"]*">\s*(?:<span class="pasted-text">)?([^<]*)(?:</span>)?\s*</span>'
# What joins the two ends of a range or a pair: "and", "to", "or", a dash; tags and spaces around.
_JOIN = r"((?:\s|<[^>]+>)*(?:and|to|or|–|—|-|…)(?:\s|<[^>]+>)*)"
EQUAL_ENDS = re.compile(_GLUED + _JOIN + _GLUED)


def equal_ranges(page_html: str) -> list[str]:
    """Every "x and x", "x to x", "x–x" of two glued values that read alike, with its context.

    >>> g = '<span class="glued" title="computed: {}"><span class="pasted-text">{}</span></span>'
    >>> equal_ranges("between " + g.format("a", "0.35") + " and " + g.format("b", "0.35") + ".")
    ['0.35 and 0.35']
    >>> equal_ranges(g.format("a", "0.35") + " and " + g.format("b", "0.36"))
    []
    >>> equal_ranges(g.format("n", "2") + " × " + g.format("n", "2"))  # a size, not a range
    []
    """
    found = []
    for m in EQUAL_ENDS.finditer(page_html):
        first, join, second = m.group(1).strip(), m.group(2), m.group(3).strip()
        if first and first == second:
            found.append(htmllib.unescape(f"{first}{re.sub(r'<[^>]+>', '', join)}{second}"))
    return found


@pytest.mark.build
@pytest.mark.parametrize("doc", DOCS)
def test_no_glued_range_has_equal_ends(doc):
    html = (HTML / f"{doc}.html").read_text()
    assert equal_ranges(html) == [], f"{doc}: equal values said as a range (say them once: 'both x')"


def test_the_equal_range_rule_catches_a_broken_page():
    g = '<span class="glued" title="computed: {}"><span class="pasted-text">{}</span></span>'
    page = (f"<p>amplitude between {g.format('lo', '0.3536')} and\n{g.format('hi', '0.3536')}, by "
            f"{g.format('a', '0.000')} and {g.format('b', '0.000')}; sizes {g.format('n', '4')} × "
            f"{g.format('n', '4')}; from {g.format('x', '1')} to <em>{g.format('y', '2')}</em>.</p>")
    assert equal_ranges(page) == ["0.3536 and\n0.3536", "0.000 and 0.000"]


# --- In Chromium -----------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def layouts(visit, phone):
    """{(doc, width, mode): what ``js/layout.js`` read}. At 1280 px, from the page's visit (light as it
    loads; dark once its solutions are open and the dark theme applied); on the phone, from the page's
    phone load in each mode (the mode asked for as a reader's stored choice)."""
    seen = {}
    for doc in DOCS:
        seen[(doc, 1280, "light")], seen[(doc, 1280, "dark")] = visit(f"{doc}.html").layout
        for mode in ("light", "dark"):
            seen[(doc, 390, mode)] = phone(f"{doc}.html", mode)["layout"]
    return seen


@pytest.fixture(scope="session")
def badge_check(site, browser):
    """On the first page with badges, at 390 px: each badge takes focus and, opened, shows its scope."""
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    found = {}
    for doc in DOCS:
        page.goto(site + f"{doc}.html")
        bw.settle(page)
        summaries = page.locator(".check-badge > summary")
        if summaries.count() == 0:
            continue
        first = summaries.first
        first.focus()
        focused = page.evaluate("document.activeElement.matches('.check-badge > summary')")
        page.keyboard.press("Enter")  # a keyboard reader opens it
        scope = first.locator("xpath=..").locator(".check-scope")
        found = {"doc": doc, "focused": focused, "scope_visible": scope.is_visible(),
                 "scope_inside_page": page.evaluate(
                     "e => e.getBoundingClientRect().right <= document.documentElement.clientWidth + 1",
                     scope.element_handle())}
        break
    context.close()
    return found


def _docs_layouts():
    return [pytest.param(doc, w, m, id=f"{doc}-{w}-{m}") for doc in DOCS for w, m in LAYOUTS]


@pytest.mark.browser
@pytest.mark.parametrize("doc, width, mode", _docs_layouts())
def test_nothing_overflows_without_its_own_scroll_box(doc, width, mode, layouts):
    got = layouts[(doc, width, mode)]
    assert got["theme"] == mode, f"{doc}: asked for {mode} mode, the page shows {got['theme']}"
    assert not got["page_wider"], f"{doc} at {width} px: the page scrolls sideways"
    assert got["over"] == [], f"{doc} at {width} px: wider than the column with no scroll box"
    assert got["cueless"] == [], f"{doc} at {width} px: a scroll box with no cue at its edge"


# The display equations and tables that may still scroll sideways on a 390 px phone, named as
# js/layout.js names them ({doc: {name: why it cannot fit without harm}}). An entry that fits fails
# too: the list only shrinks.
WIDE_ON_A_PHONE: dict[str, dict[str, str]] = {}


@pytest.mark.browser
@pytest.mark.parametrize("doc", DOCS)
def test_equations_and_tables_fit_the_phone_column(doc, phone):
    exempt = WIDE_ON_A_PHONE.get(doc, {})
    wide = {w["name"]: w for w in phone(f"{doc}.html", "light")["layout"]["wide"]}
    scrolls = [f"{w['kind']} {name}: {w['width']} px in {w['room']}" for name, w in wide.items()
               if name not in exempt]
    assert scrolls == [], f"{doc} at 390 px: wider than the column, the reader scrolls sideways"
    assert set(exempt) <= set(wide), f"{doc}: exempt but fits now: {sorted(set(exempt) - set(wide))}"


@pytest.mark.browser
@pytest.mark.parametrize("doc", DOCS)
def test_code_fits_the_column_at_1280(doc, layouts):
    for mode in ("light", "dark"):
        assert layouts[(doc, 1280, mode)]["wide_code"] == [], f"{doc}: code wider than the column"


@pytest.mark.browser
@pytest.mark.parametrize("doc", DOCS)
def test_code_wraps_on_a_phone(doc, layouts):
    """On a 390 px phone no code block or output scrolls sideways: book.css wraps its long lines."""
    for mode in ("light", "dark"):
        assert layouts[(doc, 390, mode)]["wide_code"] == [], f"{doc} at 390 px: code scrolls sideways"


@pytest.mark.browser
@pytest.mark.parametrize("doc", DOCS)
def test_badges_are_short_and_name_their_scope(doc, layouts):
    for width, mode in LAYOUTS:
        for badge in layouts[(doc, width, mode)]["badges"]:
            assert badge["words"] <= 5, f"{doc}: a badge of {badge['words']} words: {badge['text']!r}"
            assert badge["text"] in {"proved", "verified", "measured"}, badge
            assert badge["title"] == badge["scope"] and badge["scope"] in badge["aria"], badge


@pytest.mark.browser
def test_a_badge_opens_to_its_scope_from_the_keyboard(badge_check):
    assert badge_check, "no page with a class badge"
    assert badge_check["focused"] and badge_check["scope_visible"], badge_check
    assert badge_check["scope_inside_page"], badge_check


@pytest.mark.browser
@pytest.mark.parametrize("doc", DOCS)
def test_no_how_checked_box_outside_its_collapsed_block(doc, layouts):
    for width, mode in LAYOUTS:
        got = layouts[(doc, width, mode)]
        assert got["stray_boxes"] == [], f"{doc}: a 'How this page is checked' box in the text"
        assert len(got["blocks"]) <= 1, f"{doc}: {len(got['blocks'])} blocks of checks, not one"
        for block in got["blocks"]:
            assert not block["open"] and not block["visible_body"], f"{doc}: the checks start open"
            assert block["last"], f"{doc}: the block of checks is not at the end of the page"


@pytest.mark.browser
@pytest.mark.parametrize("doc", DOCS)
def test_computed_numbers_are_marked_quietly(doc, layouts):
    assert layouts[(doc, 1280, "light")]["marks"] == [], f"{doc}: computed numbers underlined"


BROKEN_PAGE = """<!DOCTYPE html><html><head><style>
  .scroll { overflow-x: auto; } .cue { background-image: linear-gradient(red, blue); }
</style></head><body><main><article style="width: 300px">
<pre style="overflow-x: auto">WIDE</pre>
<div class="math" id="eq-wide" style="overflow-x: auto">WIDE</div>
<table id="t-bare"><tr><td>WIDE</td></tr></table>
<div class="scroll"><table id="t-boxed"><tr><td>WIDE</td></tr></table></div>
<div class="admonition"><p class="admonition-title">How this page is checked</p><p>stray</p></div>
<div class="check-badge"><summary title="s" aria-label="s">verified for every n and d here</summary>
<span class="check-scope">s</span></div>
<details class="how-checked"><summary>How this page is checked</summary>
<div class="how-checked-body">ok</div></details><p>after</p>
</article></main></body></html>""".replace("WIDE", "wide_" * 60)


@pytest.mark.browser
def test_the_layout_rules_catch_a_broken_page(browser, tmp_path):
    (tmp_path / "page.html").write_text(BROKEN_PAGE)
    page = browser.new_page(viewport={"width": 390, "height": 844})
    try:
        with bw.serve(Path(tmp_path)) as base:
            page.goto(base + "page.html")
            got = page.evaluate(script("layout.js"))
    finally:
        page.close()
    assert got["page_wider"]
    assert [o.split(":")[0] for o in got["over"]] == ["#t-bare"]
    assert [c.split(":")[0] for c in got["cueless"]] == ["#eq-wide"]
    assert len(got["wide_code"]) == 1
    assert [(w["kind"], w["name"][:7]) for w in got["wide"]] == [
        ("equation", "eq-wide"), ("table", "?: wide"), ("table", "?: wide")]
    assert [b["words"] for b in got["badges"]] == [7]
    assert [s.split(":")[0] for s in got["stray_boxes"]] == ["div.admonition"]
    assert got["blocks"] == [{"open": False, "visible_body": False, "last": False}]
