"""The explorable figures in Chromium: driven to states the test chooses, their numbers against the package.

Each explorable (book/_ext/explorables.py, book/_ext/static/explore*.js) is opened in the built book,
moved (a drag, arrow keys, a slider set), and every number it shows (its ``data-value``) is compared
with what the package computes for the same state: to 1e-9 where the page computes in JavaScript,
exactly where it shows states the package computed at build time. The shared module's functions are
compared with the package's on random inputs. On every load: no console error, no request leaving the
machine; the explorables fit the window and the text column at 1280 px and 390 px (nothing of theirs
reaches out of the column or needs a horizontal scrollbar), in light and dark mode, and the printed
page keeps the static figure and drops the explorable. The settings the explorables offer (the sliders'
values, the seeds) are imported from ``attention_graph.explorables``, never retyped.

The tests not marked ``browser`` need no build: each state the package builds matches its declared
schema (``explorables.SCHEMAS``), a state that breaks the schema is refused with the key named, and the
JSON script carries the state exactly and the schema beside it.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections import Counter
from urllib.parse import urlsplit

import numpy as np
import pytest

import booktools as bt
from attention_graph import blockwise, graph, karate, scaled_scores, softmax_with_temperature
from attention_graph import explorables as ex
from attention_graph import patterns as pt
from attention_graph import worked_example as we
from attention_graph.attention import AttentionGraph, attention
from attention_graph.softmax import raw_score_row, softmax
from visits import script

browser = pytest.mark.browser

TOL = 1e-9
PAGES = {"worked": "book/worked_example.html", "softmax": "book/softmax.html",
         "fixed": "book/graph.html", "online": "book/blockwise.html", "patterns": "book/patterns.html",
         "karate": "book/karate.html"}
WINDOWS = [(1280, "light"), (1280, "dark"), (390, "light"), (390, "dark")]


class Opened:
    """A page of the book with one explorable ready; records console errors and offsite requests."""

    def __init__(self, browser, site, name, width=1280, scheme="light"):
        self.context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
        self.page = self.context.new_page()
        self.errors, self.offsite = [], []
        origin = urlsplit(site).netloc
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.offsite.append(r.url)
                     if urlsplit(r.url).scheme not in {"data", "blob"} and urlsplit(r.url).netloc != origin
                     else None)
        self.page.goto(site + PAGES[name], wait_until="load")
        if scheme == "dark":
            self.page.evaluate(script("dark.js"))
        self.root = f'div.explorable[data-explorable="{name}"]'
        try:
            self.page.wait_for_selector(f"{self.root}[data-ready]", state="attached", timeout=30_000)
        except Exception as err:
            why = self.page.get_attribute(self.root, "data-error")
            raise AssertionError(f"{name}: not ready (data-error: {why}; errors: {self.errors})") from err

    def values(self, selector):
        """The data-value of every element matching ``selector`` inside the explorable, as floats."""
        return np.array(self.page.eval_on_selector_all(
            f"{self.root} {selector}", "els => els.map(e => e.dataset.value)"), dtype=float)

    def matrix(self, name, rows, cols):
        return self.values(f'table[data-matrix="{name}"] td').reshape(rows, cols)

    def close(self):
        self.context.close()
        assert self.errors == [], self.errors
        assert self.offsite == [], self.offsite


@pytest.fixture
def opened(browser, site):
    pages = []

    def open_(name, width=1280, scheme="light"):
        pages.append(Opened(browser, site, name, width, scheme))
        return pages[-1]

    yield open_
    for p in pages:
        p.close()


def close(a, b, tol=TOL):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    assert a.shape == b.shape, (a.shape, b.shape)
    assert np.max(np.abs(a - b), initial=0.0) <= tol, np.max(np.abs(a - b))


# --------------------------------------------------------------------------------------------------
# The shared module, against the package
# --------------------------------------------------------------------------------------------------

@browser
def test_the_shared_module_computes_what_the_package_computes(opened):
    page = opened("worked").page
    rng = np.random.default_rng(27)
    Q, K, V = rng.normal(size=(5, 3)), rng.normal(size=(7, 3)), rng.normal(size=(7, 2))  # (5, 3), (7, 3), (7, 2)
    S = scaled_scores(Q, K)  # (5, 7)
    js = page.evaluate("([Q, K, V]) => { const AE = window.AttentionExplore; const S = AE.scaledScores(Q, K);"
                       " return {S, W: AE.softmax(S), W2: AE.softmax(S, 0.3), Y: AE.matmul(AE.softmax(S), V)}; }",
                       [Q.tolist(), K.tolist(), V.tolist()])
    close(js["S"], S)
    close(js["W"], softmax(S))
    close(js["W2"], softmax_with_temperature(S, 0.3))
    close(js["Y"], attention(Q, K, V)[0])
    masked = page.evaluate("s => window.AttentionExplore.softmaxRow(s.map(x => x === null ? -Infinity : x))",
                           [1.0, None, 3.0])
    close(masked, softmax([[1.0, -np.inf, 3.0]])[0])

    W = rng.random((6, 6)) * (rng.random((6, 6)) < 0.6) + np.eye(6) * 0.1  # (6, 6)
    W /= W.sum(axis=1, keepdims=True)
    close(page.evaluate("W => window.AttentionExplore.outStrength(W)", W.tolist()),
          AttentionGraph(W, [str(k) for k in range(1, 7)]).out_strength())
    close(page.evaluate("W => W.map(window.AttentionExplore.entropy)", W.tolist()), we.row_entropy(W))
    typeset = "t => window.AttentionExplore.typeset(document.createElement('span'), t).innerHTML"
    assert (page.evaluate(typeset, "*v*_j to *i*: Σ_j W_ij")
            == "<i>v</i><sub>j</sub> to <i>i</i>: Σ<sub>j</sub> W<sub>ij</sub>")

    q = rng.normal(size=3)  # (3,)
    for b_size in (1, 3, 7, 10):
        js_trace = page.evaluate("([q, K, V, b]) => window.AttentionExplore.onlineTrace(q, K, V, b)",
                                 [q.tolist(), K.tolist(), V.tolist(), b_size])
        py_trace = blockwise.online_trace(q, K, V, block_size=b_size)
        assert [s["keys"] for s in js_trace] == [s["keys"] for s in py_trace]
        for js_s, py_s in zip(js_trace, py_trace):
            close([js_s["m"], js_s["ell"], *js_s["o"]], [py_s["m"], py_s["ell"], *py_s["o"]])
    a = blockwise.block_state(scaled_scores(q[None], K[:3]), V[:3])
    c = blockwise.block_state(scaled_scores(q[None], K[3:]), V[3:])
    merged = blockwise.merge(a, c)
    js_m = page.evaluate("([a, c]) => window.AttentionExplore.merge(a, c)",
                         [{"m": float(s.m[0, 0]), "ell": float(s.ell[0, 0]), "o": s.o[0].tolist()} for s in (a, c)])
    close([js_m["m"], js_m["ell"], *js_m["o"]], [merged.m[0, 0], merged.ell[0, 0], *merged.o[0]])


@browser
def test_every_slider_says_the_value_it_shows(opened):
    """A screen reader hears what a slider's output shows, not the input's raw value (log τ from -1
    to 1, an index into t's values): after a keyboard step every range input of every explorable has
    an aria-valuetext equal to its output's text, or "symbol = " and the text, the symbol the last
    word of its label."""
    seen = 0
    for name in PAGES:
        o = opened(name)
        sliders = o.page.locator(f'{o.root} input[type="range"]')
        for k in range(sliders.count()):
            slider = sliders.nth(k)
            before = slider.input_value()
            slider.focus()
            o.page.keyboard.press("ArrowRight")
            if slider.input_value() == before:  # at its end: the other way
                o.page.keyboard.press("ArrowLeft")
            assert slider.input_value() != before, (name, k)
            said = slider.get_attribute("aria-valuetext")
            sid = slider.get_attribute("id")
            shown = o.page.text_content(f'{o.root} output[for="{sid}"]')
            symbol = o.page.text_content(f'{o.root} label[for="{sid}"]').split()[-1]
            assert shown and said in {shown, f"{symbol} = {shown}"}, (name, k, said, shown)
            seen += 1
    assert seen >= 6  # τ and d, t, the block size, n and w, the seed


@browser
def test_the_module_does_nothing_on_a_page_without_explorables(browser, site):
    context = browser.new_context()
    page = context.new_page()
    errors = []
    page.on("console", lambda m: errors.append(m.text) if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(site + "book/notation.html", wait_until="load")
    assert page.evaluate("() => typeof window.AttentionExplore.register") == "function"
    assert page.locator("div.explorable").count() == 0 and page.locator(".ae-body").count() == 0
    context.close()
    assert errors == []


# --------------------------------------------------------------------------------------------------
# 1. The worked example
# --------------------------------------------------------------------------------------------------

EDGES_JS = "els => els.map(e => [+e.dataset.i, +e.dataset.j, +e.dataset.weight])"


def worked_numbers(o: Opened):
    X = np.array(o.page.eval_on_selector_all(f"{o.root} .ae-point", "els => els.map(e => [e.dataset.x, e.dataset.y])"),
                 dtype=float)  # (4, 2)
    return X, {"S": o.matrix("S", 4, 4), "W": o.matrix("W", 4, 4), "Y": o.matrix("Y", 4, 2),
               "s_out": o.matrix("paid", 4, 1)[:, 0], "X": o.matrix("X", 4, 2),
               "edges": o.page.eval_on_selector_all(f"{o.root} .ae-edge", EDGES_JS)}


def check_worked(X, shown):
    Y, g = we.attention_layer(X)
    close(shown["X"], X, 0)
    close(shown["S"], scaled_scores(X, X))
    close(shown["W"], g.W)
    close(shown["Y"], Y)
    close(shown["s_out"], g.W.sum(axis=0))  # each column's sum, by hand
    assert len(shown["edges"]) == 16
    for i, j, w in shown["edges"]:
        assert abs(w - g.W[i, j]) <= TOL


def drag_to(o: Opened, person: int, x: float, y: float, handle: str = "circle:not(.ae-hit)"):
    """Drag a person's point to the plane position (x, y), through the SVG's own transform, starting
    the drag on ``handle``, a part of the point (its drawn circle, or its name: ``"text"``)."""
    point = o.page.locator(f'{o.root} .ae-point[data-person="{person}"] {handle}')
    point.scroll_into_view_if_needed()
    box = point.bounding_box()
    target = o.page.evaluate(script("plane_point.js"), [o.root, x, y])
    o.page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    o.page.mouse.down()
    o.page.mouse.move(*target, steps=6)
    o.page.mouse.up()


TICKS_JS = """els => els.map(e => [e.dataset.axis, +e.dataset.tick, e.textContent,
                                   +e.getAttribute(e.dataset.axis === 'first' ? 'x' : 'y')])"""
LINES_JS = """els => els.map(e => [+e.getAttribute('x1'), +e.getAttribute('x2'), +e.getAttribute('y1')])"""


def plane_ticks(o: Opened) -> dict[str, list[int]]:
    """The plane's axis numbers, by axis; each says its value (true minus sign) at its grid line."""
    ticks = o.page.eval_on_selector_all(f"{o.root} svg.ae-plane text.ae-tick", TICKS_JS)
    lines = o.page.eval_on_selector_all(f"{o.root} svg.ae-plane line.ae-grid, {o.root} svg.ae-plane line.ae-axis",
                                        LINES_JS)
    at = {"first": sorted(x1 for x1, x2, _ in lines if x1 == x2),  # the vertical lines, left to right
          "second": sorted((y1 for x1, x2, y1 in lines if x1 != x2), reverse=True)}  # horizontal, bottom up
    found = {"first": [], "second": []}
    for axis, k, text, pos in ticks:
        assert text == str(k).replace("-", "\u2212"), (axis, k, text)
        line = at[axis][k + 2]  # the grid lines run over -2..2
        assert pos - line == (0 if axis == "first" else 4), (axis, k, pos, line)  # a label's baseline: 4 below its line
        found[axis].append(k)
    return {axis: sorted(ks) for axis, ks in found.items()}


@browser
@pytest.mark.parametrize("width,scheme", [(1280, "light"), (390, "dark")])
def test_worked_example_drag_and_keys(opened, width, scheme):
    o = opened("worked", width, scheme)
    X, shown = worked_numbers(o)
    close(X, we.embeddings(), 0)  # it starts at the book's vectors
    assert plane_ticks(o) == {"first": [-2, -1, 0, 1, 2], "second": [-2, -1, 1, 2]}
    check_worked(X, shown)

    drag_to(o, we.index("Carla"), 1.5, -0.5)
    X, shown = worked_numbers(o)
    assert abs(X[0, 0] - 1.5) <= 0.05 and abs(X[0, 1] + 0.5) <= 0.05, X[0]
    close(X[1:], we.embeddings()[1:], 0)
    check_worked(X, shown)

    diego = we.index("Diego")  # a drag that starts on the name moves the point too
    drag_to(o, diego, -1.0, 1.5, handle="text")
    X, shown = worked_numbers(o)
    assert abs(X[diego, 0] + 1.0) <= 0.05 and abs(X[diego, 1] - 1.5) <= 0.05, X[diego]
    check_worked(X, shown)
    hit = o.page.eval_on_selector_all(f"{o.root} .ae-point circle.ae-hit",
                                      "els => els.map(e => e.getBoundingClientRect().width / 2)")
    assert len(hit) == 4 and min(hit) >= (20 if width < 600 else 24), hit  # a fingertip's radius, as shown

    ana = o.page.locator(f'{o.root} .ae-point[data-person="{we.index("Ana")}"]')
    ana.focus()
    for key in ["ArrowRight"] * 3 + ["ArrowUp"] * 2 + ["Shift+ArrowLeft"]:
        o.page.keyboard.press(key)
    X, shown = worked_numbers(o)
    close(X[1], [1.29, 0.2], 1e-12)
    check_worked(X, shown)

    o.page.locator(f"{o.root} button").click()
    X, shown = worked_numbers(o)
    close(X, we.embeddings(), 0)


@browser
def test_worked_example_says_what_its_column_sums_are(opened):
    """The table of column sums is defined where it is shown, in plain words (the attention j is paid,
    the arrows drawn from j), with a link to the chapter that comes back to it, graph_tools.md."""
    o = opened("worked", 390)
    note = o.page.locator(f'{o.root} [data-note="paid"]')
    assert note.is_visible()
    text = note.inner_text()
    assert text.startswith("The attention paid to a person j is the sum of column j of W: how much attention j "
                           "is paid by everybody, j included."), text
    assert "the arrows drawn from j, the arrows that carry j's value" in text, text
    assert "PageRank" not in o.page.locator(o.root).inner_text()  # taught five chapters later
    assert note.locator("a").get_attribute("href") == "graph_tools.html#who-is-attended-the-strengths"
    source = " ".join((bt.ROOT / "book" / "graph_tools.md").read_text().split())  # the chapter the link opens
    assert "## Who is attended: the strengths" in source
    assert "the arrows leaving $j$, i.e. the attention the queries pay to $j$" in source


NAMES_JS = """els => els.map(e => { const r = e.getBoundingClientRect();
    return [r.left, r.top, r.right, r.bottom, parseFloat(getComputedStyle(e).fontSize) * e.getScreenCTM().a]; })"""


def disjoint(a, b) -> bool:
    return min(a[2], b[2]) - max(a[0], b[0]) <= 0 or min(a[3], b[3]) - max(a[1], b[1]) <= 0


@browser
@pytest.mark.parametrize("width", [1280, 390])
def test_worked_names_stay_apart_when_two_people_meet(opened, width):
    """Dragged next to each other (or onto each other), two people's names do not overlap each other nor
    another person's circle, and stay 9 px or more as shown; the plane takes the column on a phone."""
    o = opened("worked", width)
    X = we.embeddings()
    carla, bruno = we.index("Carla"), we.index("Bruno")
    names = f"{o.root} .ae-point text"
    circles = f"{o.root} .ae-point circle:not(.ae-hit)"
    for dx, dy in [(0.15, 0.05), (0.0, 0.0), (-0.1, 0.1)]:
        o.page.locator(f"{o.root} button").click()  # from the book's vectors each time (Bruno's handle,
        drag_to(o, carla, X[bruno, 0] + dx, X[bruno, 1] + dy)  # drawn after Carla's, would take the next drag)
        shown = worked_numbers(o)[0]
        assert abs(shown[carla, 0] - X[bruno, 0] - dx) <= 0.05 and abs(shown[carla, 1] - X[bruno, 1] - dy) <= 0.05
        boxes = o.page.eval_on_selector_all(names, NAMES_JS)
        rings = o.page.eval_on_selector_all(circles, NAMES_JS)
        for i, a in enumerate(boxes):
            assert a[4] >= 9, (width, a)
            for j, b in enumerate(boxes):
                assert j == i or disjoint(a, b), (dx, dy, we.PEOPLE[i], we.PEOPLE[j], a, b)
            for j, b in enumerate(rings):
                assert j == i or disjoint(a, b), (dx, dy, we.PEOPLE[i], "circle of", we.PEOPLE[j], a, b)
    if width == 390:  # the plane takes the explorable's width, the column's less the frame's 8 px
        plane = o.page.locator(f"{o.root} svg.ae-plane").bounding_box()["width"]
        column = o.page.locator(f"{o.root} .ae-body").bounding_box()["width"]
        assert plane >= column - 1 and plane >= 340, (plane, column)


# --------------------------------------------------------------------------------------------------
# 2. Softmax and scale
# --------------------------------------------------------------------------------------------------

def softmax_state(o: Opened):
    tau = o.values('[data-name="tau"]')[0]
    d = int(o.page.get_attribute(f"{o.root} .ae-body", "data-d"))
    scaled = o.page.get_attribute(f"{o.root} .ae-body", "data-scaled") == "true"
    return tau, d, scaled


def check_softmax(o: Opened, rows):
    tau, d, scaled = softmax_state(o)
    s = rows[d] / (np.sqrt(d) if scaled else 1.0)  # (n_k,)
    p = softmax_with_temperature(s[None, :], tau)  # (1, n_k)
    close(o.values(".ae-bar"), p[0])
    close(o.values('[data-name="max"]'), [p.max()])
    close(o.values('[data-name="entropy"]'), we.row_entropy(p))
    close(o.values('[data-name="uniform"]'), [math.log(p.shape[1])])
    return tau, d, scaled


@browser
def test_softmax_temperature_and_scale(opened):
    seed, d0, n_k, dims = ex.SOFTMAX_SEED, ex.SOFTMAX_D, ex.SOFTMAX_N_K, list(ex.SOFTMAX_DIMS)
    assert (int(bt.glued_float("softmax", "row_seed")), int(bt.glued_float("softmax", "row_d"))) == (seed, d0)
    rng = np.random.default_rng(seed)
    rows = {d: raw_score_row(d, n_k, rng) for d in dims}
    o = opened("softmax")
    assert check_softmax(o, rows) == (1.0, d0, True)  # the state of the static figure's right panel

    sliders = o.page.locator(f'{o.root} input[type="range"]')
    sliders.nth(0).focus()
    for _ in range(4):
        o.page.keyboard.press("ArrowRight")
    tau, d, scaled = check_softmax(o, rows)
    assert abs(tau - 10 ** 0.2) < 1e-12 and d == d0 and scaled

    sliders.nth(1).focus()
    o.page.keyboard.press("ArrowLeft")
    o.page.locator(f'{o.root} input[type="checkbox"]').press("Space")
    tau, d, scaled = check_softmax(o, rows)
    assert d == dims[dims.index(d0) - 1] and not scaled

    sliders.nth(0).fill("-1")
    sliders.nth(1).fill(str(len(dims) - 1))
    tau, d, scaled = check_softmax(o, rows)
    assert abs(tau - 0.1) < 1e-15 and d == dims[-1]


# --------------------------------------------------------------------------------------------------
# 3. From fixed to computed (package states, compared exactly)
# --------------------------------------------------------------------------------------------------

def check_fixed(o: Opened, t: float):
    X, A = we.embeddings(), we.path_adjacency()
    Y, g = graph.fixed_to_computed(X, A, t)
    assert float(o.page.get_attribute(f"{o.root} .ae-body", "data-t")) == t
    assert np.array_equal(o.matrix("W", 4, 4), g.W)
    assert np.array_equal(o.matrix("Y", 4, 2), Y)
    for i, j, w in o.page.eval_on_selector_all(f"{o.root} .ae-edge", EDGES_JS):
        assert w == g.W[i, j]
    models = graph.five_models(X, A, np.random.default_rng(int(bt.glued_float("graph", "gat_seed"))), we.PEOPLE)
    matches = []
    for name, (_, gm) in models.items():
        card = f'{o.root} .ae-model[data-model="{name}"]'
        shown = np.array(o.page.eval_on_selector_all(f"{card} td", "els => els.map(e => e.dataset.value)"),
                         dtype=float).reshape(4, 4)
        assert np.array_equal(shown, gm.W)
        gap = float(o.page.get_attribute(f'{card} [data-name="gap"]', "data-value"))
        assert gap == np.abs(g.W - gm.W).max()
        if o.page.get_attribute(card, "data-match") == "true":
            matches.append(name)
    return matches


@browser
def test_fixed_to_computed_slider(opened):
    o = opened("fixed")
    hint = " ".join(o.page.locator(f"{o.root} .ae-hint").all_inner_texts())
    assert "largest gap" in hint and "between 0 and 1, so a gap also lies between 0 and 1" in hint, hint
    assert "one too" not in hint and "_ij" not in hint, hint  # plain words, no raw subscript
    formula = o.page.locator(f'{o.root} [data-name="gap-formula"]')  # |W(t)_ij − W_ij|, typeset
    assert formula.inner_text() == "|W(t)ij \u2212 Wij|"
    assert formula.locator("sub").all_inner_texts() == ["ij", "ij"]
    assert formula.locator("i").all_inner_texts() == ["W", "t", "W"]
    legends = o.page.locator(f'{o.root} [data-key="names"]').all_inner_texts()  # initials said once per drawing
    people = " \u00b7 ".join(f"{name[0]} {name}" for name in we.PEOPLE)
    assert legends == [people, people], legends
    nodes = o.page.locator(f"{o.root} svg.ae-graph .ae-node text").all_text_contents()
    assert nodes == [name[0] for name in we.PEOPLE]
    assert o.page.locator(f'{o.root} table[data-matrix="W"] tbody th').all_inner_texts() == list(we.PEOPLE)
    assert check_fixed(o, 0.0) == ["mean"]  # it starts at the fixed graph
    slider = o.page.locator(f'{o.root} input[type="range"]')
    slider.fill(str(ex.FIXED_TS.index(1.0)))
    assert check_fixed(o, 1.0) == ["masked attention"]
    slider.focus()
    for _ in range(5):
        o.page.keyboard.press("ArrowRight")
    assert check_fixed(o, ex.FIXED_TS[ex.FIXED_TS.index(1.0) + 5]) == []
    o.page.keyboard.press("End")
    assert check_fixed(o, ex.FIXED_TS[-1]) == ["attention"]
    slider.fill("3")
    assert check_fixed(o, ex.FIXED_TS[3]) == []


SHOWN_CARDS_JS = "els => els.filter(e => getComputedStyle(e).display !== 'none').map(e => e.dataset.model)"


@browser
def test_fixed_on_a_phone_shows_one_model_the_slider_and_the_graph_together(opened):
    """At 390 px the explorable shows one model's card, the nearest to the slider's graph unless the
    reader picks another (five cards stacked made it 2,150 px tall; one made it about 1,380: the
    slider, the graph, W, Y and one card; about 1,620 since every output has its title, its axes'
    names and the names' legend, and the graph takes the column's width); the slider and the graph
    fit one screen; every card's numbers stay checked (check_fixed). Picked, "all, one under another"
    shows the five cards stacked, every one inside the column."""
    o = opened("fixed", 390)
    height = o.page.locator(o.root).bounding_box()["height"]
    assert height <= 1700, height
    cards = f"{o.root} .ae-model"
    assert o.page.eval_on_selector_all(cards, SHOWN_CARDS_JS) == ["mean"]
    slider = o.page.locator(f'{o.root} input[type="range"]')
    slider.fill(str(ex.FIXED_TS.index(1.0)))
    assert check_fixed(o, 1.0) == ["masked attention"]
    assert o.page.eval_on_selector_all(cards, SHOWN_CARDS_JS) == ["masked attention"]
    slider.fill("3")
    gaps = {m: float(o.page.get_attribute(f'{cards}[data-model="{m}"] [data-name="gap"]', "data-value"))
            for m in o.page.eval_on_selector_all(cards, "els => els.map(e => e.dataset.model)")}
    assert o.page.eval_on_selector_all(cards, SHOWN_CARDS_JS) == [min(gaps, key=gaps.get)]
    o.page.select_option(f'{o.root} select[data-name="model-pick"]', "GAT")
    assert o.page.eval_on_selector_all(cards, SHOWN_CARDS_JS) == ["GAT"]
    o.page.select_option(f'{o.root} select[data-name="model-pick"]', "*")  # all, one under another
    shown = o.page.eval_on_selector_all(cards, SHOWN_CARDS_JS)
    assert shown == o.page.eval_on_selector_all(cards, "els => els.map(e => e.dataset.model)") and len(shown) == 5
    assert o.page.evaluate(script("explorable_overflow.js"), o.root) == []  # every card in the column
    o.page.select_option(f'{o.root} select[data-name="model-pick"]', "GAT")
    box = lambda sel: o.page.locator(f"{o.root} {sel}").first.bounding_box()  # noqa: E731
    top, bottom = box("input[type='range']")["y"], box("svg.ae-graph")
    assert bottom["y"] + bottom["height"] - top <= 700, (top, bottom)  # the slider and the graph on one screen


@browser
def test_fixed_on_a_wide_screen_shows_every_model(opened):
    o = opened("fixed")
    assert len(o.page.eval_on_selector_all(f"{o.root} .ae-model", SHOWN_CARDS_JS)) == 5


# --------------------------------------------------------------------------------------------------
# 4. The online softmax
# --------------------------------------------------------------------------------------------------

def check_online(o: Opened, block_size: int, steps: int):
    X = we.embeddings()
    ana = we.index("Ana")
    trace = blockwise.online_trace(X[ana], X, X, block_size=block_size)[:steps]
    rows = o.page.locator(f"{o.root} tr[data-step]")
    assert rows.count() == steps
    for k, s in enumerate(trace):
        row = f'{o.root} tr[data-step="{k + 1}"]'
        shown = [float(o.page.get_attribute(f'{row} [data-name="{n}"]', "data-value"))
                 for n in ("m", "ell", "o0", "o1")]
        close(shown, [s["m"], s["ell"], *s["o"]])
    done = steps == len(blockwise.online_trace(X[ana], X, X, block_size=block_size))
    assert (o.page.locator(f'{o.root} [data-name="gap"]').count() == 1) == done
    if done:
        dense = we.attention_layer()[0][ana]  # (2,)
        assert np.array_equal(o.values('[data-name="dense0"]').tolist() + o.values('[data-name="dense1"]').tolist(),
                              dense)
        gap = o.values('[data-name="gap"]')[0]
        close([gap], [np.abs(np.array(trace[-1]["o"]) - dense).max()])
        assert gap <= 1e-15


@browser
def test_online_softmax_block_size_and_steps(opened):
    o = opened("online")
    assert ex.ONLINE_BLOCK_SIZE == 1
    check_online(o, 1, 0)  # it opens before the first step
    step = o.page.locator(f'{o.root} button[data-action="step"]')
    back = o.page.locator(f'{o.root} button[data-action="back"]')
    for _ in range(4):
        step.click()
    check_online(o, 1, 4)  # the static table's trace, complete
    back.click()
    back.click()
    check_online(o, 1, 2)
    step.click()
    check_online(o, 1, 3)
    slider = o.page.locator(f'{o.root} input[type="range"]')
    slider.focus()
    o.page.keyboard.press("ArrowRight")
    check_online(o, 2, 0)  # a new block size starts over: it never jumps to the end
    step.click()
    step.click()
    check_online(o, 2, 2)
    o.page.locator(f'{o.root} button[data-action="reset"]').click()
    check_online(o, 2, 0)
    step.focus()
    o.page.keyboard.press("Enter")
    check_online(o, 2, 1)
    slider.fill("3")
    check_online(o, 3, 0)


# --------------------------------------------------------------------------------------------------
# 5. The patterns' edges and diameters (package states, compared exactly)
# --------------------------------------------------------------------------------------------------

def check_patterns(o: Opened, n: int, k: int):
    body = f"{o.root} .ae-body"
    assert (int(o.page.get_attribute(body, "data-n")), int(o.page.get_attribute(body, "data-k"))) == (n, k)
    shown = o.page.eval_on_selector_all(f"{o.root} .ae-model[data-pattern]",
                                        "els => els.map(e => [+e.dataset.edges, +e.dataset.maxPath])")
    glued = {key: int(bt.glued_float("patterns", key)) for key in ("n_global", "n_random")}
    want = [[len(E), pt.max_path_length(E, n)]
            for E in pt.named_patterns(n, k, glued["n_global"], glued["n_random"], seed=0).values()]
    assert shown == want


@browser
def test_patterns_sliders(opened):
    o = opened("patterns")
    ns, ws = ex.PATTERN_NS, ex.PATTERN_WS
    n, w = int(bt.glued_float("patterns", "n_fig")), int(bt.glued_float("patterns", "k_window"))
    check_patterns(o, n, w)
    sliders = o.page.locator(f'{o.root} input[type="range"]')
    sliders.nth(0).focus()
    o.page.keyboard.press("ArrowRight")
    check_patterns(o, ns[ns.index(n) + 1], w)
    sliders.nth(1).focus()
    o.page.keyboard.press("ArrowLeft")
    check_patterns(o, ns[ns.index(n) + 1], ws[ws.index(w) - 1])
    sliders.nth(0).fill("0")
    sliders.nth(1).fill(str(len(ws) - 1))
    check_patterns(o, ns[0], ws[-1])


# --------------------------------------------------------------------------------------------------
# 5. The karate club, one seed at a time (package states, compared exactly)
# --------------------------------------------------------------------------------------------------

def check_karate(o: Opened, seed: int):
    assert int(o.page.get_attribute(f"{o.root} .ae-body", "data-seed")) == seed
    run = karate.club_run(seed)
    A, club, _ = karate.club_graph()
    assert o.values('[data-name="ari"]')[0] == run["ari"]
    A_s = (run["graph"].W + run["graph"].W.T) / 2  # (n, n)
    for i, j, w in o.page.eval_on_selector_all(f"{o.root} .ae-friend", EDGES_JS):
        assert A[i, j] > 0 and w == A_s[i, j]
    f = run["found"]
    wrong = np.flatnonzero(f != club) if f[0] == club[0] else np.flatnonzero(f == club)
    shown = o.page.get_attribute(f"{o.root} svg.ae-club", "data-wrong")
    assert shown == ",".join(str(int(i)) for i in wrong)
    assert o.page.locator(f"{o.root} .ae-wrong:visible").count() == len(wrong)
    # The line under the slider: how many seeds give this split, and who sits otherwise than in the
    # most common split, from the package's state (a split is its set of misplaced members).
    splits = karate_splits()
    this = splits[ex.KARATE_SEEDS.index(seed)]
    counts = Counter(splits)
    common = counts.most_common(1)[0][0]
    labels = karate_state()["labels"]
    moved = [labels[i] for i in range(len(labels)) if (i in this) != (i in common)]
    note = o.page.locator(f'{o.root} [data-note="agreement"]')
    assert note.is_visible()
    assert int(note.get_attribute("data-same")) == counts[this]
    assert note.get_attribute("data-moved") == ",".join(moved)
    text = note.inner_text()
    said = (f"{counts[this]} of {len(splits)} seeds give this same split." if counts[this] > 1
            else f"No other of the {len(splits)} seeds gives this split.")
    assert text.startswith(said), text
    assert all(name in text for name in moved), text
    return counts[this], moved


@browser
def test_karate_seed_slider(opened):
    o = opened("karate")
    seeds, start = ex.KARATE_SEEDS, int(bt.glued_float("karate", "seed"))
    check_karate(o, start)
    slider = o.page.locator(f'{o.root} input[type="range"]')
    slider.focus()
    o.page.keyboard.press("ArrowRight")
    check_karate(o, seeds[seeds.index(start) + 1])
    slider.fill("7")
    check_karate(o, seeds[7])
    # Every seed: the counts shown are the package's, and a seed of the most common split names nobody.
    shown = {}
    for k, seed in enumerate(seeds):
        slider.fill(str(k))
        shown[seed] = check_karate(o, seed)
    most = max(count for count, _ in shown.values())
    assert all((count == most) == (moved == []) for count, moved in shown.values()), shown


# --------------------------------------------------------------------------------------------------
# Every explorable: keyboard, labels, width, light and dark, print
# --------------------------------------------------------------------------------------------------

def window(o: Opened) -> dict:
    """What the explorable shows in this window: its box, the page's width, its contrast, any error."""
    return {"box": o.page.locator(o.root).bounding_box(),
            "page_width": o.page.evaluate("() => document.documentElement.scrollWidth"),
            "contrast": o.page.evaluate(script("explorable_contrast.js"), o.root),
            "outputs": o.page.evaluate(script("explorable_outputs.js"), o.root),
            "error": o.page.get_attribute(o.root, "data-error"),
            "overflow": o.page.evaluate(script("explorable_overflow.js"), o.root)}


def tab_through(o: Opened) -> dict:
    """Its controls, and whether Tab, pressed once per control from the first, stays inside it."""
    controls = o.page.evaluate(script("controls.js"), o.root)
    o.page.evaluate("root => document.querySelector(root).querySelector('input, button, [tabindex]').focus()", o.root)
    reached = []
    for _ in range(len(controls)):
        reached.append(o.page.evaluate("root => document.querySelector(root).contains(document.activeElement)",
                                       o.root))
        o.page.keyboard.press("Tab")
    return {"controls": controls, "reached": reached}


def printed(o: Opened) -> dict:
    """Printed: is the explorable hidden, and the static figure (or trace table) just before it shown?"""
    o.page.emulate_media(media="print")
    return {"display": o.page.evaluate("root => getComputedStyle(document.querySelector(root)).display", o.root),
            "figure_shown": o.page.evaluate(script("static_figure.js"), o.root)}


@pytest.fixture(scope="module")
def windows(browser, site) -> dict:
    """Each explorable's page opened once per width: read in light mode, then in dark (the theme
    switched as the theme's button does); at 1280 px also its controls (after the light reading) and,
    last, the page printed. {(name, width, scheme): window, (name, "tab"): ..., (name, "print"): ...}."""
    seen = {}
    for name in sorted(PAGES):
        for width in (1280, 390):
            o = Opened(browser, site, name, width)
            seen[(name, width, "light")] = window(o)
            if width == 1280:
                seen[(name, "tab")] = tab_through(o)
            o.page.evaluate(script("dark.js"))
            seen[(name, width, "dark")] = window(o)
            if width == 1280:
                seen[(name, "print")] = printed(o)
            o.close()
    return seen


@browser
@pytest.mark.parametrize("name", sorted(PAGES))
def test_every_control_is_labelled_and_reached_by_tab(windows, name):
    controls, reached = windows[(name, "tab")]["controls"], windows[(name, "tab")]["reached"]
    assert controls and all(c["tabindex"] >= 0 and c["label"] for c in controls), controls
    assert all(reached), reached


@browser
@pytest.mark.parametrize("width,scheme", WINDOWS)
@pytest.mark.parametrize("name", sorted(PAGES))
def test_explorables_fit_and_read_in_every_window(windows, name, width, scheme):
    got = windows[(name, width, scheme)]
    box = got["box"]
    assert box["width"] > 0 and box["height"] > 0
    assert box["x"] >= 0 and box["x"] + box["width"] <= width + 0.5, box
    assert got["page_width"] <= width
    assert got["contrast"]["text"] >= 4.5 and got["contrast"]["svg"] >= 4.5, got["contrast"]
    assert got["error"] is None
    assert got["overflow"] == [], got["overflow"]  # nothing reaches out of the text column, nothing scrolls


# The drawings whose two axes carry a meaning, and the names their axes carry (data-axis).
AXES = {"ae-plane": ["first coordinate \u2192", "second coordinate \u2192"], "ae-bars": ["weight", "key"],
        "ae-mask": ["key j \u2192", "\u2190 query i"]}


@browser
@pytest.mark.parametrize("width,scheme", WINDOWS)
@pytest.mark.parametrize("name", sorted(PAGES))
def test_every_output_has_a_title_and_named_axes(windows, name, width, scheme):
    """Every table says what it is (its caption) and what its rows and columns are; every drawing sits
    under a title, and a drawing with axes names them; no two texts of a drawing overlap; every text
    shows 9 px or more; on a phone the plane, the graph, the bars and the club take the explorable's width."""
    got = windows[(name, width, scheme)]["outputs"]
    assert got["tables"] or got["drawings"], got
    for table in got["tables"]:
        assert table["caption"] and table["row"] and table["col"], table
    for drawing in got["drawings"]:
        assert drawing["title"], drawing
        kind = drawing["cls"].split()[0]
        if kind in AXES:  # each axis named once (the bars' key axis also says the dashed line)
            axes = drawing["axes"]
            assert len(axes) == 2 and all(any(a.startswith(w) for a in axes) for w in AXES[kind]), drawing
        assert drawing["overlaps"] == 0, drawing
        if width == 390 and kind in {"ae-plane", "ae-graph", "ae-bars", "ae-club"}:
            assert drawing["width"] >= got["content"] - 1, (drawing, got["content"])
    assert got["smallest"] >= 9, (got["smallest"], got["smallestText"])
    assert got["raw"] == [], got["raw"]  # every subscript typeset (W_ij shows as W with ij below)


@browser
@pytest.mark.parametrize("name", sorted(PAGES))
def test_the_printed_page_keeps_the_static_figure(windows, name):
    assert windows[(name, "print")]["display"] == "none"
    assert windows[(name, "print")]["figure_shown"]


# --------------------------------------------------------------------------------------------------
# The states and their schemas (no build)
# --------------------------------------------------------------------------------------------------

@functools.cache
def karate_runs():
    return [karate.club_run(s) for s in ex.KARATE_SEEDS]


@functools.cache
def karate_state() -> dict:
    return ex.karate_state(karate_runs(), 0)


def karate_splits() -> list[tuple[int, ...]]:
    """Each seed's split, as the explorable reads it: its misplaced members, sorted."""
    return [tuple(sorted(s["wrong"])) for s in karate_state()["seeds"]]


def built_states() -> dict:
    """Each explorable's state as its page builds it (the pages' arguments: tests/test_<stem>.py check them)."""
    X, A = we.embeddings(), we.path_adjacency()
    models = graph.five_models(X, A, np.random.default_rng(2018), we.PEOPLE)
    return {"worked": ex.worked_state(), "softmax": ex.softmax_state(), "fixed": ex.fixed_state(X, A, models),
            "online": ex.online_state(), "patterns": ex.patterns_state(16, 2, 1, 2, 0),
            "karate": ex.karate_state(karate_runs(), 0)}


@pytest.fixture(scope="module")
def states() -> dict:
    return built_states()


def test_every_explorable_has_a_schema_a_script_and_a_page():
    import explorables as ext  # book/_ext/explorables.py: the scripts the book loads

    assert set(ex.SCHEMAS) == set(PAGES)
    assert {f"explore_{name}.js" for name in ex.SCHEMAS} | {"explore.js"} == set(ext.SCRIPTS)
    for name, page in PAGES.items():
        text = (bt.ROOT / page.replace(".html", ".md")).read_text()
        assert f":::{{explorable}} {name}\n" in text and f'explorables.explorable_data("{name}"' in text, name


@pytest.mark.parametrize("name", sorted(PAGES))
def test_each_state_matches_its_schema_and_its_script_names_it(states, name):
    assert ex.check_state(name, states[name]) is states[name]
    script = (bt.ROOT / "book/_ext/static" / f"explore_{name}.js").read_text()
    assert f'SCHEMAS["{name}"]' in script.split("*/", 1)[0]  # its first comment points to the schema
    read = set(re.findall(r"\bstate\.(\w+)", script))  # every key the JavaScript reads is declared
    assert read and read <= set(ex.SCHEMAS[name]), read - set(ex.SCHEMAS[name])


def test_the_states_carry_the_settings_the_explorables_offer(states):
    assert states["softmax"]["dims"] == list(ex.SOFTMAX_DIMS) and states["softmax"]["d"] == ex.SOFTMAX_D
    rng = np.random.default_rng(ex.SOFTMAX_SEED)
    for d, row in zip(ex.SOFTMAX_DIMS, states["softmax"]["rows"]):
        assert np.array_equal(row, raw_score_row(d, ex.SOFTMAX_N_K, rng))
    assert states["fixed"]["ts"] == list(ex.FIXED_TS) and states["fixed"]["start"] == 0.0
    assert states["online"]["block_size"] == ex.ONLINE_BLOCK_SIZE
    assert set(states["patterns"]["states"]) == {f"{n},{w}" for n in ex.PATTERN_NS for w in ex.PATTERN_WS}
    assert [s["seed"] for s in states["karate"]["seeds"]] == list(ex.KARATE_SEEDS)
    assert np.array_equal(states["worked"]["X"], we.embeddings())


def broken_states(states: dict) -> list[tuple[str, dict, str]]:
    """(name, a state that breaks its schema, the key the error must name): one of each kind of fault."""
    def changed(name, change):
        state = json.loads(json.dumps(states[name]))
        change(state)
        return state

    return [
        ("worked", changed("worked", lambda s: s.pop("layout")), "missing ['layout']"),
        ("worked", changed("worked", lambda s: s.update(extra=1)), "unknown ['extra']"),
        ("worked", changed("worked", lambda s: s["X"][2].append(0.5)), "worked.X[2] has length 3"),
        ("worked", changed("worked", lambda s: s["labels"].pop()), "worked.X has length 4; the schema wants n = 3"),
        ("softmax", changed("softmax", lambda s: s.update(d=64.5)), "softmax.d must be an int"),
        ("softmax", changed("softmax", lambda s: s["rows"][1].pop()), "softmax.rows[1] has length 15"),
        ("fixed", changed("fixed", lambda s: s["states"].pop()), "fixed.states has length 20"),
        ("fixed", changed("fixed", lambda s: s["models"]["GAT"][0].pop()), "fixed.models['GAT'][0] has length 3"),
        ("online", changed("online", lambda s: s.update(dense=[0.1, "x"])), "online.dense[1] must be a finite number"),
        ("patterns", changed("patterns", lambda s: s["states"]["4,1"]["causal"].update(edges=None)),
         "patterns.states['4,1']['causal'].edges must be an int"),
        ("karate", changed("karate", lambda s: s["seeds"][3]["mutual"].pop()), "karate.seeds[3].mutual has length"),
        ("karate", changed("karate", lambda s: s.update(friends=[[0, 1, 2]])), "karate.friends[0] has length 3"),
    ]


def test_a_state_that_breaks_its_schema_is_refused_with_the_key_named(states):
    assert "causal" in states["patterns"]["states"]["4,1"]  # the pattern the broken row edits
    for name, state, message in broken_states(states):
        with pytest.raises(ValueError, match=re.escape(message)):
            ex.check_state(name, state)
        with pytest.raises(ValueError, match=re.escape(message)):
            ex.explorable_data(name, state)


def test_the_script_carries_the_state_exactly_and_its_schema():
    state = ex.worked_state([[0.1, 1 / 3], [-2.5e-300, 1.0], [1.0, 1.0], [1.0, -1.0]])
    text = ex.explorable_data("worked", state)
    found = re.fullmatch(r'<script type="application/json" data-explorable-state="worked" '
                         r'data-explorable-schema="([^"]*)">(.*)</script>', text)
    assert json.loads(found.group(2)) == state
    import html
    assert json.loads(html.unescape(found.group(1))) == ex.SCHEMAS["worked"]
    hostile = ex.worked_state()
    hostile["labels"][0] = "</script><b>"
    assert "</" not in ex.explorable_data("worked", hostile)[:-len("</script>")]


# (function name, call, error type, message fragment); gathered by tests/test_validation.py
BAD = [
    ("explorable_data", lambda: ex.explorable_data("a b", {}), ValueError, "name must be letters"),
    ("explorable_data", lambda: ex.explorable_data("a", {}), ValueError, "name must be an explorable"),
    ("explorable_data", lambda: ex.explorable_data("worked", [1]), TypeError, "state must be a dict"),
    ("explorable_data", lambda: ex.explorable_data("online", {**ex.online_state(), "dense": [float("nan"), 0.0]}),
     ValueError, r"online.dense\[0\] must be a finite number"),
    ("check_state", lambda: ex.check_state("worked", {}), ValueError, "missing"),
    ("softmax_state", lambda: ex.softmax_state(d=5), ValueError, "d must be one of dims"),
    ("patterns_state", lambda: ex.patterns_state(5, 2, 1, 2, 0), ValueError, "n and w must be among"),
    ("fixed_state", lambda: ex.fixed_state(we.embeddings(), we.path_adjacency(), {}), ValueError, "models must be"),
    ("karate_state", lambda: ex.karate_state([], 0), ValueError, "runs must be one club_run per seed"),
    ("online_state", lambda: ex.online_state("Eve"), ValueError, "Eve"),
    ("worked_state", lambda: ex.worked_state([[0.0, float("inf")]] * 4), ValueError, "finite number"),
]


# --------------------------------------------------------------------------------------------------
# The same schema in the browser; the key to the arrows
# --------------------------------------------------------------------------------------------------

CHECK_JS = """([name, state, schema]) => { try { window.AttentionExplore.checkState(name, state, schema); return null; }
                                         catch (err) { return err.message; } }"""


@browser
def test_explore_js_checks_the_same_schema(opened):
    page = opened("worked").page
    states = built_states()
    for name, state in states.items():
        assert page.evaluate(CHECK_JS, [name, state, ex.SCHEMAS[name]]) is None, name
    for name, state, message in broken_states(states):
        got = page.evaluate(CHECK_JS, [name, state, ex.SCHEMAS[name]])
        assert got is not None and message.split(" [")[0].split(" ['")[0] in got, (name, message, got)


@browser
def test_a_state_that_breaks_its_schema_stops_the_explorable_with_the_key_named(browser, site):
    context = browser.new_context()
    page = context.new_page()
    errors = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(site + PAGES["worked"], wait_until="load")
    state = ex.worked_state()
    state["X"] = state["X"][:3]
    script = ex.explorable_data("worked", ex.worked_state()).replace(json.dumps(ex.worked_state()), json.dumps(state))
    error = page.evaluate("""html => { const div = document.createElement("div");
        div.className = "explorable"; div.dataset.explorable = "worked"; div.hidden = true; div.innerHTML = html;
        document.body.appendChild(div); window.AttentionExplore.start();
        return [div.dataset.error, div.dataset.ready, div.hidden, div.querySelectorAll(".ae-body").length]; }""",
                          script)
    context.close()
    assert error[0] == "worked.X has length 3; the schema wants n = 4", error
    assert error[1:] == [None, True, 0]
    assert any("worked.X has length 3" in e for e in errors), errors


KEY_JS = ("els => els.map(e => [e.dataset.key, e.textContent.replace(/\\s+/g, ' ').trim(), "
          "e.closest('.ae-graph-box') !== null])")


@browser
@pytest.mark.parametrize("name", ["worked", "fixed", "karate"])
def test_every_drawing_of_edges_has_the_key_to_its_arrows(opened, name):
    o = opened(name)
    keys = o.page.eval_on_selector_all(f"{o.root} .ae-key", KEY_JS)
    if name == "karate":  # mutual attention: an undirected edge, said so
        assert keys == [["undirected", "An edge per friendship, as wide as the mutual attention (Wij + Wji)/2 of "
                         "the pair: it has no direction, so no arrow.", False]]
    else:
        assert keys == [["direction", "jWijivj flows from j to i, with weight Wij", True]]  # j, W_ij on →, i
        assert o.page.locator(f"{o.root} .ae-graph-box svg.ae-graph").count() == 1
