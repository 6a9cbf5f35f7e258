"""The built book in a real browser: Chromium driven by Playwright, over a local HTTP server.

Shared by ``tests/test_browser.py`` (every page, checked as a reader sees it) and ``make pdf`` (the
whole book printed by Chromium once MathJax has typeset it):

    python tools/browsertools.py pdf [OUT.pdf]

Playwright's own browser download is not used: the system's Chromium is (``apt-get install
chromium`` on Debian and Ubuntu), or the executable named by the ``CHROMIUM`` environment variable.
"""

from __future__ import annotations

import functools
import io
import os
import re
import shutil
import sys
import threading
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from buildpaths import HTML, PDF, ROOT

INSTALL_HINT = ("no Chromium found: install one (Debian/Ubuntu: `sudo apt-get install chromium`) "
                "or point the CHROMIUM environment variable at a Chromium or Chrome executable")
# A quiet, offline browser: nothing phones home, so every request a page makes is the page's own;
# no host name resolves but the local server's, so a page's request to another site fails at once.
CHROMIUM_ARGS = ["--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
                 "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-default-apps", "--disable-extensions", "--no-first-run",
                 "--no-default-browser-check", "--metrics-recording-only", "--mute-audio"]
VIEWPORT = {"width": 1280, "height": 900}


def find_chromium() -> str | None:
    """The Chromium to drive: $CHROMIUM, else the first of the usual names on PATH."""
    named = os.environ.get("CHROMIUM")
    if named:
        return named if Path(named).exists() else shutil.which(named)
    for name in ("/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome", "chrome"):
        found = name if Path(name).is_absolute() and Path(name).exists() else shutil.which(name)
        if found:
            return found
    return None


def launch(playwright, executable: str):
    """A headless Chromium (the system's), offline and quiet."""
    return playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS, headless=True)


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


@contextmanager
def serve(directory: Path):
    """Serve ``directory`` on 127.0.0.1 on a free port; yields the base URL (ending with /)."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def html_pages(html: Path = HTML) -> list[str]:
    """Every HTML page of a build, as paths relative to its root (theme templates left out)."""
    return sorted(p.relative_to(html).as_posix() for p in html.rglob("*.html")
                  if not p.relative_to(html).parts[0].startswith("_"))


def toc_docnames(root: Path = ROOT) -> list[str]:
    """The book's documents in reading order, as ``_toc.yml`` lists them (root first)."""
    import yaml

    toc = yaml.safe_load((root / "_toc.yml").read_text())
    order = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                order.append(str(Path(entry["file"]).with_suffix("")))
            walk(entry.get("sections"))
            walk(entry.get("chapters"))

    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    walk(toc.get("sections"))
    return order


# JavaScript run in the page. Lazy images are made eager and awaited, then MathJax's startup promise
# (it resolves once the first typesetting pass is over) and the web fonts.
SETTLE_JS = """async () => {
  const imgs = Array.from(document.images);
  for (const img of imgs) img.loading = "eager";
  await Promise.all(imgs.map(img => img.complete ? null :
      new Promise(done => { img.addEventListener("load", done); img.addEventListener("error", done); })));
  let mathjax = null;
  if (window.MathJax && window.MathJax.startup && window.MathJax.startup.promise) {
    await window.MathJax.startup.promise;
    mathjax = window.MathJax.version || "unknown";
  }
  await document.fonts.ready;
  return mathjax;
}"""


def screenshot(page, path: Path, full_page: bool = True) -> Path:
    """Save a PNG of ``page``, the whole page or (``full_page=False``) the screen a reader first
    sees, encoded for speed (Chromium's ``optimizeForSpeed``: a larger file in about half the
    encoding time of Playwright's ``full_page`` screenshot)."""
    import base64

    if full_page:
        width, height = page.evaluate("[document.documentElement.scrollWidth, "
                                      "document.documentElement.scrollHeight]")
        area = {"captureBeyondViewport": True, "clip": {"x": 0, "y": 0, "width": width, "height": height,
                                                        "scale": 1}}
    else:
        area = {"captureBeyondViewport": False}
    cdp = page.context.new_cdp_session(page)
    try:
        shot = cdp.send("Page.captureScreenshot", {"format": "png", "optimizeForSpeed": True, **area})
    finally:
        cdp.detach()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(base64.b64decode(shot["data"]))
    return path


def settle(page) -> str | None:
    """Wait until the page is what a reader sees; returns MathJax's version, or None without it."""
    return page.evaluate(SETTLE_JS)


# On paper a code block cannot scroll: wrap its long lines instead of cutting them off.
PRINT_CSS = "@media print { pre { white-space: pre-wrap !important; overflow-wrap: anywhere; } }"

TEX_WORDS = {r"\top": "ᵀ", r"\cdot": "·", r"\times": "×", r"\to": "→", r"\in": "∈", r"\le": "≤",
             r"\ge": "≥", r"\sum": "Σ", r"\mathbb{R}": "ℝ", r"\alpha": "α", r"\ell": "ℓ", r"\infty": "∞"}


def plain_title(title: str) -> str:
    r"""A page title with its inline TeX made readable, for the PDF's outline.

    >>> plain_title(r"Scores: \(QK^\top/\sqrt{d}\)")
    'Scores: QKᵀ/√d'
    >>> plain_title(r"Limits: \(\left(x \le \infty\right)\)")
    'Limits: (x≤∞)'
    """
    def math(m):
        tex = m.group(1)
        tex = re.sub(r"\\sqrt\{([^{}]*)\}", r"√\1", tex)
        for word, char in TEX_WORDS.items():
            tex = re.sub(re.escape(word) + r"(?![a-zA-Z])", char, tex)
        tex = re.sub(r"\\[a-zA-Z]+", "", tex).replace("^", "").replace("_", "")
        return tex.replace("{", "").replace("}", "").replace(" ", "")
    return re.sub(r"\\\((.*?)\\\)", math, title).strip()


PAGE_FORMAT = {"format": "A4", "print_background": True,
               "margin": {"top": "16mm", "bottom": "16mm", "left": "14mm", "right": "14mm"}}
# The page number, centred in the bottom margin of every page of the chapters.
FOOTER = ('<div style="width:100%;text-align:center;font:9px sans-serif;color:#444">'
          '<span class="pageNumber"></span></div>')


def _numbers(page, n: int):
    """n pages, blank but for Chromium's page number in the footer: stamped onto the chapters."""
    from pypdf import PdfReader

    page.set_content('<div style="break-after:page">&#8203;</div>' * n)
    data = page.pdf(**PAGE_FORMAT, display_header_footer=True, header_template="<div></div>",
                    footer_template=FOOTER)
    reader = PdfReader(io.BytesIO(data))
    if len(reader.pages) < n:
        raise RuntimeError(f"page numbers: Chromium printed {len(reader.pages)} pages, {n} needed")
    return reader


def front_matter_html(title: str, author: str, entries: list[tuple[str, int]]) -> str:
    """The title page and the table of contents: (chapter title, first page) per document."""
    from html import escape

    rows = "".join(f'<tr><td>{escape(t)}</td><td class="n">{n}</td></tr>' for t, n in entries)
    return f"""<!DOCTYPE html><html><head><meta charset="utf-8"><style>
body {{ font-family: serif; color: #111; }}
.title {{ height: 250mm; display: flex; flex-direction: column; justify-content: center;
          text-align: center; break-after: page; }}
.title h1 {{ font-size: 34pt; margin: 0 0 12mm; }} .title p {{ font-size: 14pt; }}
h2 {{ font-size: 20pt; }} table {{ width: 100%; border-collapse: collapse; font-size: 12pt; }}
td {{ padding: 1.2mm 0; border-bottom: 0.2mm dotted #999; }} td.n {{ text-align: right; }}
</style></head><body>
<section class="title"><h1>{escape(title)}</h1><p>{escape(author)}</p></section>
<h2>Contents</h2><table>{rows}</table></body></html>"""


def print_page(page, doc: str) -> tuple[str, bytes]:
    """A loaded page, printed once MathJax has typeset it: (its title for the outline, PDF bytes)."""
    if settle(page) is None and page.locator(".math").count():
        raise RuntimeError(f"{doc}: MathJax did not start; the PDF would show raw TeX")
    page.add_style_tag(content=PRINT_CSS)
    title = plain_title(page.title().rsplit(" \u2014 ", 1)[0])
    return title, page.pdf(**PAGE_FORMAT)


def print_pdf(browser, base: str, out: Path = PDF, html: Path = HTML) -> list[tuple[str, str, int]]:
    """Print the book, in ``_toc.yml`` order, into one PDF (see :func:`assemble_pdf`).

    ``browser`` is a Playwright Chromium, ``base`` the URL that serves ``html``. Returns, per
    document, (docname, title, index of its first page in the PDF).
    """
    docs = toc_docnames()
    missing = [d for d in docs if not (html / f"{d}.html").exists()]
    if missing:
        raise FileNotFoundError(f"not built: {missing}; run `make book` first")
    page = browser.new_page(viewport=VIEWPORT)
    printed = []
    for doc in docs:
        page.goto(base + f"{doc}.html", wait_until="load")
        printed.append((doc, *print_page(page, doc)))
    try:
        return assemble_pdf(page, printed, out)
    finally:
        page.close()


def assemble_pdf(page, printed: list[tuple[str, str, bytes]], out: Path = PDF) -> list[tuple[str, str, int]]:
    """One PDF from the printed documents (docname, title, PDF bytes), in order: a title page, a
    table of contents with page numbers, then every document with its page number at the foot of
    each page. ``page`` is a blank Playwright page, used to print the numbers and the contents.

    The chapters were printed first, so their pages are counted before the contents are rendered
    with those numbers. Returns, per document, (docname, title, index of its first page).
    """
    from pypdf import PdfReader, PdfWriter

    readers = [(doc, title, PdfReader(io.BytesIO(data))) for doc, title, data in printed]
    body_starts, n_body = [], 0
    for *_, reader in readers:
        body_starts.append(n_body)
        n_body += len(reader.pages)
    numbers = _numbers(page, n_body)
    page.set_content(front_matter_html(_book_title(), _book_author(),
                                       [(t, s + 1) for (_, t, _), s in zip(readers, body_starts)]))
    front = PdfReader(io.BytesIO(page.pdf(**PAGE_FORMAT)))
    writer = PdfWriter()
    writer.append(front)
    offset = len(front.pages)
    chapters = []
    for (doc, title, reader), start in zip(readers, body_starts):
        for k, body_page in enumerate(reader.pages):
            writer.add_page(body_page).merge_page(numbers.pages[start + k])
        writer.add_outline_item(title=title, page_number=offset + start)
        chapters.append((doc, title, offset + start))
    writer.add_metadata({"/Title": _book_title(), "/Creator": "make pdf: Chromium via Playwright"})
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("wb") as fh:
        writer.write(fh)
    return chapters


def _book_title() -> str:
    import yaml

    return yaml.safe_load((ROOT / "_config.yml").read_text()).get("title", "")


def _book_author() -> str:
    import yaml

    return yaml.safe_load((ROOT / "_config.yml").read_text()).get("author", "")


def main(argv: list[str]) -> int:
    if not argv or argv[0] != "pdf" or len(argv) > 2:
        print(__doc__, file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    executable = find_chromium()
    if executable is None:
        print(INSTALL_HINT, file=sys.stderr)
        return 1
    out = Path(argv[1]).resolve() if len(argv) == 2 else PDF
    with serve(HTML) as base, sync_playwright() as pw:
        browser = launch(pw, executable)
        chapters = print_pdf(browser, base, out)
        browser.close()
    print(f"make pdf: {len(chapters)} documents of _toc.yml printed into "
          f"{out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
