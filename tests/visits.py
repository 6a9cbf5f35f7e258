"""Every page of the build opened once in Chromium (at 1280 px, and once per mode on a phone), and what the
browser tests check read from those loads.

:class:`Visits` (the session fixture ``visit`` of ``conftest.py``) opens a page the first time a test
asks for it, in one tab for the whole session, and keeps what it read (a :class:`Visit`): the page's
facts once MathJax has typeset it (``js/collect.js``), its layout (``js/layout.js``), a
screenshot of the whole page (in the folder it is given: pytest's temporary area, or
``--screenshots DIR``), the collapsed solutions opened (``js/solutions.js``), the contrast of
what it draws in light and in dark mode (``js/contrast.js``, ``js/dark.js``), its layout again in
dark mode and a screenshot of its first screen in dark mode; also where its chapter summary sits
(``js/summary_layout.js``, light, before the solutions open) and the first-visit offer of a first
reading (``js/offer.js``, light and dark: the tab never chooses, so every page shows it).

:class:`PhoneVisits` (the session fixture ``phone``) opens a page on a 390 px phone once per mode
("light", "dark", asked for as a reader's stored choice) and reads, from that one load, what
``tests/test_layout.py`` (``js/layout.js``), ``tests/test_figures.py`` (``js/figure_fit.js``) and
``tests/test_first_reading.py`` (``js/summary_layout.js``, ``js/offer.js``: the first-visit offer,
shown since these tabs never choose) check: one load serves them all.

The checks read what a page shows once it has settled: its CSS transitions and animations are
switched off (``js/still.css``), so the solutions open and the dark theme applies at once.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import browsertools as bw
import buildpaths as paths

JS = Path(__file__).with_name("js")


def script(name: str) -> str:
    """The JavaScript (or CSS) of ``tests/js/<name>``, its leading comment left out; a line
    ``@include other.js`` stands for that file's code (the helpers several scripts share)."""
    lines = (JS / name).read_text(encoding="utf8").splitlines()
    return "\n".join(script(line.split()[1]) if line.strip().startswith("@include ") else line
                     for line in lines if not line.startswith(("//", "/*")))


REFRESH = re.compile(r'<meta http-equiv="refresh" content="\d+;\s*url=([^"]+)"', re.I)
# Raw TeX that MathJax should have consumed: its delimiters, and the commands the book writes.
RAW_TEX = re.compile(r"\\\(|\\\)|\\\[|\\\]|\$\$|\\begin\{|\\end\{|\\(?:frac|sqrt|top|sum|prod|mathbb|"
                     r"mathbf|mathrm|operatorname|left|right|cdot|exp|log|text|displaystyle|label|"
                     r"alpha|beta|mathcal|in|le|ge|quad|partial|nabla|infty)\b")


@dataclass
class Visit:
    page: str
    url: str  # where the browser ended up (a redirect page lands elsewhere)
    mathjax: str | None  # MathJax's version, None when the page did not load it
    data: dict  # js/collect.js
    offsite: list[str]  # requests to anywhere but the local server
    errors: list[str]  # console errors, uncaught exceptions, failed requests, HTTP errors
    screenshot: Path  # the whole page
    solutions: list[dict]  # every collapsed solution, after opening it
    contrast: dict[str, list[dict]]  # "light" and "dark": contrast of each equation, figure, table
    dark_screenshot: Path  # the first screen (bw.VIEWPORT), in dark mode
    layout: tuple[dict, dict]  # js/layout.js: light as loaded; dark, the solutions open
    summary: dict  # js/summary_layout.js: light as loaded
    offer: dict  # js/offer.js, "light" as loaded and "dark": the first-visit offer (this tab never chooses)


def _favicon_probe(url: str) -> bool:
    """The browser's own request for /favicon.ico, made for a page that names no icon (Jupyter Book's
    redirect stub ``index.html``); the book's pages name theirs."""
    return urlsplit(url).path == "/favicon.ico"


def open_page(tab, site: str, rel: str, html: Path, shots: Path) -> Visit:
    """Load ``rel`` of the site served at ``site`` (from ``html``) in ``tab`` and read everything."""
    origin = urlsplit(site).netloc
    offsite: list[str] = []
    errors: list[str] = []
    # No request is intercepted (that would turn the browser's cache off): the browser resolves no
    # host name but 127.0.0.1 (bw.CHROMIUM_ARGS), and every request is recorded.
    listeners = {
        "request": lambda r: offsite.append(r.url) if urlsplit(r.url).scheme not in {"data", "blob"}
        and urlsplit(r.url).netloc != origin else None,
        "console": lambda m: errors.append(f"console error: {m.text} at {m.location.get('url')}")
        if m.type == "error" and not _favicon_probe(m.location.get("url", "")) else None,
        "pageerror": lambda e: errors.append(f"uncaught exception: {e}"),
        "requestfailed": lambda r: None if r.url in offsite else
        errors.append(f"request failed: {r.url} ({r.failure})"),
        "response": lambda r: errors.append(f"HTTP {r.status}: {r.url}")
        if r.status >= 400 and not _favicon_probe(r.url) else None,
    }
    for event, listener in listeners.items():
        tab.on(event, listener)
    try:
        tab.goto(site + rel, wait_until="load")
        redirect = REFRESH.search((html / rel).read_text(encoding="utf8"))
        if redirect:
            tab.wait_for_url(site + posixpath.normpath(posixpath.join(posixpath.dirname(rel), redirect.group(1))))
            tab.wait_for_load_state("load")
        tab.add_style_tag(content=script("still.css"))
        mathjax = bw.settle(tab)
        data = tab.evaluate(script("collect.js"))
        light = tab.evaluate(script("layout.js"))
        summary = tab.evaluate(script("summary_layout.js"))
        offer = {"light": tab.evaluate(script("offer.js"))}
        shot = bw.screenshot(tab, shots / Path(rel).with_suffix(".png"))
        solutions = tab.evaluate(script("solutions.js"))
        contrast = {"light": tab.evaluate(script("contrast.js"))}
        tab.evaluate(script("dark.js"))
        contrast["dark"] = tab.evaluate(script("contrast.js"))
        offer["dark"] = tab.evaluate(script("offer.js"))
        layout = (light, tab.evaluate(script("layout.js")))
        dark = bw.screenshot(tab, shots / "dark" / Path(rel).with_suffix(".png"), full_page=False)
    finally:
        for event, listener in listeners.items():
            tab.remove_listener(event, listener)
    return Visit(rel, tab.url, mathjax, data, offsite, errors, shot, solutions, contrast, dark, layout,
                 summary, offer)


class Visits:
    """``visits(rel)``: the :class:`Visit` of page ``rel`` of the build, made on first use, once."""

    def __init__(self, browser, site: str, shots: Path):
        self.browser, self.site, self.shots = browser, site, shots  # shots: where screenshots go
        self.tab = browser.new_context(viewport=bw.VIEWPORT).new_page()  # one tab, as a reader's
        self.seen: dict[str, Visit] = {}
        # Only this build's pages: in a kept folder (--screenshots), a page the build no longer has
        # loses its screenshot (never the whole folder, which the caller chose).
        for png in shots.rglob("*.png") if shots.is_dir() else []:
            rel = png.relative_to(shots)
            rel = rel.relative_to("dark") if rel.parts[0] == "dark" else rel
            if not (paths.HTML / rel.with_suffix(".html")).exists():
                png.unlink()

    def __call__(self, rel: str) -> Visit:
        if rel not in self.seen:
            self.seen[rel] = open_page(self.tab, self.site, rel, paths.HTML, self.shots)
        return self.seen[rel]

    def elsewhere(self, directory: Path, rel: str) -> tuple[str, Visit]:
        """Page ``rel`` of another folder, served on its own: (its base URL, its Visit); its
        screenshots go beside it, in ``directory``'s ``shots`` folder."""
        with bw.serve(directory) as other:
            return other, open_page(self.tab, other, rel, directory, directory / "shots")


PHONE = {"width": 390, "height": 844}  # a phone's viewport, CSS px
PHONE_SCRIPTS = ("layout", "figure_fit", "summary_layout", "offer")  # what one phone load of a page serves


class PhoneVisits:
    """``phone(rel, mode)``: what page ``rel`` of the build shows on a 390 px phone in ``mode``
    ("light" or "dark", the reader's stored choice and the system's), once it has settled:
    ``{"layout": js/layout.js, "figure_fit": js/figure_fit.js, "summary_layout": js/summary_layout.js,
    "offer": js/offer.js}``.
    Each page is opened once per mode, in one tab per mode for the whole session."""

    def __init__(self, browser, site: str):
        self.browser, self.site = browser, site
        self.tabs: dict = {}
        self.seen: dict[tuple[str, str], dict] = {}

    def _tab(self, mode: str):
        if mode not in self.tabs:
            context = self.browser.new_context(viewport=PHONE, color_scheme=mode)
            context.add_init_script(f"localStorage.setItem('mode', '{mode}'); localStorage.setItem('theme', '{mode}');")
            self.tabs[mode] = context.new_page()
        return self.tabs[mode]

    def __call__(self, rel: str, mode: str) -> dict:
        if (rel, mode) not in self.seen:
            tab = self._tab(mode)
            tab.goto(self.site + rel)
            bw.settle(tab)
            self.seen[(rel, mode)] = {name: tab.evaluate(script(f"{name}.js")) for name in PHONE_SCRIPTS}
        return self.seen[(rel, mode)]
