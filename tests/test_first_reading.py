"""The first-reading path (book/_ext/first_reading.py): every chapter opens with a plain-words summary
beside its key figure, and one switch in the header hides what a first reading skips.

On the sources (no build): every content chapter, the pages of ``_toc.yml`` before the appendices,
the introduction included, opens right under its title with a ``{summary}`` of fewer than 80 words,
in words (no formula, no glued number), beside a figure the page glues.

In Chromium (marked ``browser``): a reader who has never chosen (no ``first-reading`` key stored)
finds on every page, first in the article, a quiet offer (a labelled aside, never an alert) with two
buttons, "Start the first reading" and "Show everything"; either stores the choice, applies it,
shows it on the header's switch and removes the offer, which does not come back on the next page;
the header's switch, used first, is a choice too. The offer is never printed, Tab reaches its
buttons with a focus ring, it keeps its contrast in light and dark mode and fits a 390 px phone. The
switch is one button in the page header, named "First reading", with its state in ``aria-pressed``;
Tab reaches it and shows a focus ring, Enter and Space work it. On, a page hides its proofs, the
kernel code under its formulas, class badges, "How this page is checked" block, technical asides
and what is marked second-reading (prose and cells about those: the paragraph after a kernel that
says how a reader calls it, qkv's badge and kernel sentences, softmax's ``naive_softmax`` cell);
no page keeps a drawn "A reader calls it as" paragraph (its own other code cells stay); off, it
shows them again; the choice holds on the next page; printed, a page shows everything whatever the
switch says. The switch keeps its contrast in light and dark mode, on and off. The summary sits
beside its figure at 1280 px and above it at 390 px, where nothing pushes the page sideways; its
text keeps its contrast (light at 1280 px, dark at 390 px).
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml
from short_code import KERNEL_CLASS

import browsertools as bw
import buildpaths as paths
from visits import script

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 80  # words of a summary, fewer than



def tab_to(page, selector: str, most: int = 400) -> int:
    """Press Tab until the focused element matches ``selector``: how many presses it took (``most``
    if it never came)."""
    tabs = 0
    while tabs < most and not page.evaluate("s => document.activeElement.matches(s)", selector):
        page.keyboard.press("Tab")
        tabs += 1
    return tabs


def visible_ring(ring: dict) -> bool:
    """Whether focus_ring.js found a visible focus ring: focus-visible, an outline at least 1 px wide."""
    return bool(ring["focus_visible"]) and ring["outline_width"] >= 1 and ring["outline_style"] != "none"

def content_chapters(toc: dict) -> list[str]:
    """The root and every chapter of the parts before the appendices, in the order of ``_toc.yml``."""
    stems = [Path(toc["root"]).name]
    for part in toc["parts"]:
        if part.get("caption") == "Appendices":
            break
        stems += [Path(c["file"]).name for c in part["chapters"]]
    return stems


CHAPTERS = content_chapters(yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf8")))

OPENING = re.compile(r"^# [^\n]+\n\s*(?P<fence>:{3,}|`{3,})\{summary\}[ \t]*\n(?P<body>.*?)\n(?P=fence)[ \t]*$",
                     re.S | re.M)


def opening_summary(text: str) -> dict | None:
    """The summary a page opens with, right under its title: {"figure", "text", "words"}; None if it
    opens with anything else."""
    title = re.search(r"^# ", text, re.M)
    found = OPENING.match(text, title.start()) if title else None
    if found is None:
        return None
    lines = found.group("body").splitlines()
    options = dict(re.findall(r"^:([\w-]+):\s*(.*)$", "\n".join(l for l in lines if l.startswith(":")), re.M))
    body = " ".join(l for l in lines if not l.startswith(":")).strip()
    return {"figure": options.get("figure", ""), "text": body, "words": len(re.findall(r"[\w'’-]+", body))}


def summary_faults(text: str) -> list[str]:
    """What is wrong with a page's opening summary (empty when nothing is)."""
    found = opening_summary(text)
    if found is None:
        return ["does not open with a {summary} under its title"]
    faults = []
    if found["words"] >= LIMIT:
        faults.append(f"summary of {found['words']} words (fewer than {LIMIT})")
    if not found["words"]:
        faults.append("empty summary")
    if re.search(r"\$|\{glue|\{math\}|\{eq\}", found["text"]):
        faults.append("a formula or a computed number in the summary: it says it in words")
    if not found["figure"] or not re.search(r"^(`{3,}|:{3,})\{glue:figure\}\s+" + re.escape(found["figure"]) + r"\s*$",
                                            text, re.M):
        faults.append(f"the summary's :figure: {found['figure']!r} is not a figure this page glues")
    return faults


def test_the_summary_rule_catches_a_broken_page():
    figure = "```{glue:figure} fig-a\n:alt: A.\n:name: fig-a\n\nCaption.\n```\n"
    good = "# Title\n\n:::{summary}\n:figure: fig-a\nShort and plain.\n:::\n\nText.\n\n" + figure
    assert summary_faults(good) == []
    assert opening_summary(good) == {"figure": "fig-a", "text": "Short and plain.", "words": 3}
    run_first = "# Title\n\n*Run it yourself:* ...\n\n:::{summary}\n:figure: fig-a\nShort.\n:::\n" + figure
    assert summary_faults(run_first) == ["does not open with a {summary} under its title"]
    long = good.replace("Short and plain.", "word " * LIMIT)
    assert summary_faults(long) == [f"summary of {LIMIT} words (fewer than {LIMIT})"]
    math = good.replace("Short and plain.", "Divide by $\\sqrt{d}$, here {glue:text}`d`.")
    assert summary_faults(math) == ["a formula or a computed number in the summary: it says it in words"]
    other = good.replace(":figure: fig-a", ":figure: fig-b")
    assert summary_faults(other) == ["the summary's :figure: 'fig-b' is not a figure this page glues"]


def test_the_content_chapters_are_those_before_the_appendices():
    assert CHAPTERS[0] == "intro" and "closing" in CHAPTERS
    assert not {"about", "methodology", "api", "symbols", "references"} & set(CHAPTERS)


@pytest.mark.parametrize("stem", CHAPTERS)
def test_every_content_chapter_opens_with_a_plain_summary_beside_its_figure(stem):
    assert summary_faults((ROOT / "book" / f"{stem}.md").read_text(encoding="utf8")) == []


def test_a_technical_aside_is_marked_by_its_class():
    """The class the switch hides is the one the sources write (README: "technical asides")."""
    marked = [s for s in CHAPTERS
              if re.search(r"^:class:.*\btechnical\b", (ROOT / "book" / f"{s}.md").read_text(encoding="utf8"), re.M)]
    assert marked, "no page marks a technical aside; the README says how"
    css = (ROOT / "book" / "_ext" / "static" / "first_reading.css").read_text(encoding="utf8")
    assert "html.first-reading .admonition.technical" in css


def test_the_switch_hides_the_kernel_code_that_short_code_marks():
    """The class the switch hides is the one book/_ext/short_code.py gives a ``:pyobject:`` include."""
    css = (ROOT / "book" / "_ext" / "static" / "first_reading.css").read_text(encoding="utf8")
    assert f"html.first-reading .{KERNEL_CLASS}" in css


INCLUDES = re.compile(r"^(`{3,}|:{3,})\{literalinclude\}[^\n]*\n(?:(?::[\w-]+:.*)\n)*", re.M)


@pytest.mark.build
@pytest.mark.parametrize("stem", CHAPTERS)
def test_every_kernel_shown_under_a_formula_is_marked_and_no_code_cell_is(stem):
    source = (ROOT / "book" / f"{stem}.md").read_text(encoding="utf8")
    kernels = sum(":pyobject:" in m.group(0) for m in INCLUDES.finditer(source))
    html = (paths.HTML / "book" / f"{stem}.html").read_text(encoding="utf8")
    marked = re.findall(r'<div class="([^"]*\b' + KERNEL_CLASS + r'\b[^"]*)"', html)
    assert len(marked) == kernels, (stem, kernels, marked)
    assert not [m for m in marked if "cell" in m.split()], "a code cell is marked as kernel code"


# --- In Chromium -----------------------------------------------------------------------------------

# A page with proofs, badges, its checks and kernel code, and one with a technical aside.
FIRST, SECOND = "book/softmax.html", "book/scores.html"
SKIPPED = ("proofs", "badges", "checks", "asides", "kernels", "second")


@pytest.fixture(scope="session")
def switch_states(browser, site):
    """What js/first_reading.js read at each step of one reader's session at 1280 px: the first page
    as it loads; the switch reached with Tab and turned on with Enter; the second page, opened after
    it; the same page printed; turned off with Space; and the switch's contrast, off and on, in light
    and dark mode."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()

    def open_(rel):
        page.goto(site + rel, wait_until="load")
        page.add_style_tag(content=script("still.css"))  # no transitions: the theme applies at once

    seen = {}
    try:
        open_(FIRST)
        seen["loaded"] = page.evaluate(script("first_reading.js"))
        seen["by_role"] = page.get_by_role("button", name="First reading", exact=True).count()
        seen["tabs"] = tab_to(page, ".first-reading-switch")
        seen["focused"] = page.evaluate(script("focus_ring.js"))
        page.keyboard.press("Enter")
        seen["on"] = page.evaluate(script("first_reading.js"))
        open_(SECOND)
        seen["next_page"] = page.evaluate(script("first_reading.js"))
        page.emulate_media(media="print")
        seen["printed"] = page.evaluate(script("first_reading.js"))
        page.emulate_media(media="screen")
        page.focus(".first-reading-switch")
        page.keyboard.press(" ")
        seen["off"] = page.evaluate(script("first_reading.js"))
        seen["light_off"] = page.evaluate(script("switch_contrast.js"))
        page.click(".first-reading-switch")
        seen["light_on"] = page.evaluate(script("switch_contrast.js"))
        page.evaluate(script("dark.js"))
        seen["dark_on"] = page.evaluate(script("switch_contrast.js"))
        page.click(".first-reading-switch")
        seen["dark_off"] = page.evaluate(script("switch_contrast.js"))
    finally:
        context.close()
    return seen


def _shown(state: dict) -> set:
    """Whether the page shows what a first reading skips: {True} all of it, {False} none of it."""
    return {shown for shown in state["shown"].values() if shown is not None}


@pytest.mark.browser
def test_the_two_pages_hold_every_kind_of_block_a_first_reading_skips(switch_states):
    counts = [switch_states[step]["counts"] for step in ("loaded", "next_page")]
    assert all(counts[0][kind] or counts[1][kind] for kind in SKIPPED), counts


@pytest.mark.browser
def test_the_switch_is_one_named_button_in_the_header(switch_states):
    loaded = switch_states["loaded"]
    assert loaded["switches"] == 1 and switch_states["by_role"] == 1
    assert loaded["in_header"]
    assert (loaded["tag"], loaded["pressed"]) == ("BUTTON", "false")  # its name: by_role, as a screen reader reads it


@pytest.mark.browser
def test_off_the_page_shows_everything(switch_states):
    loaded = switch_states["loaded"]
    assert _shown(loaded) == {True}, loaded["shown"]
    assert not loaded["first_reading"]


@pytest.mark.browser
def test_tab_reaches_the_switch_with_a_visible_focus_and_enter_turns_it_on(switch_states):
    assert switch_states["tabs"] < 400, "Tab never reached the switch"
    assert visible_ring(switch_states["focused"]), switch_states["focused"]
    on = switch_states["on"]
    assert on["pressed"] == "true" and on["first_reading"] and on["stored"] == "on"
    assert _shown(on) == {False}, on["shown"]


@pytest.mark.browser
def test_the_choice_holds_on_the_next_page(switch_states):
    nxt = switch_states["next_page"]
    assert nxt["pressed"] == "true" and nxt["first_reading"]
    assert _shown(nxt) == {False}, nxt["shown"]


@pytest.mark.browser
def test_printed_the_page_shows_everything_whatever_the_switch(switch_states):
    printed = switch_states["printed"]
    assert printed["first_reading"]  # still on
    assert _shown(printed) == {True}, printed["shown"]
    assert not printed["switch_shown"]


@pytest.mark.browser
def test_space_turns_it_off_and_everything_shows_again(switch_states):
    off = switch_states["off"]
    assert off["pressed"] == "false" and not off["first_reading"] and off["stored"] == "off"
    assert _shown(off) == {True}, off["shown"]


@pytest.mark.browser
@pytest.mark.parametrize("state", ["light_off", "light_on", "dark_off", "dark_on"])
def test_the_switch_keeps_its_contrast(switch_states, state):
    seen = switch_states[state]
    assert seen["theme"] == ("light" if state.startswith("light") else "dark")
    assert seen["pressed"] == ("false" if state.endswith("off") else "true")
    assert seen["text"] >= 4.5, seen  # WCAG AA for its small text
    assert seen["border"] >= 3, seen  # its outline, a control's boundary


@pytest.fixture(scope="session")
def summary_layouts(visit, phone):
    """{(stem, width): what js/summary_layout.js read}: every content chapter at 1280 px in light mode
    (from its visit, as it loads) and at 390 px in dark mode (from its phone load, the mode asked for
    as a reader's stored choice)."""
    seen = {}
    for stem in CHAPTERS:
        seen[(stem, 1280)] = visit(f"book/{stem}.html").summary
        seen[(stem, 390)] = phone(f"book/{stem}.html", "dark")["summary_layout"]
    return seen


@pytest.mark.browser
@pytest.mark.parametrize("stem", CHAPTERS)
def test_the_summary_sits_beside_its_figure_at_1280(summary_layouts, stem):
    seen = summary_layouts[(stem, 1280)]
    assert seen["summaries"] == 1 and seen["first"], seen
    assert seen["image_loaded"] and seen["alt"], seen
    assert seen["theme"] == "light" and min(seen["contrast"]) >= 4.5, seen
    assert seen["text"]["right"] <= seen["figure"]["left"] + 1, seen  # the text left of the figure
    assert seen["text"]["top"] < seen["figure"]["bottom"] and seen["figure"]["top"] < seen["text"]["bottom"], seen


@pytest.mark.browser
@pytest.mark.parametrize("stem", CHAPTERS)
def test_the_summary_sits_above_its_figure_at_390(summary_layouts, stem):
    seen = summary_layouts[(stem, 390)]
    assert seen["summaries"] == 1 and seen["first"], seen
    assert seen["theme"] == "dark" and min(seen["contrast"]) >= 4.5, seen
    assert seen["text"]["bottom"] <= seen["figure"]["top"] + 1, seen
    assert seen["box"]["right"] <= seen["viewport"] + 1 and seen["box"]["left"] >= -1, seen
    assert not seen["page_wider"], seen


@pytest.mark.browser
def test_a_link_into_a_hidden_aside_opens_that_aside(browser, site):
    """In a first reading, a page opened at a link into a technical aside (softmax's "where the literal
    formula breaks", from another page) shows that aside, and only it, in view; the switch hides it
    again."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    visible = "id => { const e = document.getElementById(id); return !!e && e.getClientRects().length > 0; }"
    hidden_asides = ("() => [...document.querySelectorAll('.admonition.technical')]"
                     ".filter(e => e.getClientRects().length === 0).length")
    try:
        page.goto(site + "book/scores.html", wait_until="load")  # another page: the next goto loads anew
        page.evaluate("localStorage.setItem('first-reading', 'on')")
        page.goto(site + "book/softmax.html#softmax-overflow", wait_until="load")
        assert page.evaluate("document.documentElement.classList.contains('first-reading')")
        assert page.evaluate(visible, "softmax-overflow")
        top = page.evaluate("document.getElementById('softmax-overflow').getBoundingClientRect().top")
        assert 0 <= top < 900, top  # and scrolled into view, as the browser does for a shown target
        total = page.evaluate("document.querySelectorAll('.admonition.technical').length")
        assert page.evaluate(hidden_asides) == total - 1  # the others stay hidden
        assert page.evaluate("[...document.querySelectorAll('.prf-proof')].every(e => !e.getClientRects().length)")
        page.click(".first-reading-switch")  # off: everything shows
        page.click(".first-reading-switch")  # on again: the aside is hidden like the others
        assert not page.evaluate(visible, "softmax-overflow")
    finally:
        context.close()


# --- The first-visit offer -------------------------------------------------------------------------

OFFER = "New to attention? A first reading hides proofs, badges, checks and technical asides."
START, ALL = "Start the first reading", "Show everything"
PAGES = [d for d in bw.toc_docnames() if (paths.HTML / f"{d}.html").exists()] if paths.HTML.exists() else []


# --- Links into what a first reading hides ----------------------------------------------------------

# What first_reading.js opens for a link (first_reading.css hides these in a first reading).
HIDDEN = (".prf-proof, .kernel-code, details.how-checked, .admonition.technical, .second-reading, "
          ".tag_second-reading")
# The links on a page that a first-reading reader sees and whose target, on the same page, is hidden:
# a {ref} to an aside's name, a {prf:ref} to a theorem in a second-reading block, a {numref}, and the
# same in a figure's caption. A link inside a closed dropdown (an exercise's solution) is not seen.
HIDDEN_LINKS = """() => [...document.querySelectorAll('article.bd-article a[href*="#"]')].map((a, i) => {
    const url = new URL(a.href, location.href);
    if (url.pathname !== location.pathname || url.hash.length < 2) return null;
    const target = document.getElementById(decodeURIComponent(url.hash.slice(1)));
    if (!target || target.getClientRects().length || !a.checkVisibility({visibilityProperty: true})) return null;
    return {i, id: target.id, text: a.textContent.trim(), caption: !!a.closest('figcaption')};
}).filter(Boolean)"""
SEEN = """([id, hidden]) => {
    const target = document.getElementById(id), box = target.getBoundingClientRect();
    return {shown: target.getClientRects().length > 0, top: box.top, bottom: box.bottom, height: innerHeight,
            end: scrollY + innerHeight >= document.documentElement.scrollHeight - 1,
            strays: [...document.querySelectorAll('.opened-by-link')].filter(e => !e.contains(target)).length,
            closed: [...document.querySelectorAll(hidden)].filter(e => e.contains(target)
                                                                 && !e.classList.contains('opened-by-link')).length};
}"""
# Pages whose links into hidden content a reader reported dead, with what each must hold at least.
MUST_LINK = {"book/softmax": ["softmax-temperature-limits", "softmax-jacobian", "softmax-scale-slips"],
             "book/graph": ["thm-constant-scores-mean-aggregation", "thm-masked-softmax-neighbours",
                            "thm-gat-is-masked-attention", "thm-permutation-equivariance"]}


@pytest.mark.browser
@pytest.mark.parametrize("doc", PAGES)
def test_every_link_into_hidden_content_opens_it_and_scrolls_to_it(browser, site, doc):
    """In a first reading, clicking a link whose target the page hides opens the boxes around that
    target, and only those, and scrolls the target into view; clicking it again, with its hash already
    in the address (no hashchange), does the same. A browser does not scroll to a target that is not
    displayed, so a box opened only after the browser followed the link was out of view: the link
    seemed dead. The switch, off then on, hides the box again."""
    with first_reading_page(browser, site) as page:
        page.goto(site + f"{doc}.html", wait_until="load")
        links = page.evaluate(HIDDEN_LINKS)
        assert set(MUST_LINK.get(doc, [])) <= {link["id"] for link in links}, links
        anchors = page.locator('article.bd-article a[href*="#"]')
        for link in links:
            for attempt in ("first", "again"):  # again: the hash is already the link's
                page.evaluate("window.scrollTo(0, 0)")
                anchors.nth(link["i"]).click()
                page.wait_for_timeout(100)
                seen = page.evaluate(SEEN, [link["id"], HIDDEN])
                assert seen["shown"] and seen["closed"] == 0 and seen["strays"] == 0, (attempt, link, seen)
                # scrolled to: at the top of the window, under the header, or the page is at its end
                assert 0 <= seen["top"] <= 150 or (seen["end"] and seen["top"] < seen["height"]), (attempt, link, seen)
            page.click(".first-reading-switch")
            page.click(".first-reading-switch")
            assert not page.evaluate(SEEN, [link["id"], HIDDEN])["shown"], link


# --- Second-reading material -----------------------------------------------------------------------

# Sentences and cells that speak of what a first reading hides, so that a first reading hides them too.
SECOND_READING = {
    "book/qkv.html": ["The small badge under a numbered result", "The code shown under a formula",
                      "A reader calls it as project("],
    "book/softmax.html": ["The kernel is private. A reader calls", "The cell below runs the literal formula",
                          "naive_softmax(BIG)[0].tolist()", "A reader calls it as softmax_jacobian(",
                          "# Setup for this page: the package's softmax"],  # the folded setup cell
    # the link to the aside on merging the heads, and the kernels' sentences, go with what they point at
    "book/multihead.html": ["The merge loses nothing only in a special case"],
    "book/block.html": ["Both placements share one wiring in the package"],
}


@contextmanager
def first_reading_page(browser, site):
    """A page at 1280 px whose reader chose the first reading (stored as the switch stores it)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    try:
        page.goto(site + FIRST, wait_until="load")
        page.evaluate("localStorage.setItem('first-reading', 'on')")
        yield page
    finally:
        context.close()


@pytest.fixture(scope="session")
def second_reading_states(browser, site):
    """What js/second_reading.js read on qkv and softmax at 1280 px: in a first reading, printed with
    the switch still on, and with the switch off."""
    seen = {}
    with first_reading_page(browser, site) as page:
        for rel, phrases in SECOND_READING.items():
            page.goto(site + rel, wait_until="load")
            seen[rel, "on"] = page.evaluate(script("second_reading.js"), phrases)
            page.emulate_media(media="print")
            seen[rel, "printed"] = page.evaluate(script("second_reading.js"), phrases)
            page.emulate_media(media="screen")
            page.click(".first-reading-switch")
            seen[rel, "off"] = page.evaluate(script("second_reading.js"), phrases)
            page.click(".first-reading-switch")
    return seen


@pytest.mark.browser
@pytest.mark.parametrize("rel", list(SECOND_READING))
@pytest.mark.parametrize("state, shown", [("on", False), ("printed", True), ("off", True)])
def test_second_reading_sentences_and_cells_follow_the_switch(second_reading_states, rel, state, shown):
    """In a first reading the marked sentences and the naive_softmax cell are hidden; printed, or
    with the switch off, they show."""
    found = second_reading_states[rel, state]["found"]
    assert all(v is not None for v in found.values()), ("a phrase is no longer on the page", found)
    assert set(found.values()) == {shown}, (state, found)


@pytest.mark.browser
def test_the_calls_rule_sees_a_drawn_sentence(second_reading_states):
    """The rule below can fail: with the switch off, qkv draws its "A reader calls it as" paragraph."""
    assert second_reading_states["book/qkv.html", "off"]["calls"]
    assert not second_reading_states["book/qkv.html", "on"]["calls"]


def test_the_switch_hides_second_reading_material():
    """The classes the README tells an author to write are the ones the switch hides and a link opens."""
    static = ROOT / "book" / "_ext" / "static"
    css = (static / "first_reading.css").read_text(encoding="utf8")
    js = (static / "first_reading.js").read_text(encoding="utf8")
    for selector in (".second-reading", ".tag_second-reading"):
        assert f"html.first-reading {selector}" in css and selector in js, selector


@pytest.fixture(scope="session")
def calls_left(browser, site):
    """For every page of the book, the drawn paragraphs starting "A reader calls it as" in a first reading."""
    left = {}
    with first_reading_page(browser, site) as page:
        for doc in PAGES:
            page.goto(site + f"{doc}.html", wait_until="load")
            left[doc] = page.evaluate(script("second_reading.js"), [])["calls"]
    return left


@pytest.mark.browser
def test_no_page_keeps_a_reader_calls_it_sentence_in_a_first_reading(calls_left):
    assert PAGES, "no built page"
    assert {doc: calls for doc, calls in calls_left.items() if calls} == {}


@pytest.fixture(scope="session")
def offer_states(browser, site):
    """What js/offer.js and js/first_reading.js read at each step of first-time readers' sessions at
    1280 px: the first page as it loads, printed, its start button reached with Tab and pressed with
    Enter, the next page; then, the key cleared (a new reader), "Show everything" clicked, the next
    page, the header's switch on and off there; then a new reader who uses the header's switch first."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()

    def open_(rel):
        page.goto(site + rel, wait_until="load")
        page.add_style_tag(content=script("still.css"))

    def read():
        return {"offer": page.evaluate(script("offer.js")), "state": page.evaluate(script("first_reading.js"))}

    def new_reader(rel):
        page.evaluate("localStorage.removeItem('first-reading')")
        open_(rel)

    seen = {}
    try:
        open_(FIRST)
        seen["first"] = read()
        seen["by_role"] = {name: page.get_by_role("button", name=name, exact=True).count() for name in (START, ALL)}
        seen["region"] = page.get_by_role("complementary", name="A first reading").count()
        page.emulate_media(media="print")
        seen["printed"] = read()
        page.emulate_media(media="screen")
        seen["tabs"] = tab_to(page, ".first-reading-offer-start")
        seen["focused"] = page.evaluate(script("focus_ring.js"))
        page.keyboard.press("Enter")
        seen["started"] = read()
        seen["focus_after"] = page.evaluate("document.activeElement.matches('.first-reading-switch')")
        open_(SECOND)
        seen["started_next"] = read()
        new_reader(FIRST)
        seen["again"] = read()
        page.get_by_role("button", name=ALL, exact=True).click()
        seen["all"] = read()
        open_(SECOND)
        seen["all_next"] = read()
        page.click(".first-reading-switch")
        seen["switch_on"] = read()
        page.click(".first-reading-switch")
        seen["switch_off"] = read()
        new_reader(FIRST)
        page.click(".first-reading-switch")
        seen["switch_first"] = read()
        open_(SECOND)
        seen["switch_first_next"] = read()
    finally:
        context.close()
    return seen


def _no_offer(step: dict) -> bool:
    return step["offer"]["offers"] == 0


@pytest.mark.browser
def test_a_first_visit_shows_the_offer_first_in_the_article(offer_states):
    first = offer_states["first"]
    offer, state = first["offer"], first["state"]
    assert offer["offers"] == 1 and offer["shown"] and offer["first_in_article"], offer
    assert offer["text"] == OFFER
    assert [b["name"] for b in offer["buttons"]] == [START, ALL] and offer_states["by_role"] == {START: 1, ALL: 1}
    assert state["stored"] is None and not state["first_reading"] and state["pressed"] == "false"
    assert _shown(state) == {True}  # off by default: everything shows until the reader chooses
    assert offer["summary_follows_title"], offer  # the summary still opens the chapter under its title


@pytest.mark.browser
def test_the_offer_is_a_labelled_aside_not_an_alert(offer_states):
    offer = offer_states["first"]["offer"]
    assert (offer["tag"], offer["role"], offer["label"]) == ("ASIDE", None, "A first reading")
    assert offer_states["region"] == 1  # a named landmark a screen reader can find, and skip
    assert offer["live"] is False  # nothing announces it


@pytest.mark.browser
def test_the_offer_is_never_printed(offer_states):
    printed = offer_states["printed"]
    assert printed["offer"]["offers"] == 1 and not printed["offer"]["shown"]
    assert _shown(printed["state"]) == {True}


@pytest.mark.browser
def test_tab_reaches_the_offer_with_a_visible_focus_and_enter_starts_the_first_reading(offer_states):
    assert offer_states["tabs"] < 400, "Tab never reached the offer"
    assert visible_ring(offer_states["focused"]), offer_states["focused"]
    started = offer_states["started"]
    assert _no_offer(started)
    assert started["state"]["stored"] == "on" and started["state"]["first_reading"]
    assert started["state"]["pressed"] == "true"  # the header's switch shows the choice
    assert _shown(started["state"]) == {False}
    assert offer_states["focus_after"], "focus went nowhere when the offer left"


@pytest.mark.browser
@pytest.mark.parametrize("step", ["started_next", "all_next", "switch_first_next"])
def test_once_chosen_the_offer_does_not_come_back(offer_states, step):
    assert _no_offer(offer_states[step]), offer_states[step]["offer"]


@pytest.mark.browser
def test_the_first_reading_holds_on_the_next_page(offer_states):
    nxt = offer_states["started_next"]["state"]
    assert nxt["first_reading"] and nxt["pressed"] == "true" and _shown(nxt) == {False}


@pytest.mark.browser
def test_show_everything_stores_off_and_holds_on_the_next_page(offer_states):
    assert offer_states["again"]["offer"]["shown"]  # a new reader (no key) is offered it again
    for step in ("all", "all_next"):
        seen = offer_states[step]
        assert _no_offer(seen)
        assert seen["state"]["stored"] == "off" and not seen["state"]["first_reading"]
        assert seen["state"]["pressed"] == "false" and _shown(seen["state"]) == {True}


@pytest.mark.browser
def test_the_header_switch_still_works_both_ways_and_counts_as_a_choice(offer_states):
    on, off = offer_states["switch_on"]["state"], offer_states["switch_off"]["state"]
    assert (on["stored"], on["first_reading"], _shown(on)) == ("on", True, {False})
    assert (off["stored"], off["first_reading"], _shown(off)) == ("off", False, {True})
    first = offer_states["switch_first"]
    assert _no_offer(first) and first["state"]["stored"] == "on"


@pytest.fixture(scope="session")
def offers(visit, phone):
    """{(doc, width, mode): what js/offer.js read}: every page of the book at 1280 px (its visit, light
    as loaded and dark) and at 390 px (its phone load in each mode); none of these tabs chooses."""
    seen = {}
    for doc in PAGES:
        v = visit(f"{doc}.html")
        seen[(doc, 1280, "light")], seen[(doc, 1280, "dark")] = v.offer["light"], v.offer["dark"]
        for mode in ("light", "dark"):
            seen[(doc, 390, mode)] = phone(f"{doc}.html", mode)["offer"]
    return seen


def _offer_cases():
    return [pytest.param(doc, w, m, id=f"{doc}-{w}-{m}") for doc in PAGES
            for w, m in ((1280, "light"), (1280, "dark"), (390, "light"), (390, "dark"))]


@pytest.mark.browser
@pytest.mark.parametrize("doc, width, mode", _offer_cases())
def test_the_offer_shows_on_every_page_fits_and_keeps_its_contrast(offers, doc, width, mode):
    seen = offers[(doc, width, mode)]
    assert seen["offers"] == 1 and seen["shown"] and seen["first_in_article"], seen
    assert seen["theme"] == mode, seen
    assert seen["text_contrast"] >= 4.5, seen  # WCAG AA for its small text
    assert all(b["text"] >= 4.5 and b["border"] >= 3 for b in seen["buttons"]), seen["buttons"]
    box, article = seen["box"], seen["article"]
    assert box["left"] >= article["left"] - 1 and box["right"] <= article["right"] + 1, seen
    assert seen["box"]["right"] <= seen["viewport"] + 1 and not seen["page_wider"], seen
    assert seen["box"]["height"] <= (140 if width == 390 else 80), seen  # quiet: a few lines, not a banner
    assert seen["summary_follows_title"], seen



# --- How long a first reading is --------------------------------------------------------------------

# What a first reading hides, read from first_reading.css's own rule (one list, the stylesheet's).
CSS = (ROOT / "book" / "_ext" / "static" / "first_reading.css").read_text(encoding="utf8")
HIDE_RULE = re.search(r"@media screen \{\s*((?:html\.first-reading [^,{]+,\s*)*html\.first-reading [^,{]+)"
                      r"\{\s*display: none", CSS)
FIRST_HIDES = [s.strip().removeprefix("html.first-reading").strip() for s in HIDE_RULE.group(1).split(",")]
NOT_PROSE = ".cell_input, .math, script, style, nav"  # code a reader runs, formulas, page machinery
WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
# The first part a newcomer reads (the introduction and the parts up to "Attention is a graph") stays
# short page by page and in all; the later chapters, read as a second pass, do not grow past a cap.
FIRST_PART = ("The derivation", "The worked example", "Attention is a graph")
PAGE_MOST, PART_MOST, LATER_MOST = 1300, 11500, 2400


def first_reading_words(html: str) -> int:
    """The words of prose a first reading shows on a page: its article, without what the switch hides,
    the code cells' inputs and the formulas."""
    from bs4 import BeautifulSoup

    article = BeautifulSoup(html, "html.parser").select_one("article.bd-article")
    for hidden in article.select(", ".join(FIRST_HIDES) + ", " + NOT_PROSE):
        hidden.decompose()
    return len(WORD.findall(article.get_text(" ")))


def test_the_words_rule_skips_what_a_first_reading_hides():
    page = ('<article class="bd-article"><p>Two words.</p><div class="admonition technical"><p>hidden aside</p>'
            '</div><div class="cell_input"><pre>x = 1</pre></div><span class="math">e^x</span>'
            '<div class="prf-proof">a proof</div><div class="second-reading">more</div></article>')
    assert {".prf-proof", ".admonition.technical", ".second-reading", ".tag_second-reading"} <= set(FIRST_HIDES)
    assert first_reading_words(page) == 2


def first_part(toc: dict) -> list[str]:
    """The root and the chapters of the parts named in FIRST_PART, as docnames."""
    return [Path(toc["root"]).with_suffix("").as_posix()] + [
        Path(c["file"]).with_suffix("").as_posix() for part in toc["parts"] if part.get("caption") in FIRST_PART
        for c in part["chapters"]]


@pytest.mark.build
def test_a_first_reading_of_the_first_part_is_short():
    """Students who took the book as a first one found its first chapters long even in a first reading:
    each page of the first part shows at most PAGE_MOST words of prose, the part at most PART_MOST, and
    every later content chapter at most LATER_MOST."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf8"))
    first = first_part(toc)
    words = {doc: first_reading_words((paths.HTML / f"{doc}.html").read_text(encoding="utf8"))
             for doc in first + [f"book/{stem}" for stem in CHAPTERS[1:]]}
    assert len(first) == 10 and all(words[doc] > 300 for doc in words), words
    assert {doc: n for doc, n in words.items() if doc in first and n > PAGE_MOST} == {}
    assert sum(words[doc] for doc in first) <= PART_MOST, {doc: words[doc] for doc in first}
    assert {doc: n for doc, n in words.items() if doc not in first and n > LATER_MOST} == {}
