"""Chromium's work for the whole test session, done once: every page of the build opened once.

One visit per page collects everything the browser tests check (``tests/test_browser.py``) and the
PDF test reads (``tests/test_pdf.py``), from a single load: the page's facts once MathJax has
typeset it, the page printed to PDF (for the documents of ``_toc.yml``), a screenshot of the whole
page, the collapsed solutions opened, the contrast of what it draws in light and in dark mode, and
a screenshot of its first screen in dark mode (the contrast check covers the whole page in both
modes; a second full-page capture cost a fifth of the tour). The book's PDF is assembled from those
printed pages.

The visits run in a process of their own (:class:`Tour`) that ``conftest.py`` starts before the
package's tests (the browser tests are run last), so Chromium works while they run. A test asks
:meth:`Tour.page` for a visit and waits for it if needed.

The checks read what a page shows once it has settled, so its CSS transitions and animations are
switched off (:data:`STILL_CSS`): the solutions open and the dark theme applies at once, instead of
the visit waiting a third of a second for each.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import posixpath
import queue
import re
import shutil
import threading
import traceback
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import background
import browsertools as bw

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
    table_marks: all(".glued").filter(e => !e.querySelector(".pasted-text")).map(e => {
      const style = getComputedStyle(e);
      return {text: e.textContent.trim(), title: e.getAttribute("title"), line: style.textDecorationLine,
              dotted: style.textDecorationStyle, weight: Number(style.fontWeight),
              around: Number(getComputedStyle(e.parentElement).fontWeight)};  // a header cell is bold
    }),
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
  await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
  await Promise.all(document.getAnimations().map(a => a.finished.catch(() => null)));
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

# No transition or animation: every state a check reads is the final one, reached at once.
STILL_CSS = "*, *::before, *::after { transition: none !important; animation: none !important; }"

DARK_JS = """async () => {
  document.documentElement.dataset.theme = "dark";
  document.documentElement.dataset.mode = "dark";
  await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
  await Promise.all(document.getAnimations().map(a => a.finished.catch(() => null)));
}"""


@dataclass
class Visit:
    page: str
    url: str  # where the browser ended up (a redirect page lands elsewhere)
    mathjax: str | None  # MathJax's version, None when the page did not load it
    data: dict
    offsite: list[str]
    errors: list[str]
    screenshot: Path  # the whole page
    solutions: list[dict]  # every collapsed solution, after opening it
    contrast: dict[str, list[dict]]  # "light" and "dark": contrast of each equation, figure, table
    dark_screenshot: Path  # the first screen (bw.VIEWPORT), in dark mode
    printed: tuple[str, bytes] | None  # (title for the PDF's outline, the page printed), if asked;
    # kept in the tour's process, where the book is assembled (None in the tests' copy)


def _favicon_probe(url: str) -> bool:
    """The browser's own request for /favicon.ico, made for a page that names no icon: Jupyter
    Book's redirect stub (``index.html``) does not. The book's pages name theirs (``html_favicon``);
    the probe is not a request of the page."""
    return urlsplit(url).path == "/favicon.ico"


def open_page(page, site: str, rel: str, html: Path = bw.HTML, shots: Path = bw.SCREENSHOTS,
              print_it: bool = False) -> Visit:
    """Load ``rel`` in ``page`` (a Playwright page, one tab for the whole tour, as a reader moves from
    page to page) and read from that load everything the checks need (see the module)."""
    origin = urlsplit(site).netloc
    offsite: list[str] = []
    errors: list[str] = []
    # No request is intercepted (interception would turn the browser's cache off): the browser
    # resolves no host name but 127.0.0.1 (``bw.CHROMIUM_ARGS``), and every request is recorded.
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
        page.on(event, listener)
    try:
        page.goto(site + rel, wait_until="load")
        redirect = REFRESH.search((html / rel).read_text(encoding="utf8"))
        if redirect:
            target = posixpath.normpath(posixpath.join(posixpath.dirname(rel), redirect.group(1)))
            page.wait_for_url(site + target)
            page.wait_for_load_state("load")
        page.add_style_tag(content=STILL_CSS)
        mathjax = bw.settle(page)
        data = page.evaluate(COLLECT_JS)
        printed = bw.print_page(page, rel) if print_it else None  # as the reader first sees it
        shot = bw.screenshot(page, shots / Path(rel).with_suffix(".png"))
        solutions = page.evaluate(SOLUTIONS_JS)
        contrast = {"light": page.evaluate(CONTRAST_JS)}
        page.evaluate(DARK_JS)
        contrast["dark"] = page.evaluate(CONTRAST_JS)
        dark = bw.screenshot(page, shots / "dark" / Path(rel).with_suffix(".png"), full_page=False)
    finally:
        for event, listener in listeners.items():
            page.remove_listener(event, listener)
    return Visit(rel, page.url, mathjax, data, offsite, errors, shot, solutions, contrast, dark, printed)


class Tour:
    """Chromium's visits, made in a process of its own: ask :meth:`page`, :meth:`book` or :meth:`visit`.

    The process (``multiprocessing``'s spawn, so nothing of the test process is inherited) serves
    the build, visits every page in order (the documents of ``_toc.yml`` first) and prints the book;
    a visit a test asks for (:meth:`visit`) runs before the next page, and after the book until
    :meth:`stop`. Its own interpreter keeps Playwright's and the HTTP server's Python work off the
    tests' GIL, which slowed the visits by about 40 %.
    """

    def __init__(self, executable: str, html: Path = bw.HTML):
        self.executable, self.html = executable, html
        self._context = multiprocessing.get_context("spawn")
        self._futures: dict = {}
        self._lock = threading.Lock()
        self._asked = 0
        self._process = None
        self._fatal: str | None = None

    def _future(self, key) -> Future:
        with self._lock:
            return self._futures.setdefault(key, Future())

    def start(self) -> Tour:
        """Start the process with its plan: every page of the build, then the book's PDF."""
        shutil.rmtree(bw.SCREENSHOTS, ignore_errors=True)  # only this build's pages, none left from older
        toc = {f"{doc}.html" for doc in bw.toc_docnames()}
        plan = [(rel, rel in toc) for rel in sorted(bw.html_pages(self.html), key=lambda r: r not in toc)]
        for key in ["site", "book", *(("page", rel) for rel, _ in plan)]:
            self._future(key)
        self._commands, results = self._context.Queue(), self._context.Queue()
        self._process = self._context.Process(target=_work, name="chromium-tour", daemon=True,
                                              args=(self.executable, self.html, plan, self._commands, results))
        self._process.start()
        threading.Thread(target=self._listen, args=(results,), name="chromium-tour-results", daemon=True).start()
        return self

    @property
    def site(self) -> str:
        """Base URL of the build, served by the tour's process for the whole session."""
        return self._future("site").result(120)

    def page(self, rel: str, timeout: float = 900) -> Visit:
        """The visit of page ``rel`` of the build (a page outside the plan is visited on demand)."""
        with self._lock:
            known = ("page", rel) in self._futures
        if not known:
            return self.visit(None, rel, timeout)
        return self._future(("page", rel)).result(timeout)

    def book(self, timeout: float = 900) -> tuple[list[tuple[str, str, int]], list[str], list[str]]:
        """The book printed into ``bw.PDF`` from the visits, then read back (:func:`pdf_texts`):
        (docname, title, first page) of each document, the text of every page, and of its foot."""
        return self._future("book").result(timeout)

    def visit(self, directory: Path | None, rel: str, timeout: float = 900):
        """Visit ``rel`` of another folder, served apart (``directory``): (its base URL, the Visit);
        with ``directory`` None, a page of the build outside the plan: the Visit."""
        if self._process is None or not self._process.is_alive():
            raise RuntimeError(self._fatal or "Chromium's tour is not running")
        with self._lock:
            self._asked += 1
            key = ("asked", self._asked)
        future = self._future(key)
        self._commands.put((key, None if directory is None else Path(directory), rel))
        return future.result(timeout)

    def _listen(self, results) -> None:
        """Hand each result to its future; if the process ends early, fail what is still awaited."""
        while True:
            try:
                item = results.get(timeout=1)
            except queue.Empty:
                if self._process.is_alive():
                    continue
                item = None
            if item is None:
                break
            key, error, value = item
            if key == "fatal":
                self._fatal = error
                break
            future = self._future(key)
            future.set_exception(RuntimeError(error)) if error else future.set_result(value)
        self._process.join(timeout=30)
        why = self._fatal or f"Chromium's tour ended (exit code {self._process.exitcode}) before this visit"
        with self._lock:
            pending = [f for f in self._futures.values() if not f.done()]
        for future in pending:
            future.set_exception(RuntimeError(why))

    def stop(self) -> None:
        if self._process is None:
            return
        self._commands.put(None)
        self._process.join(timeout=60)
        if self._process.is_alive():
            self._process.terminate()
            self._process.join(timeout=10)


def _attempt(call) -> tuple[str | None, object]:
    """(None, call()) or (the error with its traceback, None): what crosses back to the tests."""
    try:
        return None, call()
    except Exception:  # noqa: BLE001 - re-raised in the test that waits for it
        return traceback.format_exc(), None


def _work(executable: str, html: Path, plan: list[tuple[str, bool]], commands, results) -> None:
    """The tour's process: serve ``html``, visit the plan and print the book, and run what is asked.

    It and Chromium run at a lower priority than the tests (``background.py``).
    """
    background.lower(os.getpid(), background.NICE_TOUR)
    try:
        _tour(executable, html, plan, commands, results)
    except BaseException:  # noqa: BLE001 - Chromium did not start or died: every waiting test says why
        results.put(("fatal", traceback.format_exc(), None))
    results.put(None)


def _tour(executable: str, html: Path, plan: list[tuple[str, bool]], commands, results) -> None:
    from playwright.sync_api import sync_playwright

    with bw.serve(html) as site, sync_playwright() as pw:
        results.put(("site", None, site))
        browser = bw.launch(pw, executable)
        for pid in background.descendants(os.getpid()):  # Chromium starts a session of its own
            background.lower(pid, background.NICE_TOUR)
        context = browser.new_context(viewport=bw.VIEWPORT)
        tab = context.new_page()  # one tab: its renderer keeps the theme's and MathJax's code compiled

        def asked(wait: bool) -> bool:
            """Run the visits asked so far (with ``wait``, until :meth:`Tour.stop`); False once stopped."""
            while True:
                try:
                    item = commands.get() if wait else commands.get_nowait()
                except queue.Empty:
                    return True
                if item is None:
                    return False
                key, directory, rel = item
                results.put((key, *_attempt(lambda rel=rel, directory=directory: _asked(
                    tab, site, html, directory, rel))))

        def book():
            printed = [(doc, *visits[f"{doc}.html"].printed) for doc in bw.toc_docnames()]
            return bw.assemble_pdf(tab, printed, bw.PDF), *pdf_texts(bw.PDF)

        visits = {}
        for rel, print_it in plan:
            if not asked(wait=False):  # a test asking for a visit does not wait for the plan
                break
            error, visits[rel] = _attempt(lambda rel=rel, print_it=print_it: open_page(
                tab, site, rel, html=html, print_it=print_it))
            # The printed PDF stays here, where the book is assembled; the tests need the rest.
            results.put((("page", rel), error, visits[rel] and dataclasses.replace(visits[rel], printed=None)))
        else:  # the whole plan was visited, not stopped
            results.put(("book", *_attempt(book)))
            asked(wait=True)
        context.close()
        browser.close()


def pdf_texts(path: Path) -> tuple[list[str], list[str]]:
    """The text of every page of a PDF, and the text of its bottom margin (``bw.PAGE_FORMAT``'s),
    where the page number is printed; read by PDFium (pypdf's reading of the book takes 7 s)."""
    import pypdfium2 as pdfium

    margin = float(bw.PAGE_FORMAT["margin"]["bottom"].removesuffix("mm")) / 25.4 * 72  # points
    texts, feet = [], []
    document = pdfium.PdfDocument(path)
    try:
        for page in document:
            text = page.get_textpage()
            texts.append(text.get_text_bounded())
            feet.append(text.get_text_bounded(0, 0, page.get_width(), margin))
    finally:
        document.close()
    return texts, feet


def _asked(tab, site: str, html: Path, directory: Path | None, rel: str):
    """A visit asked during the session: a page of the build, or (base URL, Visit) of another folder."""
    if directory is None:
        return open_page(tab, site, rel, html=html)
    with bw.serve(directory) as other:
        return other, open_page(tab, other, rel, html=directory, shots=directory / "shots")
