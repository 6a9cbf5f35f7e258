"""Chromium's work for the whole test session, done once: every page of the build opened once.

One visit per page collects everything the browser tests check (``tests/test_browser.py``) and the
PDF test reads (``tests/test_pdf.py``), from a single load: the page's facts once MathJax has
typeset it, the page printed to PDF (for the documents of ``_toc.yml``), a light screenshot, the
collapsed solutions opened, the contrast of what it draws in light and in dark mode, and a dark
screenshot. The book's PDF is assembled from those printed pages.

The visits run in a background thread that ``conftest.py`` starts as soon as the tests are
collected (the browser tests are run last), so Chromium works on one core while the package's
tests run on the other. A test asks :meth:`Tour.page` for a visit and waits for it if needed.
"""

from __future__ import annotations

import posixpath
import queue
import re
import shutil
import threading
from concurrent.futures import Future
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

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
    screenshot: Path
    solutions: list[dict]  # every collapsed solution, after opening it
    contrast: dict[str, list[dict]]  # "light" and "dark": contrast of each equation, figure, table
    dark_screenshot: Path
    printed: tuple[str, bytes] | None  # (title for the PDF's outline, the page printed), if asked


def open_page(context, site: str, rel: str, html: Path = bw.HTML, shots: Path = bw.SCREENSHOTS,
              print_it: bool = False) -> Visit:
    """Load ``rel`` once and read from that load everything the checks need (see the module)."""
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
    printed = bw.print_page(page, rel) if print_it else None  # as the reader first sees it
    shot = bw.screenshot(page, shots / Path(rel).with_suffix(".png"))
    solutions = page.evaluate(SOLUTIONS_JS)
    contrast = {"light": page.evaluate(CONTRAST_JS)}
    page.evaluate(DARK_JS)
    contrast["dark"] = page.evaluate(CONTRAST_JS)
    dark = bw.screenshot(page, shots / "dark" / Path(rel).with_suffix(".png"))
    url = page.url
    page.close()
    return Visit(rel, url, mathjax, data, offsite, errors, shot, solutions, contrast, dark, printed)


class Tour:
    """One Chromium, in a thread of its own, that runs the session's browser jobs in order."""

    def __init__(self, executable: str, html: Path = bw.HTML):
        self.executable, self.html = executable, html
        self._jobs: queue.Queue = queue.Queue()
        self._pages: dict[str, Future] = {}
        self._book: Future | None = None
        self._stack = ExitStack()
        self._thread = threading.Thread(target=self._run, name="chromium-tour", daemon=True)
        self._dead: BaseException | None = None
        self.site = ""

    def start(self) -> Tour:
        """Serve the build, queue a visit of every page, then the book's PDF, and start."""
        shutil.rmtree(bw.SCREENSHOTS, ignore_errors=True)  # only this build's pages, none left from older
        self.site = self._stack.enter_context(bw.serve(self.html))
        toc = {f"{doc}.html" for doc in bw.toc_docnames()}
        for rel in sorted(bw.html_pages(self.html), key=lambda r: r not in toc):
            self._pages[rel] = self.submit(lambda ctx, rel=rel: open_page(ctx, self.site, rel,
                                                                          print_it=rel in toc))
        self._book = self.submit(self._print_book)
        self._thread.start()
        return self

    def submit(self, job) -> Future:
        """Run ``job(context)`` in the browser's thread, after the jobs queued before it."""
        future: Future = Future()
        if self._dead is not None:
            future.set_exception(self._dead)
        else:
            self._jobs.put((future, job))
        return future

    def page(self, rel: str, timeout: float = 900) -> Visit:
        if rel not in self._pages:
            self._pages[rel] = self.submit(lambda ctx: open_page(ctx, self.site, rel))
        return self._pages[rel].result(timeout)

    def book(self, timeout: float = 900) -> list[tuple[str, str, int]]:
        """The book printed into ``bw.PDF`` from the visits: (docname, title, first page) each."""
        return self._book.result(timeout)

    def _print_book(self, context):
        printed = [(doc, *self.page(f"{doc}.html", 0).printed) for doc in bw.toc_docnames()]
        page = context.new_page()
        try:
            return bw.assemble_pdf(page, printed, bw.PDF)
        finally:
            page.close()

    def _run(self):
        from playwright.sync_api import sync_playwright

        try:
            with sync_playwright() as pw:
                browser = bw.launch(pw, self.executable)
                context = browser.new_context(viewport=bw.VIEWPORT)
                while (item := self._jobs.get()) is not None:
                    future, job = item
                    if future.set_running_or_notify_cancel():
                        try:
                            future.set_result(job(context))
                        except BaseException as e:  # noqa: BLE001 - the test that waits re-raises it
                            future.set_exception(e)
                context.close()
                browser.close()
        except BaseException as e:  # noqa: BLE001 - Chromium did not start or died: fail every job
            self._dead = e
            while not self._jobs.empty():
                item = self._jobs.get_nowait()
                if item is not None and item[0].set_running_or_notify_cancel():
                    item[0].set_exception(e)

    def stop(self) -> None:
        self._jobs.put(None)
        if self._thread.is_alive():
            self._thread.join(timeout=60)
        self._stack.close()
